package estimate

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/contention"
	"github.com/commcal/commcal/datasets"
	"github.com/commcal/commcal/experiments"
)

// TestSegmentsRecoverRegimes: two regimes with a switch at 64 KiB (eager, then rendezvous
// with a higher latency and a faster rate), 3 repetitions of 60 log-spaced sizes with ±1%
// noise: the break is found at the switch and each segment's α and β are recovered within
// their intervals' reach.
func TestSegmentsRecoverRegimes(t *testing.T) {
	var m, tt []float64
	for i := range 60 {
		size := math.Round(math.Pow(2, 6+14*float64(i)/59)) // 64 B … 1 MiB
		for rep := range 3 {
			noise := 1 + 0.01*float64(rep-1)
			v := 20e-6 + size*8/500e6
			if size >= 65536 {
				v = 150e-6 + size*8/900e6
			}
			m, tt = append(m, size), append(tt, v*noise)
		}
	}
	sh, err := FitHockneySegments(m, tt, nil)
	if err != nil {
		t.Fatal(err)
	}
	first := math.Inf(1) // the first size of the second regime
	for _, size := range m {
		if size >= 65536 {
			first = math.Min(first, size)
		}
	}
	if len(sh.Breaks) != 1 || sh.Breaks[0] != first {
		t.Fatalf("breaks %v, want one at %g B (the first size past 64 KiB)", sh.Breaks, first)
	}
	for i, want := range []struct{ alpha, beta float64 }{{20e-6, 8 / 500e6}, {150e-6, 8 / 900e6}} {
		s := sh.Segments[i]
		if math.Abs(s.Alpha.Value-want.alpha) > 0.05*want.alpha+1e-6 || math.Abs(s.Beta.Value-want.beta)/want.beta > 0.02 || len(s.Flags) > 0 {
			t.Errorf("segment %d: α %.3g β %.3g %v, want α %.3g β %.3g", i, s.Alpha.Value, s.Beta.Value, s.Flags, want.alpha, want.beta)
		}
	}
	if !(sh.MaxAbsRelResidual < 0.02 && sh.SingleLineMaxAbsRelResidual > 0.2) {
		t.Errorf("residuals: %.3g segmented, %.3g one line", sh.MaxAbsRelResidual, sh.SingleLineMaxAbsRelResidual)
	}
}

// TestCeilingFromPointToPoint: with no fairness experiment, the models' per-flow ceiling is
// the measured point-to-point rate (here 19× below the 1 Gbit/s nominal), with a warning,
// instead of 94% of nominal.
func TestCeilingFromPointToPoint(t *testing.T) {
	cl, _ := cluster.LoadNamed("ccpe-testbed")
	var rows []datasets.Transfer
	for i, size := range []int64{1 << 10, 1 << 14, 1 << 18, 1 << 20, 1 << 22} {
		for rep := range 3 {
			for _, pair := range [][2]string{{"X1", "X2"}, {"X1", "Y1"}} {
				d := 1e-4 + float64(size)*8/(1e9/19)*(1+0.001*float64(rep))
				rows = append(rows, datasets.Transfer{Cluster: cl.Name(), Experiment: experiments.P2PSweep, PatternID: experiments.PairID(pair[0], pair[1], size),
					Rep: int64(rep), Src: pair[0], Dst: pair[1], Bytes: size, TStart: float64(i), TEnd: float64(i) + d})
			}
		}
	}
	c, err := Calibrate(context.Background(), cl, Inputs{Transfers: rows}, contention.DefaultParams(), false)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Params.CeilingBps; math.Abs(got-1e9/19)/(1e9/19) > 0.01 {
		t.Errorf("ceiling %.4g bit/s, want the measured %.4g", got, 1e9/19)
	}
	if !strings.Contains(strings.Join(c.Warnings, "\n"), "no fairness experiments: the per-flow ceiling is the point-to-point rate") {
		t.Errorf("no warning about the assumed ceiling: %v", c.Warnings)
	}
}
