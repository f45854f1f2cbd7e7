package estimate

import "testing"

// A grid point's error within gridTies of the least is a tie: noise of 10⁻¹³ must not pick a
// point of a flat profile, and the range of ties says how far it is flat.
func TestGridProfileTies(t *testing.T) {
	sharp := gridProfile{{1, 1 + 1e-13, 1 - 1e-13, 1}, {3, 2, 1, 2}}
	if first, last := sharp.argmin([]int{1, 1}); first != 2 || last != 2 {
		t.Errorf("sharp minimum at [%d, %d], want [2, 2]", first, last)
	}
	flat := gridProfile{{1, 1 + 1e-13, 1 - 1e-13, 1}}
	if first, last := flat.argmin([]int{1}); first != 0 || last != 3 {
		t.Errorf("flat profile's minimum at [%d, %d], want [0, 3]", first, last)
	}
	// One pattern of 30 determines the minimum: resamples without it (about e⁻¹ of them) leave
	// the grid open, so the interval spans it.
	open := make(gridProfile, 30)
	for i := range open {
		open[i] = []float64{1, 1, 1, 1, 1}
	}
	open[0] = []float64{5, 3, 1, 3, 5}
	if g := open.best(); g != 2 {
		t.Errorf("best %d, want 2", g)
	}
	if lo, hi := open.bootstrap(1, 2); lo != 0 || hi != 4 {
		t.Errorf("interval [%d, %d], want the whole grid [0, 4]", lo, hi)
	}
	// Every pattern agrees: the interval is the point.
	for i := range open {
		open[i] = []float64{5, 3, 1, 3, 5}
	}
	if lo, hi := open.bootstrap(1, 2); lo != 2 || hi != 2 {
		t.Errorf("interval [%d, %d], want [2, 2]", lo, hi)
	}
}
