package pipeline

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/commcal/commcal/contention"
	"github.com/commcal/commcal/datasets"
	"github.com/commcal/commcal/validate"
)

// Files of the validation stage.
const (
	PredictionsFile = "predictions.parquet"
	AccuracyFile    = "accuracy.json"
)

// Validate scores every model on the dataset's held-out transfers with the given parameters
// and penalty table, and writes predictions.parquet and accuracy.json into dir.
func Validate(ctx context.Context, ds *datasets.Dataset, params contention.Params, table *contention.PenaltyTable, heldOut []string, dir string) (*validate.Accuracy, error) {
	rows, err := datasets.ReadAll[datasets.Transfer](ctx, ds, datasets.TransfersTable)
	if err != nil {
		return nil, err
	}
	preds, acc, err := validate.Validate(ds.Cluster, rows, params, table, contention.Models(), heldOut)
	if err != nil {
		return nil, err
	}
	if table == nil {
		acc.Warnings = append(acc.Warnings, "no penalty table (no static_sync experiments): penalty-table equals penalty")
	}
	if err := datasets.WriteParquetFile(filepath.Join(dir, PredictionsFile), validate.PredictionsTable, preds); err != nil {
		return nil, err
	}
	if err := datasets.WriteJSONFile(filepath.Join(dir, AccuracyFile), acc); err != nil {
		return nil, fmt.Errorf("pipeline: %w", err)
	}
	return acc, nil
}
