package experiments

import (
	"context"
	"testing"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/contention"
)

// BenchmarkModelsPaperWorkload predicts the CCPE 2014 workload: 354 random patterns over the
// nine settings (|N| ∈ {10, 20, 30} × d ∈ {1, 2, 3}) on the two-rack testbed.
func BenchmarkModelsPaperWorkload(b *testing.B) {
	cl, err := cluster.LoadNamed("ccpe-testbed")
	if err != nil {
		b.Fatal(err)
	}
	net := contention.NewNetwork(cl, contention.DefaultEfficiency)
	var pats []contention.Pattern
	for i, s := range [][2]int{{10, 1}, {20, 1}, {30, 1}, {10, 2}, {20, 2}, {30, 2}, {10, 3}, {20, 3}, {30, 3}} {
		n := 39
		if i < 3 {
			n = 40 // 3·40 + 6·39 = 354
		}
		ps, err := RandomPatterns(cl, RandomSpec{Nodes: s[0], D: s[1], Sizes: []int64{1e6, 5e6, 10e6, 20e6}}, n, uint64(i))
		if err != nil {
			b.Fatal(err)
		}
		pats = append(pats, ps...)
	}
	if len(pats) != 354 {
		b.Fatalf("%d patterns", len(pats))
	}
	for _, m := range contention.Models() {
		b.Run(m.Name(), func(b *testing.B) {
			for b.Loop() {
				for _, p := range pats {
					if _, err := m.Predict(context.Background(), net, p.Flows); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
