package pipeline

import (
	"path/filepath"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/contention"
	"github.com/commcal/commcal/datasets"
	"github.com/commcal/commcal/validate"
)

// Files of the validation stage.
const (
	PredictionsFile = "predictions.parquet"
	AccuracyFile    = "accuracy.json"
	// InSamplePredictionsFile holds the predictions of validate --in-sample's parameters.
	InSamplePredictionsFile = "predictions_in_sample.parquet"
)

// Validate scores every model on a dataset's held-out transfers with the given parameters
// and penalty table, writes predictions.parquet and accuracy.json (with inSample, when not
// nil: validate --in-sample, whose predictions go to predictions_in_sample.parquet) into dir,
// and returns both.
func Validate(cl *cluster.Cluster, transfers []datasets.Transfer, params contention.Params, table *contention.PenaltyTable, heldOut []string, inSample *validate.InSample, dir string) ([]validate.Row, *validate.Accuracy, error) {
	preds, acc, err := validate.Validate(cl, transfers, params, table, contention.Models(), heldOut)
	if err != nil {
		return nil, nil, err
	}
	acc.InSample = inSample
	if table == nil {
		acc.Warnings = append(acc.Warnings, "no penalty table (no static_sync experiments): penalty-table equals penalty")
	}
	if err := datasets.WriteParquetFile(filepath.Join(dir, PredictionsFile), validate.PredictionsTable, preds); err != nil {
		return nil, nil, err
	}
	if err := datasets.WriteJSONFile(filepath.Join(dir, AccuracyFile), acc); err != nil {
		return nil, nil, err
	}
	if inSample != nil {
		if err := datasets.WriteParquetFile(filepath.Join(dir, InSamplePredictionsFile), validate.PredictionsTable, inSample.Rows); err != nil {
			return nil, nil, err
		}
	}
	return preds, acc, nil
}
