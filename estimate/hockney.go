package estimate

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/datasets"
	"github.com/commcal/commcal/experiments"
)

// HockneyFit is T(m) = α + β·m fitted for one path class.
type HockneyFit struct {
	Class cluster.PathClass `json:"class"`
	// Alpha is the intercept of the line through every observation; Beta the slope of the
	// line through the observations at or above SmallBelowBytes (every one when it is 0).
	Alpha Param `json:"alpha_s"`
	Beta  Param `json:"beta_s_per_byte"`
	// R2 and RSE are those of the fit Beta comes from; Sizes its number of distinct message
	// sizes.
	R2       float64 `json:"r2"`
	RSE      float64 `json:"rse"`
	Sizes    int     `json:"sizes"`
	Weighted bool    `json:"weighted"`
	// MaxAbsRelResidual is the largest |T − T̂|/T̂ over the observations, about the line
	// through all of them.
	MaxAbsRelResidual float64 `json:"max_abs_rel_residual"`
	// SmallBelowBytes is the half-performance length n½ = α/β of the line through every
	// observation, α at most the smallest size's median time (halfPerformanceBytes; 0 when
	// α ≤ 0 or β ≤ 0): the SmallRows observations below it are latency-dominated and left out
	// of Beta. BetaFromSmall is set when fewer than 3 observations of 2 sizes lie at or above
	// it, so that Beta is the slope through every observation and measures no rate.
	SmallBelowBytes float64 `json:"small_below_bytes,omitempty"`
	SmallRows       int     `json:"small_rows,omitempty"`
	BetaFromSmall   bool    `json:"beta_from_small,omitempty"`
	// SmallestBytes and SmallestSeconds are the smallest message size and its median time:
	// no latency exceeds the time a whole message of that size takes.
	SmallestBytes   float64 `json:"smallest_bytes"`
	SmallestSeconds float64 `json:"smallest_s"`
}

// FitHockney fits α and β per path class (intra-rack, inter-rack) by least squares of each
// repetition's time on its message size, over the p2p_sweep transfers of rows (patterns of
// one transfer). With weighted, the weights are 1/T̂² (T̂ from a first fit weighted by 1/T²),
// so that relative errors count equally (the noise of timings grows with them).
//
// α is the intercept of the line through every observation. β is the slope of the same fit
// again over the observations at or above that line's half-performance length n½ = α/β
// (Hockney), α there at most the smallest size's median time: below n½ latency is more than
// half of the time, and such small messages say little of the rate. Where the line's α is not
// positive (the committed TCP sweeps, whose slow start makes the intercept negative) no
// observation is small and both come from one fit. Classes without data are left out; a
// class with fewer than 3 observations or a single message size is an error naming the
// class.
func FitHockney(cl *cluster.Cluster, rows []datasets.Transfer, weighted bool) ([]HockneyFit, error) {
	type obs struct{ m, t []float64 }
	byClass := map[cluster.PathClass]*obs{}
	for _, r := range rows {
		if r.Experiment != experiments.P2PSweep {
			continue
		}
		c, err := cl.Class(r.Src, r.Dst)
		if err != nil {
			return nil, fmt.Errorf("estimate: %w", err)
		}
		o := byClass[c]
		if o == nil {
			o = &obs{}
			byClass[c] = o
		}
		o.m = append(o.m, float64(r.Bytes))
		o.t = append(o.t, r.Seconds())
	}
	var fits []HockneyFit
	for _, c := range []cluster.PathClass{cluster.IntraRack, cluster.InterRack} {
		o := byClass[c]
		if o == nil {
			continue
		}
		n := len(o.m)
		if n < 3 || slices.Min(o.m) == slices.Max(o.m) {
			return nil, fmt.Errorf("estimate: hockney %s: %d observations of %d distinct sizes, need at least 3 observations of 2 sizes", c, n, distinct(o.m))
		}
		reg, err := hockneyLine(o.m, o.t, weighted)
		if err != nil {
			return nil, fmt.Errorf("estimate: hockney %s: %w", c, err)
		}
		f := HockneyFit{Class: c, R2: reg.R2, RSE: reg.RSE, Sizes: distinct(o.m), Weighted: weighted,
			Alpha: Param{Value: reg.Coef[0], CILow: reg.CILow[0], CIHigh: reg.CIHigh[0], N: n},
			Beta:  Param{Value: reg.Coef[1], CILow: reg.CILow[1], CIHigh: reg.CIHigh[1], N: n}}
		for i, res := range reg.Residuals {
			pred := o.t[i] - res
			f.MaxAbsRelResidual = max(f.MaxAbsRelResidual, math.Abs(res/pred))
		}
		// No latency exceeds the time of the smallest message: where large messages' noise
		// pulls the line's intercept above it (152 µs against 3.6 µs for osu_latency over
		// loopback), the smallest message's median time bounds it.
		sizes, medians := perSizeMedians(o.m, o.t)
		f.SmallestBytes, f.SmallestSeconds = sizes[0], medians[0]
		if half := halfPerformanceBytes(min(reg.Coef[0], medians[0]), reg.Coef[1]); half > 0 && !math.IsInf(half, 0) {
			f.SmallBelowBytes = half
			var lm, lt []float64
			for i, m := range o.m {
				if m >= half {
					lm, lt = append(lm, m), append(lt, o.t[i])
				}
			}
			f.SmallRows = n - len(lm)
			if f.SmallRows > 0 {
				if len(lm) < 3 || distinct(lm) < 2 {
					f.BetaFromSmall = true
				} else if large, err := hockneyLine(lm, lt, weighted); err != nil {
					return nil, fmt.Errorf("estimate: hockney %s at or above n½ = %.4g B: %w", c, half, err)
				} else {
					f.R2, f.RSE, f.Sizes = large.R2, large.RSE, distinct(lm)
					f.Beta = Param{Value: large.Coef[1], CILow: large.CILow[1], CIHigh: large.CIHigh[1], N: len(lm)}
				}
			}
		}
		fits = append(fits, f)
	}
	if len(fits) == 0 {
		return nil, fmt.Errorf("estimate: hockney: no p2p_sweep transfers (transfers rows of experiment p2p_sweep: one transfer alone per message size, on a pair of each path class)")
	}
	return fits, nil
}

// hockneyLine is the least-squares line t = α + β·m, unweighted, or with weighted by 1/T̂²:
// a first fit weighted by 1/t² gives T̂ (weights from the noisy times themselves favour the
// draws that came out short), and the second is weighted by it.
func hockneyLine(m, t []float64, weighted bool) (*Regression, error) {
	n := len(m)
	x := mat.NewDense(n, 2, nil)
	for i := range m {
		x.Set(i, 0, 1)
		x.Set(i, 1, m[i])
	}
	if !weighted {
		return LeastSquares(x, t, nil)
	}
	w := make([]float64, n)
	for i, v := range t {
		w[i] = 1 / (v * v)
	}
	reg, err := LeastSquares(x, t, w)
	if err != nil {
		return nil, err
	}
	for i := range w {
		pred := t[i] - reg.Residuals[i]
		if !(pred > 0) {
			return nil, fmt.Errorf("the fit predicts %g s for %g B; cannot weight by it", pred, m[i])
		}
		w[i] = 1 / (pred * pred)
	}
	return LeastSquares(x, t, w)
}

func distinct(v []float64) int {
	s := slices.Clone(v)
	slices.Sort(s)
	return len(slices.Compact(s))
}
