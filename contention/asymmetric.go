package contention

import "context"

// Asymmetric is the reference model of Zhu et al. (CCPE 2014): Algorithm 1 for the rates
// inside Algorithm 2 for the steps.
//
// Algorithm 1, generalised from two racks to any tree. A transfer's path is a list of directed
// resources r₀…r_{n−1}. Its with-flow sets S[i] are the active transfers on r_i, its
// contra-flow sets S̄[i] those on the reverse direction of r_i (the other direction of the same
// full-duplex link), and β[i] = 1/capacity. The congestion factors are
// k = max_i β[i]·|S[i]| and k̄ = max_i β̄[i]·|S̄[i]| (equations 2 and 4). Transfers are taken
// from a priority queue in descending order of ⟨max(k, k̄), k, k̄⟩ (equation 7), then input
// order. For the transfer taken:
//
//   - k ≥ k̄ (with-flow bottleneck): on every resource where β[i]·|S[i]| = k, its share is
//     min(ceiling, (capacity − rates already given there) / transfers not yet given a rate
//     there); the transfer gets the smallest share (lines 7–10 and inverseBandwidth).
//   - k < k̄ (contra-flow bottleneck): on every resource where β̄[i]·|S̄[i]| = k̄, if the
//     contra-flow transfers already given a rate there fill the reverse direction's capacity,
//     the transfer gets the largest of their rates (line 17: the smallest inverse bandwidth);
//     otherwise that contra-flow set is emptied (line 19).
//
// Interpretations, where the paper is silent or ambiguous:
//
//   - Equality of congestion factors and the saturation test (lines 9, 13, 16) hold within a
//     relative tolerance of 1e-9 (eqTol): the values are sums and ratios of capacities. The
//     queue orders keys rounded to about 2⁻³⁰ relative (quantize), so that keys equal in
//     exact arithmetic tie.
//   - When several resources tie for k̄ and some are saturated and some not, the saturated
//     ones decide the rate (the most restrictive of them, i.e. the smallest of their largest
//     rates) and the transfer is not queued again; the unsaturated ones are emptied all the
//     same. Only when none is saturated is the transfer queued again with its new k̄
//     (lines 19–20), which happens at most once per resource of its path.
//   - No transfer is given more than its share of what is left on any resource of its path,
//     not only on the resources where k is reached (for either rule). The paper's
//     inverseBandwidth looks at the bottleneck resources only, and its contra-flow rule at
//     the reverse direction only; read literally, both can hand out more than a resource
//     carries (a NIC loaded to 110% on random patterns) and leave later transfers nothing.
//     On the paper's own examples the cap changes no number.
//   - Transfers whose keys tie are taken in increasing order of the rate they would get now
//     (the most constrained first, re-evaluated as rates are given), then input order. The
//     paper leaves ties open, and taking them in input order makes rates depend on how the
//     transfers are listed: a transfer sharing a NIC with one that is limited elsewhere gets
//     the NIC's leftover only if the limited one is served first.
//   - The ceiling (β_E in the paper, 940 Mbit/s on 1 Gb Ethernet) bounds every share, as in
//     inverseBandwidth.
type Asymmetric struct{}

// Name implements Model.
func (Asymmetric) Name() string { return "asymmetric" }

// Predict implements Model.
func (m Asymmetric) Predict(ctx context.Context, net *Network, flows []Flow) (*Prediction, error) {
	return predictSteps(ctx, m, net, flows, nil)
}

func (Asymmetric) rule(*Network) (bool, func(*engine) rateRule) { return alg1Rule(contraFull, 1) }
