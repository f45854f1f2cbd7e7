package contention

import (
	"fmt"
	"math"

	"github.com/commcal/commcal/cluster"
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
	// every backbone or uplink direction (measured capacities, design §4.3).
	NICBps      float64 `json:"nic_bps,omitempty"`
	BackboneBps float64 `json:"backbone_bps,omitempty"`
	// ContraFactor is φ of asymmetric-fitted (design §4.4).
	ContraFactor float64 `json:"contra_factor"`
	// LatencyS is Hockney's α per path class, added to every model's times when set.
	LatencyS map[cluster.PathClass]float64 `json:"latency_s,omitempty"`
	// InverseBandwidth is Hockney's β per path class, in seconds per byte.
	InverseBandwidth map[cluster.PathClass]float64 `json:"inverse_bandwidth_s_per_byte,omitempty"`
	// PenaltyAlpha is the penalty models' α in seconds per byte; 0 means 8/ceiling.
	PenaltyAlpha float64 `json:"penalty_alpha_s_per_byte,omitempty"`
}

// DefaultParams are the papers' Ethernet values: 94% efficiency, the full asymmetric rule.
func DefaultParams() Params { return Params{Efficiency: DefaultEfficiency, ContraFactor: 1} }

// Network builds the models' view of a cluster from the parameters.
func (p Params) Network(cl *cluster.Cluster) (*Network, error) {
	eff := p.Efficiency
	if eff == 0 {
		eff = DefaultEfficiency
	}
	if !(eff > 0 && eff <= 1) {
		return nil, fmt.Errorf("contention: efficiency %g outside (0, 1]", eff)
	}
	for name, v := range map[string]float64{"ceiling_bps": p.CeilingBps, "nic_bps": p.NICBps, "backbone_bps": p.BackboneBps, "penalty_alpha": p.PenaltyAlpha} {
		if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("contention: %s = %g, want a finite non-negative number", name, v)
		}
	}
	if p.ContraFactor < 0 || p.ContraFactor > 1 {
		return nil, fmt.Errorf("contention: contra_factor %g outside [0, 1]", p.ContraFactor)
	}
	net := NewNetwork(cl, eff)
	for i, r := range cl.Resources() {
		switch {
		case (r.Kind == cluster.NICOut || r.Kind == cluster.NICIn) && p.NICBps > 0:
			net.Capacity[i] = p.NICBps
		case r.Kind >= cluster.UplinkUp && p.BackboneBps > 0:
			net.Capacity[i] = p.BackboneBps
		}
	}
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
	return net, nil
}
