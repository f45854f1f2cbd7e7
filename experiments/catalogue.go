package experiments

import (
	"fmt"
	"math"
	"os"
	"time"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/internal/badinput"
	"github.com/commcal/commcal/internal/stricttoml"
)

// Catalogue is everything a campaign measures: the concurrent-transfer designs shared with
// the simulator (Designs) and the point-to-point experiments of the LMO model,
// the scatter/gather sweeps, the ping-pong pairs of the L benchmark and collectives run as
// the rounds of named algorithms, with the repetition discipline. A TOML file gives it (ReadCatalogue); DefaultCatalogue and QuickCatalogue are
// the built-in ones.
type Catalogue struct {
	Designs
	LMO         LMODesign
	Collectives CollectiveDesign
	PingPong    PingPongDesign
	Schedules   []ScheduleDesign
	Reps        Repetitions
}

// LMODesign sets up the experiments of the LMO model (Lastovetsky et al.): empty round trips
// and round trips with a message between every pair of its nodes, and one-to-two experiments
// for every root and pair of others.
type LMODesign struct {
	// Bytes is the message size of the round trips with a message and the one-to-two
	// experiments; 0: no LMO
	Bytes int64
	// Nodes is how many nodes take part: 0, every node; n, a sample of n spread over the
	// racks in turn (the LMO experiments grow as n² and n³).
	Nodes int
	// Sequential runs one pair (one triplet) at a time instead of non-overlapping pairs
	// (triplets) together, as MPIBlib does.
	Sequential bool
}

// CollectiveDesign sets up the linear scatter and gather sweeps from a root to every LMO
// node (the thresholds S, M1, M2 of Lastovetsky et al.).
type CollectiveDesign struct {
	// Sizes are the message sizes per non-root process (at least 1 byte); none: no sweeps.
	Sizes []int64
}

// PingPongDesign sets up the concurrent ping-pong pairs across the bisection (the L micro-benchmark of a thesis appendix, §A.5).
type PingPongDesign struct {
	Pairs []int   // pair counts
	Sizes []int64 // message sizes (at least 1 byte)
}

// Repetitions is the benchmark's discipline: repetitions until every measure's 95% interval
// is within MaxRelWidth of its mean, at least Min and at most Max of them, and no more once a
// pattern has taken Budget (0: no budget) if Min are done.
type Repetitions struct {
	Min, Max    int
	MaxRelWidth float64
	Budget      time.Duration
	// Timeout bounds one repetition.
	Timeout time.Duration
}

// LogSizes lists sizes from lo to hi, steps per doubling, rounded to whole bytes, increasing.
func LogSizes(lo, hi int64, steps int) []int64 {
	var out []int64
	for k := 0; ; k++ {
		v := int64(float64(lo)*math.Exp2(float64(k)/float64(steps)) + 0.5)
		if v > hi {
			return out
		}
		if len(out) == 0 || v > out[len(out)-1] {
			out = append(out, v)
		}
	}
}

var defaultReps = Repetitions{Min: 3, Max: 10, MaxRelWidth: 0.02, Timeout: 2 * time.Minute}

// DefaultCatalogue is every experiment at a size a 2-core machine measures an emulated
// 2 × 5 cluster with in about twenty minutes.
var DefaultCatalogue = Catalogue{
	Designs: Designs{
		SweepSizes: LogSizes(1<<10, 8<<20, 1),
		Bytes:      2 << 20, FairnessMaxK: 6, BidirMax: 3, ExchangeMaxK: 2, CycleMaxK: 4, IncastMaxK: 4, OutcastMaxK: 4,
		StaticSync: StaticSyncDesign{Graphs: 6, MaxEdges: 3},
		Random: []RandomDesign{
			{Nodes: 4, D: 1, Patterns: 4, Sizes: defaultRandomSizes}, {Nodes: 10, D: 1, Patterns: 4, Sizes: defaultRandomSizes},
			{Nodes: 4, D: 2, Patterns: 4, Sizes: defaultRandomSizes}, {Nodes: 10, D: 2, Patterns: 4, Sizes: defaultRandomSizes},
			{Nodes: 10, D: 3, Patterns: 4, Sizes: defaultRandomSizes},
		},
		Seed: 1,
	},
	LMO:         LMODesign{Bytes: 64 << 10},
	Collectives: CollectiveDesign{Sizes: LogSizes(1<<10, 1<<20, 2)},
	PingPong:    PingPongDesign{Pairs: []int{1, 2, 4}, Sizes: LogSizes(1<<10, 256<<10, 1)},
	Schedules: []ScheduleDesign{
		{Op: "alltoall", Algorithm: "auto:openmpi", Procs: []int{4, 8}, Sizes: []int64{1 << 20}},
		{Op: "allgather", Algorithm: "auto:openmpi", Procs: []int{4, 8}, Sizes: []int64{1 << 20}},
		{Op: "bcast", Algorithm: "auto:openmpi", Procs: []int{4, 8}, Sizes: []int64{1 << 20}},
	},
	Reps: defaultReps,
}

var defaultRandomSizes = []int64{1 << 20, 2 << 20, 4 << 20}

// QuickCatalogue is a little of every experiment, measured in seconds: for smoke tests.
var QuickCatalogue = Catalogue{
	Designs: Designs{SweepSizes: []int64{64 << 10, 1 << 20}, Bytes: 1 << 20, FairnessMaxK: 2, BidirMax: 1, IncastMaxK: 2, OutcastMaxK: 2,
		Random: []RandomDesign{{Nodes: 4, D: 1, Patterns: 2, Sizes: []int64{1 << 20}}}, Seed: 1},
	LMO:         LMODesign{Bytes: 16 << 10},
	Collectives: CollectiveDesign{Sizes: []int64{1 << 10, 64 << 10}},
	PingPong:    PingPongDesign{Pairs: []int{1}, Sizes: []int64{1 << 10, 16 << 10}},
	Schedules:   []ScheduleDesign{{Op: "alltoall", Algorithm: "pairwise", Procs: []int{4}, Sizes: []int64{256 << 10}}},
	Reps:        Repetitions{Min: 2, Max: 3, MaxRelWidth: 0.02, Timeout: time.Minute},
}

// catalogueFile is the TOML form of a catalogue.
type catalogueFile struct {
	Seed  *int64 `toml:"seed"`
	Sweep *struct {
		Sizes []int64 `toml:"sizes"`
	} `toml:"sweep"`
	Calibration *struct {
		Bytes int64 `toml:"bytes"`
	} `toml:"calibration"`
	Fairness *struct {
		MaxK int `toml:"max_k"`
	} `toml:"fairness"`
	Bidirectional *struct {
		Max int `toml:"max"`
	} `toml:"bidirectional"`
	Exchanges *struct {
		MaxK int `toml:"max_k"`
	} `toml:"exchanges"`
	Cycles *struct {
		MaxK int `toml:"max_k"`
	} `toml:"cycles"`
	Incast *struct {
		MaxK int `toml:"max_k"`
	} `toml:"incast"`
	Outcast *struct {
		MaxK int `toml:"max_k"`
	} `toml:"outcast"`
	StaticSync *struct {
		Graphs   int `toml:"graphs"`
		MaxEdges int `toml:"max_edges"`
	} `toml:"static_sync"`
	Random []struct {
		Nodes    int     `toml:"nodes"`
		D        int     `toml:"d"`
		Patterns int     `toml:"patterns"`
		Sizes    []int64 `toml:"sizes"`
		// Racks the |N| nodes are taken from, equally (default 2, the paper's platforms).
		Racks int    `toml:"racks"`
		Tag   string `toml:"tag"`
		// Role "calibration" measures the patterns for model selection (random_calibration);
		// "held-out" (the default) for validation.
		Role string `toml:"role"`
	} `toml:"random"`
	LMO *struct {
		Bytes      int64 `toml:"bytes"`
		Nodes      int   `toml:"nodes"`
		Sequential bool  `toml:"sequential"`
	} `toml:"lmo"`
	Collectives *struct {
		Sizes []int64 `toml:"sizes"`
	} `toml:"collectives"`
	PingPong *struct {
		Pairs []int   `toml:"pairs"`
		Sizes []int64 `toml:"sizes"`
	} `toml:"pingpong"`
	Schedules []struct {
		Op        string  `toml:"op"`
		Algorithm string  `toml:"algorithm"`
		Procs     []int   `toml:"procs"`
		Sizes     []int64 `toml:"sizes"`
	} `toml:"schedules"`
	Repetitions *struct {
		Min       int      `toml:"min"`
		Max       int      `toml:"max"`
		CIPercent *float64 `toml:"ci_percent"`
		Budget    string   `toml:"budget"`
		Timeout   string   `toml:"timeout"`
	} `toml:"repetitions"`
}

// ReadCatalogue reads a catalogue file. A section left out measures nothing of its kind
// (an experiment is chosen by writing its section); [repetitions] left out keeps the default
// discipline. Unknown keys and impossible values are errors naming the key.
func ReadCatalogue(path string) (*Catalogue, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, badinput.Errorf(path, "%w", err)
	}
	c, err := ParseCatalogue(data)
	if err != nil {
		return nil, badinput.Errorf(path, "%w", err)
	}
	return c, nil
}

// ParseCatalogue parses the TOML form of a catalogue (ReadCatalogue).
func ParseCatalogue(data []byte) (*Catalogue, error) {
	var f catalogueFile
	if err := stricttoml.Decode(data, &f); err != nil {
		return nil, fmt.Errorf("catalogue: %w", err)
	}
	c := &Catalogue{Reps: defaultReps}
	c.Seed = 1
	if f.Seed != nil {
		if *f.Seed < 0 {
			return nil, bad("seed", "a seed of at least 0", *f.Seed)
		}
		c.Seed = uint64(*f.Seed)
	}
	if f.Sweep != nil {
		c.SweepSizes = f.Sweep.Sizes
	}
	if f.Calibration != nil {
		c.Bytes = f.Calibration.Bytes
	}
	if f.Fairness != nil {
		c.FairnessMaxK = f.Fairness.MaxK
	}
	if f.Bidirectional != nil {
		c.BidirMax = f.Bidirectional.Max
	}
	if f.Exchanges != nil {
		c.ExchangeMaxK = f.Exchanges.MaxK
	}
	if f.Cycles != nil {
		c.CycleMaxK = f.Cycles.MaxK
	}
	if f.Incast != nil {
		c.IncastMaxK = f.Incast.MaxK
	}
	if f.Outcast != nil {
		c.OutcastMaxK = f.Outcast.MaxK
	}
	if f.StaticSync != nil {
		c.StaticSync = StaticSyncDesign{Graphs: f.StaticSync.Graphs, MaxEdges: f.StaticSync.MaxEdges}
	}
	for i, r := range f.Random {
		if r.Role != "" && r.Role != "calibration" && r.Role != "held-out" {
			return nil, fmt.Errorf("catalogue: random[%d].role: %q, want \"held-out\" (the default) or \"calibration\"", i, r.Role)
		}
		c.Random = append(c.Random, RandomDesign{Nodes: r.Nodes, D: r.D, Patterns: r.Patterns, Sizes: r.Sizes, Racks: r.Racks, Tag: r.Tag,
			Calibration: r.Role == "calibration"})
	}
	if f.LMO != nil {
		c.LMO = LMODesign{Bytes: f.LMO.Bytes, Nodes: f.LMO.Nodes, Sequential: f.LMO.Sequential}
	}
	if f.Collectives != nil {
		c.Collectives.Sizes = f.Collectives.Sizes
	}
	if f.PingPong != nil {
		c.PingPong = PingPongDesign{Pairs: f.PingPong.Pairs, Sizes: f.PingPong.Sizes}
	}
	for _, d := range f.Schedules {
		c.Schedules = append(c.Schedules, ScheduleDesign(d))
	}
	if r := f.Repetitions; r != nil {
		if r.Min != 0 {
			c.Reps.Min = r.Min
		}
		if r.Max != 0 {
			c.Reps.Max = r.Max
		}
		if r.CIPercent != nil {
			c.Reps.MaxRelWidth = *r.CIPercent / 100
		}
		for _, d := range []struct {
			key, s string
			dst    *time.Duration
		}{{"repetitions.budget", r.Budget, &c.Reps.Budget}, {"repetitions.timeout", r.Timeout, &c.Reps.Timeout}} {
			if d.s == "" {
				continue
			}
			v, err := time.ParseDuration(d.s)
			if err != nil || v <= 0 {
				return nil, fmt.Errorf("catalogue: %s: want a positive duration such as \"30s\", got %q", d.key, d.s)
			}
			*d.dst = v
		}
	}
	if err := c.check(); err != nil {
		return nil, err
	}
	return c, nil
}

// LMONodes picks the nodes of the LMO experiments and the collective sweeps: every node, or
// n of them taken from the racks in turn.
func (c *Catalogue) LMONodes(cl *cluster.Cluster) []string {
	all := cl.Nodes()
	if c.LMO.Nodes == 0 || c.LMO.Nodes >= len(all) {
		out := make([]string, len(all))
		for i, n := range all {
			out[i] = n.Name
		}
		return out
	}
	var racks [][]string
	for r := range cl.Racks() {
		racks = append(racks, cl.RackNodes(r))
	}
	var out []string
	for k := 0; len(out) < c.LMO.Nodes; k++ {
		for _, r := range racks {
			if k < len(r) && len(out) < c.LMO.Nodes {
				out = append(out, r[k])
			}
		}
	}
	return out
}
