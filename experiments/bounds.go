package experiments

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/internal/badinput"
)

// Ceilings of a catalogue's counts and sizes. Every one is checked when a catalogue is read
// (ParseCatalogue) or its designs compiled (Designs.Patterns), before anything is drawn or
// allocated, and the message names the key and the ceiling: a count that would allocate
// gigabytes or spin for hours is refused, not attempted.
const (
	// MaxMessageBytes bounds every message size a campaign sends (sweep, calibration, random,
	// LMO and collective sizes): 4 GiB take 34 s on Gigabit Ethernet and 0.3 s at 100 Gbit/s,
	// far into the bandwidth regime every model is fitted on; a larger message measures
	// nothing new and only risks the repetition's timeout.
	MaxMessageBytes = 4 << 30
	// MaxPingPongBytes bounds the ping-pong sizes: each side of a pair copies the message it
	// receives into a buffer of its size (the unpacking of the L benchmark), and an emulated
	// cluster holds every node on one machine, two such buffers per pair.
	MaxPingPongBytes = 64 << 20
	// MaxSizes bounds a list of sizes or pair counts: four sizes per doubling from 1 byte to
	// MaxMessageBytes are 129.
	MaxSizes = 256
	// MaxFairnessK bounds fairness.max_k, the most concurrent transfers between one pair of
	// nodes: twenty times the CCPE 2014 paper's 12; the designs grow as k² transfers.
	MaxFairnessK = 256
	// MaxBidir bounds bidirectional.max: five times the simulator's 6; the designs grow as
	// max³ transfers (max² patterns of up to 2·max transfers).
	MaxBidir = 32
	// MaxStaticSyncGraphs bounds static_sync.graphs: forty times the simulator's 6; each graph
	// brings up to 2^max_edges − 1 connected sub-graphs.
	MaxStaticSyncGraphs = 256
	// MaxStaticSyncEdges bounds static_sync.max_edges: a graph is measured with every
	// connected sub-graph (up to 63 at six edges), and since at most three communications
	// leave a node, six is what two nodes hold, so that a graph of any size can be drawn on
	// every cluster (more could not be drawn on a small one, and drawing would not end).
	MaxStaticSyncEdges = 6
	// MaxRandomDesigns bounds how many random designs a catalogue lists: ten times the
	// largest catalogue of the project's campaigns (22).
	MaxRandomDesigns = 256
	// MaxRandomDraws bounds a random design's d, the destinations each node draws: twenty
	// times the CCPE 2014 paper's largest (3).
	MaxRandomDraws = 64
	// MaxRandomPatterns bounds the patterns of one random design (or one random workload):
	// the paper measured 39 per setting.
	MaxRandomPatterns = 10_000
	// MaxLMONodes bounds the nodes of the LMO experiments and collective sweeps: the
	// one-to-two experiments grow as n³ (n(n−1)(n−2)/2 triplets: 124,992 at 64 nodes).
	MaxLMONodes = 64
	// MaxReps bounds repetitions.min and .max (and measure's --max-reps): the stopping rule's
	// interval narrows as 1/√n, so a measure that has not met it after a thousand repetitions
	// is noise, not too few samples.
	MaxReps = 1000
	// MaxRepDuration bounds repetitions.budget and repetitions.timeout: a day, longer than a
	// nightly campaign runs in all.
	MaxRepDuration = 24 * time.Hour
	// MaxCampaignTransfers bounds the transfers one repetition of every measurement of a
	// catalogue opens, summed over its designs and estimated from its counts before anything
	// is drawn: a million connections, each held in memory as a pattern's transfer and a
	// program's connection and threads (hundreds of megabytes in all), and opened as a TCP
	// connection every repetition — days of measurement.
	MaxCampaignTransfers = 1_000_000
)

// bad is the error of a catalogue key whose value is out of its range: bad input, whether the
// catalogue came from a file or from a truth's designs.
func bad(key, want string, got any) error {
	return badinput.Errorf("", "catalogue: %s: want %s, got %v", key, want, got)
}

// checkSizes checks a list of message sizes: at most MaxSizes of them, each in [1, most]
// bytes, and each once when distinct is set (a size given twice would measure the same
// pattern twice under one ID).
func checkSizes(key string, xs []int64, most int64, distinct bool) error {
	if len(xs) > MaxSizes {
		return bad(key, fmt.Sprintf("at most %d sizes", MaxSizes), len(xs))
	}
	for i, x := range xs {
		if x < 1 || x > most {
			return bad(key, fmt.Sprintf("sizes of 1 to %d bytes", most), x)
		}
		if distinct && slices.Contains(xs[:i], x) {
			return bad(key, "each size once", fmt.Sprintf("%d twice", x))
		}
	}
	return nil
}

// designKeys name the fields of Designs as a file spells them: the catalogue's TOML and a
// truth's JSON name the same fields differently.
type designKeys struct {
	sweep, bytes, fairness, bidir, exchange, cycle, incast, outcast, graphs, edges, random string
}

var (
	tomlKeys = designKeys{"sweep.sizes", "calibration.bytes", "fairness.max_k", "bidirectional.max", "exchanges.max_k", "cycles.max_k",
		"incast.max_k", "outcast.max_k", "static_sync.graphs", "static_sync.max_edges", "random"}
	jsonKeys = designKeys{"sweep_sizes", "calibration_bytes", "fairness_max_k", "bidir_max", "exchange_max_k", "cycle_max_k",
		"incast_max_k", "outcast_max_k", "static_sync.graphs", "static_sync.max_edges", "random"}
)

// check refuses designs outside the ceilings above, naming each field by k.
func (c Designs) check(k designKeys) error {
	if err := checkSizes(k.sweep, c.SweepSizes, MaxMessageBytes, true); err != nil {
		return err
	}
	uses := c.FairnessMaxK > 0 || c.BidirMax > 0 || c.ExchangeMaxK > 0 || c.CycleMaxK > 0 || c.IncastMaxK > 0 || c.OutcastMaxK > 0 || c.StaticSync.Graphs > 0
	switch ss := c.StaticSync; {
	case c.Bytes < 0 || c.Bytes > MaxMessageBytes:
		return bad(k.bytes, fmt.Sprintf("a size of 1 to %d bytes", MaxMessageBytes), c.Bytes)
	case c.FairnessMaxK < 0 || c.FairnessMaxK > MaxFairnessK:
		return bad(k.fairness, fmt.Sprintf("0 to %d concurrent transfers", MaxFairnessK), c.FairnessMaxK)
	case c.BidirMax < 0 || c.BidirMax > MaxBidir:
		return bad(k.bidir, fmt.Sprintf("0 to %d transfers each way", MaxBidir), c.BidirMax)
	case c.ExchangeMaxK < 0 || c.ExchangeMaxK > MaxFairnessK:
		return bad(k.exchange, fmt.Sprintf("0 to %d exchanges at once", MaxFairnessK), c.ExchangeMaxK)
	case c.CycleMaxK < 0 || c.CycleMaxK > MaxFairnessK || c.CycleMaxK%2 != 0:
		return bad(k.cycle, fmt.Sprintf("an even number of pairs from 0 to %d (a cycle joins two pairs)", MaxFairnessK), c.CycleMaxK)
	case c.IncastMaxK < 0 || c.IncastMaxK > MaxFairnessK:
		return bad(k.incast, fmt.Sprintf("0 to %d senders to one node", MaxFairnessK), c.IncastMaxK)
	case c.OutcastMaxK < 0 || c.OutcastMaxK > MaxFairnessK:
		return bad(k.outcast, fmt.Sprintf("0 to %d receivers from one node", MaxFairnessK), c.OutcastMaxK)
	case ss.Graphs < 0 || ss.Graphs > MaxStaticSyncGraphs:
		return bad(k.graphs, fmt.Sprintf("0 to %d graphs", MaxStaticSyncGraphs), ss.Graphs)
	case ss.Graphs > 0 && (ss.MaxEdges < 2 || ss.MaxEdges > MaxStaticSyncEdges):
		return bad(k.edges, fmt.Sprintf("2 to %d communications (a contention graph has at least two)", MaxStaticSyncEdges), ss.MaxEdges)
	case uses && c.Bytes < 1:
		return bad(k.bytes, "the message size of the fairness, bidirectional, exchange, cycle, incast, outcast and static-synchronous designs", c.Bytes)
	case len(c.Random) > MaxRandomDesigns:
		return bad(k.random, fmt.Sprintf("at most %d designs", MaxRandomDesigns), len(c.Random))
	}
	for i, r := range c.Random {
		if err := r.check(fmt.Sprintf("%s[%d]", k.random, i)); err != nil {
			return err
		}
	}
	return checkTransfers(c.transferBounds(k))
}

// check refuses a random design outside the ceilings; key names it (random[i]).
func (r RandomDesign) check(key string) error {
	switch {
	case r.Nodes < 2:
		return bad(key+".nodes", "at least 2 nodes", r.Nodes)
	case r.D < 1 || r.D > MaxRandomDraws:
		return bad(key+".d", fmt.Sprintf("1 to %d destinations per node", MaxRandomDraws), r.D)
	case r.Patterns < 1 || r.Patterns > MaxRandomPatterns:
		return bad(key+".patterns", fmt.Sprintf("1 to %d patterns", MaxRandomPatterns), r.Patterns)
	case r.Racks < 0:
		return bad(key+".racks", "0 (two racks) or a count of racks", r.Racks)
	}
	return checkSizes(key+".sizes", r.Sizes, MaxMessageBytes, false)
}

// transferBound is the most transfers a design's measurements open in one repetition.
type transferBound struct {
	key, how string
	n        float64
}

// transferBounds bounds, design by design, the transfers one repetition of every pattern
// opens, from the counts alone (nothing is drawn): closed forms of the designs' sizes, taking
// no cap of a small cluster into account. Floating point, so that no product overflows.
func (c Designs) transferBounds(k designKeys) []transferBound {
	f := func(n int) float64 { return float64(n) }
	K, M := f(c.FairnessMaxK), f(c.BidirMax)
	out := []transferBound{
		{k.sweep, "two path classes × sizes", 2 * f(len(c.SweepSizes))},
		{k.fairness, "k(k+1), designs A and B", K * (K + 1)},
		{k.bidir, "2·max²(max+1), NIC and backbone designs", 2 * M * M * (M + 1)},
		{k.exchange, "k(k+1), 2k transfers for k = 1…max_k", f(c.ExchangeMaxK) * f(c.ExchangeMaxK+1)},
		{k.cycle, "k(k+1), 2k transfers for k = 2, 4, …, max_k", f(c.CycleMaxK) * f(c.CycleMaxK+1)},
		{k.incast, "k(k+1)/2, k transfers for k = 2…max_k", f(c.IncastMaxK) * f(c.IncastMaxK+1) / 2},
		{k.outcast, "k(k+1)/2, k transfers for k = 2…max_k", f(c.OutcastMaxK) * f(c.OutcastMaxK+1) / 2},
	}
	if ss := c.StaticSync; ss.Graphs > 0 {
		e := f(ss.MaxEdges)
		out = append(out, transferBound{k.graphs, "graphs × (2^max_edges − 1) sub-graphs × max_edges", f(ss.Graphs) * (math.Exp2(e) - 1) * e})
	}
	for i, r := range c.Random {
		out = append(out, transferBound{fmt.Sprintf("%s[%d]", k.random, i), "patterns × nodes × d", f(r.Patterns) * f(r.Nodes) * f(r.D)})
	}
	return out
}

// checkTransfers refuses bounds whose sum is above MaxCampaignTransfers, naming the largest.
func checkTransfers(bounds []transferBound) error {
	total := 0.0
	var most transferBound
	for _, b := range bounds {
		total += b.n
		if b.n > most.n {
			most = b
		}
	}
	if total <= MaxCampaignTransfers {
		return nil
	}
	return badinput.Errorf("", "catalogue: %s: up to %.4g transfers a repetition (%s), %.4g with the other designs; want at most %d in all",
		most.key, most.n, most.how, total, MaxCampaignTransfers)
}

// check refuses a catalogue no campaign can run: values outside the ceilings that do not
// depend on the cluster (CheckCluster checks the others), and a catalogue that measures
// nothing.
func (c *Catalogue) check() error {
	if err := c.Designs.check(tomlKeys); err != nil {
		return err
	}
	r := c.Reps
	switch {
	case c.LMO.Bytes < 0 || c.LMO.Bytes > MaxMessageBytes:
		return bad("lmo.bytes", fmt.Sprintf("a size of 1 to %d bytes, or 0 for no LMO experiments", MaxMessageBytes), c.LMO.Bytes)
	case c.LMO.Nodes < 0 || c.LMO.Nodes == 1 || c.LMO.Nodes == 2 || c.LMO.Nodes > MaxLMONodes:
		return bad("lmo.nodes", fmt.Sprintf("0 (every node) or 3 to %d (the one-to-two experiments grow as n³)", MaxLMONodes), c.LMO.Nodes)
	case r.Min < 2 || r.Min > MaxReps:
		return bad("repetitions.min", fmt.Sprintf("2 to %d (an interval needs two)", MaxReps), r.Min)
	case r.Max < r.Min || r.Max > MaxReps:
		return bad("repetitions.max", fmt.Sprintf("repetitions.min to %d", MaxReps), r.Max)
	case !(r.MaxRelWidth > 0 && r.MaxRelWidth < 1):
		return bad("repetitions.ci_percent", "a percentage in (0, 100)", 100*r.MaxRelWidth)
	case r.Budget < 0 || r.Budget > MaxRepDuration:
		return bad("repetitions.budget", "a duration of at most "+MaxRepDuration.String(), r.Budget)
	case r.Timeout < 0 || r.Timeout > MaxRepDuration:
		return bad("repetitions.timeout", "a duration of at most "+MaxRepDuration.String(), r.Timeout)
	case len(c.PingPong.Pairs) > 0 != (len(c.PingPong.Sizes) > 0):
		return bad("pingpong", "both pairs and sizes (either alone measures nothing)",
			fmt.Sprintf("%d pair counts and %d sizes", len(c.PingPong.Pairs), len(c.PingPong.Sizes)))
	}
	if err := checkSizes("collectives.sizes", c.Collectives.Sizes, MaxMessageBytes, true); err != nil {
		return err
	}
	if err := checkSizes("pingpong.sizes", c.PingPong.Sizes, MaxPingPongBytes, true); err != nil {
		return err
	}
	if err := checkPairs(c.PingPong.Pairs); err != nil {
		return err
	}
	if len(c.Schedules) > MaxScheduleDesigns {
		return bad("schedules", fmt.Sprintf("at most %d schedule designs", MaxScheduleDesigns), len(c.Schedules))
	}
	for i, d := range c.Schedules {
		if err := d.check(i); err != nil {
			return err
		}
	}
	if c.empty() {
		return badinput.Errorf("", "catalogue: measures nothing: write the table of at least one experiment "+
			"(sweep, fairness, bidirectional, exchanges, cycles, incast, outcast, static_sync, random, lmo, collectives, pingpong, schedules)")
	}
	return checkTransfers(c.transferBounds(c.LMO.Nodes))
}

// checkPairs checks the ping-pong pair counts: at most MaxSizes of them, each at least 1
// and given once (the cluster bounds them further: pairs across its bisection).
func checkPairs(pairs []int) error {
	if len(pairs) > MaxSizes {
		return bad("pingpong.pairs", fmt.Sprintf("at most %d pair counts", MaxSizes), len(pairs))
	}
	for i, p := range pairs {
		if p < 1 {
			return bad("pingpong.pairs", "pair counts of at least 1", p)
		}
		if slices.Contains(pairs[:i], p) {
			return bad("pingpong.pairs", "each pair count once", fmt.Sprintf("%d twice", p))
		}
	}
	return nil
}

// empty says whether the catalogue measures nothing at all.
func (c *Catalogue) empty() bool {
	d := c.Designs
	return len(d.SweepSizes) == 0 && d.FairnessMaxK == 0 && d.BidirMax == 0 && d.ExchangeMaxK == 0 && d.CycleMaxK == 0 &&
		d.IncastMaxK == 0 && d.OutcastMaxK == 0 && d.StaticSync.Graphs == 0 && len(d.Random) == 0 &&
		c.LMO.Bytes == 0 && len(c.Collectives.Sizes) == 0 && len(c.PingPong.Sizes) == 0 && len(c.Schedules) == 0
}

// transferBounds adds to the designs' bounds those of the LMO experiments, the collective
// sweeps and the ping-pong pairs; lmoNodes is how many nodes the LMO experiments take (0 when
// not known: they are then left out).
func (c *Catalogue) transferBounds(lmoNodes int) []transferBound {
	out := c.Designs.transferBounds(tomlKeys)
	n := float64(lmoNodes)
	if c.LMO.Bytes > 0 {
		out = append(out, transferBound{"lmo", "round trips n(n−1) and one-to-two n(n−1)(n−2)", n*(n-1) + n*(n-1)*(n-2)})
	}
	if n > 0 {
		out = append(out, transferBound{"collectives.sizes", "scatter and gather × sizes × (n − 1)", 2 * float64(len(c.Collectives.Sizes)) * (n - 1)})
	}
	pairs := 0.0
	for _, p := range c.PingPong.Pairs {
		pairs += float64(p)
	}
	out = append(out, transferBound{"pingpong", "pairs × sizes", pairs * float64(len(c.PingPong.Sizes))})
	// A schedule's program opens one connection per pair of ranks that exchange, however many
	// transfers its rounds hold (a broadcast's scatter and ring allgather hold more than an
	// all-to-all's n(n − 1)): at most n(n − 1)/2 among n ranks. Each communicator size and
	// message size of a design counts n(n − 1) here, twice that.
	conns := 0.0
	for _, d := range c.Schedules {
		for _, p := range d.Procs {
			conns += float64(p) * float64(p-1) * float64(len(d.Sizes))
		}
	}
	return append(out, transferBound{"schedules", "n(n − 1), twice the most connections among n ranks, × sizes", conns})
}

// CheckCluster checks the ceilings that depend on the cluster, before the catalogue's
// measurements are compiled on it: the LMO experiments and collective sweeps take at most
// MaxLMONodes nodes (lmo.nodes = 0 takes every node), a schedule design's communicators at
// most the cluster's nodes (one rank per node), and the transfers of one repetition of every
// measurement, with the LMO nodes known, stay within MaxCampaignTransfers.
func (c *Catalogue) CheckCluster(cl *cluster.Cluster) error {
	n := 0
	if c.LMO.Bytes > 0 || len(c.Collectives.Sizes) > 0 {
		n = len(cl.Nodes())
		if c.LMO.Nodes > 0 {
			n = min(n, c.LMO.Nodes)
		}
		if n > MaxLMONodes {
			return bad("lmo.nodes", fmt.Sprintf("3 to %d nodes for the LMO experiments and collective sweeps (the one-to-two experiments grow as n³)", MaxLMONodes),
				fmt.Sprintf("0, every node of cluster %s: %d", cl.Name(), n))
		}
	}
	for i, d := range c.Schedules {
		for _, p := range d.Procs {
			if p > len(cl.Nodes()) {
				return bad(fmt.Sprintf("schedules[%d].procs", i), fmt.Sprintf("at most the %d nodes of cluster %s (one rank per node)", len(cl.Nodes()), cl.Name()), p)
			}
		}
	}
	return checkTransfers(c.transferBounds(n))
}
