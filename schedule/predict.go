package schedule

import (
	"context"
	"fmt"

	"github.com/commcal/commcal/contention"
	"github.com/commcal/commcal/internal/badinput"
)

// Result is a schedule's predicted completion.
type Result struct {
	// Seconds is the collective's completion time: the sum of its rounds' times.
	Seconds float64
	// Rounds holds each round's time: its slowest transfer under the model, or with a spread
	// the expected slowest (Spread.RoundTime).
	Rounds []float64
	// Algorithm and Rule are the schedule's: which algorithm, and why.
	Algorithm, Rule string
}

// Predict predicts s round by round under model: each round's transfers start together,
// between the nodes their ranks run on, and the next round starts when the round ends: when
// its slowest transfer ends, or with a spread (the calibration's: estimate.FitSpread; nil for
// none) when its slowest is expected to, given how a transfer's measured time scatters around
// its mean from one repetition to the next (Spread.RoundTime). A round whose transfers all
// stay within nodes (ranks sharing a node, through shared memory that no network model
// describes) takes no time. A spread that is not one (Spread.Check) is bad input.
//
// Predict stops when ctx is done, within a step of the model's step loop, with ctx's error.
func Predict(ctx context.Context, net *contention.Network, model contention.Model, s *Schedule, spread Spread) (*Result, error) {
	if err := spread.Check(); err != nil {
		return nil, badinput.Errorf("", "schedule: %v", err)
	}
	// The rounds' predictions are independent (each starts its transfers together), so they
	// run on all cores; only their sum chains them.
	var patterns [][]contention.Flow
	var which []int // the round of each pattern
	for r, round := range s.Rounds {
		var flows []contention.Flow
		for _, t := range round {
			if src, dst := s.Ranks[t.Src], s.Ranks[t.Dst]; src != dst {
				flows = append(flows, contention.Flow{Src: src, Dst: dst, Bytes: t.Bytes})
			}
		}
		if len(flows) > 0 {
			patterns = append(patterns, flows)
			which = append(which, r)
		}
	}
	preds, err := contention.PredictAll(ctx, net, patterns, []contention.Model{model}, func(k, _ int, err error) error {
		return fmt.Errorf("schedule: %s %s, round #%d of %d: %w", s.Op, s.Algorithm, which[k]+1, len(s.Rounds), err)
	})
	if err != nil {
		return nil, err
	}
	res := &Result{Rounds: make([]float64, len(s.Rounds)), Algorithm: s.Algorithm, Rule: s.Rule}
	for k, p := range preds {
		res.Rounds[which[k]] = spread.RoundTime(p[0].Times)
	}
	for _, t := range res.Rounds {
		res.Seconds += t
	}
	return res, nil
}
