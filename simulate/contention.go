package simulate

import (
	"context"
	"fmt"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/contention"
	"github.com/commcal/commcal/datasets"
	"github.com/commcal/commcal/experiments"
)

// ContentionTruth makes the generator write concurrent patterns to the transfers table, their
// times drawn from a contention model (the ground truth) with the truth's noise. The patterns
// are those of the embedded catalogue, the one `commcal measure` uses (its keys sit beside
// model, efficiency and contra_factor in truth.json): the fairness and bidirectional
// calibration designs of CCPE 2014 §5, static-synchronous graphs, and random validation
// patterns of §7.1. Each transfer's time is the model's, plus the Hockney α of its path class,
// times its own noise factor.
//
// Two catalogue fields are the truth's own: the point-to-point sweeps are the Hockney truths'
// (each class's sizes, times from its α and β), so the catalogue's sweep_sizes must be empty;
// and the truth's seed draws the patterns, so the catalogue's seed must be left out (or equal
// it). Generate refuses a truth that sets either otherwise.
type ContentionTruth struct {
	Model        string  `json:"model"`
	Efficiency   float64 `json:"efficiency"`
	ContraFactor float64 `json:"contra_factor"`
	experiments.Designs
}

// defaultContention is the asymmetric model on the cluster with the paper's nine settings
// (|N| ∈ {10, 20, 30} × d ∈ {1, 2, 3}) where the racks are large enough.
func defaultContention(cl *cluster.Cluster) *ContentionTruth {
	ct := &ContentionTruth{Model: "asymmetric", Efficiency: contention.DefaultEfficiency, ContraFactor: 1,
		Designs: experiments.Designs{Bytes: 10_000_000, FairnessMaxK: 12, BidirMax: 6,
			StaticSync: experiments.StaticSyncDesign{Graphs: 12, MaxEdges: 4}}}
	smallest := len(cl.Nodes())
	for r := range cl.Racks() {
		smallest = min(smallest, len(cl.RackNodes(r)))
	}
	racks := min(2, len(cl.Racks()))
	for _, d := range []int{1, 2, 3} {
		for _, n := range []int{10, 20, 30} {
			if n/racks <= smallest {
				ct.Random = append(ct.Random, experiments.RandomDesign{Nodes: n, D: d, Patterns: 10, Sizes: []int64{1e6, 5e6, 10e6, 20e6}})
			}
		}
	}
	return ct
}

// patterns lists the patterns of a truth's catalogue, drawn with the truth's seed.
func (ct *ContentionTruth) patterns(cl *cluster.Cluster, seed uint64) ([]contention.Pattern, error) {
	if len(ct.SweepSizes) > 0 {
		return nil, fmt.Errorf("simulate: truth: contention.sweep_sizes must be empty: the point-to-point sweeps are the hockney truths' sizes")
	}
	if ct.Seed != 0 && ct.Seed != seed {
		return nil, fmt.Errorf("simulate: truth: contention.seed %d differs from the truth's seed %d, which draws the patterns: leave it out", ct.Seed, seed)
	}
	cat := ct.Designs
	cat.Seed = seed
	pats, err := cat.Patterns(cl)
	if err != nil {
		return nil, fmt.Errorf("simulate: truth: %w", err)
	}
	return pats, nil
}

// contention draws the transfers of a contention truth, starting at clock, unless ctx is done
// first.
func (gen *generator) contention(ctx context.Context, cl *cluster.Cluster, tr *Truth, clock float64) error {
	ct := tr.Contention
	model, ok := contention.ModelByName(ct.Model)
	if !ok {
		return fmt.Errorf("simulate: truth: unknown contention model %q", ct.Model)
	}
	if !(ct.Efficiency > 0 && ct.Efficiency <= 1) {
		return fmt.Errorf("simulate: truth: contention efficiency %g outside (0, 1]", ct.Efficiency)
	}
	net := contention.NewNetwork(cl, ct.Efficiency)
	net.ContraFactor = ct.ContraFactor
	net.Latency = map[cluster.PathClass]float64{}
	for _, h := range tr.Hockney {
		net.Latency[cluster.PathClass(h.Class)] = h.Alpha
	}
	pats, err := ct.patterns(cl, tr.Seed)
	if err != nil {
		return err
	}
	// The model's times are predicted on all cores; the noise is drawn afterwards in pattern
	// order, so the dataset is the same bytes as a serial run's.
	flows := make([][]contention.Flow, len(pats))
	for i, p := range pats {
		flows[i] = p.Flows
	}
	preds, err := contention.PredictAll(ctx, net, flows, []contention.Model{model}, func(i, _ int, err error) error {
		return fmt.Errorf("simulate: truth: pattern %s/%s: %w", pats[i].Experiment, pats[i].ID, err)
	})
	if err != nil {
		return err
	}
	for i, p := range pats {
		pred := preds[i][0]
		for r := int64(0); r < gen.reps; r++ {
			longest := 0.0
			for f, fl := range p.Flows {
				t := pred.Times[f] * gen.nz.factor()
				longest = max(longest, t)
				gen.g.Transfers = append(gen.g.Transfers, datasets.Transfer{Cluster: gen.name, Experiment: p.Experiment, PatternID: p.ID,
					Rep: r, FlowID: int64(f), Src: fl.Src, Dst: fl.Dst, Bytes: int64(fl.Bytes), TStart: clock, TEnd: clock + t})
			}
			clock += longest + 1e-3
		}
	}
	return nil
}
