package schedule

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/floats/scalar"
)

// RoundTime by hand: two transfers of 1 s and 2 s, each scaled by 0.5 or 1.5 at even odds,
// end at max(0.5, 1) = 1, max(0.5, 3) = 3, max(1.5, 1) = 1.5 or max(1.5, 3) = 3: 2.125 s in
// expectation. Without a spread, the slowest; with one ratio r, r times the slowest.
func TestRoundTimeByHand(t *testing.T) {
	if got := (Spread{0.5, 1.5}).RoundTime([]float64{1, 2}); !scalar.EqualWithinAbsOrRel(got, 2.125, 0, 1e-15) {
		t.Errorf("two transfers: %g, want 2.125", got)
	}
	if got := Spread(nil).RoundTime([]float64{3, 1, 2}); got != 3 {
		t.Errorf("no spread: %g, want the slowest, 3", got)
	}
	if got := (Spread{1.25}).RoundTime([]float64{3, 1, 2}); !scalar.EqualWithinAbsOrRel(got, 3.75, 0, 1e-15) {
		t.Errorf("one ratio: %g, want 3.75", got)
	}
	if got := (Spread{1, 1, 1}).RoundTime([]float64{2, 2}); got != 2 {
		t.Errorf("ratios all 1: %g, want 2", got)
	}
	if got := (Spread{0.5, 2}).RoundTime(nil); got != 0 {
		t.Errorf("no transfer: %g", got)
	}
}

// RoundTime equals the expectation enumerated over every draw of ratios, on random rounds of
// up to four transfers (ties among their times included) and spreads of up to five ratios
// (ties included), and it lies between the slowest time at the smallest ratio and at the
// largest.
func TestRoundTimeIsTheExpectedMaximum(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for trial := range 2000 {
		n, q := 1+rng.IntN(4), 1+rng.IntN(5)
		times := make([]float64, n)
		for i := range times {
			times[i] = float64(1 + rng.IntN(4))
		}
		sp := make(Spread, q)
		for k := range sp {
			sp[k] = 0.5 + 0.25*float64(rng.IntN(5))
		}
		slices.Sort(sp)
		want := 0.0
		draw := make([]int, n)
		total := int(math.Pow(float64(q), float64(n)))
		for c := range total {
			x := c
			for i := range draw {
				draw[i], x = x%q, x/q
			}
			m := 0.0
			for i, k := range draw {
				m = math.Max(m, times[i]*sp[k])
			}
			want += m / float64(total)
		}
		got := sp.RoundTime(times)
		if !scalar.EqualWithinAbsOrRel(got, want, 1e-12, 1e-12) {
			t.Fatalf("trial %d: times %v, spread %v: %g, want %g", trial, times, sp, got, want)
		}
		top := slices.Max(times)
		if got < top*sp[0]-1e-12 || got > top*sp[q-1]+1e-12 {
			t.Fatalf("trial %d: %g outside [%g, %g]", trial, got, top*sp[0], top*sp[q-1])
		}
	}
}
