package experiments

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/commcal/commcal/cluster"
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
		{"lmo = { bytes = 10, nodes = 2 }", "lmo.nodes: want 0 (every node) or 3 to 64"},
		{"collectives = { sizes = [0, 10] }", "collectives.sizes: want sizes of 1 to 4294967296 bytes, got 0"},
		{"fairness = { max_k = 3 }", "calibration.bytes"},
		{"repetitions = { min = 1 }", "repetitions.min: want 2 to 1000"},
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

// Every count, size and repetition field of a catalogue is bounded before anything is drawn
// or allocated, and the message names the key and the ceiling; a catalogue that measures
// nothing is refused. Each case would, unchecked, panic (a negative count), allocate
// gigabytes or spin (counts of 10⁶–10⁸), or run a campaign nobody meant.
func TestCatalogueBounds(t *testing.T) {
	sweep := "sweep = { sizes = [1024] }\n"
	for _, tc := range []struct{ name, in, want string }{
		{"empty", "", "catalogue: measures nothing: write the table of at least one experiment"},
		{"only repetitions", "repetitions = { min = 3 }", "catalogue: measures nothing"},
		{"negative seed", "seed = -1\n" + sweep, "catalogue: seed: want a seed of at least 0, got -1"},
		{"negative patterns", "random = [ { nodes = 4, d = 1, patterns = -1 } ]", "catalogue: random[0].patterns: want 1 to 10000 patterns, got -1"},
		{"no patterns", "random = [ { nodes = 4, d = 1, patterns = 0 } ]", "catalogue: random[0].patterns: want 1 to 10000 patterns, got 0"},
		{"10⁸ patterns", "random = [ { nodes = 4, d = 1, patterns = 100000000 } ]", "random[0].patterns: want 1 to 10000 patterns, got 100000000"},
		{"one node", "random = [ { nodes = 1, d = 1, patterns = 1 } ]", "random[0].nodes: want at least 2 nodes, got 1"},
		{"d of 10⁶", "random = [ { nodes = 4, d = 1000000, patterns = 1 } ]", "random[0].d: want 1 to 64 destinations per node, got 1000000"},
		{"random transfers", "random = [ { nodes = 60000, d = 64, patterns = 10000 } ]",
			"catalogue: random[0]: up to 3.84e+10 transfers a repetition (patterns × nodes × d), 3.84e+10 with the other designs; want at most 1000000 in all"},
		{"random sizes of 10¹⁵ bytes", "random = [ { nodes = 4, d = 1, patterns = 1, sizes = [1000000000000000] } ]",
			"random[0].sizes: want sizes of 1 to 4294967296 bytes, got 1000000000000000"},
		{"too many designs", "random = [" + strings.Repeat("{ nodes = 4, d = 1, patterns = 1 },", 257) + "]", "catalogue: random: want at most 256 designs, got 257"},
		{"sweep of 10¹⁵ bytes", "sweep = { sizes = [1000000000000000] }", "sweep.sizes: want sizes of 1 to 4294967296 bytes, got 1000000000000000"},
		{"sweep size twice", "sweep = { sizes = [1024, 2048, 1024] }", "sweep.sizes: want each size once, got 1024 twice"},
		{"too many sizes", "sweep = { sizes = [" + strings.Repeat("1,", 257) + "] }", "sweep.sizes: want at most 256 sizes, got 257"},
		{"negative max_k", "fairness = { max_k = -3 }\ncalibration = { bytes = 1 }", "fairness.max_k: want 0 to 256 concurrent transfers, got -3"},
		{"max_k of 10⁶", "fairness = { max_k = 1000000 }\ncalibration = { bytes = 1 }", "fairness.max_k: want 0 to 256 concurrent transfers, got 1000000"},
		{"negative bidirectional", "bidirectional = { max = -1 }\ncalibration = { bytes = 1 }" + "\n" + sweep, "bidirectional.max: want 0 to 32 transfers each way, got -1"},
		{"bidirectional of 10⁷", "bidirectional = { max = 10000000 }\ncalibration = { bytes = 1 }", "bidirectional.max: want 0 to 32 transfers each way, got 10000000"},
		{"negative graphs", "static_sync = { graphs = -1, max_edges = 3 }\ncalibration = { bytes = 1 }\n" + sweep, "static_sync.graphs: want 0 to 256 graphs, got -1"},
		{"40 edges", "static_sync = { graphs = 2, max_edges = 40 }\ncalibration = { bytes = 1 }", "static_sync.max_edges: want 2 to 6 communications (a contention graph has at least two), got 40"},
		{"graphs without edges", "static_sync = { graphs = 2 }\ncalibration = { bytes = 1 }", "static_sync.max_edges: want 2 to 6"},
		{"negative calibration bytes", "calibration = { bytes = -5 }\n" + sweep, "calibration.bytes: want a size of 1 to 4294967296 bytes, got -5"},
		{"negative lmo bytes", "lmo = { bytes = -1 }", "lmo.bytes: want a size of 1 to 4294967296 bytes, or 0 for no LMO experiments, got -1"},
		{"lmo of 10⁴ nodes", "lmo = { bytes = 1024, nodes = 10000 }", "lmo.nodes: want 0 (every node) or 3 to 64 (the one-to-two experiments grow as n³), got 10000"},
		{"collective size twice", "collectives = { sizes = [8, 8] }", "collectives.sizes: want each size once, got 8 twice"},
		{"pingpong of 1 GiB", "pingpong = { pairs = [1], sizes = [1073741824] }", "pingpong.sizes: want sizes of 1 to 67108864 bytes, got 1073741824"},
		{"pingpong pairs without sizes", "pingpong = { pairs = [1, 2] }\n" + sweep, "catalogue: pingpong: want both pairs and sizes (either alone measures nothing), got 2 pair counts and 0 sizes"},
		{"pingpong pair count twice", "pingpong = { pairs = [2, 2], sizes = [8] }", "pingpong.pairs: want each pair count once, got 2 twice"},
		{"pingpong transfers", "pingpong = { pairs = [100000000], sizes = [8] }", "catalogue: pingpong: up to 1e+08 transfers a repetition (pairs × sizes)"},
		{"schedule algorithm", `schedules = [ { op = "bcast", algorithm = "pairwise", procs = [4], sizes = [8] } ]`,
			`catalogue: schedules[0].algorithm: want auto:openmpi, auto:mpich or one of bcast's algorithms (linear, `},
		{"schedule library", `schedules = [ { op = "alltoall", algorithm = "auto:lam", procs = [4], sizes = [8] } ]`,
			`catalogue: schedules[0].algorithm: want auto:openmpi, auto:mpich or one of alltoall's algorithms`},
		{"schedule of one rank", `schedules = [ { op = "alltoall", algorithm = "pairwise", procs = [1], sizes = [8] } ]`,
			"catalogue: schedules[0].procs: want communicator sizes of 2 to 256 ranks, got 1"},
		{"too many schedule designs", "schedules = [" + strings.Repeat(`{ op = "alltoall", algorithm = "pairwise", procs = [4], sizes = [8] },`, 257) + "]",
			"catalogue: schedules: want at most 256 schedule designs, got 257"},
		{"schedule transfers", `schedules = [ { op = "alltoall", algorithm = "pairwise", procs = [256], sizes = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16] } ]`,
			"catalogue: schedules: up to 1.044e+06 transfers a repetition"},
		{"10⁸ repetitions", "repetitions = { max = 100000000 }\n" + sweep, "repetitions.max: want repetitions.min to 1000, got 100000000"},
		{"a year's timeout", `repetitions = { timeout = "8760h" }` + "\n" + sweep, "repetitions.timeout: want a duration of at most 24h0m0s, got 8760h0m0s"},
		{"a year's budget", `repetitions = { budget = "8760h" }` + "\n" + sweep, "repetitions.budget: want a duration of at most 24h0m0s, got 8760h0m0s"},
	} {
		c, err := ParseCatalogue([]byte(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v (%+v), want %q", tc.name, err, c, tc.want)
		}
		if err != nil && len(err.Error()) > 300 {
			t.Errorf("%s: a message of %d bytes", tc.name, len(err.Error()))
		}
	}
	// The ceilings themselves are accepted.
	in := `sweep = { sizes = [4294967296] }
calibration = { bytes = 4294967296 }
fairness = { max_k = 256 }
static_sync = { graphs = 1, max_edges = 6 }
random = [ { nodes = 100, d = 64, patterns = 100 } ]
lmo = { bytes = 1, nodes = 64 }
pingpong = { pairs = [1], sizes = [67108864] }
repetitions = { min = 1000, max = 1000, budget = "24h", timeout = "24h" }
`
	if _, err := ParseCatalogue([]byte(in)); err != nil {
		t.Errorf("the ceilings: %v", err)
	}
}

// Every catalogue of the project's campaigns is within the ceilings.
func TestProjectCataloguesAreWithinBounds(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "data", "tcp", "catalogues", "*.toml"))
	if len(files) == 0 {
		t.Skip("no catalogues under data/tcp/catalogues")
	}
	for _, f := range files {
		if _, err := ReadCatalogue(f); err != nil {
			t.Error(err)
		}
	}
}

// The ceilings that depend on the cluster: every node of a large cluster for the LMO
// experiments, and the transfers with the LMO nodes known.
func TestCatalogueCheckCluster(t *testing.T) {
	big, err := cluster.New(cluster.Description{Name: "big", NICRateBps: 1e9, Racks: []cluster.Rack{{Name: "A", NodePrefix: "a", NodeCount: 100}}})
	if err != nil {
		t.Fatal(err)
	}
	c := DefaultCatalogue
	if err := c.CheckCluster(big); err == nil || !strings.Contains(err.Error(), "lmo.nodes: want 3 to 64 nodes for the LMO experiments and collective sweeps (the one-to-two experiments grow as n³), got 0, every node of cluster big: 100") {
		t.Errorf("every node of 100: %v", err)
	}
	c.LMO.Nodes = 64
	if err := c.CheckCluster(big); err != nil {
		t.Errorf("64 nodes: %v", err)
	}
	small, err := cluster.LoadNamed("ccpe-testbed")
	if err != nil {
		t.Fatal(err)
	}
	if err := DefaultCatalogue.CheckCluster(small); err != nil {
		t.Errorf("the default catalogue on the testbed: %v", err)
	}
}
