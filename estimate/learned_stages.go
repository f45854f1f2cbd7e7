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
// transfers blind to it.
func (f *learnedFit) fitCeiling() error {
	lp, c := f.lp, f.start.ceiling
	lp.NICBps, lp.BackboneBps = 100*c, 100*c
	if err := f.minimise(&lp.CeilingBps, 0.5*c, 1.5*c, 1e-3, true, f.data.lone); err != nil {
		return err
	}
	ceiling, err := f.interval([]string{"ceiling_bps"}, f.data.lone, []float64{math.Log(lp.CeilingBps)}, func(x []float64) { lp.CeilingBps = math.Exp(x[0]) }, []domain{rateDomain})
	if err != nil {
		return err
	}
	f.ceiling = ceiling[0]
	return nil
}

// fitCapacities is stage 2: the NIC capacity, the backbone's where base saw it saturate, and
// σ (stochastic variants) jointly, since they trade off (a larger capacity and a smaller
// spread shorten the same order statistics), by Nelder–Mead on log capacities and σ
// (capacitiesAndSpread). It starts from the start's NIC capacity and base's backbone capacity:
// the closed-form fit's when it saw the backbone saturate, the network's nominal one (0 here)
// when not, which then stays.
func (f *learnedFit) fitCapacities() error {
	f.lp.NICBps, f.lp.BackboneBps = f.start.nic, f.backbone
	w, err := f.capacitiesAndSpread(f.lp, f.data, f.saturated(), f.variant.Stochastic)
	if err != nil {
		return err
	}
	if w != "" {
		f.warn(w)
	}
	return nil
}

// fitCoupling is stage 3's κ (duplex variants) on the bidirectional patterns' transfer means,
// by golden section over [0, 1].
func (f *learnedFit) fitCoupling() error {
	if !f.variant.Duplex || len(f.data.bidir) == 0 {
		return nil
	}
	return f.minimise(&f.lp.Coupling, 0, 1, 1e-3, false, f.data.bidir)
}

// fitAckSlowdowns is stage 3's ackpath a, b, c, c₁, τ and ρ on the transfer means of the
// patterns of two transfers or more (multiBidir), each slowdown in [0, MaxAck]: first a, b
// and c with c₁ tied to c (descendFromTwoStarts), then τ (fitRamp), then c₁ untied from c and
// all six polished together by Nelder–Mead, ρ from 0 where random calibration patterns are
// among them (reliefFrom; τ in units of rampScale, ρ in [0, 1]). c₁ is tied at first because
// coordinate descent zig-zags along the ridge where c and c₁ trade off: descending the four
// together makes a calibration up to eight times as slow for hardly any accuracy
// (docs/journal/estimate-learned-fit.md). Under ackpath-alpha this runs at α = ∞, max-min,
// which fitAlphaAndPolish then leaves.
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
	_, err := f.polish(f.ack, f.multiBidir)
	return err
}

// ackCost is the searches' error on the patterns of ackpath's slowdowns (searchCost).
func (f *learnedFit) ackCost() (float64, error) { return f.searchCost(f.multiBidir) }

// tied are a, b and c, which the coordinate descent moves (c₁ tied to c).
func (f *learnedFit) tied() []*float64 { return []*float64{&f.lp.AckIn, &f.lp.AckOut, &f.lp.AckFull} }

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
// c₁, τ and ρ are polished again at the new α, and α fitted again while they move, at most
// alphaRounds fits. Without such patterns α is not determined (undeterminedAlpha).
func (f *learnedFit) fitAlphaAndPolish() error {
	if !f.variant.AlphaFair {
		return nil
	}
	var w string
	if len(f.multiBidir) == 0 {
		f.alpha, w = undeterminedAlpha(f.lp, 0, "there is no static_sync, random_calibration or bidirectional pattern")
		f.warn(w)
		return nil
	}
	for fits := 1; ; fits++ {
		var err error
		// w is the last fit's warning only: each refit repeats or replaces it.
		if f.alpha, w, err = f.fitAlpha(f.lp, f.multiBidir); err != nil {
			return err
		}
		if !f.fitAck {
			break
		}
		moved, err := f.polish(f.ack, f.multiBidir)
		if err != nil {
			return err
		}
		if !moved {
			break
		}
		if fits == alphaRounds {
			f.warn(fmt.Sprintf("a, b, c, c₁, τ and ρ still moved after %d fits of α (%.4g)", alphaRounds, f.lp.Alpha))
			break
		}
	}
	if w != "" {
		f.warn(w)
	}
	return nil
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
// [0.3, 1]: contra-flow traffic is taken to cost a direction capacity, never to add to it, and
// a cell the patterns do not constrain ends at 1. It returns the fitted cells (nil: none).
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
	for i := range cells {
		cells[i].SurfaceCell = lp.Surface[i]
	}
	return cells, nil
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

// capacityStage is stage 2's stage: fair_intra, with fair_inter when the backbone saturated or
// σ is fitted; x = (log NIC, [log backbone], [σ]), σ read as |x| so that it stays positive.
func capacityStage(lp *contention.LearnedParams, d *learnedData, saturated, stochastic bool) stage {
	withBackbone := saturated && len(d.inter) > 0
	st := stage{obs: d.intra, names: []string{"nic_bps"}, x0: []float64{math.Log(lp.NICBps)}, dom: []domain{rateDomain}}
	if withBackbone || stochastic {
		st.obs = slices.Concat(d.intra, d.inter)
	}
	if withBackbone {
		st.names, st.x0, st.dom = append(st.names, "backbone_bps"), append(st.x0, math.Log(lp.BackboneBps)), append(st.dom, rateDomain)
	}
	if stochastic {
		st.names, st.x0, st.dom = append(st.names, "spread"), append(st.x0, lp.Spread), append(st.dom, domain{hi: math.Inf(1)})
	}
	st.set = func(x []float64) {
		lp.NICBps = math.Exp(x[0])
		i := 1
		if withBackbone {
			lp.BackboneBps = math.Exp(x[i])
			i++
		}
		if stochastic {
			lp.Spread = math.Abs(x[i])
		}
	}
	return st
}

// capacitiesAndSpread is stage 2's search: Nelder–Mead (gonum/optimize) on capacityStage's x,
// from lp's values (σ from at least 0.1, so that the simplex explores it). It says, as a
// warning, when the search stopped before its values agreed.
func (f *learnedFitter) capacitiesAndSpread(lp *contention.LearnedParams, d *learnedData, saturated, stochastic bool) (warning string, err error) {
	st := capacityStage(lp, d, saturated, stochastic)
	obs, x0, set := st.obs, st.x0, st.set
	if stochastic {
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
