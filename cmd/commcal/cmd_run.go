package main

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/datasets"
	"github.com/commcal/commcal/estimate"
	"github.com/commcal/commcal/internal/badinput"
	"github.com/commcal/commcal/pipeline"
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
   predictions.parquet   every held-out transfer, measured and predicted by every model
   accuracy.json         per setting (|N|, d) and model: the columns of CCPE 2014 Table II
   figures/              every figure as PNG and SVG
   report.html           one file: calibration, accuracy, every figure inline, provenance

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
			&cli.BoolFlag{Name: "weighted", Usage: "fit Hockney by weighted least squares (weights 1/T̂²)"},
		),
		Action: func(c *cli.Context) error {
			inv, err := begin(c, 0, -1, "FILE_OR_DIR", replaceOutput)
			if err != nil {
				return err
			}
			defer inv.done()
			if !(c.Float64("ci-width") > 0) || c.Int("iteration-cap") < 0 {
				return usagef("run: --ci-width must be positive and --iteration-cap not negative")
			}
			var (
				cl    *cluster.Cluster
				srcs  []datasets.Source
				notes []string
			)
			if len(inv.paths) == 0 {
				cl, srcs, err = pipeline.Sample()
				notes = []string{"the embedded sample dataset of commcal " + pipeline.Version}
			} else {
				cl, srcs, err = sourcesFromFlags(c, inv.paths)
			}
			if err != nil {
				return err
			}
			params, err := paramsFromFlags(c)
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
			var prev *pipeline.RunDir
			if p := c.String("previous"); p != "" {
				if prev, err = pipeline.ReadRunDir(p); err != nil {
					return err
				}
				if prev.Calibration == nil {
					return badinput.Errorf(p, "--previous is not a run directory: no %s", pipeline.CalibrationFile)
				}
			} else if c.Bool("fail-on-drift") {
				return usagef("run: --fail-on-drift needs --previous")
			}
			prog, done := progress(c, "ingest")
			res, err := pipeline.Run(c.Context, pipeline.RunOptions{Cluster: cl, Sources: srcs, Out: c.String("out"),
				Rule:    estimate.StoppingRule{MaxRelWidth: c.Float64("ci-width"), Cap: c.Int("iteration-cap")},
				Created: inv.when, Logger: inv.log, Progress: prog, Notes: notes, Defaults: params, Override: override(c), Weighted: c.Bool("weighted"), HeldOut: held})
			done()
			if err != nil {
				return err
			}
			if c.Bool("json") {
				if err := printJSON(c, res); err != nil {
					return err
				}
				return runAlarms(c, prev, res, ths)
			}
			fmt.Fprintf(c.App.Writer, "run directory: %s\n", c.String("out"))
			if err := res.Summary.WriteText(c.App.Writer); err != nil {
				return err
			}
			fmt.Fprintf(c.App.Writer, "\ncalibration (%s)\n", pipeline.CalibrationFile)
			if err := pipeline.WriteCalibrationText(c.App.Writer, res.Calibration); err != nil {
				return err
			}
			fmt.Fprintf(c.App.Writer, "\nheld-out validation (%s), signed error ε = (predicted − measured)/measured\n", c.String("held-out"))
			if err := res.Accuracy.WriteText(c.App.Writer); err != nil {
				return err
			}
			fmt.Fprintf(c.App.Writer, "\n%d figures in %s, report: %s\n", len(res.Figures),
				filepath.Join(c.String("out"), pipeline.FiguresDir), filepath.Join(c.String("out"), pipeline.ReportFile))
			return runAlarms(c, prev, res, ths)
		},
	})
}

// runAlarms reports what drifted since the previous run (on stderr, or as the alarm with
// --fail-on-drift) and checks the accuracy thresholds.
func runAlarms(c *cli.Context, prev *pipeline.RunDir, res *pipeline.RunResult, ths []validate.Threshold) error {
	accAlarm := accuracyAlarm(res.Accuracy, ths)
	if prev == nil {
		return accAlarm
	}
	cur := &pipeline.RunDir{Dir: c.String("out"), Calibration: res.Calibration, Accuracy: res.Accuracy}
	alarms := pipeline.Contrast([]*pipeline.RunDir{prev, cur}).Alarms()
	if len(alarms) > 0 && c.Bool("fail-on-drift") {
		msg := "drift alarm since " + prev.Dir + ": " + strings.Join(alarms, "; ")
		if accAlarm != nil {
			msg += "; " + accAlarm.Error()
		}
		return alarmError{msg}
	}
	for _, a := range alarms {
		fmt.Fprintf(c.App.ErrWriter, "commcal: since %s: %s\n", prev.Dir, a)
	}
	return accAlarm
}
