package estimate

import (
	"math"

	"gonum.org/v1/gonum/optimize"
)

// minimise sets *x to the minimiser of the error on obs over [lo, hi] (golden section, to
// rel times the bracket), in log space when logScale.
func (f *learnedFitter) minimise(x *float64, lo, hi, rel float64, logScale bool, obs []learnedObs) error {
	var ferr error
	cost := func(v float64) float64 {
		if logScale {
			v = math.Exp(v)
		}
		*x = v
		s, err := f.searchCost(obs)
		if err != nil && ferr == nil {
			ferr = err
		}
		return s
	}
	if logScale {
		lo, hi = math.Log(lo), math.Log(hi)
	}
	v := goldenSection(cost, lo, hi, rel*(hi-lo))
	if logScale {
		v = math.Exp(v)
	}
	*x = v
	return ferr
}

// ackCoord is one of ackpath's parameters as polish moves it: its value is scale times the
// search's coordinate, kept in [0, hi].
type ackCoord struct {
	p         *float64
	scale, hi float64
}

// rampScale is τ's unit in polish's search: 10 ms, so that its coordinate moves as far as
// the slowdowns' (the simplex's first steps, 0.05, are half a millisecond of τ).
const rampScale = 0.01

// polishSimplex is the size of polish's first simplex (in the coordinates of ackCoord). The
// search's path alone moves a dataset's score by up to about a point (held-out transfers
// within ±10%), so a variant of the fit is compared with the model at two sizes, 0.05 and
// 0.06, the mean taken (docs/journal/estimate-learned-fit.md).
const polishSimplex = 0.05

// polishTol ends polish where its error fell by less than that share of itself in 60
// iterations. An absolute tolerance alone (10⁻¹², which the converger keeps) lets every polish
// run to its 600 evaluations under Huber's loss, the last few hundred lowering the error in
// its seventh digit while the simplex creeps along the ridge where the slowdowns trade off;
// the relative one stops it there at no cost in accuracy beyond what the search's path alone
// moves, and a calibration takes about a sixth less time (docs/journal/estimate-learned-fit.md).
const polishTol = 1e-6

// polish moves the parameters xs by Nelder–Mead from where they are, keeping its point if it
// lowers the error on obs, and says whether any coordinate moved by more than 10⁻⁴:
// coordinate descent zig-zags along the ridges where two slowdowns trade off (b and c for the
// transfers into a node that sends one, a and c for those out of a node that receives two, c
// and c₁ wherever queues of one and of two transfers mix, τ and the slowdowns for every busy
// acknowledgements' path), and stops short.
func (f *learnedFitter) polish(xs []ackCoord, obs []learnedObs) (bool, error) {
	x0 := make([]float64, len(xs))
	for i, x := range xs {
		x0[i] = *x.p / x.scale
	}
	set := func(x []float64) float64 {
		out := 0.0 // how far x lies outside the box, which the error pays for
		for i, v := range x {
			c := min(max(v, 0), xs[i].hi/xs[i].scale)
			*xs[i].p, out = c*xs[i].scale, out+math.Abs(v-c)
		}
		return out
	}
	var ferr error
	cost := func(x []float64) float64 {
		out := set(x)
		s, err := f.searchCost(obs)
		if err != nil && ferr == nil {
			ferr = err
		}
		return s * (1 + out)
	}
	s0 := cost(x0)
	res, err := optimize.Minimize(optimize.Problem{Func: cost}, x0, &optimize.Settings{FuncEvaluations: 600,
		Converger: &optimize.FunctionConverge{Absolute: 1e-12, Relative: polishTol, Iterations: 60}}, &optimize.NelderMead{SimplexSize: polishSimplex})
	if ferr != nil {
		return false, ferr
	}
	if err == nil && res != nil && res.F < s0 {
		set(res.X)
		moved := false
		for i, v := range res.X {
			moved = moved || math.Abs(min(max(v, 0), xs[i].hi/xs[i].scale)-x0[i]) > 1e-4
		}
		return moved, nil
	}
	set(x0)
	return false, nil
}

// ackStartGrid is the coarse grid of a, b and c (each) whose best point starts ackpath's second
// descent.
var ackStartGrid = []float64{0, 0.25, 0.5, 1, 2}

// gridStart sets the parameters xs to the point of the grid (the same values for each) with
// the least error on obs, the first in lexicographic order among equals.
func (f *learnedFitter) gridStart(xs []*float64, grid []float64, obs []learnedObs) error {
	best := make([]float64, len(xs))
	bestS := math.Inf(1)
	idx := make([]int, len(xs))
	for {
		for i, x := range xs {
			*x = grid[idx[i]]
		}
		s, err := f.searchCost(obs)
		if err != nil {
			return err
		}
		if s < bestS {
			bestS = s
			for i, x := range xs {
				best[i] = *x
			}
		}
		k := len(idx) - 1
		for k >= 0 && idx[k] == len(grid)-1 {
			idx[k] = 0
			k--
		}
		if k < 0 {
			break
		}
		idx[k]++
	}
	for i, x := range xs {
		*x = best[i]
	}
	return nil
}
