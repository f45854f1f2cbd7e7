package estimate

import (
	"testing"
)

// TestThresholdRecovery: on 200 seeded LMO + scatter/gather campaigns (1% noise, 10
// repetitions) S and M2 come out exactly, M1 is the last size before the truth's first
// escalated size (the rule picks M_k with T_{k+1} > 10·T_1), and the κ intervals cover the
// truth in at least 90% of the campaigns.
func TestThresholdRecovery(t *testing.T) {
	const trials = 200
	var k1, k2 int
	for s := uint64(0); s < trials; s++ {
		tr, g := lmoCampaignWith(t, 900+s, 0.01, 10, true)
		lmo, err := FitLMO(g.RoundTrips, g.OneToTwo)
		if err != nil {
			t.Fatal(err)
		}
		f, err := FitThresholds(g.Collectives, lmo)
		if err != nil {
			t.Fatal(err)
		}
		step := tr.Gather.Sizes[1] - tr.Gather.Sizes[0]
		if f.S != tr.Scatter.S || f.M2 != tr.Gather.M2 || f.M1 != tr.Gather.M1-step {
			t.Fatalf("seed %d: S %d (true %d), M1 %d (true first escalated %d), M2 %d (true %d)",
				s, f.S, tr.Scatter.S, f.M1, tr.Gather.M1, f.M2, tr.Gather.M2)
		}
		if f.Kappa1.Covers(tr.Gather.Kappa1) {
			k1++
		}
		if f.Kappa2.Covers(tr.Gather.Kappa2) {
			k2++
		}
	}
	t.Logf("κ1 covered %d, κ2 %d of %d", k1, k2, trials)
	if k1 < trials*9/10 || k2 < trials*9/10 {
		t.Errorf("κ coverage %d, %d of %d", k1, k2, trials)
	}
}
