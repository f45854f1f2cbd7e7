package estimate

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/contention"
	"github.com/commcal/commcal/datasets"
	"github.com/commcal/commcal/experiments"
)

// LearnedFit is one learned model's calibration through the model: every parameter chosen to
// minimise that model's own prediction error, Σ log²(predicted/measured), on the calibration
// experiments that determine it (Sources says which), the closed-form estimates serving only
// as starting points.
type LearnedFit struct {
	Model string `json:"model"`
	// Ceiling is the per-flow ceiling, NIC every NIC direction's capacity, Backbone every
	// backbone or uplink direction's, in bits per second. Each is absent where the calibration
	// patterns do not identify it (NotIdentified says why and what stands in), as are the
	// other parameters.
	Ceiling  *Param `json:"ceiling_bps,omitempty"`
	NIC      *Param `json:"nic_bps,omitempty"`
	Backbone *Param `json:"backbone_bps,omitempty"`
	// Spread is σ of the share weights (stochastic, learned); Coupling κ of the duplex budget
	// (duplex, learned).
	Spread   *Param `json:"spread,omitempty"`
	Coupling *Param `json:"coupling,omitempty"`
	// AckIn and AckOut are ackpath's slowdowns per extra transfer into the sender and out of
	// the receiver, AckFull its slowdown per NIC direction on the way back that holds a queue.
	AckIn   *Param `json:"ack_in,omitempty"`
	AckOut  *Param `json:"ack_out,omitempty"`
	AckFull *Param `json:"ack_full,omitempty"`
	// AckLone is c₁, ackpath's slowdown per NIC direction on the way back whose queue one
	// transfer holds.
	AckLone *Param `json:"ack_lone,omitempty"`
	// AckRamp is τ, ackpath's ramp-up cost in seconds per transfer beyond the first into the
	// sender or out of the receiver (contention.LearnedParams.AckRamp).
	AckRamp *Param `json:"ack_ramp_s,omitempty"`
	// AckRelief is ρ, the share of ackpath's slowdown that a transfer's ceiling is spared
	// (contention.LearnedParams.AckRelief).
	AckRelief *Param `json:"ack_relief,omitempty"`
	// Alpha is α of ackpath-alpha's α-fair sharing.
	Alpha *Param `json:"alpha,omitempty"`
	// Surface is the bidirectional surface (surface, learned), one cell per measured
	// (kind, with, contra).
	Surface []SurfaceCellFit `json:"surface,omitempty"`
	Sources []ParamSource    `json:"sources"`
	// RMSLogErr is the root mean square of log(predicted/measured) over the transfers (or
	// order statistics) of every source, at the fit.
	RMSLogErr float64                   `json:"rms_log_err"`
	Params    *contention.LearnedParams `json:"params"`
	// Warnings says what in the fit the calibration should flag (Calibration.Warnings).
	Warnings []string `json:"warnings,omitempty"`
	// NotIdentified are the model's parameters the fit leaves out, by their JSON keys, which
	// the calibration lists with the model's name (Calibration.NotIdentified).
	NotIdentified []Unidentified `json:"-"`
}

// NamedParam is an estimate with its name.
type NamedParam struct {
	Name string
	Param
}

// Estimates lists the fit's estimates with intervals, in a fixed order: those the fit has of
// ceiling_bps, nic_bps, backbone_bps, spread, coupling, ack_in, ack_out, ack_full, ack_lone,
// ack_ramp_s, ack_relief and alpha.
func (f *LearnedFit) Estimates() []NamedParam {
	var out []NamedParam
	for _, o := range []struct {
		name string
		p    *Param
	}{{"ceiling_bps", f.Ceiling}, {"nic_bps", f.NIC}, {"backbone_bps", f.Backbone}, {"spread", f.Spread}, {"coupling", f.Coupling}, {"ack_in", f.AckIn}, {"ack_out", f.AckOut}, {"ack_full", f.AckFull}, {"ack_lone", f.AckLone}, {"ack_ramp_s", f.AckRamp}, {"ack_relief", f.AckRelief}, {"alpha", f.Alpha}} {
		if o.p != nil {
			out = append(out, NamedParam{o.name, *o.p})
		}
	}
	return out
}

// SurfaceCellFit is one fitted cell of the bidirectional surface.
type SurfaceCellFit struct {
	contention.SurfaceCell
	Experiment string `json:"experiment"`
}

// ParamSource says which experiments a parameter came from and what was fitted to them.
type ParamSource struct {
	Param       string   `json:"param"`
	Experiments []string `json:"experiments"`
	Patterns    int      `json:"patterns"`
	Fitted      string   `json:"fitted_to"`
}

// FitLearned calibrates a learned model through the model on the calibration experiments of
// rows, starting from base (the closed-form calibration, whose latencies it keeps). Each
// parameter is fitted only where some pattern identifies it, which design decides from the
// patterns' structure, whatever their experiment's name; the others are left out, each with
// why and what stands in for it (LearnedFit.NotIdentified). The fit runs in stages, each a
// method of learnedFit that says what it fits and why:
//
//  1. the ceiling, on lone transfers: point-to-point sweeps from 1 MiB and the fairness
//     designs' patterns whose transfers share no resource (k = 1, or k disjoint pairs on one
//     switch) (fitCeiling);
//  2. the NIC capacity on the fairness patterns in which transfers share a NIC direction
//     (fair_intra), or else on the other patterns that load one with two transfers; the
//     backbone capacity on those in which they share a backbone or uplink direction
//     (fair_inter) when base's closed-form fit saw it saturate; and σ (stochastic variants);
//     jointly by Nelder–Mead against the order statistics of the repetitions (fitCapacities);
//  3. ackpath's a, b, c, c₁, τ and ρ on the transfer means of the bidirectional experiments,
//     exchanges and cycles, and of the static_sync and random_calibration patterns of two
//     transfers or more (fitAckSlowdowns); κ (duplex variants) after them, on the same
//     patterns (on the bidirectional ones alone without ackpath), from two starts (beside the
//     slowdowns, and before them, with the slowdowns at 0), each polished with the
//     slowdowns, kept where an F test says it lowers the error beyond chance (fitCoupling);
//     then ackpath-alpha's α on the same patterns, alternating with a polish of a, b, c, c₁,
//     τ, ρ and κ (fitAlphaAndPolish);
//  4. the surface cells (surface variants), one per (kind, with, contra) that the
//     bidirectional patterns start with (fitSurface).
//
// A capacity or ceiling fitted above its line rate (aboveLineRate) is refused: left out with
// the numbers, a warning, and the nominal rate × efficiency in its place, the stage fitted
// again without it. So is a parameter whose interval has no bounds: the patterns do not
// determine it after all.
//
// The searches of stages 1, 3 and 4 minimise Huber's loss of the log errors (huberLoss: the
// square within ±0.1, linear beyond), stage 2's Nelder–Mead their sum of squares (the order
// statistics of the fairness designs, a handful per pattern, against their own mean). A search
// counts parameters where the α-fair prices do not converge on some pattern as +∞
// (searchCost) instead of failing the model's calibration; the fitted point itself must
// converge, since the intervals and the final error are computed there.
//
// Intervals (stages 1–3): 95%, from the sandwich covariance of the log residuals r with the
// patterns as clusters, (JᵀWJ)⁻¹·Σ_p (J_pᵀψ(r_p))(J_pᵀψ(r_p))ᵀ·(JᵀWJ)⁻¹·P/(P−1) (ψ clips r to
// ±0.1, W keeps the terms within it; least squares' (JᵀJ)⁻¹ and J_pᵀr_p where every term is
// within ±0.1, as nearly all of stage 2's are), J the Jacobian by central differences, and
// Student's t with P − 1 degrees of freedom for P patterns: the analytic counterpart of a
// bootstrap over patterns (transfers of one pattern share its conditions and are not
// independent), at 2·(parameters) model evaluations instead of hundreds of refits; the
// variance is floored at the model-based one (see sandwich), since over few patterns the
// sandwich is optimistic; rates' intervals are taken on the log scale. A parameter the
// patterns do not determine (a singular JᵀWJ) gets infinite bounds, and is left out. The
// surface cells, each determined by one or two patterns, have none: a cell is left out where
// no calibration transfer's time changes with it (surfaceFlat); α's is an F test's on its
// grid (see fitAlpha).
//
// The fit stops when ctx is done, returning its error (wrapped): a fit takes seconds to
// minutes.
func FitLearned(ctx context.Context, cl *cluster.Cluster, rows []datasets.Transfer, base contention.Params, model contention.Learned) (*LearnedFit, error) {
	return fitLearned(ctx, cl, rows, base, model, nil)
}

// fitLearned is FitLearned; where memo holds the max-min stages of an earlier fit on the same
// rows and base with the same components but α-fair sharing and duplex coupling, it starts
// from them, else it keeps its own there for the next (memo not nil).
func fitLearned(ctx context.Context, cl *cluster.Cluster, rows []datasets.Transfer, base contention.Params, model contention.Learned, memo **maxminStages) (*LearnedFit, error) {
	f, err := newLearnedFit(ctx, cl, rows, base, model)
	if err != nil {
		return nil, err
	}
	out, err := f.run(memo)
	if err != nil {
		return nil, fmt.Errorf("estimate: %s: %w", model.Name(), err)
	}
	return out, nil
}

// learnedFit is one learned model's fit in progress: the model on the network whose learned
// parameters are lp (learnedFitter), the calibration patterns, where the fit starts, which
// parameters they identify, and what the stages have found so far. The stages run in
// FitLearned's order, each a method that reads and sets these fields; the parameters
// themselves live in lp, which the fit returns.
type learnedFit struct {
	*learnedFitter
	cl      *cluster.Cluster
	base    contention.Params
	variant contention.LearnedVariant
	data    *learnedData
	// multiBidir holds the patterns of two transfers or more beyond the fairness designs,
	// which determine ackpath's a, b, c, c₁, τ and ρ and ackpath-alpha's α.
	multiBidir []learnedObs
	// nicObs are the patterns the NIC capacity is fitted on, compared by nicFrom.
	nicObs  []learnedObs
	nicFrom string
	start   learnedStartValues
	// backbone is base's backbone capacity (0: the nominal one, base's closed-form fit did
	// not see the backbone saturate; saturated says whether it did).
	backbone float64
	lp       *contention.LearnedParams
	// ident is which parameters the fit moves; left those it leaves out, with why.
	ident learnedIdent
	left  []Unidentified
	// lone is c₁ once the polish unties it from c (lp.AckLone then points to it); ack are the
	// coordinates the polish moves: those of a, b, c, c₁, τ and ρ that ident holds.
	lone   *float64
	ack    []ackCoord
	fitAck bool
	// ceiling is stage 1's estimate with its interval (nil: left out); converged and
	// descended say whether the first coordinate descent of a, b and c converged and where it
	// stopped.
	ceiling   *Param
	converged bool
	descended [3]float64
	alpha     *Param
	warnings  []string
}

// newLearnedFit collects the calibration patterns of rows and sets up model's fit on the
// network base describes, its learned parameters at the start: the ceiling at base's, the
// slowdowns at 0 with c₁ tied to c and ρ at 0; and decides which parameters the patterns
// identify (design). Data problems return errors unwrapped (they name the model or need no
// name). Its evaluations stop when ctx is done (learnedFitter).
func newLearnedFit(ctx context.Context, cl *cluster.Cluster, rows []datasets.Transfer, base contention.Params, model contention.Learned) (*learnedFit, error) {
	data, err := learnedObservations(cl, rows)
	if err != nil {
		return nil, err
	}
	base.Learned = nil
	net, err := base.Network(cl)
	if err != nil {
		return nil, err
	}
	start := learnedStart(cl, net)
	if carried := largestCarried(cl, data.nic); carried > 0 && (carried > start.nic || carried < 0.8*start.nic) {
		// base's NIC capacity (the nominal rate × efficiency when its closed-form fit had too
		// few saturated points) is far from what fair_intra's NIC carried: start from that,
		// or the fit may begin where the ceiling hides the capacity and never leave.
		start.nic = carried
	}
	lp := &contention.LearnedParams{CeilingBps: start.ceiling}
	net.Learned = map[string]*contention.LearnedParams{model.Name(): lp}
	f := &learnedFit{learnedFitter: &learnedFitter{ctx: ctx, model: model, net: net}, cl: cl, base: base, variant: model.Variant(), data: data,
		multiBidir: slices.Concat(data.multi, data.bidir), start: start, backbone: base.BackboneBps,
		lp: lp, lone: new(float64), converged: true}
	if !f.design() {
		return nil, fmt.Errorf("estimate: %s: no calibration pattern identifies its parameters: it needs contention calibration patterns (%s) beside lone transfers of at least 1 MiB; %s",
			model.Name(), strings.Join(experiments.ContentionCalibration(), ", "), f.leftText())
	}
	f.setAckCoords()
	return f, nil
}

// leftText lists the parameters left out so far with their reasons, for an error.
func (f *learnedFit) leftText() string {
	if len(f.left) == 0 {
		return "found no contention pattern"
	}
	parts := make([]string, len(f.left))
	for i, u := range f.left {
		parts[i] = u.Parameter + ": " + u.Reason
	}
	return strings.Join(parts, "; ")
}

// setAckCoords sets the coordinates polish moves to those of ackpath's parameters that ident
// holds, in ackSlots' order, and whether ackpath's stage runs.
func (f *learnedFit) setAckCoords() {
	f.ack = f.ack[:0]
	slots := f.ackSlots()
	for i, s := range slots {
		if f.ident.ack[i] {
			f.ack = append(f.ack, ackCoord{s.p, s.scale, s.hi})
		}
	}
	f.fitAck = f.variant.AckPath && len(f.ack) > 0
}

// run fits the model stage by stage (FitLearned), starting from memo's max-min stages where
// they apply, and reports the estimates, their intervals and sources, the parameters left
// out, and the error at the fit.
func (f *learnedFit) run(memo **maxminStages) (*LearnedFit, error) {
	if err := f.stagesBeforeAlpha(memo); err != nil {
		return nil, err
	}
	if err := f.fitAlphaAndPolish(); err != nil {
		return nil, err
	}
	f.warnUnconverged()
	out := &LearnedFit{Model: f.model.Name(), Params: f.lp}
	var err error
	if out.Surface, err = f.fitSurface(); err != nil {
		return nil, err
	}
	if err := f.report(out); err != nil {
		return nil, err
	}
	out.Warnings, out.NotIdentified = f.warnings, f.left
	return out, nil
}

// saturated says whether base's closed-form fit saw the backbone saturate (it set a capacity).
func (f *learnedFit) saturated() bool { return f.backbone > 0 }

// warn adds a warning for the calibration to flag (LearnedFit.Warnings).
func (f *learnedFit) warn(w string) { f.warnings = append(f.warnings, w) }

// maxminStages is where a fit stands after the stages that come before κ and α: the ceiling,
// the capacities (and σ), and a, b, c, c₁, τ and ρ under max-min sharing, with what they left
// out. ackpath-alpha's fit goes through ackpath's stages on the same patterns before it fits α
// (its α starts infinite, which is the weighted fill, exactly: the same predictions, the same
// searches), so Calibrate keeps them from ackpath's fit and ackpath-alpha's starts from there;
// its parameters come out the same to the bit (TestFitLearnedSharesMaxminStages), and the
// calibration is spared about a fifth of its time.
type maxminStages struct {
	variant   contention.LearnedVariant // the model's components but α-fair sharing and duplex coupling
	params    contention.LearnedParams  // AckLone nil: c₁ is lone, untied says whether set
	lone      float64
	untied    bool
	ceiling   *Param
	ident     learnedIdent
	left      []Unidentified
	warnings  []string
	converged bool
	descended [3]float64
}

// stagesBeforeAlpha runs stages 1 to 3 but α's (fitCeiling, fitCapacities, fitAckSlowdowns,
// fitCoupling) or, where memo holds the first three for the same components, takes them from
// there; when memo is not nil and does not apply, it keeps this fit's there for the next. κ
// comes after ackpath's slowdowns, fitted at κ = 0, so those stages are the same with or
// without the coupling.
func (f *learnedFit) stagesBeforeAlpha(memo **maxminStages) error {
	stagesOf := f.variant
	stagesOf.AlphaFair, stagesOf.Duplex = false, false
	if memo != nil && *memo != nil && (*memo).variant == stagesOf {
		f.restore(*memo)
	} else {
		for _, step := range []func() error{f.fitCeiling, f.fitCapacities, f.fitAckSlowdowns} {
			if err := step(); err != nil {
				return err
			}
		}
		if memo != nil {
			*memo = f.keep(stagesOf)
		}
	}
	return f.fitCoupling()
}

// keep is where the fit stands after stagesBeforeAlpha's memoised stages, for the fits of
// variant's components with α-fair sharing or duplex coupling. α and κ are not part of it:
// the fit that restores it decides their identification itself.
func (f *learnedFit) keep(variant contention.LearnedVariant) *maxminStages {
	m := &maxminStages{variant: variant, params: *f.lp, lone: *f.lone, untied: f.lp.AckLone != nil,
		ceiling: f.ceiling, ident: f.ident, left: slices.Clone(f.left), warnings: slices.Clone(f.warnings),
		converged: f.converged, descended: f.descended}
	m.params.AckLone = nil // it points to this fit's lone
	return m
}

// restore sets the fit to where m stands, keeping its own decisions on α and κ.
func (f *learnedFit) restore(m *maxminStages) {
	*f.lp, *f.lone = m.params, m.lone
	if m.untied {
		f.lp.AckLone = f.lone
	}
	f.ceiling = m.ceiling
	alpha, coupling := f.ident.alpha, f.ident.coupling
	f.ident, f.ident.alpha, f.ident.coupling = m.ident, alpha, coupling
	f.left = slices.Clone(m.left)
	f.setAckCoords()
	f.warnings = slices.Clone(m.warnings)
	f.converged, f.descended = m.converged, m.descended
}

// report fills out with the estimates and their sources, stage by stage, the intervals taken
// at the fit (the ceiling's at stage 1), and the RMS log error over every pattern of the
// model's stages.
func (f *learnedFit) report(out *LearnedFit) error {
	if f.ceiling != nil {
		out.Ceiling = f.ceiling
		out.Sources = []ParamSource{source("ceiling_bps", f.data.lone, "each lone transfer's mean time")}
	}
	for _, step := range []func(*LearnedFit) error{f.capacityIntervals, f.couplingInterval, f.ackIntervals} {
		if err := step(out); err != nil {
			return err
		}
	}
	if f.alpha != nil {
		out.Alpha = f.alpha
		out.Sources = append(out.Sources, source("alpha", f.multiBidir, "each transfer's mean time"))
	}
	if len(out.Surface) > 0 {
		out.Sources = append(out.Sources, source("surface", f.data.bidir, "each transfer's mean time"))
	}
	all := slices.Concat(f.data.lone, f.data.nic, f.data.core, f.data.bidir)
	if f.variant.AlphaFair || f.variant.AckPath || (f.ident.nic && len(f.data.nic) == 0) {
		all = append(all, f.data.multi...)
	}
	s, n, err := f.sse(all)
	if err != nil {
		return err
	}
	out.RMSLogErr = math.Sqrt(s / float64(n))
	return nil
}
