package cluster

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/commcal/commcal/internal/badinput"
)

func mustNamed(t *testing.T, name string) *Cluster {
	t.Helper()
	c, err := LoadNamed(name)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func names(c *Cluster, ids []int) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = c.Resources()[id].Name()
	}
	return out
}

func TestExamples(t *testing.T) {
	// The CCPE 2014 testbed (§3.2.1): 2 racks × 15 nodes, 1 Gb/s NICs, 10 Gb/s optical cable.
	tb := mustNamed(t, "ccpe-testbed")
	if len(tb.Racks()) != 2 || len(tb.Nodes()) != 30 || tb.Description().Backbone.Kind != KindOptical {
		t.Errorf("ccpe-testbed: %d racks, %d nodes", len(tb.Racks()), len(tb.Nodes()))
	}
	// 30 NICs and one cable, two directions each.
	if n := len(tb.Resources()); n != 62 {
		t.Errorf("ccpe-testbed has %d directed resources, want 62", n)
	}
	// graphene (CCPE 2014 §3.2.2): 144 nodes behind 4 switches with 10 Gb/s uplinks.
	g := mustNamed(t, "graphene")
	if len(g.Racks()) != 4 || len(g.Nodes()) != 144 {
		t.Errorf("graphene: %d racks, %d nodes", len(g.Racks()), len(g.Nodes()))
	}
	if n := len(g.Resources()); n != 2*144+2*4 {
		t.Errorf("graphene has %d directed resources", n)
	}
	if got := Examples(); !reflect.DeepEqual(got, []string{"ccpe-testbed", "graphene"}) {
		t.Errorf("Examples() = %v", got)
	}
}

func TestPaths(t *testing.T) {
	tb := mustNamed(t, "ccpe-testbed")
	g := mustNamed(t, "graphene")
	cases := []struct {
		c        *Cluster
		src, dst string
		want     []string
		class    PathClass
	}{
		{tb, "X1", "X2", []string{"nic-out:X1", "nic-in:X2"}, IntraRack},
		{tb, "X1", "Y2", []string{"nic-out:X1", "backbone:X->Y", "nic-in:Y2"}, InterRack},
		{tb, "Y3", "X1", []string{"nic-out:Y3", "backbone:Y->X", "nic-in:X1"}, InterRack},
		{g, "graphene-1", "graphene-40", []string{"nic-out:graphene-1", "uplink-up:sgraphene1", "uplink-down:sgraphene2", "nic-in:graphene-40"}, InterRack},
		{g, "graphene-144", "graphene-109", []string{"nic-out:graphene-144", "nic-in:graphene-109"}, IntraRack},
	}
	for _, tc := range cases {
		ids, err := tc.c.Path(tc.src, tc.dst)
		if err != nil {
			t.Fatal(err)
		}
		if got := names(tc.c, ids); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s→%s: path %v, want %v", tc.src, tc.dst, got, tc.want)
		}
		if cl, _ := tc.c.Class(tc.src, tc.dst); cl != tc.class {
			t.Errorf("%s→%s: class %s, want %s", tc.src, tc.dst, cl, tc.class)
		}
		// The reverse transfer crosses the reverse of every resource, in reverse order.
		back, _ := tc.c.Path(tc.dst, tc.src)
		for i, id := range ids {
			r := tc.c.Resources()[id]
			if r.Reverse != back[len(back)-1-i] || tc.c.Resources()[r.Reverse].Reverse != id {
				t.Errorf("%s→%s: resource %s has reverse %d, the way back uses %d", tc.src, tc.dst, r.Name(), r.Reverse, back[len(back)-1-i])
			}
		}
	}
	for _, bad := range [][2]string{{"X1", "X1"}, {"X1", "Q9"}, {"Q9", "X1"}} {
		if _, err := tb.Path(bad[0], bad[1]); err == nil {
			t.Errorf("Path(%s, %s) gave no error", bad[0], bad[1])
		}
	}
	// Unique resource names.
	seen := map[string]bool{}
	for _, r := range g.Resources() {
		if seen[r.Name()] {
			t.Errorf("resource name %s twice", r.Name())
		}
		seen[r.Name()] = true
	}
}

const heteroTOML = `
name = "lab"
nic_rate_bps = 1e9
[backbone]
topology = "core"
kind = "electrical"
rate_bps = 10e9
[[rack]]
name = "r1"
nodes = ["a", "b"]
uplink_rate_bps = 2e9
[[rack]]
name = "r2"
node_prefix = "n"
node_first = 0
node_count = 2
[[node]]
name = "b"
nic_rate_bps = 100e6
addr = "10.0.0.2"
`

func TestOverridesAndJSON(t *testing.T) {
	c, err := Parse([]byte(heteroTOML), "toml")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := c.Node("b")
	if b.NICRateBps != 100e6 || b.Rack != "r1" {
		t.Errorf("node b: %+v", b)
	}
	if n, ok := c.NodeByAddr("10.0.0.2"); !ok || n != "b" {
		t.Errorf("NodeByAddr: %q %v", n, ok)
	}
	ids, _ := c.Path("b", "n1")
	rates := []float64{}
	for _, id := range ids {
		rates = append(rates, c.Resources()[id].RateBps)
	}
	if want := []float64{100e6, 2e9, 10e9, 1e9}; !reflect.DeepEqual(rates, want) {
		t.Errorf("path rates %v, want %v", rates, want)
	}
	// The same description as JSON gives the same cluster.
	data := `{"name":"lab","nic_rate_bps":1e9,"backbone":{"topology":"core","kind":"electrical","rate_bps":10e9},
	"rack":[{"name":"r1","nodes":["a","b"],"uplink_rate_bps":2e9},{"name":"r2","node_prefix":"n","node_first":0,"node_count":2}],
	"node":[{"name":"b","nic_rate_bps":100e6,"addr":"10.0.0.2"}]}`
	cj, err := Parse([]byte(data), "json")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(cj.Nodes(), c.Nodes()) || !reflect.DeepEqual(cj.Resources(), c.Resources()) {
		t.Error("JSON and TOML descriptions differ")
	}
}

func TestInvalidDescriptions(t *testing.T) {
	cases := []struct{ name, toml, want string }{
		{"unknown key", heteroTOML + "\ncolour = \"red\"\n", "unknown key"},
		{"no racks", "name = \"x\"\nnic_rate_bps = 1e9\n", "no [[rack]]"},
		{"no name", "nic_rate_bps = 1e9\n[[rack]]\nname = \"r\"\nnodes = [\"a\"]\n", `name "" is empty`},
		{"zero NIC rate", "name = \"x\"\n[[rack]]\nname = \"r\"\nnodes = [\"a\"]\n", "nic_rate_bps must be positive and finite"},
		{"node twice", "name = \"x\"\nnic_rate_bps = 1\n[[rack]]\nname = \"r\"\nnodes = [\"a\", \"a\"]\n", `node "a" appears twice`},
		{"two racks no backbone", "name = \"x\"\nnic_rate_bps = 1\n[[rack]]\nname = \"r\"\nnodes = [\"a\"]\n[[rack]]\nname = \"s\"\nnodes = [\"b\"]\n", "no [backbone]"},
		{"cable with three racks", "name = \"x\"\nnic_rate_bps = 1\n[backbone]\ntopology = \"cable\"\nkind = \"optical\"\nrate_bps = 1\n" +
			"[[rack]]\nname = \"r\"\nnodes = [\"a\"]\n[[rack]]\nname = \"s\"\nnodes = [\"b\"]\n[[rack]]\nname = \"t\"\nnodes = [\"c\"]\n", "joins exactly 2 racks"},
		{"bad kind", strings.Replace(heteroTOML, `"electrical"`, `"copper"`, 1), "backbone kind"},
		{"override of unknown node", heteroTOML + "[[node]]\nname = \"zz\"\n", `"zz" is not in any rack`},
		{"bad TOML", "name = ", "cluster:"},
	}
	for _, tc := range cases {
		_, err := Parse([]byte(tc.toml), "toml")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want it to mention %q", tc.name, err, tc.want)
		}
	}
}

func FuzzParseCluster(f *testing.F) {
	f.Add(heteroTOML)
	f.Add("name = \"x\"\nnic_rate_bps = 1\n[[rack]]\nname = \"r\"\nnode_count = 3\n")
	f.Add("name=\"x\"\nnic_rate_bps=1\n[[rack]]\nname=\"r\"\nnode_count=1048576\n[[rack]]\nname=\"s\"\nnode_count=65536\n")
	f.Add("name = \"x\"\nnic_rate_bps = 1\n[[rack]]\nname = \"r\"\nnodes = [\"a\\u0000\", \"b\\n\"]\n")
	f.Fuzz(func(t *testing.T, s string) {
		checkParsed(t, s, "toml")
	})
}

// FuzzParseClusterJSON runs JSON descriptions through the same checks: no panic, bad input
// on one line, and a consistent cluster when the description is accepted.
func FuzzParseClusterJSON(f *testing.F) {
	f.Add(`{"name":"lab","nic_rate_bps":1e9,"backbone":{"topology":"core","kind":"electrical","rate_bps":10e9},
	"rack":[{"name":"r1","nodes":["a","b"],"uplink_rate_bps":2e9},{"name":"r2","node_prefix":"n","node_first":0,"node_count":2}],
	"node":[{"name":"b","nic_rate_bps":100e6,"addr":"10.0.0.2"}]}`)
	f.Add(`{"name":"x","nic_rate_bps":1,"rack":[{"name":"r","nodes":["a","a\u0000"]}]}`)
	f.Add(`{"name":"x","name":"y"}`)
	f.Add(`{"name":"x","nic_rate_bps":1,"rack":[{"name":"r","node_count":3}]} {"name":"y"}`)
	f.Add(`{"name":"x","nic_rate_bps":1,"rack":[{"name":"r","node_count":1048576},{"name":"s","node_count":1048576}]}`)
	f.Add(`[1, {"a": [true, null, {"b": 1, "b": 2}]}]`)
	f.Fuzz(func(t *testing.T, s string) {
		checkParsed(t, s, "json")
	})
}

// checkParsed parses a description: a refused one gives bad input on one line; one that
// parses yields a consistent cluster within the limits, with sane names, in which every pair
// has a path whose resources exist and whose reverses pair up.
func checkParsed(t *testing.T, s, format string) {
	c, err := Parse([]byte(s), format)
	if err != nil {
		if !badinput.Is(err) || strings.ContainsAny(err.Error(), "\r\n") {
			t.Fatalf("error %q: want bad input on one line", err)
		}
		return
	}
	nodes := c.Nodes()
	if len(nodes) == 0 || len(nodes) > maxNodes || len(c.Racks()) > maxRacks {
		t.Fatalf("%d nodes in %d racks", len(nodes), len(c.Racks()))
	}
	for _, n := range append(c.Racks(), nodes[0].Name, nodes[len(nodes)-1].Name) {
		if p := nameProblem(n); p != "" {
			t.Fatalf("name %q accepted, but it %s", n, p)
		}
	}
	for i := 0; i < len(nodes) && i < 4; i++ {
		for j := 0; j < len(nodes) && j < 4; j++ {
			if i == j {
				continue
			}
			ids, err := c.Path(nodes[i].Name, nodes[j].Name)
			if err != nil {
				t.Fatalf("no path %s→%s: %v", nodes[i].Name, nodes[j].Name, err)
			}
			for _, id := range ids {
				if r := c.Resources()[id]; c.Resources()[r.Reverse].Reverse != id || !(r.RateBps > 0) {
					t.Fatalf("bad resource %+v", r)
				}
			}
		}
	}
}

func TestRackNodesAndClassPairs(t *testing.T) {
	tb := mustNamed(t, "ccpe-testbed")
	r0 := tb.RackNodes(0)
	if len(r0) != 15 || r0[0] != tb.Nodes()[0].Name {
		t.Fatalf("rack 0: %v", r0)
	}
	// A caller appending to a prefix must not change the cluster's own list.
	_ = append(r0[:1], "intruder")
	if got := tb.RackNodes(0)[1]; got != tb.Nodes()[1].Name {
		t.Errorf("rack 0 node 1 is %q after a caller's append", got)
	}
	pairs := tb.ClassPairs()
	want := []ClassPair{
		{Class: IntraRack, Src: tb.Nodes()[0].Name, Dst: tb.Nodes()[1].Name},
		{Class: InterRack, Src: tb.Nodes()[0].Name, Dst: tb.RackNodes(1)[0]},
	}
	if !reflect.DeepEqual(pairs, want) {
		t.Errorf("class pairs %v, want %v", pairs, want)
	}
	for _, p := range pairs {
		if got, err := tb.Class(p.Src, p.Dst); err != nil || got != p.Class {
			t.Errorf("%s→%s is %v (%v), listed as %v", p.Src, p.Dst, got, err, p.Class)
		}
	}
}

// A measured collective's ranks are placed one per node in the description's order from the
// root's node, wrapping after the last; a root that is no node places nothing.
func TestPlaceRanks(t *testing.T) {
	cl, err := LoadNamed("ccpe-testbed")
	if err != nil {
		t.Fatal(err)
	}
	nodes := cl.NodeNames()
	last := nodes[len(nodes)-1]
	if got, want := cl.PlaceRanks(last, 3), []string{last, nodes[0], nodes[1]}; !slices.Equal(got, want) {
		t.Errorf("from the last node: %v, want %v", got, want)
	}
	if got := cl.PlaceRanks(nodes[0], 2); !slices.Equal(got, nodes[:2]) {
		t.Errorf("from the first node: %v, want %v", got, nodes[:2])
	}
	if got := cl.PlaceRanks("nowhere", 2); got != nil {
		t.Errorf("from no node: %v", got)
	}
}
