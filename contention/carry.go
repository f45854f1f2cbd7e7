package contention

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/commcal/commcal/cluster"
)

// Resource classes, beside the path classes of Hockney's α and β (cluster.PathClasses): what
// each parameter of a calibration was fitted for, and what carrying the parameters to another
// cluster matches on (Params.Carry).
const (
	// ClassNIC is every NIC direction: the NIC capacity, the per-flow ceiling (a lone
	// transfer's rate through its NICs), the penalty models' α (a lone transfer's time per
	// byte) and ackpath's ramp-up cost τ, all fitted at the NICs' nominal rate.
	ClassNIC = "nic"
	// ClassBackbone is the cable joining two racks (cluster.TopologyCable), ClassUplink the
	// racks' uplinks to a core router (cluster.TopologyCore): the backbone capacity.
	ClassBackbone = "backbone"
	ClassUplink   = "uplink"
	// ClassFactors are the parameters without a rate: fractions of a nominal rate
	// (efficiency), sharing factors (φ, the learned models' σ, κ, surface, a, b, c, c₁, ρ, α)
	// and penalties (ratios to a transfer's time alone).
	ClassFactors = "factors"
	// ClassPerNode are parameters of named nodes and links (LMO's C_i, t_i and β_ij).
	ClassPerNode = "per-node"
)

// What became of a class's parameters on another cluster (CarriedClass.Outcome).
const (
	// Carried: the cluster has the class at the nominal rate the parameters were fitted
	// for, and the models use them as they are.
	Carried = "carried"
	// Fallback: the cluster has the class at another nominal rate, or the calibration fits
	// nothing for it: the models use the nominal rate times the efficiency, or their default.
	Fallback = "fallback"
	// Dropped: the cluster has no such class (one rack has no backbone), or the parameters
	// name the other cluster's nodes; nothing uses them.
	Dropped = "dropped"
)

// Nominal is the nominal rates of a cluster's resource classes, recorded beside the
// parameters fitted on it (Params.Nominal): an absolute capacity means something only with
// the nominal rate it was measured against. Rates are in bits per second.
type Nominal struct {
	// NICBps are the NICs' nominal rates, each once, in increasing order.
	NICBps []float64 `json:"nic_bps"`
	// InterRack is the class of the resources between racks, ClassBackbone or ClassUplink,
	// and InterRackBps their nominal rates, each once, in increasing order; both are empty
	// for a cluster of one rack, where no transfer leaves its rack.
	InterRack    string    `json:"inter_rack,omitempty"`
	InterRackBps []float64 `json:"inter_rack_bps,omitempty"`
}

// NominalOf is the nominal rates of cl's resource classes.
func NominalOf(cl *cluster.Cluster) *Nominal {
	n := &Nominal{}
	for _, nd := range cl.Nodes() {
		n.NICBps = append(n.NICBps, nd.NICRateBps)
	}
	n.NICBps = distinct(n.NICBps)
	if len(cl.Racks()) < 2 {
		return n
	}
	for _, r := range cl.Resources() {
		switch r.Kind {
		case cluster.BackboneAB:
			n.InterRack = ClassBackbone
			n.InterRackBps = append(n.InterRackBps, r.RateBps)
		case cluster.UplinkUp:
			n.InterRack = ClassUplink
			n.InterRackBps = append(n.InterRackBps, r.RateBps)
		}
	}
	n.InterRackBps = distinct(n.InterRackBps)
	return n
}

// distinct sorts v and keeps each value once.
func distinct(v []float64) []float64 {
	slices.Sort(v)
	return slices.Compact(v)
}

// Equal says whether two clusters' classes have the same nominal rates.
func (n *Nominal) Equal(o *Nominal) bool {
	return slices.Equal(n.NICBps, o.NICBps) && n.InterRack == o.InterRack && slices.Equal(n.InterRackBps, o.InterRackBps)
}

// validate adds the problems of a recorded Nominal to bad, naming each by its JSON key under
// params.nominal: rates positive and finite, in increasing order, each once; a known
// inter-rack class, given with its rates.
func (n *Nominal) validate(bad func(key, format string, a ...any)) {
	rates := func(key string, v []float64) {
		for i, r := range v {
			switch {
			case !finite(r) || r <= 0:
				bad(fmt.Sprintf("nominal.%s[%d]", key, i), "%g, want a positive finite rate (bit/s)", r)
			case i > 0 && r <= v[i-1]:
				bad(fmt.Sprintf("nominal.%s[%d]", key, i), "%g after %g, want each rate once, in increasing order", r, v[i-1])
			}
		}
	}
	if len(n.NICBps) == 0 {
		bad("nominal.nic_bps", "empty, want the NICs' nominal rates")
	}
	rates("nic_bps", n.NICBps)
	rates("inter_rack_bps", n.InterRackBps)
	switch {
	case n.InterRack != "" && n.InterRack != ClassBackbone && n.InterRack != ClassUplink:
		bad("nominal.inter_rack", "%q, want %q, %q or absent (one rack)", n.InterRack, ClassBackbone, ClassUplink)
	case (n.InterRack == "") != (len(n.InterRackBps) == 0):
		bad("nominal.inter_rack_bps", "given without its class inter_rack, or inter_rack without its rates")
	}
}

// CarriedClass is what became of one class's parameters when a calibration was applied to
// another cluster.
type CarriedClass struct {
	// Class is one of the Class constants.
	Class string `json:"class"`
	// Outcome is Carried, Fallback or Dropped.
	Outcome string `json:"outcome"`
	// Parameters are the calibration's parameters of the class, by their JSON keys under
	// params (learned models' as "learned.<model>.<key>"); none when it fits nothing for the
	// class.
	Parameters []string `json:"parameters,omitempty"`
	// Note gives the nominal rates on both clusters and, but for Carried, what the models
	// use instead.
	Note string `json:"note"`
}

// formatRate writes a rate in bits per second as people quote link rates: "1 Gbit/s",
// "25 Gbit/s", "100 Mbit/s".
func formatRate(bps float64) string {
	if bps >= 1e9 {
		return strconv.FormatFloat(bps/1e9, 'g', 4, 64) + " Gbit/s"
	}
	return strconv.FormatFloat(bps/1e6, 'g', 4, 64) + " Mbit/s"
}

// formatRates lists rates, comma-separated: "1 Gbit/s, 10 Gbit/s".
func formatRates(v []float64) string {
	s := make([]string, len(v))
	for i, r := range v {
		s[i] = formatRate(r)
	}
	return strings.Join(s, ", ")
}

// single is the one rate of a class, when all its resources have the same.
func single(v []float64) (float64, bool) {
	if len(v) != 1 {
		return 0, false
	}
	return v[0], true
}

// Carry applies parameters fitted on a cluster of nominal rates from to the cluster to, class
// by class, and says what became of each class:
//
//   - absolute rates and times fitted at a nominal rate — the NIC capacity, the per-flow
//     ceiling, the penalty α and ackpath's ramp-up cost (ClassNIC), the backbone or uplink
//     capacity (ClassBackbone, ClassUplink), Hockney's α and β (per path class) — are carried
//     when to has the class at the same nominal rate: a fitted 9.4 Gbit/s of a 10 Gbit/s
//     backbone says nothing of a 25 Gbit/s one. Otherwise they fall back to the nominal rate
//     times the efficiency (capacities), the slowest NIC's capacity (the ceiling), 8/ceiling
//     (the penalty α and Hockney's β), no latency and no ramp-up cost. A Hockney path class
//     is carried when every resource class on its path is: the NICs for intra-rack paths,
//     the NICs and the backbone or uplinks for inter-rack ones. A backbone capacity is not
//     carried to uplinks under a core router, nor back: a cable is one resource that every
//     transfer between the racks shares, an uplink carries its own rack's transfers only.
//   - parameters without a rate (ClassFactors) are carried as they are: the efficiency, a
//     fraction of every nominal rate; φ; the learned models' shares, slowdowns and surface.
//   - a class that to lacks (the backbone of a one-rack cluster) drops its parameters.
//
// The models hold one NIC capacity and one backbone capacity, so a class whose resources
// have several nominal rates, on either cluster, matches nothing and falls back. The result
// holds one CarriedClass per class: the NICs and the resources between racks always (a
// cluster's capacities come from one or the other), path classes when the parameters fit
// them, and the factors. Its Nominal is to's; p is not changed.
func (p Params) Carry(from *Nominal, to *cluster.Cluster) (Params, []CarriedClass) {
	c := &carrier{p: p, out: p, from: from, to: NominalOf(to), eff: p.Efficiency}
	if c.eff == 0 {
		c.eff = DefaultEfficiency
	}
	c.out.Nominal = c.to
	c.out.Learned = nil
	c.models = slices.Sorted(maps.Keys(p.Learned))
	for _, m := range c.models {
		if lp := p.Learned[m]; lp != nil {
			cp := *lp
			if c.out.Learned == nil {
				c.out.Learned = make(map[string]*LearnedParams, len(p.Learned))
			}
			c.out.Learned[m] = &cp
		}
	}
	c.nics()
	c.interRack()
	c.paths(to)
	c.factors()
	return c.out, c.classes
}

// carrier is one Carry under way: the parameters carried so far (out, a copy of p with its
// own learned records) and what became of each class.
type carrier struct {
	p, out   Params
	from, to *Nominal
	eff      float64
	models   []string // the learned models of p, sorted
	classes  []CarriedClass
	// nicMatch and interMatch say whether the NICs and the resources between racks have
	// one same nominal rate on both clusters.
	nicMatch, interMatch bool
}

// learnedField is a field of LearnedParams by its JSON key, and whether a record sets it.
type learnedField struct {
	key string
	set func(lp *LearnedParams) bool
}

// learnedKeys lists "learned.<model>.<key>" for every learned model of out, model by model,
// and each of fields it sets, in the order of fields.
func (c *carrier) learnedKeys(fields ...learnedField) []string {
	var keys []string
	for _, m := range c.models {
		lp := c.out.Learned[m]
		if lp == nil {
			continue
		}
		for _, f := range fields {
			if f.set(lp) {
				keys = append(keys, "learned."+m+"."+f.key)
			}
		}
	}
	return keys
}

func (c *carrier) add(class, outcome string, keys []string, note string) {
	c.classes = append(c.classes, CarriedClass{Class: class, Outcome: outcome, Parameters: keys, Note: note})
}

func (c *carrier) nicDesc(n *Nominal) string { return "NICs of " + formatRates(n.NICBps) }

// interDesc describes the resources between racks of a cluster.
func (c *carrier) interDesc(n *Nominal) string {
	switch n.InterRack {
	case ClassBackbone:
		return "a backbone of " + formatRates(n.InterRackBps)
	case ClassUplink:
		return "uplinks of " + formatRates(n.InterRackBps)
	}
	return "one rack"
}

// nics carries the NIC class: the NIC capacity, the ceiling, the penalty α and the learned
// models' capacities, ceilings and ramp-up costs.
func (c *carrier) nics() {
	f, fOK := single(c.from.NICBps)
	t, tOK := single(c.to.NICBps)
	c.nicMatch = fOK && tOK && f == t
	var keys []string
	for _, k := range []struct {
		key string
		set bool
	}{{"ceiling_bps", c.p.CeilingBps > 0}, {"nic_bps", c.p.NICBps > 0}, {"penalty_alpha_s_per_byte", c.p.PenaltyAlpha > 0}} {
		if k.set {
			keys = append(keys, k.key)
		}
	}
	keys = append(keys, c.learnedKeys(
		learnedField{"ceiling_bps", func(lp *LearnedParams) bool { return lp.CeilingBps > 0 }},
		learnedField{"nic_bps", func(lp *LearnedParams) bool { return lp.NICBps > 0 }},
		learnedField{"ack_ramp_s", func(lp *LearnedParams) bool { return lp.AckRamp > 0 }},
		learnedField{"ack_ramp_max", func(lp *LearnedParams) bool { return lp.AckRampMax > 0 }})...)
	rates := "fitted for " + c.nicDesc(c.from) + "; the cluster has " + c.nicDesc(c.to)
	instead := fmt.Sprintf("%g × nominal (%s); per-flow ceiling the slowest NIC's; penalty α 8/ceiling; no ramp-up cost", c.eff, formatRates(c.to.NICBps))
	switch {
	case len(keys) == 0:
		c.add(ClassNIC, Fallback, nil, fmt.Sprintf("nothing fitted for the NICs (the cluster has %s): %s", c.nicDesc(c.to), instead))
	case c.nicMatch:
		c.add(ClassNIC, Carried, keys, rates)
	default:
		c.out.CeilingBps, c.out.NICBps, c.out.PenaltyAlpha = 0, 0, 0
		for _, lp := range c.out.Learned {
			lp.CeilingBps, lp.NICBps, lp.AckRamp, lp.AckRampMax = 0, 0, 0, 0
		}
		c.add(ClassNIC, Fallback, keys, rates+": "+instead)
	}
}

// interRack carries the class of the resources between racks: the backbone capacity and the
// learned models'.
func (c *carrier) interRack() {
	f, fOK := single(c.from.InterRackBps)
	t, tOK := single(c.to.InterRackBps)
	c.interMatch = c.from.InterRack != "" && c.from.InterRack == c.to.InterRack && fOK && tOK && f == t
	var keys []string
	if c.p.BackboneBps > 0 {
		keys = append(keys, "backbone_bps")
	}
	keys = append(keys, c.learnedKeys(learnedField{"backbone_bps", func(lp *LearnedParams) bool { return lp.BackboneBps > 0 }})...)
	if !c.interMatch {
		c.out.BackboneBps = 0
		for _, lp := range c.out.Learned {
			lp.BackboneBps = 0
		}
	}
	rates := "fitted for " + c.interDesc(c.from) + "; the cluster has " + c.interDesc(c.to)
	instead := fmt.Sprintf("%g × nominal (%s)", c.eff, formatRates(c.to.InterRackBps))
	switch {
	case c.to.InterRack == "" && len(keys) > 0:
		class := c.from.InterRack
		if class == "" {
			class = ClassBackbone
		}
		c.add(class, Dropped, keys, rates+": no transfer leaves its rack")
	case c.to.InterRack == "":
	case len(keys) == 0:
		c.add(c.to.InterRack, Fallback, nil, fmt.Sprintf("nothing fitted between racks (the cluster has %s): %s", c.interDesc(c.to), instead))
	case c.interMatch:
		c.add(c.to.InterRack, Carried, keys, rates)
	default:
		c.add(c.to.InterRack, Fallback, keys, rates+": "+instead)
	}
}

// paths carries Hockney's α and β class by class: a path class whose resource classes were
// all carried.
func (c *carrier) paths(to *cluster.Cluster) {
	c.out.LatencyS, c.out.InverseBandwidth = nil, nil
	hasIntra := false
	for _, pair := range to.ClassPairs() {
		hasIntra = hasIntra || pair.Class == cluster.IntraRack
	}
	for _, pc := range []struct {
		class           cluster.PathClass
		exists, match   bool
		fitted, missing string
	}{
		{cluster.IntraRack, hasIntra, c.nicMatch,
			"fitted on paths through " + c.nicDesc(c.from) + "; the cluster has " + c.nicDesc(c.to), "no rack holds two nodes"},
		{cluster.InterRack, c.to.InterRack != "", c.nicMatch && c.interMatch,
			"fitted on paths through " + c.nicDesc(c.from) + " and " + c.interDesc(c.from) + "; the cluster has " + c.nicDesc(c.to) + " and " + c.interDesc(c.to),
			"no transfer leaves its rack"},
	} {
		var keys []string
		alpha, hasAlpha := c.p.LatencyS[pc.class]
		beta, hasBeta := c.p.InverseBandwidth[pc.class]
		if hasAlpha {
			keys = append(keys, "latency_s."+string(pc.class))
		}
		if hasBeta {
			keys = append(keys, "inverse_bandwidth_s_per_byte."+string(pc.class))
		}
		switch {
		case len(keys) == 0:
		case !pc.exists:
			c.add(string(pc.class), Dropped, keys, pc.missing)
		case pc.match:
			if hasAlpha {
				c.out.LatencyS = setClass(c.out.LatencyS, pc.class, alpha)
			}
			if hasBeta {
				c.out.InverseBandwidth = setClass(c.out.InverseBandwidth, pc.class, beta)
			}
			c.add(string(pc.class), Carried, keys, pc.fitted)
		default:
			c.add(string(pc.class), Fallback, keys, pc.fitted+": no latency added; hockney's β 8/ceiling")
		}
	}
}

// factors lists the parameters without a rate, carried as they are.
func (c *carrier) factors() {
	keys := []string{"efficiency"}
	if c.p.ContraFactor != 1 {
		keys = append(keys, "contra_factor")
	}
	keys = append(keys, c.learnedKeys(
		learnedField{"spread", func(lp *LearnedParams) bool { return lp.Spread > 0 }},
		learnedField{"samples", func(lp *LearnedParams) bool { return lp.Samples > 0 }},
		learnedField{"coupling", func(lp *LearnedParams) bool { return lp.Coupling > 0 }},
		learnedField{"surface", func(lp *LearnedParams) bool { return len(lp.Surface) > 0 }},
		learnedField{"ack_in", func(lp *LearnedParams) bool { return lp.AckIn > 0 }},
		learnedField{"ack_out", func(lp *LearnedParams) bool { return lp.AckOut > 0 }},
		learnedField{"ack_full", func(lp *LearnedParams) bool { return lp.AckFull > 0 }},
		learnedField{"ack_lone", func(lp *LearnedParams) bool { return lp.AckLone != nil }},
		learnedField{"ack_relief", func(lp *LearnedParams) bool { return lp.AckRelief > 0 }},
		learnedField{"alpha", func(lp *LearnedParams) bool { return lp.Alpha > 0 }})...)
	c.add(ClassFactors, Carried, keys, "fractions and factors without a rate apply as they are")
}

// setClass sets m[class] = v, making the map when it is nil.
func setClass(m map[cluster.PathClass]float64, class cluster.PathClass, v float64) map[cluster.PathClass]float64 {
	if m == nil {
		m = map[cluster.PathClass]float64{}
	}
	m[class] = v
	return m
}

// CarriesAny says whether classes carry a fitted parameter to the other cluster: one of
// class Carried other than the efficiency, which is a setting, not a fit.
func CarriesAny(classes []CarriedClass) bool {
	for _, c := range classes {
		if c.Outcome != Carried {
			continue
		}
		for _, k := range c.Parameters {
			if k != "efficiency" {
				return true
			}
		}
	}
	return false
}
