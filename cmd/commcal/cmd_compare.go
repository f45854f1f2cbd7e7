package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/commcal/commcal/pipeline"
)

// errDrift is the failure --fail-on-drift reports.
var errDrift = errors.New("parameters drifted")

func compareCommand() *cli.Command {
	return withUsageErrors(&cli.Command{
		Name:      "compare",
		Usage:     "compare two or more runs side by side",
		ArgsUsage: "RUN_A RUN_B [RUN...]",
		Description: `Puts the calibrations of run directories side by side: every parameter with its 95% CI
in each run and its relative change from the first run, flagged DRIFT when its interval does
not overlap the first run's; each model's accuracy in each run; and the runs' error
distributions overlaid, per model. Writes compare.json, compare.html and the figures (PNG,
SVG) to --out.

Typical uses: last night against tonight (with --fail-on-drift in the nightly job), or one
cluster against another.

EXAMPLES:
   commcal compare --out cmp runs/2026-11-20 runs/2026-11-21
   commcal compare --fail-on-drift --out cmp last-night tonight || page-the-admins`,
		Flags: append(outFlags("COMMCAL_COMPARE_OUT", "compare", "directory to write"),
			&cli.BoolFlag{Name: "fail-on-drift", EnvVars: []string{"COMMCAL_FAIL_ON_DRIFT"}, Usage: "exit with status 1 when a parameter drifted"},
			&cli.BoolFlag{Name: "json", Usage: "print compare.json instead of the tables"},
		),
		Action: func(c *cli.Context) error {
			inv, err := begin(c, 2, -1, "RUN_A RUN_B", replaceOutput)
			if err != nil {
				return err
			}
			defer inv.done()
			runs := inv.paths
			cmp, err := pipeline.Compare(runs, c.String("out"))
			if err != nil {
				return err
			}
			if c.Bool("json") {
				if err := printJSON(c, cmp); err != nil {
					return err
				}
			} else {
				if err := cmp.WriteText(c.App.Writer); err != nil {
					return err
				}
				fmt.Fprintf(c.App.Writer, "\ncomparison written to %s\n", c.String("out"))
			}
			if len(cmp.Drifted) > 0 {
				fmt.Fprintf(c.App.ErrWriter, "commcal: drifted: %s\n", strings.Join(cmp.Drifted, ", "))
				if c.Bool("fail-on-drift") {
					return errDrift
				}
			}
			return nil
		},
	})
}
