package estimate

import (
	"fmt"
	"slices"

	"github.com/commcal/commcal/datasets"
	"github.com/commcal/commcal/experiments"
	"github.com/commcal/commcal/schedule"
)

// SpreadFit is how far a transfer's time falls from its own mean from one repetition to the
// next: the ratios of every repetition of every transfer of the contention calibration
// experiments (experiments.ContentionCalibration) to that transfer's mean over its
// repetitions, kept as at most SpreadRatios quantiles in increasing order. A model predicts a
// transfer's expected time; a collective's round ends with whichever of its transfers is
// late, and schedule.Spread gives the round's expected end from these ratios. They hold the
// measurement's scatter and no model's error, so that a model's bias counts once, in its
// predictions, and not again in every round.
type SpreadFit struct {
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
// holds one observation. With fewer, or with no transfer measured twice, the spread is not
// identified and collectives' rounds end with their slowest predicted transfer.
const MinSpreadTransfers = 30

// FitSpread fits the transfer spread on the contention calibration transfers of rows that
// were measured at least twice. Where the data do not identify it, it returns nil and an
// Unidentified ("transfer_spread") that says why; an error only for rows that contradict
// each other (a transfer whose nodes or size change between repetitions).
func FitSpread(rows []datasets.Transfer) (*SpreadFit, *Unidentified, error) {
	pats, err := datasets.MeasuredPatterns(rows, experiments.ContentionCalibration())
	if err != nil {
		return nil, nil, err
	}
	type key struct {
		exp, id string
		flow    int64
	}
	mean := map[key]float64{}
	for _, p := range pats {
		for i, m := range p.Mean {
			if p.Reps[i] >= 2 && m > 0 {
				mean[key{p.Experiment, p.ID, int64(i)}] = m
			}
		}
	}
	var ratios []float64
	for _, r := range rows {
		if m, ok := mean[key{r.Experiment, r.PatternID, r.FlowID}]; ok {
			ratios = append(ratios, r.Seconds()/m)
		}
	}
	if len(ratios) < MinSpreadTransfers {
		return nil, &Unidentified{Parameter: "transfer_spread", Fallback: "a collective's round ends with its slowest predicted transfer",
			Reason: fmt.Sprintf("not identified: %d repetitions of contention calibration transfers measured at least twice, at least %d needed", len(ratios), MinSpreadTransfers)}, nil
	}
	slices.Sort(ratios)
	return &SpreadFit{Transfers: len(ratios), Ratios: quantiles(ratios, SpreadRatios)}, nil, nil
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

// Spread is the fit as schedule.Predict reads it; nil for no fit.
func (f *SpreadFit) Spread() schedule.Spread {
	if f == nil {
		return nil
	}
	return f.Ratios
}
