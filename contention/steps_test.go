package contention

import (
	"context"
	"slices"
	"testing"

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
