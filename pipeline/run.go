package pipeline

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"time"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/contention"
	"github.com/commcal/commcal/datasets"
	"github.com/commcal/commcal/estimate"
	"github.com/commcal/commcal/experiments"
	"github.com/commcal/commcal/internal/atomicio"
	"github.com/commcal/commcal/internal/provenance"
	"github.com/commcal/commcal/report"
	"github.com/commcal/commcal/rundir"
	"github.com/commcal/commcal/validate"
)

// RunFormat is the format tag of what commcal run --json prints.
const RunFormat = "commcal-run/1"

// RunResult is what a run found (commcal run --json prints it).
type RunResult struct {
	Format      string                `json:"format"`
	Summary     *rundir.Summary       `json:"summary"`
	Calibration *estimate.Calibration `json:"calibration"`
	Accuracy    *validate.Accuracy    `json:"accuracy"`
	Figures     []string              `json:"figures"`
	Health      *report.Health        `json:"health"`
	// Drift compares the previous run (RunOptions.Previous) with this one; nil without one.
	Drift *report.Comparison `json:"drift,omitempty"`
}

// RunOptions configures Run.
type RunOptions struct {
	Cluster  *cluster.Cluster
	Sources  []datasets.Source
	Out      string
	Rule     estimate.StoppingRule
	Created  time.Time
	Logger   *slog.Logger
	Progress func(rows int64)
	Notes    []string
	// MPILibrary is the MPI library that ran the measured collectives, for the dataset's
	// manifest (datasets.IngestOptions).
	MPILibrary string
	// Defaults are the contention parameters the calibration starts from (for what the
	// dataset's calibration experiments do not determine).
	Defaults contention.Params
	// Override, when set, is applied to the calibrated parameters before validation (the
	// command line's explicit settings).
	Override func(*contention.Params)
	Weighted bool // weighted Hockney fits
	// HockneyBreaks are the sizes at which Hockney's segments start (nil: found).
	HockneyBreaks []float64
	HeldOut       []string
	// CollectiveAlgorithms chooses the algorithms of measured collectives
	// (validate.ParseAlgorithms; empty: Held's default).
	CollectiveAlgorithms string
	// Thresholds are the run's accuracy alarms, checked in its health panel.
	Thresholds []validate.Threshold
	// Previous, when set, is an earlier run to compare this one with; the comparison is in
	// the result and in the health panel.
	Previous *rundir.Run
	// DPI is the resolution of the PNG figures (0: plots.DefaultDPI).
	DPI float64
}

// Run chains the stages into a run directory (package rundir lists its files): it ingests the
// sources into a dataset, summarises it, calibrates the models, scores them on the held-out
// experiments, compares the calibration with the previous run's, and writes the report.
//
// The directory is built beside Out and renamed into place at the end, replacing an earlier
// run; a failed or interrupted run leaves the earlier one untouched.
func Run(ctx context.Context, opts RunOptions) (*RunResult, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	var res *RunResult
	err := atomicio.BuildDir(opts.Out, func(tmp string) (err error) {
		res, err = run(ctx, opts, tmp)
		return err
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

func run(ctx context.Context, opts RunOptions, tmp string) (*RunResult, error) {
	dsDir := filepath.Join(tmp, rundir.DatasetDir)
	start := time.Now()
	_, err := datasets.Ingest(ctx, datasets.IngestOptions{Cluster: opts.Cluster, Sources: opts.Sources, Out: dsDir,
		Version: provenance.Version, Created: opts.Created, Logger: opts.Logger, Progress: opts.Progress, Notes: opts.Notes, MPILibrary: opts.MPILibrary})
	if err != nil {
		return nil, err
	}
	opts.Logger.Info("stage done", "stage", "ingest", "seconds", time.Since(start).Seconds())
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// Ingest has just written and hashed these files: checking them again would only hash
	// them a second time.
	ds, err := datasets.OpenWith(dsDir, datasets.OpenOptions{NoVerify: true})
	if err != nil {
		return nil, err
	}
	start = time.Now()
	in, err := rundir.LoadTables(ctx, ds)
	if err != nil {
		return nil, err
	}
	in.HockneyBreaks = opts.HockneyBreaks
	if in.HockneyBreaks == nil {
		in.HockneyBreaks = ds.Manifest.HockneyBreaks // a SimGrid breakpoints file among the inputs
	}
	s, err := rundir.Summarize(ds, in, opts.Rule)
	if err != nil {
		return nil, err
	}
	opts.Logger.Info("stage done", "stage", "summary", "seconds", time.Since(start).Seconds())
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var text strings.Builder
	if err := s.WriteText(&text); err != nil {
		return nil, err
	}
	if err := atomicio.WriteFile(filepath.Join(tmp, rundir.SummaryText), []byte(text.String())); err != nil {
		return nil, fmt.Errorf("pipeline: %w", err)
	}
	if err := datasets.WriteJSONFile(filepath.Join(tmp, rundir.SummaryJSON), s); err != nil {
		return nil, err
	}
	if err := datasets.WriteParquetFile(filepath.Join(tmp, rundir.MeasurementsFile), rundir.MeasurementsTable, s.Measurements()); err != nil {
		return nil, err
	}
	start = time.Now()
	cal, err := Estimate(ctx, ds.Cluster, in, opts.Defaults, opts.Weighted, opts.Created)
	if err != nil {
		return nil, err
	}
	if err := rundir.WriteCalibration(tmp, cal); err != nil {
		return nil, err
	}
	opts.Logger.Info("stage done", "stage", "estimate", "seconds", time.Since(start).Seconds(), "skipped", len(cal.Skipped))
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	start = time.Now()
	heldOut := opts.HeldOut
	if heldOut == nil {
		heldOut = experiments.WithRole(experiments.HeldOut)
	}
	params := cal.Params
	if opts.Override != nil {
		opts.Override(&params)
	}
	preds, acc, err := Validate(ctx, ds.Cluster, Held{Transfers: in.Transfers, Experiments: heldOut,
		Collectives: in.Collectives, Schedules: in.Schedules, Algorithms: opts.CollectiveAlgorithms, Library: ds.Manifest.MPILibrary, Spread: cal.Spread}, params, cal.PenaltyTable(), nil, tmp)
	if err != nil {
		return nil, err
	}
	opts.Logger.Info("stage done", "stage", "validate", "seconds", time.Since(start).Seconds())
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	start = time.Now()
	res := &RunResult{Format: RunFormat, Summary: s, Calibration: cal, Accuracy: acc}
	contents := &report.Contents{Dataset: ds, Inputs: in, Summary: s, Calibration: cal, Accuracy: acc, Predictions: preds,
		Thresholds: report.Specs(opts.Thresholds), DPI: opts.DPI}
	if opts.Previous != nil {
		res.Drift = report.Contrast([]*rundir.Run{opts.Previous, {Dir: opts.Out, Calibration: cal, Accuracy: acc}})
		contents.Previous = res.Drift.PreviousRun()
	}
	if res.Health, res.Figures, err = report.Write(ctx, tmp, contents); err != nil {
		return nil, err
	}
	opts.Logger.Info("stage done", "stage", "plot", "seconds", time.Since(start).Seconds(), "figures", len(res.Figures))
	return res, nil
}
