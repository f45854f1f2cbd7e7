package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/datasets"
	"github.com/commcal/commcal/engine"
	"github.com/commcal/commcal/experiments"
	"github.com/commcal/commcal/internal/atomicio"
	"github.com/commcal/commcal/internal/badinput"
	"github.com/commcal/commcal/internal/provenance"
	"github.com/commcal/commcal/measure"
)

func measureCommand() *cli.Command {
	return withUsageErrors(&cli.Command{
		Name:  "measure",
		Usage: "measure real TCP on an emulated cluster: the agents of a real cluster, in network namespaces (needs root)",
		Description: `Builds the cluster out of Linux network namespaces — one per node, one per rack switch with
a bridge, one for a core router — joined by veth pairs shaped in both directions by token
buckets at --scale times the description's rates (0.1: 1 Gbit/s NICs become 100 Mbit/s, a
10 Gbit/s backbone 1 Gbit/s). Then starts one 'commcal agent' per node inside its namespace
and runs the coordinator a real cluster's rank 0 runs (see commcal agent): the same engine,
the same experiments, the same dataset.

The catalogue (--catalogue FILE, TOML; or the built-in one, or --quick) selects the
experiments: point-to-point sweeps (intra and inter rack), fairness A and B, bidirectional
patterns on a NIC and on the backbone, same-peer exchanges and directed cycles, incast and
outcast, static-synchronous graphs, random validation patterns, LMO round trips and one-to-two
experiments, scatter and gather sweeps, ping-pong pairs across the bisection, and collectives
run as the rounds of named algorithms (schedules: each rank one node, posting a round's sends
and receives once its previous round's have ended, as an MPI process does; validation predicts
them as the same rounds). For every measurement the connections are opened first, all threads
start at one instant, receivers timestamp their last byte; repetitions go on until every
measure's 95% CI is within 2% of its mean, or the cap. Writes an ordinary dataset (every table,
the manifest with the TCP settings, clock-sync error and start skew, and repetitions.json with
every repetition's skew and each transfer's own start).
The nodes keep the kernel's per-destination TCP metrics, as real hosts do: a connection starts
from the round-trip time and slow-start threshold the last one to the same node left.
--forget-tcp-metrics sets net.ipv4.tcp_no_metrics_save = 1 in every node's namespace instead, so
that no measurement starts from what the campaign measured before it
(docs/journal/tcp-campaigns.md has what that changed on its two-rack cluster).
The two directions of a NIC are independent token buckets, which real hosts are not: a host
bound by what it can process shares that between what it sends and what it receives.
--host-rate F bounds every node's host so: what a node sends and what it receives pass
together through one more token bucket at F times its shaped NIC rate (in its rack switch's
namespace), so that at F = 1 a same-peer exchange or a directed cycle takes twice a one-way
transfer's time while disjoint pairs keep the NIC rate (docs/journal/host-bound.md). F is above
0 and below 2; 0 (the default) leaves hosts unbound. The manifest's notes say which.
Namespaces and agents are removed on exit, on error and on Ctrl-C; namespaces of a crashed run
are removed by the next, those of a run still going are left alone.

Before anything is built, the campaign's cost is printed: its measurements, the transfers and
bytes of a repetition of each, and a lower bound of its duration (per repetition, the 30 ms
start lead plus the time the busiest link takes at --scale times its nominal rate). A campaign
whose bound at the catalogue's minimum repetitions is above --max-cost (default 24h) is refused
with exit 2; give a larger --max-cost to measure it. Every count and size of a catalogue has a
ceiling (docs/formats.md), checked before anything is drawn.

A catalogue file (TOML) has one table per experiment; an experiment left out is not measured:
   seed = 1
   sweep = { sizes = [1024, 65536, 1048576] }
   calibration = { bytes = 2097152 }   # fairness, bidirectional, exchanges, cycles, static-synchronous
   fairness = { max_k = 6 }
   bidirectional = { max = 3 }
   exchanges = { max_k = 2 }           # same-peer exchanges; k = 1 calibrates, the others held out
   cycles = { max_k = 4 }              # directed cycles of k = 2, 4 pairs; k = 2 calibrates
   incast = { max_k = 4 }              # k = 2…4 nodes sending to one (calibration)
   outcast = { max_k = 4 }             # one node sending to k = 2…4 (calibration)
   static_sync = { graphs = 6, max_edges = 3 }
   random = [ { nodes = 10, d = 2, patterns = 15, sizes = [4194304] },
              { nodes = 10, d = 2, patterns = 5, sizes = [4194304], role = "calibration" },
              { nodes = 9, d = 2, patterns = 15, sizes = [4194304], racks = 3 } ]  # |N| from 3 racks (default 2)
   lmo = { bytes = 65536, nodes = 0, sequential = false }
   collectives = { sizes = [1024, 2048, 4096, 8192] }
   pingpong = { pairs = [1, 2, 4], sizes = [1024, 65536] }
   schedules = [ { op = "alltoall", algorithm = "pairwise", procs = [4, 8], sizes = [1048576] },
                 { op = "bcast", algorithm = "auto:openmpi", procs = [8], sizes = [1048576] } ]
                                       # alltoall, allgather or bcast; an algorithm of
                                       # docs/models.md (Collectives) or auto:openmpi|auto:mpich
   repetitions = { min = 3, max = 10, ci_percent = 2, budget = "30s", timeout = "2m" }

EXAMPLES:
   sudo commcal measure --cluster lab.toml --out measured
   sudo commcal measure --cluster lab.toml --catalogue nightly.toml --out measured
   sudo SLURM_CONF=/etc/slurm/slurm.conf commcal measure --cluster lab.toml --launcher srun --out measured
   sudo commcal measure --cluster lab.toml --congestion reno --socket-buffer 3000000 --out measured-reno
   sudo commcal measure --cluster lab.toml --host-rate 1 --out measured-hostbound`,
		Flags: append(append([]cli.Flag{
			clusterFlag(""),
			&cli.Float64Flag{Name: "scale", Value: measure.DefaultShaping.Scale, Usage: "emulated rate as a fraction of the nominal rates"},
			&cli.StringFlag{Name: "launcher", Value: measure.LaunchExec, Usage: "start the agents directly (exec) or through srun or mpirun, as on a real cluster"},
			&cli.BoolFlag{Name: "forget-tcp-metrics", Usage: "turn the kernel's per-destination TCP metrics cache off in every node (net.ipv4.tcp_no_metrics_save = 1)"},
			&cli.Float64Flag{Name: "host-rate", Usage: "bound each node's traffic in and out together to this multiple of its NIC rate, (0, 2) (0: hosts unbound)"},
		}, campaignFlags()...), outFlags("COMMCAL_MEASURE_OUT", "", "dataset directory to write")...),
		Action: act(0, 0, "nothing", func(c *cli.Context, e env, _ []string) error {
			if s := c.Float64("scale"); !(s > 0 && s <= 1) {
				return usagef("measure: --scale must be in (0, 1]")
			}
			if err := measure.CheckHostRate(c.Float64("host-rate")); err != nil {
				return usagef("measure: --host-rate: %v", err)
			}
			if l := c.String("launcher"); !slices.Contains(measure.Launchers, l) {
				return usagef("measure: --launcher %q: want one of %s", l, strings.Join(measure.Launchers, ", "))
			}
			camp, err := campaignFrom(c)
			if err != nil {
				return err
			}
			return runMeasure(c.Context, e, measureOptions{Cluster: c.String("cluster"), Output: outputFrom(c), Scale: c.Float64("scale"), HostRate: c.Float64("host-rate"), Launcher: c.String("launcher"), ForgetTCPMetrics: c.Bool("forget-tcp-metrics"), Campaign: camp})
		}),
	})
}

// defaultMaxCost is --max-cost's default: a day, longer than a nightly campaign may run; a
// catalogue whose lower bound is longer is a mistake more often than a plan.
const defaultMaxCost = 24 * time.Hour

// maxSocketBuffer bounds --socket-buffer: 1 GiB, far above what the kernel grants a socket
// (net.core.wmem_max and rmem_max, a few MiB by default), which caps the request anyway.
const maxSocketBuffer = 1 << 30

// campaignFlags are the flags of a measurement campaign (measure, and agent's rank 0).
func campaignFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "catalogue", EnvVars: []string{"COMMCAL_CATALOGUE"}, Usage: "experiment catalogue (TOML; see commcal measure --help)"},
		&cli.BoolFlag{Name: "quick", Usage: "measure a little of every experiment (seconds: for smoke tests)"},
		&cli.StringFlag{Name: "congestion", Value: measure.DefaultSocket.Congestion, Usage: "TCP congestion control, set per socket"},
		&cli.IntFlag{Name: "socket-buffer", Usage: "SO_SNDBUF and SO_RCVBUF in bytes (0: kernel autotuning)"},
		&cli.IntFlag{Name: "max-reps", Usage: "repetition cap per measurement (default: the catalogue's)"},
		&cli.Uint64Flag{Name: "seed", Usage: "seed of the random and static-synchronous patterns (default: the catalogue's)"},
		&cli.DurationFlag{Name: "max-cost", Value: defaultMaxCost, EnvVars: []string{"COMMCAL_MAX_COST"},
			Usage: "refuse a catalogue estimated to take longer than this (at least; see the campaign cost logged before it starts)"},
	}
}

// campaignOptions are the campaign flags.
type campaignOptions struct {
	CatalogueFile string
	Quick         bool
	Socket        engine.SocketOptions
	MaxReps       int
	Seed          uint64
	// MaxCost is the longest campaign measured without complaint (engine.Cost.Least).
	MaxCost time.Duration
	// Scale is the emulated rates' share of the nominal ones (measure's --scale; 0: 1).
	Scale float64
}

func campaignFrom(c *cli.Context) (campaignOptions, error) {
	o := campaignOptions{CatalogueFile: c.String("catalogue"), Quick: c.Bool("quick"), MaxReps: c.Int("max-reps"), Seed: c.Uint64("seed"),
		Socket: engine.SocketOptions{Congestion: c.String("congestion"), Buffer: c.Int("socket-buffer")}, MaxCost: c.Duration("max-cost")}
	name := c.Command.Name
	switch {
	case o.Quick && o.CatalogueFile != "":
		return o, usagef("%s: --quick and --catalogue are exclusive", name)
	case o.Socket.Buffer < 0 || o.Socket.Buffer > maxSocketBuffer:
		return o, usagef("%s: --socket-buffer %d: want 0 (autotuning) to %d bytes", name, o.Socket.Buffer, maxSocketBuffer)
	case o.MaxReps < 0 || o.MaxReps > experiments.MaxReps:
		return o, usagef("%s: --max-reps %d: want 0 (the catalogue's) to %d", name, o.MaxReps, experiments.MaxReps)
	case o.MaxCost <= 0:
		return o, usagef("%s: --max-cost %s: want a positive duration", name, o.MaxCost)
	}
	return o, nil
}

// catalogue is the campaign's catalogue with the flags applied.
func (o campaignOptions) catalogue() (experiments.Catalogue, error) {
	cat := experiments.DefaultCatalogue
	switch {
	case o.Quick:
		cat = experiments.QuickCatalogue
	case o.CatalogueFile != "":
		c, err := experiments.ReadCatalogue(o.CatalogueFile)
		if err != nil {
			return cat, err
		}
		cat = *c
	}
	if o.MaxReps > 0 {
		if o.MaxReps < cat.Reps.Min {
			return cat, usagef("--max-reps %d is below the catalogue's minimum of %d repetitions", o.MaxReps, cat.Reps.Min)
		}
		cat.Reps.Max = o.MaxReps
	}
	if o.Seed != 0 {
		cat.Seed = o.Seed
	}
	return cat, nil
}

// campaignProgress is a campaign's progress: a bar on a terminal, a log record per
// measurement elsewhere; clear removes the bar.
func (e env) campaignProgress() (progress func(done, total int, left time.Duration), clear func()) {
	if !e.terminal {
		return func(done, total int, left time.Duration) {
			e.log.Info("progress", "measurements", done, "of", total, "left", left.Round(time.Second).String())
		}, func() {}
	}
	set, clear := e.countBar("measurements")
	return func(done, total int, _ time.Duration) { set(done, total) }, clear
}

// measureOptions are measure's flags.
type measureOptions struct {
	Cluster string
	Output  outputOptions
	Scale   float64 // emulated rate as a fraction of the nominal rates
	// HostRate bounds each node's traffic in and out together, as a multiple of its NIC rate
	// (measure.Shaping.HostRate; 0: unbound).
	HostRate float64
	Launcher string // how the agents start (measure.Launchers)
	// ForgetTCPMetrics turns TCP's per-destination metrics cache off (measure.Options).
	ForgetTCPMetrics bool
	Campaign         campaignOptions
}

// runMeasure builds the emulated cluster, measures the catalogue on it and writes the dataset.
func runMeasure(ctx context.Context, e env, o measureOptions) error {
	if err := measure.Available(); err != nil {
		return err
	}
	o.Campaign.Scale = o.Scale
	cl, cat, out, err := o.Campaign.start(ctx, e, o.Cluster, o.Output, 0)
	if err != nil {
		return err
	}
	defer out.Release()
	sh := measure.DefaultShaping
	sh.Scale, sh.HostRate = o.Scale, o.HostRate
	prog, clear := e.campaignProgress()
	defer clear()
	m, err := measure.Measure(ctx, measure.Options{Cluster: cl, Shaping: sh, Socket: o.Campaign.Socket, Catalogue: cat,
		Out: o.Output.Out, Force: true, Version: provenance.Version, Created: e.when, Logger: e.log, Progress: prog, Launcher: o.Launcher, ForgetTCPMetrics: o.ForgetTCPMetrics})
	clear()
	if err != nil {
		return err
	}
	return printMeasured(e.stdout, o.Output.Out, m)
}

// start loads what a campaign needs and claims its dataset: the cluster description, the
// catalogue, and --out (never the description or the catalogue file). agents, when not 0, is
// the launch's size, checked against the description first. Before anything is claimed it
// estimates the campaign's cost (engine.EstimateCost), prints it, and refuses a campaign whose
// lower bound is above --max-cost.
func (o campaignOptions) start(ctx context.Context, e env, clusterRef string, output outputOptions, agents int) (*cluster.Cluster, experiments.Catalogue, *atomicio.Claimed, error) {
	cl, err := loadCluster(clusterRef)
	if err != nil {
		return nil, experiments.Catalogue{}, nil, err
	}
	if agents != 0 {
		if err := engine.CheckLaunch(cl, agents); err != nil {
			return nil, experiments.Catalogue{}, nil, err
		}
	}
	cat, err := o.catalogue()
	if err != nil {
		return nil, cat, nil, err
	}
	if err := o.checkCost(e, &cat, cl); err != nil {
		return nil, cat, nil, err
	}
	out, err := output.claim(ctx, keepOutput, clusterRef, o.CatalogueFile)
	return cl, cat, out, err
}

// checkCost estimates the campaign's cost before anything is claimed or built (a design the
// cluster cannot hold would otherwise fail the campaign once the agents have joined, as an
// internal error), logs it at level info, and refuses it above --max-cost (the message says
// the cost); else prints it.
func (o campaignOptions) checkCost(e env, cat *experiments.Catalogue, cl *cluster.Cluster) error {
	scale := o.Scale
	if scale == 0 {
		scale = 1
	}
	cost, err := engine.EstimateCost(cat, cl, scale)
	if err != nil {
		if o.CatalogueFile == "" {
			return usagef("the built-in catalogue does not fit cluster %s (%v); give a --catalogue that does", cl.Name(), err)
		}
		return badinput.Errorf(o.CatalogueFile, "cluster %s: %w", cl.Name(), err)
	}
	e.log.Info("campaign cost", "measurements", cost.Measurements, "transfers_per_rep", cost.Transfers, "bytes_per_rep", cost.Bytes,
		"at_least", cost.Least().String(), "min_reps", cost.MinReps, "at_max_reps", cost.Most().String(), "max_reps", cost.MaxReps,
		"rate_scale", scale, "max_cost", o.MaxCost.String())
	if cost.Least() > o.MaxCost {
		what := "the built-in catalogue"
		if o.CatalogueFile != "" {
			what = "catalogue " + o.CatalogueFile
		}
		return usagef("%s on cluster %s: %s; that is above --max-cost %s: give a larger --max-cost (COMMCAL_MAX_COST) to measure it, or a smaller catalogue",
			what, cl.Name(), cost, o.MaxCost)
	}
	fmt.Fprintf(e.stdout, "campaign: %s, at %g × the nominal rates (--max-cost %s)\n", cost, scale, o.MaxCost)
	return nil
}

// printMeasured prints a measured dataset and its notes, the last of which says how the
// measurement went (agents, convergence, clock sync, start skew).
func printMeasured(w io.Writer, out string, m *datasets.Manifest) error {
	if err := printManifest(w, out, m); err != nil {
		return err
	}
	for _, n := range m.Notes {
		fmt.Fprintf(w, "  %s\n", n)
	}
	return nil
}
