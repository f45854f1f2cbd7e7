package estimate

import "gonum.org/v1/gonum/stat/distuv"

// oneMoreParameter is the F test of one parameter more, over patterns patterns with others
// parameters fitted beside it: its degrees of freedom df = P − q − 1, and crit the 95% point
// of F(1, df) that (S₀ − S₁)/(S₁/df) must pass, S₀ the error without the parameter and S₁
// with it; ok is false where df < 1 and there is no test. Patterns, not transfers, count as
// observations (a pattern's transfers share its conditions and are not independent); the
// error is the searches', the sum of squared log errors where they are within ±0.1, as
// nearly all are at a fit. κ is kept by it (couplingShown), and α's interval is the grid
// points it cannot tell from the estimate (alphaInterval).
func oneMoreParameter(patterns, others int) (df, crit float64, ok bool) {
	df = float64(patterns - others - 1)
	if df < 1 {
		return df, 0, false
	}
	return df, (distuv.F{D1: 1, D2: df}).Quantile(0.95), true
}
