package estimate

import (
	"math"
	"math/rand/v2"
	"slices"
)

// gridProfile is a one-parameter fit's error tabulated on a grid: element [i][g] is pattern
// i's Σ log² error at grid point g. A parameter whose error is not smooth in it (φ's rule, α's
// saturated sets) is fitted on it: the best grid point, refined by golden section between its
// neighbours; φ's interval is a percentile one from a seeded bootstrap over patterns on the
// grid (bootstrap), α's an F test's (alphaInterval).
type gridProfile [][]float64

// argmin is the range of grid points with the least error summed over the patterns, each
// counted weights[i] times: the first and the last within gridTies of the least (the
// predictions behind the table are exact to about 10⁻¹¹, 10⁻⁷ in the rare α-fair sharings
// whose prices stall, contention's alphaStallTol; where the error is flat in the
// parameter, such noise must not pick a point, and the range says how far it is flat).
func (t gridProfile) argmin(weights []int) (first, last int) {
	sums := make([]float64, len(t[0]))
	least := math.Inf(1)
	for g := range sums {
		for i, w := range weights {
			sums[g] += float64(w) * t[i][g]
		}
		least = min(least, sums[g])
	}
	first = -1
	for g, v := range sums {
		if v <= least+gridTies*math.Abs(least) {
			if first < 0 {
				first = g
			}
			last = g
		}
	}
	return first, last
}

// gridTies is the relative difference under which two grid points' errors count as equal.
const gridTies = 1e-8

// flat says whether the summed error changes over the grid by at most rel of its largest.
func (t gridProfile) flat(rel float64) bool {
	lo, hi := math.Inf(1), math.Inf(-1)
	for g := range t[0] {
		v := t.column(g)
		lo, hi = min(lo, v), max(hi, v)
	}
	return hi-lo <= rel*hi
}

// column is the error summed over the patterns at grid point g.
func (t gridProfile) column(g int) float64 {
	s := 0.0
	for _, row := range t {
		s += row[g]
	}
	return s
}

// best is the grid point of least total error (the first of equals).
func (t gridProfile) best() int {
	ones := make([]int, len(t))
	for i := range ones {
		ones[i] = 1
	}
	g, _ := t.argmin(ones)
	return g
}

// bootstrap is the 2.5% point of the best grid points' first and the 97.5% point of their
// last over bootstrapResamples resamples of the patterns (with replacement), drawn from a PCG
// seeded with seed: the interval, widened by where the error is flat.
func (t gridProfile) bootstrap(seed1, seed2 uint64) (lo, hi int) {
	rng := rand.New(rand.NewPCG(seed1, seed2))
	firsts, lasts := make([]int, bootstrapResamples), make([]int, bootstrapResamples)
	w := make([]int, len(t))
	for b := range firsts {
		clear(w)
		for range t {
			w[rng.IntN(len(t))]++
		}
		firsts[b], lasts[b] = t.argmin(w)
	}
	slices.Sort(firsts)
	slices.Sort(lasts)
	// The 10th and the 390th of 400: 2.5% of the resamples at or below the one, 2.5% above
	// the other.
	return firsts[int(0.025*bootstrapResamples)-1], lasts[int(0.975*bootstrapResamples)-1]
}
