package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/commcal/commcal/internal/atomicio"
	"github.com/commcal/commcal/internal/badinput"
	"github.com/commcal/commcal/plots"
	"github.com/commcal/commcal/report"
	"github.com/commcal/commcal/rundir"
)

func plotCommand() *cli.Command {
	return withUsageErrors(&cli.Command{
		Name:      "plot",
		Usage:     "draw the figures and the HTML report of a run",
		ArgsUsage: "RUN_DIR",
		Description: `Draws every figure whose data the run directory holds, as PNG (--dpi), SVG and PDF in
RUN_DIR/figures: error histograms per setting for asymmetric and fair (bins of 5%, the ±10%
band marked), the cumulative distribution of |ε| of every model on one panel with the ±10%
line, predicted against measured times per model with the ±10% band, the Hockney fit with its
relative residuals (clipped to ±50%, what lies beyond drawn at the edge and counted),
per-flow bandwidth against the incoming/outgoing degree with the fair and max(in, out)
predictions and, beside it, the same as a heatmap over (out, in), the calibrated rates as a
share of the nominal rates, scatter and gather against message size with S, M1 and M2
marked, L(m) per pair count with the fitted surface, and the LMO per-node delays with their
intervals. Legends are drawn beside the plots, never over data.

Writes RUN_DIR/report.html, one self-contained file: the run's health (accuracy thresholds,
skipped estimators, implausible fits, stopping rule per experiment, start skew, drift since
the previous run, as "commcal run" recorded them in health.json), then sortable tables of the
calibration, the held-out accuracy and the measurements, every figure inline as SVG, and the
dataset's provenance. "commcal run" does this itself.

EXAMPLE:
   commcal plot run`,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "force", Usage: "draw into a RUN_DIR that commcal did not write"},
			&cli.BoolFlag{Name: "wait", EnvVars: []string{"COMMCAL_WAIT"}, Usage: "wait for another commcal writing RUN_DIR instead of failing"},
			dpiFlag(),
		},
		Action: act(1, 1, "RUN_DIR", func(c *cli.Context, e env, args []string) error {
			dpi, err := dpiFrom(c)
			if err != nil {
				return err
			}
			return runPlot(c.Context, e, plotOptions{Run: args[0], Force: c.Bool("force"), Wait: c.Bool("wait"), DPI: dpi})
		}),
	})
}

// plotOptions are plot's argument and flags.
type plotOptions struct {
	Run         string
	Force, Wait bool
	DPI         float64 // resolution of the PNG figures
}

// dpiFlag is the PNG resolution option of plot and run.
func dpiFlag() cli.Flag {
	return &cli.Float64Flag{Name: "dpi", Value: plots.DefaultDPI, EnvVars: []string{"COMMCAL_DPI"},
		Usage: fmt.Sprintf("resolution of the PNG figures in dots per inch (at most %d; SVG and PDF are vector)", plots.MaxDPI)}
}

// dpiFrom reads --dpi; a resolution out of range is a usage error before anything runs.
func dpiFrom(c *cli.Context) (float64, error) {
	dpi := c.Float64("dpi")
	if !(dpi >= 10 && dpi <= plots.MaxDPI) {
		return 0, usagef("--dpi %g: want a resolution from 10 to %d dots per inch", dpi, plots.MaxDPI)
	}
	return dpi, nil
}

// runPlot draws a run's figures and report into the run directory.
func runPlot(ctx context.Context, e env, o plotOptions) error {
	// plot writes into the run directory: it must be commcal's, and no other commcal may be
	// writing it.
	if st, err := os.Stat(o.Run); err != nil {
		return badinput.Wrap(o.Run, err)
	} else if !st.IsDir() {
		return badinput.Errorf(o.Run, "not a run directory (one that commcal run writes)")
	}
	claimed, err := claimWaiting(atomicio.Claim(ctx, atomicio.Target{Path: o.Run, Force: o.Force, Wait: o.Wait}))
	if err != nil {
		return err
	}
	defer claimed.Release()
	figs, err := report.Plot(ctx, o.Run, report.PlotOptions{DPI: o.DPI})
	if err != nil {
		return err
	}
	for _, f := range figs {
		fmt.Fprintln(e.stdout, filepath.Join(o.Run, rundir.FiguresDir, f+".svg"))
	}
	fmt.Fprintln(e.stdout, filepath.Join(o.Run, rundir.ReportFile))
	return nil
}
