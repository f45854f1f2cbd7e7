package contention

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/commcal/commcal/cluster"
)

var benchFlows = 10000

// bigPattern is one pattern of 10,000 transfers over 1,000 nodes in 20 racks under a core,
// sizes 1–20 MB.
func bigPattern(b *testing.B) (*Network, []Flow) {
	d := cluster.Description{Name: "big", NICRateBps: 1e9,
		Backbone: &cluster.Backbone{Topology: cluster.TopologyCore, Kind: cluster.KindOptical, RateBps: 10e9}}
	for r := 0; r < 20; r++ {
		d.Racks = append(d.Racks, cluster.Rack{Name: fmt.Sprintf("r%d", r), NodePrefix: fmt.Sprintf("r%dn", r), NodeCount: 50})
	}
	cl, err := cluster.New(d)
	if err != nil {
		b.Fatal(err)
	}
	nodes := cl.Nodes()
	rng := rand.New(rand.NewPCG(1, 1))
	flows := make([]Flow, benchFlows)
	for i := range flows {
		s := rng.IntN(len(nodes))
		t := (s + 1 + rng.IntN(len(nodes)-1)) % len(nodes)
		flows[i] = Flow{Src: nodes[s].Name, Dst: nodes[t].Name, Bytes: float64(1+rng.IntN(20)) * 1e6}
	}
	return NewNetwork(cl, DefaultEfficiency), flows
}

// BenchmarkModels10k predicts one pattern of 10,000 transfers with every model.
func BenchmarkModels10k(b *testing.B) {
	net, flows := bigPattern(b)
	for _, m := range Models() {
		b.Run(m.Name(), func(b *testing.B) {
			var steps int
			for i := 0; i < b.N; i++ {
				p, err := m.Predict(net, flows)
				if err != nil {
					b.Fatal(err)
				}
				steps = p.Steps
			}
			b.ReportMetric(float64(steps), "steps")
		})
	}
}

// BenchmarkModelsPaperWorkload predicts the CCPE 2014 workload: 354 random patterns over the
// nine settings (|N| ∈ {10, 20, 30} × d ∈ {1, 2, 3}) on the two-rack testbed.
func BenchmarkModelsPaperWorkload(b *testing.B) {
	cl, err := cluster.LoadNamed("ccpe-testbed")
	if err != nil {
		b.Fatal(err)
	}
	net := NewNetwork(cl, DefaultEfficiency)
	var pats []Pattern
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
	for _, m := range Models() {
		b.Run(m.Name(), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				for _, p := range pats {
					if _, err := m.Predict(net, p.Flows); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
