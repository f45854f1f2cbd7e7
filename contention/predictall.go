package contention

import (
	"context"

	"github.com/commcal/commcal/internal/parallel"
)

// PredictAll predicts every pattern with every model, on all cores: out[k][j] is pattern k
// under models[j]. Each pattern has its own slot, so the result does not depend on the
// scheduling. wrap, when not nil, turns a model's error into one that says which pattern
// (k) and model (j) it came from; the error of the lowest pattern that failed is returned.
// When ctx is done, the predictions under way stop within a step and its error is returned
// unwrapped: an interruption is no pattern's fault.
func PredictAll(ctx context.Context, net *Network, patterns [][]Flow, models []Model, wrap func(k, j int, err error) error) ([][]*Prediction, error) {
	out := make([][]*Prediction, len(patterns))
	err := parallel.For(ctx, len(patterns), 0, func(k int) error {
		out[k] = make([]*Prediction, len(models))
		for j, m := range models {
			p, err := m.Predict(ctx, net, patterns[k])
			if err != nil {
				if ctxErr := ctx.Err(); ctxErr != nil {
					return ctxErr
				}
				if wrap != nil {
					err = wrap(k, j, err)
				}
				return err
			}
			out[k][j] = p
		}
		return nil
	})
	return out, err
}
