package pipeline

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/commcal/commcal/contention"
	"github.com/commcal/commcal/datasets"
	"github.com/commcal/commcal/estimate"
	"github.com/commcal/commcal/validate"
)

// Files of the validation stage.
const (
	PredictionsFile = "predictions.parquet"
	AccuracyFile    = "accuracy.json"
)

// Validate scores every model on the dataset's held-out transfers and writes
// predictions.parquet and accuracy.json into dir. With fitContra, the contra-flow factor φ of
// asymmetric-fitted is first fitted on the dataset's bidirectional calibration experiments
// (never on held-out ones); without enough of them, params' φ stays and a warning says so.
// The penalty table of penalty-table is back-solved from the static_sync experiments.
func Validate(ctx context.Context, ds *datasets.Dataset, params contention.Params, heldOut []string, fitContra bool, dir string) (*validate.Accuracy, error) {
	rows, err := datasets.ReadAll[datasets.Transfer](ctx, ds, datasets.TransfersTable)
	if err != nil {
		return nil, err
	}
	var fit *estimate.ContraFit
	var fitErr error
	if fitContra {
		if fit, fitErr = estimate.FitContraFactor(ds.Cluster, rows, params, 1); fitErr == nil {
			params.ContraFactor = fit.Phi
		}
	}
	// The penalty table comes from the static_sync experiments; the penalty models' α with it,
	// when the parameters do not fix it.
	var table *contention.PenaltyTable
	pfit, perr := estimate.BackSolvePenalties(ds.Cluster, rows, params.PenaltyAlpha)
	if perr == nil {
		table, params.PenaltyAlpha = pfit.Table, pfit.Alpha
	}
	preds, acc, err := validate.Validate(ds.Cluster, rows, params, table, contention.Models(), heldOut)
	if err != nil {
		return nil, err
	}
	acc.ContraFit, acc.PenaltyFit = fit, pfit
	if perr != nil {
		acc.Warnings = append(acc.Warnings, fmt.Sprintf("penalty-table has no table and equals penalty: %v", perr))
	}
	if fitErr != nil {
		acc.Warnings = append(acc.Warnings, fmt.Sprintf("asymmetric-fitted uses φ = %g: %v", params.ContraFactor, fitErr))
	}
	if err := datasets.WriteParquetFile(filepath.Join(dir, PredictionsFile), validate.PredictionsTable, preds); err != nil {
		return nil, err
	}
	if err := datasets.WriteJSONFile(filepath.Join(dir, AccuracyFile), acc); err != nil {
		return nil, fmt.Errorf("pipeline: %w", err)
	}
	return acc, nil
}
