package experiments

import (
	"fmt"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/contention"
)

// Designs is a set of experiment designs, the one description of what to run that both
// `commcal measure` (which measures its patterns over TCP) and the simulator (which draws
// their times from a ground-truth model, and embeds the catalogue in truth.json) use.
// Patterns turns it into patterns; the same catalogue and cluster give the same patterns.
type Designs struct {
	// SweepSizes are the message sizes of the point-to-point sweeps (experiment p2p_sweep),
	// one pair per path class (cluster.ClassPairs). None: no sweeps.
	SweepSizes []int64 `json:"sweep_sizes,omitempty"`
	// Bytes is the message size of the fairness, bidirectional and static-synchronous designs.
	Bytes int64 `json:"calibration_bytes"`
	// FairnessMaxK is the largest number of flows of fairness designs A and B (FairnessPatterns).
	FairnessMaxK int `json:"fairness_max_k"`
	// BidirMax is the largest number of flows each way of the bidirectional designs
	// (BidirectionalPatterns, in and out both 1…BidirMax).
	BidirMax int `json:"bidir_max"`
	// ExchangeMaxK is the largest number of same-peer exchanges at once (ExchangePatterns,
	// k = 1…ExchangeMaxK); 0: none.
	ExchangeMaxK int `json:"exchange_max_k,omitempty"`
	// CycleMaxK is the largest number of pairs of the directed cycles (CyclePatterns, k = 2, 4,
	// … up to CycleMaxK); 0: none.
	CycleMaxK int `json:"cycle_max_k,omitempty"`
	// IncastMaxK and OutcastMaxK are the largest k of the incast (k → 1) and outcast (1 → k)
	// designs (IncastPatterns, OutcastPatterns, k = 2…max); 0: none.
	IncastMaxK  int `json:"incast_max_k,omitempty"`
	OutcastMaxK int `json:"outcast_max_k,omitempty"`
	// Random lists the settings (|N|, d) of random patterns: validation ones, and calibration
	// ones for model selection.
	Random []RandomDesign `json:"random"`
	// StaticSync sets up the static-synchronous graphs of the penalty tables; zero: none.
	StaticSync StaticSyncDesign `json:"static_sync,omitzero"`
	// Seed draws the random and static-synchronous patterns.
	Seed uint64 `json:"seed,omitempty"`
}

// RandomDesign is one setting (|N|, d) of random patterns (RandomPatterns): Patterns of them,
// each transfer's size drawn from Sizes (10 MB when empty).
type RandomDesign struct {
	Nodes    int     `json:"nodes"`
	D        int     `json:"d"`
	Patterns int     `json:"patterns"`
	Sizes    []int64 `json:"sizes"`
	// Racks is how many racks the |N| nodes are taken from (RandomSpec.Racks; 0: two).
	Racks int `json:"racks,omitempty"`
	// Tag names a second design of the same setting (RandomSpec.Tag).
	Tag string `json:"tag,omitempty"`
	// Calibration measures the patterns as calibration experiments (random_calibration,
	// RandomSpec.Calibration), for model selection, instead of held-out ones.
	Calibration bool `json:"calibration,omitempty"`
}

// StaticSyncDesign sets up the static-synchronous graphs (StaticSyncPatterns): Graphs random
// connected graphs of up to MaxEdges communications, with all their connected sub-graphs.
type StaticSyncDesign struct {
	Graphs   int `json:"graphs"`
	MaxEdges int `json:"max_edges"`
}

// Patterns lists every pattern of the catalogue on a cluster, in a fixed order: the
// point-to-point sweeps (class pair by class pair, sizes in order), fairness A and B, the
// bidirectional designs, the exchanges and cycles, incast and outcast, the static-synchronous graphs, then the
// random patterns setting by setting. Designs outside the ceilings (bounds.go) are refused first, naming the key as a
// truth's JSON spells it, before anything is drawn; then the error is RandomPatterns' for a
// setting the cluster cannot hold, naming the design (random[i]).
func (c Designs) Patterns(cl *cluster.Cluster) ([]contention.Pattern, error) {
	if err := c.check(jsonKeys); err != nil {
		return nil, err
	}
	var pats []contention.Pattern
	for _, p := range cl.ClassPairs() {
		for _, m := range c.SweepSizes {
			pats = append(pats, contention.Pattern{ID: PairID(p.Src, p.Dst, m), Experiment: P2PSweep,
				Flows: []contention.Flow{{Src: p.Src, Dst: p.Dst, Bytes: float64(m)}}})
		}
	}
	pats = append(pats, FairnessPatterns(cl, c.FairnessMaxK, c.Bytes)...)
	pats = append(pats, BidirectionalPatterns(cl, c.BidirMax, c.BidirMax, c.Bytes)...)
	pats = append(pats, ExchangePatterns(cl, c.ExchangeMaxK, c.Bytes)...)
	pats = append(pats, CyclePatterns(cl, c.CycleMaxK, c.Bytes)...)
	pats = append(pats, IncastPatterns(cl, c.IncastMaxK, c.Bytes)...)
	pats = append(pats, OutcastPatterns(cl, c.OutcastMaxK, c.Bytes)...)
	if ss := c.StaticSync; ss.Graphs > 0 {
		pats = append(pats, StaticSyncPatterns(cl, ss.Graphs, ss.MaxEdges, c.Bytes, c.Seed)...)
	}
	for i, r := range c.Random {
		ps, err := RandomPatterns(cl, RandomSpec{Nodes: r.Nodes, D: r.D, Racks: r.Racks, Sizes: r.Sizes, Tag: r.Tag, Calibration: r.Calibration}, r.Patterns, c.Seed)
		if err != nil {
			return nil, fmt.Errorf("%w (random[%d])", err, i)
		}
		pats = append(pats, ps...)
	}
	return pats, nil
}
