package estimate

import (
	"math"
	"math/rand/v2"
	"slices"
)

// gridProfile is a one-parameter fit's error tabulated on a grid: element [i][g] is pattern
// i's Σ log² error at grid point g. A parameter whose error is not smooth in it (φ's rule, α's
// saturated sets) is fitted on it: the best grid point, refined by golden section between its
// neighbours, with a percentile interval from a seeded bootstrap over patterns on the grid.
type gridProfile [][]float64

// argmin is the grid point with the least error summed over the patterns, each counted
// weights[i] times.
func (t gridProfile) argmin(weights []int) int {
	best, bestV := 0, math.Inf(1)
	for g := range t[0] {
		v := 0.0
		for i, w := range weights {
			v += float64(w) * t[i][g]
		}
		if v < bestV {
			best, bestV = g, v
		}
	}
	return best
}

// column is the error summed over the patterns at grid point g.
func (t gridProfile) column(g int) float64 {
	s := 0.0
	for _, row := range t {
		s += row[g]
	}
	return s
}

// best is the grid point of least total error.
func (t gridProfile) best() int {
	ones := make([]int, len(t))
	for i := range ones {
		ones[i] = 1
	}
	return t.argmin(ones)
}

// bootstrap is the 2.5% and 97.5% points of the best grid point over bootstrapResamples
// resamples of the patterns (with replacement), drawn from a PCG seeded with seed.
func (t gridProfile) bootstrap(seed1, seed2 uint64) (lo, hi int) {
	rng := rand.New(rand.NewPCG(seed1, seed2))
	boot := make([]int, bootstrapResamples)
	w := make([]int, len(t))
	for b := range boot {
		clear(w)
		for range t {
			w[rng.IntN(len(t))]++
		}
		boot[b] = t.argmin(w)
	}
	slices.Sort(boot)
	// The 10th and the 390th of 400: 2.5% of the resamples at or below the one, 2.5% above
	// the other.
	return boot[int(0.025*bootstrapResamples)-1], boot[int(0.975*bootstrapResamples)-1]
}
