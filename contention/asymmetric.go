package contention

import (
	"container/heap"
	"math"
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
//     relative tolerance of 1e-9 (eqTol): the values are sums and ratios of capacities.
//   - When several resources tie for k̄ and some are saturated and some not, the saturated
//     ones decide the rate (the most restrictive of them, i.e. the smallest of their largest
//     rates) and the transfer is not queued again; the unsaturated ones are emptied all the
//     same. Only when none is saturated is the transfer queued again with its new k̄
//     (lines 19–20), which happens at most once per resource of its path.
//   - Ties in the queue's key are broken by input order; for the with-flow rule the order
//     does not change any rate, since every transfer on a resource gets the same share.
//   - The ceiling (β_E in the paper, 940 Mbit/s on 1 Gb Ethernet) bounds every with-flow
//     share, as in inverseBandwidth; a contra-flow rate is a rate some other transfer got,
//     so it is bounded too.
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
}

// item is one transfer in the priority queue.
type item struct {
	j       int // position in a.ids
	k, kbar float64
}

type queue []item

func (q queue) Len() int { return len(q) }
func (q queue) Less(x, y int) bool {
	a, b := q[x], q[y]
	ma, mb := math.Max(a.k, a.kbar), math.Max(b.k, b.kbar)
	switch {
	case !approxEq(ma, mb):
		return ma > mb
	case !approxEq(a.k, b.k):
		return a.k > b.k
	case !approxEq(a.kbar, b.kbar):
		return a.kbar > b.kbar
	}
	return a.j < b.j
}
func (q queue) Swap(x, y int) { q[x], q[y] = q[y], q[x] }
func (q *queue) Push(v any)   { *q = append(*q, v.(item)) }
func (q *queue) Pop() any {
	old := *q
	v := old[len(old)-1]
	*q = old[:len(old)-1]
	return v
}

// rev is the reverse direction of a resource.
func (s *alg1) rev(r int) int { return s.a.net.Cluster.Resources()[r].Reverse }

// factors returns k and k̄ of active transfer j.
func (s *alg1) factors(j int, mode contraMode) (k, kbar float64) {
	for i, r := range s.a.paths[s.a.ids[j]] {
		k = math.Max(k, float64(s.count[r])/s.capacity[r])
		if mode != contraNone && s.disabled[j]&(1<<i) == 0 {
			rv := s.rev(r)
			kbar = math.Max(kbar, float64(s.count[rv])/s.capacity[rv])
		}
	}
	return k, kbar
}

// share is what the with-flow rule gives on resource r: the unused capacity split over the
// transfers there that have no rate yet, at most the ceiling.
func (s *alg1) share(r int) float64 {
	return math.Min(s.ceiling, math.Max(s.capacity[r]-s.used[r], 0)/float64(s.uncalc[r]))
}

// withFlow is the with-flow rule: the smallest share over the resources where k is reached.
func (s *alg1) withFlow(j int, k float64) float64 {
	rate := math.Inf(1)
	for _, r := range s.a.paths[s.a.ids[j]] {
		if approxEq(float64(s.count[r])/s.capacity[r], k) {
			rate = math.Min(rate, s.share(r))
		}
	}
	return rate
}

// contraFlow is the contra-flow rule. It returns the rate and true when some tied resource is
// saturated; otherwise it empties the tied contra-flow sets and returns false.
func (s *alg1) contraFlow(j int, kbar float64) (float64, bool) {
	rate, saturated := math.Inf(1), false
	for i, r := range s.a.paths[s.a.ids[j]] {
		if s.disabled[j]&(1<<i) != 0 {
			continue
		}
		rv := s.rev(r)
		if !approxEq(float64(s.count[rv])/s.capacity[rv], kbar) {
			continue
		}
		if s.uncalc[rv] < s.count[rv] && approxEq(s.used[rv], s.capacity[rv]) {
			rate, saturated = math.Min(rate, s.maxRate[rv]), true
		} else {
			s.disabled[j] |= 1 << i
		}
	}
	return rate, saturated
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
		used: make([]float64, nr), maxRate: make([]float64, nr), rate: make([]float64, len(a.ids)), disabled: make([]uint64, len(a.ids))}
	for _, id := range a.ids {
		for _, r := range a.paths[id] {
			s.count[r]++
			s.uncalc[r]++
		}
	}
	q := make(queue, len(a.ids))
	for j := range a.ids {
		k, kbar := s.factors(j, mode)
		q[j] = item{j: j, k: k, kbar: kbar}
	}
	heap.Init(&q)
	for q.Len() > 0 {
		it := heap.Pop(&q).(item)
		if geq(it.k, it.kbar) {
			s.give(it.j, s.withFlow(it.j, it.k))
			continue
		}
		rc, ok := s.contraFlow(it.j, it.kbar)
		if !ok {
			it.k, it.kbar = s.factors(it.j, mode)
			heap.Push(&q, it)
			continue
		}
		if mode == contraBlend {
			rf := s.withFlow(it.j, it.k)
			rc = rf - phi*math.Max(rf-rc, 0)
		}
		s.give(it.j, rc)
	}
	return s.rate
}
