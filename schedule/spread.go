package schedule

import (
	"fmt"
	"math"
	"slices"
)

// Spread is how a measured transfer's time scatters around its own mean from one repetition to
// the next: the ratios of a calibration's transfer repetitions to their transfers' means
// (estimate.FitSpread), sorted, each standing for an equal share of them. It holds the
// measurement's scatter, not a model's error (a model's bias counts once, in its predictions).
// A model predicts each transfer's expected time; a round ends with its slowest transfer, and
// the expected slowest of several is longer than the slowest of their expected times by what
// their times scatter: for two transfers predicted alike, each equally likely to take 0.8 or
// 1.2 of that time, the round takes 1.2 of it with probability 3/4. With a spread, a round's
// time is that expected maximum, each transfer's time taken as its prediction times a ratio
// drawn from the spread, independently of the others (RoundTime).
type Spread []float64

// Check says whether s can be a spread: finite positive ratios in increasing order.
func (s Spread) Check() error {
	for i, r := range s {
		if !(r > 0) || math.IsInf(r, 0) {
			return fmt.Errorf("spread ratio %d is %g, want a finite positive ratio", i, r)
		}
		if i > 0 && r < s[i-1] {
			return fmt.Errorf("spread ratios %d and %d are %g and %g, want them in increasing order", i-1, i, s[i-1], r)
		}
	}
	return nil
}

// RoundTime is the expected time of a round whose transfers the model predicts to take times
// (each > 0), under the spread s: E[max_i times[i]·ρ_i] with the ρ_i drawn independently from
// s, each of its ratios with probability 1/len(s). Without a spread it is the largest time.
//
// The maximum is at most t when every transfer's ratio is at most t/times[i]; with F(x) the
// share of s at most x, P(max ≤ t) = Π_i F(t/times[i]), a step function of t that changes
// only where t is some times[i]·s[k], and E[max] = ∫₀^∞ (1 − P(max ≤ t)) dt is summed
// exactly over those steps. Transfers of equal predicted times are taken together (their F
// raised to their count), and a transfer that cannot be the slowest (its time at the largest
// ratio below the slowest's at the smallest) is left out, which changes nothing: the cost is
// that of sorting (distinct times that matter) × len(s) steps.
func (s Spread) RoundTime(times []float64) float64 {
	if len(times) == 0 {
		return 0
	}
	top := slices.Max(times)
	if len(s) == 0 {
		return top
	}
	lo, hi := s[0], s[len(s)-1]
	type group struct {
		t float64
		m int
	}
	var groups []group
	sorted := slices.Clone(times)
	slices.Sort(sorted)
	for _, t := range sorted {
		if t*hi <= top*lo { // never above the slowest transfer's smallest time
			continue
		}
		if n := len(groups); n > 0 && groups[n-1].t == t {
			groups[n-1].m++
			continue
		}
		groups = append(groups, group{t, 1})
	}
	if len(groups) == 0 { // every transfer's times at their ratios tie with the slowest's at lo
		return top * lo
	}
	type step struct {
		at float64
		g  int32
	}
	steps := make([]step, 0, len(groups)*len(s))
	for g, gr := range groups {
		for _, r := range s {
			steps = append(steps, step{gr.t * r, int32(g)})
		}
	}
	slices.SortFunc(steps, func(a, b step) int {
		if a.at < b.at {
			return -1
		}
		if a.at > b.at {
			return 1
		}
		return 0
	})
	q := float64(len(s))
	count := make([]int, len(groups))
	zero := len(groups) // groups with no ratio at or below t/time yet: P(max ≤ t) = 0
	logP := 0.0         // Σ m·log F over the groups with a count
	sum := steps[0].at  // below the first step P = 0: 1 − P = 1
	for k, st := range steps {
		g := st.g
		c := count[g]
		if c == 0 {
			zero--
		} else {
			logP -= float64(groups[g].m) * math.Log(float64(c)/q)
		}
		count[g] = c + 1
		logP += float64(groups[g].m) * math.Log(float64(c+1)/q)
		if k+1 == len(steps) {
			break // P = 1 from here on
		}
		p := 0.0
		if zero == 0 {
			p = math.Exp(logP)
		}
		sum += (1 - p) * (steps[k+1].at - st.at)
	}
	return sum
}
