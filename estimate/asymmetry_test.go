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

// bidirectionalCampaign draws only the bidirectional designs, with asymmetric-fitted as the
// ground truth at the given φ.
func bidirectionalCampaign(t testing.TB, phi float64, seed uint64) (*cluster.Cluster, []datasets.Transfer) {
	cl, err := cluster.LoadNamed("ccpe-testbed")
	if err != nil {
		t.Fatal(err)
	}
	tr := &simulate.Truth{Cluster: cl.Name(), Seed: seed, Noise: 0.02, Reps: 5,
		Contention: &simulate.ContentionTruth{Model: "asymmetric-fitted", Efficiency: contention.DefaultEfficiency,
			ContraFactor: phi, Designs: experiments.Designs{Bytes: 10_000_000, BidirMax: 4}}}
	g, err := simulate.Generate(context.Background(), cl, tr)
	if err != nil {
		t.Fatal(err)
	}
	return cl, g.Transfers
}

func TestFitContraFactorRecovers(t *testing.T) {
	for _, phi := range []float64{0, 0.4, 1} {
		cl, rows := bidirectionalCampaign(t, phi, 1)
		fit, err := FitContraFactor(context.Background(), cl, rows, contention.DefaultParams(), 1)
		if err != nil {
			t.Fatal(err)
		}
		if fit.CILow > phi || fit.CIHigh < phi || fit.CIHigh-fit.CILow > 0.2 {
			t.Errorf("true φ %g: fitted %.3f, CI [%.3f, %.3f]", phi, fit.Phi, fit.CILow, fit.CIHigh)
		}
		if fit.Patterns != 32 || len(fit.Residuals) != fit.Transfers {
			t.Errorf("%d patterns, %d residuals for %d transfers", fit.Patterns, len(fit.Residuals), fit.Transfers)
		}
		if phi == 0.4 && !(fit.RMSLogErr < fit.RMSLogErrFair && fit.RMSLogErr < fit.RMSLogErrAsym) {
			t.Errorf("the fit (%.4f) does not beat fair (%.4f) and asymmetric (%.4f)", fit.RMSLogErr, fit.RMSLogErrFair, fit.RMSLogErrAsym)
		}
	}
}

// TestFitContraFactorCoverage checks the bootstrap interval on 200 seeded campaigns: it must
// cover the true φ in at least 90% of them: estimates recover known parameters within their
// CIs.
func TestFitContraFactorCoverage(t *testing.T) {
	if testing.Short() {
		t.Skip("200 fits")
	}
	const trials, phi = 200, 0.6
	covered := 0
	for s := uint64(0); s < trials; s++ {
		cl, rows := bidirectionalCampaign(t, phi, 100+s)
		fit, err := FitContraFactor(context.Background(), cl, rows, contention.DefaultParams(), s)
		if err != nil {
			t.Fatal(err)
		}
		if fit.CILow <= phi && phi <= fit.CIHigh {
			covered++
		}
	}
	if covered < trials*9/10 {
		t.Errorf("the 95%% interval covered φ = %g in %d of %d trials", phi, covered, trials)
	}
	t.Logf("coverage %d/%d", covered, trials)
}

func TestFitContraFactorNeedsData(t *testing.T) {
	cl, _ := cluster.LoadNamed("ccpe-testbed")
	if _, err := FitContraFactor(context.Background(), cl, nil, contention.DefaultParams(), 1); err == nil {
		t.Error("a fit without bidirectional experiments gave no error")
	}
}
