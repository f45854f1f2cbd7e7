package estimate

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/contention"
	"github.com/commcal/commcal/experiments"
)

// learnedIdent says which of a learned model's parameters its fit moves: those some calibration
// pattern identifies. design decides it from the patterns' structure before any fit — which
// resources carry two transfers or more, which nodes send and receive at once — and the stages
// then leave out what their fit does not pin down after all: a rate above its line rate, an
// interval without bounds (leaveOut records each with its reason and fallback).
type learnedIdent struct {
	ceiling, nic, backbone, spread, coupling bool
	// ack is ackpath's a, b, c, c₁, τ and ρ, in ackSlots' order.
	ack [ackParams]bool
	// alpha is ackpath-alpha's α, which only a transfer crossing two contended resources
	// identifies (alphaDesign).
	alpha bool
}

// The indices of ackpath's parameters in learnedIdent.ack and ackSlots.
const (
	ackA = iota
	ackB
	ackC
	ackC1
	ackTau
	ackRho
	ackParams
)

// ackDropOrder is the order in which fitAckSlowdowns leaves out ackpath's parameters whose
// intervals have no bounds, one at a time: the costs in time and the relief first, which only
// refine the slowdowns, then c₁, c, b and a. Where τ and c₁ trade off (exchanges of one size,
// every transfer paying both), c₁ stays.
var ackDropOrder = []int{ackTau, ackRho, ackC1, ackC, ackB, ackA}

// ackSlot is one of ackpath's parameters: its JSON key, where the fit keeps it, its unit in
// polish's search (scale) and its upper bound, and what stands in for it when left out.
type ackSlot struct {
	name      string
	p         *float64
	scale, hi float64
	fallback  string
}

// ackSlots are ackpath's a, b, c, c₁, τ and ρ.
func (f *learnedFit) ackSlots() [ackParams]ackSlot {
	lp := f.lp
	none := "0 (no slowdown)"
	return [ackParams]ackSlot{
		{"ack_in", &lp.AckIn, 1, contention.MaxAck, none},
		{"ack_out", &lp.AckOut, 1, contention.MaxAck, none},
		{"ack_full", &lp.AckFull, 1, contention.MaxAck, none},
		{"ack_lone", f.lone, 1, contention.MaxAck, none},
		{"ack_ramp_s", &lp.AckRamp, rampScale, contention.MaxAckRamp, "0 (no ramp-up or take-up cost)"},
		{"ack_relief", &lp.AckRelief, 1, 1, "0 (the ceiling pays the whole slowdown)"},
	}
}

// leaveOut records a parameter the fit leaves out, why (the reason's format and arguments), and
// what the model uses instead (LearnedFit.NotIdentified).
func (f *learnedFit) leaveOut(param, fallback, format string, a ...any) {
	f.left = append(f.left, Unidentified{Parameter: param, Reason: fmt.Sprintf(format, a...), Fallback: fallback})
}

// design decides from the patterns' structure which parameters of the model some pattern
// identifies, recording the others as left out (κ's absence is fitCoupling's to record);
// false where none of the model's parameters is, or there is no contention pattern at all
// (the model is then not calibrated).
func (f *learnedFit) design() bool {
	d, v := f.data, f.variant
	id := &f.ident
	id.ceiling = len(d.lone) > 0
	if !id.ceiling {
		f.leaveOut("ceiling_bps", f.ceilingFallbackText(),
			"not identified: no lone transfer of 1 MiB or more (p2p_sweep, or a calibration pattern whose transfers share no resource)")
	}
	f.nicObs, f.nicFrom = d.nic, "the order statistics of the repetitions"
	if len(f.nicObs) == 0 {
		// Without a fairness design that loads a NIC direction, the other patterns that do
		// (bidirectional ones, exchanges, static-synchronous graphs), by their transfer means.
		f.nicObs, f.nicFrom = loading(f.cl, slices.Concat(d.bidir, d.multi), isNIC), "each transfer's mean time"
	}
	if id.nic = len(f.nicObs) > 0; !id.nic {
		_, text := f.capacityFallback(true)
		f.leaveOut("nic_bps", text, "not identified: no experiment loads the NIC with two flows (no calibration pattern has two transfers or more leave or enter one node at once)")
	}
	if f.hasCore() {
		switch id.backbone = f.saturated() && len(d.core) > 0; {
		case len(d.core) == 0:
			_, text := f.capacityFallback(false)
			f.leaveOut("backbone_bps", text, "not identified: no fairness experiment loads a backbone or uplink direction with two flows")
		case !f.saturated():
			_, text := f.capacityFallback(false)
			f.leaveOut("backbone_bps", text, "not identified: the backbone or uplinks did not saturate at two or more flow counts of %s",
				strings.Join(experimentsOf(d.core), ", "))
		}
	}
	if v.Stochastic {
		if id.spread = len(d.nic)+len(d.core) > 0; !id.spread {
			f.leaveOut("spread", "0 (even shares, max-min)", "not identified: no fairness experiment has two transfers or more share a resource, whose order of completion σ is fitted to")
		}
	}
	// κ's absence is recorded by fitCoupling, after the stages a memo holds, so that a fit
	// from a memo lists its parameters in the order a fit from the start does.
	id.coupling = v.Duplex && slices.ContainsFunc(d.bidir, sendsAndReceives)
	if v.AckPath {
		f.designAck()
	}
	id.alpha = v.AlphaFair && alphaDesign(f.cl, f.multiBidir)
	contended := len(d.nic) + len(d.core) + len(d.bidir) + len(d.multi)
	for _, o := range d.lone {
		if o.exp != experiments.P2PSweep {
			contended++
		}
	}
	some := id.ceiling || id.nic || id.backbone || id.spread || id.coupling || id.alpha || slices.Contains(id.ack[:], true) ||
		(v.Surface && len(d.bidir) > 0)
	return contended > 0 && some
}

// designAck decides which of ackpath's a, b, c, c₁, τ and ρ the patterns of two transfers or
// more (multiBidir) identify, from where their transfers meet: per transfer from s to t, a
// needs two transfers or more into s (or the other way through the backbone), b two or more
// out of t, c either, c₁ one transfer alone into s or out of t, τ a transfer into s or out of t
// at all (its ramp-up count), and ρ random calibration patterns (reliefFrom). One pattern
// alone identifies none of them: their intervals are taken over patterns.
func (f *learnedFit) designAck() {
	slots := f.ackSlots()
	var why [ackParams]string
	switch obs := f.multiBidir; {
	case len(obs) == 0:
		for i := range why {
			why[i] = "not identified: no calibration pattern of two transfers or more beyond the fairness designs (bidir_*, exchange_calibration, cycle_calibration, static_sync, random_calibration)"
		}
	case len(obs) == 1:
		for i := range why {
			why[i] = fmt.Sprintf("not identified: one calibration pattern of two transfers or more beyond the fairness designs (%s/%s); its interval needs two", obs[0].exp, obs[0].id)
		}
	default:
		seen := ackDesign(f.cl, obs)
		seen[ackRho] = reliefFrom(f.data.multi)
		what := [ackParams]string{
			"no transfer's sender receives two transfers or more at once",
			"no transfer's receiver sends two transfers or more at once",
			"no transfer's sender receives, nor its receiver sends, two transfers or more at once",
			"no transfer's sender receives, nor its receiver sends, one transfer alone",
			"no transfer's sender receives, nor its receiver sends, at once",
			"there are no random_calibration patterns (transfers alone on their data path beside transfers sharing theirs)",
		}
		for i := range why {
			if !seen[i] {
				why[i] = "not identified: " + what[i]
			}
		}
	}
	for i, w := range why {
		if f.ident.ack[i] = w == ""; !f.ident.ack[i] {
			f.leaveOut(slots[i].name, slots[i].fallback, "%s", w)
		}
	}
}

// ackDesign says, per parameter of ackpath (a, b, c, c₁, τ; ρ is false), whether a transfer of
// obs meets the queues it prices (designAck): the counts of the reverse directions of its path,
// the first (into its sender) and the last (out of its receiver), and those between racks.
func ackDesign(cl *cluster.Cluster, obs []learnedObs) [ackParams]bool {
	var seen [ackParams]bool
	res := cl.Resources()
	for _, o := range obs {
		count := contention.ResourceCounts(cl, o.flows)
		for _, fl := range o.flows {
			path, err := cl.Path(fl.Src, fl.Dst)
			if err != nil {
				continue // the fit's predictions report it
			}
			last := len(path) - 1
			into, out := count[res[path[0]].Reverse], count[res[path[last]].Reverse]
			seen[ackA] = seen[ackA] || into >= 2
			for _, r := range path[1:last] {
				seen[ackA] = seen[ackA] || count[res[r].Reverse] >= 2
			}
			seen[ackB] = seen[ackB] || out >= 2
			seen[ackC] = seen[ackC] || into >= 2 || out >= 2
			seen[ackC1] = seen[ackC1] || into == 1 || out == 1
			seen[ackTau] = seen[ackTau] || into+out >= 2
		}
	}
	return seen
}

// alphaDesign says whether α of α-fair sharing changes any prediction of obs: whether a transfer
// crosses two resources that each carry two transfers or more, not the same ones (X1→X2 beside
// X1→X3 and X4→X2). Where every transfer crosses at most one such resource, or resources all
// carrying the same transfers, α-fair rates are the weighted max-min ones for every α: each
// shared resource is split in proportion to the weights, under the same caps.
func alphaDesign(cl *cluster.Cluster, obs []learnedObs) bool {
	for _, o := range obs {
		on := map[int][]int{} // per resource, the transfers crossing it
		paths := make([][]int, len(o.flows))
		for i, fl := range o.flows {
			paths[i], _ = cl.Path(fl.Src, fl.Dst)
			for _, r := range paths[i] {
				on[r] = append(on[r], i)
			}
		}
		for _, p := range paths {
			var first []int
			for _, r := range p {
				if len(on[r]) < 2 {
					continue
				}
				if first == nil {
					first = on[r]
				} else if !slices.Equal(first, on[r]) {
					return true
				}
			}
		}
	}
	return false
}

// sendsAndReceives says whether some node of o both sends and receives.
func sendsAndReceives(o learnedObs) bool {
	sends := map[string]bool{}
	for _, fl := range o.flows {
		sends[fl.Src] = true
	}
	return slices.ContainsFunc(o.flows, func(fl contention.Flow) bool { return sends[fl.Dst] })
}

// loading is the patterns of obs in which some resource of the kinds kind selects (isNIC,
// isCore) carries two transfers or more.
func loading(cl *cluster.Cluster, obs []learnedObs, kind func(cluster.ResourceKind) bool) []learnedObs {
	var out []learnedObs
	for _, o := range obs {
		if len(loadedRates(cl, []learnedObs{o}, kind)) > 0 {
			out = append(out, o)
		}
	}
	return out
}

// loadedRates lists the nominal rates of the resources of the kinds kind selects that carry two
// transfers or more in some pattern of obs.
func loadedRates(cl *cluster.Cluster, obs []learnedObs, kind func(cluster.ResourceKind) bool) []float64 {
	var rates []float64
	res := cl.Resources()
	for _, o := range obs {
		for r, n := range contention.ResourceCounts(cl, o.flows) {
			if n >= 2 && kind(res[r].Kind) {
				rates = append(rates, res[r].RateBps)
			}
		}
	}
	return rates
}

// isCore says whether a resource kind lies between racks (a backbone or uplink direction).
func isCore(k cluster.ResourceKind) bool { return !isNIC(k) }

// hasCore says whether the cluster has resources between racks.
func (f *learnedFit) hasCore() bool {
	return slices.ContainsFunc(f.cl.Resources(), func(r cluster.Resource) bool { return isCore(r.Kind) })
}

// lineRate is the nominal rate a fitted capacity of the kinds kind selects is held to: the
// fastest of the resources that carry two transfers or more in obs, the patterns it was fitted
// on (a capacity beyond every one of them is one no resource it was fitted on has).
func lineRate(cl *cluster.Cluster, obs []learnedObs, kind func(cluster.ResourceKind) bool) float64 {
	rates := loadedRates(cl, obs, kind)
	if len(rates) == 0 {
		return 0
	}
	return slices.Max(rates)
}

// ceilingLineRate is the nominal rate the ceiling is held to: the fastest path of the lone
// transfers, a path's rate the slowest resource on it.
func ceilingLineRate(cl *cluster.Cluster, lone []learnedObs) float64 {
	best := 0.0
	res := cl.Resources()
	for _, o := range lone {
		for _, fl := range o.flows {
			path, err := cl.Path(fl.Src, fl.Dst)
			if err != nil {
				continue
			}
			slowest := math.Inf(1)
			for _, r := range path {
				slowest = min(slowest, res[r].RateBps)
			}
			best = max(best, slowest)
		}
	}
	return best
}

// efficiency is the share of the nominal rates the network's capacities are without a fit.
func (f *learnedFit) efficiency() float64 {
	if f.base.Efficiency > 0 {
		return f.base.Efficiency
	}
	return contention.DefaultEfficiency
}

// capacityFallback is the capacity a model uses for every NIC direction (nic) or every backbone
// and uplink direction where its fit leaves it out, as LearnedParams holds it, and the words
// that say so: the nominal rate × efficiency. Where the network base describes already has it
// (base sets no capacity of the kind), that is 0, the network's; where every resource of the
// kind has the same nominal rate, that rate × efficiency, set; else 0, each resource's own, which
// base's capacity replaces where it sets one (the words then say that).
func (f *learnedFit) capacityFallback(nic bool) (float64, string) {
	kind, set := isNIC, f.base.NICBps
	if !nic {
		kind, set = isCore, f.base.BackboneBps
	}
	var rates []float64
	for _, r := range f.cl.Resources() {
		if kind(r.Kind) && !slices.Contains(rates, r.RateBps) {
			rates = append(rates, r.RateBps)
		}
	}
	eff := f.efficiency()
	if len(rates) == 1 {
		text := fmt.Sprintf("the nominal rate × efficiency, %s (%s × %g)", gbps(rates[0]*eff), gbps(rates[0]), eff)
		if set == 0 {
			return 0, text
		}
		return rates[0] * eff, text
	}
	if set == 0 {
		return 0, fmt.Sprintf("each resource's nominal rate × efficiency %g", eff)
	}
	return 0, fmt.Sprintf("the closed-form calibration's capacity, %s", gbps(set))
}

// ceilingFallbackText says what stands in for a ceiling left out as not identified: the
// network's per-flow ceiling, which the closed-form calibration sets.
func (f *learnedFit) ceilingFallbackText() string {
	return fmt.Sprintf("the closed-form calibration's per-flow ceiling, %s", gbps(f.start.ceiling))
}

// gbps formats a rate in Gbit/s, as lineRateReason does.
func gbps(bps float64) string { return fmt.Sprintf("%.4g Gbit/s", bps/1e9) }

// bounded says whether an estimate's interval has finite bounds: one without them (a parameter
// its patterns do not determine) is not identified.
func bounded(p Param) bool {
	return !math.IsInf(p.CILow, 0) && !math.IsInf(p.CIHigh, 0) && !math.IsNaN(p.CILow) && !math.IsNaN(p.CIHigh)
}

// unbounded is the reason a parameter fitted on obs is left out when its interval has no
// bounds: one pattern gives none (the intervals are taken over patterns), more leave it
// undetermined.
func unbounded(obs []learnedObs) string {
	if len(obs) == 1 {
		return fmt.Sprintf("not identified: fitted on one pattern (%s/%s), and its interval needs two or more", obs[0].exp, obs[0].id)
	}
	return fmt.Sprintf("not identified: the %d patterns it was fitted on (%s) do not determine it (its interval is unbounded)", len(obs), strings.Join(experimentsOf(obs), ", "))
}

// experimentsOf lists the experiments of obs, each once, in the order first met.
func experimentsOf(obs []learnedObs) []string {
	var exps []string
	for _, o := range obs {
		if !slices.Contains(exps, o.exp) {
			exps = append(exps, o.exp)
		}
	}
	return exps
}
