package contention

import "context"

// AsymmetricFitted is Asymmetric with the contra-flow rule weighted by the network's
// ContraFactor φ, fitted on the cluster's bidirectional experiments: a transfer whose
// bottleneck is contra-flow gets r_fair − φ·(r_fair − r_contra), where r_fair is what the
// with-flow rule would give it and r_contra what the contra-flow rule gives. φ = 1 is the
// reference model and φ = 0 the fair one. Real Linux TCP sits between the two.
type AsymmetricFitted struct{}

// Name implements Model.
func (AsymmetricFitted) Name() string { return "asymmetric-fitted" }

// Predict implements Model.
func (m AsymmetricFitted) Predict(ctx context.Context, net *Network, flows []Flow) (*Prediction, error) {
	return predictSteps(ctx, m, net, flows, nil)
}

func (AsymmetricFitted) rule(net *Network) (bool, func(*engine) rateRule) {
	return alg1Rule(contraBlend, min(max(net.ContraFactor, 0), 1))
}
