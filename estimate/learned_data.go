package estimate

import (
	"cmp"
	"maps"
	"slices"
	"strings"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/contention"
	"github.com/commcal/commcal/datasets"
	"github.com/commcal/commcal/experiments"
)

// learnedObs is a calibration pattern with what the fit compares the model to: each
// transfer's mean time, or, for the fairness designs' interchangeable transfers, the mean
// over repetitions of the sorted times (the order statistics).
type learnedObs struct {
	exp, id string
	flows   []contention.Flow
	target  []float64
	order   bool
	// scratch keeps the pattern's set-up between the fit's predictions of it (nil: none).
	scratch *contention.Scratch
}

// learnedData is the calibration patterns, grouped by what they determine, from their
// structure rather than their experiment's name. lone holds the patterns in which no two
// transfers share a resource: lone transfers (p2p_sweep from 1 MiB, a pattern of one
// transfer) and the fairness designs' transfers that share nothing (k disjoint pairs on one
// switch), which determine the ceiling. nic holds the fairness patterns in which two transfers
// or more share a NIC direction (k transfers from one node to another), core those in which
// they share a backbone or uplink direction and no NIC direction (k disjoint pairs between
// racks): both are compared by their order statistics. multi holds the static-synchronous and
// random calibration patterns of two transfers or more, where transfers cross several contended
// resources (α; with bidir, a, b, c, c₁, τ and ρ); bidir the rest (bidir_*, exchanges, cycles).
type learnedData struct {
	lone, nic, core, bidir, multi []learnedObs
}

// loneMinBytes is the smallest sweep message that pins the ceiling: from 1 MiB on, a lone
// transfer's time is its bytes over the rate within a few per cent of latency and slow start.
const loneMinBytes = 1 << 20

// patternKey names a pattern of an experiment.
type patternKey struct{ exp, id string }

// learnedObservations collects the calibration patterns of rows on cl.
func learnedObservations(cl *cluster.Cluster, rows []datasets.Transfer) (*learnedData, error) {
	exps := append([]string{experiments.P2PSweep}, experiments.ContentionCalibration()...)
	pats, err := datasets.MeasuredPatterns(rows, exps)
	if err != nil {
		return nil, err
	}
	reps := fairnessRepetitions(rows)
	d := &learnedData{}
	for _, p := range pats {
		o := learnedObs{exp: p.Experiment, id: p.ID, flows: p.Flows, target: p.Mean, scratch: new(contention.Scratch)}
		switch {
		case p.Experiment == experiments.StaticSync || p.Experiment == experiments.RandomCalibration:
			if len(p.Flows) >= 2 { // a lone transfer here says nothing of sharing
				d.multi = append(d.multi, o)
			}
		case p.Experiment == experiments.P2PSweep:
			if p.Flows[0].Bytes >= loneMinBytes {
				d.lone = append(d.lone, o)
			}
		case len(p.Flows) == 1:
			d.lone = append(d.lone, o)
		case slices.Contains(experiments.Fairness(), p.Experiment):
			if o.target = orderStatistics(reps[patternKey{p.Experiment, p.ID}], len(p.Flows)); o.target == nil {
				continue
			}
			o.order = true
			switch load := loadOf(cl, o.flows); {
			case load.nic >= 2:
				d.nic = append(d.nic, o)
			case load.core >= 2:
				d.core = append(d.core, o)
			default:
				d.lone = append(d.lone, o)
			}
		default:
			d.bidir = append(d.bidir, o)
		}
	}
	return d, nil
}

// patternLoad is the most transfers of a pattern that one NIC direction carries, and one
// backbone or uplink direction.
type patternLoad struct{ nic, core int }

// loadOf is the load of flows on cl.
func loadOf(cl *cluster.Cluster, flows []contention.Flow) patternLoad {
	var l patternLoad
	res := cl.Resources()
	for r, n := range contention.ResourceCounts(cl, flows) {
		if isNIC(res[r].Kind) {
			l.nic = max(l.nic, n)
		} else {
			l.core = max(l.core, n)
		}
	}
	return l
}

// isNIC says whether a resource kind is a NIC direction (else it lies between racks).
func isNIC(k cluster.ResourceKind) bool { return k == cluster.NICOut || k == cluster.NICIn }

// fairnessRepetitions is the fairness patterns' times, repetition by repetition, in the order
// of rows.
func fairnessRepetitions(rows []datasets.Transfer) map[patternKey]map[int64][]float64 {
	reps := map[patternKey]map[int64][]float64{}
	for _, r := range rows {
		if r.Experiment != experiments.FairIntra && r.Experiment != experiments.FairInter {
			continue
		}
		k := patternKey{r.Experiment, r.PatternID}
		if reps[k] == nil {
			reps[k] = map[int64][]float64{}
		}
		reps[k][r.Rep] = append(reps[k][r.Rep], r.Seconds())
	}
	return reps
}

// orderStatistics is the mean over the complete repetitions of a pattern of n transfers (byRep,
// each repetition's times, which it sorts) of their sorted times; nil without a complete one.
// The repetitions are summed in order, so that the same input gives the same sums.
func orderStatistics(byRep map[int64][]float64, n int) []float64 {
	target := make([]float64, n)
	count := 0
	for _, rep := range slices.Sorted(maps.Keys(byRep)) {
		ts := byRep[rep]
		if len(ts) != n {
			continue // an incomplete repetition has no order statistics
		}
		slices.Sort(ts)
		for j, t := range ts {
			target[j] += t
		}
		count++
	}
	if count == 0 {
		return nil
	}
	for j := range target {
		target[j] /= float64(count)
	}
	return target
}

// reliefFrom says whether ackpath's ρ is fitted on the calibration patterns multi (static_sync
// and random_calibration): where random calibration patterns are among them. ρ is told from
// the other slowdowns by transfers alone on their data path beside transfers sharing theirs
// with the same acknowledgements' queues, which random patterns hold and the bidirectional and
// static-synchronous designs hardly do. Without them the slowdowns and ρ share a direction
// their patterns do not see, which costs every slowdown its interval, and ρ, free to move
// along it, drags a with it; there ρ stays 0.
func reliefFrom(multi []learnedObs) bool {
	return slices.ContainsFunc(multi, func(o learnedObs) bool { return o.exp == experiments.RandomCalibration })
}

// learnedStartValues are the closed-form calibration's rates a fit starts from.
type learnedStartValues struct{ ceiling, nic float64 }

// learnedStart is the ceiling of net and the capacity of its first outgoing NIC direction.
func learnedStart(cl *cluster.Cluster, net *contention.Network) learnedStartValues {
	var s learnedStartValues
	s.ceiling = net.Ceiling
	for i, r := range cl.Resources() {
		if r.Kind == cluster.NICOut {
			s.nic = net.Capacity[i]
			break
		}
	}
	return s
}

// largestCarried is the most a NIC direction carried in the patterns (nic's) in which it
// carries every transfer, two or more: their bytes over the makespan (the mean of the last
// order statistic), which a work-conserving bottleneck shared by every transfer carries
// whatever the split; 0 without such a pattern.
func largestCarried(cl *cluster.Cluster, nic []learnedObs) float64 {
	best := 0.0
	for _, o := range nic {
		if len(o.flows) < 2 || loadOf(cl, o.flows).nic < len(o.flows) {
			continue
		}
		bits := 0.0
		for _, f := range o.flows {
			bits += 8 * f.Bytes
		}
		best = max(best, bits/slices.Max(o.target))
	}
	return best
}

// largestRampCount is the largest count of ackpath's ramp-up cost among the patterns'
// transfers: the transfers into a transfer's sender plus those out of its receiver.
func largestRampCount(obs []learnedObs) int {
	k := 0
	for _, o := range obs {
		in, out := map[string]int{}, map[string]int{}
		for _, fl := range o.flows {
			in[fl.Dst]++
			out[fl.Src]++
		}
		for _, fl := range o.flows {
			k = max(k, in[fl.Src]+out[fl.Dst])
		}
	}
	return k
}

// surfaceCells lists the cells the bidirectional patterns start with: for every directed
// resource a pattern loads both ways, its kind and its two counts, each cell once, in the
// order first met, factor 1.
func surfaceCells(cl *cluster.Cluster, obs []learnedObs) []SurfaceCellFit {
	res := cl.Resources()
	var cells []SurfaceCellFit
	seen := map[contention.SurfaceCell]bool{}
	for _, o := range obs {
		count := contention.ResourceCounts(cl, o.flows)
		for r, rs := range res {
			if count[r] == 0 || count[rs.Reverse] == 0 {
				continue
			}
			c := contention.SurfaceCell{Kind: contention.SurfaceKind(rs.Kind), With: count[r], Contra: count[rs.Reverse], Factor: 1}
			if !seen[c] {
				seen[c] = true
				cells = append(cells, SurfaceCellFit{SurfaceCell: c, Experiment: o.exp})
			}
		}
	}
	slices.SortStableFunc(cells, func(a, b SurfaceCellFit) int {
		return cmp.Or(strings.Compare(a.Kind, b.Kind), cmp.Compare(a.With, b.With), cmp.Compare(a.Contra, b.Contra))
	})
	return cells
}

// source describes the patterns behind a parameter.
func source(param string, obs []learnedObs, fitted string) ParamSource {
	return ParamSource{Param: param, Experiments: experimentsOf(obs), Patterns: len(obs), Fitted: fitted}
}
