package contention

import (
	"context"
	"math"
	"math/rand/v2"
	"os"
	"testing"
)

// boundParams are the parameter sets ackpath-alpha is held to its reference at: the
// benchmarks' (α = 0.67), the development fit of TestAlphaFairKinkConverges (ramp-up, a lone
// queue's c₁, fitted capacities), and α at its bounds and at 1 with ackpath's factors.
func boundParams() []*LearnedParams {
	lone := 0.06699675828921088
	out := []*LearnedParams{fittedLearned[AckPathAlpha.Name()],
		{CeilingBps: 877e6, NICBps: 900e6, AckIn: 0.43, AckOut: 0.43, AckFull: 0.24, AckLone: &lone, AckRamp: 0.0139, AckRampMax: 8, Alpha: 0.817}}
	for _, alpha := range []float64{MinAlpha, 1, MaxAlpha} {
		out = append(out, &LearnedParams{AckIn: 0.61, AckOut: 0.48, AckFull: 0.1, Alpha: alpha})
	}
	return out
}

// alphaDiff predicts flows on net with ackpath-alpha and with its reference and returns the
// largest relative difference of a completion time and of a first-step rate.
func alphaDiff(t *testing.T, net *Network, flows []Flow) (times, rates float64, steps, refSteps int) {
	t.Helper()
	got, err := AckPathAlpha.Predict(context.Background(), net, flows)
	if err != nil {
		t.Fatal(err)
	}
	want, err := refPredictAlpha(net, flows)
	if err != nil {
		t.Fatal(err)
	}
	for i := range flows {
		times = max(times, math.Abs(got.Times[i]-want.Times[i])/want.Times[i])
		rates = max(rates, math.Abs(got.FirstRates[i]-want.FirstRates[i])/want.FirstRates[i])
	}
	return times, rates, got.Steps, want.Steps
}

func TestAlphaWithinBound(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	worstT, worstR := 0.0, 0.0
	for k, lp := range boundParams() {
		for _, backbone := range []float64{940e6, 470e6, 10e9} {
			net := ackCluster(t, backbone, nil)
			net.Learned = map[string]*LearnedParams{AckPathAlpha.Name(): lp}
			patterns := [][]Flow{tableIFlows}
			for range 40 {
				patterns = append(patterns, randomTableIFlows(rng, 2+rng.IntN(30), 20))
			}
			for _, flows := range patterns {
				dt, dr, _, _ := alphaDiff(t, net, flows)
				worstT, worstR = max(worstT, dt), max(worstR, dr)
				if dt > 1e-9 || dr > 1e-9 {
					t.Errorf("params %d, backbone %g, %v: times differ by %.3g, first rates by %.3g", k, backbone, flows, dt, dr)
				}
			}
		}
	}
	t.Logf("largest relative difference: times %.3g, first rates %.3g", worstT, worstR)
}

func TestAlphaWithinBoundBenchPattern(t *testing.T) {
	if os.Getenv("COMMCAL_SLOW_TESTS") == "" {
		t.Skip("COMMCAL_SLOW_TESTS not set: the reference takes a quarter of a minute on this pattern")
	}
	net, flows := benchPattern()
	net.Learned = fittedLearned
	dt, dr, steps, refSteps := alphaDiff(t, net, flows)
	t.Logf("largest relative difference: times %.3g, first rates %.3g; %d steps, reference %d", dt, dr, steps, refSteps)
}
