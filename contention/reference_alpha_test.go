package contention

// The reference of ackpath-alpha: its α-fair sharing as it was before it was made faster
// (commit a0ad259), kept verbatim apart from the receiver (refAlpha, with buffers of its own,
// over the fill whose factors it shares) and the constants' ref prefix — every power an exact
// exp(−log(q)/α), every sharing to a relative capacity violation of 1e-11 from the step
// before's prices, one Newton step per iteration, every completion a step of its own.
// alphabound_test.go holds ackpath-alpha to it within the documented bound.

import (
	"context"
	"math"
	"slices"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/lapack64"
)

const refAlphaTol = 1e-11

const (
	refAlphaStallTol = 1e-7
	refAlphaStall    = 50
)

const (
	refAlphaLooseTol   = 1e-6
	refAlphaLooseStall = 1000
)

var refNewtonDamping = [...]float64{0, 1e-6, 1e-3, 1e-1}

const refAlphaMaxIter = 100000

// refAlpha is the reference's price iteration over a fill: the fill gives the classes, their
// paths, weights, ceilings and ackpath's factors; refAlpha keeps the prices and the
// iteration's buffers.
type refAlpha struct {
	*wfill
	price, q, x, xCand, usage, loadCand, prev, cand, slope, hbuf, dbuf []float64
	index, rows                                                        []int32
	tau                                                                float64   // ackpath's τ
	last, cost                                                         []float64 // per class, take-up's (takeUp)
}

func newRefAlpha(f *wfill) *refAlpha {
	nc, nr := len(f.e.src), len(f.capacity)
	return &refAlpha{wfill: f, price: make([]float64, nr), q: make([]float64, nc), x: make([]float64, nc),
		xCand: make([]float64, nc), usage: make([]float64, nr), loadCand: make([]float64, nr), prev: make([]float64, nr),
		cand: make([]float64, nr), slope: make([]float64, nc), index: make([]int32, nr)}
}

// refPredictAlpha is ackpath-alpha's prediction of flows on net (its parameters in
// net.Learned, α > 0, no sampled weights) by the reference.
func refPredictAlpha(net *Network, flows []Flow) (*Prediction, error) {
	lp := net.Learned[AckPathAlpha.Name()]
	net = lp.network(net)
	ctx := context.Background()
	e, err := newEngine(ctx, net, flows, false)
	if err != nil {
		return nil, err
	}
	f := newWFill(e, AckPathAlpha.Variant(), lp, true)
	for c := range f.weight {
		f.weight[c] = 1
	}
	r := newRefAlpha(f)
	ramp := e.rampCosts(lp.AckRamp, lp.AckRampMax)
	r.tau, r.last, r.cost = lp.AckRamp, make([]float64, len(ramp)), slices.Clone(ramp)
	p, err := e.run(ctx, r)
	if err != nil {
		return nil, err
	}
	for c, d := range r.cost {
		for _, i := range e.mem[e.memOff[c]:e.memOff[c+1]] {
			p.Times[i] += d
		}
	}
	return p, nil
}

// rates is wfill.rates under ackpath-alpha without duplex coupling (the reference's parameters
// have κ = 0; TestAlphaFairKKT checks the sharing with joint budgets), with the reference's
// sharing, and takeUp's costs.
func (f *refAlpha) rates(ctx context.Context) error {
	e := f.e
	ceiling := e.net.Ceiling
	for _, c := range e.act {
		f.eff[c], f.ceil[c] = f.weight[c], ceiling
	}
	if f.ackIn != 0 || f.ackOut != 0 || f.ackFull != 0 || f.ackLone != 0 {
		f.ackFactors(ceiling)
	}
	if err := f.fillAlpha(ctx, f.price); err != nil {
		return err
	}
	for _, c := range e.act {
		r := e.rate[c]
		if l := f.last[c]; l > 0 && r > l {
			f.cost[c] += f.tau * (1 - l/r)
		}
		f.last[c] = r
	}
	return nil
}

// refRelViolation is relViolation as it was.
func refRelViolation(load, k float64, priced bool) float64 {
	if priced {
		return math.Abs(load-k) / k
	}
	return (load - k) / k
}

func (f *refAlpha) rate(w, u, q float64) (float64, float64) {
	if q <= 0 {
		return u, 0
	}
	v := w * math.Exp(f.negInvAlpha*math.Log(q))
	if v >= u {
		return u, 0
	}
	return v, v * f.negInvAlpha / q
}

func (f *refAlpha) fillAlpha(ctx context.Context, price []float64) error {
	e := f.e
	unit := e.net.Ceiling
	// No class finishes during a sharing: finished ones leave the lists once, before the sweeps.
	for _, r := range f.used {
		on := f.on[r]
		for i := 0; i < len(on); { // as fill does
			if e.mult[on[i]] == 0 {
				on[i] = on[len(on)-1]
				on = on[:len(on)-1]
				continue
			}
			i++
		}
		f.on[r] = on
		if len(on) == 0 { // its classes finished: nothing to price
			price[r] = 0
		}
	}
	// Newton steps while they lower the largest violation, a sweep where one does not. worst is
	// the violation at price, whose rates and loads are in f.x and f.usage.
	f.setQ(price)
	worst := f.violation(price, f.x, f.usage)
	// mark is the violation refAlphaStall iterations are measured from, markIter when it was set.
	mark, markIter := worst, 0
	for iter, sweep := 0, 0; !(worst <= refAlphaTol); iter++ { // a NaN violation is no convergence
		f.iterations++
		if iter == refAlphaMaxIter {
			return &NotConvergedError{Alpha: f.alpha, Violation: worst}
		}
		if err := stopped(ctx); err != nil {
			return err
		}
		if worst <= mark/2 || math.IsNaN(mark) {
			mark, markIter = worst, iter
		} else if worst <= refAlphaStallTol && iter-markIter >= refAlphaStall ||
			worst <= refAlphaLooseTol && iter-markIter >= refAlphaLooseStall {
			break
		}
		ok, after, err := f.newton(ctx, price, worst)
		if err != nil {
			return err
		}
		if ok {
			worst = after
			continue
		}
		// No price moved: the iteration is at its fixed point to the precision of the prices
		// (a price far below the others on its classes' paths cannot be resolved further).
		if moved, err := f.sweep(ctx, price); err != nil || !moved {
			if err != nil {
				return err
			}
			break
		}
		f.setQ(price) // from the prices again: the sweep's increments drift
		worst = f.violation(price, f.x, f.usage)
		if sweep++; sweep >= 3 {
			if worst, err = f.extrapolate(ctx, price, worst); err != nil {
				return err
			}
		}
	}
	for _, c := range e.act {
		e.rate[c] = f.x[c] * unit
	}
	for _, r := range f.used {
		f.usage[r] *= unit
	}
	return nil
}

func (f *refAlpha) sweep(ctx context.Context, price []float64) (bool, error) {
	unit := f.e.net.Ceiling
	copy(f.prev, price)
	moved := false
	for _, r := range f.used {
		on := f.on[r]
		if len(on) == 0 {
			continue
		}
		if err := f.halt(ctx); err != nil {
			return false, err
		}
		old := price[r]
		if p := f.solvePrice(on, old, f.capacity[r]/unit); p != old {
			moved = true
			for _, c := range on {
				f.q[c] += p - old
			}
			price[r] = p
		}
	}
	return moved, nil
}

func (f *refAlpha) solvePrice(on []int32, old, k float64) float64 {
	unit := f.e.net.Ceiling
	// carried is what the classes carry at price p and its derivative in p.
	carried := func(p float64) (s, ds float64) {
		for _, c := range on {
			v, dv := f.rate(f.eff[c], f.ceil[c]/unit, f.q[c]-old+p)
			m := float64(f.e.mult[c])
			s, ds = s+m*v, ds+m*dv
		}
		return s, ds
	}
	s0, _ := carried(old)
	if math.Abs(s0-k) <= k*refAlphaTol/4 && old > 0 || s0 <= k && old == 0 {
		return old // already there
	}
	if s, _ := carried(0); s <= k*(1+refAlphaTol/4) {
		return 0
	}
	// Bracket: carried(lo) > k ≥ carried(hi). Every class's rate is at most w·p^(−1/α), so at
	// p = (Σ m·w / k)^α the classes carry at most k.
	sw := 0.0
	for _, c := range on {
		sw += float64(f.e.mult[c]) * f.eff[c]
	}
	lo, hi := 0.0, math.Pow(sw/k, f.alpha)
	p := hi
	if old > lo && old < hi {
		p = old
	}
	for range 200 {
		s, ds := carried(p)
		if math.Abs(s-k) <= k*refAlphaTol/4 {
			return p
		}
		if s > k {
			lo = p
		} else {
			hi = p
		}
		next := p
		if ds < 0 {
			next = p - (s-k)/ds
		}
		if !(next > lo && next < hi) {
			next = lo + (hi-lo)/2
		}
		if next == p || math.Nextafter(lo, hi) >= hi {
			return hi
		}
		p = next
	}
	return hi
}

func (f *refAlpha) extrapolate(ctx context.Context, price []float64, before float64) (float64, error) {
	best, bestLambda := before, 0.0
	for lambda := 2.0; lambda <= 1<<20; lambda *= 2 {
		if err := f.halt(ctx); err != nil {
			return 0, err
		}
		for _, r := range f.used {
			f.cand[r] = max(price[r]+lambda*(price[r]-f.prev[r]), 0)
		}
		v := f.violation(f.cand, f.xCand, f.loadCand)
		if !(v < best) {
			break
		}
		best, bestLambda = v, lambda
	}
	if bestLambda == 0 {
		return before, nil
	}
	for _, r := range f.used {
		price[r] = max(price[r]+bestLambda*(price[r]-f.prev[r]), 0)
	}
	f.setQ(price)
	return f.violation(price, f.x, f.usage), nil
}

func (f *refAlpha) priceSum(c int32, p []float64) float64 {
	q := 0.0
	for _, r := range f.path[c] {
		q += p[r]
	}
	return q
}

func (f *refAlpha) setQ(p []float64) {
	for _, c := range f.e.act {
		f.q[c] = f.priceSum(c, p)
	}
}

func (f *refAlpha) violation(p, x, load []float64) float64 {
	e := f.e
	unit := e.net.Ceiling
	for _, r := range f.used {
		load[r] = 0
	}
	for _, c := range e.act {
		v, _ := f.rate(f.eff[c], f.ceil[c]/unit, f.priceSum(c, p))
		x[c] = v
		for _, r := range f.path[c] {
			load[r] += v * float64(e.mult[c])
		}
	}
	worst := 0.0
	for _, r := range f.used {
		if len(f.on[r]) == 0 {
			continue
		}
		worst = max(worst, refRelViolation(load[r], f.capacity[r]/unit, p[r] > 0))
	}
	return worst
}

func (f *refAlpha) newton(ctx context.Context, price []float64, before float64) (bool, float64, error) {
	e := f.e
	unit := e.net.Ceiling
	for r := range f.index {
		f.index[r] = -1
	}
	// The diagonal first, to know which resources' loads move with their price.
	for _, c := range e.act {
		f.slope[c] = 0
		if x := f.x[c]; f.q[c] > 0 && x < f.ceil[c]/unit {
			f.slope[c] = x / (f.alpha * f.q[c]) * float64(e.mult[c])
		}
	}
	act := f.rows[:0]
	for _, r := range f.used {
		if len(f.on[r]) == 0 {
			continue
		}
		k := f.capacity[r] / unit
		if !(price[r] > 0 || f.usage[r] > k) {
			continue
		}
		d := 0.0
		for _, c := range f.on[r] {
			d += f.slope[c]
		}
		if d > 0 {
			f.index[r] = int32(len(act))
			act = append(act, r)
		}
	}
	f.rows = act
	n := len(act)
	if n == 0 {
		return false, before, nil
	}
	// H in the upper triangle of a row-major n×n array, factorised in place (LAPACK's dpotrf;
	// mat.Cholesky would also estimate the condition number, as long again). Where the step
	// does not lower the violation, again with H's diagonal raised by a factor 1 + μ for each μ
	// of refNewtonDamping in turn (Levenberg–Marquardt): where classes sit at their ceilings, the
	// priced resources can outnumber the classes whose rates still move, H is singular or
	// nearly, and the undamped step runs off along its flat direction (see refNewtonDamping).
	f.dbuf = slices.Grow(f.dbuf[:0], n)[:n]
	f.hbuf = slices.Grow(f.hbuf[:0], n*n)[:n*n]
	h := blas64.Symmetric{Uplo: blas.Upper, N: n, Data: f.hbuf, Stride: n}
	for _, mu := range refNewtonDamping {
		if err := f.halt(ctx); err != nil {
			return false, 0, err
		}
		f.hessian(n, mu)
		chol, ok := lapack64.Potrf(h)
		if !ok {
			continue // singular: the next μ raises the diagonal
		}
		for i, r := range act {
			f.dbuf[i] = f.usage[r] - f.capacity[r]/unit
		}
		// H = UᵀU: Uᵀy = d, then U·Δ = y, by two triangular solves (Potrs, through Trsm with
		// one column, took ten times as long: 1.3 of the 10⁴-transfer benchmark's 19 s).
		v := blas64.Vector{N: n, Data: f.dbuf, Inc: 1}
		blas64.Trsv(blas.Trans, chol, v)
		blas64.Trsv(blas.NoTrans, chol, v)
		for t := 1.0; t >= 1.0/1024; t /= 2 {
			if err := f.halt(ctx); err != nil {
				return false, 0, err
			}
			copy(f.cand, price)
			for i, r := range act {
				f.cand[r] = max(price[r]+t*f.dbuf[i], 0)
			}
			if v := f.violation(f.cand, f.xCand, f.loadCand); v < before {
				copy(price, f.cand)
				f.setQ(price)
				f.x, f.xCand = f.xCand, f.x
				f.usage, f.loadCand = f.loadCand, f.usage
				return true, v, nil
			}
		}
	}
	return false, before, nil
}

func (f *refAlpha) hessian(n int, mu float64) {
	clear(f.hbuf)
	for _, c := range f.e.act {
		if f.slope[c] == 0 {
			continue
		}
		path := f.path[c]
		for a, r := range path {
			i := int(f.index[r])
			if i < 0 {
				continue
			}
			for _, s := range path[a:] {
				if j := int(f.index[s]); j >= 0 {
					f.hbuf[min(i, j)*n+max(i, j)] += f.slope[c]
				}
			}
		}
	}
	for i := range n {
		f.hbuf[i*n+i] *= 1 + mu
	}
}
