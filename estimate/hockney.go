package estimate

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/datasets"
)

// Param is one estimated parameter with its 95% confidence interval and the number of
// observations behind it.
type Param struct {
	Value  float64 `json:"value"`
	CILow  float64 `json:"ci_low"`
	CIHigh float64 `json:"ci_high"`
	N      int     `json:"n"`
}

// Covers says whether the interval contains v.
func (p Param) Covers(v float64) bool { return p.CILow <= v && v <= p.CIHigh }

// paramJSON is Param's JSON form: a bound that is infinite (no interval, or a one-sided one)
// is written as the string "inf" or "-inf", which JSON numbers cannot hold.
type paramJSON struct {
	Value  any `json:"value"`
	CILow  any `json:"ci_low"`
	CIHigh any `json:"ci_high"`
	N      int `json:"n"`
}

func jsonNumber(v float64) any {
	switch {
	case math.IsInf(v, 1):
		return "inf"
	case math.IsInf(v, -1):
		return "-inf"
	case math.IsNaN(v):
		return "nan"
	}
	return v
}

func fromJSONNumber(v any) (float64, error) {
	switch x := v.(type) {
	case float64:
		return x, nil
	case string:
		switch x {
		case "inf":
			return math.Inf(1), nil
		case "-inf":
			return math.Inf(-1), nil
		case "nan":
			return math.NaN(), nil
		}
	}
	return 0, fmt.Errorf("estimate: %v is not a number, \"inf\", \"-inf\" or \"nan\"", v)
}

// MarshalJSON implements json.Marshaler.
func (p Param) MarshalJSON() ([]byte, error) {
	return json.Marshal(paramJSON{Value: jsonNumber(p.Value), CILow: jsonNumber(p.CILow), CIHigh: jsonNumber(p.CIHigh), N: p.N})
}

// UnmarshalJSON implements json.Unmarshaler.
func (p *Param) UnmarshalJSON(data []byte) error {
	var j paramJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return err
	}
	var err error
	if p.Value, err = fromJSONNumber(j.Value); err != nil {
		return err
	}
	if p.CILow, err = fromJSONNumber(j.CILow); err != nil {
		return err
	}
	if p.CIHigh, err = fromJSONNumber(j.CIHigh); err != nil {
		return err
	}
	p.N = j.N
	return nil
}

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
		if r.Experiment != "p2p_sweep" {
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
			f.MaxAbsRelResidual = max(f.MaxAbsRelResidual, abs(res/pred))
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

func abs(v float64) float64 {
	if v < 0 {
		return -v
	}
	return v
}
