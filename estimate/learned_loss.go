package estimate

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/commcal/commcal/contention"
	"github.com/commcal/commcal/internal/parallel"
)

// learnedFitter evaluates one learned model's error on calibration patterns. ctx is the fit's:
// once it is done, every evaluation fails with its error at once (within a step of the
// predictions under way), so that a search, whatever its number of evaluations left, ends
// within a second and the fit returns that error.
type learnedFitter struct {
	ctx   context.Context
	model contention.Learned
	net   *contention.Network
}

// residuals are log(predicted/target) of every term, pattern by pattern. A pattern listed
// several times (a bootstrap resample) is predicted once: a Scratch serves one goroutine at a
// time, and the residuals are the same.
func (f *learnedFitter) residuals(obs []learnedObs) ([][]float64, error) {
	out := make([][]float64, len(obs))
	firstOf := map[*contention.Scratch]int{}
	var todo []int // the first listing of each pattern
	for i, o := range obs {
		if o.scratch != nil {
			if _, seen := firstOf[o.scratch]; seen {
				continue
			}
			firstOf[o.scratch] = i
		}
		todo = append(todo, i)
	}
	err := parallel.For(f.ctx, len(todo), 0, func(k int) error {
		r, err := f.logErrors(obs[todo[k]])
		out[todo[k]] = r
		return err
	})
	if err != nil {
		return nil, err
	}
	for i, o := range obs {
		if out[i] == nil {
			out[i] = slices.Clone(out[firstOf[o.scratch]])
		}
	}
	return out, nil
}

// logErrors is log(predicted/target) of each of o's terms: its transfers' times, or their
// order statistics.
func (f *learnedFitter) logErrors(o learnedObs) ([]float64, error) {
	var pred []float64
	if o.order {
		var err error
		if pred, err = f.model.OrderStatistics(f.ctx, o.scratch, f.net, o.flows); err != nil {
			return nil, fmt.Errorf("%s/%s: %w", o.exp, o.id, err)
		}
	} else {
		p, err := f.model.PredictWith(f.ctx, o.scratch, f.net, o.flows)
		if err != nil {
			return nil, fmt.Errorf("%s/%s: %w", o.exp, o.id, err)
		}
		pred = p.Times
	}
	r := make([]float64, len(pred))
	for j, t := range pred {
		r[j] = math.Log(t / o.target[j])
	}
	return r, nil
}

// sse is Σ log²(predicted/target) over the patterns and the number of terms.
func (f *learnedFitter) sse(obs []learnedObs) (float64, int, error) {
	res, err := f.residuals(obs)
	s, n := sumOf(res, square)
	return s, n, err
}

// sumOf is Σ loss(v) over the residuals (pattern by pattern, in order) and their number.
func sumOf(res [][]float64, loss func(float64) float64) (float64, int) {
	s, n := 0.0, 0
	for _, r := range res {
		for _, v := range r {
			s += loss(v)
		}
		n += len(r)
	}
	return s, n
}

// square is the least-squares loss of a log error.
func square(v float64) float64 { return v * v }

// huberDelta is where the searches' loss turns from square to linear (huberLoss): a log
// error of 0.1, about the ±10% by which accuracy is judged. With the sum of squares, a few
// transfers mispredicted by 30–50% pull the parameters towards them at the cost of many
// predicted within ±10%; Huber's loss (Huber 1964) counts them by their distance instead.
// docs/journal/estimate-learned-fit.md has its comparison with least squares and δ = 0.05 on
// the datasets of data/tcp.
const huberDelta = 0.1

// huberLoss is Huber's loss of a log error v: v² within ±huberDelta, 2δ|v| − δ² beyond (the
// square's value and slope at ±δ).
func huberLoss(v float64) float64 {
	if a := math.Abs(v); a > huberDelta {
		return 2*huberDelta*a - huberDelta*huberDelta
	}
	return v * v
}

// huberScore is half the derivative of huberLoss: v clipped to ±huberDelta.
func huberScore(v float64) float64 {
	return min(max(v, -huberDelta), huberDelta)
}

// searchCost is the error a search minimises: Σ huberLoss(log(predicted/target)), or +∞ where
// the α-fair prices do not converge on some pattern (small α: TestFitAlphaSkipsNonConvergence),
// so that the search moves away from such parameters instead of failing the model's
// calibration.
func (f *learnedFitter) searchCost(obs []learnedObs) (float64, error) {
	res, err := f.residuals(obs)
	s, _ := sumOf(res, huberLoss)
	if nc := (*contention.NotConvergedError)(nil); errors.As(err, &nc) {
		return math.Inf(1), nil
	}
	return s, err
}
