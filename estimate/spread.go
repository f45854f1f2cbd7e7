package estimate

import (
	"context"
	"fmt"
	"slices"

	"github.com/commcal/commcal/contention"
	"github.com/commcal/commcal/datasets"
	"github.com/commcal/commcal/experiments"
	"github.com/commcal/commcal/schedule"
)

// SpreadFit is how one model's predictions scatter around the measured transfers of a
// calibration: the ratios measured/predicted of every repetition of every transfer of the
// contention calibration experiments (experiments.ContentionCalibration), under the calibrated
// parameters, kept as at most SpreadRatios quantiles in increasing order. A model predicts a
// transfer's expected time; a collective's round ends with whichever of its transfers is
// late, and schedule.Spread gives the round's expected end from these ratios.
type SpreadFit struct {
	Model string `json:"model"`
	// Transfers counts the transfer repetitions the ratios summarise.
	Transfers int       `json:"transfers"`
	Ratios    []float64 `json:"ratios"`
}

// SpreadRatios is the most ratios a SpreadFit keeps: the midpoints of that many equal shares
// of the sorted ratios (all of them when there are fewer), so that calibration.json stays
// small and a round's expected end costs (distinct transfer times) × 128 steps at most.
const SpreadRatios = 128

// MinSpreadTransfers is the fewest transfer repetitions a spread is fitted on: 30, where the
// tail share a round's maximum reads (1/30 of the ratios above the 97th percentile) still
// holds one observation. With fewer, the spread is not identified and collectives' rounds
// end with their slowest predicted transfer.
const MinSpreadTransfers = 30

// FitSpreads fits each model's spread on the contention calibration transfers of rows, under
// net (the calibrated parameters). With too few calibration transfers no model has one, and
// one Unidentified ("prediction_spread") says so; a model that cannot predict them, or predicts
// too few of them a positive time, has none, and an Unidentified names it.
// It stops when ctx is done, with its error.
func FitSpreads(ctx context.Context, net *contention.Network, rows []datasets.Transfer, models []contention.Model) ([]SpreadFit, []Unidentified, error) {
	var names []string
	for _, n := range experiments.ContentionCalibration() {
		names = append(names, string(n))
	}
	pats, err := datasets.MeasuredPatterns(rows, names)
	if err != nil {
		return nil, nil, err
	}
	reps := 0
	for _, r := range rows {
		if slices.Contains(names, r.Experiment) {
			reps++
		}
	}
	const fallback = "a collective's round ends with its slowest predicted transfer"
	if reps < MinSpreadTransfers {
		return nil, []Unidentified{{Parameter: "prediction_spread", Fallback: fallback,
			Reason: fmt.Sprintf("not identified: %d repetitions of transfers in the contention calibration experiments, at least %d needed", reps, MinSpreadTransfers)}}, nil
	}
	flows := make([][]contention.Flow, len(pats))
	index := map[[2]string]int{}
	for k, p := range pats {
		flows[k] = p.Flows
		index[[2]string{p.Experiment, p.ID}] = k
	}
	var fits []SpreadFit
	var unid []Unidentified
	for _, m := range models {
		preds, err := contention.PredictAll(ctx, net, flows, []contention.Model{m}, nil)
		if err != nil {
			if ctx.Err() != nil {
				return nil, nil, ctx.Err()
			}
			unid = append(unid, Unidentified{Parameter: "prediction_spread." + m.Name(), Fallback: fallback,
				Reason: fmt.Sprintf("not identified: the model does not predict the calibration patterns (%v)", err)})
			continue
		}
		ratios := make([]float64, 0, reps)
		for _, r := range rows {
			k, ok := index[[2]string{r.Experiment, r.PatternID}]
			if !ok {
				continue
			}
			if p := preds[k][0].Times[r.FlowID]; p > 0 {
				ratios = append(ratios, r.Seconds()/p)
			}
		}
		if len(ratios) < MinSpreadTransfers {
			unid = append(unid, Unidentified{Parameter: "prediction_spread." + m.Name(), Fallback: fallback,
				Reason: fmt.Sprintf("not identified: the model predicts %d of the %d calibration transfer repetitions a positive time, at least %d needed", len(ratios), reps, MinSpreadTransfers)})
			continue
		}
		slices.Sort(ratios)
		fits = append(fits, SpreadFit{Model: m.Name(), Transfers: len(ratios), Ratios: quantiles(ratios, SpreadRatios)})
	}
	return fits, unid, nil
}

// quantiles returns sorted xs as it is when it has at most q values, else the midpoints of q
// equal shares of it: xs[⌊(k + ½)·n/q⌋] for k = 0 … q − 1.
func quantiles(xs []float64, q int) []float64 {
	if len(xs) <= q {
		return xs
	}
	out := make([]float64, q)
	for k := range out {
		out[k] = xs[(2*k+1)*len(xs)/(2*q)]
	}
	return out
}

// Spreads indexes fits by model: a model without a spread has none in the map.
func Spreads(fits []SpreadFit) map[string]schedule.Spread {
	out := make(map[string]schedule.Spread, len(fits))
	for _, f := range fits {
		out[f.Model] = f.Ratios
	}
	return out
}
