package estimate

import (
	"context"
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
	// NotIdentified are the parameters the calibration leaves out, each with why and what
	// the models use instead.
	NotIdentified []Unidentified `json:"not_identified,omitempty"`
	Warnings      []string       `json:"warnings,omitempty"`
}

// Unidentified is a parameter left out of a calibration: no experiment of the dataset
// identifies it ("not identified: no experiment loads the NIC with two flows"), or its fit
// broke a physical or statistical bound (a capacity above the line rate, a slope whose
// interval spans zero); Reason names the experiment and the numbers. Fallback says what the
// models use in its place (the nominal rate, the model's default).
type Unidentified struct {
	Parameter string `json:"parameter"`
	Reason    string `json:"reason"`
	Fallback  string `json:"fallback,omitempty"`
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
// from p2p_sweep, φ of asymmetric-fitted from bidir_*, each learned model's parameters through
// the model, and the penalty table with its α from static_sync. Resources without a measured
// capacity keep defaults' efficiency × nominal rate. An estimator without its data is
// skipped, not an error; degenerate data is reported the same way, with the estimator's
// message. The stages run in the order of calibrationStages.
//
// When ctx is done, Calibrate stops within a second (the fits that can take longer, the
// learned models' and φ's, stop within a step of the predictions they run) and returns ctx's
// error, wrapped; the only error it returns is that one.
func Calibrate(ctx context.Context, cl *cluster.Cluster, in Inputs, defaults contention.Params, weighted bool) (*Calibration, error) {
	c := &Calibration{Format: CalibrationFormat, Cluster: cl.Name(), Params: defaults}
	run := &calibrationRun{ctx: ctx, c: c, cl: cl, in: in, defaults: defaults, weighted: weighted}
	for _, st := range calibrationStages {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("estimate: calibration stopped before %s: %w", st.name, err)
		}
		st.run(run)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("estimate: calibration stopped: %w", err)
	}
	return c, nil
}

// calibrationRun is one Calibrate call's state: the calibration it fills and what it reads.
// ctx is the call's; a stage stopped by it records a skip that Calibrate then discards.
type calibrationRun struct {
	ctx      context.Context
	c        *Calibration
	cl       *cluster.Cluster
	in       Inputs
	defaults contention.Params
	weighted bool
}

// skip records an estimator that could not run.
func (r *calibrationRun) skip(name string, err error) {
	r.c.Skipped = append(r.c.Skipped, Skipped{Estimator: name, Reason: err.Error()})
}

// unidentified records a parameter left out of the calibration, why, and what stands in for it.
func (r *calibrationRun) unidentified(param, fallback, format string, a ...any) {
	r.c.NotIdentified = append(r.c.NotIdentified, Unidentified{Parameter: param, Reason: fmt.Sprintf(format, a...), Fallback: fallback})
}

// warn records a statistical warning.
func (r *calibrationRun) warn(format string, a ...any) {
	r.c.Warnings = append(r.c.Warnings, fmt.Sprintf(format, a...))
}

// calibrationStage is one step of Calibrate: its estimators, and the parameter sets of the
// contention models (contention.ParamSet) it fits, if any.
type calibrationStage struct {
	name string
	fits []contention.ParamSet
	run  func(*calibrationRun)
}

// calibrationStages are Calibrate's steps in order: the learned models' fits start from the
// network parameters fitted before them.
var calibrationStages = []calibrationStage{
	{"hockney", []contention.ParamSet{contention.ParamsHockney}, (*calibrationRun).hockney},
	{"hockney-segments", nil, (*calibrationRun).hockneySegments},
	{"fairness", []contention.ParamSet{contention.ParamsNetwork}, (*calibrationRun).fairness},
	{"contra-factor", []contention.ParamSet{contention.ParamsContra}, (*calibrationRun).contra},
	{"learned", []contention.ParamSet{contention.ParamsLearned}, (*calibrationRun).learned},
	{"lmo", nil, (*calibrationRun).lmo},
	{"l", nil, (*calibrationRun).l},
	{"penalties", []contention.ParamSet{contention.ParamsPenalty, contention.ParamsPenaltyTable}, (*calibrationRun).penalties},
}

// hockney fits Hockney α and β per path class from the point-to-point sweeps; a class keeps
// the models' rates where β is not positive, and no latency where α is not.
func (r *calibrationRun) hockney() {
	c := r.c
	var err error
	if c.Hockney, err = FitHockney(r.cl, r.in.Transfers, r.weighted); err != nil {
		r.skip("hockney", err)
		return
	}
	c.Params.LatencyS = map[cluster.PathClass]float64{}
	c.Params.InverseBandwidth = map[cluster.PathClass]float64{}
	for _, h := range c.Hockney {
		if h.Alpha.Value > 0 {
			c.Params.LatencyS[h.Class] = h.Alpha.Value
		} else {
			r.warn("hockney %s: α = %.3g s is not positive; no latency is added for the class", h.Class, h.Alpha.Value)
		}
		if h.Beta.Value > 0 && !math.IsInf(h.Beta.Value, 0) {
			c.Params.InverseBandwidth[h.Class] = h.Beta.Value
		} else {
			r.warn("hockney %s: β = %.3g s/B is not positive; the class keeps the models' rates", h.Class, h.Beta.Value)
		}
	}
}

// hockneySegments fits Hockney per protocol regime and reports each segment's flags.
func (r *calibrationRun) hockneySegments() {
	c := r.c
	var err error
	if c.HockneySegments, err = FitHockneySegmentsAll(r.cl, r.in.Transfers, r.in.RoundTrips, r.in.HockneyBreaks); err != nil {
		r.skip("hockney-segments", err)
	}
	for _, sh := range c.HockneySegments {
		for _, seg := range sh.Segments {
			for _, f := range seg.Flags {
				r.warn("hockney segment %s %.0f–%.0f B: %s", sh.Class, seg.FromBytes, seg.ToBytes, f)
			}
		}
	}
}

// fairness fits the per-flow ceiling and the NIC and backbone capacities from the fairness
// experiments, or, without any, the ceiling from the point-to-point rate.
func (r *calibrationRun) fairness() {
	c := r.c
	for _, exp := range experiments.Fairness() {
		f, err := FitFairness(r.in.Transfers, exp)
		if err != nil {
			r.skip(exp, err)
			continue
		}
		c.Fairness = append(c.Fairness, f)
		r.adoptFairness(exp, f)
	}
	if c.Params.CeilingBps == 0 && len(c.Fairness) == 0 {
		r.ceilingFromHockney()
	}
}

// adoptFairness takes a fairness fit's capacities into the parameters. A capacity is adopted
// only when its interval is finite: measured at two or more saturated flow counts. One
// saturated point could be noise at the last k.
func (r *calibrationRun) adoptFairness(exp string, f *FairnessFit) {
	p := &r.c.Params
	finite := func(v Param) bool { return !math.IsInf(v.Value, 0) && !math.IsNaN(v.Value) && v.Value > 0 }
	bounded := func(v Param) bool { return finite(v) && !math.IsInf(v.CILow, 0) && !math.IsInf(v.CIHigh, 0) }
	switch exp {
	case experiments.FairIntra:
		if bounded(f.Capacity) {
			p.NICBps = f.Capacity.Value
		}
		if finite(f.Ceiling) && f.Ceiling.N > 0 {
			p.CeilingBps = f.Ceiling.Value
		} else if finite(f.Capacity) {
			p.CeilingBps = f.Capacity.Value // saturated at k = 1: alone, a flow fills the NIC
		}
	case experiments.FairInter:
		if bounded(f.Capacity) && f.SaturatedFrom > 0 {
			p.BackboneBps = f.Capacity.Value
		} else {
			r.warn("fair_inter: the backbone did not saturate at two or more flow counts (largest k %d); its capacity stays %g × nominal",
				f.Rates[len(f.Rates)-1].K, p.Efficiency)
		}
		if p.CeilingBps == 0 && finite(f.Ceiling) && f.Ceiling.N > 0 {
			p.CeilingBps = f.Ceiling.Value
		}
	}
}

// ceilingFromHockney sets the per-flow ceiling, without any fairness experiment, to what one
// transfer alone reached: the rate of the point-to-point fit (its slowest class), rather than
// a share of the nominal rate that the network may never deliver.
func (r *calibrationRun) ceilingFromHockney() {
	p := &r.c.Params
	for _, h := range r.c.Hockney {
		if rate := 8 / h.Beta.Value; h.Beta.Value > 0 && (p.CeilingBps == 0 || rate < p.CeilingBps) {
			p.CeilingBps = rate
		}
	}
	if p.CeilingBps > 0 {
		r.warn("no fairness experiments: the per-flow ceiling is the point-to-point rate 8/β = %.4g Mbit/s of the Hockney fit; NIC and backbone capacities stay %g × nominal",
			p.CeilingBps/1e6, p.Efficiency)
	}
}

// contra fits φ of asymmetric-fitted from the bidirectional experiments.
func (r *calibrationRun) contra() {
	var err error
	if r.c.Contra, err = FitContraFactor(r.ctx, r.cl, r.in.Transfers, r.c.Params, 1); err != nil {
		r.skip("contra-factor", err)
		return
	}
	r.c.Params.ContraFactor = r.c.Contra.Phi
}

// learned fits every registered learned model through the model, from the network parameters
// fitted so far, on whatever contention calibration patterns the dataset holds; the parameters
// a model's fit leaves out are listed as "learned/<model>/<parameter>" (NotIdentified).
func (r *calibrationRun) learned() {
	c := r.c
	var stages *maxminStages // ackpath's, for ackpath-alpha's fit (maxminStages)
	for _, m := range contention.LearnedModels() {
		if r.ctx.Err() != nil {
			return // Calibrate returns the error
		}
		lf, err := fitLearned(r.ctx, r.cl, r.in.Transfers, c.Params, m, &stages)
		if err != nil {
			r.skip("learned:"+m.Name(), err)
			continue
		}
		c.Learned = append(c.Learned, lf)
		for _, w := range lf.Warnings {
			c.Warnings = append(c.Warnings, "learned:"+m.Name()+": "+w)
		}
		for _, u := range lf.NotIdentified {
			r.unidentified("learned/"+m.Name()+"/"+u.Parameter, u.Fallback, "%s", u.Reason)
		}
		if c.Params.Learned == nil {
			c.Params.Learned = map[string]*contention.LearnedParams{}
		}
		c.Params.Learned[m.Name()] = lf.Params
	}
}

// lmo fits the LMO model from the round trips and one-to-two experiments, then the
// scatter/gather thresholds, whose κ need it.
func (r *calibrationRun) lmo() {
	c := r.c
	var err error
	if c.LMO, err = FitLMO(r.in.RoundTrips, r.in.OneToTwo); err != nil {
		r.skip("lmo", err)
		r.skip("thresholds", fmt.Errorf("κ1 and κ2 need the LMO parameters, which were not fitted (see lmo)"))
		return
	}
	if w := c.LMO.nicBoundWarning(); w != "" {
		c.Warnings = append(c.Warnings, w)
	}
	if c.Thresholds, err = FitThresholds(r.in.Collectives, c.LMO); err != nil {
		r.skip("thresholds", err)
	}
}

// l fits L(m, P) from the concurrent ping-pong pairs.
func (r *calibrationRun) l() {
	var err error
	if r.c.L, err = FitL(r.in.PingPongPairs); err != nil {
		r.skip("l", err)
	}
}

// penalties back-solves the penalty table and its α from the static-synchronous graphs.
func (r *calibrationRun) penalties() {
	c := r.c
	var err error
	if c.Penalties, err = BackSolvePenalties(r.cl, r.in.Transfers, r.defaults.PenaltyAlpha); err != nil {
		r.skip("penalties", err)
		return
	}
	c.Params.PenaltyAlpha = c.Penalties.Alpha
	for _, u := range c.Penalties.Unsolved {
		r.warn("penalties: graph %s (%s) not solved: %s", u.Pattern, u.Graph, u.Reason)
	}
}

// PenaltyTable returns the calibration's penalty table, or nil.
func (c *Calibration) PenaltyTable() *contention.PenaltyTable {
	if c == nil || c.Penalties == nil {
		return nil
	}
	return c.Penalties.Table
}
