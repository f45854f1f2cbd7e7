package main

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/commcal/commcal/datasets"
	"github.com/commcal/commcal/internal/provenance"
)

func ingestCommand() *cli.Command {
	return withUsageErrors(&cli.Command{
		Name:      "ingest",
		Usage:     "check measurement logs and normalise them into a dataset directory",
		ArgsUsage: "FILE_OR_DIR...",
		Description: `Reads measurement logs, checks every row against the table schemas and the cluster
description, and writes a dataset directory: one Parquet file per table and manifest.json
(cluster description, every source with its SHA-256, tool version, row counts).

Inputs (the format is told from the extension, then the content; --format forces it):
   Parquet          a file whose columns are those of one table (any order, extra ignored)
   CSV              the same with a header line
   iperf3 --json    one client run is one transfer; a directory of runs over sizes is a sweep
   simgrid          the calibration program's output directory: *_PingPong.csv ping-pongs
                    become round trips; Recv, Isend, Test, Iprobe, Wtime timings and the
                    sizes list are noted in the manifest; *_breakpoints become the Hockney
                    breaks estimate uses
   osu              osu_latency (one-way latency), osu_bw (bytes/bandwidth): p2p_sweep;
                    osu_bibw: exchange_calibration; osu_mbw_mr, osu_multi_lat: a flow per
                    pair, fair_intra or fair_inter by placement; osu_alltoall, allgather,
                    bcast, scatter, gather: collectives (--ranks)
   imb              IMB-MPI1 PingPong: p2p_sweep (t = half the round trip); PingPing,
                    Sendrecv, Exchange: exchange_calibration on 2 processes,
                    cycle_calibration on more (t_max); Alltoall, Allgather, Bcast, Scatter,
                    Gather: collectives
   skampi           Pingpong_* results: half the round trip, p2p_sweep
   netpipe          np.out (bytes Mbps seconds) or NetPIPE's stdout: p2p_sweep; -2 runs'
                    stdout: exchange_calibration; -s runs' stdout: a one-way stream
   mpiblib          MPIBlib p2p (half of T, p2p_sweep) and scatter/gather (collectives)
   saturation       platform-calibration's saturation logs (load_send, load_sendrecv_same,
                    load_sendrecv_diff, load_alltoall .csv): k pairs as fair_inter (fair_intra
                    when every pair joins the same two nodes), exchanges
                    and cycles (smallest k calibration, the rest held out), alltoall as
                    collectives; needs --ranks
   dataset dir      a commcal dataset directory: its tables are read again, and the MPI
                    library its manifest names is kept (unless --mpi-library says one)

No log names the MPI library that ran its collectives: --mpi-library (openmpi or mpich)
records it in the manifest, and validation expands the collectives by its default rules.

The MPI benchmarks' outputs do not name hosts: --src is the node of rank 0 (it sends
first), --dst that of rank 1; --ranks names every rank's node of outputs of more processes.
Pattern IDs start with the benchmark ("osu_latency/a>b:4096"), so that two benchmarks' rows
never merge into one pattern. Times in µs become seconds; MB/s are 10^6 B/s (OSU, IMB
2021). A row the tool averaged is one row (repetition 0; a second run of the same sizes
gives repetition 1); the manifest's notes say what each row is an average of. 0-byte
rows are left out of transfers. A file that holds no transfer time (iperf3 UDP, a failed
run, a SimGrid timing of single calls alone) is refused with what it is.

A bad row stops the ingest with its file, row, line and column; nothing is written.
The output appears only when complete. SOURCE_DATE_EPOCH pins the manifest's time.

EXAMPLES:
   commcal ingest --cluster cluster.toml --out ds logs/transfers.csv logs/roundtrips.parquet
   commcal ingest --cluster graphene --src graphene-1 --dst graphene-2 --out ds graphene_eth_PingPong.csv
   commcal ingest --cluster lab.toml --experiment p2p_sweep --out ds iperf-runs/
   commcal ingest --cluster lab.toml --src a --dst b --out ds osu_latency.txt
   commcal ingest --cluster lab.toml --src a --dst b --out ds IMB-MPI1.out
   commcal ingest --cluster lab.toml --src a --dst b --out ds calibration-output/
   commcal ingest --cluster miriel.toml --ranks @miriel.ranks --format saturation --mpi-library mpich --out ds load_*.csv`,
		Flags: append(append(sourceFlags(), outFlags("COMMCAL_INGEST_OUT", "", "dataset directory to write")...),
			&cli.BoolFlag{Name: "json", Usage: "print the manifest as JSON instead of a table"},
		),
		Action: act(1, -1, "FILE_OR_DIR", func(c *cli.Context, e env, paths []string) error {
			return runIngest(c.Context, e, ingestOptions{Paths: paths, Sources: sourcesFrom(c), Output: outputFrom(c), JSON: c.Bool("json")})
		}),
	})
}

// ingestOptions are ingest's arguments and flags.
type ingestOptions struct {
	Paths   []string
	Sources sourceOptions
	Output  outputOptions
	JSON    bool // print the manifest as JSON
}

// runIngest checks measurement logs and writes them as a dataset directory.
func runIngest(ctx context.Context, e env, o ingestOptions) error {
	cl, srcs, err := o.Sources.load(o.Paths)
	if err != nil {
		return err
	}
	out, err := o.Output.claim(ctx, keepOutput, append(o.Paths, o.Sources.Cluster)...)
	if err != nil {
		return err
	}
	defer out.Release()
	prog, done := e.progress("ingest")
	m, err := datasets.Ingest(ctx, datasets.IngestOptions{Cluster: cl, Sources: srcs, Out: o.Output.Out,
		Force: true, Version: provenance.Version, Created: e.when, Logger: e.log, Progress: prog, MPILibrary: o.Sources.MPILibrary})
	done()
	if err != nil {
		return err
	}
	e.log.Info("ingest done", "out", o.Output.Out, "sources", len(m.Sources))
	if o.JSON {
		return e.printJSON(m)
	}
	return printManifest(e.stdout, o.Output.Out, m)
}

// printManifest prints what a dataset holds as aligned tables.
func printManifest(w io.Writer, dir string, m *datasets.Manifest) error {
	fmt.Fprintf(w, "dataset %s (cluster %s", dir, m.Cluster.Name)
	if m.MPILibrary != "" {
		fmt.Fprintf(w, ", collectives run by %s", m.MPILibrary)
	}
	fmt.Fprint(w, ")\n\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "source\tformat\ttable\trows")
	var notes []string
	for _, s := range m.Sources {
		table := s.Table
		if table == "" {
			table = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\n", s.Path, s.Format, table, s.Rows)
		for _, n := range s.Notes {
			notes = append(notes, s.Path+": "+n)
		}
	}
	tw.Flush()
	fmt.Fprintln(w)
	if len(notes) > 0 {
		fmt.Fprintln(w, "notes:")
		for _, n := range notes {
			fmt.Fprintln(w, "  "+n)
		}
		if len(m.HockneyBreaks) > 0 {
			fmt.Fprintf(w, "  Hockney breaks from the breakpoints file: %v B\n", m.HockneyBreaks)
		}
		fmt.Fprintln(w)
	}
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "table\tfile\trows")
	for _, t := range m.Tables {
		fmt.Fprintf(tw, "%s\t%s\t%d\n", t.Name, t.File, t.Rows)
	}
	return tw.Flush()
}
