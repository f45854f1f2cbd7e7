package contention

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/commcal/commcal/cluster"
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
		// Patterns of 5 to 60 transfers among all the cluster's nodes (randomFlows), sizes of
		// 1 to 20 MB: the properties hold for any pattern.
		for _, n := range []int{5, 15, 30, 60} {
			for i := range 15 {
				p := Pattern{ID: fmt.Sprintf("n%d-%02d", n, i), Flows: randomFlows(cl, n, 20, uint64(42+i))}
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
	_, err := predictSteps(context.Background(), m, &n, flows, func(e *engine) {
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
			p, err := m.Predict(context.Background(), c.net, c.p.Flows)
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
			a, err1 := m.Predict(context.Background(), c.net, c.p.Flows)
			b, err2 := m.Predict(context.Background(), c.net, moved)
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
