package contention

import "context"

// Fair is Algorithm 1 without the asymmetric property: every transfer is given its with-flow
// share, so the two directions of a link are shared independently (full-duplex fairness, the
// "fairness only" baseline of the papers).
type Fair struct{}

// Name implements Model.
func (Fair) Name() string { return "fair" }

// Predict implements Model.
func (m Fair) Predict(ctx context.Context, net *Network, flows []Flow) (*Prediction, error) {
	return predictSteps(ctx, m, net, flows, nil)
}

func (Fair) rule(*Network) (bool, func(*engine) rateRule) { return alg1Rule(contraNone, 0) }
