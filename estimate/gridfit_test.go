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

// α's interval is the grid points an F test of one parameter cannot tell from the least
// error: where one pattern of 30 determines the minimum the rest leave the grid open to it,
// but the test weighs its error against the others' (about 1 each) and bounds the interval;
// where no grid point is far enough from the least, it spans the grid; with no degree of
// freedom left there is none.
func TestAlphaInterval(t *testing.T) {
	open := make(gridProfile, 30)
	for i := range open {
		open[i] = []float64{1, 1, 1, 1, 1}
	}
	// least 30, df 23: F(1, 23) = 4.28 at 95% lets S reach 30·(1 + 4.28/23) = 35.6: the
	// neighbours (32) are inside, the ends (69) out.
	open[0] = []float64{40, 3, 1, 3, 40}
	if lo, hi, why := alphaInterval(open, open.column(2), 23); why != "" || lo != 1 || hi != 3 {
		t.Errorf("interval [%d, %d] (%q), want [1, 3]", lo, hi, why)
	}
	flat := make(gridProfile, 30)
	for i := range flat {
		flat[i] = []float64{1.1, 1.05, 1, 1.05, 1.1}
	}
	if lo, hi, why := alphaInterval(flat, flat.column(2), 23); why != "" || lo != 0 || hi != 4 {
		t.Errorf("interval [%d, %d] (%q), want the whole grid [0, 4]", lo, hi, why)
	}
	if _, _, why := alphaInterval(flat[:3], flat[:3].column(2), 0); why == "" {
		t.Error("no degree of freedom, yet an interval")
	}
	// A refined estimate below every grid point by more than the test allows: the best point.
	if lo, hi, why := alphaInterval(open, 1e-9, 23); why != "" || lo != 2 || hi != 2 {
		t.Errorf("interval [%d, %d] (%q), want [2, 2]", lo, hi, why)
	}
}
