package estimate

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/contention"
	"github.com/commcal/commcal/datasets"
	"github.com/commcal/commcal/experiments"
)

// slopeReason refuses a slope as a rate for each of its reasons, naming the numbers, and
// accepts a sound one. The slopes are those of a 1 Gbit/s line (8 ns/B) and variations.
func TestSlopeReason(t *testing.T) {
	good := Param{Value: 8e-9, CILow: 7.9e-9, CIHigh: 8.1e-9, N: 20}
	for _, c := range []struct {
		name    string
		beta    Param
		r2      float64
		sizes   int
		nominal float64
		want    string // "" when usable
	}{
		{"sound", good, 0.999, 8, 1e9, ""},
		{"within the margin", Param{Value: 8 / 1.04e9, CILow: 7.5e-9, CIHigh: 8e-9, N: 20}, 0.999, 8, 1e9, ""},
		{"above the line rate", Param{Value: 8 / 1.2e9, CILow: 6.5e-9, CIHigh: 6.8e-9, N: 20}, 0.999, 8, 1e9, "above the 1 Gbit/s line rate"},
		// The osu_latency sweep: β's interval [−2.3, 2.5] ns/B, r² 0.000.
		{"interval spans zero", Param{Value: 0.1e-9, CILow: -2.3e-9, CIHigh: 2.5e-9, N: 17}, 0.000, 17, 10e9, "reaches zero"},
		{"r² below the floor", Param{Value: 8e-9, CILow: 6e-9, CIHigh: 10e-9, N: 20}, 0.8, 8, 1e9, "r² 0.800, below the floor 0.9"},
		// The three-row NetPIPE run.
		{"three rows", Param{Value: 11e-6, CILow: 1e-6, CIHigh: 21e-6, N: 3}, 0.99, 3, 1e9, "3 observations of 3 message sizes"},
		{"two sizes", Param{Value: 8e-9, CILow: 7e-9, CIHigh: 9e-9, N: 10}, 0.99, 2, 1e9, "10 observations of 2 message sizes"},
		{"not positive", Param{Value: -1e-9, CILow: -2e-9, CIHigh: -0.5e-9, N: 10}, 0.99, 5, 1e9, "not positive"},
		{"no interval", Param{Value: 8e-9, CILow: math.Inf(-1), CIHigh: math.Inf(1), N: 1}, 1, 1, 1e9, "do not bound it"},
	} {
		got := slopeReason("hockney intra-rack 8/β", c.beta, c.r2, c.sizes, c.nominal, "p2p_sweep")
		switch {
		case c.want == "" && got != "":
			t.Errorf("%s: refused: %s", c.name, got)
		case c.want != "" && !strings.Contains(got, c.want):
			t.Errorf("%s: %q, want it to say %q", c.name, got, c.want)
		case c.want != "" && !strings.Contains(got, "p2p_sweep"):
			t.Errorf("%s: %q names no experiment", c.name, got)
		}
	}
}

// sweep is a p2p_sweep of T = α + m/rate on the pair X1→X2 of the CCPE testbed, three
// repetitions per size with ±0.5% deterministic spread.
func sweep(alpha, rate float64, sizes ...int64) []datasets.Transfer {
	var rows []datasets.Transfer
	for i, m := range sizes {
		for rep := range 3 {
			d := (alpha + float64(m)*8/rate) * (1 + 0.005*float64(rep-1))
			rows = append(rows, datasets.Transfer{Cluster: "ccpe-testbed", Experiment: experiments.P2PSweep, PatternID: experiments.PairID("X1", "X2", m),
				Rep: int64(rep), Src: "X1", Dst: "X2", Bytes: m, TStart: float64(i), TEnd: float64(i) + d})
		}
	}
	return rows
}

// Small messages do not drive β: on a sweep with a 50 µs latency at 1 Gbit/s, n½ = α/β is
// 6.25 kB, and the sizes below it are left out of β (not of α); a sweep of small messages
// only gives no rate, and the calibration lists β as not identified, keeps the class out of
// the models' inverse bandwidths and warns.
func TestHockneySmallMessages(t *testing.T) {
	cl, err := cluster.LoadNamed("ccpe-testbed")
	if err != nil {
		t.Fatal(err)
	}
	var sizes []int64
	for m := int64(1); m <= 1<<22; m *= 4 {
		sizes = append(sizes, m)
	}
	fits, err := FitHockney(cl, sweep(50e-6, 1e9, sizes...), false)
	if err != nil {
		t.Fatal(err)
	}
	h := fits[0]
	// α/β of the line through every row: α is pulled by the ±0.5% spread of the largest
	// sizes, so n½ is near, not at, 6.25 kB; the sizes 1–4096 B (7 sizes, 21 rows) lie below.
	if h.SmallBelowBytes < 4096 || h.SmallBelowBytes > 16384 || h.SmallRows != 21 || h.Beta.N != len(sizes)*3-21 || h.Sizes != len(sizes)-7 {
		t.Errorf("n½ %.4g B, %d small rows, β from %d rows of %d sizes; want n½ in 4–16 kB, 21, %d, %d", h.SmallBelowBytes, h.SmallRows, h.Beta.N, h.Sizes, len(sizes)*3-21, len(sizes)-7)
	}
	if got := 8 / h.Beta.Value; math.Abs(got-1e9)/1e9 > 0.01 || h.Alpha.N != len(sizes)*3 {
		t.Errorf("rate %.4g bit/s (want 1e9 within 1%%), α from %d rows (want all %d)", got, h.Alpha.N, len(sizes)*3)
	}

	small := sweep(50e-6, 1e9, 1, 4, 16, 64, 256, 1024)
	c, err := Calibrate(context.Background(), cl, Inputs{Transfers: small}, contention.DefaultParams(), false)
	if err != nil {
		t.Fatal(err)
	}
	if !c.Hockney[0].BetaFromSmall || c.Identified("hockney/intra-rack/beta_s_per_byte") {
		t.Errorf("β of a sweep of small messages is used: %+v, not identified %v", c.Hockney[0], c.NotIdentified)
	}
	if _, ok := c.Params.InverseBandwidth[cluster.IntraRack]; ok || c.Params.CeilingBps != 0 {
		t.Errorf("the models use β %v and the ceiling %g", c.Params.InverseBandwidth, c.Params.CeilingBps)
	}
	if !strings.Contains(strings.Join(c.Warnings, "\n"), "not identified: hockney/intra-rack/beta_s_per_byte") {
		t.Errorf("no warning: %v", c.Warnings)
	}
}

// A β whose rate is above the fastest NIC's line rate (a loopback sweep on a 1 Gbit/s
// cluster) is refused with the fitted and nominal rates, and the per-flow ceiling does not
// take it either.
func TestHockneyAboveLineRate(t *testing.T) {
	cl, err := cluster.LoadNamed("ccpe-testbed")
	if err != nil {
		t.Fatal(err)
	}
	c, err := Calibrate(context.Background(), cl, Inputs{Transfers: sweep(0, 5e9, 1<<16, 1<<18, 1<<20, 1<<22)}, contention.DefaultParams(), false)
	if err != nil {
		t.Fatal(err)
	}
	// A sweep alone holds no contention calibration transfer: the transfer spread is not
	// identified either, and says so on its own line.
	left := slices.DeleteFunc(slices.Clone(c.NotIdentified), func(u Unidentified) bool { return u.Parameter == "transfer_spread" })
	if len(left) != 1 || !strings.Contains(left[0].Reason, "fitted at 5 Gbit/s from p2p_sweep, above the 1 Gbit/s line rate") ||
		left[0].Fallback == "" {
		t.Errorf("not identified: %+v", c.NotIdentified)
	}
	if len(c.Params.InverseBandwidth) != 0 || c.Params.CeilingBps != 0 {
		t.Errorf("params %+v", c.Params)
	}
}

// The thresholds S, M1 and M2 come from the sweeps alone: without LMO they are those found
// with it, and κ1, κ2 are listed as needing LMO.
func TestThresholdsWithoutLMO(t *testing.T) {
	for s := uint64(0); s < 20; s++ {
		_, g := lmoCampaignWith(t, 900+s, 0.01, 10, true)
		lmo, err := FitLMO(g.RoundTrips, g.OneToTwo)
		if err != nil {
			t.Fatal(err)
		}
		with, err := FitThresholds(g.Collectives, lmo)
		if err != nil {
			t.Fatal(err)
		}
		without, err := FitThresholds(g.Collectives, nil)
		if err != nil {
			t.Fatal(err)
		}
		if without.S != with.S || without.M1 != with.M1 || without.M2 != with.M2 || without.S == 0 || without.M1 == 0 || without.M2 == 0 {
			t.Fatalf("seed %d: without LMO S %d, M1 %d, M2 %d; with %d, %d, %d", s, without.S, without.M1, without.M2, with.S, with.M1, with.M2)
		}
		if with.Kappa1 == nil || with.Kappa2 == nil || len(with.Missing) != 0 {
			t.Fatalf("seed %d: with LMO, κ %v %v, missing %v", s, with.Kappa1, with.Kappa2, with.Missing)
		}
		if without.Kappa1 != nil || without.Kappa2 != nil || len(without.Missing) != 2 ||
			without.Missing[0].Parameter != thresholdKappa1 || without.Missing[1].Parameter != thresholdKappa2 ||
			!strings.Contains(without.Missing[0].Reason, "LMO parameters were not fitted") {
			t.Fatalf("seed %d: without LMO, κ %v %v, missing %+v", s, without.Kappa1, without.Kappa2, without.Missing)
		}
	}
	// In a calibration: the thresholds stage runs without LMO, and κ is not identified.
	_, g := lmoCampaignWith(t, 900, 0.01, 10, true)
	cl, _ := cluster.LoadNamed("graphene")
	c, err := Calibrate(context.Background(), cl, Inputs{Collectives: g.Collectives}, contention.DefaultParams(), false)
	if err != nil {
		t.Fatal(err)
	}
	if c.Thresholds == nil || c.Thresholds.S == 0 || c.Identified(thresholdKappa1) || c.Identified(thresholdKappa2) {
		t.Errorf("thresholds %+v, not identified %v", c.Thresholds, c.NotIdentified)
	}
	for _, s := range c.Skipped {
		if s.Estimator == "thresholds" {
			t.Errorf("thresholds skipped: %s", s.Reason)
		}
	}
}

// φ is not identified where one flow each way of a pair is all the bidirectional data hold
// (osu_bibw, IMB PingPing): fair sharing and the asymmetric rule predict the same, so the
// calibration lists φ and the models keep the default.
func TestContraNotIdentifiedOneFlowEachWay(t *testing.T) {
	cl, err := cluster.LoadNamed("ccpe-testbed")
	if err != nil {
		t.Fatal(err)
	}
	var rows []datasets.Transfer
	for i, m := range []int64{1 << 20, 1 << 22, 1 << 23} {
		for rep := range 3 {
			for f, pair := range [][2]string{{"X1", "X2"}, {"X2", "X1"}} {
				d := float64(m) * 8 / 0.94e9 * (1 + 0.01*float64(rep+f))
				rows = append(rows, datasets.Transfer{Cluster: cl.Name(), Experiment: experiments.BidirNIC, PatternID: experiments.PairID("X1", "X2", m),
					Rep: int64(rep), FlowID: int64(f), Src: pair[0], Dst: pair[1], Bytes: m, TStart: float64(i), TEnd: float64(i) + d})
			}
		}
	}
	c, err := Calibrate(context.Background(), cl, Inputs{Transfers: rows}, contention.DefaultParams(), false)
	if err != nil {
		t.Fatal(err)
	}
	if c.Contra == nil || c.Contra.FairAsymDiff >= contraTie {
		t.Fatalf("contra %+v", c.Contra)
	}
	if c.Identified("contra/phi") || c.Params.ContraFactor != 1 {
		t.Errorf("φ used: contra_factor %g, not identified %v", c.Params.ContraFactor, c.NotIdentified)
	}
}

// A fairness experiment's ceiling measured at k = 1 alone takes its interval from that
// pattern's repetitions: finite, around the value.
func TestFairnessCeilingAtOneK(t *testing.T) {
	intra, err := FitFairness(fairnessCampaign(t, 1), experiments.FairIntra)
	if err != nil {
		t.Fatal(err)
	}
	c := intra.Ceiling
	if intra.SaturatedFrom != 2 || unboundedReason(c) != "" || !(c.CILow < c.Value && c.Value < c.CIHigh) || c.N != 10 {
		t.Errorf("saturated from %d, ceiling %+v", intra.SaturatedFrom, c)
	}
}
