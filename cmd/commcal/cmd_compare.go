package main

import (
	"context"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/commcal/commcal/report"
	"github.com/commcal/commcal/rundir"
	"github.com/commcal/commcal/validate"
)

func compareCommand() *cli.Command {
	return withUsageErrors(&cli.Command{
		Name:      "compare",
		Usage:     "compare two or more runs side by side, and draw their trends",
		ArgsUsage: "RUN_A RUN_B [RUN...]",
		Description: `Puts the calibrations of run directories side by side: every parameter with its 95% CI
in each run and its relative change from the first run, flagged DRIFT when its interval does
not overlap the first run's; each model's accuracy in each run ("n/a" where a run scored
none). Draws the trends over the runs, in the order given (nights, oldest first): every
calibrated parameter with its interval, one figure per estimator (trend_<estimator>), and
each model's mean |ε| and share within ±10% (trend_accuracy), a dashed red line at every run
flagged as drift; and the runs' error distributions overlaid, per model. Writes compare.json
(with run_drift, the runs flagged), compare.html (one self-contained page: the runs, the
drift, the trends, sortable tables) and the figures (PNG, SVG, PDF) to --out.

Drift is also what the first run had and a later one lacks: a parameter that vanished, an
estimator newly skipped (its experiments are missing tonight), a model's accuracy lost. A run
file that cannot be read is an error (exit 2), never a gap. --fail-on-drift turns drift into
the alarm exit status 3; --fail-below and --fail-above-error check the last run's accuracy.

Typical uses: last night against tonight (with --fail-on-drift in the nightly job), a history
page of the last nights that cron regenerates, or one cluster against another.

EXAMPLES:
   commcal compare --out cmp runs/2026-11-20 runs/2026-11-21
   commcal compare --fail-on-drift --out cmp last-night tonight || page-the-admins
   commcal compare --out history $(ls -d runs/20* | tail -n 14)   # two weeks of nights`,
		Flags: append(append(outFlags("COMMCAL_COMPARE_OUT", "compare", "directory to write"), thresholdFlags()...),
			&cli.BoolFlag{Name: "fail-on-drift", EnvVars: []string{"COMMCAL_FAIL_ON_DRIFT"}, Usage: "exit with the alarm status 3 on drift (see above)"},
			&cli.BoolFlag{Name: "json", Usage: "print compare.json instead of the tables"},
		),
		Action: act(2, -1, "RUN_A RUN_B", func(c *cli.Context, e env, runs []string) error {
			ths, err := thresholds(c)
			if err != nil {
				return err
			}
			return runCompare(c.Context, e, compareOptions{Runs: runs, Output: outputFrom(c), FailOnDrift: c.Bool("fail-on-drift"),
				Thresholds: ths, JSON: c.Bool("json")})
		}),
	})
}

// compareOptions are compare's arguments and flags.
type compareOptions struct {
	Runs        []string
	Output      outputOptions
	FailOnDrift bool
	Thresholds  []validate.Threshold // checked on the last run
	JSON        bool
}

// runCompare puts runs side by side, writes the comparison, and raises the drift alarm
// (with FailOnDrift) and the accuracy alarm.
func runCompare(ctx context.Context, e env, o compareOptions) error {
	out, err := o.Output.claim(ctx, replaceOutput, o.Runs...)
	if err != nil {
		return err
	}
	defer out.Release()
	var rds []*rundir.Run
	for _, r := range o.Runs {
		rd, err := rundir.ReadCalibrated(r)
		if err != nil {
			return err
		}
		rds = append(rds, rd)
	}
	cmp, err := report.CompareRuns(ctx, rds, o.Output.Out)
	if err != nil {
		return err
	}
	if o.JSON {
		if err := e.printJSON(cmp); err != nil {
			return err
		}
	} else {
		if err := cmp.WriteText(e.stdout); err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "\ncomparison written to %s\n", o.Output.Out)
	}
	acc := rds[len(rds)-1].Accuracy
	return driftAlarm(e, "", cmp.Alarms(), o.FailOnDrift, accuracyAlarm(acc, o.Thresholds))
}
