package contention

import (
	"context"
	"math"
	"slices"
)

// eqTol is the relative tolerance of the equality tests of Algorithm 1, and of the learned
// models' tests on their fill (saturation, bottleneck levels, the queues' demand).
const eqTol = 1e-9

func approxEq(a, b float64) bool { return math.Abs(a-b) <= eqTol*max(math.Abs(a), math.Abs(b)) }

// geq is a ≥ b within eqTol.
func geq(a, b float64) bool { return a >= b || approxEq(a, b) }

// contraMode says how a contra-flow bottleneck is treated.
type contraMode int

const (
	contraFull  contraMode = iota // the paper's rule
	contraBlend                   // asymmetric-fitted: weighted by φ
	contraNone                    // fair: ignored
)

// alg1Rule makes Algorithm 1's rule for a contra-flow mode. The members of a class (the
// transfers of one source–destination pair) get one rate, except under asymmetric-fitted
// with 0 < φ < 1: there a member's rate r_fair − φ·(r_fair − r_contra) leaves more of the
// with-flow share to the next member than it takes, so that parallel transfers get
// increasing rates, and each is served on its own (singleton classes), as in the reference.
func alg1Rule(mode contraMode, phi float64) (bool, func(*engine) rateRule) {
	shared := mode != contraBlend || phi == 0 || phi == 1
	return !shared, func(e *engine) rateRule { return newAlg1(e, mode, phi, shared) }
}

// alg1 is Algorithm 1 on the engine's classes, with buffers kept from step to step.
//
// Per resource (a1res), set from the engine's counts at the start of a step (O(resources)):
// kr = β·|S| = count/capacity, the congestion factor; rank, the position of quantize(kr) among
// the values of the step (0 for an idle resource, so that k̄ = 0 ranks lowest); and the state
// of the rates given so far this step: uncalc (transfers without a rate, E″), used (the sum of
// the rates given, E'), maxRate (the largest), and share, what the with-flow rule gives there
// now, min(ceiling, (capacity − used)/uncalc), recomputed for the resources of a class when it
// is given its rate, so that a candidate rate is a minimum of cached values.
//
// Per class (a1class, one compact record, since the queue visits classes in key order, not in
// class order): its route, k and k̄, its active transfers, disabled, the path positions whose
// contra-flow set was emptied this step, and what fillGroup needs.
//
// The queue holds each active class with its key ⟨max(k, k̄), k, k̄⟩ written as three ranks in
// one integer (they order exactly as the quantised floats they stand for), complemented so
// that ascending (key, class) is the reference's order: descending key, then class order. It
// is sorted once per step by a least-significant-digit radix sort on the three ranks (a
// counting pass each over at most resources+1 buckets, streaming, O(classes + resources)),
// and merged with a heap of the classes queued again after their contra-flow sets were
// emptied.
//
// Why a class of m transfers can be given one rate m times over: the reference queues its
// members as m items with equal keys, which form one tie group, served by increasing
// candidate rate. Giving a transfer its candidate x leaves every share on its path at least
// as large as before ((n·s − x)/(n − 1) ≥ s when x ≤ s), and leaves a share equal to x equal
// to x; the contra-flow rates of the group do not move, since a resource where k̄ is reached
// is crossed by no member of the group (its k is smaller). So a member whose candidate is x
// still has x after any other member with candidate x is served: equal candidates are served
// in any order with the same result, in exact arithmetic, and the m members of a class, whose
// candidates are always equal, get the same rate. The same argument gives the fast path of a
// tie group whose candidates are all equal within eqTol: they are served in queue order
// without a heap, as the reference's heap would order them, each at the candidate computed
// when the group was formed (the reference re-evaluates it and finds the same value in exact
// arithmetic; candidates that differ by less than eqTol without being equal would differ by
// less than that).
type alg1 struct {
	e       *engine
	mode    contraMode
	phi     float64
	shared  bool // members of a class share one rate (not singletons)
	ceiling float64

	res    []a1res
	cls    []a1class
	qranks []uint64 // sort buffer: quantize(kr)<<rankShift | resource

	bits       uint     // bits of a rank
	keyMax     uint64   // largest key
	queue, buf []queued // the sorted queue and the radix sort's scratch
	count      []int32  // radix buckets
	again      minHeap[queued]
	group      minHeap[cand]
	tied       []int32

	// fillGroup's buffers: the group's resources, its classes resource by resource, the heaps
	// of shares and caps, and the group's number.
	touched []int32
	glist   []int32
	rheap   levelHeap
	cheap   minHeap[cand]
	stamp   int32
}

// a1res is Algorithm 1's state of a resource during a step.
type a1res struct {
	kr, used, maxRate, share, capacity float64
	uncalc, count                      int32
	rank                               uint32
	// fillGroup's: the group that last touched the resource, where its classes start in
	// glist, how many there are, how many are not served yet.
	mark, goff, gtotal, gleft int32
}

// a1class is Algorithm 1's record of a class.
type a1class struct {
	res, rev [maxPath]int32
	k, kbar  float64
	cap      float64 // the contra-flow cap of its candidate in the current tie group
	mult     int32
	served   int32 // the last tie group fillGroup served it in
	n, off   uint8 // path length, disabled positions
}

// rankShift leaves room for a resource index below a quantised congestion factor: quantize
// keeps 42 bits of a float64.
const rankShift = 22

func newAlg1(e *engine, mode contraMode, phi float64, shared bool) *alg1 {
	nr, nc := len(e.net.Capacity), len(e.src)
	if nr >= 1<<rankShift {
		panic("contention: too many resources for Algorithm 1's ranks")
	}
	s := &alg1{e: e, mode: mode, phi: phi, shared: shared, ceiling: e.net.Ceiling,
		res: make([]a1res, nr), cls: make([]a1class, nc), qranks: make([]uint64, 0, nr),
		queue: make([]queued, nc), buf: make([]queued, nc)}
	for r := range s.res {
		s.res[r].capacity = e.net.Capacity[r]
	}
	for c, rt := range e.routes {
		s.cls[c] = a1class{res: rt.res, rev: rt.rev, n: uint8(rt.n), mult: e.mult[c]}
	}
	s.again.less = lessQueued
	s.group.less = lessCand
	s.cheap.less = func(a, b cand) bool { return a.rate < b.rate || a.rate == b.rate && a.c < b.c }
	return s
}

// bitsFor is the number of bits that hold the values 0…n−1 (at least 1).
func bitsFor(n uint64) uint {
	b := uint(1)
	for n > 1<<b {
		b++
	}
	return b
}

// quantize maps a non-negative float to an integer that orders like it, dropping the lowest 22
// bits of the mantissa: values that differ by less than about 2⁻³⁰ relative (a few ulps of
// sums of capacities) get the same integer, far inside eqTol.
func quantize(v float64) uint64 {
	b := math.Float64bits(v)
	return (b + 1<<21) >> 22
}

// cand is a class of a tie group with the rate it would get.
type cand struct {
	c    int32
	rate float64
}

// lessCand orders a tie group by candidate rate, then class order.
func lessCand(a, b cand) bool {
	if !approxEq(a.rate, b.rate) {
		return a.rate < b.rate
	}
	return a.c < b.c
}

// startStep sets the per-resource state from the engine's counts and ranks the congestion
// factors.
func (s *alg1) startStep() {
	s.qranks = s.qranks[:0]
	for r, n := range s.e.count {
		rs := &s.res[r]
		rs.count, rs.uncalc, rs.used, rs.maxRate, rs.rank = n, n, 0, 0, 0
		if n == 0 {
			rs.kr = 0
			continue
		}
		rs.kr = float64(n) / rs.capacity
		rs.share = min(s.ceiling, rs.capacity/float64(n))
		s.qranks = append(s.qranks, quantize(rs.kr)<<rankShift|uint64(r))
	}
	slices.Sort(s.qranks)
	rk, last := uint32(0), uint64(0)
	for _, v := range s.qranks {
		if q := v >> rankShift; q != last {
			rk, last = rk+1, q
		}
		s.res[v&(1<<rankShift-1)].rank = rk
	}
	s.bits = bitsFor(uint64(rk) + 1) // at most 18 bits: a cluster has fewer than 2¹⁸ resources
	s.keyMax = 1<<(3*s.bits) - 1
}

// queued is a class in the queue: the complement of its key, and the class.
type queued struct {
	key uint64
	c   int32
}

// lessQueued is the queue's order: descending key (ascending complement), then class order.
func lessQueued(a, b queued) bool { return a.key < b.key || a.key == b.key && a.c < b.c }

// factors sets k and k̄ of class c from its path and its disabled positions, and returns
// its entry in the queue.
func (s *alg1) factors(c int32) queued {
	cl := &s.cls[c]
	var k, kbar float64
	var rk, rkb uint32
	for i := range cl.n {
		rs := &s.res[cl.res[i]]
		k, rk = max(k, rs.kr), max(rk, rs.rank)
		if s.mode != contraNone && cl.off&(1<<i) == 0 {
			rv := &s.res[cl.rev[i]]
			kbar, rkb = max(kbar, rv.kr), max(rkb, rv.rank)
		}
	}
	cl.k, cl.kbar = k, kbar
	key := uint64(max(rk, rkb))<<(2*s.bits) | uint64(rk)<<s.bits | uint64(rkb)
	return queued{s.keyMax - key, c}
}

// sortQueue sorts the queue's entries (built in class order) by key, stably: three counting
// passes, one per rank, least significant first.
func (s *alg1) sortQueue(n int) {
	queue, buf := s.queue[:n], s.buf[:n]
	nb := 1 << s.bits
	if cap(s.count) < nb {
		s.count = make([]int32, nb)
	}
	count := s.count[:nb]
	mask := uint64(nb - 1)
	for shift := uint(0); shift < 3*s.bits; shift += s.bits {
		clear(count)
		for _, q := range queue {
			count[q.key>>shift&mask]++
		}
		sum := int32(0)
		for b, n := range count {
			count[b], sum = sum, sum+n
		}
		for _, q := range queue {
			d := q.key >> shift & mask
			buf[count[d]] = q
			count[d]++
		}
		queue, buf = buf, queue
	}
	s.queue, s.buf = queue[:cap(queue)], buf[:cap(buf)]
}

// withFlow is the with-flow rule: the smallest share over the resources where k is reached,
// capped by the share on every resource of the path — together, the smallest share on the
// path.
func (s *alg1) withFlow(cl *a1class) float64 {
	rate := math.Inf(1)
	for _, r := range cl.res[:cl.n] {
		rate = min(rate, s.res[r].share)
	}
	return rate
}

// contraFlow is the contra-flow rule before the cap by the path's shares: the smallest of the
// largest rates on the saturated reverse resources where k̄ is reached, and true when there
// is one; unsaturated ones are listed in the returned mask of path positions, for disabling.
func (s *alg1) contraFlow(cl *a1class) (rate float64, saturated bool, unsat uint8) {
	rate = math.Inf(1)
	for i := range cl.n {
		if cl.off&(1<<i) != 0 {
			continue
		}
		rv := &s.res[cl.rev[i]]
		if !approxEq(rv.kr, cl.kbar) {
			continue
		}
		if rv.uncalc < rv.count && approxEq(rv.used, rv.capacity) {
			rate, saturated = min(rate, rv.maxRate), true
		} else {
			unsat |= 1 << i
		}
	}
	return rate, saturated, unsat
}

// candidate is the rate class c would be given now: ok is false when its contra-flow
// bottleneck is not saturated, so that it has to be queued again without the positions in
// unsat. When classes share rates, the rate is min(cap, withFlow): cap is the contra-flow
// rule's rate (+Inf under the with-flow rule), which does not change while a tie group is
// served (see alg1).
func (s *alg1) candidate(c int32) (rate, cap float64, ok bool, unsat uint8) {
	cl := &s.cls[c]
	rf := s.withFlow(cl)
	if geq(cl.k, cl.kbar) {
		return rf, math.Inf(1), true, 0
	}
	rc, sat, unsat := s.contraFlow(cl)
	if !sat {
		return 0, 0, false, unsat
	}
	cap = rc
	rc = min(rc, rf)
	if s.mode == contraBlend {
		rc = rf - s.phi*max(rf-rc, 0)
		if s.phi == 0 {
			cap = math.Inf(1)
		}
	}
	return rc, cap, true, 0
}

// give gives every active member of class c the rate, and updates its resources.
func (s *alg1) give(c int32, rate float64) {
	s.e.rate[c] = rate
	cl := &s.cls[c]
	m := cl.mult
	for _, r := range cl.res[:cl.n] {
		rs := &s.res[r]
		rs.used += float64(m) * rate
		rs.uncalc -= m
		rs.maxRate = max(rs.maxRate, rate)
		if rs.uncalc > 0 {
			rs.share = min(s.ceiling, max(rs.capacity-rs.used, 0)/float64(rs.uncalc))
		}
	}
}

// rates runs Algorithm 1 on the active classes.
func (s *alg1) rates(context.Context) error {
	s.startStep()
	act := s.e.act
	for _, c := range s.e.changed {
		s.cls[c].mult = s.e.mult[c]
	}
	for j, c := range act {
		s.cls[c].off = 0
		s.queue[j] = s.factors(c)
	}
	s.sortQueue(len(act))
	queue := s.queue[:len(act)]
	s.again.items = s.again.items[:0]
	next := 0
	// pop takes the first entry of the merged queue, or returns false when it is empty.
	pop := func() (queued, bool) {
		switch {
		case next < len(queue) && (s.again.Len() == 0 || lessQueued(queue[next], s.again.top())):
			next++
			return queue[next-1], true
		case s.again.Len() > 0:
			return s.again.pop(), true
		}
		return queued{}, false
	}
	peekKey := func() (uint64, bool) {
		switch {
		case next < len(queue) && (s.again.Len() == 0 || lessQueued(queue[next], s.again.top())):
			return queue[next].key, true
		case s.again.Len() > 0:
			return s.again.top().key, true
		}
		return 0, false
	}
	for {
		q, ok := pop()
		if !ok {
			return nil
		}
		// The classes whose keys tie with the most congested one form a group, served by
		// increasing candidate rate. Candidates only grow as rates are given (each class gets
		// at most its share, which leaves the others' shares no smaller), so a lazily
		// re-evaluated heap finds the smallest.
		s.tied = append(s.tied[:0], q.c)
		for k, ok := peekKey(); ok && k == q.key; k, ok = peekKey() {
			q, _ := pop()
			s.tied = append(s.tied, q.c)
		}
		if len(s.tied) == 1 { // the common case: no tie, no group to order
			if rate, _, ok, _ := s.candidate(s.tied[0]); ok {
				s.give(s.tied[0], rate)
				continue
			}
		}
		s.serveGroup()
	}
}

// serveGroup serves a tie group: classes whose contra-flow bottleneck is not saturated are
// queued again without it, the others are given their candidate rates, smallest first.
func (s *alg1) serveGroup() {
	s.group.items = s.group.items[:0]
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, c := range s.tied {
		rate, cap, ok, unsat := s.candidate(c)
		if !ok {
			s.cls[c].off |= unsat
			s.again.push(s.factors(c))
			continue
		}
		s.cls[c].cap = cap
		s.group.items = append(s.group.items, cand{c, rate})
		lo, hi = min(lo, rate), max(hi, rate)
	}
	switch {
	case len(s.group.items) == 0:
	case s.shared && approxEq(lo, hi):
		// Equal candidates: the heap would serve them in class order, each at its candidate,
		// which serving the others leaves as it is (see alg1).
		for _, g := range s.group.items {
			s.give(g.c, g.rate)
		}
	case s.shared:
		s.fillGroup()
	default:
		s.heapGroup()
	}
}

// heapGroup serves a tie group as the reference does: a heap by candidate rate (then class
// order), re-evaluated lazily, since candidates only grow as rates are given.
func (s *alg1) heapGroup() {
	s.group.init()
	for s.group.Len() > 0 {
		g := s.group.pop()
		rate, _, _, _ := s.candidate(g.c)
		if s.group.Len() > 0 && rate > s.group.top().rate && !approxEq(rate, s.group.top().rate) {
			g.rate = rate
			s.group.push(g)
			continue
		}
		s.give(g.c, rate)
	}
}

// fillGroup serves a tie group of classes that share rates by increasing candidate, as
// heapGroup does, but by progressive filling over the group's resources instead of a heap of
// classes. A class's candidate is min(cap, smallest share on its path); shares only grow as
// rates are given and caps do not move. So the smallest candidate is either the smallest cap
// of a class not served yet, or the smallest share of a resource that still has one; in the
// second case every class of the group still on that resource has that share as candidate
// (none has a smaller cap, nor a smaller share elsewhere), and keeps it while the others are
// served (see alg1): they are served together. Cost O(classes × path length + resources) plus
// heap moves on the group's resources and caps, instead of a heap of classes with repeated
// re-evaluation.
func (s *alg1) fillGroup() {
	s.stamp++
	st := s.stamp
	s.touched = s.touched[:0]
	for _, g := range s.group.items {
		cl := &s.cls[g.c]
		for _, r := range cl.res[:cl.n] {
			rs := &s.res[r]
			if rs.mark != st {
				rs.mark, rs.gtotal = st, 0
				s.touched = append(s.touched, r)
			}
			rs.gtotal++
		}
	}
	off := int32(0)
	s.rheap.items = s.rheap.items[:0]
	for _, r := range s.touched {
		rs := &s.res[r]
		rs.goff, rs.gleft, off = off, 0, off+rs.gtotal
		s.rheap.items = append(s.rheap.items, fillEvent{r: r, level: rs.share})
	}
	s.rheap.init()
	s.glist = grow(s.glist, int(off))
	s.cheap.items = s.cheap.items[:0]
	for _, g := range s.group.items {
		cl := &s.cls[g.c]
		for _, r := range cl.res[:cl.n] {
			rs := &s.res[r]
			s.glist[rs.goff+rs.gleft] = g.c
			rs.gleft++
		}
		if !math.IsInf(cl.cap, 1) {
			s.cheap.items = append(s.cheap.items, cand{g.c, cl.cap})
		}
	}
	s.cheap.init()
	serve := func(c int32) {
		cl := &s.cls[c]
		cl.served = st
		for _, r := range cl.res[:cl.n] {
			s.res[r].gleft--
		}
		s.give(c, min(cl.cap, s.withFlow(cl)))
	}
	for {
		for s.cheap.Len() > 0 && s.cls[s.cheap.top().c].served == st {
			s.cheap.pop()
		}
		for s.rheap.Len() > 0 {
			ev := s.rheap.top()
			rs := &s.res[ev.r]
			if rs.gleft == 0 {
				s.rheap.pop()
				continue
			}
			if rs.share > ev.level {
				s.rheap.items[0].level = rs.share
				s.rheap.fixTop()
				continue
			}
			break
		}
		switch {
		case s.cheap.Len() > 0 && (s.rheap.Len() == 0 || s.cheap.top().rate < s.rheap.top().level):
			serve(s.cheap.pop().c)
		case s.rheap.Len() > 0:
			rs := &s.res[s.rheap.pop().r]
			for _, c := range s.glist[rs.goff : rs.goff+rs.gtotal] {
				if s.cls[c].served != st {
					serve(c)
				}
			}
		default:
			return
		}
	}
}
