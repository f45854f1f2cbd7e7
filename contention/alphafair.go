package contention

import (
	"context"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/lapack/gonum"
)

// lapackImpl is gonum's pure-Go LAPACK, which factorises and solves α-fair sharing's Newton
// systems.
var lapackImpl gonum.Implementation

// α-fair sharing (Mo and Walrand, 2000), the rate rule of ackpath-alpha. The rates of the
// active classes maximise Σ_c m_c·w_c^α·x_c^(1−α)/(1−α) (Σ_c m_c·w_c·log x_c at α = 1) subject
// to every resource's capacity and each class's ceiling, m_c its active members and w_c its
// weight. At the optimum x_c = min(u_c, w_c·q_c^(−1/α)), u_c the ceiling and q_c the sum of the
// prices of the resources c crosses, each price the Lagrange multiplier of its capacity. Max-min
// (progressive filling) is the limit α → ∞; α = 1 is proportional fairness, α = 2 the minimum
// potential delay fairness that TCP Reno's loss response approximates (Kelly 2001, Srikant 2004).
// What sets it apart from max-min is a transfer crossing two bottlenecks: max-min gives it the
// smaller of its two fair shares, α-fair sharing less (it pays both prices) and the transfers
// it competes with more. On the development data (data/tcp) that is what TCP did: a transfer
// sharing its sender with one transfer and its receiver with another finished last, at about
// a quarter of the NIC, while the other two got three quarters each; max-min has all three at
// a half.
//
// The prices are found by projected Newton steps on the dual (newton: the priced resources'
// prices at once, H·Δ = load − capacity with H the loads' Jacobian with its sign changed, one
// Cholesky factorisation, the step corrected for the loads' curvature near the solution:
// newtonStep), each taken only if it lowers the largest relative capacity violation, starting
// from the previous step's prices, rates and loads (one class finished, most move little:
// gather carries them over); where the plain step does not lower it, the same step damped
// (newtonDamping). Where no damped step lowers it either (a class crossing its ceiling, a
// price reaching 0), a sweep of coordinate ascent (Gauss–Seidel: one resource's price at a
// time set so that the resource carries its capacity, or 0 when it has room at that price, by
// safeguarded Newton) moves the prices instead, and from the third sweep on extrapolate jumps
// along the last sweep's move where coupled prices creep (the violation fell a hundredfold in
// 10⁴ sweeps at α = 5 on a saturated backbone). The dual is differentiable (the utilities are
// strictly concave), so sweeps alone converge; Newton steps and jumps are judged by the
// largest violation, not by the dual, so convergence of the mix is not proven: alphaMaxIter
// bounds it, and TestAlphaFairKKT checks the rates it ends with against the optimality
// conditions. It stops when no capacity is off by more than alphaTol, or a sweep moves no
// price (the prices' own precision reached), or the violation is below alphaStallTol and no
// longer falls (alphaStall), or below alphaLooseTol and has not fallen for far longer
// (alphaLooseStall). Rates are in units of the network's ceiling so that x^(−α) stays within
// floating point for α up to MaxAlpha; the powers are powNeg's, or a series from the class's
// last one (power).
//
// The cost: a pattern of a few dozen transfers takes milliseconds; the 10⁴-transfer benchmark
// pattern (8,576 steps, 130 resources, some 2,300 active classes a step) 4.0–4.1 s at
// α = 0.67 (BenchmarkLearned10k, 2026-11-28; docs/performance.md has where the time goes and
// what was tried): 2.6 Newton steps and 3.6 evaluations of the violation a sharing, a fifth
// of the time in ackpath's factors.

// MinAlpha and MaxAlpha bound a finite α: below 0.1 a transfer crossing two bottlenecks would
// get next to nothing; beyond 5 the price iteration slows down (the dual flattens towards
// max-min's, and coordinate ascent zig-zags: at α = 20, 10⁵ sweeps left a 20-transfer pattern
// 2·10⁻⁸ off its capacities) while the rates differ from max-min's by a few per cent (a
// transfer crossing two bottlenecks beside one transfer on each gets 0.47 of a NIC at α = 5,
// 0.5 under max-min). Beyond MaxAlpha, α is infinite: LearnedParams.Alpha = 0, the weighted
// fill, exactly.
const (
	MinAlpha = 0.1
	MaxAlpha = 5
)

// alphaTol is the relative capacity violation at which the price iteration stops: far below
// the 1e-9 of the fill's own saturation tests, and below what a completion time's 15
// significant digits show of it. Looser, it saves little and moves the fits: Newton's steps
// square the violation (cube it, corrected), so the last digits cost about one step in three;
// at 10⁻⁷ the 10⁴-transfer pattern took 9% less time (10⁻⁶: 18%), and at 10⁻¹⁰ already eleven
// blocks of rows of the three datasets TestCommittedLeaderboardSubset scores changed, a fit
// following differences of its loss far below what it resolves (at 10⁻⁷, ackpath-alpha's
// share of three-rack-1g-heldout12's held-out transfers moved by 0.7 point; 2026-11-28).
const alphaTol = 1e-11

// alphaStallTol and alphaStall: the price iteration also stops when the violation is at most
// alphaStallTol and has not halved in alphaStall iterations. Where a transfer's ceiling is
// reached exactly where two of its resources fill (its rate's kink, at the price sum where
// w·q^(−1/α) meets the ceiling, lying on both resources' capacities), the prices are not unique
// and the iteration creeps along the flat direction. In the leaderboard run of
// two-rack-1g-heldout8 (its calibration and cross-validation folds), 66 sharings of 17
// transfers took more than 300 iterations and 43 reached the cap of 10⁵ at 2.5·10⁻⁸ (each then
// not converged, its α counted as +∞); with the rule none took more than 300, and the run took
// 14.6 s instead of 31.6 s. A capacity off by 10⁻⁷ of itself moves a completion time by about
// as much, ten thousand times below the ±10% that accuracy is judged by. An iteration that
// converges but halves its violation less often than every alphaStall iterations also stops
// there; Newton's steps, where they apply, converge quadratically (TestAlphaFairKKT asks 10⁻⁹
// of its patterns, and they meet it).
const (
	alphaStallTol = 1e-7
	alphaStall    = 50
)

// alphaLooseTol and alphaLooseStall: the iteration also stops when the violation is at most
// alphaLooseTol and has not halved in alphaLooseStall iterations. A held-out pattern of
// two-rack-1g-seed9-nometrics (random N10-d2-011, at the parameters one fit during development
// trials gave, α = 0.817) crept at 1.64·10⁻⁷, above alphaStallTol, until the iteration cap, and
// the error failed the whole validation; a capacity off by 10⁻⁶ of itself moves a completion
// time by about as much. It changed no prediction where the iteration used to end
// (LEADERBOARD.md's thirty datasets, fits included, came out the same). Since newton's steps
// are damped (newtonDamping) that pattern converges (TestAlphaFairKinkConverges) and no
// sharing of the thirty-four datasets' leaderboard takes 100 iterations; the rule stays as
// the bound on what a pattern nothing here has tried may cost.
const (
	alphaLooseTol   = 1e-6
	alphaLooseStall = 1000
)

// newtonDamping are the dampings μ newton tries in turn, H's diagonal raised by a factor 1 + μ,
// until a step lowers the largest violation. Where some classes sit at their ceilings, the
// priced resources can outnumber the classes whose rates still move: four resources priced
// over three moving classes in a sharing of two-rack-1g-seed9-nometrics, H singular to
// rounding, and the undamped step 5·10³ along its flat direction, rejected at every length.
// The iteration then fell back on sweeps and crept (849 sharings of the thirty-four datasets'
// leaderboard took 100 to 6,913 iterations, 66 s of its 405 s of CPU). The twenty of them
// kept took 6 to 13 Newton steps to 10⁻¹¹ with these dampings (a prototype; with 0, 10⁻³ and
// 10⁻¹ alone, six; with 0 and 10⁻² alone, one), the larger μ a shorter step towards
// gradient ascent on the dual, which the line search can always shorten into progress.
var newtonDamping = [...]float64{0, 1e-6, 1e-3, 1e-1}

// alphaMaxIter bounds the iterations (Newton steps and sweeps) of one sharing; reaching it is an
// error rather than rates that do not fill the capacities they claim to.
const alphaMaxIter = 100000

// rate is a class's rate in ceilings, with weight w and ceiling u, at the price sum q, and its
// derivative in q (0 at the ceiling); q^(−1/α) is powNeg's.
func (f *wfill) rate(w, u, q float64) (float64, float64) {
	if q <= 0 {
		return u, 0
	}
	v := w * powNeg(q, f.negInvAlpha)
	if v >= u {
		return u, 0
	}
	return v, v * f.negInvAlpha / q
}

// alphaLarge is the number of active classes from which an iteration of α-fair sharing looks
// at its context within itself too (halt): at 10⁶ classes (an all-to-all of 1,000 nodes) one
// Newton step, sweep or extrapolation takes a second, each of its evaluations of the
// violation tens of milliseconds; below, an iteration takes milliseconds at most, and the
// look at every iteration is enough.
const alphaLarge = 1 << 14

// halt is stopped's error where the sharing is large (alphaLarge), nil otherwise: the look
// that newton, sweep and extrapolate take between their evaluations.
func (f *wfill) halt(ctx context.Context) error {
	if len(f.e.act) < alphaLarge {
		return nil
	}
	return stopped(ctx)
}

// alphaClass is an active class as α-fair sharing reads it, gathered once per sharing in the
// order of the engine's active classes so that the iteration's loops read one array: its
// weight w, its ceiling u in ceilings, its active members m, its resources and its class.
type alphaClass struct {
	w, u, m float64
	res     [maxAlphaPath]int32
	n, c    int32
	// The class's last exact power: y = q₀^(−1/α) at the price sum q₀, kept as 1/q₀ and y
	// (powerNear); 1/q₀ = 0 for none.
	inv, y float64
}

// maxAlphaPath is the most resources a class of the weighted fill crosses: its route, and
// under duplex coupling its two nodes' joint budgets.
const maxAlphaPath = maxPath + 2

// fillAlpha sets the rates of the active classes by weighted α-fair sharing with the weights
// eff and ceilings ceil, starting from and updating the resources' prices price. It stops
// when ctx is done (stopped), checked at every iteration (one sharing can take up to
// alphaMaxIter of them) and, in a large sharing, within each (halt).
func (f *wfill) fillAlpha(ctx context.Context, price []float64) error {
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
	sig, moved := f.startPrices(price)
	carried := f.gather(f.carry && !moved && f.surf == nil)
	f.carry = false
	// Newton steps while they lower the largest violation, a sweep where one does not. worst is
	// the violation at price, whose price sums, rates and loads are in f.q, f.x and f.usage:
	// carried over from the last sharing, or evaluated afresh. Where the carried violation
	// already meets alphaTol, it is evaluated afresh all the same, so that the loads a sharing
	// ends with are always sums, not a chain of differences.
	var worst float64
	if carried {
		for _, r := range f.used {
			f.usage[r] = f.last[r]
		}
		worst = f.worst(price, f.usage)
	}
	if !carried || worst <= alphaTol {
		worst = f.violation(price, f.q, f.x, f.usage)
	}
	// mark is the violation alphaStall iterations are measured from, markIter when it was set.
	mark, markIter := worst, 0
	for iter, sweep := 0, 0; !(worst <= alphaTol); iter++ { // a NaN violation is no convergence
		f.iterations++
		if iter == alphaMaxIter {
			return &NotConvergedError{Alpha: f.alpha, Violation: worst}
		}
		if err := stopped(ctx); err != nil {
			return err
		}
		if worst <= mark/2 || math.IsNaN(mark) {
			mark, markIter = worst, iter
		} else if worst <= alphaStallTol && iter-markIter >= alphaStall ||
			worst <= alphaLooseTol && iter-markIter >= alphaLooseStall {
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
		// From the prices again: the sweep's increments drift.
		worst = f.violation(price, f.q, f.x, f.usage)
		if sweep++; sweep >= 3 {
			if worst, err = f.extrapolate(ctx, price, worst); err != nil {
				return err
			}
		}
	}
	f.keepPrices(price, sig)
	for _, r := range f.used {
		f.last[r] = f.usage[r]
	}
	f.carry = true
	for k := range f.ac {
		a := &f.ac[k]
		e.rate[a.c] = f.x[k] * unit
	}
	for _, r := range f.used {
		f.usage[r] *= unit
	}
	return nil
}

// gather brings f.ac up to the engine's active classes, and each one's place there into
// f.pos: from the last sharing's, dropping the classes that finished since and taking the
// others' weights, ceilings and members afresh, or from the classes' paths when there is none
// (f.acFresh: a run's first sharing, or α changed). With carry, the last sharing's price sums
// and rates (f.q, f.x) and loads (f.last) are carried to the classes left at the same prices:
// a class that lost members takes its share of the loads with it, one whose factor changed
// is rated again at its price sum. It says whether it carried them.
func (f *wfill) gather(carry bool) bool {
	e := f.e
	unit := e.net.Ceiling
	if !f.acFresh {
		j := 0
		for k := range f.ac {
			a := &f.ac[k]
			c := a.c
			m, w, u := float64(e.mult[c]), f.eff[c], f.ceil[c]/unit
			if carry {
				q, x := f.q[k], f.x[k]
				d := -a.m * x // the change of the class's load
				if m > 0 {
					if w != a.w || u != a.u {
						x = u
						if q > 0 {
							x = min(w*f.power(a, q), u)
						}
					}
					d += m * x
					f.q[j], f.x[j] = q, x
				}
				if d != 0 {
					for _, r := range a.res[:a.n] {
						f.last[r] += d
					}
				}
			}
			if m == 0 {
				continue
			}
			if j != k {
				f.ac[j] = *a
			}
			b := &f.ac[j]
			b.w, b.u, b.m = w, u, m
			f.pos[c] = int32(j)
			j++
		}
		f.ac = f.ac[:j]
		if j == len(e.act) {
			return carry
		}
	}
	f.acFresh = false
	f.ac = f.ac[:0]
	for k, c := range e.act {
		a := alphaClass{w: f.eff[c], u: f.ceil[c] / unit, m: float64(e.mult[c]), c: c}
		a.n = int32(copy(a.res[:], f.path[c]))
		f.ac = append(f.ac, a)
		f.pos[c] = int32(k)
	}
	return false
}

// stepPrices are the prices a run of a Scratch's fill ended one step with: where the next run
// reaches that step with the same active classes, it starts from them rather than from the
// step before's. A fit predicts each calibration pattern under parameters that move a little
// from one evaluation to the next, so they are nearly the answer: with them, the fit of
// ackpath-alpha took half the time (1.3–1.9 s against 2.5–3.5 s on two-rack-1g-seed9-nometrics,
// three-rack-1g-heldout12 and two-rack-100m-heldout16, where it came to the same parameters to
// ten digits; three of the thirty leaderboard datasets' fits went another way;
// docs/journal/tcp-campaigns.md). The iteration converges from any start, so a start only costs or saves
// iterations; the rates agree with a fresh run's to 10⁻⁹ (TestScratchReusedAcrossParams), and a
// second run at the same parameters does not iterate (TestScratchWarmPrices).
type stepPrices struct {
	sig   uint64    // activeSignature of the step's classes
	alpha float64   // α they were found at
	price []float64 // per resource
}

// activeSignature is a hash (FNV-1a) of the active classes and their members: two steps of
// runs of one fill with the same signature share nearly the same sharing problem. A collision
// only makes a poor start.
func (f *wfill) activeSignature() uint64 {
	e := f.e
	sig := uint64(14695981039346656037)
	for _, c := range e.act {
		sig = (sig ^ uint64(c)<<32 ^ uint64(e.mult[c])) * 1099511628211
	}
	return sig
}

// startPrices sets price to the last run's at this step when it had the same active classes
// (f.warm, kept only by a Scratch's fill), and returns the step's signature and whether it
// set the prices. Found at another
// α (fitAlpha's grid and line search), each price p is taken to p^(α/α'): a class held at
// rate x by one resource pays p = (w/x)^α, so that maps the prices of the same rates.
func (f *wfill) startPrices(price []float64) (uint64, bool) {
	if !f.keep {
		return 0, false
	}
	sig, step := f.activeSignature(), f.e.steps
	if step >= len(f.warm) || f.warm[step].sig != sig || f.warm[step].price == nil {
		return sig, false
	}
	w := &f.warm[step]
	if w.alpha == f.alpha {
		copy(price, w.price)
		return sig, true
	}
	ratio := f.alpha / w.alpha
	for _, r := range f.used {
		price[r] = 0
		if p := w.price[r]; p > 0 && len(f.on[r]) > 0 {
			price[r] = math.Pow(p, ratio)
		}
	}
	return sig, true
}

// keepPrices keeps the step's converged prices for the next run (a Scratch's fill only).
func (f *wfill) keepPrices(price []float64, sig uint64) {
	if !f.keep {
		return
	}
	step := f.e.steps
	for len(f.warm) <= step {
		f.warm = append(f.warm, stepPrices{})
	}
	w := &f.warm[step]
	w.sig, w.alpha = sig, f.alpha
	w.price = append(w.price[:0], price...)
}

// sweep is one round of coordinate ascent: each priced resource's price in turn set by
// solvePrice, the class price sums following; it keeps the prices before it in f.prev (for
// extrapolate) and says whether any price moved, unless halt stops it first.
func (f *wfill) sweep(ctx context.Context, price []float64) (bool, error) {
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
				f.q[f.pos[c]] += p - old
			}
			price[r] = p
		}
	}
	return moved, nil
}

// solvePrice is a resource's price given the others': 0 when its classes on fit in its
// capacity k at price 0, else the p > 0 at which they carry k (their load falls as p rises), by
// Newton steps kept inside a bracket, starting from its current price old.
func (f *wfill) solvePrice(on []int32, old, k float64) float64 {
	// carried is what the classes carry at price p and its derivative in p.
	carried := func(p float64) (s, ds float64) {
		for _, c := range on {
			i := f.pos[c]
			a := &f.ac[i]
			v, dv := f.rate(a.w, a.u, f.q[i]-old+p)
			s, ds = s+a.m*v, ds+a.m*dv
		}
		return s, ds
	}
	s0, _ := carried(old)
	if math.Abs(s0-k) <= k*alphaTol/4 && old > 0 || s0 <= k && old == 0 {
		return old // already there
	}
	if s, _ := carried(0); s <= k*(1+alphaTol/4) {
		return 0
	}
	// Bracket: carried(lo) > k ≥ carried(hi). Every class's rate is at most w·p^(−1/α), so at
	// p = (Σ m·w / k)^α the classes carry at most k.
	sw := 0.0
	for _, c := range on {
		a := &f.ac[f.pos[c]]
		sw += a.m * a.w
	}
	lo, hi := 0.0, math.Pow(sw/k, f.alpha)
	p := hi
	if old > lo && old < hi {
		p = old
	}
	for range 200 {
		s, ds := carried(p)
		if math.Abs(s-k) <= k*alphaTol/4 {
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

// extrapolate speeds up the sweeps where they converge slowly: when coupled resources' prices
// creep towards the solution together, each sweep moves them by nearly the same Δ; the prices
// jump to p + λ·Δ (Δ the last sweep's move, λ = 2, 4, 8, …, prices kept ≥ 0) for the λ that
// leaves the largest capacity violation smallest, if any lowers it. It never makes the
// violation worse, so the sweeps' convergence stands. before is the violation at price; it
// returns the violation at the prices it leaves, with their price sums, rates and loads in
// f.q, f.x and f.usage, unless halt stops it first.
func (f *wfill) extrapolate(ctx context.Context, price []float64, before float64) (float64, error) {
	best, bestLambda := before, 0.0
	for lambda := 2.0; lambda <= 1<<20; lambda *= 2 {
		if err := f.halt(ctx); err != nil {
			return 0, err
		}
		for _, r := range f.used {
			f.cand[r] = max(price[r]+lambda*(price[r]-f.prev[r]), 0)
		}
		v := f.violation(f.cand, f.qCand, f.xCand, f.loadCand)
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
	return f.violation(price, f.q, f.x, f.usage), nil
}

// relViolation is how far, relative to its capacity k, a resource carrying load breaks its
// condition: more than k, or, when it is priced, less.
func relViolation(load, k float64, priced bool) float64 {
	if priced {
		return math.Abs(load-k) / k
	}
	return (load - k) / k
}

// violation is the largest relative capacity violation at prices p: a resource carrying more
// than its capacity, or a priced one carrying less. It sets q to every active class's price
// sum, x to its rate and load to every resource's load at p, rates and loads in ceilings.
func (f *wfill) violation(p, q, x, load []float64) float64 {
	for _, r := range f.used {
		load[r] = 0
	}
	for k := range f.ac {
		a := &f.ac[k]
		res := a.res[:a.n]
		s := 0.0
		for _, r := range res {
			s += p[r]
		}
		v := a.u
		if s > 0 {
			v = min(a.w*f.power(a, s), a.u)
		}
		q[k], x[k] = s, v
		v *= a.m
		for _, r := range res {
			load[r] += v
		}
	}
	return f.worst(p, load)
}

// worst is the largest relative capacity violation of the loads load (in ceilings) at prices
// p.
func (f *wfill) worst(p, load []float64) float64 {
	unit := f.e.net.Ceiling
	worst := 0.0
	for _, r := range f.used {
		if len(f.on[r]) == 0 {
			continue
		}
		worst = max(worst, relViolation(load[r], f.capacity[r]/unit, p[r] > 0))
	}
	return worst
}

// power is q^(−1/α) for class a: near its last exact power, (q/q₀)^(−1/α)·y by the binomial
// series in r = q/q₀ − 1 to r⁴, where |r| ≤ f.near keeps the first term left out below 10⁻¹⁶
// of the sum; elsewhere powNeg's, which becomes the class's exact power.
func (f *wfill) power(a *alphaClass, q float64) float64 {
	r := q*a.inv - 1
	if math.Abs(r) <= f.near {
		b := &f.binom
		return a.y * (1 + r*(b[0]+r*(b[1]+r*(b[2]+r*(b[3]+r*(b[4]+r*b[5]))))))
	}
	y := powNeg(q, f.negInvAlpha)
	a.inv, a.y = 1/q, y
	return y
}

// setPowerSeries sets the binomial coefficients of (1 + r)^c, c = −1/α, that power uses, and
// the |r| up to which the series to r⁴ is kept: where the first term left out, C(c, 5)·r⁵, is
// at most 10⁻¹⁶, and at most 10⁻²; and forgets the classes' exact powers, taken at another α.
func (f *wfill) setPowerSeries() {
	c, k := f.negInvAlpha, 1.0
	for i := range f.binom {
		k *= (c - float64(i)) / float64(i+1)
		f.binom[i] = k
	}
	k *= (c - float64(len(f.binom))) / float64(len(f.binom)+1)
	f.near = min(math.Pow(1e-16/math.Abs(k), 1/float64(len(f.binom)+1)), 1e-2)
	f.acFresh = true
}

// newton is one projected Newton step on the dual: on the resources that are priced or
// overloaded (and whose load moves with their price), the price change Δ solving H·Δ = load − k,
// H the Jacobian of the loads in the prices with its sign changed (Σ over the classes crossing
// both resources of members × the rate's fall per unit of price; positive semidefinite), the
// prices kept ≥ 0, corrected for the loads' curvature or halved until it lowers the largest
// violation (newtonStep). It says whether it did, and the violation it left; the sweeps then
// clean up the resources it left out. before
// is the violation at price, with its price sums, rates and loads in f.q, f.x and f.usage.
// halt can stop it before each factorisation and each evaluation of the line search.
func (f *wfill) newton(ctx context.Context, price []float64, before float64) (bool, float64, error) {
	unit := f.e.net.Ceiling
	// The diagonal first, to know which resources' loads move with their price.
	for _, r := range f.used {
		f.diag[r] = 0
	}
	for k := range f.ac {
		a := &f.ac[k]
		f.slope[k] = 0
		if x := f.x[k]; f.q[k] > 0 && x < a.u {
			s := x / (f.alpha * f.q[k]) * a.m
			f.slope[k] = s
			for _, r := range a.res[:a.n] {
				f.diag[r] += s
			}
		}
	}
	for r := range f.index {
		f.index[r] = -1
	}
	// The rows: the resources first on their classes' paths (f.lead) before the others, so
	// that the factorisation finds the zeros between them (no class crosses two) in one block.
	act := f.rows[:0]
	for _, lead := range [2]bool{true, false} {
		for _, r := range f.used {
			if f.lead[r] != lead || len(f.on[r]) == 0 {
				continue
			}
			k := f.capacity[r] / unit
			if !(price[r] > 0 || f.usage[r] > k) {
				continue
			}
			if f.diag[r] > 0 {
				f.index[r] = int32(len(act))
				act = append(act, r)
			}
		}
	}
	f.rows = act
	n := len(act)
	if n == 0 {
		return false, before, nil
	}
	// A resource off by the largest violation that no row stands for (its classes sit at
	// their ceilings, their rates deaf to its price) is beyond Newton's reach: the sweeps
	// move it.
	for _, r := range f.used {
		if f.index[r] < 0 && len(f.on[r]) > 0 && relViolation(f.usage[r], f.capacity[r]/unit, price[r] > 0) >= before {
			return false, before, nil
		}
	}
	f.dbuf = slices.Grow(f.dbuf[:0], n)[:n]
	// H in the upper triangle of a row-major n×n array, factorised in place by LAPACK's
	// Cholesky (factorise). Where
	// the step does not lower the violation, again with H's diagonal raised by a factor 1 + μ
	// for each μ of newtonDamping in turn (Levenberg–Marquardt): where classes sit at their
	// ceilings, the priced resources can outnumber the classes whose rates still move, H is
	// singular or nearly, and the undamped step runs off along its flat direction (see
	// newtonDamping).
	f.hbuf = slices.Grow(f.hbuf[:0], n*n)[:n*n]
	for _, mu := range newtonDamping {
		if err := f.halt(ctx); err != nil {
			return false, 0, err
		}
		f.hessian(n, mu)
		if !factorise(f.hbuf, n) {
			continue // singular: the next μ raises the diagonal
		}
		ok, after, err := f.newtonStep(ctx, price, before, n)
		if err != nil || ok {
			return ok, after, err
		}
	}
	return false, before, nil
}

// factorise factorises in place the n×n matrix whose upper triangle h holds, row-major, into
// UᵀU by LAPACK's Cholesky, and says whether it could (H positive definite to rounding):
// unblocked (dpotf2) below factoriseBlocked rows, the few dozen of most sharings, where
// blocks cost more than they save; blocked (dpotrf) from there, where its updates, through
// gonum's dgemm, keep the matrix in the cache and run on every core. An all-to-all of 1,000
// nodes factorises 2,040 rows: 5.5 s with dpotf2 alone, 4.9 s so (2026-11-28); on matrices
// shaped as the sharings' (the senders' rows first, each crossing most receivers'), dpotf2
// takes as long as dpotrf or less up to 256 rows, and 25% more at 1,024.
func factorise(h []float64, n int) bool {
	if n >= factoriseBlocked {
		return lapackImpl.Dpotrf(blas.Upper, n, h, n)
	}
	return lapackImpl.Dpotf2(blas.Upper, n, h, n)
}

// factoriseBlocked is the number of rows from which factorise blocks.
const factoriseBlocked = 256

// newtonStep moves the prices along the Newton step on the rows f.rows, H factorised into
// f.hbuf (dpotf2, solved by dpotrs): Δ solving H·Δ = load − k, the prices kept ≥ 0. Where the violation is
// below curvatureMax, it first tries the step corrected for the loads' curvature, Δ + H⁻¹·g,
// g the loads' second-order change along Δ (curvature): Chebyshev's method, whose error is
// the cube of the last rather than its square (10⁻² falls to 10⁻⁶, then to rounding, where
// Newton's steps take 10⁻⁴ and 10⁻⁸ on the way). It takes it if it divides the violation by 4
// at least; else the plain step, halved until it lowers the violation (down to 2⁻¹⁰). It says
// whether it moved the prices, and the violation it left; before is the violation at price.
func (f *wfill) newtonStep(ctx context.Context, price []float64, before float64, n int) (bool, float64, error) {
	unit := f.e.net.Ceiling
	for i, r := range f.rows {
		f.dbuf[i] = f.usage[r] - f.capacity[r]/unit
	}
	lapackImpl.Dpotrs(blas.Upper, n, 1, f.hbuf, n, f.dbuf, 1)
	if before < curvatureMax {
		f.curvature(n)
		lapackImpl.Dpotrs(blas.Upper, n, 1, f.hbuf, n, f.gbuf, 1)
		for i := range n {
			f.gbuf[i] += f.dbuf[i]
		}
		if err := f.halt(ctx); err != nil {
			return false, 0, err
		}
		if v := f.tryStep(price, f.gbuf, 1); v <= before/4 {
			f.accept(price)
			return true, v, nil
		}
	}
	for t := 1.0; t >= 1.0/1024; t /= 2 {
		if err := f.halt(ctx); err != nil {
			return false, 0, err
		}
		if v := f.tryStep(price, f.dbuf, t); v < before {
			f.accept(price)
			return true, v, nil
		}
	}
	return false, before, nil
}

// curvatureMax is the violation below which newtonStep tries the step corrected for the
// loads' curvature: from further away the quadratic model of the loads that corrects it
// overshoots (at 1 and above, the iteration crept on the 10⁴-transfer pattern). On that
// pattern the correction took the price iteration from 29,600 Newton steps, 50,100
// evaluations of the violation and 32,800 factorisations to 22,000, 39,800 and 23,600.
const curvatureMax = 0.3

// curvature sets f.gbuf to the loads' second-order change along the step f.dbuf on the rows:
// Σ over the classes crossing each row of members × ½·x”(q)·δq², δq the step's change of the
// class's price sum, x” = c(c − 1)·x/q² = slope·(1 − c)/q per member.
func (f *wfill) curvature(n int) {
	f.gbuf = slices.Grow(f.gbuf[:0], n)[:n]
	clear(f.gbuf)
	k1 := (1 - f.negInvAlpha) / 2
	for k := range f.ac {
		s := f.slope[k]
		if s == 0 {
			continue
		}
		a := &f.ac[k]
		dq := 0.0
		for _, r := range a.res[:a.n] {
			if i := f.index[r]; i >= 0 {
				dq += f.dbuf[i]
			}
		}
		g := k1 * s / f.q[k] * dq * dq
		for _, r := range a.res[:a.n] {
			if i := f.index[r]; i >= 0 {
				f.gbuf[i] += g
			}
		}
	}
}

// tryStep sets the candidate prices f.cand to price moved by t·d on the rows f.rows (kept ≥ 0)
// and returns their violation, their price sums, rates and loads in f.qCand, f.xCand and
// f.loadCand.
func (f *wfill) tryStep(price, d []float64, t float64) float64 {
	copy(f.cand, price)
	for i, r := range f.rows {
		f.cand[r] = max(price[r]+t*d[i], 0)
	}
	return f.violation(f.cand, f.qCand, f.xCand, f.loadCand)
}

// accept takes the candidate prices into price, with their price sums, rates and loads.
func (f *wfill) accept(price []float64) {
	copy(price, f.cand)
	f.q, f.qCand = f.qCand, f.q
	f.x, f.xCand = f.xCand, f.x
	f.usage, f.loadCand = f.loadCand, f.usage
}

// hessian sets the upper triangle of newton's n×n matrix H, in f.hbuf, from the classes'
// slopes, the rows of the resources (f.index, f.rows) and their sums (f.diag), with its
// diagonal raised by a factor 1 + mu.
func (f *wfill) hessian(n int, mu float64) {
	clear(f.hbuf)
	var rows [maxAlphaPath]int
	for k := range f.ac {
		s := f.slope[k]
		if s == 0 {
			continue
		}
		a := &f.ac[k]
		m := 0
		for _, r := range a.res[:a.n] {
			if i := int(f.index[r]); i >= 0 {
				rows[m] = i
				m++
			}
		}
		for x, i := range rows[:m] {
			for _, j := range rows[x+1 : m] {
				f.hbuf[min(i, j)*n+max(i, j)] += s
			}
		}
	}
	// The diagonal is each row's sum of slopes (newton's f.diag).
	for i, r := range f.rows {
		f.hbuf[i*n+i] = f.diag[r] * (1 + mu)
	}
}

// NotConvergedError says that a step's α-fair prices did not converge within the iteration
// cap: the pattern can be predicted with ackpath (the same factors under max-min sharing).
type NotConvergedError struct {
	Alpha     float64 // α of the sharing
	Violation float64 // the largest relative capacity violation left
}

func (e *NotConvergedError) Error() string {
	return fmt.Sprintf("contention: α-fair prices (α = %g) did not converge in %d iterations (capacity violation %.3g); predict this pattern with ackpath (the same factors under max-min sharing)", e.Alpha, alphaMaxIter, e.Violation)
}
