package estimate

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/commcal/commcal/contention"
)

// alphaGrid is the resolution of α's grid: MinAlpha·(MaxAlpha/MinAlpha)^(g/(alphaGrid − 1))
// for g < alphaGrid, steps of 6.4% (the interval's resolution; the estimate itself is refined
// between grid points), and g = alphaGrid for α = ∞ (max-min). alphaRounds bounds the
// alternation of α's fit with a, b, c, c₁, τ and ρ's.
const (
	alphaGrid   = 64
	alphaRounds = 3
)

// alphaFlat is how little α's whole error may change over its grid for α to count as not
// determined: above the α-fair prices' precision (rates to ~10⁻¹¹, or 10⁻⁷ in the rare
// sharings where the iteration stalls, contention's alphaStallTol: one such rate moves the
// error of a few hundred transfers by about 10⁻⁸ of itself), far below any real effect.
const alphaFlat = 1e-7

// setAlpha sets lp's α to a, an infinite α as 0 (max-min).
func setAlpha(lp *contention.LearnedParams, a float64) {
	lp.Alpha = a
	if math.IsInf(a, 1) {
		lp.Alpha = 0
	}
}

// alphaTable tabulates each pattern's error (Σ huberLoss) on α's grid (log scale, and α = ∞
// last, max-min, which always converges). It leaves out the grid points where the α-fair
// prices do not converge on every pattern and names them in skipped; points are the rest.
func (f *learnedFitter) alphaTable(lp *contention.LearnedParams, obs []learnedObs) (points []float64, table gridProfile, skipped []string, err error) {
	table = make(gridProfile, len(obs)) // per pattern, its error at each point kept
	for g := range alphaGrid + 1 {
		a := math.Inf(1)
		if g < alphaGrid {
			a = contention.MinAlpha * math.Pow(contention.MaxAlpha/contention.MinAlpha, float64(g)/(alphaGrid-1))
		}
		setAlpha(lp, a)
		res, err := f.residuals(obs)
		if nc := (*contention.NotConvergedError)(nil); errors.As(err, &nc) {
			skipped = append(skipped, fmt.Sprintf("%.3g", a))
			continue
		} else if err != nil {
			return nil, nil, nil, err
		}
		points = append(points, a)
		for i := range res {
			s, _ := sumOf(res[i:i+1], huberLoss)
			table[i] = append(table[i], s)
		}
	}
	return points, table, skipped, nil
}

// fitAlpha fits ackpath-alpha's α on obs, with others the number of parameters fitted beside
// it (the slowdowns, and κ where kept): each pattern's error tabulated on α's grid (alphaTable), the best grid
// point refined by golden section between its finite neighbours, the interval the grid points
// that an F test cannot tell from the estimate (alphaInterval). The grid guards against the
// local minima where a line search alone could stop. An infinite α is reported as +Inf and
// set as 0 (max-min); so is α where no finite grid point converges: the data then bound α
// from below only, which max-min, its limit, stands for. Where no pattern's error changes
// with α (no transfer crosses two contended resources), where there are too few patterns for
// the test, or where the interval spans the whole grid, α is not determined: it is set to 1,
// proportional fairness, and no estimate returned (nil) but why, for the caller to leave it
// out. The interval holds the other parameters at their fit.
func (f *learnedFitter) fitAlpha(lp *contention.LearnedParams, obs []learnedObs, others int) (fit *Param, why, warning string, err error) {
	df, crit, ok := oneMoreParameter(len(obs), others)
	if !ok {
		lp.Alpha = 1
		return nil, fmt.Sprintf("%d patterns are too few to test α beside %d other parameters", len(obs), others), "", nil
	}
	points, table, skipped, err := f.alphaTable(lp, obs)
	if err != nil {
		return nil, "", "", err
	}
	at := func(g int) float64 { return points[g] }
	last := len(points) - 1 // α = ∞
	if len(skipped) > 0 {
		warning = fmt.Sprintf("alpha: the α-fair prices did not converge on every calibration pattern at α = %s; those grid points were left out", strings.Join(skipped, ", "))
	}
	if last == 0 { // no finite α converged: max-min
		setAlpha(lp, math.Inf(1))
		return &Param{Value: math.Inf(1), CILow: math.Inf(1), CIHigh: math.Inf(1), N: len(obs)}, "", warning, nil
	}
	if table.flat(alphaFlat) {
		lp.Alpha = 1
		return nil, fmt.Sprintf("no transfer of its %d patterns crosses two contended resources (their error does not change with α)", len(obs)), warning, nil
	}
	g := table.best()
	alpha, least := at(g), table.column(g)
	if g < last {
		// Golden section (log scale) between the neighbouring finite grid points; an α where
		// the prices do not converge costs +∞ (searchCost).
		if err := f.minimise(&lp.Alpha, at(max(g-1, 0)), at(min(g+1, last-1)), 1e-4, true, obs); err != nil {
			return nil, "", "", err
		}
		if s, err := f.searchCost(obs); err != nil {
			return nil, "", "", err
		} else if s < least {
			alpha, least = lp.Alpha, s
		}
	}
	glo, ghi := alphaInterval(table, g, least, df, crit)
	if glo == 0 && ghi == last {
		lp.Alpha = 1
		return nil, fmt.Sprintf("its 95%% interval spans the whole grid, α = %.2g to max-min: the %d patterns do not tell their sharings apart", at(0), len(obs)), warning, nil
	}
	setAlpha(lp, alpha)
	return &Param{Value: alpha, CILow: min(at(glo), alpha), CIHigh: max(at(ghi), alpha), N: len(obs)}, "", warning, nil
}

// alphaInterval is α's 95% interval on its grid, best the grid point the estimate was
// refined around: the first and the last grid point whose error (summed over the patterns)
// exceeds least, the error at the estimate, by no more than the F test of one parameter
// (oneMoreParameter: df and crit) allows, (S(α) − least)/(least/df) ≤ crit. Where the refined
// estimate beats every grid point by more than the test allows, the interval is the
// refinement's bracket, best's finite neighbours (the last grid point is max-min).
func alphaInterval(table gridProfile, best int, least, df, crit float64) (lo, hi int) {
	limit := least * (1 + crit/df)
	lo = -1
	for g := range table[0] {
		if table.column(g) <= limit {
			if lo < 0 {
				lo = g
			}
			hi = g
		}
	}
	if lo < 0 {
		return max(best-1, 0), min(best+1, len(table[0])-2)
	}
	return lo, hi
}
