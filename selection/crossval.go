package selection

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/contention"
	"github.com/commcal/commcal/datasets"
	"github.com/commcal/commcal/estimate"
	"github.com/commcal/commcal/experiments"
	"github.com/commcal/commcal/internal/badinput"
	"github.com/commcal/commcal/internal/parallel"
	"github.com/commcal/commcal/validate"
)

// CVFolds is the number of folds of the cross-validation over calibration experiments.
const CVFolds = 5

// CVScore is one model's cross-validated accuracy on the calibration experiments.
type CVScore struct {
	Model      string  `json:"model"`
	Transfers  int     `json:"transfers"`
	Within10   float64 `json:"within_10pct"`
	MeanAbsErr float64 `json:"mean_abs_err"`
	Bias       float64 `json:"bias"`
}

// CrossValidation scores every model on calibration patterns left out of its calibration,
// which is how models are selected without looking at held-out data.
type CrossValidation struct {
	Folds    int       `json:"folds"`
	Patterns int       `json:"patterns"`
	Scores   []CVScore `json:"scores"`
}

// CrossValidate splits the contention calibration patterns (fair_intra, fair_inter, bidir_nic,
// bidir_backbone, static_sync and random_calibration patterns of two or more transfers) into
// CVFolds folds (in (experiment, pattern) order, dealt round-robin, so each fold takes a share
// of every experiment), and for each fold calibrates on every other row of the dataset
// (estimate.Calibrate) and predicts the fold's patterns with every model. Scores are over
// every left-out transfer's mean time, best share within ±10% first, then mean |ε|.
func CrossValidate(ctx context.Context, cl *cluster.Cluster, in estimate.Inputs, defaults contention.Params) (*CrossValidation, error) {
	pats, err := datasets.MeasuredPatterns(in.Transfers, experiments.ContentionCalibration())
	if err != nil {
		return nil, err
	}
	pats = slices.DeleteFunc(pats, func(p *datasets.MeasuredPattern) bool { return len(p.Flows) < 2 })
	slices.SortStableFunc(pats, func(a, b *datasets.MeasuredPattern) int {
		return cmp.Or(cmp.Compare(a.Experiment, b.Experiment), cmp.Compare(a.ID, b.ID))
	})
	if len(pats) < CVFolds {
		return nil, badinput.Errorf("", "cross-validation: %d calibration patterns of two transfers or more, need at least %d: measure fair_intra, fair_inter, bidir_*, static_sync or random patterns with role = \"calibration\"",
			len(pats), CVFolds)
	}
	type key struct{ exp, id string }
	folds := make([][]*datasets.MeasuredPattern, CVFolds)
	fold := map[key]int{}
	for i, p := range pats {
		folds[i%CVFolds] = append(folds[i%CVFolds], p)
		fold[key{p.Experiment, p.ID}] = i % CVFolds
	}
	models := contention.Models()
	// The folds are calibrated in parallel, each into its slot (as the leaderboard's datasets),
	// their errors pooled in fold order.
	foldErrs := make([][][]float64, CVFolds)
	err = parallel.For(ctx, CVFolds, 0, func(k int) error {
		left := folds[k]
		train := in
		train.Transfers = slices.DeleteFunc(slices.Clone(in.Transfers), func(r datasets.Transfer) bool {
			f, ok := fold[key{r.Experiment, r.PatternID}]
			return ok && f == k
		})
		cal, err := estimate.Calibrate(ctx, cl, train, defaults, false)
		if err != nil {
			return err
		}
		net, err := cal.Params.Network(cl)
		if err != nil {
			return fmt.Errorf("cross-validation, fold %d: %w", k+1, err)
		}
		net.PenaltyTable = cal.PenaltyTable()
		preds, err := validate.PredictPatterns(ctx, net, left, models)
		if err != nil {
			return fmt.Errorf("cross-validation: %w", err)
		}
		errs := make([][]float64, len(models))
		for i, p := range left {
			for j := range models {
				for f := range p.Flows {
					errs[j] = append(errs[j], validate.SignedError(preds[i][j].Times[f], p.Mean[f]))
				}
			}
		}
		foldErrs[k] = errs
		return nil
	})
	if err != nil {
		return nil, err
	}
	errs := make([][]float64, len(models))
	for _, fe := range foldErrs {
		for j := range models {
			errs[j] = append(errs[j], fe[j]...)
		}
	}
	cv := &CrossValidation{Folds: CVFolds, Patterns: len(pats)}
	for j, m := range models {
		s := CVScore{Model: m.Name(), Transfers: len(errs[j])}
		s.MeanAbsErr, s.Bias, s.Within10 = validate.SummarizeErrors(errs[j])
		cv.Scores = append(cv.Scores, s)
	}
	slices.SortStableFunc(cv.Scores, func(a, b CVScore) int { return validate.BestFirst(a.Within10, a.MeanAbsErr, b.Within10, b.MeanAbsErr) })
	return cv, nil
}
