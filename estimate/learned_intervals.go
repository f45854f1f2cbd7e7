package estimate

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat/distuv"
)

// domain is where a fitted parameter's coordinate lives: the logarithm of a rate (unbounded), or
// the parameter itself, in [0, hi] (σ, κ, ackpath's slowdowns).
type domain struct {
	log bool
	hi  float64
}

var rateDomain = domain{log: true}

// interval gives the 95% intervals of θ (fitted on obs) at the fit, in the configuration the
// stage fitted them in, set applying a θ to the model and dom each coordinate's domain; a
// parameter its patterns do not determine gets infinite bounds (bounded says so). A rate's
// coordinate is its logarithm, and its estimate and bounds come back as rates.
func (f *learnedFit) interval(obs []learnedObs, theta []float64, set func([]float64), dom []domain) ([]Param, error) {
	half, err := f.intervals(theta, set, obs, dom)
	if err != nil {
		return nil, err
	}
	ps := make([]Param, len(theta))
	for j, v := range theta {
		lo, hi := v-half[j], v+half[j]
		if dom[j].log {
			v, lo, hi = math.Exp(v), math.Exp(lo), math.Exp(hi)
		} else {
			lo = max(lo, 0) // σ, κ, a, b, c, c₁, τ and ρ are not negative
		}
		ps[j] = Param{Value: v, CILow: lo, CIHigh: hi, N: len(obs)}
	}
	return ps, nil
}

// capacityIntervals reports stage 2's estimates (the NIC and backbone capacities, σ) with their
// intervals at the fit and the patterns behind them; one whose interval has no bounds there is
// left out at its fallback (leaveCapacity).
func (f *learnedFit) capacityIntervals(out *LearnedFit) error {
	st := f.capacityStage()
	if len(st.names) == 0 {
		return nil
	}
	caps, err := f.interval(st.obs, st.x0, st.set, st.dom)
	if err != nil {
		return err
	}
	for j, name := range st.names {
		if !bounded(caps[j]) {
			f.leaveCapacity(name, st.obs)
			continue
		}
		switch name {
		case "nic_bps":
			out.NIC = &caps[j]
			out.Sources = append(out.Sources, source(name, f.nicObs, f.nicFrom))
		case "backbone_bps":
			out.Backbone = &caps[j]
			out.Sources = append(out.Sources, source(name, f.data.core, "the order statistics of the repetitions"))
		case "spread":
			out.Spread = &caps[j]
			out.Sources = append(out.Sources, source(name, st.obs, "the order statistics of the repetitions"))
		}
	}
	return nil
}

// couplingInterval reports κ (duplex variants, fitCoupling) with its interval at the fit and
// the patterns behind it; without bounds, κ is left out at 0.
func (f *learnedFit) couplingInterval(out *LearnedFit) error {
	if !f.variant.Duplex || !f.ident.coupling {
		return nil
	}
	obs := f.couplingObs()
	kappa, err := f.interval(obs, []float64{f.lp.Coupling}, f.setCoupling, []domain{{hi: 1}})
	if err != nil {
		return err
	}
	if !bounded(kappa[0]) {
		f.warn(fmt.Sprintf("κ = %.3g has no bounded interval at the fit and is left out at 0; the other parameters were fitted beside it", f.lp.Coupling))
		f.leaveCoupling("%s", unbounded(obs))
		return nil
	}
	out.Coupling = &kappa[0]
	out.Sources = append(out.Sources, source("coupling", obs, "each transfer's mean time"))
	return nil
}

// ackIntervals reports those of ackpath's a, b, c, c₁, τ and ρ that the fit moved
// (fitAckSlowdowns) with their intervals at the fit and the patterns behind them; one whose
// interval has no bounds there is left out at 0. Without a ramp-up cost it then drops τ's
// count, which holds nothing; the intervals vary τ at that count first.
func (f *learnedFit) ackIntervals(out *LearnedFit) error {
	if !f.fitAck {
		return nil
	}
	lp := f.lp
	slots, on := f.ackSlots(), f.onAck()
	theta, dom := make([]float64, len(on)), make([]domain, len(on))
	for j, i := range on {
		theta[j], dom[j] = *slots[i].p, domain{hi: slots[i].hi}
	}
	ack, err := f.interval(f.multiBidir, theta, f.setAck(on), dom)
	if err != nil {
		return err
	}
	fields := [ackParams]**Param{&out.AckIn, &out.AckOut, &out.AckFull, &out.AckLone, &out.AckRamp, &out.AckRelief}
	for j, i := range on {
		if !bounded(ack[j]) {
			f.leaveAck(i)
			continue
		}
		*fields[i] = &ack[j]
		out.Sources = append(out.Sources, source(slots[i].name, f.multiBidir, "each transfer's mean time"))
	}
	if lp.AckRamp == 0 {
		lp.AckRampMax = 0
	}
	return nil
}

// intervals returns the half-widths of the 95% intervals of θ at the fit (see FitLearned),
// set applying a θ to the model, dom each coordinate's domain; θ is left at the fit.
func (f *learnedFitter) intervals(theta []float64, set func([]float64), obs []learnedObs, dom []domain) ([]float64, error) {
	p, g := len(theta), len(obs)
	if g < 2 {
		return infinite(p), nil
	}
	defer set(theta)
	set(theta)
	res, err := f.residuals(obs)
	if err != nil {
		return nil, err
	}
	// The Jacobian, one row per term, pattern after pattern (pattern k's rows from off[k]), by
	// central differences: a 0.1% change of a rate, 0.001 of σ, κ or a slowdown. Within h of a
	// bound (a slowdown fitted at 0), a one-sided difference into the domain: the step across
	// the bound would be clamped by set, halving the slope and doubling the interval.
	const h = 1e-3
	off := make([]int, g+1)
	for k := range g {
		off[k+1] = off[k] + len(res[k])
	}
	jac := mat.NewDense(off[g], p, nil)
	x := slices.Clone(theta)
	at := func(v float64, j int) ([][]float64, error) {
		x[j] = v
		set(x)
		defer func() { x[j] = theta[j] }()
		return f.residuals(obs)
	}
	for j := range p {
		lo, hi, step := theta[j]-h, theta[j]+h, 2*h
		if !dom[j].log && lo < 0 {
			lo, step = theta[j], h
		} else if !dom[j].log && hi > dom[j].hi {
			hi, step = theta[j], h
		}
		up, down := res, res
		if hi != theta[j] {
			if up, err = at(hi, j); err != nil {
				return nil, err
			}
		}
		if lo != theta[j] {
			if down, err = at(lo, j); err != nil {
				return nil, err
			}
		}
		for k := range g {
			for i := range up[k] {
				jac.Set(off[k]+i, j, (up[k][i]-down[k][i])/step)
			}
		}
	}
	return sandwich(jac, res, off), nil
}

// infinite is p infinite half-widths.
func infinite(p int) []float64 {
	half := make([]float64, p)
	for j := range half {
		half[j] = math.Inf(1)
	}
	return half
}

// sandwich is intervals' half-widths from the Jacobian jac of the residuals res (pattern k's
// terms are rows off[k] to off[k+1] of jac), +∞ for a coordinate the patterns do not determine.
//
// The variance is the sandwich's, floored at the model-based one, s²·(JᵀWJ)⁻¹JᵀJ(JᵀWJ)⁻¹ with
// s² the mean square of the n terms' ψ over n − p (s²·(JᵀJ)⁻¹ where every residual is within
// ±δ, least squares' own): over few patterns the sandwich is optimistic, and where one pattern
// alone moves a parameter, its score is 0 at the fit and the sandwich gives a zero-width
// interval (ackpath's c₁ on a bidirectional design, where one pattern holds the lone queues).
// With the floor the intervals cover the truth as often as they should on synthetic campaigns
// (TestFitLearnedAckPathCoverage); without it they do not.
func sandwich(jac *mat.Dense, res [][]float64, off []int) []float64 {
	g := len(res)
	_, p := jac.Dims()
	jtj, jtwj, meat, psi := sandwichParts(jac, res, off)
	bread, unseen, top, ok := pseudoInverse(jtwj, p)
	if !ok {
		return infinite(p)
	}
	half := make([]float64, p)
	var cov, model mat.Dense
	cov.Product(bread, meat, bread)
	model.Product(bread, jtj, bread)
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(g - 1)}.Quantile(0.975)
	ss, n := sumOf(psi, square)
	s2 := ss / float64(max(n-p, 1))
	for j := range p {
		half[j] = t * math.Sqrt(max(cov.At(j, j)*float64(g)/float64(g-1), s2*model.At(j, j), 0))
		if unseen[j] > identifiedTol || !(top > 0) {
			half[j] = math.Inf(1)
		}
	}
	return half
}

// sandwichParts is the sandwich's ingredients. The fit minimises Σ huberLoss(r), an
// M-estimator: the bread is JᵀWJ, W keeping the terms within ±huberDelta (where the loss is
// the square), and each pattern's score is s_k = J_kᵀ ψ(r_k), ψ = huberScore (psi, the ψ of
// every term); the meat is Σ_k s_k s_kᵀ. With every residual within ±δ, as on the synthetic
// campaigns of the coverage tests, they are least squares' JᵀJ and J_kᵀ r_k.
func sandwichParts(jac *mat.Dense, res [][]float64, off []int) (jtj, jtwj, meat *mat.SymDense, psi [][]float64) {
	g := len(res)
	_, p := jac.Dims()
	jtj, jtwj, meat = new(mat.SymDense), new(mat.SymDense), new(mat.SymDense)
	jtj.SymOuterK(1, jac.T())
	inside := mat.NewDense(off[g], p, nil)
	psi = make([][]float64, g)
	for k := range g {
		psi[k] = make([]float64, len(res[k]))
		for i, v := range res[k] {
			psi[k][i] = huberScore(v)
			if math.Abs(v) <= huberDelta {
				inside.SetRow(off[k]+i, jac.RawRowView(off[k]+i))
			}
		}
	}
	jtwj.SymOuterK(1, inside.T())
	scores := mat.NewDense(g, p, nil)
	for k := range g {
		var sk mat.VecDense
		sk.MulVec(jac.Slice(off[k], off[k+1], 0, p).T(), mat.NewVecDense(len(psi[k]), psi[k]))
		scores.SetRow(k, sk.RawVector().Data)
	}
	meat.SymOuterK(1, scores.T())
	return jtj, jtwj, meat, psi
}

// pseudoInverse is (JᵀWJ)⁻¹ of the p×p jtwj by its eigenvectors, those of eigenvalues below
// identifiedTol of the largest (top) left out. A coordinate with a share of more than
// identifiedTol of its square in their span (unseen) moves along a direction the patterns do
// not see, and its interval is infinite; the others' come from the rest, so that one unseen
// direction (ρ beside the slowdowns on patterns that cannot tell them apart) does not cost
// every parameter its interval. ok is false where the factorisation fails.
func pseudoInverse(jtwj *mat.SymDense, p int) (bread *mat.Dense, unseen []float64, top float64, ok bool) {
	var eig mat.EigenSym
	if !eig.Factorize(jtwj, true) {
		return nil, nil, 0, false
	}
	lambda := eig.Values(nil)
	var vec mat.Dense
	eig.VectorsTo(&vec)
	bread = mat.NewDense(p, p, nil)
	unseen = make([]float64, p) // each coordinate's squared share in the unseen directions
	top = slices.Max(lambda)
	for i, l := range lambda {
		v := vec.ColView(i)
		if !(l > identifiedTol*top) {
			for j := range p {
				unseen[j] += v.AtVec(j) * v.AtVec(j)
			}
			continue
		}
		var outer mat.Dense
		outer.Outer(1/l, v, v)
		bread.Add(bread, &outer)
	}
	return bread, unseen, top, true
}

// identifiedTol is the share below which an eigenvalue of JᵀWJ (of the largest) or a
// coordinate's weight in the eigenvectors of such eigenvalues counts as none (sandwich). The
// six slowdowns' smallest eigenvalue is 7.5·10⁻⁶ to 2·10⁻⁴ of the largest on datasets with
// random calibration patterns (two-rack-1g-heldout18, two-rack-100m-heldout16,
// three-rack-1g-heldout12), and 10⁻¹⁷ or below, rounding's zero, on the embedded sample and
// two-rack-1g-seed2, whose patterns cannot tell ρ from the others.
const identifiedTol = 1e-9
