package contention

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/internal/badinput"
)

// Params are the calibrated parameters the models need, as stored in calibration files.
// Rates are in bits per second, times in seconds.
type Params struct {
	// Efficiency scales every nominal rate of the cluster description into a capacity
	// (DefaultEfficiency when 0).
	Efficiency float64 `json:"efficiency"`
	// CeilingBps is the per-flow ceiling; 0 means the slowest NIC's capacity.
	CeilingBps float64 `json:"ceiling_bps,omitempty"`
	// NICBps and BackboneBps, when set, replace the capacities of every NIC direction and of
	// every backbone or uplink direction (capacities measured by the fairness experiments).
	NICBps      float64 `json:"nic_bps,omitempty"`
	BackboneBps float64 `json:"backbone_bps,omitempty"`
	// ContraFactor is φ of asymmetric-fitted, fitted on the bidirectional experiments.
	ContraFactor float64 `json:"contra_factor"`
	// LatencyS is Hockney's α per path class, added to every model's times when set.
	LatencyS map[cluster.PathClass]float64 `json:"latency_s,omitempty"`
	// InverseBandwidth is Hockney's β per path class, in seconds per byte.
	InverseBandwidth map[cluster.PathClass]float64 `json:"inverse_bandwidth_s_per_byte,omitempty"`
	// PenaltyAlpha is the penalty models' α in seconds per byte; 0 means 8/ceiling.
	PenaltyAlpha float64 `json:"penalty_alpha_s_per_byte,omitempty"`
	// Learned holds the parameters of the models that learn the network (learned.go), each
	// model's own, keyed by its name; a model without an entry runs as plain max-min.
	Learned map[string]*LearnedParams `json:"learned,omitempty"`
	// Nominal, when set, is the nominal rates of the cluster the parameters were fitted on,
	// class by class. The models do not read it: it is what the absolute rates above are
	// measured against, so that a calibration can be applied to another cluster class by
	// class (Carry).
	Nominal *Nominal `json:"nominal,omitempty"`
}

// DefaultParams are the papers' Ethernet values: 94% efficiency, the full asymmetric rule.
func DefaultParams() Params { return Params{Efficiency: DefaultEfficiency, ContraFactor: 1} }

// Validate checks the range of every parameter, naming each by its JSON key:
//
//   - efficiency in (0, 1], or 0 for DefaultEfficiency;
//   - ceiling_bps, nic_bps, backbone_bps and penalty_alpha_s_per_byte positive and finite,
//     or 0 for their defaults (the slowest NIC, the nominal rates, 8/ceiling);
//   - contra_factor in [0, 1];
//   - latency_s.<class> finite and not negative (a negative α would predict negative times);
//   - inverse_bandwidth_s_per_byte.<class> positive and finite;
//   - every key of latency_s and inverse_bandwidth_s_per_byte a path class
//     (cluster.PathClasses: intra-rack, inter-rack), so that a misspelled class is not
//     silently ignored;
//   - nominal's rates positive and finite, each once in increasing order, and its
//     inter-rack class backbone or uplink, given with its rates.
//
// The error lists every problem on one line ("contention: latency_s.inter-rack: -0.1 is
// negative; ...") and is bad input (internal/badinput) without a file: a caller that read the
// parameters from a file adds it with badinput.Errorf(file, "%w", err) (badinput.Wrap keeps
// an error already marked as it is).
func (p Params) Validate() error {
	var probs []string
	bad := func(key string, format string, a ...any) {
		probs = append(probs, key+": "+fmt.Sprintf(format, a...))
	}
	switch e := p.Efficiency; {
	case !finite(e):
		bad("efficiency", "%g is not a finite number", e)
	case e < 0 || e > 1:
		bad("efficiency", "%g outside (0, 1] (0 means the default %g)", e, DefaultEfficiency)
	}
	for _, f := range []struct {
		key string
		v   float64
	}{{"ceiling_bps", p.CeilingBps}, {"nic_bps", p.NICBps}, {"backbone_bps", p.BackboneBps}, {"penalty_alpha_s_per_byte", p.PenaltyAlpha}} {
		switch {
		case !finite(f.v):
			bad(f.key, "%g is not a finite number", f.v)
		case f.v < 0:
			bad(f.key, "%g is negative, want a positive number (or 0 for the default)", f.v)
		}
	}
	switch c := p.ContraFactor; {
	case !finite(c):
		bad("contra_factor", "%g is not a finite number", c)
	case c < 0 || c > 1:
		bad("contra_factor", "%g outside [0, 1]", c)
	}
	classes := cluster.PathClasses()
	known := func(key string, class cluster.PathClass) bool {
		if slices.Contains(classes, class) {
			return true
		}
		names := make([]string, len(classes))
		for i, c := range classes {
			names[i] = string(c)
		}
		bad(key+"."+string(class), "unknown path class %q, want %s", string(class), strings.Join(names, " or "))
		return false
	}
	// Per path class: a latency may be 0, an inverse bandwidth may not.
	for _, m := range []struct {
		key      string
		values   map[cluster.PathClass]float64
		zeroOK   bool
		belowMsg string
	}{{"latency_s", p.LatencyS, true, "%g is negative"}, {"inverse_bandwidth_s_per_byte", p.InverseBandwidth, false, "%g is not positive"}} {
		for _, class := range sortedClasses(m.values) {
			key, v := m.key+"."+string(class), m.values[class]
			switch {
			case !known(m.key, class):
			case !finite(v):
				bad(key, "%g is not a finite number", v)
			case v < 0 || v == 0 && !m.zeroOK:
				bad(key, m.belowMsg, v)
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(p.Learned)) {
		if !slices.Contains(LearnedNames(), name) {
			bad("learned."+name, "not a learned model (%s)", strings.Join(LearnedNames(), ", "))
			continue
		}
		if err := p.Learned[name].Validate(); err != nil {
			bad("learned."+name, "%v", err)
		}
	}
	if p.Nominal != nil {
		p.Nominal.validate(bad)
	}
	if len(probs) == 0 {
		return nil
	}
	return badinput.Errorf("", "contention: %s", strings.Join(probs, "; "))
}

// finite says whether v is a number other than NaN and ±Inf.
func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// sortedClasses returns a per-class map's keys in order, so that messages are stable.
func sortedClasses(m map[cluster.PathClass]float64) []cluster.PathClass {
	keys := make([]cluster.PathClass, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// setCapacities sets every NIC direction's capacity to nic and every backbone or uplink
// direction's to backbone, each when positive (measured capacities replacing nominal ones).
func setCapacities(cl *cluster.Cluster, capacity []float64, nic, backbone float64) {
	for i, r := range cl.Resources() {
		switch {
		case (r.Kind == cluster.NICOut || r.Kind == cluster.NICIn) && nic > 0:
			capacity[i] = nic
		case r.Kind >= cluster.UplinkUp && backbone > 0:
			capacity[i] = backbone
		}
	}
}

// Network builds the models' view of a cluster from the parameters, after checking them
// (Validate).
func (p Params) Network(cl *cluster.Cluster) (*Network, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	eff := p.Efficiency
	if eff == 0 {
		eff = DefaultEfficiency
	}
	net := NewNetwork(cl, eff)
	setCapacities(cl, net.Capacity, p.NICBps, p.BackboneBps)
	if p.NICBps > 0 {
		net.Ceiling = p.NICBps
	}
	if p.CeilingBps > 0 {
		net.Ceiling = p.CeilingBps
	}
	net.ContraFactor = p.ContraFactor
	net.Latency = p.LatencyS
	net.InverseBandwidth = p.InverseBandwidth
	net.Penalty.Alpha = p.PenaltyAlpha
	net.Learned = p.Learned
	return net, nil
}
