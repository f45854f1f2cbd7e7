package contention

import "context"

// MaxMin is exact max-min fair sharing by progressive filling: every transfer's rate rises at
// the same pace until a resource fills (its transfers freeze at that level) or the ceiling is
// reached; the others go on rising. The result is the allocation in which no rate can grow
// without lowering a smaller or equal one. It is what flow-level simulators compute; it knows
// nothing of TCP's asymmetric behaviour.
type MaxMin struct{}

// Name implements Model.
func (MaxMin) Name() string { return "maxmin" }

// Predict implements Model.
func (m MaxMin) Predict(ctx context.Context, net *Network, flows []Flow) (*Prediction, error) {
	return predictSteps(ctx, m, net, flows, nil)
}

func (MaxMin) rule(*Network) (bool, func(*engine) rateRule) {
	return false, func(e *engine) rateRule { return newFill(e) }
}
