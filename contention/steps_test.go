package contention

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"gonum.org/v1/gonum/floats/scalar"

	"github.com/commcal/commcal/cluster"
)

// TestRoutesAreClusterPaths checks the engine's routes, built from pieces of Cluster.Path,
// against Cluster.Path itself for every pair of nodes of the built-in clusters and of a tree
// whose racks have different uplinks.
func TestRoutesAreClusterPaths(t *testing.T) {
	d := treeDescription(5, 4)
	d.Racks[2].UplinkRateBps = 2e9
	tree, err := cluster.New(d)
	if err != nil {
		t.Fatal(err)
	}
	clusters := []*cluster.Cluster{tree, benchTwoRack()}
	for _, name := range []string{"ccpe-testbed", "graphene"} {
		cl, err := cluster.LoadNamed(name)
		if err != nil {
			t.Fatal(err)
		}
		clusters = append(clusters, cl)
	}
	for _, cl := range clusters {
		net := NewNetwork(cl, 1)
		pm := newPathMaker(net)
		nodes := cl.Nodes()
		for s := range nodes {
			for d := range nodes {
				if s == d {
					continue
				}
				want, err := cl.Path(nodes[s].Name, nodes[d].Name)
				if err != nil {
					t.Fatal(err)
				}
				rt := pm.route(int32(s), int32(d))
				got := make([]int, rt.n)
				for k := range rt.n {
					got[k] = int(rt.res[k])
					if rt.rev[k] != int32(cl.Resources()[rt.res[k]].Reverse) {
						t.Fatalf("%s: %s→%s: position %d reversed to %d", cl.Name(), nodes[s].Name, nodes[d].Name, k, rt.rev[k])
					}
				}
				if !slices.Equal(got, want) {
					t.Fatalf("%s: %s→%s: route %v, Cluster.Path %v", cl.Name(), nodes[s].Name, nodes[d].Name, got, want)
				}
			}
		}
	}
}

// TestClasses checks how the engine groups transfers: one class per pair in order of first
// appearance, members by increasing size then input order, the same result with the dense
// table and the map, and one class per transfer for singletons.
func TestClasses(t *testing.T) {
	net := NewNetwork(benchTwoRack(), DefaultEfficiency)
	flows := []Flow{{"a0", "b1", 3e6}, {"a1", "a2", 1e6}, {"a0", "b1", 1e6}, {"a1", "a2", 1e6}, {"a0", "b1", 2e6}, {"b1", "a0", 1e6}}
	e, err := newEngine(context.Background(), net, flows, false)
	if err != nil {
		t.Fatal(err)
	}
	wantMembers := [][]int32{{2, 4, 0}, {1, 3}, {5}}
	if len(e.src) != len(wantMembers) {
		t.Fatalf("%d classes, want %d", len(e.src), len(wantMembers))
	}
	for c, want := range wantMembers {
		if got := e.active(int32(c)); !slices.Equal(got, want) {
			t.Errorf("class %d: members %v, want %v", c, got, want)
		}
	}
	if e.count[e.routes[0].res[0]] != 3 || e.count[e.routes[1].res[0]] != 2 {
		t.Errorf("counts on the NICs out of a0 and a1: %d, %d; want 3, 2", e.count[e.routes[0].res[0]], e.count[e.routes[1].res[0]])
	}
	for _, tab := range []classTable{{n: 3, dense: make([]int32, 9)}, {n: 3, m: map[uint64]int32{}}} {
		var got []int32
		next := int32(0)
		for _, p := range [][2]int32{{0, 1}, {1, 2}, {0, 1}, {1, 2}, {2, 0}, {1, 0}, {2, 0}} {
			c, ok := tab.find(p[0], p[1], next)
			if !ok {
				c, next = next, next+1
			}
			got = append(got, c)
		}
		if want := []int32{0, 1, 0, 1, 2, 3, 2}; !slices.Equal(got, want) {
			t.Errorf("class table (dense %t): classes %v, want %v", tab.dense != nil, got, want)
		}
	}
	single, err := newEngine(context.Background(), net, flows, true)
	if err != nil {
		t.Fatal(err)
	}
	for c := range flows {
		if got := single.active(int32(c)); !slices.Equal(got, []int32{int32(c)}) {
			t.Errorf("singletons: class %d has %v", c, got)
		}
	}
}

// ungrouped hides a rule's grouping, so that the engine runs it in run, which visits every
// active class at every step.
type ungrouped struct{ rateRule }

// TestGroupedLoopEqualsPlain checks runGrouped against run on the same rules: max-min's fill,
// and duplex's plain fill with joint budgets (κ = 0.4). Every time within 1e-12 relative (both
// compute the same rates; they count bytes differently, and round differently), the same
// steps, and at every step every active class at its group's rate. The patterns: random ones
// on the built-in clusters, on a tree of five racks and on the benchmarks' two racks (sizes of
// 1–8 MB, and all of 1 MB: completions that coincide), and the 10⁴-transfer pattern.
func TestGroupedLoopEqualsPlain(t *testing.T) {
	type pattern struct {
		name  string
		net   *Network
		flows []Flow
	}
	var pats []pattern
	for _, name := range []string{"ccpe-testbed", "graphene"} {
		cl, err := cluster.LoadNamed(name)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 10 {
			pats = append(pats, pattern{fmt.Sprintf("%s-%d", name, i), NewNetwork(cl, DefaultEfficiency), randomFlows(cl, 20+20*i, 8, uint64(i+1))})
		}
	}
	tree, err := cluster.New(treeDescription(5, 4))
	if err != nil {
		t.Fatal(err)
	}
	two := benchTwoRack()
	pats = append(pats,
		pattern{"tree", NewNetwork(tree, DefaultEfficiency), randomFlows(tree, 500, 8, 3)},
		pattern{"two-rack equal sizes", NewNetwork(two, DefaultEfficiency), randomFlows(two, 2000, 1, 5)})
	net, flows := benchPattern()
	pats = append(pats, pattern{"10k", net, flows})
	rules := []struct {
		name string
		make func(e *engine) groupRule
	}{
		{"maxmin", func(e *engine) groupRule { return newFill(e) }},
		{"duplex", func(e *engine) groupRule {
			lp := &LearnedParams{Coupling: 0.4}
			f := newWFill(e, Duplex.Variant(), lp, true) // the plain sharing reads no weight
			if !f.plainShares() {
				t.Fatal("duplex at κ = 0.4: the plain fill is not the sharing")
			}
			return plainSharing{f}
		}},
	}
	for _, p := range pats {
		for _, r := range rules {
			run := func(grouped bool) *Prediction {
				e, err := newEngine(context.Background(), p.net, p.flows, false)
				if err != nil {
					t.Fatal(err)
				}
				rule := r.make(e)
				var rr rateRule = ungrouped{rule}
				if grouped {
					rr = rule
					e.observe = func(e *engine) {
						g := rule.grouping()
						for _, c := range e.act {
							if e.mult[c] > 0 && e.rate[c] != g.rate[g.of[c]] {
								t.Fatalf("%s, %s, step %d: class %d at %g bit/s, its group %d at %g", p.name, r.name, e.steps, c, e.rate[c], g.of[c], g.rate[g.of[c]])
							}
						}
					}
				}
				pr, err := e.run(context.Background(), rr)
				if err != nil {
					t.Fatal(err)
				}
				return pr
			}
			got, want := run(true), run(false)
			if got.Steps != want.Steps {
				t.Errorf("%s, %s: %d steps, the plain loop %d", p.name, r.name, got.Steps, want.Steps)
			}
			for i := range want.Times {
				if !scalar.EqualWithinRel(got.Times[i], want.Times[i], 1e-12) || got.FirstRates[i] != want.FirstRates[i] {
					t.Fatalf("%s, %s: transfer %d at %.17g s (first rate %g), the plain loop %.17g s (%g)", p.name, r.name, i, got.Times[i], got.FirstRates[i], want.Times[i], want.FirstRates[i])
				}
			}
		}
	}
}

// A grouped run stopped on its way leaves nothing behind for the next run on the same engine
// and fill: after reset, it predicts bit for bit what a fresh engine does. The run is stopped
// by its context at its 300th step, and then every group is put in the heap of instants at
// instant 0, as a run stopped within a step could leave groups that the next run's first
// fill gives no class.
func TestGroupedLoopAfterStop(t *testing.T) {
	net, flows := benchPattern()
	flows = flows[:2000]
	fresh, err := MaxMin{}.Predict(context.Background(), net, flows)
	if err != nil {
		t.Fatal(err)
	}
	e, err := newEngine(context.Background(), net, flows, false)
	if err != nil {
		t.Fatal(err)
	}
	f := newFill(e)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	e.observe = func(e *engine) {
		if e.steps == 300 {
			cancel()
		}
	}
	if _, err := e.run(ctx, f); err == nil {
		t.Fatal("a run whose context was cancelled at its 300th step ended without an error")
	}
	for g := range e.grp {
		e.fin.set(int32(g), 0)
	}
	e.observe = nil
	e.reset()
	f.invalidate()
	again, err := e.run(context.Background(), f)
	if err != nil {
		t.Fatal(err)
	}
	if again.Steps != fresh.Steps || !slices.Equal(again.Times, fresh.Times) || !slices.Equal(again.FirstRates, fresh.FirstRates) {
		t.Errorf("after a stopped run: %d steps, times differ from a fresh engine's (%d steps)", again.Steps, fresh.Steps)
	}
}
