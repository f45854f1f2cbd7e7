package contention

import (
	"fmt"
	"math"
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
func (Penalty) Predict(net *Network, flows []Flow) (*Prediction, error) {
	// Index nodes and pairs once for the whole pattern; each step then computes on integers.
	ix := indexEdges(len(flows), func(i int) (string, string) { return flows[i].Src, flows[i].Dst })
	var core penaltyCore
	var src, dst, pair []int
	return predictPenalties(net, flows, func(a *active) []float64 {
		src, dst, pair = src[:0], dst[:0], pair[:0]
		for _, id := range a.ids {
			src, dst, pair = append(src, ix.src[id]), append(dst, ix.dst[id]), append(pair, ix.pair[id])
		}
		return core.compute(src, dst, pair, ix.nodes, ix.pairs)
	})
}

// PredictWithPenalties runs the sequence of linear models with penalties from fn, which is
// given the edges of each step's contention graph and returns one penalty per edge.
func PredictWithPenalties(net *Network, flows []Flow, fn func([]Edge) []float64) (*Prediction, error) {
	return predictPenalties(net, flows, func(a *active) []float64 {
		edges := make([]Edge, len(a.ids))
		for j, id := range a.ids {
			edges[j] = Edge{Src: a.flows[id].Src, Dst: a.flows[id].Dst}
		}
		return fn(edges)
	})
}

// predictPenalties is the sequence of linear models with a penalty function of the active
// transfers.
func predictPenalties(net *Network, flows []Flow, penalties func(a *active) []float64) (*Prediction, error) {
	alpha := net.Penalty.Alpha
	if alpha == 0 {
		alpha = 8 / net.Ceiling
	}
	return stepLoop(net, flows, func(a *active) ([]float64, error) {
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
	var c penaltyCore
	return c.compute(ix.src, ix.dst, ix.pair, ix.nodes, ix.pairs)
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

// penaltyCore computes closed-form penalties on integer node and pair indices, reusing its
// buffers from call to call. It works with per-node and per-pair aggregates so that the cost
// is linear in the number of edges:
//
//	conflict(e) = Σ over edges into d of 1/δ⁺(their source) − (edges s→d)/δ⁺(s)
//	rule (c) of s = δ⁺(s) + Σ over the edges e' leaving s of conflict(e')
//	rule (a) of e: δ⁻(d) ≤ δ⁺(s) and every source sending to d has δ⁺ = δ⁺(s)
type penaltyCore struct {
	out, in, minOut, maxOut, pairCnt []int
	inSum, sumConflict, worst        []float64
	anyC                             []bool
}

func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	s = s[:n]
	clear(s)
	return s
}

// compute returns the penalty of every edge i from node src[i] to node dst[i], pair[i]
// identifying the (src, dst) pair.
func (c *penaltyCore) compute(src, dst, pair []int, nNodes, nPairs int) []float64 {
	c.out, c.in = grow(c.out, nNodes), grow(c.in, nNodes)
	c.minOut, c.maxOut = grow(c.minOut, nNodes), grow(c.maxOut, nNodes)
	c.inSum, c.sumConflict, c.worst = grow(c.inSum, nNodes), grow(c.sumConflict, nNodes), grow(c.worst, nNodes)
	c.anyC = grow(c.anyC, nNodes)
	c.pairCnt = grow(c.pairCnt, nPairs)
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
