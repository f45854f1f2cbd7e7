package estimate

import (
	"context"
	"testing"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/contention"
	"github.com/commcal/commcal/datasets"
	"github.com/commcal/commcal/experiments"
	"github.com/commcal/commcal/simulate"
)

func fairnessCampaign(t testing.TB, seed uint64) []datasets.Transfer {
	cl, err := cluster.LoadNamed("ccpe-testbed")
	if err != nil {
		t.Fatal(err)
	}
	tr := &simulate.Truth{Cluster: cl.Name(), Seed: seed, Noise: 0.02, Reps: 10,
		Contention: &simulate.ContentionTruth{Model: "asymmetric", Efficiency: contention.DefaultEfficiency, ContraFactor: 1,
			Designs: experiments.Designs{Bytes: 10_000_000, FairnessMaxK: 15}}}
	g, err := simulate.Generate(context.Background(), cl, tr)
	if err != nil {
		t.Fatal(err)
	}
	return g.Transfers
}

// TestFairnessRecovery: the testbed's truth is a 940 Mbit/s ceiling, 940 Mbit/s NICs and a
// 9.4 Gbit/s backbone that saturates beyond 10 flows (CCPE 2014 §5.1). Over 200 seeded
// campaigns the intervals cover the ceiling and the backbone capacity in at least 90% of them.
func TestFairnessRecovery(t *testing.T) {
	const trials = 200
	var ceil, capOK, satOK int
	for s := uint64(0); s < trials; s++ {
		rows := fairnessCampaign(t, 300+s)
		inter, err := FitFairness(rows, "fair_inter")
		if err != nil {
			t.Fatal(err)
		}
		// At k = 10 both regimes give 940 Mbit/s: either side of it is right.
		if inter.SaturatedFrom != 10 && inter.SaturatedFrom != 11 {
			t.Fatalf("seed %d: saturation from k = %d, want 10 or 11 (%+v)", s, inter.SaturatedFrom, inter.Rates)
		}
		if inter.Ceiling.Covers(940e6) {
			ceil++
		}
		if inter.Capacity.Covers(9.4e9) {
			capOK++
		}
		if inter.Saturation.Covers(10) {
			satOK++
		}
	}
	t.Logf("coverage: ceiling %d, backbone capacity %d, saturation point %d of %d", ceil, capOK, satOK, trials)
	for _, c := range []int{ceil, capOK, satOK} {
		if c < trials*9/10 {
			t.Errorf("coverage %d of %d below 90%%", c, trials)
		}
	}
	intra, err := FitFairness(fairnessCampaign(t, 1), "fair_intra")
	if err != nil {
		t.Fatal(err)
	}
	if !intra.Capacity.Covers(940e6) || intra.SaturatedFrom > 2 {
		t.Errorf("NIC: %+v", intra)
	}
}
