package contention

import (
	"context"
	"math"
	"slices"
)

// The models that learn the network: max-min sharing corrected by what a cluster's own
// calibration experiments show real TCP to do and max-min not. Each is a Learned value, a
// combination of components (LearnedVariant) in one file of its own: stochastic.go (uneven
// shares of a bottleneck), surface.go (a measured bidirectional surface), duplex.go (a NIC's
// two directions sharing one budget), ackpath.go (acknowledgements queued behind other
// transfers' data) and ackpath_alpha.go (ackpath under α-fair sharing, the default model).
// Their parameters are one record per model (LearnedParams, learned_params.go), fitted through
// the model on the calibration experiments (estimate.FitLearned).
//
// Every variant runs Algorithm 2's step loop (steps.go) with the weighted fill (wfill.go; α-fair
// sharing, alphafair.go, for ackpath-alpha; max-min's incremental fill, fill.go, where the
// sharing is plain max-min) as its rate rule. With sampled weights
// (stochastic, σ > 0) each transfer is a class of its own (its weight is its own); the
// deterministic variants (σ = 0) run one sample on the engine's classes, a (source,
// destination) pair's transfers together, as max-min does.

// LearnedVariant is the components a learned model combines.
type LearnedVariant struct {
	Stochastic, Surface, Duplex, AckPath, AlphaFair bool
}

// Learned is one of the models that learn the network: a name and the components it combines.
type Learned struct {
	name string
	v    LearnedVariant
}

// Name implements Model.
func (m Learned) Name() string { return m.name }

// Variant is the components the model combines.
func (m Learned) Variant() LearnedVariant { return m.v }

// LearnedModels lists the registered learned models, in the registry's order.
func LearnedModels() []Learned {
	var out []Learned
	for _, s := range Registry() {
		if l, ok := s.Model.(Learned); ok {
			out = append(out, l)
		}
	}
	return out
}

// LearnedNames lists the registered learned models' names.
func LearnedNames() []string {
	ms := LearnedModels()
	names := make([]string, len(ms))
	for i, m := range ms {
		names[i] = m.Name()
	}
	return names
}

// Predict implements Model: the mean over the weight samples of each transfer's completion
// time (latencies included). Steps is the mean number of steps, rounded; FirstRates the mean
// first-step rates.
func (m Learned) Predict(ctx context.Context, net *Network, flows []Flow) (*Prediction, error) {
	return m.PredictWith(ctx, nil, net, flows)
}

// PredictWith is Predict keeping the pattern's set-up in scratch (if not nil) for the next
// prediction of the same flows, as a fit's evaluations do. It stops as Predict does when ctx
// is done.
func (m Learned) PredictWith(ctx context.Context, scratch *Scratch, net *Network, flows []Flow) (*Prediction, error) {
	out := &Prediction{Times: make([]float64, len(flows)), FirstRates: make([]float64, len(flows))}
	steps, n := 0, 0
	err := m.eachSample(ctx, scratch, net, flows, func(p *Prediction, samples int) {
		steps, n = steps+p.Steps, samples
		for i := range flows {
			out.Times[i] += p.Times[i] / float64(samples)
			out.FirstRates[i] += p.FirstRates[i] / float64(samples)
		}
	})
	if err != nil {
		return nil, err
	}
	if n > 0 {
		out.Steps = int(math.Round(float64(steps) / float64(n)))
	}
	return out, nil
}

// OrderStatistics returns the model's expected order statistics of a pattern's completion
// times: element j is the mean over the weight samples of the (j+1)-th smallest time. They
// are what the spread σ is fitted to on the fairness experiments, whose transfers are
// interchangeable: which one finishes first changes from repetition to repetition, so each
// transfer's mean hides the spread that the sorted times show. ctx and scratch are as
// PredictWith's.
func (m Learned) OrderStatistics(ctx context.Context, scratch *Scratch, net *Network, flows []Flow) ([]float64, error) {
	out := make([]float64, len(flows))
	err := m.eachSample(ctx, scratch, net, flows, func(p *Prediction, samples int) {
		slices.Sort(p.Times)
		for j, t := range p.Times {
			out[j] += t / float64(samples)
		}
	})
	return out, err
}

// eachSample runs the step loop once per weight sample and hands each prediction to use,
// with the number of samples; scratch, if not nil, keeps the pattern's set-up for the next
// call. It stops when ctx is done, within a step (engine.run).
func (m Learned) eachSample(ctx context.Context, scratch *Scratch, net *Network, flows []Flow, use func(p *Prediction, samples int)) error {
	lp := net.Learned[m.name]
	if lp == nil {
		lp = &LearnedParams{}
	}
	net = lp.network(net)
	samples, spread := 1, 0.0
	if m.v.Stochastic && lp.Spread > 0 {
		spread, samples = lp.Spread, lp.Samples
		if samples == 0 {
			samples = DefaultSamples
		}
	}
	var z [][]float64 // per flow, its weights' normal deviates (weightDeviates)
	if spread > 0 {
		var err error
		if z, err = weightDeviates(ctx, len(flows), samples); err != nil {
			return err
		}
	}
	// Sampled weights are a transfer's own: one class per transfer. Without them, every factor
	// depends on a transfer's path and the step's counts only, so the transfers of one
	// (source, destination) pair share a class, as under max-min.
	e, f, err := scratch.prepare(ctx, net, flows, m.v, lp, spread == 0)
	if err != nil {
		return err
	}
	var rule rateRule = f
	if f.plainShares() {
		rule = plainSharing{f}
	}
	var tu *takeUp // ackpath's costs in time: ramp-up and take-up
	if m.v.AckPath && lp.AckRamp > 0 {
		tu = newTakeUp(f, lp.AckRamp, e.rampCosts(lp.AckRamp, lp.AckRampMax))
		rule = tu
	}
	for s := range samples {
		if s > 0 {
			f.reset()
		}
		for c := range f.weight {
			f.weight[c] = 1
			if spread > 0 { // singleton classes: class c is transfer mem[c]
				f.weight[c] = math.Exp(spread * z[e.mem[c]][s])
			}
		}
		if tu != nil {
			tu.start()
		}
		p, err := e.run(ctx, rule)
		if err != nil {
			return err
		}
		if tu != nil {
			tu.addTo(p)
		}
		use(p, samples)
	}
	return nil
}
