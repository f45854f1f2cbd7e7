package estimate

import (
	"context"
	"testing"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/simulate"
)

// TestLRecovery: over 200 seeded campaigns the intervals of a, b, c, d cover the truth in at
// least 90% of them.
func TestLRecovery(t *testing.T) {
	cl, _ := cluster.LoadNamed("ccpe-testbed")
	const trials = 200
	cov := [4]int{}
	for s := uint64(0); s < trials; s++ {
		tr := simulate.DefaultTruth(cl, 700+s)
		tr.Hockney, tr.LMO, tr.Scatter, tr.Gather, tr.Contention = nil, nil, nil, nil, nil
		g, err := simulate.Generate(context.Background(), cl, tr)
		if err != nil {
			t.Fatal(err)
		}
		fit, err := FitL(g.PingPongPairs)
		if err != nil {
			t.Fatal(err)
		}
		for i, ok := range []bool{fit.A.Covers(tr.L.A), fit.B.Covers(tr.L.B), fit.C.Covers(tr.L.C), fit.D.Covers(tr.L.D)} {
			if ok {
				cov[i]++
			}
		}
		if len(fit.Points) != len(tr.L.Pairs)*len(tr.L.Sizes) {
			t.Fatalf("%d points", len(fit.Points))
		}
	}
	t.Logf("coverage a %d, b %d, c %d, d %d of %d", cov[0], cov[1], cov[2], cov[3], trials)
	for i, c := range cov {
		if c < trials*9/10 {
			t.Errorf("coefficient %d covered in %d of %d", i, c, trials)
		}
	}
}
