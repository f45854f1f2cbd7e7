package estimate

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/contention"
	"github.com/commcal/commcal/datasets"
)

// FitSpreads keeps the ratios measured/predicted of every repetition of the calibration
// transfers, sorted: a lone transfer whose repetitions took 0.9 and 1.1 times what max-min
// predicts gives those two ratios, as many times each; held-out transfers are not read; with
// fewer than MinSpreadTransfers repetitions the spread is not identified.
func TestFitSpreads(t *testing.T) {
	cl, err := cluster.LoadNamed("ccpe-testbed")
	if err != nil {
		t.Fatal(err)
	}
	net, err := contention.DefaultParams().Network(cl)
	if err != nil {
		t.Fatal(err)
	}
	a, b := cl.Nodes()[0].Name, cl.Nodes()[1].Name
	const bytes = 1e6
	alone := bytes * 8 / (1e9 * contention.DefaultEfficiency) // 1 Gbit/s NICs
	var rows []datasets.Transfer
	for rep := range 40 {
		f := 0.9
		if rep%2 == 1 {
			f = 1.1
		}
		rows = append(rows,
			datasets.Transfer{Cluster: cl.Name(), Experiment: "fair_intra", PatternID: "k=1", Rep: int64(rep), Src: a, Dst: b, Bytes: bytes, TEnd: f * alone},
			datasets.Transfer{Cluster: cl.Name(), Experiment: "random", PatternID: "held", Rep: int64(rep), Src: a, Dst: b, Bytes: bytes, TEnd: 5 * alone})
	}
	maxmin, _ := contention.ModelByName("maxmin")
	fits, unid, err := FitSpreads(context.Background(), net, rows, []contention.Model{maxmin})
	if err != nil || len(unid) != 0 || len(fits) != 1 {
		t.Fatalf("fits %+v, not identified %+v, %v", fits, unid, err)
	}
	f := fits[0]
	if f.Model != "maxmin" || f.Transfers != 40 || len(f.Ratios) != 40 {
		t.Fatalf("%+v, want 40 ratios of maxmin", f)
	}
	for i, r := range f.Ratios {
		want := 0.9
		if i >= 20 {
			want = 1.1
		}
		if math.Abs(r-want) > 1e-9 {
			t.Errorf("ratio %d = %g, want %g", i, r, want)
		}
	}
	if got := Spreads(fits); len(got["maxmin"]) != 40 || got["fair"] != nil {
		t.Errorf("Spreads: %v", got)
	}
	fits, unid, err = FitSpreads(context.Background(), net, rows[:20], []contention.Model{maxmin})
	if err != nil || len(fits) != 0 || len(unid) != 1 || unid[0].Parameter != "prediction_spread" || !strings.Contains(unid[0].Reason, "10 repetitions") {
		t.Errorf("ten repetitions: fits %+v, not identified %+v, %v", fits, unid, err)
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
