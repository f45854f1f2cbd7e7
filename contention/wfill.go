package contention

import "context"

// wfill is weighted progressive filling on the engine's classes: the rate of each member of
// class c rises as weight[c]·λ until a resource fills (its unfrozen classes freeze at the
// level λ it reached) or the class reaches the ceiling; a class weighs its weight times its
// active members in the resources it crosses. Resources are the network's, with capacities
// scaled by the surface for the step's counts, plus, under duplex coupling, one joint
// resource per node that both directions of its NIC cross. The heap of fill levels works as
// max-min's (fill): a freeze only raises the other levels, so a stale key is a lower bound,
// refreshed when it reaches the top; class ceilings are events of their own at level
// ceiling/weight, one event for all of them when every weight is 1 (unweighted).
type wfill struct {
	e      *engine
	weight []float64 // per class, set per sample
	eff    []float64 // per class, the step's: weight scaled by ackpath's factor
	ceil   []float64 // per class, the step's ceiling
	// unweighted: every weight is 1, so that ceil/eff is the network's ceiling for every class
	// (ackpath's factor scales both) and one heap event stands for all the classes' ceilings:
	// with a small factor, a resource's fill level reaches the ceiling's and thousands of
	// per-class events would be popped one by one.
	unweighted    bool
	ackIn, ackOut float64
	ackFull       float64
	ackLone       float64 // c₁: LearnedParams.AckLone, or c when absent
	ackRelief     float64 // ρ: LearnedParams.AckRelief
	// alpha is α of α-fair sharing (ackpath-alpha; alphafair.go), 0 for weighted max-min;
	// price is the resources' prices, kept from step to step; ac the active classes as the
	// sharing reads them (alphafair.go), pos each class's place there, and the buffers below
	// are per place in ac, or per resource.
	alpha, negInvAlpha float64 // α and −1/α
	price              []float64
	ac                 []alphaClass
	pos                []int32      // per class, its place in ac
	lead               []bool       // per resource, whether it is first on every path that crosses it (newton's rows)
	acFresh            bool         // ac is to be gathered from the classes' paths (gather)
	carry              bool         // f.q, f.x and f.last hold the last sharing's state at price (gather)
	last               []float64    // per resource, its load in ceilings at the last sharing's end
	binom              [6]float64   // (1 + r)^(−1/α)'s binomial coefficients of r…r⁴ (power)
	near               float64      // the |r| up to which power uses them
	q, qCand           []float64    // per class, its sum of the prices and of candidate prices
	keep               bool         // a Scratch keeps the fill: warm holds its last run's prices
	warm               []stepPrices // per step, the prices the last run ended it with
	iterations         int          // Newton steps and sweeps of its α-fair sharings so far (tests)
	x, xCand           []float64    // per class, its rate in ceilings at the prices and at candidate prices
	loadCand           []float64    // per resource, its load in ceilings at candidate prices (usage at the prices)
	prev, cand         []float64    // scratch prices of extrapolate and newton
	slope              []float64    // scratch of newton: per class, the members' rate fall per unit of price
	diag               []float64    // scratch of newton: per resource, the sum of its classes' slopes
	index              []int32      // scratch of newton: per resource, its row, or −1
	rows               []int32      // scratch of newton: the resource of each row
	hbuf, dbuf, gbuf   []float64    // scratch of newton: its matrix, and its right-hand side and step
	// plain is the plain fill that locates ackpath's queues where every weight is 1 (the
	// incremental max-min of fill.go, its rates its own); pRate and pUsage are the rates and
	// loads of the step's plain fill, plain's or the weighted fill's own (e.rate, usage).
	plain          *fill
	plainApart     bool // plain's rates are its own, not e.rate
	pRate, pUsage  []float64
	queued         []bool    // per network resource, whether a queue stands there (ackpath)
	at             []int32   // per class, the resource its queue stands on (queues)
	top            []float64 // scratch of queues: per network resource, the largest level crossing it
	topTol         []float64 // scratch of queues: per network resource, top·(1 − eqTol) where saturated, +Inf elsewhere
	shared         []bool    // scratch of queues: per network resource, whether a queue two transfers or more share stands there
	ackEnd, ackMid []float64 // per network resource, what ackDelay adds for it (ackTerms)
	ackLast        []float64
	demand         []float64 // scratch of queues: per network resource, what its queued transfers send slowed
	holder         []int32   // scratch of queues: per network resource one transfer crosses, that transfer
	unfed          []int32   // scratch of queues: lone queues their transfers no longer feed
	surf           *surfaceTable
	kinds          []int // surface kind of each network resource
	capacity       []float64
	on             [][]int32 // classes per resource (network resources, then per-node joint ones), finished ones dropped lazily
	all            [][]int32 // on at the start of a run
	used           []int32   // the resources some class crosses, in increasing order
	path           [][]int32 // resources per class, joint ones included
	usage          []float64 // per resource, its load (in ceilings inside fillAlpha's iteration)
	wsum           []float64
	unfrozen       []int32
	frozen         []bool
	heap           levelHeap
}

// newWFill sets up the fill of an engine with the parameters of the variant's components;
// unweighted says every weight will be 1. The caller sets the weights before each run. What
// it builds depends on the engine and on the parameters' structure only (fillShape); the
// parameters' values are setParams's.
func newWFill(e *engine, v LearnedVariant, lp *LearnedParams, unweighted bool) *wfill {
	shape := fillShapeOf(v, lp, unweighted)
	nr := len(e.net.Capacity)
	total := nr
	if shape.joint {
		total += e.nodeCount
	}
	nc := len(e.src)
	f := &wfill{e: e, weight: make([]float64, nc), eff: make([]float64, nc), ceil: make([]float64, nc),
		unweighted: unweighted, path: make([][]int32, nc), frozen: make([]bool, nc), queued: make([]bool, nr),
		at: make([]int32, nc), top: make([]float64, nr), demand: make([]float64, nr), holder: make([]int32, nr),
		topTol: make([]float64, nr), shared: make([]bool, nr), ackEnd: make([]float64, nr), ackMid: make([]float64, nr), ackLast: make([]float64, nr),
		capacity: make([]float64, total), usage: make([]float64, total),
		wsum: make([]float64, total), unfrozen: make([]int32, total)}
	if shape.alpha {
		f.price, f.q, f.qCand = make([]float64, total), make([]float64, nc), make([]float64, nc)
		f.x, f.xCand, f.loadCand = make([]float64, nc), make([]float64, nc), make([]float64, total)
		f.prev, f.cand, f.diag = make([]float64, total), make([]float64, total), make([]float64, total)
		f.slope, f.index, f.pos = make([]float64, nc), make([]int32, total), make([]int32, nc)
		f.ac, f.last = make([]alphaClass, 0, nc), make([]float64, total)

	}
	res := e.net.Cluster.Resources()
	f.kinds = make([]int, nr)
	for i, r := range res {
		f.kinds[i] = kindIndex(SurfaceKind(r.Kind))
	}
	// A class's resources: its route's, and under duplex coupling its two nodes' joint budgets
	// (their capacities are setParams's); those paths are carved from one array.
	var joint []int32
	if shape.joint {
		joint = make([]int32, 0, nc*(maxPath+2))
	}
	for c := range e.src {
		p := e.pathOf(int32(c))
		if shape.joint {
			start := len(joint)
			joint = append(append(joint, p...), int32(nr)+e.src[c], int32(nr)+e.dst[c])
			p = joint[start:len(joint):len(joint)]
		}
		f.path[c] = p
	}
	if shape.alpha {
		f.lead = make([]bool, total)
		for r := range f.lead {
			f.lead[r] = true
		}
		for _, p := range f.path {
			for _, r := range p[1:] {
				f.lead[r] = false
			}
		}
	}
	f.all = classLists(total, nc, func(c int32) []int32 { return f.path[c] })
	f.on = make([][]int32, total)
	entries := 0
	for _, cs := range f.all {
		entries += len(cs)
	}
	on := make([]int32, 0, entries)
	for r, cs := range f.all {
		if len(cs) > 0 {
			f.used = append(f.used, int32(r))
		}
		start := len(on)
		on = append(on, cs...)
		f.on[r] = on[start:len(on):len(on)]
	}
	// The plain fill is the incremental max-min of fill.go where every weight is 1: ackpath's
	// locates its queues (rates of its own, e.rate being the factored sharing's); the others'
	// is their sharing (into e.rate), but under the surface, whose capacities change with
	// every step's counts (it would fill everything again every step).
	switch {
	case v.AckPath && unweighted:
		f.plain = newFillOn(e, f.capacity, make([]float64, nc), func(c int32) []int32 { return f.path[c] })
		f.plainApart = true
	case unweighted && !v.Surface:
		f.plain = newFillOn(e, f.capacity, e.rate, func(c int32) []int32 { return f.path[c] })
	}
	f.setParams(v, lp)
	return f
}

// fillShape is what of a learned model's parameters decides the fill's structure: one class
// per transfer or per node pair (weights sampled or not), joint per-node resources (duplex
// coupling), and the α-fair prices. Two parameter sets of one shape share a fill (Scratch).
type fillShape struct {
	singletons, joint, alpha bool
}

func fillShapeOf(v LearnedVariant, lp *LearnedParams, unweighted bool) fillShape {
	return fillShape{singletons: !unweighted, joint: v.Duplex && lp.Coupling > 0, alpha: v.AlphaFair && lp.Alpha > 0}
}

// setParams sets the fill's parameters from lp, whose fillShape is the one the fill was built
// with, and its capacities from the engine's network.
func (f *wfill) setParams(v LearnedVariant, lp *LearnedParams) {
	f.surf = nil
	if v.Surface {
		f.surf = newSurfaceTable(lp.Surface)
	}
	f.ackIn, f.ackOut, f.ackFull, f.ackLone, f.ackRelief = 0, 0, 0, 0, 0
	if v.AckPath {
		f.ackIn, f.ackOut, f.ackFull = lp.AckIn, lp.AckOut, lp.AckFull
		f.ackLone, f.ackRelief = lp.LoneAck(), lp.AckRelief
	}
	f.alpha, f.negInvAlpha = 0, 0
	if v.AlphaFair && lp.Alpha > 0 {
		f.alpha, f.negInvAlpha = lp.Alpha, -1/lp.Alpha
		f.setPowerSeries()
	}
	copy(f.capacity, f.e.net.Capacity)
	f.jointCapacities(lp.Coupling)
	if f.plain != nil {
		f.plain.invalidate()
	}
}

// reset readies the fill and its engine for another run (the next weight sample): every class
// back on its resources' lists, which a run shortens as classes finish.
func (f *wfill) reset() {
	f.e.reset()
	for _, r := range f.used {
		f.on[r] = append(f.on[r][:0], f.all[r]...)
	}
	clear(f.price)
	f.acFresh = true
	if f.plain != nil {
		f.plain.invalidate()
	}
}

// saturated says the plain fill filled resource r (to eqTol relative: the fill's own
// arithmetic is exact to rounding).
func (f *wfill) saturated(r int32) bool { return f.pUsage[r] >= f.capacity[r]*(1-eqTol) }

func (f *wfill) level(r int32) float64 {
	return max(f.capacity[r]-f.usage[r], 0) / f.wsum[r]
}

// rates is the weighted fill (α-fair sharing under ackpath-alpha) for the current step. The
// step's capacities are the network's, scaled by the surface at the current counts. Under
// ackpath, a plain max-min fill first, without the factors, says where queues stand
// (ackFactors), and the sharing runs with each transfer's factor from the queues on its
// acknowledgements' path. The plain fill is max-min's under α-fair sharing too: its
// bottlenecks are what locates a queue, and α-fair sharing has none (a transfer crossing two
// priced resources is held back by both). Where every weight is 1, the plain fill is the
// incremental one of fill.go (f.plain), and it is the sharing itself where nothing else is
// (plainShares: no factor, no α, no surface), or in a step where ackpath slows no transfer.
func (f *wfill) rates(ctx context.Context) error {
	e := f.e
	if f.plainShares() {
		f.plain.solve()
		if f.plainApart { // the rates that moved into e.rate; the others are there
			for _, c := range f.plain.again() {
				e.rate[c] = f.plain.rate[c]
			}
		}
		return nil
	}
	nr := int32(len(e.net.Capacity))
	if f.surf != nil {
		for _, r := range f.used {
			if r < nr {
				f.capacity[r] = e.net.Capacity[r] * f.surf.factor(f.kinds[r], int(e.count[r]), int(e.count[e.net.rev[r]]))
			}
		}
		if f.plain != nil {
			f.plain.invalidate()
		}
	}
	ceiling := e.net.Ceiling
	for _, c := range e.act {
		f.eff[c], f.ceil[c] = f.weight[c], ceiling
	}
	plain := false // the plain fill is the step's sharing
	if f.ackIn != 0 || f.ackOut != 0 || f.ackFull != 0 || f.ackLone != 0 {
		plain = !f.ackFactors(ceiling) && f.alpha == 0 // no factor
	}
	if plain {
		if f.plain != nil && f.plainApart {
			for _, c := range e.act {
				e.rate[c] = f.plain.rate[c]
			}
		}
		return nil
	}
	if f.alpha > 0 {
		return f.fillAlpha(ctx, f.price)
	}
	f.fill()
	return nil
}

// plainShares says the plain fill is every step's sharing: every weight 1, and no ackpath
// factor, α, or surface.
func (f *wfill) plainShares() bool {
	return f.plain != nil && f.surf == nil && f.alpha == 0 &&
		f.ackIn == 0 && f.ackOut == 0 && f.ackFull == 0 && f.ackLone == 0
}

// plainSharing is the rate rule of a wfill whose plain fill is the sharing (plainShares): a
// groupRule, with the plain fill's groups.
type plainSharing struct{ *wfill }

func (p plainSharing) grouping() *grouping { return p.plain.grouping() }

// fill is one weighted progressive filling of the active classes with the weights eff and
// ceilings ceil.
func (f *wfill) fill() {
	e := f.e
	for _, r := range f.used {
		f.usage[r], f.wsum[r], f.unfrozen[r] = 0, 0, 0
	}
	for _, c := range e.act {
		f.frozen[c] = false
		m, w := e.mult[c], f.eff[c]*float64(e.mult[c])
		for _, r := range f.path[c] {
			f.wsum[r] += w
			f.unfrozen[r] += m
		}
	}
	f.heap.items = f.heap.items[:0]
	for _, r := range f.used {
		if f.unfrozen[r] > 0 {
			f.heap.items = append(f.heap.items, fillEvent{r: r, level: f.level(r)})
		}
	}
	nres := int32(len(f.capacity))
	if f.unweighted {
		// Every class reaches its ceiling at the same level: one event for all, index
		// len(capacity).
		f.heap.items = append(f.heap.items, fillEvent{r: nres, level: e.net.Ceiling})
	} else {
		for _, c := range e.act {
			// A class's ceiling is an event beyond the resources: index len(capacity)+c.
			f.heap.items = append(f.heap.items, fillEvent{r: nres + c, level: f.ceil[c] / f.eff[c]})
		}
	}
	f.heap.init()
	left := len(e.act)
	freeze := func(c int32, rate float64) {
		f.frozen[c], e.rate[c] = true, rate
		left--
		m := e.mult[c]
		u, w := rate*float64(m), f.eff[c]*float64(m)
		for _, r := range f.path[c] {
			f.usage[r] += u
			f.wsum[r] -= w
			f.unfrozen[r] -= m
		}
	}
	for left > 0 && f.heap.Len() > 0 {
		ev := f.heap.top()
		if ev.r >= nres { // a class reaches the ceiling
			f.heap.pop()
			if f.unweighted { // all the classes still rising do
				for _, c := range e.act {
					if !f.frozen[c] {
						freeze(c, f.ceil[c])
					}
				}
			} else if c := ev.r - nres; !f.frozen[c] {
				freeze(c, f.ceil[c])
			}
			continue
		}
		if staleTop(&f.heap, f.unfrozen[ev.r], f.capacity[ev.r]-f.usage[ev.r], f.wsum[ev.r]) {
			continue
		}
		f.heap.pop()
		on := f.on[ev.r]
		for i := 0; i < len(on); {
			c := on[i]
			if e.mult[c] == 0 { // finished: drop it from the list
				on[i] = on[len(on)-1]
				on = on[:len(on)-1]
				continue
			}
			i++
			if !f.frozen[c] {
				freeze(c, min(f.eff[c]*ev.level, f.ceil[c]))
			}
		}
		f.on[ev.r] = on
	}
}
