package simulate

import (
	"context"
	"strings"
	"testing"

	"github.com/commcal/commcal/contention"
	"github.com/commcal/commcal/experiments"
)

// smallContention is a truth of the catalogue's designs alone, without noise: every kind of
// pattern, few of each.
func smallContention(cl string) *Truth {
	return &Truth{Cluster: cl, Seed: 11, Noise: 0, Reps: 2,
		Contention: &ContentionTruth{Model: "asymmetric", Efficiency: contention.DefaultEfficiency, ContraFactor: 1,
			Designs: experiments.Designs{Bytes: 1 << 20, FairnessMaxK: 3, BidirMax: 2,
				StaticSync: experiments.StaticSyncDesign{Graphs: 2, MaxEdges: 3},
				Random:     []experiments.RandomDesign{{Nodes: 4, D: 1, Patterns: 3, Sizes: []int64{1 << 20, 4 << 20}}}}}}
}

// The simulator's concurrent patterns are the catalogue's (the one measure uses), drawn with
// the truth's seed, in the catalogue's order: every repetition of every pattern, flow by flow.
func TestContentionPatternsAreTheCatalogues(t *testing.T) {
	cl := testCluster(t, "ccpe-testbed")
	tr := smallContention(cl.Name())
	g, err := Generate(context.Background(), cl, tr)
	if err != nil {
		t.Fatal(err)
	}
	cat := tr.Contention.Designs
	cat.Seed = tr.Seed
	pats, err := cat.Patterns(cl)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	i := 0
	for _, p := range pats {
		seen[p.Experiment] = true
		for r := int64(0); r < int64(tr.Reps); r++ {
			for f, fl := range p.Flows {
				if i >= len(g.Transfers) {
					t.Fatalf("%d transfers, the catalogue has more", len(g.Transfers))
				}
				row := g.Transfers[i]
				if row.Experiment != p.Experiment || row.PatternID != p.ID || row.Rep != r || row.FlowID != int64(f) ||
					row.Src != fl.Src || row.Dst != fl.Dst || float64(row.Bytes) != fl.Bytes {
					t.Fatalf("transfer %d is %+v, want %s/%s rep %d flow %d %+v", i, row, p.Experiment, p.ID, r, f, fl)
				}
				if !(row.TEnd > row.TStart) {
					t.Errorf("transfer %d takes %g s", i, row.Seconds())
				}
				i++
			}
		}
	}
	if i != len(g.Transfers) {
		t.Errorf("%d transfers, the catalogue's patterns make %d", len(g.Transfers), i)
	}
	for _, e := range []string{experiments.FairIntra, experiments.FairInter, experiments.BidirNIC, experiments.BidirBackbone,
		experiments.StaticSync, experiments.Random} {
		if !seen[e] {
			t.Errorf("no %s pattern", e)
		}
	}
	if seen[experiments.P2PSweep] {
		t.Error("the catalogue of a truth made point-to-point sweeps")
	}
}

// Point-to-point sweeps are the Hockney truths', and the truth's seed draws the patterns: a
// truth whose catalogue sets either otherwise is refused, saying which key.
func TestContentionTruthRefusesItsOwnFields(t *testing.T) {
	cl := testCluster(t, "ccpe-testbed")
	for _, c := range []struct {
		name string
		edit func(*ContentionTruth)
		want string // "" when accepted
	}{
		{"as drawn", func(*ContentionTruth) {}, ""},
		{"seed equal to the truth's", func(ct *ContentionTruth) { ct.Seed = 11 }, ""},
		{"seed of its own", func(ct *ContentionTruth) { ct.Seed = 12 }, "contention.seed 12 differs from the truth's seed 11"},
		{"sweep sizes", func(ct *ContentionTruth) { ct.SweepSizes = []int64{1024} }, "contention.sweep_sizes must be empty"},
		{"random setting the racks cannot hold", func(ct *ContentionTruth) { ct.Random[0].Nodes = 3 }, "simulate: truth: experiments: random patterns need"},
	} {
		t.Run(c.name, func(t *testing.T) {
			tr := smallContention(cl.Name())
			c.edit(tr.Contention)
			_, err := Generate(context.Background(), cl, tr)
			switch {
			case c.want == "" && err != nil:
				t.Fatal(err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("got %v, want an error saying %q", err, c.want)
			}
		})
	}
}
