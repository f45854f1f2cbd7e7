package datasets

import (
	"fmt"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/contention"
)

// ContentionTruth makes the generator write concurrent patterns to the transfers table, their
// times drawn from a contention model (the ground truth) with the truth's noise: the
// fairness and bidirectional calibration designs of CCPE 2014 §5 and random validation
// patterns of §7.1. Each transfer's time is the model's, plus the Hockney α of its path class,
// times its own noise factor.
type ContentionTruth struct {
	Model        string        `json:"model"`
	Efficiency   float64       `json:"efficiency"`
	ContraFactor float64       `json:"contra_factor"`
	Bytes        int64         `json:"calibration_bytes"`
	FairnessMaxK int           `json:"fairness_max_k"`
	BidirMax     int           `json:"bidir_max"`
	Random       []RandomTruth `json:"random"`
	// StaticSync adds static-synchronous graphs (experiment static_sync) for penalty tables.
	StaticSync *StaticSyncTruth `json:"static_sync,omitempty"`
}

// StaticSyncTruth sets up the static-synchronous graphs: Graphs random connected graphs of up
// to MaxEdges communications of Bytes each, with all their connected sub-graphs.
type StaticSyncTruth struct {
	Graphs   int `json:"graphs"`
	MaxEdges int `json:"max_edges"`
}

// RandomTruth is one setting (|N|, d) of random patterns.
type RandomTruth struct {
	Nodes    int     `json:"nodes"`
	D        int     `json:"d"`
	Patterns int     `json:"patterns"`
	Sizes    []int64 `json:"sizes"`
}

// defaultContention is the asymmetric model on the cluster with the paper's nine settings
// (|N| ∈ {10, 20, 30} × d ∈ {1, 2, 3}) where the racks are large enough.
func defaultContention(cl *cluster.Cluster) *ContentionTruth {
	ct := &ContentionTruth{Model: "asymmetric", Efficiency: contention.DefaultEfficiency, ContraFactor: 1,
		Bytes: 10_000_000, FairnessMaxK: 12, BidirMax: 6, StaticSync: &StaticSyncTruth{Graphs: 12, MaxEdges: 4}}
	smallest := len(cl.Nodes())
	for r := range cl.Racks() {
		smallest = min(smallest, len(cl.RackNodes(r)))
	}
	racks := min(2, len(cl.Racks()))
	for _, d := range []int{1, 2, 3} {
		for _, n := range []int{10, 20, 30} {
			if n/racks <= smallest {
				ct.Random = append(ct.Random, RandomTruth{Nodes: n, D: d, Patterns: 10, Sizes: []int64{1e6, 5e6, 10e6, 20e6}})
			}
		}
	}
	return ct
}

// contentionPatterns lists every pattern of a contention truth.
func contentionPatterns(cl *cluster.Cluster, ct *ContentionTruth, seed uint64) ([]contention.Pattern, error) {
	pats := contention.FairnessPatterns(cl, ct.FairnessMaxK, ct.Bytes)
	pats = append(pats, contention.BidirectionalPatterns(cl, ct.BidirMax, ct.BidirMax, ct.Bytes)...)
	if ss := ct.StaticSync; ss != nil {
		pats = append(pats, contention.StaticSyncPatterns(cl, ss.Graphs, ss.MaxEdges, ct.Bytes, seed)...)
	}
	for _, rt := range ct.Random {
		ps, err := contention.RandomPatterns(cl, contention.RandomSpec{Nodes: rt.Nodes, D: rt.D, Sizes: rt.Sizes}, rt.Patterns, seed)
		if err != nil {
			return nil, fmt.Errorf("datasets: truth: %w", err)
		}
		pats = append(pats, ps...)
	}
	return pats, nil
}

// generateContention appends the transfers of a contention truth, starting at clock.
func generateContention(cl *cluster.Cluster, tr *Truth, nz *noise, clock float64, g *Generated) error {
	ct := tr.Contention
	model, ok := contention.ModelByName(ct.Model)
	if !ok {
		return fmt.Errorf("datasets: truth: unknown contention model %q", ct.Model)
	}
	if !(ct.Efficiency > 0 && ct.Efficiency <= 1) {
		return fmt.Errorf("datasets: truth: contention efficiency %g outside (0, 1]", ct.Efficiency)
	}
	net := contention.NewNetwork(cl, ct.Efficiency)
	net.ContraFactor = ct.ContraFactor
	net.Latency = map[cluster.PathClass]float64{}
	for _, h := range tr.Hockney {
		net.Latency[cluster.PathClass(h.Class)] = h.Alpha
	}
	pats, err := contentionPatterns(cl, ct, tr.Seed)
	if err != nil {
		return err
	}
	for _, p := range pats {
		pred, err := model.Predict(net, p.Flows)
		if err != nil {
			return fmt.Errorf("datasets: truth: pattern %s/%s: %w", p.Experiment, p.ID, err)
		}
		for r := int64(0); r < int64(tr.Reps); r++ {
			longest := 0.0
			for f, fl := range p.Flows {
				t := pred.Times[f] * nz.factor()
				longest = max(longest, t)
				g.Transfers = append(g.Transfers, Transfer{Cluster: cl.Name(), Experiment: p.Experiment, PatternID: p.ID,
					Rep: r, FlowID: int64(f), Src: fl.Src, Dst: fl.Dst, Bytes: int64(fl.Bytes), TStart: clock, TEnd: clock + t})
			}
			clock += longest + 1e-3
		}
	}
	return nil
}
