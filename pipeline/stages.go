package pipeline

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/contention"
	"github.com/commcal/commcal/datasets"
	"github.com/commcal/commcal/estimate"
	"github.com/commcal/commcal/internal/provenance"
	"github.com/commcal/commcal/rundir"
	"github.com/commcal/commcal/schedule"
	"github.com/commcal/commcal/validate"
)

// The stages that Run chains and that `commcal estimate` and `commcal validate` run alone.

// Estimate calibrates every model parameter a dataset's calibration experiments allow
// (estimate.Calibrate), and stamps the calibration with the tool, its version, the creation
// time and the cluster's nominal rates class by class (params.nominal: what the fitted
// capacities are measured against, for applying the calibration to another cluster). Its only
// error is ctx's, when ctx is done before the calibration ends.
func Estimate(ctx context.Context, cl *cluster.Cluster, in estimate.Inputs, defaults contention.Params, weighted bool, created time.Time) (*estimate.Calibration, error) {
	cal, err := estimate.Calibrate(ctx, cl, in, defaults, weighted)
	if err != nil {
		return nil, err
	}
	cal.Tool, cal.Version, cal.Created = "commcal", provenance.Version, created.UTC().Format(time.RFC3339)
	cal.Params.Nominal = contention.NominalOf(cl)
	return cal, nil
}

// Held is what validation scores: the transfers of the held-out experiments, the measured
// collectives (validate.ScoredCollectives) as the rounds of the algorithms Algorithms chooses
// (validate.ParseAlgorithms; empty: the default rules of Library, the MPI library the dataset
// names, or without one validate.DefaultAlgorithms, with a warning), and the collectives
// measured as the rounds of named algorithms (Schedules) as those algorithms' rounds.
type Held struct {
	Transfers   []datasets.Transfer
	Experiments []string
	Collectives []datasets.Collective
	Schedules   []datasets.Schedule
	Algorithms  string
	Library     string
	// Spread is the calibration's transfer spread (estimate.FitSpread): with one, collective
	// rounds end with their expected slowest transfer.
	Spread *estimate.SpreadFit
}

// scoresCollectives says whether the collectives table has a row validation scores
// (validate.ScoredCollectives).
func (h Held) scoresCollectives() bool {
	return slices.ContainsFunc(h.Collectives, func(c datasets.Collective) bool { return slices.Contains(validate.ScoredCollectives, c.Op) })
}

// algorithms is how the collectives table's rows are expanded (Held), and a warning where
// the choice is the default for want of a library while that table has rows to score
// (scored: scoresCollectives).
func (h Held) algorithms(scored bool) (choice, warning string) {
	switch {
	case h.Algorithms != "":
		return h.Algorithms, ""
	case h.Library != "":
		return schedule.AutoPrefix + h.Library, ""
	case scored:
		return validate.DefaultAlgorithms, fmt.Sprintf("collectives: expanded by %s: the dataset does not name the MPI library that ran them (ingest --mpi-library, or --collective-algorithms)", validate.DefaultAlgorithms)
	}
	return validate.DefaultAlgorithms, ""
}

// Validate scores every model on a dataset's held-out transfers and collectives with the
// given parameters and penalty table, writes predictions.parquet and accuracy.json (with
// inSample, when not nil: validate --in-sample, whose predictions go to
// predictions_in_sample.parquet) into dir, and returns both. The predictions stop when ctx is
// done, with its error.
func Validate(ctx context.Context, cl *cluster.Cluster, held Held, params contention.Params, table *contention.PenaltyTable, inSample *validate.InSample, dir string) ([]validate.Row, *validate.Accuracy, error) {
	models := contention.Models()
	preds, acc, err := validate.Validate(ctx, cl, held.Transfers, params, table, models, held.Experiments)
	if err != nil {
		return nil, nil, err
	}
	if scored := held.scoresCollectives(); scored || len(held.Schedules) > 0 {
		algs, warning := held.algorithms(scored)
		if warning != "" {
			acc.Warnings = append(acc.Warnings, warning)
		}
		net, err := params.Network(cl)
		if err != nil {
			return nil, nil, err
		}
		net.PenaltyTable = table
		if acc.Collectives, err = validate.ScoreCollectives(ctx, cl, held.Collectives, held.Schedules, net, models, held.Spread.Spread(), algs); err != nil {
			return nil, nil, err
		}
		acc.CollectiveAlgorithms = algs
	}
	acc.InSample = inSample
	if table == nil {
		acc.Warnings = append(acc.Warnings, "no penalty table (no static_sync experiments): penalty-table equals penalty")
	}
	if err := datasets.WriteParquetFile(filepath.Join(dir, rundir.PredictionsFile), validate.PredictionsTable, preds); err != nil {
		return nil, nil, err
	}
	if err := datasets.WriteJSONFile(filepath.Join(dir, rundir.AccuracyFile), acc); err != nil {
		return nil, nil, err
	}
	if inSample != nil {
		if err := datasets.WriteParquetFile(filepath.Join(dir, rundir.InSamplePredictionsFile), validate.PredictionsTable, inSample.Rows); err != nil {
			return nil, nil, err
		}
	}
	return preds, acc, nil
}
