package estimate

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/gonum/optimize"

	"github.com/commcal/commcal/contention"
)

// ackRounds bounds the coordinate descent of ackpath's a, b and c.
const ackRounds = 30

// rampSearch is the top of τ's line search, in seconds: five of the emulated NICs' full
// queues (20 ms each) per transfer, beyond any round trip measured here; the polish may go
// further, up to MaxAckRamp.
const rampSearch = 0.1

// fitCeiling is stage 1: the per-flow ceiling on the lone transfers by golden section (log
// scale, over half to one and a half times the start), with the NIC and backbone capacities
// a hundred times above the ceiling so that no lone transfer sees them. Its interval is taken
// there too: once the capacities are back, a NIC fitted below the ceiling leaves lone
// transfers blind to it. A ceiling above the lone transfers' line rate is refused (the
// nominal rate × efficiency stands in), one without an interval left out (the closed-form
// calibration's stands in).
func (f *learnedFit) fitCeiling() error {
	lp, c := f.lp, f.start.ceiling
	if !f.ident.ceiling {
		lp.CeilingBps = 0 // the network's: base's
		return nil
	}
	lp.NICBps, lp.BackboneBps = 100*c, 100*c
	if err := f.minimise(&lp.CeilingBps, 0.5*c, 1.5*c, 1e-3, true, f.data.lone); err != nil {
		return err
	}
	ceiling, err := f.interval(f.data.lone, []float64{math.Log(lp.CeilingBps)}, func(x []float64) { lp.CeilingBps = math.Exp(x[0]) }, []domain{rateDomain})
	if err != nil {
		return err
	}
	exps := strings.Join(experimentsOf(f.data.lone), ", ")
	switch nominal := ceilingLineRate(f.cl, f.data.lone); {
	case aboveLineRate(lp.CeilingBps, nominal):
		// The network's default ceiling: the slowest NIC's nominal rate × efficiency.
		eff := f.efficiency()
		fallback := math.Inf(1)
		for _, n := range f.cl.Nodes() {
			fallback = min(fallback, n.NICRateBps*eff)
		}
		f.refuse("ceiling_bps", fmt.Sprintf("the nominal rate × efficiency, %s", gbps(fallback)), "per-flow ceiling", lp.CeilingBps, nominal, exps)
		f.ident.ceiling, lp.CeilingBps = false, fallback
	case !bounded(ceiling[0]):
		f.leaveOut("ceiling_bps", f.ceilingFallbackText(), "%s", unbounded(f.data.lone))
		f.ident.ceiling, lp.CeilingBps = false, 0
	default:
		f.ceiling = &ceiling[0]
	}
	return nil
}

// refuse leaves out a rate fitted above its line rate, with the numbers and the experiments it
// came from (lineRateReason), and warns.
func (f *learnedFit) refuse(param, fallback, what string, fitted, nominal float64, exps string) {
	reason := lineRateReason(what, fitted, nominal, exps)
	f.leaveOut(param, fallback, "%s", reason)
	f.warn(fmt.Sprintf("%s: %s; the model uses %s", param, reason, fallback))
}

// fitCapacities is stage 2: the NIC capacity, the backbone's where base saw it saturate, and
// σ (stochastic variants), those of them the patterns identify, jointly, since they trade off
// (a larger capacity and a smaller spread shorten the same order statistics), by Nelder–Mead
// on log capacities and σ (capacitiesAndSpread). It starts from the start's NIC capacity and
// base's backbone capacity: the closed-form fit's when it saw the backbone saturate, the
// network's nominal one (0 here) when not, which then stays. A capacity left out takes its
// fallback (capacityFallback). Where the fit puts a capacity above its line rate, or leaves a
// parameter's interval unbounded, that parameter is left out and the rest fitted again.
func (f *learnedFit) fitCapacities() error {
	lp := f.lp
	lp.NICBps, lp.BackboneBps = f.start.nic, f.backbone
	if !f.ident.nic {
		lp.NICBps, _ = f.capacityFallback(true)
	}
	for {
		st := f.capacityStage()
		if len(st.names) == 0 {
			return nil
		}
		w, err := f.capacitiesAndSpread(st)
		if err != nil {
			return err
		}
		if w != "" {
			f.warn(w)
		}
		if again, err := f.checkCapacities(); err != nil || !again {
			return err
		}
	}
}

// checkCapacities holds stage 2's fit to the line rates, then to its intervals (taken in the
// stage's configuration, the fit's values kept as they are), leaving out what breaks them; it
// says whether it left anything out, and the stage is to be fitted again.
func (f *learnedFit) checkCapacities() (bool, error) {
	lp := f.lp
	again := false
	if f.ident.nic {
		if nominal := lineRate(f.cl, f.nicObs, isNIC); aboveLineRate(lp.NICBps, nominal) {
			fallback, text := f.capacityFallback(true)
			f.refuse("nic_bps", text, "NIC capacity", lp.NICBps, nominal, strings.Join(experimentsOf(f.nicObs), ", "))
			f.ident.nic, lp.NICBps, again = false, fallback, true
		}
	}
	if f.ident.backbone {
		if nominal := lineRate(f.cl, f.data.core, isCore); aboveLineRate(lp.BackboneBps, nominal) {
			fallback, text := f.capacityFallback(false)
			f.refuse("backbone_bps", text, "backbone or uplink capacity", lp.BackboneBps, nominal, strings.Join(experimentsOf(f.data.core), ", "))
			f.ident.backbone, lp.BackboneBps, again = false, fallback, true
		}
	}
	if again {
		return true, nil
	}
	st := f.capacityStage()
	kept := *lp
	ps, err := f.interval(st.obs, st.x0, st.set, st.dom)
	*lp = kept
	if err != nil {
		return false, err
	}
	for j, p := range ps {
		if !bounded(p) {
			f.leaveCapacity(st.names[j], st.obs)
			again = true
		}
	}
	return again, nil
}

// leaveCapacity leaves out one of stage 2's parameters (by its JSON key) whose interval over
// the patterns obs has no bounds, and sets its fallback.
func (f *learnedFit) leaveCapacity(name string, obs []learnedObs) {
	lp := f.lp
	var fallback string
	switch name {
	case "nic_bps":
		lp.NICBps, fallback = f.capacityFallback(true)
		f.ident.nic = false
	case "backbone_bps":
		lp.BackboneBps, fallback = f.capacityFallback(false)
		f.ident.backbone = false
	case "spread":
		lp.Spread, fallback = 0, "0 (even shares, max-min)"
		f.ident.spread = false
	}
	f.leaveOut(name, fallback, "%s", unbounded(obs))
}

// fitCoupling is stage 3's κ (duplex variants), where some pattern has a NIC send and receive
// at once, on the transfer means of couplingObs (under max-min sharing: α comes later). It
// fits κ from two starts (coupledFrom), beside ackpath's slowdowns as they stand and before
// them, with the slowdowns at 0, and keeps the better: each explanation can take the other's
// share of the exchanges' slowdown where the calibration patterns cannot tell them apart, and
// only one of them predicts the patterns held out. κ is kept only where the patterns show
// coupling (couplingShown); else it is left out at 0 and the slowdowns go back to where they
// were.
func (f *learnedFit) fitCoupling() error {
	if !f.variant.Duplex {
		return nil
	}
	if !f.ident.coupling {
		f.leaveCoupling("not identified: no calibration pattern has a NIC send and receive at once (bidir_*, exchange_calibration, cycle_calibration)")
		return nil
	}
	obs := f.couplingObs()
	kept := f.point()
	// s0 is the error without κ: after a polish of the slowdowns alone, as many searches as
	// κ's joint polish, or at the slowdowns of that polish with κ at 0, whichever is lower, so
	// that what the joint polish gains by moving them is not taken for κ's.
	if f.fitAck {
		if _, err := f.polish(f.ack, obs); err != nil {
			return err
		}
	}
	s0, err := f.searchCost(obs)
	if err != nil {
		return err
	}
	atS0 := f.point()
	s1, err := f.coupledFrom(obs, false)
	if err != nil {
		return err
	}
	if f.fitAck {
		fromAck := f.point()
		f.setPoint(atS0)
		s, err := f.coupledFrom(obs, true)
		if err != nil {
			return err
		}
		if s < s1 {
			s1 = s
		} else {
			f.setPoint(fromAck)
		}
		kappa := f.lp.Coupling
		f.lp.Coupling = 0
		s, err = f.searchCost(obs)
		if err != nil {
			return err
		}
		s0, f.lp.Coupling = min(s0, s), kappa
	}
	if why := f.couplingShown(obs, s0, s1); why != "" {
		kappa := f.lp.Coupling
		f.setPoint(kept)
		f.leaveCoupling("not identified: the %d patterns it is fitted on (%s) show no coupling: κ = %.3g %s",
			len(obs), strings.Join(experimentsOf(obs), ", "), kappa, why)
	}
	return nil
}

// fitPoint is where a fit stands: its learned parameters and c₁ (which lp.AckLone points to
// once untied), for a stage that tries a search and may go back.
type fitPoint struct {
	lp   contention.LearnedParams
	lone float64
}

// point is where the fit stands now.
func (f *learnedFit) point() fitPoint { return fitPoint{*f.lp, *f.lone} }

// setPoint sets the fit back to p.
func (f *learnedFit) setPoint(p fitPoint) { *f.lp, *f.lone = p.lp, p.lone }

// coupledFrom fits κ by golden section over [0, 1]: before ackpath's slowdowns where first
// (the slowdowns set to 0, on the bidirectional patterns alone, as duplex fits it), else beside
// them as they stand, on obs; then it polishes κ and the slowdowns together on obs. It returns
// the error on obs.
func (f *learnedFit) coupledFrom(obs []learnedObs, first bool) (float64, error) {
	search := obs
	if first {
		for _, c := range f.ack {
			*c.p = 0
		}
		search = f.data.bidir
	}
	if err := f.minimise(&f.lp.Coupling, 0, 1, 1e-3, false, search); err != nil {
		return 0, err
	}
	if f.fitAck {
		if _, err := f.polish(f.polishCoords(), obs); err != nil {
			return 0, err
		}
	}
	return f.searchCost(obs)
}

// couplingShown says why κ's fit does not show coupling ("" where it does): the error on obs
// with κ (s1) must be below the error without it (s0) by more than chance, by the F test of
// one more parameter over the patterns (oneMoreParameter), the slowdowns fitted beside κ. The
// test keeps κ from fitting, on every
// cluster, the few percent that one direction's acknowledgements take from the other, which
// is no coupling of the host (docs/journal/host-bound.md).
func (f *learnedFit) couplingShown(obs []learnedObs, s0, s1 float64) string {
	if !(s1 < s0) {
		return "does not lower their error"
	}
	df, crit, ok := oneMoreParameter(len(obs), len(f.ack))
	if !ok {
		return fmt.Sprintf("cannot be told from chance: %d patterns for %d parameters (measure the bidirectional experiments, bidir_nic and bidir_backbone, beside the exchange and the cycle)", len(obs), len(f.ack)+1)
	}
	if stat := (s0 - s1) / (s1 / df); !(stat > crit) {
		return fmt.Sprintf("lowers their error by %.3g%%, which chance explains (F = %.3g, below %.3g, the 95%% point of F(1, %g))",
			100*(s0-s1)/s0, stat, crit, df)
	}
	return ""
}

// couplingObs are the patterns κ is fitted on: the bidirectional ones, and under ackpath those
// of its slowdowns (multiBidir, which holds them), so that κ and the slowdowns are polished on
// one error.
func (f *learnedFit) couplingObs() []learnedObs {
	if f.fitAck {
		return f.multiBidir
	}
	return f.data.bidir
}

// setCoupling applies κ = x[0], clamped to [0, 1], to the model.
func (f *learnedFit) setCoupling(x []float64) { f.lp.Coupling = min(max(x[0], 0), 1) }

// leaveCoupling leaves κ out at 0 (full duplex), why the reason's format and arguments.
func (f *learnedFit) leaveCoupling(format string, a ...any) {
	f.lp.Coupling, f.ident.coupling = 0, false
	f.leaveOut("coupling", "0 (full duplex)", format, a...)
}

// polishCoords are the coordinates fitAlphaAndPolish polishes between its fits of α: ackpath's
// that the fit moves, and κ where the model couples a NIC's directions and the patterns show it.
func (f *learnedFit) polishCoords() []ackCoord {
	coords := slices.Clone(f.ack)
	if f.variant.Duplex && f.ident.coupling {
		coords = append(coords, ackCoord{&f.lp.Coupling, 1, 1})
	}
	return coords
}

// fitAckSlowdowns is stage 3's ackpath a, b, c, c₁, τ and ρ, those of them the patterns
// identify, on the transfer means of the patterns of two transfers or more (multiBidir), each
// slowdown in [0, MaxAck]: first a, b and c with c₁ tied to c (descendFromTwoStarts), then τ
// (fitRamp), then c₁ untied from c and all six polished together by Nelder–Mead, ρ from 0
// where random calibration patterns are among them (reliefFrom; τ in units of rampScale, ρ in
// [0, 1]). c₁ is tied at first because coordinate descent zig-zags along the ridge where c and
// c₁ trade off: descending the four together makes a calibration up to eight times as slow for
// hardly any accuracy (docs/journal/estimate-learned-fit.md). Where c is not identified, the
// tied c carries c₁ and is then set to 0: no pattern holds a queue it prices. Under
// ackpath-alpha this runs at α = ∞, max-min, which fitAlphaAndPolish then leaves. Last, a
// parameter whose interval has no bounds at the fit is left out (dropUnbounded).
func (f *learnedFit) fitAckSlowdowns() error {
	if !f.fitAck {
		return nil
	}
	if err := f.descendFromTwoStarts(); err != nil {
		return err
	}
	if err := f.fitRamp(); err != nil {
		return err
	}
	*f.lone = f.lp.AckFull
	f.lp.AckLone = f.lone
	if !f.ident.ack[ackC] {
		f.lp.AckFull = 0
	}
	if !f.ident.ack[ackC1] {
		*f.lone = 0
	}
	if _, err := f.polish(f.ack, f.multiBidir); err != nil {
		return err
	}
	return f.dropUnbounded()
}

// dropUnbounded leaves out, while some of ackpath's parameters have an interval without bounds
// at the fit (taken in its configuration, the fit's values kept as they are), the first of them
// in ackDropOrder, sets it to 0 and polishes the others again: parameters that trade off on
// these patterns (τ and c₁ on exchanges of one size) all lose their bounds, and one of them
// left out gives the others theirs.
func (f *learnedFit) dropUnbounded() error {
	for f.fitAck {
		slots, on := f.ackSlots(), f.onAck()
		theta, dom := make([]float64, len(on)), make([]domain, len(on))
		for j, i := range on {
			theta[j], dom[j] = *slots[i].p, domain{hi: slots[i].hi}
		}
		kept := f.point()
		half, err := f.intervals(theta, f.setAck(on), f.multiBidir, dom)
		f.setPoint(kept)
		if err != nil {
			return err
		}
		drop := -1
		for _, i := range ackDropOrder {
			if j := slices.Index(on, i); j >= 0 && math.IsInf(half[j], 1) {
				drop = i
				break
			}
		}
		if drop < 0 {
			return nil
		}
		if f.leaveAck(drop); !f.fitAck {
			return nil
		}
		if _, err := f.polish(f.ack, f.multiBidir); err != nil {
			return err
		}
	}
	return nil
}

// leaveAck leaves out ackpath's parameter i (ackSlots), whose interval has no bounds, at 0.
func (f *learnedFit) leaveAck(i int) {
	s := f.ackSlots()[i]
	*s.p = 0
	f.ident.ack[i] = false
	f.setAckCoords()
	f.leaveOut(s.name, s.fallback, "not identified: the %d patterns of two transfers or more (%s) do not determine it at the fit, where it trades off with the other parameters or moves no transfer's time (its interval is unbounded)",
		len(f.multiBidir), strings.Join(experimentsOf(f.multiBidir), ", "))
}

// onAck lists the indices (ackSlots) of ackpath's parameters the fit moves.
func (f *learnedFit) onAck() []int {
	var on []int
	for i, ok := range f.ident.ack {
		if ok {
			on = append(on, i)
		}
	}
	return on
}

// setAck applies a vector of the parameters on (ackSlots' indices) to the model, each clamped
// to its domain.
func (f *learnedFit) setAck(on []int) func([]float64) {
	slots := f.ackSlots()
	return func(x []float64) {
		for j, i := range on {
			*slots[i].p = min(max(x[j], 0), slots[i].hi)
		}
	}
}

// ackCost is the searches' error on the patterns of ackpath's slowdowns (searchCost).
func (f *learnedFit) ackCost() (float64, error) { return f.searchCost(f.multiBidir) }

// tied are a, b and c, which the coordinate descent moves (c₁ tied to c): those the patterns
// identify, c where c or c₁ is.
func (f *learnedFit) tied() []*float64 {
	var out []*float64
	id := f.ident.ack
	for _, t := range []struct {
		p  *float64
		on bool
	}{{&f.lp.AckIn, id[ackA]}, {&f.lp.AckOut, id[ackB]}, {&f.lp.AckFull, id[ackC] || id[ackC1]}} {
		if t.on {
			out = append(out, t.p)
		}
	}
	return out
}

// descendFromTwoStarts fits a, b and c (c₁ tied to c) by coordinate descent from two starts,
// 0 (no slowdown) and the best point of a coarse grid (ackStartGrid), and keeps the better:
// ackpath drops a queue whose transfers, slowed, no longer fill it, so the error jumps, and a
// descent from 0 alone can stop in a local minimum far from the truth. It records whether the
// kept descent converged and where it stopped, for the warning (warnUnconverged).
func (f *learnedFit) descendFromTwoStarts() error {
	lp, tied := f.lp, f.tied()
	var err error
	if f.converged, err = f.descend(tied); err != nil {
		return err
	}
	first := [3]float64{lp.AckIn, lp.AckOut, lp.AckFull}
	s0, err := f.ackCost()
	if err != nil {
		return err
	}
	if err := f.gridStart(tied, ackStartGrid, f.multiBidir); err != nil {
		return err
	}
	converged2, err := f.descend(tied)
	if err != nil {
		return err
	}
	if s, err := f.ackCost(); err != nil {
		return err
	} else if s < s0 {
		f.converged = converged2
	} else {
		lp.AckIn, lp.AckOut, lp.AckFull = first[0], first[1], first[2]
	}
	f.descended = [3]float64{lp.AckIn, lp.AckOut, lp.AckFull}
	return nil
}

// descend fits the tied slowdowns (a, b and c, c₁ tied to c) by coordinate descent and says
// whether it converged. b and c trade off (the transfers into a node with o leaving it slow by
// b·(o − 1) + c): rounds until no parameter moves by more than 10⁻⁴, at most ackRounds, each
// line search to 10⁻⁶ of [0, MaxAck] (5·10⁻⁶) so that the moves measure the descent, not the
// search's grid. A line search's result is kept only if it lowers the error: the error jumps
// where a slowdown makes a queue's transfers stop filling it (the queue is dropped, and the
// slowdowns it caused with it), so a golden section over the whole range can end in a worse
// minimum than where it started.
func (f *learnedFit) descend(tied []*float64) (converged bool, err error) {
	s, err := f.ackCost()
	if err != nil {
		return false, err
	}
	for round := 0; round < ackRounds && !converged; round++ {
		converged = true
		for _, x := range tied {
			old := *x
			if err := f.minimise(x, 0, contention.MaxAck, 1e-6, false, f.multiBidir); err != nil {
				return false, err
			}
			sx, err := f.ackCost()
			if err != nil {
				return false, err
			}
			if sx < s {
				s = sx
			} else {
				*x = old
			}
			converged = converged && math.Abs(*x-old) <= 1e-4
		}
	}
	return converged, nil
}

// fitRamp fits ackpath's ramp-up cost τ by a line search over [0, rampSearch] (five full
// queues' worth of 20 ms per transfer), kept only where it lowers the error, its count held at
// the patterns' largest (largestRampCount).
func (f *learnedFit) fitRamp() error {
	if !f.ident.ack[ackTau] {
		return nil
	}
	lp := f.lp
	lp.AckRampMax = largestRampCount(f.multiBidir)
	s0, err := f.ackCost()
	if err != nil {
		return err
	}
	if err := f.minimise(&lp.AckRamp, 0, rampSearch, 1e-4, false, f.multiBidir); err != nil {
		return err
	}
	if s, err := f.ackCost(); err != nil {
		return err
	} else if s >= s0 {
		lp.AckRamp = 0
	}
	return nil
}

// fitAlphaAndPolish is stage 3's α (ackpath-alpha) on the patterns of a, b, c, c₁, τ and ρ
// (fitAlpha), after them: they are fitted first under max-min, α = ∞, as ackpath's, since
// max-min is a hundred times faster and that first fit only has to get near. Then a, b, c,
// c₁, τ and ρ, and κ where kept (polishCoords), are polished again at the new α, and α fitted
// again while they move, at most alphaRounds fits. Where no transfer crosses two contended
// resources (alphaDesign), or the last fit of α leaves it undetermined (fitAlpha: no
// pattern's error changes with it, too few patterns for its test, or an interval spanning its
// grid), α is left out at 1, proportional fairness: what the literature takes for TCP (Kelly
// 1998) where the data are silent.
func (f *learnedFit) fitAlphaAndPolish() error {
	if !f.variant.AlphaFair {
		return nil
	}
	if len(f.multiBidir) == 0 {
		f.lp.Alpha = 1
		f.leaveAlpha("there is no static_sync, random_calibration, bidirectional, exchange or cycle pattern")
		return nil
	}
	var w, why string
	coords := f.polishCoords()
	for fits := 1; ; fits++ {
		var err error
		// w and why are the last fit's only: each refit repeats or replaces them.
		if f.alpha, why, w, err = f.fitAlpha(f.lp, f.multiBidir, len(coords)); err != nil {
			return err
		}
		if len(coords) == 0 {
			break
		}
		moved, err := f.polish(coords, f.multiBidir)
		if err != nil {
			return err
		}
		if !moved {
			break
		}
		if fits == alphaRounds {
			f.warn(fmt.Sprintf("the slowdowns (and κ where kept) still moved after %d fits of α (%.4g)", alphaRounds, f.lp.Alpha))
			break
		}
	}
	if w != "" {
		f.warn(w)
	}
	switch {
	case !f.ident.alpha:
		// Its patterns' errors do not change with α (alphaDesign), to the α-fair prices'
		// precision: fitAlpha found them flat and set 1.
		f.alpha, f.lp.Alpha = nil, 1
		f.leaveAlpha(fmt.Sprintf("no transfer of its %d patterns shares its sender with one transfer and its receiver with another", len(f.multiBidir)))
	case f.alpha == nil:
		f.leaveAlpha(why)
	}
	return nil
}

// leaveAlpha leaves α out at 1 because of why, saying what to measure.
func (f *learnedFit) leaveAlpha(why string) {
	f.leaveOut("alpha", "1 (proportional fairness)", "not identified: %s; to fit it, measure static_sync graphs or random patterns with role = \"calibration\" in which a transfer shares its sender with another transfer and its receiver with a third (X1→X2 beside X1→X3 and X4→X2)", why)
}

// warnUnconverged warns where the first coordinate descent of a, b and c did not converge,
// with where it stopped: the polish started from there.
func (f *learnedFit) warnUnconverged() {
	if !f.converged {
		f.warn(fmt.Sprintf("a, b and c (c₁ tied to c) still moved by more than 1e-4 after %d rounds of the first coordinate descent: it stopped at a %.4g, b %.4g, c %.4g, before the Nelder–Mead polish",
			ackRounds, f.descended[0], f.descended[1], f.descended[2]))
	}
}

// fitSurface is stage 4 (surface variants), on top of the rest: the surface cells, one per
// (kind, with, contra) that the bidirectional patterns start with (surfaceCells), by
// coordinate descent (two rounds of golden sections) on their transfer means, each in
// [0.3, 1]: contra-flow traffic is taken to cost a direction capacity, never to add to it. A
// cell no calibration transfer's time depends on at its fit (surfaceFlat: another resource
// limits every transfer it holds) is left out at 1, and kept in the model's table at 1 so that
// no measured cell stands in for it. It returns the fitted cells (nil: none).
func (f *learnedFit) fitSurface() ([]SurfaceCellFit, error) {
	if !f.variant.Surface || len(f.data.bidir) == 0 {
		return nil, nil
	}
	lp := f.lp
	cells := surfaceCells(f.cl, f.data.bidir)
	lp.Surface = make([]contention.SurfaceCell, len(cells))
	for i, c := range cells {
		lp.Surface[i] = c.SurfaceCell
	}
	for range 2 {
		for i := range lp.Surface {
			if err := f.minimise(&lp.Surface[i].Factor, 0.3, 1, 1e-3, false, f.data.bidir); err != nil {
				return nil, fmt.Errorf("surface: %w", err)
			}
		}
	}
	var fitted []SurfaceCellFit
	flat := map[string][]string{} // per kind, the cells left out
	var kinds []string
	for i := range cells {
		isFlat, err := f.surfaceFlat(i)
		if err != nil {
			return nil, fmt.Errorf("surface: %w", err)
		}
		c := lp.Surface[i]
		if !isFlat {
			cells[i].SurfaceCell = c
			fitted = append(fitted, cells[i])
			continue
		}
		if flat[c.Kind] == nil {
			kinds = append(kinds, c.Kind)
		}
		flat[c.Kind] = append(flat[c.Kind], fmt.Sprintf("(%d, %d)", c.With, c.Contra))
		lp.Surface[i].Factor = 1
	}
	for _, k := range kinds {
		f.leaveOut("surface:"+k, "1 (no reduction)", "not identified: no calibration transfer's time depends on the %s cells (with, contra) %s: another resource limits every transfer they hold",
			k, strings.Join(flat[k], ", "))
	}
	return fitted, nil
}

// surfaceFlat says whether no calibration transfer's time depends on surface cell i at its
// fit: the bidirectional patterns' log errors move by at most 10⁻¹² when its factor moves by
// 10⁻³ either way (within [0.3, 1]). The factor is left as it was.
func (f *learnedFit) surfaceFlat(i int) (bool, error) {
	x := &f.lp.Surface[i].Factor
	v := *x
	defer func() { *x = v }()
	at, err := f.residuals(f.data.bidir)
	if err != nil {
		return false, err
	}
	const h = 1e-3
	for _, w := range []float64{v - h, v + h} {
		if w < 0.3 || w > 1 {
			continue
		}
		*x = w
		moved, err := f.residuals(f.data.bidir)
		if err != nil {
			return false, err
		}
		for k := range at {
			for j := range at[k] {
				if math.Abs(moved[k][j]-at[k][j]) > 1e-12 {
					return false, nil
				}
			}
		}
	}
	return true, nil
}

// stage is what stage 2 fits: the observations, the parameters' JSON keys, the parameter vector
// at lp's values, how to set lp from a vector, and each element's domain.
type stage struct {
	obs   []learnedObs
	names []string
	x0    []float64
	set   func([]float64)
	dom   []domain
}

// capacityStage is stage 2's stage, over the parameters ident holds: the NIC capacity on
// nicObs, the backbone's on the patterns that load the backbone or uplinks (core), σ on the
// fairness patterns whose transfers share a resource (nic and core); x = ([log NIC],
// [log backbone], [σ]), σ read as |x| so that it stays positive.
func (f *learnedFit) capacityStage() stage {
	lp, d, id := f.lp, f.data, f.ident
	var st stage
	nic := d.nic
	if id.nic {
		nic = f.nicObs
		st.obs = nic
		st.names, st.x0, st.dom = append(st.names, "nic_bps"), append(st.x0, math.Log(lp.NICBps)), append(st.dom, rateDomain)
	}
	if id.backbone || id.spread {
		st.obs = slices.Concat(nic, d.core)
	}
	if id.backbone {
		st.names, st.x0, st.dom = append(st.names, "backbone_bps"), append(st.x0, math.Log(lp.BackboneBps)), append(st.dom, rateDomain)
	}
	if id.spread {
		st.names, st.x0, st.dom = append(st.names, "spread"), append(st.x0, lp.Spread), append(st.dom, domain{hi: math.Inf(1)})
	}
	st.set = func(x []float64) {
		i := 0
		if id.nic {
			lp.NICBps = math.Exp(x[i])
			i++
		}
		if id.backbone {
			lp.BackboneBps = math.Exp(x[i])
			i++
		}
		if id.spread {
			lp.Spread = math.Abs(x[i])
		}
	}
	return st
}

// capacitiesAndSpread is stage 2's search: Nelder–Mead (gonum/optimize) on st's x, from lp's
// values (σ from at least 0.1, so that the simplex explores it). It says, as a warning, when
// the search stopped before its values agreed.
func (f *learnedFit) capacitiesAndSpread(st stage) (warning string, err error) {
	obs, x0, set := st.obs, slices.Clone(st.x0), st.set
	if f.ident.spread {
		x0[len(x0)-1] = max(x0[len(x0)-1], 0.1)
	}
	var ferr error
	prob := optimize.Problem{Func: func(x []float64) float64 {
		set(x)
		s, _, err := f.sse(obs)
		if err != nil && ferr == nil {
			ferr = err
		}
		return s
	}}
	// Steps of 10% in the capacities and 0.1 in σ; converged when the simplex's values agree
	// to 1e-9 or after 400 evaluations.
	res, err := optimize.Minimize(prob, x0, &optimize.Settings{FuncEvaluations: 400, Converger: &optimize.FunctionConverge{Absolute: 1e-9, Iterations: 40}},
		&optimize.NelderMead{SimplexSize: 0.1})
	if ferr != nil {
		return "", ferr
	}
	if res == nil {
		return "", err
	}
	set(res.X)
	if why := fmt.Sprint(res.Status); err != nil || res.Status != optimize.FunctionConvergence {
		if err != nil {
			why = err.Error()
		}
		warning = fmt.Sprintf("%s: Nelder–Mead stopped before its values agreed (%s, %d evaluations)", strings.Join(st.names, ", "), why, res.FuncEvaluations)
	}
	return warning, nil
}
