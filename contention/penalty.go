package contention

import (
	"context"
	"fmt"
)

// PenaltyParams parameterise the penalty models.
type PenaltyParams struct {
	// Alpha is the inverse of the network bandwidth, in seconds per byte (α of Martinasso and
	// Méhaut, 5.105e-10 s/B on their InfiniBand testbed); 0 means 8/ceiling.
	Alpha float64
}

// Edge is one communication of a contention graph, from node Src to node Dst.
type Edge struct{ Src, Dst string }

// Penalty is the model of Martinasso and Méhaut (Euro-Par 2011): a sequence of linear models
// in which a communication in a contention-graph step progresses at 1/(α·ρ) bytes per second,
// ρ ≥ 1 being its penalty coefficient in that step (their equations 1–3); the steps are those
// of Algorithm 2. The penalties come from the closed-form rules of their equation (4)
// (ClosedFormPenalties). The model knows one switch only: racks and uplinks are ignored.
type Penalty struct{}

// Name implements Model.
func (Penalty) Name() string { return "penalty" }

// Predict implements Model.
func (m Penalty) Predict(ctx context.Context, net *Network, flows []Flow) (*Prediction, error) {
	return predictSteps(ctx, m, net, flows, nil)
}

func (Penalty) rule(*Network) (bool, func(*engine) rateRule) {
	return false, func(e *engine) rateRule { return newPenaltyRule(e, nil) }
}

// PredictWithPenalties runs the sequence of linear models with penalties from fn, which is
// given the edges of each step's contention graph, in input order, and returns one penalty
// per edge. fn may give parallel edges different penalties, so every transfer is a class of
// its own. It stops as Model.Predict does when ctx is done.
func PredictWithPenalties(ctx context.Context, net *Network, flows []Flow, fn func([]Edge) []float64) (*Prediction, error) {
	e, err := newEngine(ctx, net, flows, true)
	if err != nil {
		return nil, err
	}
	rho := make([]float64, len(e.src))
	return e.run(ctx, ruleFunc(func() error {
		edges := make([]Edge, len(e.act)) // fn may keep it
		for j, c := range e.act {
			f := flows[e.mem[e.memOff[c]]]
			edges[j] = Edge{Src: f.Src, Dst: f.Dst}
		}
		got := fn(edges)
		if len(got) != len(edges) {
			return fmt.Errorf("contention: %d penalties for the %d edges of a step", len(got), len(edges))
		}
		for j, p := range got {
			rho[e.act[j]] = p
		}
		return e.penaltyRates(rho)
	}))
}

// ruleFunc is a rate rule that is a function.
type ruleFunc func() error

func (f ruleFunc) rates(context.Context) error { return f() }

// penaltyAlpha is α of the network's penalty parameters, 8/ceiling when unset.
func penaltyAlpha(net *Network) float64 {
	if net.Penalty.Alpha == 0 {
		return 8 / net.Ceiling
	}
	return net.Penalty.Alpha
}

// penaltyRates sets every active class's rate from its penalty ρ (per class): 1/(α·ρ) bytes
// per second. A penalty below 1 is an error naming the first transfer that has it.
func (e *engine) penaltyRates(rho []float64) error {
	alpha := penaltyAlpha(e.net)
	for _, c := range e.act {
		if !(rho[c] >= 1) {
			i, c := e.firstActive(func(c int32) bool { return !(rho[c] >= 1) })
			return fmt.Errorf("contention: penalty %g for %s→%s, want at least 1", rho[c], e.flows[i].Src, e.flows[i].Dst)
		}
		e.rate[c] = 8 / (alpha * rho[c])
	}
	return nil
}

// penaltyRule gives every active class its closed-form penalty and, with a table, the table's
// penalty where its connected component has a shape the table holds (penalty-table). The
// transfers of a class are parallel edges of the contention graph: the closed form and the
// shapes (EdgeClass depends on an edge's end points only) give them one penalty.
type penaltyRule struct {
	e     *engine
	table *PenaltyTable
	core  penaltyCore
	rho   []float64 // per class
	comps components
}

func newPenaltyRule(e *engine, table *PenaltyTable) *penaltyRule {
	if table != nil && len(table.Entries) == 0 {
		table = nil
	}
	return &penaltyRule{e: e, table: table, rho: make([]float64, len(e.src))}
}

func (p *penaltyRule) rates(context.Context) error {
	e := p.e
	p.core.compute(e.act, e.src, e.dst, e.mult, e.nodeCount, p.rho)
	if p.table != nil {
		p.lookup()
	}
	return e.penaltyRates(p.rho)
}

// ClosedFormPenalties computes the penalty of every edge of a contention graph by equation (4)
// of Martinasso and Méhaut: ρ(e) = max over the edges e' leaving e's source s of
// δ⁺(s) + k(e'), with δ⁺ the out-degree, δ⁻ the in-degree, E⋈(e) the edges into e's
// destination d from other sources, and
//
//	(a) k(e) = 0 when δ⁻(d) ≤ δ⁺(s) and every other source s' sending to d has δ⁺(s') = δ⁺(s);
//	(b) k(e) = 1/(max ρ(e') − 1) over e' ∈ E⋈(e) when δ⁺(s) = 1;
//	(c) k(e) = Σ over the edges e' leaving s, Σ over e'' = (s'', d') ∈ E⋈(e'), of 1/δ⁺(s'').
//
// Interpretations: rule (a)'s "or δ⁻(d') = 0" clause is void (a destination of an edge has
// in-degree at least 1) and is dropped. Rule (b) uses the final penalties of the competing
// edges, so it is applied after the others, and only to competitors whose source sends more
// than one communication (their penalties come from (a) or (c)); an edge of a one-edge source
// whose competitors are all one-edge sources too (an incast) falls to rule (c), which gives
// the n-way fair share. With these readings the four examples of their Fig. 2 come out as
// printed: 3; 4 and 2.66; 4 and 1.33.
func ClosedFormPenalties(edges []Edge) []float64 {
	ix := indexEdges(len(edges), func(i int) (string, string) { return edges[i].Src, edges[i].Dst })
	// One class per (source, destination) pair, with its parallel edges as multiplicity.
	src, dst := make([]int32, ix.pairs), make([]int32, ix.pairs)
	mult, pairs := make([]int32, ix.pairs), make([]int32, ix.pairs)
	for i, p := range ix.pair {
		src[p], dst[p] = int32(ix.src[i]), int32(ix.dst[i])
		mult[p]++
	}
	for p := range pairs {
		pairs[p] = int32(p)
	}
	rho := make([]float64, ix.pairs)
	var c penaltyCore
	c.compute(pairs, src, dst, mult, ix.nodes, rho)
	out := make([]float64, len(edges))
	for i, p := range ix.pair {
		out[i] = rho[p]
	}
	return out
}

// edgeIndex numbers the nodes and the (source, destination) pairs of a list of edges.
type edgeIndex struct {
	src, dst, pair []int
	nodes, pairs   int
}

func indexEdges(n int, edge func(i int) (string, string)) edgeIndex {
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
	ix := edgeIndex{src: make([]int, n), dst: make([]int, n), pair: make([]int, n)}
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

// penaltyCore computes closed-form penalties on integer node indices for classes of parallel
// edges (class c: mult[c] edges from node src[c] to node dst[c], one class per pair), reusing
// its buffers from call to call. It works with per-node aggregates so that the cost is linear
// in the number of classes and nodes:
//
//	conflict(e) = Σ over edges into d of 1/δ⁺(their source) − (edges s→d)/δ⁺(s)
//	rule (c) of s = δ⁺(s) + Σ over the edges e' leaving s of conflict(e')
//	rule (a) of e: δ⁻(d) ≤ δ⁺(s) and every source sending to d has δ⁺ = δ⁺(s)
//
// Parallel edges have the same penalty (every term depends on the end points only), so a
// class of m edges counts m times in the sums at once.
type penaltyCore struct {
	out, in, minOut, maxOut   []int32
	inSum, sumConflict, worst []float64
	anyC                      []bool
}

func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	s = s[:n]
	clear(s)
	return s
}

// compute sets rho[c], for every class c listed in classes, to the penalty of its edges.
func (c *penaltyCore) compute(classes, src, dst, mult []int32, nNodes int, rho []float64) {
	c.out, c.in = grow(c.out, nNodes), grow(c.in, nNodes)
	c.minOut, c.maxOut = grow(c.minOut, nNodes), grow(c.maxOut, nNodes)
	c.inSum, c.sumConflict, c.worst = grow(c.inSum, nNodes), grow(c.sumConflict, nNodes), grow(c.worst, nNodes)
	c.anyC = grow(c.anyC, nNodes)
	for _, k := range classes {
		c.out[src[k]] += mult[k]
		c.in[dst[k]] += mult[k]
	}
	for _, k := range classes {
		s, d := src[k], dst[k]
		c.inSum[d] += float64(mult[k]) / float64(c.out[s])
		if c.minOut[d] == 0 || c.out[s] < c.minOut[d] {
			c.minOut[d] = c.out[s]
		}
		c.maxOut[d] = max(c.maxOut[d], c.out[s])
	}
	ruleA := func(k int32) bool {
		s, d := src[k], dst[k]
		return c.in[d] <= c.out[s] && c.minOut[d] == c.out[s] && c.maxOut[d] == c.out[s]
	}
	// A one-edge source is taken by rule (b) when some other source sending to its
	// destination sends more than one communication.
	ruleB := func(k int32) bool { return c.out[src[k]] == 1 && !ruleA(k) && c.maxOut[dst[k]] > 1 }
	for _, k := range classes {
		s, d, m := src[k], dst[k], float64(mult[k])
		c.sumConflict[s] += m * (c.inSum[d] - m/float64(c.out[s]))
		if !ruleA(k) && !ruleB(k) {
			c.anyC[s] = true
		}
	}
	// ρ of a source's edges under (a) and (c): the max over its edges of δ⁺(s) + k.
	groupRho := func(s int32) float64 {
		if c.anyC[s] {
			return float64(c.out[s]) + c.sumConflict[s]
		}
		return float64(c.out[s])
	}
	for _, k := range classes {
		if c.out[src[k]] > 1 {
			c.worst[dst[k]] = max(c.worst[dst[k]], groupRho(src[k]))
		}
	}
	for _, k := range classes {
		if ruleB(k) {
			rho[k] = 1 + 1/(c.worst[dst[k]]-1)
		} else {
			rho[k] = groupRho(src[k])
		}
	}
}
