package estimate

import (
	"math"
	"math/rand/v2"
	"testing"
)

// nile is R's datasets::Nile: annual flow of the Nile at Aswan, 1871–1970 (10⁸ m³).
var nile = []float64{1120, 1160, 963, 1210, 1160, 1160, 813, 1230, 1370, 1140, 995, 935, 1110, 994, 1020,
	960, 1180, 799, 958, 1140, 1100, 1210, 1150, 1250, 1260, 1220, 1030, 1100, 774, 840, 874, 694, 940, 833,
	701, 916, 692, 1020, 1050, 969, 831, 726, 456, 824, 702, 1120, 1100, 832, 764, 821, 768, 845, 864, 862,
	698, 845, 744, 796, 1040, 759, 781, 865, 845, 944, 984, 897, 822, 1010, 771, 676, 649, 846, 812, 742,
	801, 1040, 860, 874, 848, 890, 744, 749, 838, 1050, 918, 986, 797, 923, 975, 815, 1020, 906, 901, 1170,
	912, 746, 919, 718, 714, 740}

func TestBreakpointsNile(t *testing.T) {
	if len(nile) != 100 {
		t.Fatalf("Nile has %d values", len(nile))
	}
	// strucchange::breakpoints(Nile ~ 1) (h = 0.15·n = 15): one break, at observation 28
	// (1898), segment means 1097.75 and 849.97.
	s, err := Breakpoints(nil, nile, 15, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Breaks) != 1 || s.Breaks[0]+1 != 28 {
		t.Fatalf("breaks %v (1-based %v), want observation 28", s.Breaks, s.Breaks[0]+1)
	}
	if math.Abs(s.Segments[0][0]-1097.75) > 0.005 || math.Abs(s.Segments[1][0]-849.9722) > 0.0001 {
		t.Errorf("segment means %v", s.Segments)
	}
	if len(s.BIC) != 6 {
		t.Errorf("%d BIC values, want breaks 0…5", len(s.BIC))
	}
}

func TestBreakpointsRecoverLines(t *testing.T) {
	// Two lines with a jump after x = 39: y = 1 + 0.01x, then 3 + 0.02x, 1% noise.
	rng := rand.New(rand.NewPCG(3, 3))
	var x, y []float64
	for i := 0; i < 80; i++ {
		xi := float64(i)
		yi := 1 + 0.01*xi
		if i >= 40 {
			yi = 3 + 0.02*xi
		}
		x, y = append(x, xi), append(y, yi*(1+0.01*rng.NormFloat64()))
	}
	s, err := Breakpoints(x, y, 8, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Breaks) != 1 || s.Breaks[0] != 39 {
		t.Fatalf("breaks %v, want [39]", s.Breaks)
	}
	if math.Abs(s.Segments[1][1]-0.02) > 0.002 || math.Abs(s.Segments[0][0]-1) > 0.05 {
		t.Errorf("segments %v", s.Segments)
	}
	if _, err := Breakpoints(x[:10], y[:10], 8, 1); err == nil {
		t.Error("10 points with h = 8 accepted")
	}
}

// BenchmarkBreakpoints5000 segments 5,000 points with up to 5 breaks.
// (R's strucchange takes 447 s on the same series and finds the same breaks.)
func BenchmarkBreakpoints5000(b *testing.B) {
	x, y := benchSeries()
	for i := 0; i < b.N; i++ {
		if _, err := Breakpoints(x, y, 750, 5); err != nil {
			b.Fatal(err)
		}
	}
}

// benchSeries is the series of BenchmarkBreakpoints5000: four steps of 1 every 1,000 points on
// a slope of 0.001, noise 0.1.
func benchSeries() (x, y []float64) {
	rng := rand.New(rand.NewPCG(1, 1))
	x, y = make([]float64, 5000), make([]float64, 5000)
	for i := range x {
		x[i] = float64(i)
		y[i] = float64(i/1000) + 0.001*x[i] + 0.1*rng.NormFloat64()
	}
	return x, y
}

func TestBreakpointsMatchStrucchange(t *testing.T) {
	// R 4.2 strucchange 1.5: breakpoints(y ~ x, h = 750, breaks = 5) on this series (written
	// out with 17 digits) gives breaks 1000, 2000, 3000, 4000 and, for 0…5 breaks, the BIC
	// printed by summary(bp)$RSS["BIC", ]. It took 447 s on this machine.
	x, y := benchSeries()
	s, err := Breakpoints(x, y, 750, 5)
	if err != nil {
		t.Fatal(err)
	}
	want := []int{999, 1999, 2999, 3999}
	for i, b := range want {
		if i >= len(s.Breaks) || s.Breaks[i] != b {
			t.Fatalf("breaks %v, want %v (0-based)", s.Breaks, want)
		}
	}
	bic := []float64{2187.0710, 1113.7693, -291.1007, -2529.5287, -8811.2173, -2823.8615}
	for m, b := range bic {
		if math.Abs(s.BIC[m]-b) > 1e-4 {
			t.Errorf("BIC with %d breaks: %.4f, strucchange %.4f", m, s.BIC[m], b)
		}
	}
}
