package contention

// ParamSet names the calibrated parameters a model reads, which estimate fits: the type of a
// model's parameters. Every registered model's set has a fitter in estimate (its test checks).
type ParamSet string

// The parameter sets.
const (
	// ParamsNetwork are the network's capacities and per-flow ceiling (Params.NICBps,
	// BackboneBps, CeilingBps), from the fairness experiments.
	ParamsNetwork ParamSet = "network"
	// ParamsContra is φ of asymmetric-fitted (Params.ContraFactor), from the bidirectional
	// experiments, beside the network's.
	ParamsContra ParamSet = "contra-factor"
	// ParamsPenalty is the penalty models' α (Params.PenaltyAlpha).
	ParamsPenalty ParamSet = "penalty"
	// ParamsPenaltyTable is the back-solved penalty table, from the static-synchronous graphs.
	ParamsPenaltyTable ParamSet = "penalty-table"
	// ParamsHockney are Hockney's α and β per path class (Params.LatencyS,
	// InverseBandwidth), from the point-to-point sweeps.
	ParamsHockney ParamSet = "hockney"
	// ParamsLearned is the model's own LearnedParams (Params.Learned[name]), fitted through
	// the model on the calibration experiments.
	ParamsLearned ParamSet = "learned"
)

// Spec is one registered model: its name, the predictor, the parameters it reads, what it
// computes and where it comes from.
type Spec struct {
	Model    Model
	Params   ParamSet
	Doc      string // one sentence: what the model computes
	Citation string // the paper (and section) it implements, or "commcal" for its own models
}

// Name is the model's name, as reports, flags and calibration files spell it.
func (s Spec) Name() string { return s.Model.Name() }

// registry is every model, in the order reports list them: the papers' models first, then
// the learned ones. Adding a model is one file defining it and one line here.
var registry = []Spec{
	{Asymmetric{}, ParamsNetwork, "Algorithm 1 of the asymmetric model inside the step loop of Algorithm 2: bottleneck-driven rates with with-flow and contra-flow congestion factors",
		"Zhu et al., CCPE 2014, Algorithms 1 and 2"},
	{AsymmetricFitted{}, ParamsContra, "asymmetric with the contra-flow rule weighted by a fitted factor φ",
		"Zhu et al., CCPE 2014, Algorithms 1 and 2; φ fitted by commcal"},
	{Fair{}, ParamsNetwork, "Algorithm 1 without the asymmetric property: fair sharing of each bottleneck",
		"Zhu et al., CCPE 2014 (the fairness-only baseline)"},
	{MaxMin{}, ParamsNetwork, "exact max-min fair sharing by progressive filling, as flow-level simulators do",
		"Bertsekas and Gallager, Data Networks, §6.5"},
	{Penalty{}, ParamsPenalty, "a sequence of linear models with the closed-form penalty rules on the cluster seen as one switch",
		"Martinasso and Méhaut, Euro-Par 2011, eq. (4)"},
	{PenaltyTableModel{}, ParamsPenaltyTable, "the penalty model with back-solved penalties looked up by contention graph shape",
		"Martinasso and Méhaut, Euro-Par 2011, §3.3"},
	{Hockney{}, ParamsHockney, "no contention: α + β·m per path class",
		"Hockney, Parallel Computing 1994"},
	{Stochastic, ParamsLearned, "weighted max-min with log-normal share weights, the mean completion time over seeded samples",
		"commcal"},
	{SurfaceModel, ParamsLearned, "max-min on capacities scaled by a measured bidirectional surface F(with, contra)",
		"commcal, after the asymmetric property of Zhu et al., CCPE 2014, §4"},
	{Duplex, ParamsLearned, "max-min with a joint budget (2 − κ)·C for the two directions of each NIC",
		"commcal"},
	{AckPath, ParamsLearned, "weighted max-min slowed by the queues on each transfer's acknowledgement path, with ramp-up and take-up costs",
		"commcal"},
	{AckPathAlpha, ParamsLearned, "ackpath's factors under α-fair sharing, with duplex's joint budget where the exchanges and cycles show coupling",
		"commcal; α-fair utility of Mo and Walrand, IEEE/ACM ToN 2000"},
}

// Registry returns every registered model, in the order reports list them.
func Registry() []Spec {
	out := make([]Spec, len(registry))
	copy(out, registry)
	return out
}

// Models returns every registered model's predictor, in the order reports list them.
func Models() []Model {
	ms := make([]Model, len(registry))
	for i, s := range registry {
		ms[i] = s.Model
	}
	return ms
}

// Names lists every registered model's name, in the order reports list them.
func Names() []string {
	names := make([]string, len(registry))
	for i, s := range registry {
		names[i] = s.Name()
	}
	return names
}

// Lookup finds a registered model's spec by name.
func Lookup(name string) (Spec, bool) {
	for _, s := range registry {
		if s.Name() == name {
			return s, true
		}
	}
	return Spec{}, false
}

// ModelByName finds a registered model by name.
func ModelByName(name string) (Model, bool) {
	s, ok := Lookup(name)
	return s.Model, ok
}

// DefaultModel is the model reports put forward (validate's and run's marked line, the
// report's error histograms): the one that cross-validation over the calibration experiments
// of the development datasets (data/tcp) selects. It is chosen on calibration experiments
// only, never on the held-out ones (docs/accuracy.md).
const DefaultModel = "ackpath-alpha"
