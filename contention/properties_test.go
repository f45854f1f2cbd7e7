package contention

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/experiments"
)

// propertyPatterns draws random patterns on both built-in clusters, with mixed sizes.
func propertyPatterns(t *testing.T) []struct {
	net *Network
	p   Pattern
} {
	t.Helper()
	var out []struct {
		net *Network
		p   Pattern
	}
	for _, name := range []string{"ccpe-testbed", "graphene"} {
		cl, err := cluster.LoadNamed(name)
		if err != nil {
			t.Fatal(err)
		}
		net := NewNetwork(cl, DefaultEfficiency)
		for _, spec := range []RandomSpec{{Nodes: 10, D: 1}, {Nodes: 20, D: 2}, {Nodes: 30, D: 3}, {Nodes: 16, D: 3, Racks: 4}} {
			if spec.Racks > len(cl.Racks()) {
				continue
			}
			spec.Sizes = []int64{1e6, 5e6, 10e6, 20e6}
			ps, err := RandomPatterns(cl, spec, 15, 42)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range ps {
				out = append(out, struct {
					net *Network
					p   Pattern
				}{net, p})
			}
		}
	}
	return out
}

// stepRates runs a rate model (with contra-flow factor phi) and returns the rates of every
// step, per transfer (0 for a transfer already finished).
func stepRates(t *testing.T, m stepModel, phi float64, net *Network, flows []Flow) [][]float64 {
	var all [][]float64
	n := *net
	n.ContraFactor = phi
	_, err := predictSteps(m, &n, flows, func(e *engine) {
		full := make([]float64, len(flows))
		for _, c := range e.act {
			for _, i := range e.active(c) {
				full[i] = e.rate[c]
			}
		}
		all = append(all, full)
	})
	if err != nil {
		t.Fatal(err)
	}
	return all
}

// rateModels are the models that share resources, asymmetric-fitted with φ = 0.4.
var rateModels = []struct {
	name  string
	model stepModel
	phi   float64
}{
	{"asymmetric", Asymmetric{}, 1},
	{"asymmetric-fitted", AsymmetricFitted{}, 0.4},
	{"fair", Fair{}, 1},
	{"maxmin", MaxMin{}, 1},
}

func TestNoRateExceedsCapacity(t *testing.T) {
	for _, c := range propertyPatterns(t) {
		paths, _ := resolve(c.net, c.p.Flows)
		for _, m := range rateModels {
			name := m.name
			for s, rates := range stepRates(t, m.model, m.phi, c.net, c.p.Flows) {
				load := make([]float64, len(c.net.Capacity))
				for i, r := range rates {
					if r > c.net.Ceiling*(1+1e-9) {
						t.Fatalf("%s, %s step %d: transfer %d at %g above the ceiling", name, c.p.ID, s, i, r)
					}
					for _, res := range paths[i] {
						load[res] += r
					}
				}
				for res, l := range load {
					if l > c.net.Capacity[res]*(1+1e-9) {
						t.Errorf("%s, %s step %d: %s carries %g bit/s, capacity %g", name, c.p.ID, s,
							c.net.Cluster.Resources()[res].Name(), l, c.net.Capacity[res])
					}
				}
			}
		}
	}
}

func TestEveryTransferFinishes(t *testing.T) {
	for _, c := range propertyPatterns(t) {
		for _, m := range Models() {
			p, err := m.Predict(c.net, c.p.Flows)
			if err != nil {
				t.Fatalf("%s, %s: %v", m.Name(), c.p.ID, err)
			}
			for i, ti := range p.Times {
				// No transfer is faster than alone at the ceiling.
				if math.IsNaN(ti) || math.IsInf(ti, 0) || ti < c.p.Flows[i].Bytes*8/c.net.Ceiling*(1-1e-12) {
					t.Errorf("%s, %s: transfer %d finishes at %g", m.Name(), c.p.ID, i, ti)
				}
			}
			if p.Steps < 1 || p.Steps > len(c.p.Flows) {
				t.Errorf("%s, %s: %d steps for %d transfers", m.Name(), c.p.ID, p.Steps, len(c.p.Flows))
			}
		}
	}
}

// TestMaxMinIsMaxMinFair checks the defining property: every transfer either runs at the
// ceiling or crosses a full resource on which no transfer runs faster than it (so raising it
// would lower a rate no larger than its own).
func TestMaxMinIsMaxMinFair(t *testing.T) {
	for _, c := range propertyPatterns(t) {
		paths, _ := resolve(c.net, c.p.Flows)
		for s, rates := range stepRates(t, MaxMin{}, 1, c.net, c.p.Flows) {
			load := make([]float64, len(c.net.Capacity))
			fastest := make([]float64, len(c.net.Capacity))
			for i, r := range rates {
				for _, res := range paths[i] {
					load[res] += r
					fastest[res] = math.Max(fastest[res], r)
				}
			}
			for i, r := range rates {
				if r == 0 || approxEq(r, c.net.Ceiling) {
					continue
				}
				ok := false
				for _, res := range paths[i] {
					if approxEq(load[res], c.net.Capacity[res]) && approxEq(fastest[res], r) {
						ok = true
					}
				}
				if !ok {
					t.Errorf("%s step %d: transfer %d at %g has no bottleneck", c.p.ID, s, i, r)
				}
			}
		}
	}
}

// TestRenamingAndReorderingChangeNothing permutes the transfers and relabels the nodes of a
// pattern (keeping every node in its rack), and expects the same time for every transfer.
func TestRenamingAndReorderingChangeNothing(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for _, c := range propertyPatterns(t) {
		cl := c.net.Cluster
		// A node relabelling that keeps racks: permute the nodes within each rack.
		rename := map[string]string{}
		for r := range cl.Racks() {
			nodes := cl.RackNodes(r)
			perm := rng.Perm(len(nodes))
			for i, n := range nodes {
				rename[n] = nodes[perm[i]]
			}
		}
		order := rng.Perm(len(c.p.Flows))
		moved := make([]Flow, len(order))
		for i, j := range order {
			f := c.p.Flows[j]
			moved[i] = Flow{Src: rename[f.Src], Dst: rename[f.Dst], Bytes: f.Bytes}
		}
		for _, m := range Models() {
			a, err1 := m.Predict(c.net, c.p.Flows)
			b, err2 := m.Predict(c.net, moved)
			if err1 != nil || err2 != nil {
				t.Fatal(err1, err2)
			}
			for i, j := range order {
				if !approxEq(a.Times[j], b.Times[i]) {
					t.Errorf("%s, %s: transfer %d takes %.9g, %.9g after renaming and reordering", m.Name(), c.p.ID, j, a.Times[j], b.Times[i])
				}
			}
		}
	}
}

func TestRandomPatterns(t *testing.T) {
	cl, _ := cluster.LoadNamed("ccpe-testbed")
	a, err := RandomPatterns(cl, RandomSpec{Nodes: 10, D: 3}, 50, 1)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := RandomPatterns(cl, RandomSpec{Nodes: 10, D: 3}, 50, 1)
	if fmt.Sprint(a) != fmt.Sprint(b) {
		t.Error("same seed, different patterns")
	}
	total, inter := 0, 0
	used := map[string]bool{}
	for _, p := range a {
		if n, d, ok := RandomSetting(p.ID); !ok || n != 10 || d != 3 {
			t.Errorf("pattern ID %q", p.ID)
		}
		for _, f := range p.Flows {
			total++
			used[f.Src], used[f.Dst] = true, true
			if f.Src == f.Dst {
				t.Fatal("transfer to itself")
			}
			if c, _ := cl.Class(f.Src, f.Dst); c == cluster.InterRack {
				inter++
			}
		}
	}
	// 10 nodes × 3 draws × ½ = 15 transfers per pattern on average; 5 per rack.
	if mean := float64(total) / 50; mean < 13 || mean > 17 {
		t.Errorf("mean %.1f transfers per pattern, expect about 15", mean)
	}
	if len(used) != 10 || !used["X5"] || used["X6"] || !used["Y5"] {
		t.Errorf("nodes used: %v", used)
	}
	// A destination is one of the 9 other nodes, 5 of them in the other rack.
	if share := float64(inter) / float64(total); share < 0.45 || share > 0.65 {
		t.Errorf("inter-rack share %.2f, expect 5/9", share)
	}
	if _, err := RandomPatterns(cl, RandomSpec{Nodes: 9, D: 1}, 1, 1); err == nil {
		t.Error("|N| = 9 over two racks accepted")
	}
	// Calibration patterns of the same setting and seed: experiment random_calibration, the
	// same IDs, other transfers.
	c, err := RandomPatterns(cl, RandomSpec{Nodes: 10, D: 3, Calibration: true}, 50, 1)
	if err != nil {
		t.Fatal(err)
	}
	same := 0
	for i, p := range c {
		if p.Experiment != experiments.RandomCalibration || a[i].Experiment != experiments.Random || p.ID != a[i].ID {
			t.Fatalf("pattern %d: %s/%s beside %s/%s", i, p.Experiment, p.ID, a[i].Experiment, a[i].ID)
		}
		if fmt.Sprint(p.Flows) == fmt.Sprint(a[i].Flows) {
			same++
		}
	}
	if same > 0 {
		t.Errorf("%d of 50 calibration patterns equal the held-out ones", same)
	}
}
