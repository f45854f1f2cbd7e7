package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/datasets"
	"github.com/commcal/commcal/export"
	"github.com/commcal/commcal/internal/badinput"
	"github.com/commcal/commcal/internal/provenance"
	"github.com/commcal/commcal/rundir"
)

func exportCommand() *cli.Command {
	return withUsageErrors(&cli.Command{
		Name:  "export",
		Usage: "write a calibration or tables in other tools' formats",
		Subcommands: []*cli.Command{exportCSVCommand(), withUsageErrors(&cli.Command{
			Name:      "simgrid",
			Usage:     "a SimGrid platform and the configurations that reproduce commcal's maxmin and the Hockney segments",
			ArgsUsage: "[RUN_DIR]",
			Description: `Writes to --out, from a run directory (its calibration.json, and its dataset's cluster
unless --cluster is given) or from --calibration FILE with --cluster:

   platform.xml  SimGrid platform (DTD 4.1): a host per node, a SPLITDUPLEX link per NIC, per
                 rack uplink or for the backbone cable, routes over the cluster's tree that
                 cross exactly commcal's resources; bandwidths are the models' capacities
                 (measured ones where calibrated), latencies Hockney's alpha split over the
                 links (NIC alpha_intra/2, the rest on the backbone or uplinks)
   maxmin.cfg    --cfg options under which SimGrid's CM02 model is commcal's maxmin
   smpi.cfg      --cfg options for SMPI: smpi/bw-factor and smpi/lat-factor from the
                 segmented Hockney fit (smpi/os and smpi/or: not in a calibration, omitted)
   hostfile      the nodes, for smpirun -hostfile
   export.json   what was written and why, with the warnings

CM02 shares a link in inverse proportion to each flow's route latency: with latencies
(--latency hockney, the default) SimGrid gives maxmin's times for patterns of one path
class; with --latency none, for every pattern (without alpha).

EXAMPLES:
   commcal export simgrid --out sg runs/latest
   commcal export simgrid --cluster lab.toml --calibration calib/calibration.json --out sg
   ./my-s4u-program sg/platform.xml $(cat sg/maxmin.cfg)
   smpirun $(cat sg/smpi.cfg) -platform sg/platform.xml -hostfile sg/hostfile -np 16 ./app`,
			Flags: append([]cli.Flag{
				clusterFlag("default: the run directory's"),
				&cli.StringFlag{Name: "calibration", EnvVars: []string{"COMMCAL_CALIBRATION"},
					Usage: "calibration.json to export (instead of RUN_DIR; needs --cluster)"},
				&cli.StringFlag{Name: "latency", Value: export.LatencyHockney,
					Usage: "link latencies: hockney (alpha split over the links) or none (every pattern is exactly maxmin)"},
			}, outFlags("COMMCAL_EXPORT_OUT", "", "directory to write")...),
			Action: act(0, 1, "RUN_DIR", func(c *cli.Context, e env, args []string) error {
				o := exportOptions{Cluster: c.String("cluster"), Calibration: c.String("calibration"),
					Latency: c.String("latency"), Output: outputFrom(c)}
				if len(args) == 1 {
					o.RunDir = args[0]
				}
				switch {
				case o.RunDir != "" && o.Calibration != "":
					return usagef("export simgrid: RUN_DIR and --calibration both give the calibration; choose one")
				case o.RunDir == "" && o.Calibration == "":
					return usagef("export simgrid: give a run directory or --calibration FILE with --cluster")
				case o.RunDir == "" && o.Cluster == "":
					return usagef("export simgrid: --calibration needs --cluster")
				}
				return runExportSimGrid(c.Context, e, o)
			}),
		})},
	})
}

// exportOptions are export simgrid's argument and flags.
type exportOptions struct {
	RunDir      string // a run directory, or
	Calibration string // a calibration.json (with Cluster)
	Cluster     string
	Latency     string
	Output      outputOptions
}

// runExportSimGrid writes the SimGrid platform and configurations of a calibration.
func runExportSimGrid(ctx context.Context, e env, o exportOptions) error {
	calFile := o.Calibration
	if o.RunDir != "" {
		calFile = filepath.Join(o.RunDir, rundir.CalibrationFile)
	}
	out, err := o.Output.claim(ctx, replaceOutput, o.RunDir, calFile, o.Cluster)
	if err != nil {
		return err
	}
	defer out.Release()
	cal, err := rundir.ReadCalibration(calFile)
	if err != nil {
		return err
	}
	var cl *cluster.Cluster
	clusterFrom := o.Cluster
	if o.Cluster != "" {
		if cl, err = loadCluster(o.Cluster); err != nil {
			return err
		}
	} else {
		ds := filepath.Join(o.RunDir, rundir.DatasetDir)
		if _, err := os.Stat(ds); err != nil {
			return badinput.Errorf(o.RunDir, "no %s to take the cluster from; give --cluster", rundir.DatasetDir)
		}
		m, err := datasets.ReadManifest(ds)
		if err != nil {
			return err
		}
		if cl, err = cluster.New(m.Cluster); err != nil {
			return badinput.Wrap(filepath.Join(ds, datasets.ManifestFile), err)
		}
		clusterFrom = filepath.Join(ds, datasets.ManifestFile)
	}
	if cal.Cluster != cl.Name() {
		return badinput.Errorf(calFile, "a calibration of cluster %s, the cluster (%s) is %s", cal.Cluster, clusterFrom, cl.Name())
	}
	sg, err := export.BuildSimGrid(cl, cal, export.SimGridOptions{Latency: o.Latency, Version: provenance.Version})
	if err != nil {
		return badinput.Wrap(calFile, err)
	}
	if err := o.Output.build(sg.WriteDir); err != nil {
		return err
	}
	sum := sg.Summary
	fmt.Fprintf(e.stdout, "SimGrid platform of cluster %s written to %s: %d hosts, %d links (latency: %s)\n",
		cl.Name(), o.Output.Out, len(cl.Nodes()), len(sum.Links), sum.Latency)
	if sm := sum.SMPI; sm.Class != "" {
		fmt.Fprintf(e.stdout, "SMPI factors from the %s Hockney segments (%d), relative to %s → %s\n", sm.Class, len(sm.Segments), sm.RefSrc, sm.RefDst)
	}
	fmt.Fprintf(e.stdout, "in %s:\n", o.Output.Out)
	for _, u := range sum.Usage {
		fmt.Fprintf(e.stdout, "  %s\n", u)
	}
	for _, s := range sum.SMPI.Omitted {
		fmt.Fprintf(e.stdout, "omitted %s\n", s)
	}
	for _, w := range sum.Warnings {
		fmt.Fprintf(e.stdout, "warning: %s\n", w)
	}
	return nil
}
