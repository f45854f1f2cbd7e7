package contention

import (
	"fmt"
	"slices"
)

// LearnedParams are one learned model's parameters (Params.Learned, keyed by the model's
// name), fitted through the model on the calibration experiments (estimate.FitLearned). One
// record serves the whole family, so that calibration.json has one shape for every learned
// model: each model reads the fields of its components (LearnedVariant) and ignores the others.
type LearnedParams struct {
	// CeilingBps, NICBps and BackboneBps, when set, replace the network's per-flow ceiling and
	// the capacities of every NIC direction and of every backbone or uplink direction: the
	// capacities fitted through this model.
	CeilingBps  float64 `json:"ceiling_bps,omitempty"`
	NICBps      float64 `json:"nic_bps,omitempty"`
	BackboneBps float64 `json:"backbone_bps,omitempty"`
	// Spread is σ of the log-normal share weights of stochastic.
	Spread float64 `json:"spread"`
	// Samples is the number of weight samples of the stochastic variants (DefaultSamples
	// when 0).
	Samples int `json:"samples,omitempty"`
	// Coupling is κ of duplex.
	Coupling float64 `json:"coupling"`
	// Surface is the bidirectional surface of surface.
	Surface []SurfaceCell `json:"surface,omitempty"`
	// AckIn, AckOut and AckFull are a, b and c of ackpath: the slowdown per transfer beyond
	// the first entering a transfer's sender, and leaving its receiver, where a queue stands;
	// and per NIC direction on its acknowledgements' path that holds a queue (one that two
	// transfers or more share, when AckLone is set).
	AckIn   float64 `json:"ack_in,omitempty"`
	AckOut  float64 `json:"ack_out,omitempty"`
	AckFull float64 `json:"ack_full,omitempty"`
	// AckLone, when set, is c₁ of ackpath: c for a NIC direction on the acknowledgements' path
	// whose queue one transfer holds (a lone transfer's ceiling queue), c itself pricing those
	// that two transfers or more share. Absent (older calibrations), c₁ is c. A pointer, so
	// that a fitted 0 is kept apart from absent.
	AckLone *float64 `json:"ack_lone,omitempty"`
	// AckRamp is τ of ackpath, in seconds: a transfer's ramp-up cost per transfer beyond the
	// first into its sender or out of its receiver at the pattern's start; AckRampMax is K,
	// the count it is held at beyond (the largest of the calibration patterns; 0: not held).
	// Absent (0), there is no ramp-up cost.
	AckRamp    float64 `json:"ack_ramp_s,omitempty"`
	AckRampMax int     `json:"ack_ramp_max,omitempty"`
	// AckRelief is ρ of ackpath, in [0, 1]: the share of a transfer's slowdown d that its
	// ceiling is spared. Its weight is scaled by 1/(1 + d), its ceiling by 1/(1 + (1 − ρ)·d).
	// 0 (absent): the ceiling pays it all.
	AckRelief float64 `json:"ack_relief,omitempty"`
	// Alpha is α of ackpath-alpha's α-fair sharing, in [MinAlpha, MaxAlpha]; 0 (absent) is
	// α = ∞, weighted max-min, as ackpath.
	Alpha float64 `json:"alpha,omitempty"`
}

// LoneAck is ackpath's c₁: AckLone when set, else AckFull.
func (lp *LearnedParams) LoneAck() float64 {
	if lp.AckLone != nil {
		return *lp.AckLone
	}
	return lp.AckFull
}

// Validate checks the learned parameters' ranges, naming each by its JSON key.
func (lp *LearnedParams) Validate() error {
	if lp == nil {
		return nil
	}
	for _, c := range []struct {
		key string
		v   float64
	}{{"ceiling_bps", lp.CeilingBps}, {"nic_bps", lp.NICBps}, {"backbone_bps", lp.BackboneBps}} {
		if !finite(c.v) || c.v < 0 {
			return fmt.Errorf("%s: %g, want a positive finite rate (or 0 for the network's)", c.key, c.v)
		}
	}
	switch {
	case !finite(lp.Spread) || lp.Spread < 0 || lp.Spread > 3:
		return fmt.Errorf("spread: %g outside [0, 3]", lp.Spread)
	case lp.Samples < 0 || lp.Samples > 4096:
		return fmt.Errorf("samples: %d outside [0, 4096]", lp.Samples)
	case !finite(lp.Coupling) || lp.Coupling < 0 || lp.Coupling > 1:
		return fmt.Errorf("coupling: %g outside [0, 1]", lp.Coupling)
	}
	// ackpath's slowdowns (c₁ as LoneAck: c itself when absent).
	for _, c := range []struct {
		key string
		v   float64
	}{{"ack_in", lp.AckIn}, {"ack_out", lp.AckOut}, {"ack_full", lp.AckFull}, {"ack_lone", lp.LoneAck()}} {
		if !finite(c.v) || c.v < 0 || c.v > MaxAck {
			return fmt.Errorf("%s: %g outside [0, %g]", c.key, c.v, float64(MaxAck))
		}
	}
	switch {
	case !finite(lp.AckRamp) || lp.AckRamp < 0 || lp.AckRamp > MaxAckRamp:
		return fmt.Errorf("ack_ramp_s: %g outside [0, %g]", lp.AckRamp, float64(MaxAckRamp))
	case !finite(lp.AckRelief) || lp.AckRelief < 0 || lp.AckRelief > 1:
		return fmt.Errorf("ack_relief: %g outside [0, 1]", lp.AckRelief)
	case lp.AckRampMax < 0 || lp.AckRampMax > MaxPatternTransfers:
		return fmt.Errorf("ack_ramp_max: %d, want a count from 0 (not held) to %d (no pattern holds more transfers)", lp.AckRampMax, MaxPatternTransfers)
	case lp.Alpha != 0 && !(lp.Alpha >= MinAlpha && lp.Alpha <= MaxAlpha):
		return fmt.Errorf("alpha: %g outside [%g, %g] (or 0: infinite, max-min)", lp.Alpha, float64(MinAlpha), float64(MaxAlpha))
	}
	return checkSurface(lp.Surface)
}

// checkSurface checks a surface's cells: a known kind, counts in [1, MaxSurfaceCount], a
// factor in (0, 2], and each cell (kind, with, contra) once — the table holds one factor per
// cell, so a second would silently replace the first.
func checkSurface(cells []SurfaceCell) error {
	type cell struct {
		kind         string
		with, contra int
	}
	seen := make(map[cell]int, len(cells))
	for i, c := range cells {
		key := cell{c.Kind, c.With, c.Contra}
		prev, again := seen[key]
		seen[key] = i
		switch {
		case !slices.Contains(SurfaceKinds, c.Kind):
			return fmt.Errorf("surface[%d].kind: %q, want one of %v", i, c.Kind, SurfaceKinds)
		case c.With < 1 || c.Contra < 1 || c.With > MaxSurfaceCount || c.Contra > MaxSurfaceCount:
			return fmt.Errorf("surface[%d]: with %d and contra %d, want both in [1, %d]", i, c.With, c.Contra, MaxSurfaceCount)
		case !finite(c.Factor) || c.Factor <= 0 || c.Factor > 2:
			return fmt.Errorf("surface[%d].factor: %g outside (0, 2]", i, c.Factor)
		case again:
			return fmt.Errorf("surface[%d]: the cell %s with %d and contra %d is surface[%d] again (factors %g and %g); give each cell once",
				i, c.Kind, c.With, c.Contra, prev, cells[prev].Factor, c.Factor)
		}
	}
	return nil
}

// network returns net with the capacities this model was fitted with, a copy when they
// differ (net itself is shared by concurrent predictions and is not changed). Unlike
// Params.Network, the NIC capacity does not cap the ceiling: the two are fitted apart, and a
// lone transfer's rate is the smaller of them anyway.
func (lp *LearnedParams) network(net *Network) *Network {
	if lp.CeilingBps == 0 && lp.NICBps == 0 && lp.BackboneBps == 0 {
		return net
	}
	n := *net
	n.Capacity = slices.Clone(net.Capacity)
	setCapacities(net.Cluster, n.Capacity, lp.NICBps, lp.BackboneBps)
	if lp.CeilingBps > 0 {
		n.Ceiling = lp.CeilingBps
	}
	return &n
}
