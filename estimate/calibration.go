package estimate

import (
	"fmt"
	"math"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/contention"
	"github.com/commcal/commcal/datasets"
	"github.com/commcal/commcal/experiments"
)

// CalibrationFormat versions calibration.json. Version 2 writes a value or bound that is not
// finite as null with a "nonfinite" flag (see Param); version 1 wrote the strings "inf",
// "-inf" and "nan" in number fields. Both are read (CalibrationFormats).
const CalibrationFormat = "commcal-calibration/2"

// CalibrationFormats are the format tags of the calibrations commcal reads.
var CalibrationFormats = []string{"commcal-calibration/1", CalibrationFormat}

// Calibration is every parameter a dataset's calibration experiments determine, each with its
// interval and the observations behind it, and the contention parameters derived from them.
// An estimator whose experiments are absent is listed in Skipped with the reason.
type Calibration struct {
	Format  string       `json:"format"`
	Tool    string       `json:"tool"`
	Version string       `json:"version"`
	Created string       `json:"created"`
	Cluster string       `json:"cluster"`
	Hockney []HockneyFit `json:"hockney,omitempty"`
	// HockneySegments is Hockney per protocol regime (breaks by Bai–Perron), per class.
	HockneySegments []SegmentedHockney `json:"hockney_segments,omitempty"`
	Fairness        []*FairnessFit     `json:"fairness,omitempty"`
	Contra          *ContraFit         `json:"contra,omitempty"`
	// Learned is the learned models' calibrations through the model, one per model.
	Learned    []*LearnedFit     `json:"learned,omitempty"`
	LMO        *LMOFit           `json:"lmo,omitempty"`
	Thresholds *ThresholdFit     `json:"thresholds,omitempty"`
	L          *LFit             `json:"l,omitempty"`
	Penalties  *PenaltyFit       `json:"penalties,omitempty"`
	Params     contention.Params `json:"params"`
	Skipped    []Skipped         `json:"skipped,omitempty"`
	Warnings   []string          `json:"warnings,omitempty"`
}

// Skipped names an estimator that could not run and why.
type Skipped struct {
	Estimator string `json:"estimator"`
	Reason    string `json:"reason"`
}

// Inputs are the tables a calibration reads.
type Inputs struct {
	Transfers     []datasets.Transfer
	RoundTrips    []datasets.RoundTrip
	OneToTwo      []datasets.OneToTwo
	Collectives   []datasets.Collective
	PingPongPairs []datasets.PingPongPairs
	// HockneyBreaks, when set, are the sizes at which Hockney's segments start (given by the
	// user or SimGrid's breakpoints file) instead of the ones Bai–Perron finds.
	HockneyBreaks []float64
}

// Calibrate runs every estimator on the calibration experiments of a dataset (never on the
// held-out ones: random and alltoallv transfers are not read) and derives the contention
// parameters: the per-flow ceiling and the NIC capacity from fair_intra, the backbone or
// uplink capacity from fair_inter when it saturated, Hockney α (latency) and β per path class
// from p2p_sweep, φ of asymmetric-fitted from bidir_*, and the penalty table with its α from
// static_sync. Resources without a measured capacity keep defaults' efficiency × nominal
// rate. An estimator without its data is skipped, not an error; degenerate data is reported
// the same way, with the estimator's message.
func Calibrate(cl *cluster.Cluster, in Inputs, defaults contention.Params, weighted bool) *Calibration {
	c := &Calibration{Format: CalibrationFormat, Cluster: cl.Name(), Params: defaults}
	skip := func(name string, err error) {
		c.Skipped = append(c.Skipped, Skipped{Estimator: name, Reason: err.Error()})
	}
	var err error
	if c.Hockney, err = FitHockney(cl, in.Transfers, weighted); err != nil {
		skip("hockney", err)
	} else {
		c.Params.LatencyS = map[cluster.PathClass]float64{}
		c.Params.InverseBandwidth = map[cluster.PathClass]float64{}
		for _, h := range c.Hockney {
			if h.Alpha.Value > 0 {
				c.Params.LatencyS[h.Class] = h.Alpha.Value
			} else {
				c.Warnings = append(c.Warnings, fmt.Sprintf("hockney %s: α = %.3g s is not positive; no latency is added for the class", h.Class, h.Alpha.Value))
			}
			if h.Beta.Value > 0 && !math.IsInf(h.Beta.Value, 0) {
				c.Params.InverseBandwidth[h.Class] = h.Beta.Value
			} else {
				c.Warnings = append(c.Warnings, fmt.Sprintf("hockney %s: β = %.3g s/B is not positive; the class keeps the models' rates", h.Class, h.Beta.Value))
			}
		}
	}
	if c.HockneySegments, err = FitHockneySegmentsAll(cl, in.Transfers, in.RoundTrips, in.HockneyBreaks); err != nil {
		skip("hockney-segments", err)
	}
	for _, sh := range c.HockneySegments {
		for _, seg := range sh.Segments {
			for _, f := range seg.Flags {
				c.Warnings = append(c.Warnings, fmt.Sprintf("hockney segment %s %.0f–%.0f B: %s", sh.Class, seg.FromBytes, seg.ToBytes, f))
			}
		}
	}
	for _, exp := range experiments.Fairness() {
		f, err := FitFairness(in.Transfers, exp)
		if err != nil {
			skip(exp, err)
			continue
		}
		c.Fairness = append(c.Fairness, f)
		finite := func(p Param) bool { return !math.IsInf(p.Value, 0) && !math.IsNaN(p.Value) && p.Value > 0 }
		// A capacity is adopted only when its interval is finite: measured at two or more
		// saturated flow counts. One saturated point could be noise at the last k.
		bounded := func(p Param) bool { return finite(p) && !math.IsInf(p.CILow, 0) && !math.IsInf(p.CIHigh, 0) }
		switch exp {
		case experiments.FairIntra:
			if bounded(f.Capacity) {
				c.Params.NICBps = f.Capacity.Value
			}
			if finite(f.Ceiling) && f.Ceiling.N > 0 {
				c.Params.CeilingBps = f.Ceiling.Value
			} else if finite(f.Capacity) {
				c.Params.CeilingBps = f.Capacity.Value // saturated at k = 1: alone, a flow fills the NIC
			}
		case experiments.FairInter:
			if bounded(f.Capacity) && f.SaturatedFrom > 0 {
				c.Params.BackboneBps = f.Capacity.Value
			} else {
				c.Warnings = append(c.Warnings, fmt.Sprintf("fair_inter: the backbone did not saturate at two or more flow counts (largest k %d); its capacity stays %g × nominal",
					f.Rates[len(f.Rates)-1].K, c.Params.Efficiency))
			}
			if c.Params.CeilingBps == 0 && finite(f.Ceiling) && f.Ceiling.N > 0 {
				c.Params.CeilingBps = f.Ceiling.Value
			}
		}
	}
	if c.Params.CeilingBps == 0 && len(c.Fairness) == 0 {
		// No fairness experiment: the per-flow ceiling is what one transfer alone reached,
		// the rate of the point-to-point fit (its slowest class), rather than a share of the
		// nominal rate that the network may never deliver.
		for _, h := range c.Hockney {
			if r := 8 / h.Beta.Value; h.Beta.Value > 0 && (c.Params.CeilingBps == 0 || r < c.Params.CeilingBps) {
				c.Params.CeilingBps = r
			}
		}
		if c.Params.CeilingBps > 0 {
			c.Warnings = append(c.Warnings, fmt.Sprintf("no fairness experiments: the per-flow ceiling is the point-to-point rate 8/β = %.4g Mbit/s of the Hockney fit; NIC and backbone capacities stay %g × nominal",
				c.Params.CeilingBps/1e6, c.Params.Efficiency))
		}
	}
	if c.Contra, err = FitContraFactor(cl, in.Transfers, c.Params, 1); err != nil {
		skip("contra-factor", err)
	} else {
		c.Params.ContraFactor = c.Contra.Phi
	}
	var stages *maxminStages // ackpath's, for ackpath-alpha's fit (maxminStages)
	for _, m := range contention.LearnedModels() {
		lf, err := fitLearned(cl, in.Transfers, c.Params, m, &stages)
		if err != nil {
			skip("learned:"+m.Name(), err)
			continue
		}
		c.Learned = append(c.Learned, lf)
		for _, w := range lf.Warnings {
			c.Warnings = append(c.Warnings, "learned:"+m.Name()+": "+w)
		}
		if c.Params.Learned == nil {
			c.Params.Learned = map[string]*contention.LearnedParams{}
		}
		c.Params.Learned[m.Name()] = lf.Params
	}
	if c.LMO, err = FitLMO(in.RoundTrips, in.OneToTwo); err != nil {
		skip("lmo", err)
		skip("thresholds", fmt.Errorf("κ1 and κ2 need the LMO parameters, which were not fitted (see lmo)"))
	} else if w := c.LMO.nicBoundWarning(); w != "" {
		c.Warnings = append(c.Warnings, w)
	}
	if c.LMO != nil {
		if c.Thresholds, err = FitThresholds(in.Collectives, c.LMO); err != nil {
			skip("thresholds", err)
		}
	}
	if c.L, err = FitL(in.PingPongPairs); err != nil {
		skip("l", err)
	}
	if c.Penalties, err = BackSolvePenalties(cl, in.Transfers, defaults.PenaltyAlpha); err != nil {
		skip("penalties", err)
	} else {
		c.Params.PenaltyAlpha = c.Penalties.Alpha
		for _, u := range c.Penalties.Unsolved {
			c.Warnings = append(c.Warnings, fmt.Sprintf("penalties: graph %s (%s) not solved: %s", u.Pattern, u.Graph, u.Reason))
		}
	}
	return c
}

// PenaltyTable returns the calibration's penalty table, or nil.
func (c *Calibration) PenaltyTable() *contention.PenaltyTable {
	if c == nil || c.Penalties == nil {
		return nil
	}
	return c.Penalties.Table
}
