package experiments

import (
	"strings"
	"testing"
	"time"
)

func TestParseCatalogue(t *testing.T) {
	c, err := ParseCatalogue([]byte(`seed = 7
sweep = { sizes = [1024, 65536] }
calibration = { bytes = 2097152 }
fairness = { max_k = 4 }
random = [ { nodes = 10, d = 2, patterns = 15, sizes = [4194304] },
           { nodes = 10, d = 2, patterns = 3, sizes = [4194304], role = "calibration" },
           { nodes = 9, d = 2, patterns = 2, sizes = [4194304], racks = 3 } ]
lmo = { bytes = 65536, nodes = 4, sequential = true }
collectives = { sizes = [1024, 2048] }
pingpong = { pairs = [1, 2], sizes = [1024] }
repetitions = { min = 4, max = 12, ci_percent = 1, budget = "30s", timeout = "1m" }
`))
	if err != nil {
		t.Fatal(err)
	}
	if c.Seed != 7 || len(c.SweepSizes) != 2 || c.Bytes != 2<<20 || c.FairnessMaxK != 4 || c.BidirMax != 0 || len(c.Random) != 3 || c.Random[2].Racks != 3 || c.Random[0].Racks != 0 ||
		c.Random[0].Patterns != 15 || c.Random[0].Calibration || !c.Random[1].Calibration || c.LMO != (LMODesign{Bytes: 65536, Nodes: 4, Sequential: true}) || len(c.Collectives.Sizes) != 2 ||
		len(c.PingPong.Pairs) != 2 || c.Reps != (Repetitions{Min: 4, Max: 12, MaxRelWidth: 0.01, Budget: 30 * time.Second, Timeout: time.Minute}) {
		t.Errorf("parsed %+v", c)
	}
	// A table left out measures nothing of its kind; the repetitions keep their defaults.
	c, err = ParseCatalogue([]byte("sweep = { sizes = [1024] }\n"))
	if err != nil || c.LMO.Bytes != 0 || c.FairnessMaxK != 0 || c.Reps != defaultReps || c.Seed != 1 {
		t.Errorf("%+v, %v", c, err)
	}
	for _, tc := range []struct{ in, want string }{
		{"swep = { sizes = [1] }", `unknown key(s) "swep"`},
		{"lmo = { bytes = 10, nodez = 3 }", `unknown key(s) "lmo.nodez"`},
		{"lmo = { bytes = 10, nodes = 2 }", "lmo.nodes: want 0 (every node) or at least 3"},
		{"collectives = { sizes = [0, 10] }", "collectives.sizes: want sizes of at least 1 byte"},
		{"fairness = { max_k = 3 }", "calibration.bytes"},
		{"repetitions = { min = 1 }", "repetitions.min: want at least 2"},
		{"repetitions = { min = 5, max = 3 }", "repetitions.max"},
		{`repetitions = { budget = "soon" }`, `repetitions.budget: want a positive duration`},
		{"pingpong = { pairs = [0], sizes = [1] }", "pingpong.pairs"},
		{"sweep = [", "catalogue:"},
		{`random = [ { nodes = 4, d = 1, patterns = 1, sizes = [1], role = "train" } ]`, `random[0].role: "train"`},
		{`random = [ { nodes = 4, d = 1, patterns = 1, sizes = [1], racks = -1 } ]`, `random[0].racks: want 0 (two racks) or a count of racks, got -1`},
	} {
		if _, err := ParseCatalogue([]byte(tc.in)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.in, err, tc.want)
		}
	}
}

func TestBuiltInCataloguesAreValid(t *testing.T) {
	for name, c := range map[string]Catalogue{"default": DefaultCatalogue, "quick": QuickCatalogue} {
		if err := c.check(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	// The collective sweep is dense enough for Bai–Perron (h = 15% of the points, ≥ 2 per
	// segment) to place a break: at least 14 sizes.
	if n := len(DefaultCatalogue.Collectives.Sizes); n < 14 {
		t.Errorf("default collective sweep has %d sizes", n)
	}
}

func TestLogSizes(t *testing.T) {
	got := LogSizes(1024, 8192, 2)
	want := []int64{1024, 1448, 2048, 2896, 4096, 5793, 8192}
	if len(got) != len(want) {
		t.Fatalf("%v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("%v, want %v", got, want)
		}
	}
}
