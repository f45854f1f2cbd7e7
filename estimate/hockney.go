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
	Class    cluster.PathClass `json:"class"`
	Alpha    Param             `json:"alpha_s"`
	Beta     Param             `json:"beta_s_per_byte"`
	R2       float64           `json:"r2"`
	RSE      float64           `json:"rse"`
	Weighted bool              `json:"weighted"`
	// MaxAbsRelResidual is the largest |T − T̂|/T̂ over the observations.
	MaxAbsRelResidual float64 `json:"max_abs_rel_residual"`
}

// FitHockney fits α and β per path class (intra-rack, inter-rack) by least squares of each
// repetition's time on its message size, over the p2p_sweep transfers of rows (patterns of
// one transfer). With weighted, the weights are 1/T̂² (T̂ from a first fit weighted by 1/T²),
// so that relative errors count equally (the noise of timings grows with them). Classes without data are left out; a class with
// fewer than 3 observations or a single message size is an error naming the class.
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
		x := mat.NewDense(n, 2, nil)
		for i := range o.m {
			x.Set(i, 0, 1)
			x.Set(i, 1, o.m[i])
		}
		var w []float64
		if weighted {
			w = make([]float64, n)
			for i, t := range o.t {
				w[i] = 1 / (t * t)
			}
		}
		reg, err := LeastSquares(x, o.t, w)
		if err == nil && weighted {
			// Second stage: weights 1/T̂² from the first fit. Weights from the noisy times
			// themselves favour the draws that came out short.
			for i := range w {
				pred := o.t[i] - reg.Residuals[i]
				if !(pred > 0) {
					return nil, fmt.Errorf("estimate: hockney %s: the fit predicts %g s for %g B; cannot weight by it", c, pred, o.m[i])
				}
				w[i] = 1 / (pred * pred)
			}
			reg, err = LeastSquares(x, o.t, w)
		}
		if err != nil {
			return nil, fmt.Errorf("estimate: hockney %s: %w", c, err)
		}
		f := HockneyFit{Class: c, R2: reg.R2, RSE: reg.RSE, Weighted: weighted,
			Alpha: Param{Value: reg.Coef[0], CILow: reg.CILow[0], CIHigh: reg.CIHigh[0], N: n},
			Beta:  Param{Value: reg.Coef[1], CILow: reg.CILow[1], CIHigh: reg.CIHigh[1], N: n}}
		for i, res := range reg.Residuals {
			pred := o.t[i] - res
			f.MaxAbsRelResidual = max(f.MaxAbsRelResidual, math.Abs(res/pred))
		}
		fits = append(fits, f)
	}
	if len(fits) == 0 {
		return nil, fmt.Errorf("estimate: hockney: no p2p_sweep transfers (transfers rows of experiment p2p_sweep: one transfer alone per message size, on a pair of each path class)")
	}
	return fits, nil
}

func distinct(v []float64) int {
	s := slices.Clone(v)
	slices.Sort(s)
	return len(slices.Compact(s))
}
