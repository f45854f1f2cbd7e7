package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/datasets"
	"github.com/commcal/commcal/estimate"
	"github.com/commcal/commcal/internal/provenance"
	"github.com/commcal/commcal/pipeline"
	"github.com/commcal/commcal/report"
	"github.com/commcal/commcal/rundir"
	"github.com/commcal/commcal/validate"
)

func runCommand() *cli.Command {
	return withUsageErrors(&cli.Command{
		Name:      "run",
		Usage:     "run the whole pipeline into one run directory (default: on the built-in sample)",
		ArgsUsage: "[FILE_OR_DIR...]",
		Description: `Runs every stage — ingest, measurement statistics, estimation, validation, figures — and
writes a run directory:

   dataset/              the ingested dataset (Parquet tables + manifest.json)
   summary.txt           what is printed: tables, sources, per-experiment statistics
   summary.json          the same for scripts
   measurements.parquet  every measurement's mean, 95% CI and stopping-rule status
   calibration.json      every fitted parameter with its 95% CI (lmo_*.parquet beside it)
   predictions.parquet   every held-out transfer, measured and predicted: a row per model
   accuracy.json         per setting (|N|, d) and model: the columns of CCPE 2014 Table II;
                         per situation (what else a transfer's pattern sends where it goes)
                         and per transfer size (powers of two)
   health.json           what the report's health panel shows: thresholds checked, estimators
                         skipped, implausible fits, stopping rule, start skew, drift
   figures/              every figure as PNG (--dpi), SVG and PDF
   report.html           one file: health, tables, every figure inline, provenance

Estimation runs every estimator whose calibration experiments the dataset holds (as
"commcal estimate"); validation scores every contention model on the held-out transfers
with the calibrated parameters (as "commcal validate").

With no inputs it uses the sample built into the binary: real TCP transfers measured by
"commcal measure" on an emulated two-rack cluster of five nodes per rack, the whole
experiment catalogue. Inputs are read as by "commcal ingest" (same flags).

The run directory is replaced as a whole when the new one is complete, and only if commcal
wrote it (else --force). --previous compares the new calibration and accuracy with an
earlier run (which may be --out itself: it is read first) and lists what drifted or
vanished; --fail-on-drift and the --fail-* accuracy thresholds turn that into exit status 3.

EXAMPLES:
   commcal run
   commcal run --out runs/$(date +%F) --cluster cluster.toml logs/
   commcal run --out runs/latest --previous runs/latest --fail-on-drift --fail-below asymmetric:0.8 --cluster cluster.toml logs/`,
		Flags: append(append(append(sourceFlags(), paramsFlags()...), append(outFlags("COMMCAL_RUN_OUT", "run", "run directory"), thresholdFlags()...)...),
			&cli.StringFlag{Name: "previous", EnvVars: []string{"COMMCAL_PREVIOUS"},
				Usage: "an earlier run directory (may be --out itself, read before it is replaced): report what drifted or vanished since"},
			&cli.BoolFlag{Name: "fail-on-drift", EnvVars: []string{"COMMCAL_FAIL_ON_DRIFT"}, Usage: "with --previous: exit with the alarm status 3 on drift"},
			&cli.Float64Flag{Name: "ci-width", Value: estimate.DefaultStoppingRule.MaxRelWidth, EnvVars: []string{"COMMCAL_CI_WIDTH"},
				Usage: "stopping rule: largest full 95% CI width, as a fraction of the mean"},
			&cli.IntFlag{Name: "iteration-cap", EnvVars: []string{"COMMCAL_ITERATION_CAP"},
				Usage: "stopping rule: the benchmark's repetition cap (0: unknown)"},
			&cli.BoolFlag{Name: "json", Usage: "print summary.json and accuracy.json instead of the tables"},
			heldOutFlag(),
			collectivesFlag(),
			&cli.BoolFlag{Name: "weighted", Usage: "fit Hockney by weighted least squares (weights 1/T̂²)"},
			hockneyBreaksFlag(),
			dpiFlag(),
		),
		Action: act(0, -1, "FILE_OR_DIR", func(c *cli.Context, e env, paths []string) error {
			if !(c.Float64("ci-width") > 0) || c.Int("iteration-cap") < 0 {
				return usagef("run: --ci-width must be positive and --iteration-cap not negative")
			}
			algs, err := collectiveAlgorithms(c)
			if err != nil {
				return err
			}
			held, err := heldOut(c)
			if err != nil {
				return err
			}
			ths, err := thresholds(c)
			if err != nil {
				return err
			}
			if c.Bool("fail-on-drift") && c.String("previous") == "" {
				return usagef("run: --fail-on-drift needs --previous")
			}
			dpi, err := dpiFrom(c)
			if err != nil {
				return err
			}
			breaks, err := hockneyBreaks(c.String("hockney-breaks"))
			if err != nil {
				return err
			}
			return runRun(c.Context, e, runOptions{Paths: paths, Sources: sourcesFrom(c), Output: outputFrom(c), Params: paramsFrom(c),
				Rule: estimate.StoppingRule{MaxRelWidth: c.Float64("ci-width"), Cap: c.Int("iteration-cap")}, HeldOut: held, CollectiveAlgorithms: algs,
				Weighted: c.Bool("weighted"), HockneyBreaks: breaks, Previous: c.String("previous"), FailOnDrift: c.Bool("fail-on-drift"), Thresholds: ths,
				JSON: c.Bool("json"), DPI: dpi})
		}),
	})
}

// runOptions are run's arguments and flags.
type runOptions struct {
	Paths   []string // no paths: the embedded sample
	Sources sourceOptions
	Output  outputOptions
	Params  paramsOptions
	Rule    estimate.StoppingRule
	HeldOut []string
	// CollectiveAlgorithms chooses the algorithms of measured collectives.
	CollectiveAlgorithms string
	Weighted             bool
	// HockneyBreaks are the sizes at which Hockney's segments start (nil: found).
	HockneyBreaks []float64
	Previous      string // an earlier run to compare with
	FailOnDrift   bool
	Thresholds    []validate.Threshold
	JSON          bool
	DPI           float64
}

// runRun runs the whole pipeline into a run directory, then raises the drift and accuracy
// alarms.
func runRun(ctx context.Context, e env, o runOptions) error {
	var (
		cl    *cluster.Cluster
		srcs  []datasets.Source
		notes []string
		err   error
	)
	if len(o.Paths) == 0 {
		cl, srcs, err = pipeline.Sample()
		if err == nil {
			notes, err = pipeline.SampleNotes() // the measurement's own notes, start skew among them
			notes = append([]string{"the embedded sample dataset of commcal " + provenance.Version}, notes...)
		}
	} else {
		cl, srcs, err = o.Sources.load(o.Paths)
	}
	if err != nil {
		return err
	}
	params, err := o.Params.load()
	if err != nil {
		return err
	}
	out, err := o.Output.claim(ctx, replaceOutput, append(o.Paths, o.Sources.Cluster, o.Params.File)...)
	if err != nil {
		return err
	}
	defer out.Release()
	var prev *rundir.Run
	if o.Previous != "" { // read under the claim: it may be the output about to be replaced
		if prev, err = rundir.ReadCalibrated(o.Previous); err != nil {
			return err
		}
	}
	prog, done := e.progress("ingest")
	res, err := pipeline.Run(ctx, pipeline.RunOptions{Cluster: cl, Sources: srcs, Out: o.Output.Out, Rule: o.Rule,
		Created: e.when, Logger: e.log, Progress: prog, Notes: notes, MPILibrary: o.Sources.MPILibrary, Defaults: params, Override: o.Params.override,
		Weighted: o.Weighted, HockneyBreaks: o.HockneyBreaks, HeldOut: o.HeldOut, CollectiveAlgorithms: o.CollectiveAlgorithms, Thresholds: o.Thresholds, Previous: prev, DPI: o.DPI})
	done()
	if err != nil {
		return err
	}
	if o.JSON {
		err = e.printJSON(res)
	} else {
		err = printRun(e.stdout, o, res)
	}
	if err != nil {
		return err
	}
	accAlarm := accuracyAlarm(res.Accuracy, o.Thresholds)
	if prev == nil {
		return accAlarm
	}
	return driftAlarm(e, prev.Dir, res.Drift.Alarms(), o.FailOnDrift, accAlarm)
}

// printRun prints a run's summary, calibration and accuracy as tables.
func printRun(w io.Writer, o runOptions, res *pipeline.RunResult) error {
	fmt.Fprintf(w, "run directory: %s\n", o.Output.Out)
	if err := res.Summary.WriteText(w); err != nil {
		return err
	}
	fmt.Fprintf(w, "\ncalibration (%s)\n", rundir.CalibrationFile)
	if err := report.WriteCalibrationText(w, res.Calibration); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nheld-out validation (%s), signed error ε = (predicted − measured)/measured\n", strings.Join(o.HeldOut, ","))
	if err := res.Accuracy.WriteText(w); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "\n%d figures in %s, report: %s\n", len(res.Figures),
		filepath.Join(o.Output.Out, rundir.FiguresDir), filepath.Join(o.Output.Out, rundir.ReportFile))
	return err
}
