package contention

import (
	"context"
	"fmt"
	"math"
	"math/bits"
	"slices"

	"github.com/commcal/commcal/cluster"
)

// engine runs Algorithm 2 of Zhu et al. (CCPE 2014, §6.2) for the rate-based models: while
// transfers remain, a rate rule gives every active transfer its rate, the clock advances to
// the earliest completion Δt = min(m·8/rate), every transfer sends Δt·rate/8 bytes, and the
// transfers that are done (within finishTol of Δt) are retired — all those that finish
// together in one step.
//
// The engine works on classes rather than transfers. A class is the transfers of one
// (source, destination) pair: they cross the same directed resources, so every rule gives them
// the same rate in exact arithmetic (each rule says why), and they send the same number of
// bytes per step. A class therefore keeps one count of bytes sent (sent) and its members in
// increasing order of size: the members still active are a suffix of that order, the next to
// finish is the first of it, and a step retires a prefix of what is left. A step costs
// O(active classes + resources) whatever the number of transfers (run), less where the rule
// shares its rates by groups of classes (runGrouped), and nothing is allocated after set-up
// (but where a group outgrows the room its heap got at the first step).
// Rules that cannot share rates within a pair (asymmetric-fitted with
// 0 < φ < 1, PredictWithPenalties' arbitrary penalties, the stochastic learned model's
// per-transfer weights) ask for singletons: one class per transfer, in input order, so that
// they see the transfers one by one as the reference does.
//
// Members of a class that finish together in exact arithmetic finish in one step here. The
// reference implementation (reference_test.go), which adds their rates one by one, gives them
// rates a few ulps apart and on large patterns splits such completions into steps a few 1e-13
// apart: the times agree, the step counts can differ there (equality_test.go).
//
// What the engine keeps up to date for the rules, step after step, by subtracting the
// retired transfers instead of recounting:
//
//   - count: the active transfers on each resource (|S| of Algorithm 1, max-min's unfrozen
//     transfers at the start of a step);
//   - act: the active classes in increasing class order (the order of first appearance in
//     the input; under runGrouped, finished classes too, until they are half of it), with
//     mult, each class's active members, and changed, the classes whose mult the last step
//     lowered, for rules that keep copies of it.
type engine struct {
	net   *Network
	flows []Flow

	// Per class, indexed by class ID (classes are numbered in order of first appearance).
	routes   []route
	src, dst []int32   // node indices
	memOff   []int32   // class c's transfers are mem[memOff[c]:memOff[c+1]]
	mem      []int32   // transfer indices, class by class, by increasing size then index
	head     []int32   // mem[head[c]:memOff[c+1]] are still active
	mult     []int32   // active members: memOff[c+1] − head[c]
	next     []float64 // size of the next member to finish, flows[mem[head[c]]].Bytes
	sent     []float64 // bytes each active member has sent (run's)
	rate     []float64 // this step's rate, set by the rule, in bits per second
	tleft    []float64 // time the next member needs at this step's rate (run's)
	act      []int32   // active classes, increasing (and, under runGrouped, some finished ones)
	changed  []int32   // classes that lost members in the last step (mult, possibly 0)
	left     int32     // active transfers
	// runGrouped's: the groups, the array their heaps are carved from, their instants and the
	// groups to refresh; per class, its target, group and place in its group's heap; how many
	// finished classes act holds.
	grp       []lazyGroup
	items     []keyItem
	size      []int32 // scratch of regroupAll
	fin       keyHeap
	dirty     []bool
	touched   []int32
	target    []float64
	in        []int32
	gpos      []int32
	dead      int
	count     []int32 // active transfers per resource
	nodeCount int
	steps     int
	// observe, when set (tests), is called after each step's rates are set.
	observe func(e *engine)
}

// maxPath is the most resources a path crosses: NIC out, uplink up, uplink down, NIC in.
const maxPath = 4

// route is the resources a class crosses, in order, and the reverse direction of each, in
// one record so that a rule reads a class's path from one place.
type route struct {
	res, rev [maxPath]int32
	n        int32
}

// rateRule is a model's way of sharing the network: rates sets e.rate[c] for every active
// class c of e, for the current step. A rule whose step can loop for long (α-fair sharing's
// price iteration) stops when ctx is done, returning stopped's error; the others take O(active
// classes + resources) a step, and the step loop's own check covers them.
type rateRule interface {
	rates(ctx context.Context) error
}

// stopped is the error of a prediction that ctx stopped before its end: ctx's error wrapped
// (errors.Is(err, context.Canceled) holds for an interruption), or nil while ctx is live.
// ctx.Err() is an atomic load, a few nanoseconds: the step loop and the α-fair iteration call
// it on every step and iteration, each of which costs far more (O(active classes +
// resources) at least), rather than counting steps between calls.
func stopped(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("contention: prediction stopped: %w", err)
	}
	return nil
}

// newEngine checks the flows (nodePairs) and groups them into classes (one per transfer when
// singletons). It stops when ctx is done, looking at it between its passes over the flows:
// each takes a fraction of a second at 10⁷ flows, the whole set-up more than one.
func newEngine(ctx context.Context, net *Network, flows []Flow, singletons bool) (*engine, error) {
	nodes := net.Cluster.Nodes()
	e := &engine{net: net, flows: flows, nodeCount: len(nodes), count: make([]int32, len(net.Capacity))}
	src, dst, err := nodePairs(net, flows)
	if err == nil {
		err = stopped(ctx)
	}
	if err != nil {
		return nil, err
	}
	// Classes, numbered in order of first appearance: a dense table of pairs when it is
	// small (4 MiB for 1,000 nodes), a map beyond.
	cls := make([]int32, len(flows))
	var pairs classTable
	if !singletons {
		pairs = newClassTable(len(nodes))
	}
	for i := range flows {
		s, d, c := src[i], dst[i], int32(len(e.src))
		if !singletons {
			if old, ok := pairs.find(s, d, c); ok {
				cls[i] = old
				continue
			}
		}
		cls[i] = c
		e.src, e.dst = append(e.src, s), append(e.dst, d)
	}
	if err := stopped(ctx); err != nil {
		return nil, err
	}
	nc := len(e.src)
	e.routes = make([]route, nc)
	pm := newPathMaker(net)
	for c := range nc {
		e.routes[c] = pm.route(e.src[c], e.dst[c])
	}
	e.memOff = make([]int32, nc+1)
	for _, c := range cls {
		e.memOff[c+1]++
	}
	for c := range nc {
		e.memOff[c+1] += e.memOff[c]
	}
	e.mem = make([]int32, len(flows))
	fill := slices.Clone(e.memOff[:nc])
	for i, c := range cls {
		e.mem[fill[c]] = int32(i)
		fill[c]++
	}
	if err := stopped(ctx); err != nil {
		return nil, err
	}
	bySize := func(a, b int32) int {
		if flows[a].Bytes != flows[b].Bytes {
			if flows[a].Bytes < flows[b].Bytes {
				return -1
			}
			return 1
		}
		return int(a - b)
	}
	e.head, e.mult = make([]int32, nc), make([]int32, nc)
	e.next, e.rate = make([]float64, nc), make([]float64, nc)
	e.act = make([]int32, nc)
	for c := range nc {
		if m := e.mem[e.memOff[c]:e.memOff[c+1]]; len(m) > 1 && !slices.IsSortedFunc(m, bySize) {
			slices.SortFunc(m, bySize)
		}
	}
	if err := stopped(ctx); err != nil {
		return nil, err
	}
	e.reset()
	return e, nil
}

// reset puts the engine in its state before the first step: every class active with all its
// members, nothing sent. newEngine ends with it, and a model running the step loop several
// times on one pattern (the learned models' weight samples) calls it between runs, so that
// classes and routes are built once.
func (e *engine) reset() {
	nc := len(e.src)
	clear(e.count)
	e.act = e.act[:nc]
	for c := range nc {
		e.head[c], e.mult[c] = e.memOff[c], e.memOff[c+1]-e.memOff[c]
		e.next[c], e.act[c] = e.flows[e.mem[e.memOff[c]]].Bytes, int32(c)
		for _, r := range e.pathOf(int32(c)) {
			e.count[r] += e.mult[c]
		}
	}
	e.changed, e.left, e.steps = e.changed[:0], int32(len(e.flows)), 0
}

// nodePairs returns the node indices of every transfer's source and destination. A transfer
// the cluster cannot carry (a node it does not have, a transfer from a node to itself, a size
// that is not a positive finite number of bytes) is bad input (internal/badinput) naming the
// first such transfer by its index, source and destination (checkFlow).
func nodePairs(net *Network, flows []Flow) (src, dst []int32, err error) {
	cl := net.Cluster
	src, dst = make([]int32, len(flows)), make([]int32, len(flows))
	ix := newNodeIndex(cl.Nodes())
	for i, f := range flows {
		s, okS := ix.lookup(f.Src)
		d, okD := ix.lookup(f.Dst)
		if !okS || !okD || s == d || !(f.Bytes > 0) || math.IsInf(f.Bytes, 0) {
			if err := checkFlow(cl, i, f); err != nil {
				return nil, nil, err
			}
			panic(fmt.Sprintf("contention: transfer %d (%q → %q): refused by the node index but not by checkFlow", i, f.Src, f.Dst))
		}
		src[i], dst[i] = s, d
	}
	return src, dst, nil
}

// nodeIndex maps node names to indices, remembering the last two names found: patterns list
// many transfers from one source, or to one destination, in a row.
type nodeIndex struct {
	index     map[string]int32
	last      [2]string
	lastIndex [2]int32
	lastFound [2]bool
	turn      int
}

func newNodeIndex(nodes []cluster.Node) *nodeIndex {
	ix := &nodeIndex{index: make(map[string]int32, len(nodes))}
	for i, n := range nodes {
		ix.index[n.Name] = int32(i)
	}
	return ix
}

func (ix *nodeIndex) lookup(name string) (int32, bool) {
	for k := range ix.last {
		if ix.lastFound[k] && ix.last[k] == name {
			return ix.lastIndex[k], true
		}
	}
	i, ok := ix.index[name]
	if ok {
		k := ix.turn
		ix.turn = 1 - k
		ix.last[k], ix.lastIndex[k], ix.lastFound[k] = name, i, true
	}
	return i, ok
}

// classTable finds the class of a (source, destination) pair of node indices.
type classTable struct {
	n     int32
	dense []int32 // class+1 per pair s·n+d, 0 for none
	m     map[uint64]int32
}

func newClassTable(nodes int) classTable {
	if nodes*nodes <= 1<<22 {
		return classTable{n: int32(nodes), dense: make([]int32, nodes*nodes)}
	}
	return classTable{n: int32(nodes), m: make(map[uint64]int32)}
}

// find returns the class of pair (s, d), or records c as its class and returns false.
func (t classTable) find(s, d, c int32) (int32, bool) {
	if t.dense != nil {
		k := int(s)*int(t.n) + int(d)
		if old := t.dense[k]; old > 0 {
			return old - 1, true
		}
		t.dense[k] = c + 1
		return 0, false
	}
	k := uint64(s)<<32 | uint64(d)
	if old, ok := t.m[k]; ok {
		return old, true
	}
	t.m[k] = c
	return 0, false
}

// pathMaker builds routes from pieces of Cluster.Path, whose order it documents: a node's NIC
// out starts every path from it, its NIC in ends every path to it, and the resources between
// (none within a rack) depend on the two racks only. So one Path call per node and per pair
// of racks serves every class, instead of one per class (with two name lookups and an
// allocation each).
type pathMaker struct {
	cl      *cluster.Cluster
	nodes   []cluster.Node
	reverse []int
	out, in []int32
	between map[[2]int]route // resources between the NICs, per pair of racks
}

func newPathMaker(net *Network) *pathMaker {
	n := len(net.Cluster.Nodes())
	pm := &pathMaker{cl: net.Cluster, nodes: net.Cluster.Nodes(), reverse: net.reverse(),
		out: make([]int32, n), in: make([]int32, n), between: map[[2]int]route{}}
	for i := range n {
		pm.out[i], pm.in[i] = -1, -1
	}
	return pm
}

// path is Cluster.Path between nodes s and d, which the engine has checked.
func (pm *pathMaker) path(s, d int) []int {
	p, err := pm.cl.Path(pm.nodes[s].Name, pm.nodes[d].Name)
	if err != nil {
		panic(fmt.Sprintf("contention: %v", err))
	}
	if len(p) > maxPath {
		panic(fmt.Sprintf("contention: a path of %d resources, at most %d expected", len(p), maxPath))
	}
	return p
}

// other is a node other than i.
func other(i int) int {
	if i == 0 {
		return 1
	}
	return 0
}

// route returns the route of a transfer from node s to node d.
func (pm *pathMaker) route(s, d int32) route {
	if pm.out[s] < 0 {
		pm.out[s] = int32(pm.path(int(s), other(int(s)))[0])
	}
	if pm.in[d] < 0 {
		p := pm.path(other(int(d)), int(d))
		pm.in[d] = int32(p[len(p)-1])
	}
	var rt route
	if rs, rd := pm.nodes[s].RackIndex, pm.nodes[d].RackIndex; rs != rd {
		mid, ok := pm.between[[2]int{rs, rd}]
		if !ok {
			p := pm.path(int(s), int(d))
			for k, r := range p[1 : len(p)-1] {
				mid.res[k] = int32(r)
			}
			mid.n = int32(len(p) - 2)
			pm.between[[2]int{rs, rd}] = mid
		}
		copy(rt.res[1:], mid.res[:mid.n])
		rt.n = mid.n
	}
	rt.res[0], rt.res[rt.n+1] = pm.out[s], pm.in[d]
	rt.n += 2
	for k := range rt.n {
		rt.rev[k] = int32(pm.reverse[rt.res[k]])
	}
	return rt
}

// pathOf is the resources class c crosses; active its active members.
func (e *engine) pathOf(c int32) []int32 { rt := &e.routes[c]; return rt.res[:rt.n] }
func (e *engine) active(c int32) []int32 { return e.mem[e.head[c]:e.memOff[c+1]] }

// run is the step loop. It returns each transfer's completion time, plus latencies, or
// stopped's error once ctx is done (checked at every step). A rule that shares its rates by
// groups (groupRule) runs in runGrouped; the others here, where every step visits every active
// class twice: its time left at its rate, then its bytes sent.
func (e *engine) run(ctx context.Context, rule rateRule) (*Prediction, error) {
	if gr, ok := rule.(groupRule); ok {
		return e.runGrouped(ctx, gr)
	}
	p := &Prediction{Times: make([]float64, len(e.flows))}
	if nc := len(e.src); len(e.sent) != nc {
		e.sent, e.tleft = make([]float64, nc), make([]float64, nc)
	}
	clear(e.sent)
	t := 0.0
	for len(e.act) > 0 {
		if err := e.startStep(ctx, rule, p); err != nil {
			return nil, err
		}
		dt := math.Inf(1)
		for _, c := range e.act {
			r := e.rate[c]
			if !validRate(r) {
				return nil, e.badRate(func(c int32) float64 { return e.rate[c] })
			}
			tl := (e.next[c] - e.sent[c]) * 8 / r
			e.tleft[c] = tl
			dt = min(dt, tl)
		}
		t += dt
		limit := dt * (1 + finishTol)
		keep := e.act[:0]
		e.changed = e.changed[:0]
		for _, c := range e.act {
			r := e.rate[c]
			if e.tleft[c] <= limit {
				e.changed = append(e.changed, c)
				if e.retire(c, e.sent[c], r, limit, t, p.Times) == 0 {
					continue
				}
			}
			e.sent[c] += dt * r / 8
			keep = append(keep, c)
		}
		e.act = keep
	}
	p.Steps = e.steps
	e.addLatency(p)
	return p, nil
}

// groupRule is a rate rule whose active classes share their rates by groups: every active
// class's rate is its group's. Max-min's fill is one: a class's group is the resource it froze
// at, whose level is the rate of every class it froze. From one step to the next few classes
// change groups and few groups change rates, where a completion moves the rates of many
// classes: a completion reopens only the levels at and above its class's, and a group's
// classes move together (docs/performance.md gives the counts).
type groupRule interface {
	rateRule
	// grouping returns the same grouping at every call, its rate sized for every group from
	// the rule's making, before its first rates call.
	grouping() *grouping
}

// grouping is how a groupRule's last rates call shared the rates.
type grouping struct {
	of    []int32   // per class, its group (read for the active classes only)
	rate  []float64 // per group, its rate in bits per second
	moved []int32   // the classes the last call put in another group
	set   []int32   // the groups whose rate the last call set
	all   bool      // the last call set every active class's group and every rate (moved, set unused)
}

// rateOf is class c's rate: its group's.
func (g *grouping) rateOf(c int32) float64 { return g.rate[g.of[c]] }

// lazyGroup is runGrouped's record of a group: a count of bytes that grows as each member of
// its classes sends, bytes at instant since and at rate bits per second since then (the last of
// the group's rates the step loop took), and its classes by target (cls): class c's next
// member finishes when the count reaches target[c], having target[c] − count bytes left.
type lazyGroup struct {
	bytes, since, rate float64
	cls                keyHeap
}

// bytesAt is g's count at instant t.
func (g *lazyGroup) bytesAt(t float64) float64 { return g.bytes + (t-g.since)*g.rate/8 }

// at is the instant at which g's count reaches b.
func (g *lazyGroup) at(b float64) float64 { return g.since + (b-g.bytes)*8/g.rate }

// runGrouped is the step loop for a groupRule, at a cost per step of O((groups whose rate
// changed + classes that changed groups or finish) · log classes) instead of O(active classes).
// Bytes are counted per group, as virtual time is in fair queueing: a group's members all send
// at its rate, so that one count (lazyGroup), brought up to date only when the group's rate
// changes, serves them all; class c's next member finishes when its group's count reaches
// target[c]. The groups are kept by the instant their earliest target is reached (fin), and
// each group's classes by target. A step takes the earliest instant, t + Δt, and retires every
// class whose instant is within Δt·(1 + finishTol) of the step's start, as run does with its
// times left, or within clockTol of the step's end. A class that changes groups takes its bytes
// left over to the new group's count; one that retires members moves its target on by the next
// member's extra size. A group's rate that moves by less than rateTol of itself is not taken.
// Finished classes stay in act (their active members none) until they are half of it, so that
// dropping them costs O(1) a class.
func (e *engine) runGrouped(ctx context.Context, rule groupRule) (*Prediction, error) {
	p := &Prediction{Times: make([]float64, len(e.flows))}
	nc := len(e.src)
	if len(e.target) != nc {
		e.target, e.in, e.gpos = make([]float64, nc), make([]int32, nc), make([]int32, nc)
	}
	for c := range nc {
		e.in[c], e.gpos[c] = -1, -1
	}
	gr := rule.grouping() // the same at every step (groupRule)
	if len(e.grp) != len(gr.rate) {
		e.grp = make([]lazyGroup, len(gr.rate))
		for g := range e.grp {
			e.grp[g].cls.pos = e.gpos
		}
		e.fin.pos, e.dirty = make([]int32, len(gr.rate)), make([]bool, len(gr.rate))
	}
	// Every group empty, from 0 at instant 0 without a rate: a run stopped on its way (ctx, a
	// bad rate) leaves groups behind.
	for g := range e.grp {
		lg := &e.grp[g]
		lg.cls.items = lg.cls.items[:0]
		lg.bytes, lg.since, lg.rate = 0, 0, 0
		e.fin.pos[g], e.dirty[g] = -1, false
	}
	e.fin.items, e.touched, e.dead = e.fin.items[:0], e.touched[:0], 0
	t := 0.0
	for e.left > 0 {
		if err := e.startStep(ctx, rule, p); err != nil {
			return nil, err
		}
		if gr.all {
			if t != 0 {
				return nil, fmt.Errorf("contention: a grouped run's fill started from nothing at t = %g s, after its first step: the bytes its classes sent would be lost", t)
			}
			if err := e.regroupAll(gr); err != nil {
				return nil, err
			}
		} else {
			// The classes move at the rates in force until t, then the groups take their
			// new rates.
			for _, c := range gr.moved {
				e.moveClass(c, gr.of[c], t)
			}
			for _, g := range gr.set {
				r, lg := gr.rate[g], &e.grp[g]
				if !validRate(r) {
					return nil, e.badRate(gr.rateOf)
				}
				if math.Abs(r-lg.rate) <= rateTol*lg.rate {
					continue
				}
				lg.bytes, lg.since, lg.rate = lg.bytesAt(t), t, r
				e.touch(g)
			}
			e.refresh(t)
		}
		dt := max(e.fin.items[0].key-t, 0)
		tn := t + dt
		limit := dt * (1 + finishTol)
		// The finishing classes leave their groups' heaps first, then those with members
		// left come back with their next member's target: none is taken twice in a step.
		e.changed = e.changed[:0]
		end := t + limit + tn*clockTol
		for len(e.fin.items) > 0 && e.fin.items[0].key <= end {
			g := e.fin.items[0].id
			e.fin.remove(g)
			e.changed = e.grp[g].takeDue(end, e.changed)
			e.touch(g)
		}
		for _, c := range e.changed {
			lg := &e.grp[e.in[c]]
			next := e.next[c]
			sent := next - (e.target[c] - lg.bytesAt(t)) // at the step's start
			if e.retire(c, sent, lg.rate, limit, tn, p.Times) == 0 {
				e.in[c] = -1
				e.dead++
				continue
			}
			e.target[c] += e.next[c] - next
			lg.cls.set(c, e.target[c])
		}
		e.refresh(tn)
		t = tn
		if 2*e.dead > len(e.act) {
			keep := e.act[:0]
			for _, c := range e.act {
				if e.mult[c] > 0 {
					keep = append(keep, c)
				}
			}
			e.act, e.dead = keep, 0
		}
	}
	e.act, e.dead = e.act[:0], 0
	p.Steps = e.steps
	e.addLatency(p)
	return p, nil
}

// regroupAll puts every active class in its group, with every group at its new rate: a fill
// from nothing, which in a grouped run happens at its first step only (a fill starts from
// nothing after invalidate: between runs, and within a run where surface factors change the
// capacities, a run that is never grouped, plainShares), so that runGrouped has just emptied
// the groups (count 0 at instant 0), no class has sent anything, and no class is in a group;
// runGrouped refuses a fill from nothing later in a run, which this would get wrong. The groups' heaps are carved from one array, each with room for a quarter more
// classes than it starts with (a group that outgrows it moves to an array of its own), and
// built in O(classes).
func (e *engine) regroupAll(gr *grouping) error {
	for _, c := range e.act {
		if e.mult[c] == 0 {
			continue
		}
		if !validRate(gr.rateOf(c)) {
			return e.badRate(gr.rateOf)
		}
		e.target[c] = e.next[c] // its group's count, at 0, reaches it when its next member is done
	}
	size := e.groupSizes(gr)
	total := 0
	for _, n := range size {
		total += heapRoom(n)
	}
	if cap(e.items) < total {
		e.items = make([]keyItem, total)
	}
	items := e.items[:0]
	for g := range e.grp {
		n := len(items) + heapRoom(size[g])
		e.grp[g].cls.items = items[len(items):len(items):n]
		items = items[:n]
	}
	for _, c := range e.act {
		if e.mult[c] == 0 {
			continue
		}
		g := gr.of[c]
		e.in[c] = g
		lg := &e.grp[g]
		lg.rate = gr.rate[g]
		lg.cls.items = append(lg.cls.items, keyItem{e.target[c], c})
	}
	for g := range e.grp {
		if lg := &e.grp[g]; len(lg.cls.items) > 0 {
			lg.cls.init()
			e.touch(int32(g))
		}
	}
	e.refresh(0)
	return nil
}

// heapRoom is the room a group's heap gets at a fill from nothing for its n classes: a quarter
// more, and a few.
func heapRoom(n int32) int { return int(n + n/4 + 4) }

// groupSizes counts each group's active classes.
func (e *engine) groupSizes(gr *grouping) []int32 {
	if cap(e.size) < len(e.grp) {
		e.size = make([]int32, len(e.grp))
	}
	size := e.size[:len(e.grp)]
	clear(size)
	for _, c := range e.act {
		if e.mult[c] > 0 {
			size[gr.of[c]]++
		}
	}
	return size
}

// takeDue takes out of g's heap the classes whose next member finishes by instant end, and
// appends them to out: one by one when they are few, else by a pass that keeps the others
// and orders them again (O(classes of g), where taking k one by one costs k·log of them; at
// the all-to-all's last step every class of a group finishes).
func (g *lazyGroup) takeDue(end float64, out []int32) []int32 {
	h := &g.cls
	k := 0
	for _, it := range h.items {
		if g.at(it.key) <= end {
			k++
		}
	}
	if n := len(h.items); k*bits.Len(uint(n)) < n {
		for range k {
			c := h.items[0].id
			h.remove(c)
			out = append(out, c)
		}
		return out
	}
	keep := h.items[:0]
	for _, it := range h.items {
		if g.at(it.key) <= end {
			h.pos[it.id] = -1
			out = append(out, it.id)
		} else {
			keep = append(keep, it)
		}
	}
	h.items = keep
	h.init()
	return out
}

// moveClass moves class c into group g at instant t, its bytes sent carried over.
func (e *engine) moveClass(c, g int32, t float64) {
	old := e.in[c]
	lo, lg := &e.grp[old], &e.grp[g]
	left := e.target[c] - lo.bytesAt(t) // bytes its next member has left
	lo.cls.remove(c)
	e.in[c], e.target[c] = g, lg.bytesAt(t)+left
	lg.cls.set(c, e.target[c])
	e.touch(old)
	e.touch(g)
}

// touch marks group g for refresh.
func (e *engine) touch(g int32) {
	if !e.dirty[g] {
		e.dirty[g] = true
		e.touched = append(e.touched, g)
	}
}

// refresh puts the touched groups back in fin at the instant of their earliest target, or
// takes them out when they have no class left, and then starts them again as new, from 0 at
// instant t without a rate: the next class to enter one finds it as in a fresh run, and its
// count stays near the size of one class's bytes.
func (e *engine) refresh(t float64) {
	for _, g := range e.touched {
		e.dirty[g] = false
		lg := &e.grp[g]
		if len(lg.cls.items) == 0 {
			if e.fin.pos[g] >= 0 {
				e.fin.remove(g)
			}
			lg.bytes, lg.since, lg.rate = 0, t, 0
			continue
		}
		e.fin.set(g, lg.at(lg.cls.items[0].key))
	}
	e.touched = e.touched[:0]
}

// rateTol and clockTol are runGrouped's tolerances. A group whose rate the rule moves by less
// than rateTol of itself keeps sending at the rate in force: max-min's incremental fill takes
// its classes' usage off and on again, and the groups it fills again at an unchanged level come
// back a few ulps off, where rateTol is some 45 ulps; keeping their rates spares their updates,
// and moves a completion by less than rateTol of its time. The instants are absolute (a
// group's last change plus the time its count takes to reach a target), so two classes that
// finish together in exact arithmetic get instants apart by rounding to the clock and to the
// counts, and by rateTol of it, where run's times left differ by a few ulps of themselves: a
// step shorter than rateTol of the clock would split such a completion in two steps. Instants
// within clockTol of the step's end (4·10⁻¹³ s at 4 s) finish in it.
const (
	rateTol  = 1e-14
	clockTol = 1e-13
)

// startStep checks ctx, has the rule set the step's rates, counts the step and, at the first
// step, records every transfer's rate.
func (e *engine) startStep(ctx context.Context, rule rateRule, p *Prediction) error {
	if err := stopped(ctx); err != nil {
		return err
	}
	if err := rule.rates(ctx); err != nil {
		return err
	}
	e.steps++
	if e.observe != nil {
		e.observe(e)
	}
	if p.FirstRates == nil {
		p.FirstRates = make([]float64, len(e.flows))
		for _, c := range e.act {
			for _, i := range e.active(c) {
				p.FirstRates[i] = e.rate[c]
			}
		}
	}
	return nil
}

// badRate is the error of a step in which some active class c got a rate, rate(c) (e.rate[c],
// or its group's under runGrouped), that is not valid, naming the first such transfer in input
// order.
func (e *engine) badRate(rate func(c int32) float64) error {
	i, c := e.firstActive(func(c int32) bool { return !validRate(rate(c)) })
	return fmt.Errorf("contention: transfer %d (%s→%s) got rate %g bit/s", i, e.flows[i].Src, e.flows[i].Dst, rate(c))
}

// validRate says r is a rate the step loop can take: a positive finite number (not NaN).
func validRate(r float64) bool { return r > 0 && !math.IsInf(r, 0) }

// retire ends, at instant t, the members of class c that finish in a step no longer than
// limit (the step's length with finishTol), c having sent sent bytes a member at the step's
// start, at rate r: its next member, and each other whose time left is within limit (one of
// the next one's size with it whatever the rounding). It updates the counts and the class's
// next size, and returns the members c has left.
func (e *engine) retire(c int32, sent, r, limit, t float64, times []float64) int32 {
	flows := e.flows
	h, end, first := e.head[c], e.memOff[c+1], e.next[c]
	times[e.mem[h]] = t
	for h++; h < end; h++ {
		if b := flows[e.mem[h]].Bytes; b != first && (b-sent)*8/r > limit {
			break
		}
		times[e.mem[h]] = t
	}
	done := h - e.head[c]
	e.head[c], e.mult[c], e.left = h, e.mult[c]-done, e.left-done
	rt := &e.routes[c]
	for _, res := range rt.res[:rt.n] {
		e.count[res] -= done
	}
	if h < end {
		e.next[c] = flows[e.mem[h]].Bytes
	}
	return e.mult[c]
}

// firstActive returns the smallest index of an active transfer whose class satisfies bad,
// and that class: the transfer a step loop that scans transfers in input order reports.
func (e *engine) firstActive(bad func(c int32) bool) (int, int32) {
	first, class := len(e.flows), int32(-1)
	for _, c := range e.act {
		if !bad(c) {
			continue
		}
		for _, i := range e.active(c) {
			if int(i) < first {
				first, class = int(i), c
			}
		}
	}
	return first, class
}

// addLatency adds the path class's α to every time, when the network has latencies.
func (e *engine) addLatency(p *Prediction) {
	if len(e.net.Latency) == 0 {
		return
	}
	nodes := e.net.Cluster.Nodes()
	for c := range e.src {
		class := cluster.InterRack
		if nodes[e.src[c]].RackIndex == nodes[e.dst[c]].RackIndex {
			class = cluster.IntraRack
		}
		for _, i := range e.mem[e.memOff[c]:e.memOff[c+1]] {
			p.Times[i] += e.net.Latency[class]
		}
	}
}

// stepModel is a model that runs on the engine.
type stepModel interface {
	Model
	// rule says whether the model needs one class per transfer and makes its rate rule.
	rule(net *Network) (singletons bool, newRule func(e *engine) rateRule)
}

// predictSteps runs a step model until ctx is done; observe, when set (tests), sees every
// step's rates.
func predictSteps(ctx context.Context, m stepModel, net *Network, flows []Flow, observe func(*engine)) (*Prediction, error) {
	singletons, newRule := m.rule(net)
	e, err := newEngine(ctx, net, flows, singletons)
	if err != nil {
		return nil, err
	}
	e.observe = observe
	return e.run(ctx, newRule(e))
}
