// Package contention predicts the completion times of concurrent transfers on a cluster: the
// contention models of design §5, each a named, deterministic variant behind one interface.
//
// All transfers of a pattern start together. The rate-based models run the step loop of
// Algorithm 2 of Zhu et al. (CCPE 2014, §6.2): compute every active transfer's rate, advance
// to the earliest completion, remove the finished transfers, recompute. They differ in how
// rates are shared:
//
//   - asymmetric: Algorithm 1 of the same paper, bottleneck-driven, with the with-flow
//     congestion factor k and the contra-flow factor k̄ taken per directed resource of a
//     transfer's path (NIC out, backbone or uplinks, NIC in), so that it applies to any tree
//     of racks under a core, not only to two racks.
//   - asymmetric-fitted: the same, with the contra-flow rule weighted by a factor φ fitted on
//     the cluster's bidirectional experiments (φ = 1 is asymmetric, φ = 0 is fair).
//   - fair: Algorithm 1 without the asymmetric property (the papers' fairness-only baseline).
//   - maxmin: exact max-min fair sharing by progressive filling, as flow-level simulators do.
//   - penalty: Martinasso and Méhaut's sequence of linear models (Euro-Par 2011), with the
//     closed-form penalty rules (a), (b), (c) of their equation (4) on the whole cluster seen
//     as one switch.
//   - hockney: no contention at all, T = α + β·m per path class.
//
// The step loop is one engine for all of them (steps.go): the transfers of one source–
// destination pair form a class that every rule gives one rate, so a step costs
// O(active classes + resources) however many transfers there are, and the bookkeeping (counts
// per resource, active classes) is updated from the transfers that finish rather than rebuilt.
// The results are those of the straightforward implementation kept in reference_test.go, to
// 1e-9 relative (equality_test.go).
//
// Interpretations of the papers are documented where they are made (asymmetric.go,
// penalty.go) and listed in the README.
package contention
