package estimate

import (
	"math"
	"strings"
	"testing"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/datasets"
)

// FitSpread keeps the ratios of every repetition of a calibration transfer to its own mean,
// sorted: a lone transfer whose repetitions took 0.9 and 1.1 of a time (mean 1.0 of it)
// gives those two ratios, as many times each, whatever a model predicts; held-out transfers
// are not read; with fewer than MinSpreadTransfers repetitions the spread is not identified.
func TestFitSpread(t *testing.T) {
	cl, err := cluster.LoadNamed("ccpe-testbed")
	if err != nil {
		t.Fatal(err)
	}
	a, b := cl.Nodes()[0].Name, cl.Nodes()[1].Name
	const bytes, base = 1e6, 0.0085
	var rows []datasets.Transfer
	for rep := range 40 {
		f := 0.9
		if rep%2 == 1 {
			f = 1.1
		}
		rows = append(rows,
			datasets.Transfer{Cluster: cl.Name(), Experiment: "fair_intra", PatternID: "k=1", Rep: int64(rep), Src: a, Dst: b, Bytes: bytes, TEnd: f * base},
			datasets.Transfer{Cluster: cl.Name(), Experiment: "random", PatternID: "held", Rep: int64(rep), Src: a, Dst: b, Bytes: bytes, TEnd: (5 + float64(rep%3)) * base})
	}
	fit, unid, err := FitSpread(rows)
	if err != nil || unid != nil || fit == nil {
		t.Fatalf("fit %+v, not identified %+v, %v", fit, unid, err)
	}
	if fit.Transfers != 40 || len(fit.Ratios) != 40 {
		t.Fatalf("%+v, want 40 ratios", fit)
	}
	for i, r := range fit.Ratios {
		want := 0.9
		if i >= 20 {
			want = 1.1
		}
		if math.Abs(r-want) > 1e-9 {
			t.Errorf("ratio %d = %g, want %g", i, r, want)
		}
	}
	if sp := fit.Spread(); len(sp) != 40 || (*SpreadFit)(nil).Spread() != nil {
		t.Errorf("Spread: %v", sp)
	}
	fit, unid, err = FitSpread(rows[:20])
	if err != nil || fit != nil || unid == nil || unid.Parameter != "transfer_spread" || !strings.Contains(unid.Reason, "10 repetitions") {
		t.Errorf("ten repetitions: fit %+v, not identified %+v, %v", fit, unid, err)
	}
}

// quantiles keeps at most q values, the midpoints of q equal shares.
func TestSpreadQuantiles(t *testing.T) {
	xs := make([]float64, 1000)
	for i := range xs {
		xs[i] = float64(i)
	}
	q := quantiles(xs, SpreadRatios)
	if len(q) != SpreadRatios || q[0] != 3 || q[SpreadRatios-1] != 996 {
		t.Errorf("%d quantiles from %g to %g, want 128 from 3 to 996", len(q), q[0], q[len(q)-1])
	}
	if got := quantiles(xs[:50], SpreadRatios); len(got) != 50 {
		t.Errorf("fewer than q values: %d kept", len(got))
	}
}
