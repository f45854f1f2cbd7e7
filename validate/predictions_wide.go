package validate

import "github.com/commcal/commcal/datasets"

// wideRow is a row of predictions.parquet as commcal wrote it before the long format: one row
// per held-out transfer, a pair of columns (prediction, error) for each model of that time. It
// is read, never written, so that the run directories written then can still be compared
// (compare, run --previous); the models it knows are those it had columns for.
type wideRow struct {
	HeldOut

	PredAsymmetric       float64 `col:"pred_asymmetric_s" unit:"s" doc:"asymmetric model"`
	ErrAsymmetric        float64 `col:"err_asymmetric" unit:"1" doc:"signed relative error of asymmetric"`
	PredAsymmetricFitted float64 `col:"pred_asymmetric_fitted_s" unit:"s" doc:"asymmetric-fitted model"`
	ErrAsymmetricFitted  float64 `col:"err_asymmetric_fitted" unit:"1" doc:"signed relative error of asymmetric-fitted"`
	PredFair             float64 `col:"pred_fair_s" unit:"s" doc:"fair model"`
	ErrFair              float64 `col:"err_fair" unit:"1" doc:"signed relative error of fair"`
	PredMaxMin           float64 `col:"pred_maxmin_s" unit:"s" doc:"maxmin model"`
	ErrMaxMin            float64 `col:"err_maxmin" unit:"1" doc:"signed relative error of maxmin"`
	PredPenalty          float64 `col:"pred_penalty_s" unit:"s" doc:"penalty model"`
	ErrPenalty           float64 `col:"err_penalty" unit:"1" doc:"signed relative error of penalty"`
	PredPenaltyTable     float64 `col:"pred_penalty_table_s" unit:"s" doc:"penalty-table model"`
	ErrPenaltyTable      float64 `col:"err_penalty_table" unit:"1" doc:"signed relative error of penalty-table"`
	PredHockney          float64 `col:"pred_hockney_s" unit:"s" doc:"hockney model"`
	ErrHockney           float64 `col:"err_hockney" unit:"1" doc:"signed relative error of hockney"`
	PredStochastic       float64 `col:"pred_stochastic_s" unit:"s" doc:"stochastic model"`
	ErrStochastic        float64 `col:"err_stochastic" unit:"1" doc:"signed relative error of stochastic"`
	PredSurface          float64 `col:"pred_surface_s" unit:"s" doc:"surface model"`
	ErrSurface           float64 `col:"err_surface" unit:"1" doc:"signed relative error of surface"`
	PredDuplex           float64 `col:"pred_duplex_s" unit:"s" doc:"duplex model"`
	ErrDuplex            float64 `col:"err_duplex" unit:"1" doc:"signed relative error of duplex"`
	PredAckPath          float64 `col:"pred_ackpath_s" unit:"s" doc:"ackpath model"`
	ErrAckPath           float64 `col:"err_ackpath" unit:"1" doc:"signed relative error of ackpath"`
	PredAckPathAlpha     float64 `col:"pred_ackpath_alpha_s" unit:"s" doc:"ackpath-alpha model"`
	ErrAckPathAlpha      float64 `col:"err_ackpath_alpha" unit:"1" doc:"signed relative error of ackpath-alpha"`
}

// long turns a wide row into one row per model.
func (r wideRow) long() []Row {
	models := []struct {
		name      string
		pred, err float64
	}{
		{"asymmetric", r.PredAsymmetric, r.ErrAsymmetric},
		{"asymmetric-fitted", r.PredAsymmetricFitted, r.ErrAsymmetricFitted},
		{"fair", r.PredFair, r.ErrFair},
		{"maxmin", r.PredMaxMin, r.ErrMaxMin},
		{"penalty", r.PredPenalty, r.ErrPenalty},
		{"penalty-table", r.PredPenaltyTable, r.ErrPenaltyTable},
		{"hockney", r.PredHockney, r.ErrHockney},
		{"stochastic", r.PredStochastic, r.ErrStochastic},
		{"surface", r.PredSurface, r.ErrSurface},
		{"duplex", r.PredDuplex, r.ErrDuplex},
		{"ackpath", r.PredAckPath, r.ErrAckPath},
		{"ackpath-alpha", r.PredAckPathAlpha, r.ErrAckPathAlpha},
	}
	out := make([]Row, len(models))
	for i, m := range models {
		out[i] = Row{HeldOut: r.HeldOut, Model: m.name, Predicted: m.pred, Err: m.err}
	}
	return out
}

// ReadPredictions reads predictions.parquet, in the long format or in the wide one of older
// runs (turned into long rows). A file of neither is the long format's error.
func ReadPredictions(path string) ([]Row, error) {
	rows, err := datasets.ReadParquetFile[Row](path, PredictionsTable)
	if err == nil {
		return rows, nil
	}
	wide, werr := datasets.ReadParquetFile[wideRow](path, widePredictionsTable)
	if werr != nil {
		return nil, err
	}
	for _, w := range wide {
		rows = append(rows, w.long()...)
	}
	return rows, nil
}
