package experiments

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/internal/badinput"
)

var smallCatalogue = Designs{SweepSizes: []int64{1 << 10, 1 << 20}, Bytes: 1 << 20, FairnessMaxK: 3, BidirMax: 2,
	StaticSync: StaticSyncDesign{Graphs: 2, MaxEdges: 3},
	Random:     []RandomDesign{{Nodes: 4, D: 1, Patterns: 3, Sizes: []int64{1 << 20}}, {Nodes: 6, D: 2, Patterns: 2}}, Seed: 5}

// Patterns lists every design in the fixed order, with as many patterns of each as the
// designs' closed forms say, on the two-rack testbed (racks of 15 nodes: nothing is capped).
func TestCataloguePatterns(t *testing.T) {
	cl, err := cluster.LoadNamed("ccpe-testbed")
	if err != nil {
		t.Fatal(err)
	}
	pats, err := smallCatalogue.Patterns(cl)
	if err != nil {
		t.Fatal(err)
	}
	static := len(StaticSyncPatterns(cl, 2, 3, 1<<20, 5))
	want := []struct {
		exp string
		n   int
	}{
		{P2PSweep, 2 * 2}, // two class pairs × two sizes
		{FairIntra, 3},    // k = 1…3
		{FairInter, 3},
		{BidirNIC, 2 * 2}, // in × out
		{BidirBackbone, 2 * 2},
		{StaticSync, static},
		{Random, 3 + 2},
	}
	i := 0
	for _, w := range want {
		for k := 0; k < w.n; k++ {
			if i >= len(pats) || pats[i].Experiment != w.exp {
				t.Fatalf("pattern %d of %d: want %s (%d of them)", i, len(pats), w.exp, w.n)
			}
			i++
		}
	}
	if i != len(pats) || static == 0 {
		t.Fatalf("%d patterns, want %d (with %d static-synchronous)", len(pats), i, static)
	}
	for _, p := range pats {
		if _, ok := RoleOf(p.Experiment); !ok {
			t.Errorf("pattern %s of unknown experiment %q", p.ID, p.Experiment)
		}
		if p.Experiment == Random && strings.HasPrefix(p.ID, "N6") && p.Flows[0].Bytes != 10e6 {
			t.Errorf("random pattern %s without sizes has %g B transfers, want the default 10 MB", p.ID, p.Flows[0].Bytes)
		}
	}
	again, _ := smallCatalogue.Patterns(cl)
	if !reflect.DeepEqual(again, pats) {
		t.Error("the same catalogue gave other patterns")
	}
	bad := smallCatalogue
	bad.Random = []RandomDesign{{Nodes: 40, D: 1, Patterns: 1}}
	if _, err := bad.Patterns(cl); err == nil || !strings.Contains(err.Error(), "rack") {
		t.Errorf("|N| = 40 on racks of 15: %v", err)
	}
}

// The catalogue's JSON keys are those of truth.json's contention object (a zero static_sync,
// no sweep sizes and no seed are left out), and it decodes back to itself.
func TestCatalogueJSON(t *testing.T) {
	data, err := json.Marshal(smallCatalogue)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"sweep_sizes":[1024,1048576],"calibration_bytes":1048576,"fairness_max_k":3,"bidir_max":2,` +
		`"random":[{"nodes":4,"d":1,"patterns":3,"sizes":[1048576]},{"nodes":6,"d":2,"patterns":2,"sizes":null}],` +
		`"static_sync":{"graphs":2,"max_edges":3},"seed":5}`
	if string(data) != want {
		t.Errorf("got  %s\nwant %s", data, want)
	}
	var back Designs
	if err := json.Unmarshal(data, &back); err != nil || !reflect.DeepEqual(back, smallCatalogue) {
		t.Errorf("decoded %+v (%v)", back, err)
	}
	data, _ = json.Marshal(Designs{Bytes: 1})
	if got := `{"calibration_bytes":1,"fairness_max_k":0,"bidir_max":0,"random":null}`; string(data) != got {
		t.Errorf("got %s, want %s", data, got)
	}
}

// TestRandomTagsDrawTheirOwnPatterns: two designs of one setting, one tagged, draw different
// patterns with different IDs that still read as the same setting; the untagged one keeps the
// patterns it always drew.
func TestRandomTagsDrawTheirOwnPatterns(t *testing.T) {
	cl, err := cluster.LoadNamed("ccpe-testbed")
	if err != nil {
		t.Fatal(err)
	}
	plain, err := RandomPatterns(cl, RandomSpec{Nodes: 10, D: 2, Sizes: []int64{4 << 20}}, 3, 1)
	if err != nil {
		t.Fatal(err)
	}
	tagged, err := RandomPatterns(cl, RandomSpec{Nodes: 10, D: 2, Sizes: []int64{1 << 20, 4 << 20}, Tag: "mixed"}, 3, 1)
	if err != nil {
		t.Fatal(err)
	}
	if plain[0].ID != "N10-d2-000" || tagged[0].ID != "N10-d2-mixed-000" {
		t.Errorf("IDs %s and %s", plain[0].ID, tagged[0].ID)
	}
	if n, d, ok := RandomSetting(tagged[2].ID); !ok || n != 10 || d != 2 {
		t.Errorf("setting of %s: %d, %d, %v", tagged[2].ID, n, d, ok)
	}
	same := len(plain[0].Flows) == len(tagged[0].Flows)
	for i := 0; same && i < len(plain[0].Flows); i++ {
		same = plain[0].Flows[i].Src == tagged[0].Flows[i].Src && plain[0].Flows[i].Dst == tagged[0].Flows[i].Dst
	}
	if same {
		t.Error("the tagged design drew the untagged one's first pattern")
	}
	if _, err := RandomPatterns(cl, RandomSpec{Nodes: 10, D: 2, Tag: "Mixed-1"}, 1, 1); err == nil {
		t.Error("a tag with a hyphen and capitals was accepted")
	}
}

// TestRandomPatternsOverThreeRacks checks that a design's Racks takes |N| nodes equally from
// that many racks (a three-rack cluster's random patterns cross every uplink), and that a
// count the racks do not divide, or no rack at all, is refused.
func TestRandomPatternsOverThreeRacks(t *testing.T) {
	d := cluster.Description{Name: "tree-3x5", NICRateBps: 1e9,
		Backbone: &cluster.Backbone{Topology: cluster.TopologyCore, Kind: cluster.KindOptical, RateBps: 10e9}}
	for r := 0; r < 3; r++ {
		d.Racks = append(d.Racks, cluster.Rack{Name: fmt.Sprintf("r%d", r), NodePrefix: fmt.Sprintf("r%dn", r), NodeCount: 5})
	}
	cl, err := cluster.New(d)
	if err != nil {
		t.Fatal(err)
	}
	c := Designs{Random: []RandomDesign{{Nodes: 9, D: 3, Patterns: 20, Racks: 3, Sizes: []int64{1 << 20}}}, Seed: 4}
	pats, err := c.Patterns(cl)
	if err != nil {
		t.Fatal(err)
	}
	used := map[string]bool{}
	for _, p := range pats {
		for _, f := range p.Flows {
			used[f.Src], used[f.Dst] = true, true
		}
	}
	want := []string{"r0n0", "r0n1", "r0n2", "r1n0", "r1n1", "r1n2", "r2n0", "r2n1", "r2n2"}
	if len(used) != len(want) {
		t.Errorf("nodes used %v, want %v", used, want)
	}
	for _, n := range want {
		if !used[n] {
			t.Errorf("node %s never used (used %v)", n, used)
		}
	}
	for _, spec := range []RandomSpec{{Nodes: 10, D: 1, Racks: 3}, {Nodes: 6, D: 1, Racks: -1}, {Nodes: 6, D: 1, Racks: 4}} {
		if _, err := RandomPatterns(cl, spec, 1, 1); err == nil {
			t.Errorf("%+v accepted", spec)
		}
	}
}

// Patterns refuses designs outside the ceilings before drawing anything, naming the key as a
// truth's JSON spells it (simulate's truth holds Designs): a negative count would panic in
// make, a huge one allocate gigabytes, forty edges never finish drawing.
func TestDesignsBounds(t *testing.T) {
	cl, err := cluster.LoadNamed("ccpe-testbed")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		d    Designs
		want string
	}{
		{Designs{Random: []RandomDesign{{Nodes: 4, D: 1, Patterns: -1}}}, "catalogue: random[0].patterns: want 1 to 10000 patterns, got -1"},
		{Designs{FairnessMaxK: 1_000_000, Bytes: 1}, "catalogue: fairness_max_k: want 0 to 256 concurrent transfers, got 1000000"},
		{Designs{BidirMax: -1, Bytes: 1}, "catalogue: bidir_max: want 0 to 32 transfers each way, got -1"},
		{Designs{StaticSync: StaticSyncDesign{Graphs: 2, MaxEdges: 40}, Bytes: 1}, "catalogue: static_sync.max_edges: want 2 to 6"},
		{Designs{SweepSizes: []int64{-1}}, "catalogue: sweep_sizes: want sizes of 1 to 4294967296 bytes, got -1"},
		{Designs{FairnessMaxK: 3}, "catalogue: calibration_bytes: want the message size of the fairness"},
	} {
		pats, err := c.d.Patterns(cl)
		if err == nil || !badinput.Is(err) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %d patterns, %v; want bad input saying %q", c.d, len(pats), err, c.want)
		}
	}
}
