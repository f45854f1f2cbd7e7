// Package contention predicts the completion times of concurrent transfers on a cluster: the
// contention models, each a named, deterministic variant behind one interface (Model), listed
// in one registry (registry.go) that every other package asks.
//
// All transfers of a pattern start together. The rate-based models run the step loop of
// Algorithm 2 of Zhu et al. (CCPE 2014, §6.2): compute every active transfer's rate, advance
// to the earliest completion, remove the finished transfers, recompute. They differ in how
// rates are shared. One file per model:
//
//   - asymmetric.go: Algorithm 1 of the same paper, bottleneck-driven, with the with-flow
//     congestion factor k and the contra-flow factor k̄ taken per directed resource of a
//     transfer's path (NIC out, backbone or uplinks, NIC in), so that it applies to any tree
//     of racks under a core, not only to two racks.
//   - asymmetric_fitted.go: the same, with the contra-flow rule weighted by a factor φ fitted
//     on the cluster's bidirectional experiments (φ = 1 is asymmetric, φ = 0 is fair).
//   - fair.go: Algorithm 1 without the asymmetric property (the papers' fairness-only baseline).
//   - maxmin.go: exact max-min fair sharing by progressive filling, as flow-level simulators do.
//   - penalty.go: Martinasso and Méhaut's sequence of linear models (Euro-Par 2011), with the
//     closed-form penalty rules (a), (b), (c) of their equation (4) on the whole cluster seen
//     as one switch; penaltytable.go: the same with back-solved penalties.
//   - hockney.go: no contention at all, T = α + β·m per path class.
//   - the models that learn the network (learned.go): stochastic.go, surface.go, duplex.go,
//     ackpath.go and ackpath_alpha.go, with their parameters in learned_params.go.
//
// The solvers are apart from the models: the step loop (steps.go), Algorithm 1's rate rule
// (algorithm1.go), max-min's progressive filling (fill.go), the learned models' weighted fill
// (wfill.go) and α-fair sharing (alphafair.go), and the heap they share (heap.go). The step
// loop is one engine for all of them: the transfers of one source–destination pair form a
// class that every rule gives one rate, so a step costs O(active classes + resources) however
// many transfers there are, and the bookkeeping (counts per resource, active classes) is
// updated from the transfers that finish rather than rebuilt. The results are those of the
// straightforward implementation kept in reference_test.go, to 1e-9 relative
// (equality_test.go).
//
// Interpretations of the papers are documented where they are made (asymmetric.go,
// algorithm1.go, penalty.go) and in docs/models.md.
package contention
