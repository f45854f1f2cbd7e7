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
	Learned    []*LearnedFit `json:"learned,omitempty"`
	LMO        *LMOFit       `json:"lmo,omitempty"`
	Thresholds *ThresholdFit `json:"thresholds,omitempty"`
	L          *LFit         `json:"l,omitempty"`
	Penalties  *PenaltyFit   `json:"penalties,omitempty"`
	// Spread is how a transfer's time scatters from one repetition to the next (FitSpread),
	// which sets when a collective's round is expected to end.
	Spread *SpreadFit `json:"transfer_spread,omitempty"`
	// ModelSpreads is the key of format 2's first layout, each model's measured/predicted
	// ratios, which the transfer spread replaced: read so that those calibrations still open
	// (a run's --previous, compare), never used, and cleared when read (rundir).
	ModelSpreads []ModelSpread     `json:"prediction_spread,omitempty"`
	Params       contention.Params `json:"params"`
	Skipped      []Skipped         `json:"skipped,omitempty"`
	// NotIdentified are the parameters the calibration leaves out, each with why and what
	// the models use instead.
	NotIdentified []Unidentified `json:"not_identified,omitempty"`
	Warnings      []string       `json:"warnings,omitempty"`
}

// ModelSpread is one model's entry of prediction_spread (Calibration.ModelSpreads).
type ModelSpread struct {
	Model     string    `json:"model"`
	Transfers int       `json:"transfers"`
	Ratios    []float64 `json:"ratios"`
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
	// Schedules are collectives measured as the rounds of named algorithms: held out, for
	// validation alone.
	Schedules []datasets.Schedule
	// HockneyBreaks, when set, are the sizes at which Hockney's segments start (given by the
	// user or SimGrid's breakpoints file) instead of the ones Bai–Perron finds.
	HockneyBreaks []float64
}

// Calibrate runs every estimator on the calibration experiments of a dataset (never on the
// held-out ones: random and alltoallv transfers are not read) and derives the contention
// parameters: the per-flow ceiling and the NIC capacity from fair_intra, the backbone or
// uplink capacity from fair_inter when it saturated, Hockney α (latency) and β per path class
// from p2p_sweep, φ of asymmetric-fitted from bidir_*, each learned model's parameters through
// the model, the penalty table with its α from static_sync, and the transfers' spread over
// repetitions from the contention calibration experiments. Resources without a measured
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
	{"thresholds", nil, (*calibrationRun).thresholds},
	{"l", nil, (*calibrationRun).l},
	{"penalties", []contention.ParamSet{contention.ParamsPenalty, contention.ParamsPenaltyTable}, (*calibrationRun).penalties},
	{"transfer-spread", nil, (*calibrationRun).spread},
}

// spread fits the transfers' spread over repetitions (FitSpread: when a collective's round is
// expected to end); rows that contradict each other skip it.
func (r *calibrationRun) spread() {
	spread, unid, err := FitSpread(r.in.Transfers)
	if err != nil {
		r.skip("transfer-spread", err)
		return
	}
	if unid != nil {
		r.c.NotIdentified = append(r.c.NotIdentified, *unid)
	}
	r.c.Spread = spread
}

// hockney fits Hockney α and β per path class from the point-to-point sweeps; a class keeps
// the models' rates where β cannot be used as a rate (slopeReason: an interval reaching zero,
// r² below R2Floor, too few points, above the fastest NIC's line rate, or fitted on small
// messages only), and no latency where α is not positive.
func (r *calibrationRun) hockney() {
	c := r.c
	var err error
	if c.Hockney, err = FitHockney(r.cl, r.in.Transfers, r.weighted); err != nil {
		r.skip("hockney", err)
		return
	}
	c.Params.LatencyS = map[cluster.PathClass]float64{}
	c.Params.InverseBandwidth = map[cluster.PathClass]float64{}
	lr := nominalRates(r.cl)
	for _, h := range c.Hockney {
		switch {
		case h.SmallestSeconds > 0 && h.Alpha.Value > h.SmallestSeconds:
			// The intercept, pulled up by the large messages' noise, lies above the time a
			// whole smallest message took: no latency can.
			c.Params.LatencyS[h.Class] = h.SmallestSeconds
			r.refuse("hockney/"+string(h.Class)+"/alpha_s",
				fmt.Sprintf("the smallest message's median time, %.4g s (%.0f B)", h.SmallestSeconds, h.SmallestBytes),
				"hockney %s α from %s: the intercept %.4g s [%.4g, %.4g] exceeds the %.4g s a %.0f B message took: no latency is longer than a whole transfer",
				h.Class, experiments.P2PSweep, h.Alpha.Value, h.Alpha.CILow, h.Alpha.CIHigh, h.SmallestSeconds, h.SmallestBytes)
		case h.Alpha.Value > 0:
			c.Params.LatencyS[h.Class] = h.Alpha.Value
		default:
			r.warn("hockney %s: α = %.3g s is not positive; no latency is added for the class", h.Class, h.Alpha.Value)
		}
		what := "hockney " + string(h.Class) + " 8/β"
		why := slopeReason(what, h.Beta, h.R2, h.Sizes, lr.nic, experiments.P2PSweep)
		if h.BetaFromSmall {
			why = fmt.Sprintf("%s from %s: every observation but %d lies below n½ = α/β = %.4g B, where latency is most of the time: no rate to fit",
				what, experiments.P2PSweep, h.Beta.N-h.SmallRows, h.SmallBelowBytes)
		}
		if why == "" {
			c.Params.InverseBandwidth[h.Class] = h.Beta.Value
			continue
		}
		r.refuse("hockney/"+string(h.Class)+"/beta_s_per_byte",
			"8/ceiling_bps for the class: the per-flow ceiling, fitted on the fairness experiments or the slowest NIC's nominal rate × efficiency", "%s", why)
	}
}

// refuse records a fitted parameter left out of the calibration's use (unidentified) and
// warns of it, with the same words.
func (r *calibrationRun) refuse(param, fallback, format string, a ...any) {
	r.unidentified(param, fallback, format, a...)
	r.warn("not identified: %s: %s", param, fmt.Sprintf(format, a...))
}

// hockneySegments fits Hockney per protocol regime and reports each segment's flags, and
// holds every segment's β to the bounds of a rate (slopeReason).
func (r *calibrationRun) hockneySegments() {
	c := r.c
	var err error
	if c.HockneySegments, err = FitHockneySegmentsAll(r.cl, r.in.Transfers, r.in.RoundTrips, r.in.HockneyBreaks); err != nil {
		r.skip("hockney-segments", err)
	}
	lr := nominalRates(r.cl)
	for _, sh := range c.HockneySegments {
		for _, seg := range sh.Segments {
			for _, f := range seg.Flags {
				r.warn("hockney segment %s %.0f–%.0f B: %s", sh.Class, seg.FromBytes, seg.ToBytes, f)
			}
			what := fmt.Sprintf("hockney segment %s %.0f–%.0f B 8/β", sh.Class, seg.FromBytes, seg.ToBytes)
			if why := slopeReason(what, seg.Beta, seg.R2, seg.Beta.N, lr.nic, sh.Source); why != "" {
				r.refuse(SegmentName(sh.Class, seg)+"/beta_s_per_byte", "the class's Hockney β, where it is identified", "%s", why)
			}
		}
	}
}

// SegmentName is the name of a Hockney segment's estimates, before the parameter's key:
// hockney-segments/<class>/<from>-<to> (sizes in bytes).
func SegmentName(class cluster.PathClass, seg HockneySegment) string {
	return fmt.Sprintf("hockney-segments/%s/%.0f-%.0f", class, seg.FromBytes, seg.ToBytes)
}

// fairness fits the per-flow ceiling and the NIC and backbone capacities from the fairness
// experiments, or, without any, the ceiling from the point-to-point rate. Patterns of small
// messages (smallMessageBytes) are left out first.
func (r *calibrationRun) fairness() {
	c := r.c
	small, from := smallMessageBytes(c.Hockney)
	rows, dropped := withoutSmallPatterns(r.in.Transfers, experiments.Fairness(), small)
	if dropped > 0 {
		r.warn("fairness: %d patterns with transfers below %.4g B (%s) left out: small messages measure latency, not a share of a rate", dropped, small, from)
	}
	for _, exp := range experiments.Fairness() {
		f, err := FitFairness(rows, exp)
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

// adoptFairness takes a fairness fit's capacities into the parameters, each only when it is
// identified: finite with a finite interval, and within the line rate of its resource (the
// fastest NIC for the ceiling and the NIC capacity, the fastest backbone or uplink for
// fair_inter's capacity). A capacity needs two or more saturated flow counts (one saturated
// point could be noise at the last k); the saturation point needs both its terms.
func (r *calibrationRun) adoptFairness(exp string, f *FairnessFit) {
	p := &r.c.Params
	lr := nominalRates(r.cl)
	name := func(key string) string { return "fairness/" + exp + "/" + key }
	check := func(what string, v Param, nominal float64) string {
		if why := unboundedReason(v); why != "" {
			return fmt.Sprintf("%s from %s: %s", what, exp, why)
		}
		if !(v.Value > 0) {
			return fmt.Sprintf("%s from %s: %.4g bit/s is not positive", what, exp, v.Value)
		}
		if aboveLineRate(v.Value, nominal) {
			return lineRateReason(what, v.Value, nominal, exp)
		}
		return ""
	}
	capNominal, capWhat := lr.nic, "NIC capacity"
	if exp == experiments.FairInter {
		capNominal, capWhat = lr.core, "backbone or uplink capacity"
	}
	var capWhy string
	switch {
	case f.SaturatedFrom == 0 || math.IsInf(f.Capacity.Value, 1):
		capWhy = fmt.Sprintf("%s from %s: the resource did not saturate up to k = %d (the capacity is at least %.4g Mbit/s)",
			capWhat, exp, f.Rates[len(f.Rates)-1].K, f.Capacity.CILow/1e6)
	case unboundedReason(f.Capacity) != "":
		capWhy = fmt.Sprintf("%s from %s: saturated at one flow count only (k = %d, %.4g Mbit/s in all); the C/k law needs two to be told from noise at the largest k",
			capWhat, exp, f.SaturatedFrom, f.Capacity.Value/1e6)
	default:
		capWhy = check(capWhat, f.Capacity, capNominal)
	}
	ceilWhy := check("per-flow ceiling", f.Ceiling, lr.nic)
	if f.Ceiling.N == 0 {
		ceilWhy = fmt.Sprintf("per-flow ceiling from %s: every flow count saturated the resource, so no flow ran alone at its ceiling (it is at least %.4g Mbit/s)", exp, f.Ceiling.CILow/1e6)
	}
	switch exp {
	case experiments.FairIntra:
		if capWhy == "" {
			p.NICBps = f.Capacity.Value
		} else {
			r.refuse(name("capacity_bps"), nominalFallback("every NIC", lr.nic, p.Efficiency), "%s", capWhy)
		}
		switch {
		case ceilWhy == "":
			p.CeilingBps = f.Ceiling.Value
		case capWhy == "" && f.Ceiling.N == 0:
			p.CeilingBps = f.Capacity.Value // saturated at k = 1: alone, a flow fills the NIC
			r.refuse(name("ceiling_bps"), "the NIC capacity fitted on "+exp+": alone, a flow fills the NIC", "%s", ceilWhy)
		default:
			r.refuse(name("ceiling_bps"), "fair_inter's ceiling, else the NIC capacity (fitted, or nominal × efficiency)", "%s", ceilWhy)
		}
	case experiments.FairInter:
		if capWhy == "" {
			p.BackboneBps = f.Capacity.Value
		} else {
			r.refuse(name("capacity_bps"), nominalFallback("every backbone or uplink", lr.core, p.Efficiency), "%s", capWhy)
		}
		switch {
		case ceilWhy != "":
			r.refuse(name("ceiling_bps"), "fair_intra's ceiling, else the NIC capacity (fitted, or nominal × efficiency)", "%s", ceilWhy)
		case p.CeilingBps == 0:
			p.CeilingBps = f.Ceiling.Value
		}
	}
	if capWhy != "" || ceilWhy != "" || unboundedReason(f.Saturation) != "" {
		why := unboundedReason(f.Saturation)
		if capWhy != "" || ceilWhy != "" {
			why = "it is capacity/ceiling, and one of them is not identified"
		}
		r.unidentified(name("saturation_k"), "", "saturation point from %s: %s", exp, why)
	}
}

// ceilingFromHockney sets the per-flow ceiling, without any fairness experiment, to what one
// transfer alone reached: the rate of the point-to-point fit (its slowest class whose β is
// identified), rather than a share of the nominal rate that the network may never deliver.
func (r *calibrationRun) ceilingFromHockney() {
	p := &r.c.Params
	for _, b := range p.InverseBandwidth {
		if rate := 8 / b; p.CeilingBps == 0 || rate < p.CeilingBps {
			p.CeilingBps = rate
		}
	}
	if p.CeilingBps > 0 {
		r.warn("no fairness experiments: the per-flow ceiling is the point-to-point rate 8/β = %.4g Mbit/s of the Hockney fit; NIC and backbone capacities stay %g × nominal",
			p.CeilingBps/1e6, p.Efficiency)
	}
}

// contra fits φ of asymmetric-fitted from the bidirectional and exchange experiments, less
// their patterns of small messages (smallMessageBytes). φ is used only when the patterns tell
// fair sharing from the asymmetric rule (ContraFit.FairAsymDiff) and its interval is not the
// whole range [0, 1]; else the models keep the default φ.
func (r *calibrationRun) contra() {
	small, from := smallMessageBytes(r.c.Hockney)
	rows, dropped := withoutSmallPatterns(r.in.Transfers, ContraExperiments(), small)
	if dropped > 0 {
		r.warn("contra-factor: %d patterns with transfers below %.4g B (%s) left out: small messages measure latency, not a share of a rate", dropped, small, from)
	}
	var err error
	if r.c.Contra, err = FitContraFactor(r.ctx, r.cl, rows, r.c.Params, 1); err != nil {
		r.skip("contra-factor", err)
		return
	}
	f := r.c.Contra
	fallback := fmt.Sprintf("contra_factor %g (the default)", r.defaults.ContraFactor)
	switch {
	case f.FairAsymDiff < contraTie:
		r.refuse("contra/phi", fallback, "φ from %d patterns (%d transfers) of %v: fair sharing and the asymmetric rule predict the same times for every transfer (largest difference %.2g): no resource carries more flows one way than the other, so any φ fits as well (fitted %.4g [%g, %g])",
			f.Patterns, f.Transfers, ContraExperiments(), f.FairAsymDiff, f.Phi, f.CILow, f.CIHigh)
	case f.CILow <= 0 && f.CIHigh >= 1:
		r.refuse("contra/phi", fallback, "φ from %d patterns (%d transfers): its 95%% interval [%g, %g] is the whole range: the patterns do not tell the values of φ apart (fitted %.4g)",
			f.Patterns, f.Transfers, f.CILow, f.CIHigh, f.Phi)
	default:
		r.c.Params.ContraFactor = f.Phi
	}
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

// lmo fits the LMO model from the round trips and one-to-two experiments. A link's rate is
// not identified where 1/β_ij ≤ 0 (NICBound), where its interval reaches 0 (the rate's is
// open above), or above the slower NIC's line rate of its two nodes; the LMO model keeps the
// fitted 1/β_ij, which reproduces the round trips.
func (r *calibrationRun) lmo() {
	c := r.c
	var err error
	if c.LMO, err = FitLMO(r.in.RoundTrips, r.in.OneToTwo); err != nil {
		r.skip("lmo", err)
		return
	}
	if w := c.LMO.nicBoundWarning(); w != "" {
		c.Warnings = append(c.Warnings, w)
	}
	lr := nominalRates(r.cl)
	refused := 0
	for _, l := range c.LMO.Links {
		why := ""
		switch {
		case l.NICBound:
			why = fmt.Sprintf("1/β = %.4g ns/B is not positive: NIC-bound (see the lmo warning)", l.InverseRate.Value*1e9)
		case unboundedReason(l.RateBps) != "":
			why = fmt.Sprintf("1/β's 95%% interval [%.4g, %.4g] ns/B reaches zero: an infinite rate fits the round trips as well", l.InverseRate.CILow*1e9, l.InverseRate.CIHigh*1e9)
		default:
			nominal := min(lr.nicOf(r.cl, l.I), lr.nicOf(r.cl, l.J))
			if aboveLineRate(l.RateBps.Value, nominal) {
				why = lineRateReason("link rate", l.RateBps.Value, nominal, "the round trips "+l.I+"–"+l.J)
			}
		}
		if why != "" {
			refused++
			r.unidentified(LMOLinkName(l)+"/rate_bps", "the LMO model's fitted 1/β, which reproduces the round trips", "%s", why)
		}
	}
	if refused > 0 {
		r.warn("not identified: lmo: the rates of %d of %d links (not_identified lists each with why)", refused, len(c.LMO.Links))
	}
}

// LMOLinkName is the name of an LMO link's estimates, before the parameter's key:
// lmo/link/<i>-<j>.
func LMOLinkName(l LMOLinkFit) string { return "lmo/link/" + l.I + "-" + l.J }

// thresholds fits the scatter/gather thresholds S, M1 and M2 from the sweeps, and κ1, κ2 when
// the LMO model was fitted; what the data do not give is listed as not identified.
func (r *calibrationRun) thresholds() {
	c := r.c
	var err error
	if c.Thresholds, err = FitThresholds(r.in.Collectives, c.LMO); err != nil {
		r.skip("thresholds", err)
		return
	}
	for _, m := range c.Thresholds.Missing {
		r.unidentified(m.Parameter, m.Fallback, "%s", m.Reason)
	}
	if th := c.Thresholds; th.S == 0 && th.M1 == 0 && th.M2 == 0 {
		c.Thresholds = nil // nothing fitted: the reasons are in NotIdentified
	}
}

// l fits L(m, P) from the concurrent ping-pong pairs; a point measured once has no interval
// and is listed as not identified.
func (r *calibrationRun) l() {
	var err error
	if r.c.L, err = FitL(r.in.PingPongPairs); err != nil {
		r.skip("l", err)
		return
	}
	for _, pt := range r.c.L.Points {
		if why := unboundedReason(pt.L); why != "" {
			r.unidentified(LPointName(pt)+"/l_s", "", "L at %d pairs and %d B: %s", pt.Pairs, pt.Bytes, why)
		}
	}
}

// LPointName is the name of an L(m) point's estimate, before its key: l/point/<pairs>/<bytes>.
func LPointName(pt LPoint) string { return fmt.Sprintf("l/point/%d/%d", pt.Pairs, pt.Bytes) }

// penalties back-solves the penalty table and its α from the static-synchronous graphs. An α
// that is not a positive per-byte time, or whose rate 8/α is above the fastest NIC's line
// rate, refuses the table (solved with it) too.
func (r *calibrationRun) penalties() {
	c := r.c
	fit, err := BackSolvePenalties(r.cl, r.in.Transfers, r.defaults.PenaltyAlpha)
	if err != nil {
		r.skip("penalties", err)
		return
	}
	nic := nominalRates(r.cl).nic
	switch a := fit.Alpha; {
	case r.defaults.PenaltyAlpha != 0: // given, not fitted
	case !(a > 0) || math.IsInf(a, 0):
		r.refuse("penalties/alpha_s_per_byte", "8/ceiling_bps, and no penalty table", "penalty α from %s: %g s/B is not a positive per-byte time", experiments.StaticSync, a)
		return
	case aboveLineRate(8/a, nic):
		r.refuse("penalties/alpha_s_per_byte", "8/ceiling_bps, and no penalty table", "%s", lineRateReason("penalty models' rate 8/α", 8/a, nic, experiments.StaticSync))
		return
	}
	c.Penalties = fit
	c.Params.PenaltyAlpha = fit.Alpha
	for _, u := range fit.Unsolved {
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
