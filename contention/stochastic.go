package contention

import (
	"context"
	"math/rand/v2"

	"gonum.org/v1/gonum/stat/distuv"
)

// stochastic: TCP does not split a bottleneck evenly. Each transfer draws a weight
// w = exp(σ·Z), Z standard normal, and the rates are weighted max-min (progressive filling in
// which transfer i's rate rises as w_i·λ). A transfer's predicted time is its mean completion
// time over seeded samples of the weights. With unequal shares the first finisher gets more and
// the last one ends when the bottleneck has carried everything, so the mean completion time
// falls below the fluid fair-share time, as measured transfers do where several share a
// bottleneck.
//
// Parameters (LearnedParams): Spread (σ), fitted on the fairness experiments' order
// statistics (Learned.OrderStatistics); Samples (DefaultSamples when 0); the fitted capacities.
//
// The samples are a Latin hypercube drawn from a PCG with a fixed seed, so the same pattern
// always gets the same weights: the predictions are deterministic, and a parameter fit sees a
// smooth objective (common random numbers).
//
// Source: commcal's own model; fitted by estimate.FitLearned.
var Stochastic = Learned{"stochastic", LearnedVariant{Stochastic: true}}

// DefaultSamples is the number of weight samples when LearnedParams.Samples is 0: 64 samples
// (a Latin hypercube) keep the sampling error of an expected time below 1% at σ = 0.3 on
// the fairness patterns, and of an order statistic below 2.5% (TestStochasticSamplingError).
const DefaultSamples = 64

// weightDeviates returns, per flow, the standard normal deviates of its share weights in each
// of the samples: a Latin hypercube, transfer i's deviates one from each of the samples'
// equal-probability strata in a seeded random order, so that every transfer's weights cover
// the distribution evenly whatever the number of samples. It stops when ctx is done (stopped),
// checked every deviatesCheck flows: at 64 samples, 10⁶ flows take seconds.
func weightDeviates(ctx context.Context, flows, samples int) ([][]float64, error) {
	z := make([][]float64, flows)
	rng := rand.New(rand.NewPCG(uint64(samples), 0x636f6d6d63616c))
	for i := range z {
		if i%deviatesCheck == 0 {
			if err := stopped(ctx); err != nil {
				return nil, err
			}
		}
		z[i] = make([]float64, samples)
		for k, s := range rng.Perm(samples) {
			z[i][k] = distuv.UnitNormal.Quantile((float64(s) + rng.Float64()) / float64(samples))
		}
	}
	return z, nil
}

// deviatesCheck is how many flows weightDeviates draws between two looks at its context: a few
// milliseconds' worth at 64 samples.
const deviatesCheck = 1024
