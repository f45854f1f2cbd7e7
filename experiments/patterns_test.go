package experiments

import (
	"fmt"
	"strings"
	"testing"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/contention"
)

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
		if p.Experiment != RandomCalibration || a[i].Experiment != Random || p.ID != a[i].ID {
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

func TestStaticSyncPatterns(t *testing.T) {
	cl, _ := cluster.LoadNamed("ccpe-testbed")
	ps := StaticSyncPatterns(cl, 8, 4, 1e6, 1)
	seen := map[string]bool{}
	for i, p := range ps {
		if i > 0 && len(p.Flows) < len(ps[i-1].Flows) {
			t.Fatal("graphs not ordered by size")
		}
		edges := make([]contention.Edge, len(p.Flows))
		for k, f := range p.Flows {
			edges[k] = contention.Edge{Src: f.Src, Dst: f.Dst}
		}
		if len(contention.Components(edges)) != 1 {
			t.Errorf("%s is not connected", p.ID)
		}
		key := contention.Shape(cl, edges).Key
		if seen[key] {
			t.Errorf("%s repeats a shape", p.ID)
		}
		seen[key] = true
	}
	if len(ps) < 8 || len(ps[0].Flows) != 1 {
		t.Errorf("%d graphs, smallest has %d edges", len(ps), len(ps[0].Flows))
	}
}

// Exchanges pair node j with node h+j both ways; cycles run 2c → h+2c → 2c+1 → h+2c+1 → 2c,
// so that every node of a cycle sends to one peer and receives from another; the smallest k
// of each calibrates and the others are held out.
func TestExchangeAndCyclePatterns(t *testing.T) {
	cl, err := cluster.LoadNamed("ccpe-testbed") // two racks of 15: h = 15
	if err != nil {
		t.Fatal(err)
	}
	nodes := cl.NodeNames()
	h := len(nodes) / 2
	ex := ExchangePatterns(cl, 3, 1000)
	if len(ex) != 3 || ex[0].Experiment != ExchangeCalibration || ex[1].Experiment != Exchange || ex[2].ID != "exchange-k3" {
		t.Fatalf("exchanges %+v", ex)
	}
	for k, p := range ex {
		if len(p.Flows) != 2*(k+1) {
			t.Errorf("%s: %d flows", p.ID, len(p.Flows))
		}
		for j := 0; j < len(p.Flows); j += 2 {
			f, g := p.Flows[j], p.Flows[j+1]
			if f.Src != nodes[j/2] || f.Dst != nodes[h+j/2] || g.Src != f.Dst || g.Dst != f.Src || f.Bytes != 1000 {
				t.Errorf("%s: pair %d is %+v, %+v", p.ID, j/2, f, g)
			}
		}
	}
	cy := CyclePatterns(cl, 5, 1000) // 5 is not even: k = 2, 4
	if len(cy) != 2 || cy[0].Experiment != CycleCalibration || cy[1].Experiment != Cycle || cy[1].ID != "cycle-k4" {
		t.Fatalf("cycles %+v", cy)
	}
	for _, p := range cy {
		out, in, to := map[string]int{}, map[string]int{}, map[string]string{}
		for _, f := range p.Flows {
			out[f.Src]++
			in[f.Dst]++
			to[f.Src] = f.Dst
		}
		for n, c := range out {
			if c != 1 || in[n] != 1 || to[to[n]] == n {
				t.Errorf("%s: node %s sends %d, receives %d, and its peer sends back to it: %v", p.ID, n, c, in[n], to[to[n]] == n)
			}
		}
		if len(out) != len(p.Flows) {
			t.Errorf("%s: %d nodes for %d flows", p.ID, len(out), len(p.Flows))
		}
	}
	if got := len(ExchangePatterns(cl, 100, 1)); got != h {
		t.Errorf("%d exchanges for max_k 100 on %d nodes, want %d (pairs never share a node)", got, len(nodes), h)
	}
}

// Incast sends from nodes h … h+k−1 to node 0 and outcast from node 0 to them, k = 2…max_k,
// both calibration experiments; k stops at h.
func TestIncastAndOutcastPatterns(t *testing.T) {
	cl, err := cluster.LoadNamed("ccpe-testbed") // two racks of 15: h = 15
	if err != nil {
		t.Fatal(err)
	}
	nodes := cl.NodeNames()
	h := len(nodes) / 2
	in, out := IncastPatterns(cl, 4, 500), OutcastPatterns(cl, 4, 500)
	if len(in) != 3 || len(out) != 3 || in[1].ID != "incast-k3" || out[2].ID != "outcast-k4" {
		t.Fatalf("incast %+v, outcast %+v", in, out)
	}
	for i := range in {
		k := i + 2
		if len(in[i].Flows) != k || len(out[i].Flows) != k || in[i].Experiment != Incast || out[i].Experiment != Outcast {
			t.Fatalf("k = %d: %+v, %+v", k, in[i], out[i])
		}
		for j := range k {
			fi, fo := in[i].Flows[j], out[i].Flows[j]
			if fi.Src != nodes[h+j] || fi.Dst != nodes[0] || fo.Src != nodes[0] || fo.Dst != nodes[h+j] || fi.Bytes != 500 {
				t.Errorf("k = %d, flow %d: incast %+v, outcast %+v", k, j, fi, fo)
			}
		}
	}
	for _, n := range []Name{Incast, Outcast} {
		if r, ok := RoleOf(n); !ok || r != Calibration {
			t.Errorf("%s: role %v, %t, want calibration", n, r, ok)
		}
	}
	if got := len(IncastPatterns(cl, 100, 1)); got != h-1 {
		t.Errorf("%d incast patterns for max_k 100, want %d (k = 2…h)", got, h-1)
	}
	c, err := ParseCatalogue([]byte("incast = { max_k = 3 }\noutcast = { max_k = 2 }\ncalibration = { bytes = 1000 }\n"))
	if err != nil || c.IncastMaxK != 3 || c.OutcastMaxK != 2 {
		t.Errorf("catalogue: %+v, %v", c, err)
	}
	if _, err := ParseCatalogue([]byte("incast = { max_k = -1 }\ncalibration = { bytes = 1000 }\n")); err == nil || !strings.Contains(err.Error(), "incast.max_k") {
		t.Errorf("incast.max_k = -1: %v", err)
	}
}
