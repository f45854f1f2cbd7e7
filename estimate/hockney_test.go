package estimate

import (
	"context"
	"testing"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/datasets"
	"github.com/commcal/commcal/simulate"
)

// hockneyCampaign draws only the Hockney sweeps of the default truth.
func hockneyCampaign(t testing.TB, cl *cluster.Cluster, seed uint64) (*simulate.Truth, []datasets.Transfer) {
	tr := simulate.DefaultTruth(cl, seed)
	tr.LMO, tr.Scatter, tr.Gather, tr.L, tr.Contention = nil, nil, nil, nil, nil
	tr.Reps = 5
	g, err := simulate.Generate(context.Background(), cl, tr)
	if err != nil {
		t.Fatal(err)
	}
	return tr, g.Transfers
}

// TestHockneyRecovery: over 200 seeded campaigns the 95% intervals of α and β cover the true
// values in at least 90% of them, with the weights 1/T² that suit the generator's
// multiplicative noise.
func TestHockneyRecovery(t *testing.T) {
	cl, _ := cluster.LoadNamed("ccpe-testbed")
	const trials = 200
	covered := map[string]int{}
	for s := uint64(0); s < trials; s++ {
		tr, rows := hockneyCampaign(t, cl, 1000+s)
		fits, err := FitHockney(cl, rows, true)
		if err != nil {
			t.Fatal(err)
		}
		if len(fits) != 2 {
			t.Fatalf("%d classes", len(fits))
		}
		for i, f := range fits {
			h := tr.Hockney[i]
			if string(f.Class) != h.Class {
				t.Fatalf("class %s, truth %s", f.Class, h.Class)
			}
			if f.Alpha.Covers(h.Alpha) {
				covered[h.Class+" α"]++
			}
			if f.Beta.Covers(h.Beta) {
				covered[h.Class+" β"]++
			}
		}
	}
	for k, c := range covered {
		if c < trials*9/10 {
			t.Errorf("%s covered in %d of %d trials", k, c, trials)
		}
		t.Logf("%s: %d/%d", k, c, trials)
	}
	if len(covered) != 4 {
		t.Errorf("coverage counted for %v", covered)
	}
}

func TestHockneyDegenerate(t *testing.T) {
	cl, _ := cluster.LoadNamed("ccpe-testbed")
	rows := []datasets.Transfer{
		{Experiment: "p2p_sweep", Src: "X1", Dst: "X2", Bytes: 100, TEnd: 1},
		{Experiment: "p2p_sweep", Src: "X1", Dst: "X2", Bytes: 100, TEnd: 1.1},
		{Experiment: "p2p_sweep", Src: "X1", Dst: "X2", Bytes: 100, TEnd: 0.9},
	}
	if _, err := FitHockney(cl, rows, false); err == nil {
		t.Error("a sweep of one size gave no error")
	}
}
