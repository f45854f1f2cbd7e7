package contention

// The reference implementation: the step loop, Algorithm 1, max-min and the closed-form
// penalties as they were before the incremental rewrite (commit e240884), kept verbatim
// apart from the ref prefix of every name (resolve, which the properties tests use too, keeps
// its name). The equality tests (equality_test.go) hold the
// models to these results; nothing outside the tests uses them.

import (
	"container/heap"
	"context"
	"fmt"
	"math"
	"slices"
)

// referencePredict runs model name through the reference implementation.
func referencePredict(name string, net *Network, flows []Flow) (*Prediction, error) {
	switch name {
	case "asymmetric":
		return refStepLoop(net, flows, func(a *refActive) ([]float64, error) { return refBottleneckRates(a, refContraFull, 1), nil })
	case "asymmetric-fitted":
		phi := math.Min(math.Max(net.ContraFactor, 0), 1)
		return refStepLoop(net, flows, func(a *refActive) ([]float64, error) { return refBottleneckRates(a, refContraBlend, phi), nil })
	case "fair":
		return refStepLoop(net, flows, func(a *refActive) ([]float64, error) { return refBottleneckRates(a, refContraNone, 0), nil })
	case "maxmin":
		return refStepLoop(net, flows, func(a *refActive) ([]float64, error) { return refMaxMinRates(a), nil })
	case "penalty":
		return refPenalty(net, flows)
	case "penalty-table":
		if net.PenaltyTable == nil || len(net.PenaltyTable.Entries) == 0 {
			return refPenalty(net, flows)
		}
		return refPredictWithPenalties(net, flows, func(e []Edge) []float64 {
			rho, _ := refTablePenalties(net.PenaltyTable, net, e)
			return rho
		})
	case "hockney":
		return Hockney{}.Predict(context.Background(), net, flows)
	}
	panic("contention: no reference for model " + name)
}

// refPenalty is Penalty.Predict as it was.
func refPenalty(net *Network, flows []Flow) (*Prediction, error) {
	ix := refIndexEdges(len(flows), func(i int) (string, string) { return flows[i].Src, flows[i].Dst })
	var core refPenaltyCore
	var src, dst, pair []int
	return refPredictPenalties(net, flows, func(a *refActive) []float64 {
		src, dst, pair = src[:0], dst[:0], pair[:0]
		for _, id := range a.ids {
			src, dst, pair = append(src, ix.src[id]), append(dst, ix.dst[id]), append(pair, ix.pair[id])
		}
		return core.compute(src, dst, pair, ix.nodes, ix.pairs)
	})
}

// refPredictWithPenalties is PredictWithPenalties as it was.
func refPredictWithPenalties(net *Network, flows []Flow, fn func([]Edge) []float64) (*Prediction, error) {
	return refPredictPenalties(net, flows, func(a *refActive) []float64 {
		edges := make([]Edge, len(a.ids))
		for j, id := range a.ids {
			edges[j] = Edge{Src: a.flows[id].Src, Dst: a.flows[id].Dst}
		}
		return fn(edges)
	})
}

// refClosedFormPenalties is ClosedFormPenalties as it was.
func refClosedFormPenalties(edges []Edge) []float64 {
	ix := refIndexEdges(len(edges), func(i int) (string, string) { return edges[i].Src, edges[i].Dst })
	var c refPenaltyCore
	return c.compute(ix.src, ix.dst, ix.pair, ix.nodes, ix.pairs)
}

// refTablePenalties is PenaltyTable.Penalties as it was.
func refTablePenalties(t *PenaltyTable, net *Network, edges []Edge) ([]float64, int) {
	rho := refClosedFormPenalties(edges)
	hits := 0
	if t == nil || len(t.Entries) == 0 {
		return rho, 0
	}
	for _, comp := range Components(edges) {
		if len(comp) > t.largest() {
			continue
		}
		sub := make([]Edge, len(comp))
		for i, e := range comp {
			sub[i] = edges[e]
		}
		if r, ok := t.Lookup(Shape(net.Cluster, sub)); ok {
			for i, e := range comp {
				rho[e] = r[i]
			}
			hits += len(comp)
		}
	}
	return rho, hits
}

// refEqTol is the relative tolerance of the equality tests of Algorithm 1.
const refEqTol = 1e-9

func refApproxEq(a, b float64) bool {
	return math.Abs(a-b) <= refEqTol*math.Max(math.Abs(a), math.Abs(b))
}

// refGeq is a ≥ b within refEqTol.
func refGeq(a, b float64) bool { return a >= b || refApproxEq(a, b) }

// refContraMode says how a contra-flow bottleneck is treated.
type refContraMode int

const (
	refContraFull  refContraMode = iota // the paper's rule
	refContraBlend                      // asymmetric-fitted: weighted by φ
	refContraNone                       // fair: ignored
)

// refFinishTol is the relative tolerance of the step loop: a flow whose remaining time is within
// this fraction of the step's length finishes in that step. The models' rates are ratios of
// capacities and counts, so flows that finish together in exact arithmetic differ here by a
// few ulps; 1e-9 is far above that and far below any measurable time difference.
const refFinishTol = 1e-9

// resolve checks every flow and resolves its path. A flow the cluster cannot carry (a node it
// does not have, a transfer from a node to itself, a size that is not a positive finite number
// of bytes) is bad input (internal/badinput) naming the transfer by its index, source and
// destination; the caller that read the pattern from a file adds the file with
// badinput.Errorf(file, "%w", err).
func resolve(net *Network, flows []Flow) ([][]int, error) {
	paths := make([][]int, len(flows))
	for i, f := range flows {
		if err := checkFlow(net.Cluster, i, f); err != nil {
			return nil, err
		}
		p, err := net.Cluster.Path(f.Src, f.Dst)
		if err != nil { // checkFlow rules out every reason Path has to fail
			return nil, fmt.Errorf("contention: transfer %d (%q → %q): %w", i, f.Src, f.Dst, err)
		}
		paths[i] = p
	}
	return paths, nil
}

// refAddLatency adds the path class's α to every time, when the network has latencies.
func refAddLatency(net *Network, flows []Flow, p *Prediction) {
	if len(net.Latency) == 0 {
		return
	}
	for i, f := range flows {
		class, _ := net.Cluster.Class(f.Src, f.Dst)
		p.Times[i] += net.Latency[class]
	}
}

// refActive is the state of the step loop that rate functions see.
type refActive struct {
	net   *Network
	flows []Flow
	paths [][]int // resource IDs of each flow's path
	ids   []int   // indices (into flows) of the flows still transferring, ascending
}

// refRateFunc returns the rate, in bits per second, of each refActive flow (parallel to a.ids).
type refRateFunc func(a *refActive) ([]float64, error)

// refStepLoop is Algorithm 2 of Zhu et al. (CCPE 2014, §6.2): while transfers remain, compute
// the rates of the refActive ones, advance the clock to the earliest completion Δt =
// min(m·8/rate), subtract what each sent in Δt, and retire the transfers that are done.
func refStepLoop(net *Network, flows []Flow, rates refRateFunc) (*Prediction, error) {
	paths, err := resolve(net, flows)
	if err != nil {
		return nil, err
	}
	n := len(flows)
	left := make([]float64, n) // bytes still to send
	for i, f := range flows {
		left[i] = f.Bytes
	}
	p := &Prediction{Times: make([]float64, n)}
	a := &refActive{net: net, flows: flows, paths: paths, ids: make([]int, n)}
	for i := range a.ids {
		a.ids[i] = i
	}
	t := 0.0
	for len(a.ids) > 0 {
		r, err := rates(a)
		if err != nil {
			return nil, err
		}
		p.Steps++
		if p.FirstRates == nil {
			p.FirstRates = make([]float64, n)
			for j, id := range a.ids {
				p.FirstRates[id] = r[j]
			}
		}
		dt := math.Inf(1)
		for j, id := range a.ids {
			if !(r[j] > 0) || math.IsInf(r[j], 0) {
				return nil, fmt.Errorf("contention: transfer %d (%s→%s) got rate %g bit/s", id, flows[id].Src, flows[id].Dst, r[j])
			}
			dt = math.Min(dt, left[id]*8/r[j])
		}
		t += dt
		keep := a.ids[:0]
		for j, id := range a.ids {
			if left[id]*8/r[j] <= dt*(1+refFinishTol) {
				p.Times[id] = t
				continue
			}
			left[id] -= dt * r[j] / 8
			keep = append(keep, id)
		}
		a.ids = keep
	}
	refAddLatency(net, flows, p)
	return p, nil
}

// refMinHeap is a binary heap of T, smallest first under less, through container/heap. The
// algorithms that need a queue (the asymmetric model's re-queued transfers and tie groups,
// max-min's fill levels) share it.
type refMinHeap[T any] struct {
	items []T
	less  func(a, b T) bool
}

func (h *refMinHeap[T]) Len() int           { return len(h.items) }
func (h *refMinHeap[T]) Less(i, j int) bool { return h.less(h.items[i], h.items[j]) }
func (h *refMinHeap[T]) Swap(i, j int)      { h.items[i], h.items[j] = h.items[j], h.items[i] }
func (h *refMinHeap[T]) Push(v any)         { h.items = append(h.items, v.(T)) }
func (h *refMinHeap[T]) Pop() any {
	v := h.items[len(h.items)-1]
	h.items = h.items[:len(h.items)-1]
	return v
}

// push adds v; pop removes and returns the smallest; top is the smallest, left in place.
func (h *refMinHeap[T]) push(v T) { heap.Push(h, v) }
func (h *refMinHeap[T]) pop() T   { return heap.Pop(h).(T) }
func (h *refMinHeap[T]) top() T   { return h.items[0] }

// refAlg1 holds Algorithm 1's bookkeeping for one step.
type refAlg1 struct {
	a        *refActive
	capacity []float64
	ceiling  float64
	count    []int     // refActive transfers per resource, |S| or |S̄|
	uncalc   []int     // of those, transfers without a rate yet (E'')
	used     []float64 // sum of the rates given on the resource (E')
	maxRate  []float64 // largest rate given on the resource
	rate     []float64 // per refActive transfer; 0 until given
	disabled []uint64  // per refActive transfer: path positions whose contra-flow set was emptied
	reverse  []int     // reverse direction of each resource
	kr       []float64 // β·|S| of each resource: count/capacity
}

// refItem is one transfer in the priority queue, with its key ⟨max(k, k̄), k, k̄⟩ quantised so
// that the queue compares integers.
type refItem struct {
	j       int // position in a.ids
	k, kbar float64
	key     [3]uint64
}

// refNewItem computes an refItem's quantised key.
func refNewItem(j int, k, kbar float64) refItem {
	return refItem{j: j, k: k, kbar: kbar, key: [3]uint64{refQuantize(math.Max(k, kbar)), refQuantize(k), refQuantize(kbar)}}
}

// refQuantize maps a non-negative float to an integer that orders like it, dropping the lowest 22
// bits of the mantissa: values that differ by less than about 2⁻³⁰ relative (a few ulps of
// sums of capacities) get the same integer, far inside refEqTol.
func refQuantize(v float64) uint64 {
	b := math.Float64bits(v)
	return (b + 1<<21) >> 22
}

// refCand is a transfer of a tie group with the rate it would get.
type refCand struct {
	it   refItem
	rate float64
}

// refLessCand orders a tie group by candidate rate, then input order.
func refLessCand(a, b refCand) bool {
	if !refApproxEq(a.rate, b.rate) {
		return a.rate < b.rate
	}
	return a.it.j < b.it.j
}

// refCompareItems orders by descending key, then input order.
func refCompareItems(a, b refItem) int {
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
func (s *refAlg1) rev(r int) int { return s.reverse[r] }

// factors returns k and k̄ of refActive transfer j.
func (s *refAlg1) factors(j int, mode refContraMode) (k, kbar float64) {
	for i, r := range s.a.paths[s.a.ids[j]] {
		k = math.Max(k, s.kr[r])
		if mode != refContraNone && s.disabled[j]&(1<<i) == 0 {
			kbar = math.Max(kbar, s.kr[s.reverse[r]])
		}
	}
	return k, kbar
}

// share is what the with-flow rule gives on resource r: the unused capacity split over the
// transfers there that have no rate yet, at most the ceiling.
func (s *refAlg1) share(r int) float64 {
	return math.Min(s.ceiling, math.Max(s.capacity[r]-s.used[r], 0)/float64(s.uncalc[r]))
}

// withFlow is the with-flow rule: the smallest share over the resources where k is reached,
// capped by the share on every resource of the path — together, the smallest share on the
// path, which is what one pass computes.
func (s *refAlg1) withFlow(j int, _ float64) float64 {
	rate := math.Inf(1)
	for _, r := range s.a.paths[s.a.ids[j]] {
		rate = math.Min(rate, s.share(r))
	}
	return rate
}

// capped limits a rate to the transfer's share on every resource of its path.
func (s *refAlg1) capped(j int, rate float64) float64 {
	for _, r := range s.a.paths[s.a.ids[j]] {
		rate = math.Min(rate, s.share(r))
	}
	return rate
}

// contraFlow is the contra-flow rule. It returns the rate and true when some resource where
// k̄ is reached is saturated in the reverse direction; unsaturated ones are listed in the
// returned mask of path positions, for disabling.
func (s *refAlg1) contraFlow(j int, kbar float64) (rate float64, saturated bool, unsat uint64) {
	rate = math.Inf(1)
	for i, r := range s.a.paths[s.a.ids[j]] {
		if s.disabled[j]&(1<<i) != 0 {
			continue
		}
		rv := s.rev(r)
		if !refApproxEq(s.kr[rv], kbar) {
			continue
		}
		if s.uncalc[rv] < s.count[rv] && refApproxEq(s.used[rv], s.capacity[rv]) {
			rate, saturated = math.Min(rate, s.maxRate[rv]), true
		} else {
			unsat |= 1 << i
		}
	}
	return s.capped(j, rate), saturated, unsat
}

// candidate is the rate transfer j would be given now: ok is false when its contra-flow
// bottleneck is not saturated, so that it has to be queued again.
func (s *refAlg1) candidate(it refItem, mode refContraMode, phi float64) (rate float64, ok bool) {
	if refGeq(it.k, it.kbar) {
		return s.withFlow(it.j, it.k), true
	}
	rc, sat, _ := s.contraFlow(it.j, it.kbar)
	if !sat {
		return 0, false
	}
	if mode == refContraBlend {
		rf := s.withFlow(it.j, it.k)
		rc = rf - phi*math.Max(rf-rc, 0)
	}
	return rc, true
}

func (s *refAlg1) give(j int, rate float64) {
	s.rate[j] = rate
	for _, r := range s.a.paths[s.a.ids[j]] {
		s.used[r] += rate
		s.uncalc[r]--
		s.maxRate[r] = math.Max(s.maxRate[r], rate)
	}
}

// refBottleneckRates runs Algorithm 1 on the refActive transfers.
func refBottleneckRates(a *refActive, mode refContraMode, phi float64) []float64 {
	nr := len(a.net.Capacity)
	s := &refAlg1{a: a, capacity: a.net.Capacity, ceiling: a.net.Ceiling, count: make([]int, nr), uncalc: make([]int, nr),
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
	items := make([]refItem, len(a.ids))
	for j := range a.ids {
		k, kbar := s.factors(j, mode)
		items[j] = refNewItem(j, k, kbar)
	}
	slices.SortFunc(items, refCompareItems)
	again := refMinHeap[refItem]{less: func(a, b refItem) bool { return refCompareItems(a, b) < 0 }}
	next := 0
	peek := func() (refItem, bool) {
		switch {
		case next < len(items) && (again.Len() == 0 || refCompareItems(items[next], again.top()) <= 0):
			return items[next], true
		case again.Len() > 0:
			return again.top(), true
		}
		return refItem{}, false
	}
	pop := func() {
		if next < len(items) && (again.Len() == 0 || refCompareItems(items[next], again.top()) <= 0) {
			next++
		} else {
			again.pop()
		}
	}
	group := refMinHeap[refCand]{less: refLessCand}
	var tied []refItem
	for {
		top, ok := peek()
		if !ok {
			break
		}
		// The transfers whose keys tie with the most congested one form a group, served by
		// increasing candidate rate. Candidates only refGrow as rates are given (each transfer
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
				again.push(refNewItem(it.j, k, kbar))
				continue
			}
			group.items = append(group.items, refCand{it: it, rate: rate})
		}
		heap.Init(&group)
		for group.Len() > 0 {
			c := group.pop()
			rate, _ := s.candidate(c.it, mode, phi)
			if group.Len() > 0 && rate > group.top().rate && !refApproxEq(rate, group.top().rate) {
				c.rate = rate
				group.push(c)
				continue
			}
			s.give(c.it.j, rate)
		}
	}
	return s.rate
}

// refFillEvent is the level at which a resource fills, given its unfrozen transfers all rise
// together, as it was when queued: levels only rise as transfers freeze, so a queued level is
// a lower bound, refreshed when it reaches the top.
type refFillEvent struct {
	r     int
	level float64
}

// refLessFill orders fill events by level, then resource.
func refLessFill(a, b refFillEvent) bool {
	if a.level != b.level {
		return a.level < b.level
	}
	return a.r < b.r
}

// refMaxMinRates is progressive filling driven by a heap of fill levels: a resource with
// capacity c, frozen usage u and n unfrozen transfers fills at level (c − u)/n. The lowest
// level freezes that resource's transfers, which raises the fill levels of the other resources
// they cross. A freeze never lowers a level (a transfer freezes at the lowest level, at most
// its share anywhere), so queued levels are lower bounds: the top is refreshed and queued
// again when it is stale, instead of queueing every change. Cost O((F·L + R)·log R) at most.
func refMaxMinRates(a *refActive) []float64 {
	nr := len(a.net.Capacity)
	on := make([][]int, nr) // refActive positions per resource
	for j, id := range a.ids {
		for _, r := range a.paths[id] {
			on[r] = append(on[r], j)
		}
	}
	unfrozen := make([]int, nr)
	usage := make([]float64, nr)
	rate := make([]float64, len(a.ids))
	frozen := make([]bool, len(a.ids))
	level := func(r int) float64 { return math.Max(a.net.Capacity[r]-usage[r], 0) / float64(unfrozen[r]) }
	q := refMinHeap[refFillEvent]{less: refLessFill}
	for r := range on {
		unfrozen[r] = len(on[r])
		if unfrozen[r] > 0 {
			q.items = append(q.items, refFillEvent{r: r, level: level(r)})
		}
	}
	heap.Init(&q)
	left := len(a.ids)
	for left > 0 && q.Len() > 0 {
		ev := q.pop()
		if unfrozen[ev.r] == 0 {
			continue
		}
		if cur := level(ev.r); cur > ev.level {
			q.push(refFillEvent{r: ev.r, level: cur})
			continue
		}
		lv := math.Min(ev.level, a.net.Ceiling)
		for _, j := range on[ev.r] {
			if frozen[j] {
				continue
			}
			frozen[j], rate[j] = true, lv
			left--
			for _, r := range a.paths[a.ids[j]] {
				usage[r] += lv
				unfrozen[r]--
			}
		}
	}
	return rate
}

// refPredictPenalties is the sequence of linear models with a penalty function of the refActive
// transfers.
func refPredictPenalties(net *Network, flows []Flow, penalties func(a *refActive) []float64) (*Prediction, error) {
	alpha := net.Penalty.Alpha
	if alpha == 0 {
		alpha = 8 / net.Ceiling
	}
	return refStepLoop(net, flows, func(a *refActive) ([]float64, error) {
		rho := penalties(a)
		rates := make([]float64, len(rho))
		for j, p := range rho {
			if !(p >= 1) {
				f := a.flows[a.ids[j]]
				return nil, fmt.Errorf("contention: penalty %g for %s→%s, want at least 1", p, f.Src, f.Dst)
			}
			rates[j] = 8 / (alpha * p)
		}
		return rates, nil
	})
}

// refEdgeIndex numbers the nodes and the (source, destination) pairs of a list of edges.
type refEdgeIndex struct {
	src, dst, pair []int
	nodes, pairs   int
}

func refIndexEdges(n int, edge func(i int) (string, string)) refEdgeIndex {
	nodes := map[string]int{}
	pairs := map[[2]int]int{}
	id := func(name string) int {
		i, ok := nodes[name]
		if !ok {
			i = len(nodes)
			nodes[name] = i
		}
		return i
	}
	ix := refEdgeIndex{src: make([]int, n), dst: make([]int, n), pair: make([]int, n)}
	for i := 0; i < n; i++ {
		s, d := edge(i)
		ix.src[i], ix.dst[i] = id(s), id(d)
		k := [2]int{ix.src[i], ix.dst[i]}
		p, ok := pairs[k]
		if !ok {
			p = len(pairs)
			pairs[k] = p
		}
		ix.pair[i] = p
	}
	ix.nodes, ix.pairs = len(nodes), len(pairs)
	return ix
}

// refPenaltyCore computes closed-form penalties on integer node and pair indices, reusing its
// buffers from call to call. It works with per-node and per-pair aggregates so that the cost
// is linear in the number of edges:
//
//	conflict(e) = Σ over edges into d of 1/δ⁺(their source) − (edges s→d)/δ⁺(s)
//	rule (c) of s = δ⁺(s) + Σ over the edges e' leaving s of conflict(e')
//	rule (a) of e: δ⁻(d) ≤ δ⁺(s) and every source sending to d has δ⁺ = δ⁺(s)
type refPenaltyCore struct {
	out, in, minOut, maxOut, pairCnt []int
	inSum, sumConflict, worst        []float64
	anyC                             []bool
}

func refGrow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	s = s[:n]
	clear(s)
	return s
}

// compute returns the penalty of every edge i from node src[i] to node dst[i], pair[i]
// identifying the (src, dst) pair.
func (c *refPenaltyCore) compute(src, dst, pair []int, nNodes, nPairs int) []float64 {
	c.out, c.in = refGrow(c.out, nNodes), refGrow(c.in, nNodes)
	c.minOut, c.maxOut = refGrow(c.minOut, nNodes), refGrow(c.maxOut, nNodes)
	c.inSum, c.sumConflict, c.worst = refGrow(c.inSum, nNodes), refGrow(c.sumConflict, nNodes), refGrow(c.worst, nNodes)
	c.anyC = refGrow(c.anyC, nNodes)
	c.pairCnt = refGrow(c.pairCnt, nPairs)
	for i := range src {
		c.out[src[i]]++
		c.in[dst[i]]++
		c.pairCnt[pair[i]]++
	}
	for i := range src {
		s, d := src[i], dst[i]
		c.inSum[d] += 1 / float64(c.out[s])
		if c.minOut[d] == 0 || c.out[s] < c.minOut[d] {
			c.minOut[d] = c.out[s]
		}
		c.maxOut[d] = max(c.maxOut[d], c.out[s])
	}
	ruleA := func(i int) bool {
		s, d := src[i], dst[i]
		return c.in[d] <= c.out[s] && c.minOut[d] == c.out[s] && c.maxOut[d] == c.out[s]
	}
	// A one-edge source is taken by rule (b) when some other source sending to its
	// destination sends more than one communication.
	ruleB := func(i int) bool { return c.out[src[i]] == 1 && !ruleA(i) && c.maxOut[dst[i]] > 1 }
	for i := range src {
		s, d := src[i], dst[i]
		c.sumConflict[s] += c.inSum[d] - float64(c.pairCnt[pair[i]])/float64(c.out[s])
		if !ruleA(i) && !ruleB(i) {
			c.anyC[s] = true
		}
	}
	// ρ of a source's edges under (a) and (c): the max over its edges of δ⁺(s) + k.
	groupRho := func(s int) float64 {
		if c.anyC[s] {
			return float64(c.out[s]) + c.sumConflict[s]
		}
		return float64(c.out[s])
	}
	for i := range src {
		if c.out[src[i]] > 1 {
			c.worst[dst[i]] = math.Max(c.worst[dst[i]], groupRho(src[i]))
		}
	}
	rho := make([]float64, len(src))
	for i := range src {
		if ruleB(i) {
			rho[i] = 1 + 1/(c.worst[dst[i]]-1)
		} else {
			rho[i] = groupRho(src[i])
		}
	}
	return rho
}
