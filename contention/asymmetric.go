package contention

import (
	"container/heap"
	"math"
	"slices"
)

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
func (Asymmetric) Predict(net *Network, flows []Flow) (*Prediction, error) {
	return stepLoop(net, flows, func(a *active) ([]float64, error) { return bottleneckRates(a, contraFull, 1), nil })
}

// AsymmetricFitted is Asymmetric with the contra-flow rule weighted by the network's
// ContraFactor φ, fitted on the cluster's bidirectional experiments: a transfer whose
// bottleneck is contra-flow gets r_fair − φ·(r_fair − r_contra), where r_fair is what the
// with-flow rule would give it and r_contra what the contra-flow rule gives. φ = 1 is the
// reference model and φ = 0 the fair one. Real Linux TCP sits between the two.
type AsymmetricFitted struct{}

// Name implements Model.
func (AsymmetricFitted) Name() string { return "asymmetric-fitted" }

// Predict implements Model.
func (AsymmetricFitted) Predict(net *Network, flows []Flow) (*Prediction, error) {
	phi := math.Min(math.Max(net.ContraFactor, 0), 1)
	return stepLoop(net, flows, func(a *active) ([]float64, error) { return bottleneckRates(a, contraBlend, phi), nil })
}

// Fair is Algorithm 1 without the asymmetric property: every transfer is given its with-flow
// share, so the two directions of a link are shared independently (full-duplex fairness, the
// "fairness only" baseline of the papers).
type Fair struct{}

// Name implements Model.
func (Fair) Name() string { return "fair" }

// Predict implements Model.
func (Fair) Predict(net *Network, flows []Flow) (*Prediction, error) {
	return stepLoop(net, flows, func(a *active) ([]float64, error) { return bottleneckRates(a, contraNone, 0), nil })
}

// eqTol is the relative tolerance of the equality tests of Algorithm 1.
const eqTol = 1e-9

func approxEq(a, b float64) bool { return math.Abs(a-b) <= eqTol*math.Max(math.Abs(a), math.Abs(b)) }

// geq is a ≥ b within eqTol.
func geq(a, b float64) bool { return a >= b || approxEq(a, b) }

// contraMode says how a contra-flow bottleneck is treated.
type contraMode int

const (
	contraFull  contraMode = iota // the paper's rule
	contraBlend                   // asymmetric-fitted: weighted by φ
	contraNone                    // fair: ignored
)

// alg1 holds Algorithm 1's bookkeeping for one step.
type alg1 struct {
	a        *active
	capacity []float64
	ceiling  float64
	count    []int     // active transfers per resource, |S| or |S̄|
	uncalc   []int     // of those, transfers without a rate yet (E'')
	used     []float64 // sum of the rates given on the resource (E')
	maxRate  []float64 // largest rate given on the resource
	rate     []float64 // per active transfer; 0 until given
	disabled []uint64  // per active transfer: path positions whose contra-flow set was emptied
	reverse  []int     // reverse direction of each resource
	kr       []float64 // β·|S| of each resource: count/capacity
}

// item is one transfer in the priority queue, with its key ⟨max(k, k̄), k, k̄⟩ quantised so
// that the queue compares integers.
type item struct {
	j       int // position in a.ids
	k, kbar float64
	key     [3]uint64
}

// newItem computes an item's quantised key.
func newItem(j int, k, kbar float64) item {
	return item{j: j, k: k, kbar: kbar, key: [3]uint64{quantize(math.Max(k, kbar)), quantize(k), quantize(kbar)}}
}

// quantize maps a non-negative float to an integer that orders like it, dropping the lowest 22
// bits of the mantissa: values that differ by less than about 2⁻³⁰ relative (a few ulps of
// sums of capacities) get the same integer, far inside eqTol.
func quantize(v float64) uint64 {
	b := math.Float64bits(v)
	return (b + 1<<21) >> 22
}

// cand is a transfer of a tie group with the rate it would get.
type cand struct {
	it   item
	rate float64
}

// lessCand orders a tie group by candidate rate, then input order.
func lessCand(a, b cand) bool {
	if !approxEq(a.rate, b.rate) {
		return a.rate < b.rate
	}
	return a.it.j < b.it.j
}

// compareItems orders by descending key, then input order.
func compareItems(a, b item) int {
	for i := range a.key {
		if a.key[i] != b.key[i] {
			if a.key[i] > b.key[i] {
				return -1
			}
			return 1
		}
	}
	return a.j - b.j
}

// rev is the reverse direction of a resource.
func (s *alg1) rev(r int) int { return s.reverse[r] }

// factors returns k and k̄ of active transfer j.
func (s *alg1) factors(j int, mode contraMode) (k, kbar float64) {
	for i, r := range s.a.paths[s.a.ids[j]] {
		k = math.Max(k, s.kr[r])
		if mode != contraNone && s.disabled[j]&(1<<i) == 0 {
			kbar = math.Max(kbar, s.kr[s.reverse[r]])
		}
	}
	return k, kbar
}

// share is what the with-flow rule gives on resource r: the unused capacity split over the
// transfers there that have no rate yet, at most the ceiling.
func (s *alg1) share(r int) float64 {
	return math.Min(s.ceiling, math.Max(s.capacity[r]-s.used[r], 0)/float64(s.uncalc[r]))
}

// withFlow is the with-flow rule: the smallest share over the resources where k is reached,
// capped by the share on every resource of the path — together, the smallest share on the
// path, which is what one pass computes.
func (s *alg1) withFlow(j int, _ float64) float64 {
	rate := math.Inf(1)
	for _, r := range s.a.paths[s.a.ids[j]] {
		rate = math.Min(rate, s.share(r))
	}
	return rate
}

// capped limits a rate to the transfer's share on every resource of its path.
func (s *alg1) capped(j int, rate float64) float64 {
	for _, r := range s.a.paths[s.a.ids[j]] {
		rate = math.Min(rate, s.share(r))
	}
	return rate
}

// contraFlow is the contra-flow rule. It returns the rate and true when some resource where
// k̄ is reached is saturated in the reverse direction; unsaturated ones are listed in the
// returned mask of path positions, for disabling.
func (s *alg1) contraFlow(j int, kbar float64) (rate float64, saturated bool, unsat uint64) {
	rate = math.Inf(1)
	for i, r := range s.a.paths[s.a.ids[j]] {
		if s.disabled[j]&(1<<i) != 0 {
			continue
		}
		rv := s.rev(r)
		if !approxEq(s.kr[rv], kbar) {
			continue
		}
		if s.uncalc[rv] < s.count[rv] && approxEq(s.used[rv], s.capacity[rv]) {
			rate, saturated = math.Min(rate, s.maxRate[rv]), true
		} else {
			unsat |= 1 << i
		}
	}
	return s.capped(j, rate), saturated, unsat
}

// candidate is the rate transfer j would be given now: ok is false when its contra-flow
// bottleneck is not saturated, so that it has to be queued again.
func (s *alg1) candidate(it item, mode contraMode, phi float64) (rate float64, ok bool) {
	if geq(it.k, it.kbar) {
		return s.withFlow(it.j, it.k), true
	}
	rc, sat, _ := s.contraFlow(it.j, it.kbar)
	if !sat {
		return 0, false
	}
	if mode == contraBlend {
		rf := s.withFlow(it.j, it.k)
		rc = rf - phi*math.Max(rf-rc, 0)
	}
	return rc, true
}

func (s *alg1) give(j int, rate float64) {
	s.rate[j] = rate
	for _, r := range s.a.paths[s.a.ids[j]] {
		s.used[r] += rate
		s.uncalc[r]--
		s.maxRate[r] = math.Max(s.maxRate[r], rate)
	}
}

// bottleneckRates runs Algorithm 1 on the active transfers.
func bottleneckRates(a *active, mode contraMode, phi float64) []float64 {
	nr := len(a.net.Capacity)
	s := &alg1{a: a, capacity: a.net.Capacity, ceiling: a.net.Ceiling, count: make([]int, nr), uncalc: make([]int, nr),
		used: make([]float64, nr), maxRate: make([]float64, nr), rate: make([]float64, len(a.ids)), disabled: make([]uint64, len(a.ids)),
		reverse: a.net.reverse(), kr: make([]float64, nr)}
	for _, id := range a.ids {
		for _, r := range a.paths[id] {
			s.count[r]++
			s.uncalc[r]++
		}
	}
	for r, c := range s.count {
		if c > 0 {
			s.kr[r] = float64(c) / s.capacity[r]
		}
	}
	// The queue: every transfer sorted once by key, plus a heap for the transfers queued
	// again after their contra-flow sets were emptied.
	items := make([]item, len(a.ids))
	for j := range a.ids {
		k, kbar := s.factors(j, mode)
		items[j] = newItem(j, k, kbar)
	}
	slices.SortFunc(items, compareItems)
	again := minHeap[item]{less: func(a, b item) bool { return compareItems(a, b) < 0 }}
	next := 0
	peek := func() (item, bool) {
		switch {
		case next < len(items) && (again.Len() == 0 || compareItems(items[next], again.top()) <= 0):
			return items[next], true
		case again.Len() > 0:
			return again.top(), true
		}
		return item{}, false
	}
	pop := func() {
		if next < len(items) && (again.Len() == 0 || compareItems(items[next], again.top()) <= 0) {
			next++
		} else {
			again.pop()
		}
	}
	group := minHeap[cand]{less: lessCand}
	var tied []item
	for {
		top, ok := peek()
		if !ok {
			break
		}
		// The transfers whose keys tie with the most congested one form a group, served by
		// increasing candidate rate. Candidates only grow as rates are given (each transfer
		// gets at most its share, which leaves the others' shares no smaller), so a lazily
		// re-evaluated heap finds the smallest.
		tied = tied[:0]
		for {
			it, ok := peek()
			if !ok || it.key != top.key {
				break
			}
			tied = append(tied, it)
			pop()
		}
		if len(tied) == 1 { // the common case: no tie, no group to order
			it := tied[0]
			if rate, ok := s.candidate(it, mode, phi); ok {
				s.give(it.j, rate)
				continue
			}
		}
		group.items = group.items[:0]
		for _, it := range tied {
			rate, ok := s.candidate(it, mode, phi)
			if !ok {
				_, _, unsat := s.contraFlow(it.j, it.kbar)
				s.disabled[it.j] |= unsat
				k, kbar := s.factors(it.j, mode)
				again.push(newItem(it.j, k, kbar))
				continue
			}
			group.items = append(group.items, cand{it: it, rate: rate})
		}
		heap.Init(&group)
		for group.Len() > 0 {
			c := group.pop()
			rate, _ := s.candidate(c.it, mode, phi)
			if group.Len() > 0 && rate > group.top().rate && !approxEq(rate, group.top().rate) {
				c.rate = rate
				group.push(c)
				continue
			}
			s.give(c.it.j, rate)
		}
	}
	return s.rate
}
