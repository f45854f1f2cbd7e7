package estimate

import "testing"

// α's interval is the grid points an F test of one parameter cannot tell from the least
// error: where one pattern of 30 determines the minimum the rest leave the grid open to it,
// but the test weighs its error against the others' (about 1 each) and bounds the interval;
// where no grid point is far enough from the least, it spans the grid; where the refined
// estimate beats every grid point, it is the refinement's bracket.
func TestAlphaInterval(t *testing.T) {
	df, crit23, ok := oneMoreParameter(30, 6)
	if !ok || df != 23 || crit23 < 4.27 || crit23 > 4.29 {
		t.Fatalf("F test over 30 patterns beside 6 parameters: df %g, 95%% point %g; want 23 and 4.28", df, crit23)
	}
	open := make(gridProfile, 30)
	for i := range open {
		open[i] = []float64{1, 1, 1, 1, 1}
	}
	// least 30, df 23: F(1, 23) = 4.28 at 95% lets S reach 30·(1 + 4.28/23) = 35.6: the
	// neighbours (32) are inside, the ends (69) out.
	open[0] = []float64{40, 3, 1, 3, 40}
	if lo, hi := alphaInterval(open, 2, open.column(2), 23, crit23); lo != 1 || hi != 3 {
		t.Errorf("interval [%d, %d], want [1, 3]", lo, hi)
	}
	flat := make(gridProfile, 30)
	for i := range flat {
		flat[i] = []float64{1.1, 1.05, 1, 1.05, 1.1}
	}
	if lo, hi := alphaInterval(flat, 2, flat.column(2), 23, crit23); lo != 0 || hi != 4 {
		t.Errorf("interval [%d, %d], want the whole grid [0, 4]", lo, hi)
	}
	if lo, hi := alphaInterval(open, 2, 1e-9, 23, crit23); lo != 1 || hi != 3 {
		t.Errorf("interval [%d, %d], want the bracket [1, 3]", lo, hi)
	}
	if lo, hi := alphaInterval(open, 0, 1e-9, 23, crit23); lo != 0 || hi != 1 {
		t.Errorf("interval [%d, %d], want the bracket [0, 1]", lo, hi)
	}
	if lo, hi := alphaInterval(open, 3, 1e-9, 23, crit23); lo != 2 || hi != 3 {
		t.Errorf("interval [%d, %d], want the bracket [2, 3], max-min (4) outside it", lo, hi)
	}
}
