package estimate

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/commcal/commcal/datasets"
)

// FairnessFit is the fit of per-flow rate = min(ceiling, capacity/k) to k transfers sharing
// one resource (CCPE 2014 §5.1): fair_intra shares a NIC, fair_inter the backbone or uplinks.
type FairnessFit struct {
	Experiment string `json:"experiment"`
	// Ceiling is the rate of a transfer alone, in bits per second (β_E⁻¹; 940 Mbit/s on 1 Gb
	// Ethernet); Capacity the resource's total (β_N⁻¹ or β_O⁻¹).
	Ceiling  Param `json:"ceiling_bps"`
	Capacity Param `json:"capacity_bps"`
	// Saturation is the k from which the resource is the bottleneck: capacity/ceiling.
	Saturation Param `json:"saturation_k"`
	// SaturatedFrom is the smallest k measured in the saturated regime (0: none was).
	SaturatedFrom int `json:"saturated_from_k"`
	// Rates are the measured mean per-flow rates, per k.
	Rates []FairnessPoint `json:"rates"`
}

// FairnessPoint is the mean per-flow rate measured with k transfers.
type FairnessPoint struct {
	K    int     `json:"k"`
	Rate float64 `json:"rate_bps"`
}

// FitFairness fits rate = min(c, C/k) on the transfers of one fairness experiment. Each
// transfer's rate is its size·8 over its mean time; the patterns are told apart by their
// number of transfers k, and each k contributes its mean per-flow share (the pattern's bytes
// over the sum of its transfers' times). Every split between an
// unsaturated regime (k ≤ s: rate = c, the mean of those rates) and a saturated one (k > s:
// rate = C/k, least squares through the origin in 1/k) is tried, and the split of least
// squared error kept. Intervals: Student t on the mean for c and on the regression for C, over
// the ks of each regime; the saturation point by the delta method on C/c. A regime measured
// at a single k has no interval for its parameter (infinite bounds).
func FitFairness(rows []datasets.Transfer, experiment string) (*FairnessFit, error) {
	pats, err := datasets.MeasuredPatterns(rows, []string{experiment})
	if err != nil {
		return nil, err
	}
	// Each pattern gives the per-flow share of what the resource carried: its bytes over the
	// sum of its transfers' times. (Averaging each transfer's own rate would overstate the
	// share when real TCP lets some transfers finish early: the early rates and the late ones
	// add up to more than the resource carries. The makespan would be exact without noise but
	// is the maximum of k noisy times, biased long.)
	byK := map[int][]float64{}
	patsOfK := map[int][]*datasets.MeasuredPattern{}
	for _, p := range pats {
		k := len(p.Flows)
		var bytes, total float64
		for i, f := range p.Flows {
			bytes += f.Bytes
			total += p.Mean[i]
		}
		byK[k] = append(byK[k], bytes*8/total)
		patsOfK[k] = append(patsOfK[k], p)
	}
	ks := make([]int, 0, len(byK))
	for k := range byK {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	// One observation per k, the mean per-flow rate: the transfers of one pattern share its
	// conditions, so they are not independent observations of the regime.
	var all []fairnessObs
	for _, k := range ks {
		all = append(all, fairnessObs{k, stat.Mean(byK[k], nil)})
	}
	if len(ks) < 2 {
		return nil, fmt.Errorf("estimate: fairness %s: patterns with %d distinct flow counts, need at least 2 (transfers rows of experiment %s, k = 1, 2, … concurrent flows)", experiment, len(ks), experiment)
	}
	fit := &FairnessFit{Experiment: experiment}
	for _, k := range ks {
		fit.Rates = append(fit.Rates, FairnessPoint{K: k, Rate: stat.Mean(byK[k], nil)})
	}
	bestS, bestC, bestCap := fairnessSplit(ks, all)
	split := 0
	if bestS > 0 {
		split = ks[bestS-1]
	}
	if bestS < len(ks) {
		fit.SaturatedFrom = ks[bestS]
	}
	var unsat, satX, satY []float64
	for _, o := range all {
		if o.k <= split {
			unsat = append(unsat, o.rate)
		} else {
			satX, satY = append(satX, 1/float64(o.k)), append(satY, o.rate)
		}
	}
	// The ceiling: the unsaturated mean, or, with no unsaturated regime, the rate at k = 1
	// bounds it from below (the resource already saturates one transfer).
	fit.Ceiling = meanParam(unsat)
	if len(unsat) == 1 {
		// The ceiling is by definition the rate of a flow alone: measured at k = 1 it is
		// measured directly, with the spread of that k's patterns or repetitions.
		fit.Ceiling = oneKRate(byK[ks[0]], patsOfK[ks[0]])
	}
	if len(unsat) == 0 {
		fit.Ceiling = Param{Value: bestCap, CILow: bestCap, CIHigh: math.Inf(1), N: 0}
	}
	fit.Capacity = Param{Value: math.Inf(1), CILow: math.Inf(1), CIHigh: math.Inf(1)}
	if len(satX) > 0 {
		fit.Capacity = throughOrigin(satX, satY)
	} else {
		// Never saturated: the capacity is at least k·c at the largest k.
		lo := float64(ks[len(ks)-1]) * bestC
		fit.Capacity = Param{Value: math.Inf(1), CILow: lo, CIHigh: math.Inf(1)}
	}
	fit.Saturation = ratioParam(fit.Capacity, fit.Ceiling)
	return fit, nil
}

// oneKRate is the per-flow share measured at one k, with its interval: Student t over the
// patterns' shares when the k has two or more, else over the one pattern's repetitions (the
// share is 8·Σbytes/Σ mean times; the variance of the sum adds the flows' s²/reps, with the
// fewest repetitions less one degrees of freedom). One repetition bounds nothing.
func oneKRate(shares []float64, pats []*datasets.MeasuredPattern) Param {
	if len(shares) > 1 {
		return meanParam(shares)
	}
	p := pats[0]
	var bytes, total, v float64
	reps := int64(math.MaxInt64)
	for i, f := range p.Flows {
		bytes += f.Bytes
		total += p.Mean[i]
		reps = min(reps, p.Reps[i])
		if p.Reps[i] > 0 {
			v += p.SD[i] * p.SD[i] / float64(p.Reps[i])
		}
	}
	out := Param{Value: bytes * 8 / total, CILow: math.Inf(-1), CIHigh: math.Inf(1), N: int(reps)}
	if reps < 2 {
		return out
	}
	h := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(reps - 1)}.Quantile(0.975) * math.Sqrt(v)
	out.CILow = bytes * 8 / (total + h)
	if total > h {
		out.CIHigh = bytes * 8 / (total - h)
	}
	return out
}

// fairnessObs is one k's mean per-flow rate.
type fairnessObs struct {
	k    int
	rate float64
}

// fairnessSplit tries every split of the ks between the unsaturated regime (ks[:bestS]: rate
// = c, the mean of their rates) and the saturated one (rate = C/k, least squares through the
// origin in 1/k) that agrees with its own fit (unsaturated ks at or below C/c, within 2%), and
// returns the split of least squared error with its c (bestC) and C (bestCap), NaN for a
// regime without ks.
func fairnessSplit(ks []int, all []fairnessObs) (bestS int, bestC, bestCap float64) {
	bestSSE := math.Inf(1)
	for si := 0; si <= len(ks); si++ { // ks[:si] unsaturated
		split := 0
		if si > 0 {
			split = ks[si-1]
		}
		var sumU, nU, sxy, sxx float64
		for _, o := range all {
			if o.k <= split {
				sumU += o.rate
				nU++
			} else {
				x := 1 / float64(o.k)
				sxy += x * o.rate
				sxx += x * x
			}
		}
		c, capacity := math.NaN(), math.NaN()
		if nU > 0 {
			c = sumU / nU
		}
		if sxx > 0 {
			capacity = sxy / sxx
		}
		// The regimes must agree with the split: unsaturated ks at or below C/c.
		if nU > 0 && sxx > 0 && (capacity/c < float64(split)*(1-0.02) || capacity/c > float64(ks[si])*(1+0.02)) {
			continue
		}
		sse := 0.0
		for _, o := range all {
			pred := capacity / float64(o.k)
			if o.k <= split {
				pred = c
			}
			sse += (o.rate - pred) * (o.rate - pred)
		}
		if sse < bestSSE {
			bestSSE, bestS, bestC, bestCap = sse, si, c, capacity
		}
	}
	return bestS, bestC, bestCap
}
