package contention

import (
	"context"
	"math"
	"slices"
)

// ackpath: a transfer's acknowledgements travel back through the reverse directions of its
// path and queue there behind the data of the transfers going that way. A longer round trip
// costs the transfer twice: it ramps up slower (slow start and congestion avoidance advance per
// round trip) and, at a shared bottleneck, TCP gives it a smaller share.
//
// In each step, transfer i from s to t gets the factor
//
//	g_i = 1/(1 + d_i),  d_i = a·Σ(n_r − 1) + b·(n_o − 1) + c·m + c₁·m₁,
//
// the sum over the reverse resources before the receiver's NIC (into s, and the backbone or
// uplinks the other way), n_o over the receiver's outgoing NIC direction, each counted only
// where a queue stands, n the transfers crossing it; m is how many of the two NIC directions on
// the acknowledgements' path (into s, out of t) hold a queue that two transfers or more share,
// m₁ how many hold one that a transfer alone holds (ackDelay). g_i scales i's weight in the
// fill; its ceiling is scaled by 1/(1 + (1 − ρ)·d_i): a transfer alone on its data path, whose
// window only has to cover the longer round trip, loses less than one sharing a bottleneck.
//
// A queue stands where some transfer is bottlenecked in the step's plain max-min fill (g = 1):
// the first resource on its path, in the data's direction, that is saturated and where no
// transfer crossing it gets more; a saturated resource whose transfers are all held back
// upstream keeps none; nor does a queue stand where the transfers sharing it, once slowed, no
// longer send more than it carries, or where a queue apart from its lone transfer slows that
// transfer (queues). Where the queues stand comes from the plain fill, not from a fixed point
// of the factored one: factors that unsaturate a resource would remove their own cause.
//
// A transfer's time also pays for its ramp-up, τ·(min(k, K) − 1)⁺ seconds, k the transfers
// into its sender plus those out of its receiver at the pattern's start (the NIC directions
// its acknowledgements cross), K the largest k of the calibration patterns τ was fitted on:
// beyond it nothing measured says how a round trip grows (rampCosts); and for taking up freed
// capacity, τ·(1 − r/r′) each time its rate rises from r to r′ (takeUp).
//
// Parameters (LearnedParams): AckIn (a), AckOut (b), AckFull (c), AckLone (c₁), AckRelief
// (ρ), AckRamp (τ) and AckRampMax (K); the fitted capacities. a, b, c, c₁, ρ and τ are fitted
// on the calibration patterns of two transfers or more, where a node's outgoing transfers meet
// its incoming ones.
//
// Source: commcal's own model, fitted by estimate.FitLearned; what each term was measured to
// gain is in docs/journal/contention-learned-models.md.
var AckPath = Learned{"ackpath", LearnedVariant{AckPath: true}}

// MaxAck bounds ackpath's a, b, c and c₁: a slowdown of more than 5 per extra transfer (a sixth of
// the rate with one) is beyond anything a queue of the reverse direction does.
const MaxAck = 5

// MaxAckRamp bounds ackpath's τ: half a second per transfer, a hundred round trips through
// the emulated NICs' full queues, is beyond any slow start.
const MaxAckRamp = 0.5

// ackFactors scales each active class's weight and ceiling by its factor from the queues on
// its acknowledgements' path, after a plain fill that locates them (queues), and says whether
// any class is slowed.
func (f *wfill) ackFactors(ceiling float64) bool {
	e := f.e
	if f.plain != nil {
		f.plain.solve()
		f.pRate, f.pUsage = f.plain.rate, f.plain.usage
	} else {
		f.fill()
		f.pRate, f.pUsage = e.rate, f.usage
	}
	f.queues()
	f.ackTerms()
	slowed := false
	for _, c := range e.act {
		if d := f.ackDelay(c); d > 0 {
			f.eff[c], f.ceil[c], slowed = f.weight[c]/(1+d), ceiling/(1+(1-f.ackRelief)*d), true
		}
	}
	return slowed
}

// rampCosts is ackpath's ramp-up cost of each class, on an engine before its first step:
// τ·(min(k, held) − 1)⁺, k the transfers into the class's sender plus those out of its
// receiver (the counts of the reverse directions of its path's first and last resources),
// held 0 for no bound.
func (e *engine) rampCosts(tau float64, held int) []float64 {
	out := make([]float64, len(e.src))
	for c := range out {
		rt := &e.routes[c]
		k := int(e.count[rt.rev[0]] + e.count[rt.rev[rt.n-1]])
		if held > 0 {
			k = min(k, held)
		}
		out[c] = tau * float64(max(k-1, 0))
	}
	return out
}

// takeUp is ackpath's rate rule with the take-up cost: each time a class's rate rises from one
// step to the next, from r to r′ (a transfer it shared a bottleneck with finished, or a queue
// on its acknowledgements' path drained), it pays τ·(1 − r/r′) seconds more, τ the ramp-up
// cost's (AckRamp). TCP does not take up what a finished transfer frees at once: its window
// grows into it over round trips lengthened by the queues, and if it grows linearly over a lag
// L the transfer is L·(1 − r/r′)/2 seconds late; one τ prices both costs. The cost only adds to
// the times: the transfer's steps are those of the fluid sharing, and a class's cost in time
// starts each run at its ramp-up cost (rampCosts).
type takeUp struct {
	*wfill
	tau  float64
	ramp []float64 // per class, its ramp-up cost
	last []float64 // per class, its rate in the step before (0 before its first)
	cost []float64 // per class, its ramp-up cost plus its take-up cost so far
}

func newTakeUp(f *wfill, tau float64, ramp []float64) *takeUp {
	n := len(ramp)
	buf := make([]float64, 2*n)
	return &takeUp{wfill: f, tau: tau, ramp: ramp, last: buf[:n:n], cost: buf[n:]}
}

// start readies a run: no rate yet, each class's cost its ramp-up cost.
func (t *takeUp) start() {
	clear(t.last)
	copy(t.cost, t.ramp)
}

// addTo adds each class's cost to its members' times in p.
func (t *takeUp) addTo(p *Prediction) {
	e := t.e
	for c, d := range t.cost {
		for _, i := range e.mem[e.memOff[c]:e.memOff[c+1]] {
			p.Times[i] += d
		}
	}
}

func (t *takeUp) rates(ctx context.Context) error {
	if err := t.wfill.rates(ctx); err != nil {
		return err
	}
	e := t.e
	for _, c := range e.act {
		r := e.rate[c]
		if l := t.last[c]; l > 0 && r > l {
			t.cost[c] += t.tau * (1 - l/r)
		}
		t.last[c] = r
	}
	return nil
}

// queues marks, after the plain fill, the network resources where a transfer's queue stands,
// then drops the queues their transfers do not feed. A transfer's is at its bottleneck, the
// first resource of its path in the data's direction that is saturated and where no transfer
// crossing it has a higher level (rate over weight). Upstream first: where a transfer's sender
// NIC and its receiver's NIC tie (a lone transfer, or the transfers of one sender into one
// receiver), its packets wait at the sender's and reach the receiver's paced at the rate that
// drains it, keeping no queue there. A transfer at its ceiling, bottlenecked nowhere, queues at
// its sender's NIC: the ceiling is what one transfer gets through it. A queue on a saturated
// resource crossed by two transfers or more is then kept only where they, each slowed by its
// factor (ackDelay) from the queues located so far, send more than it carries: the ceiling
// times the factor for a transfer queued there, no more than its plain rate for one held back
// elsewhere; a queue one transfer holds is kept unless that transfer is slowed by a queue
// apart from it (slowedApart). One pass: dropping a queue only raises factors, so a queue kept
// stays fed; a queue dropped is not looked at again, although the raised factors may let its
// transfers fill it (or, for a lone one, the queue that slowed its transfer may be dropped in
// the same pass). Where hundreds of transfers share each NIC, every transfer's factor is small
// and the pass drops most shared queues, a regime no measured dataset covers
// (docs/journal/contention-learned-models.md).
func (f *wfill) queues() {
	e := f.e
	nr := int32(len(e.net.Capacity))
	for _, r := range f.used {
		if r < nr {
			f.queued[r], f.top[r] = false, 0
		}
	}
	for _, c := range e.act {
		l := f.pRate[c] / f.eff[c]
		for _, r := range f.path[c] {
			if r < nr {
				f.top[r] = max(f.top[r], l)
				if e.count[r] == 1 {
					f.holder[r] = c
				}
			}
		}
	}
	// A class's queue is where it is bottlenecked: the first saturated resource of its path
	// where its level reaches the top (within eqTol); saturated and the top's threshold once
	// per resource, as math.Inf(1) where a resource is not saturated.
	for _, r := range f.used {
		if r < nr {
			f.topTol[r] = math.Inf(1)
			if f.saturated(r) {
				f.topTol[r] = f.top[r] * (1 - eqTol)
			}
		}
	}
	for _, c := range e.act {
		l, p := f.pRate[c]/f.eff[c], f.path[c]
		at := p[0]
		for _, r := range p {
			if r < nr && l >= f.topTol[r] {
				at = r
				break
			}
		}
		f.queued[at] = true
		f.at[c] = at
	}
	f.ackTerms()
	// The demand test (see above). A transfer alone keeps its queue (c₁ prices it) unless a
	// queue apart from it slows it (slowedApart, TestAckPathSlowedLoneQueue), and so does one at
	// its ceiling in its sender's unsaturated NIC, whatever else crosses it
	// (TestAckPathCeilingQueueKept).
	for _, r := range f.used {
		if r < nr {
			f.demand[r] = 0
		}
	}
	for _, r := range f.used {
		if r < nr {
			f.shared[r] = f.queued[r] && e.count[r] >= 2 && f.saturated(r)
		}
	}
	shared := func(r int32) bool { return r < nr && f.shared[r] }
	f.unfed = f.unfed[:0]
	for _, c := range e.act {
		d := f.ackDelay(c)
		if at := f.at[c]; d > 0 && at < nr && e.count[at] == 1 && f.slowedApart(c, at) {
			f.unfed = append(f.unfed, at)
		}
		g := 1 / (1 + d)
		for _, r := range f.path[c] {
			if !shared(r) {
				continue
			}
			d := g * f.ceil[c]
			if f.at[c] != r {
				d = min(d, f.pRate[c])
			}
			f.demand[r] += d * float64(e.mult[c])
		}
	}
	for _, r := range f.used {
		if shared(r) && f.demand[r] <= f.capacity[r]*(1+eqTol) {
			f.queued[r] = false
		}
	}
	for _, r := range f.unfed {
		f.queued[r] = false
	}
}

// ackCounts says whether ackDelay counts a queue standing at position k of a class's reverse
// path (0 into its sender, last out of its receiver) crossed by n transfers: a shared one
// anywhere, a lone one only in the two NIC directions (c₁).
func ackCounts(k, last int, n int32) bool {
	return n >= 2 || k == 0 || k == last
}

// slowedApart says whether some queue that ackDelay counts for class c, alone at its queue
// at, stands apart from c: shared by two transfers or more, or held by a transfer alone whose
// own acknowledgements do not queue at at. A transfer slowed by such a queue sends below the
// rate that kept its own queue standing, whatever it does, and the queue drains (queues); two
// transfers each slowed only by the other's queue (X1→X2 beside X2→X1, each queued in its
// sender's NIC where the other's acknowledgements leave) keep both, and both were slowed in
// the development data (exchanges of 4 MB at d = 1 on the 1g shape: 3–20%).
func (f *wfill) slowedApart(c, at int32) bool {
	e := f.e
	rt := &e.routes[c]
	last := int(rt.n) - 1
	for k, r := range rt.rev[:rt.n] {
		if !f.queued[r] || !ackCounts(k, last, e.count[r]) {
			continue
		}
		if e.count[r] >= 2 {
			return true
		}
		h := &e.routes[f.holder[r]]
		if !slices.Contains(h.rev[:h.n], at) {
			return true
		}
	}
	return false
}

// ackTerms sets what ackDelay adds for each network resource of a reverse path from where the
// queues stand (f.queued) and the counts: ackEnd at either end of the path (the two NIC
// directions: c, or c₁ where one transfer alone holds the queue), ackMid before the last
// position (a·(n − 1) where two transfers or more share the queue) and ackLast at the last
// (b·(n − 1)); 0 where no queue stands or it does not count (ackCounts).
func (f *wfill) ackTerms() {
	e := f.e
	for r := range f.queued {
		f.ackEnd[r], f.ackMid[r], f.ackLast[r] = 0, 0, 0
		if !f.queued[r] {
			continue
		}
		n := e.count[r]
		f.ackEnd[r] = f.ackFull
		if n < 2 {
			f.ackEnd[r] = f.ackLone
			continue
		}
		f.ackMid[r], f.ackLast[r] = f.ackIn*float64(n-1), f.ackOut*float64(n-1)
	}
}

// ackDelay is ackpath's a·(queues into the sender and through the core) + b·(queue out of the
// receiver) + c·(shared queued NIC directions) + c₁·(lone ones) for class c: each reverse-path
// resource where a queue stands (queues), with n transfers crossing it, counts n − 1 (one
// transfer alone keeps only a short queue, which c prices); each of the two NIC directions on
// the path back (into the sender, first; out of the receiver, last) where a queue stands counts
// once for c, or for c₁ where one transfer alone holds it. The terms are ackTerms', added in
// the path's order, each end's before its count's.
func (f *wfill) ackDelay(c int32) float64 {
	rt := &f.e.routes[c]
	last := rt.n - 1
	r := rt.rev[0]
	q := f.ackEnd[r]
	q += f.ackMid[r]
	for _, r := range rt.rev[1:last] {
		q += f.ackMid[r]
	}
	r = rt.rev[last]
	q += f.ackEnd[r]
	q += f.ackLast[r]
	return q
}
