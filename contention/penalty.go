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
	return PredictWithPenalties(net, flows, ClosedFormPenalties)
}

// PredictWithPenalties runs the sequence of linear models with penalties from fn, which is
// given the edges of each step's contention graph and returns one penalty per edge.
func PredictWithPenalties(net *Network, flows []Flow, fn func([]Edge) []float64) (*Prediction, error) {
	alpha := net.Penalty.Alpha
	if alpha == 0 {
		alpha = 8 / net.Ceiling
	}
	return stepLoop(net, flows, func(a *active) ([]float64, error) {
		edges := make([]Edge, len(a.ids))
		for j, id := range a.ids {
			edges[j] = Edge{Src: a.flows[id].Src, Dst: a.flows[id].Dst}
		}
		rho := fn(edges)
		rates := make([]float64, len(rho))
		for j, p := range rho {
			if !(p >= 1) {
				return nil, fmt.Errorf("contention: penalty %g for %s→%s, want at least 1", p, edges[j].Src, edges[j].Dst)
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
	// Index the nodes, then work with per-node and per-pair aggregates so that the cost is
	// linear in the number of edges:
	//   conflict(e) = Σ over edges into d of 1/δ⁺(their source) − (edges s→d)/δ⁺(s)
	//   rule (c) of s = δ⁺(s) + Σ over the edges e' leaving s of conflict(e')
	//   rule (a) of e: δ⁻(d) ≤ δ⁺(s) and every source sending to d has δ⁺ = δ⁺(s)
	idx := map[string]int{}
	id := func(n string) int {
		i, ok := idx[n]
		if !ok {
			i = len(idx)
			idx[n] = i
		}
		return i
	}
	src, dst := make([]int, len(edges)), make([]int, len(edges))
	for i, e := range edges {
		src[i], dst[i] = id(e.Src), id(e.Dst)
	}
	n := len(idx)
	out, in := make([]int, n), make([]int, n)
	for i := range edges {
		out[src[i]]++
		in[dst[i]]++
	}
	inSum := make([]float64, n)
	minOut, maxOut := make([]int, n), make([]int, n)
	pairs := map[[2]int]int{}
	for i := range edges {
		s, d := src[i], dst[i]
		inSum[d] += 1 / float64(out[s])
		if minOut[d] == 0 || out[s] < minOut[d] {
			minOut[d] = out[s]
		}
		maxOut[d] = max(maxOut[d], out[s])
		pairs[[2]int{s, d}]++
	}
	conflict := func(i int) float64 {
		s, d := src[i], dst[i]
		return inSum[d] - float64(pairs[[2]int{s, d}])/float64(out[s])
	}
	ruleA := func(i int) bool {
		s, d := src[i], dst[i]
		return in[d] <= out[s] && minOut[d] == out[s] && maxOut[d] == out[s]
	}
	// A one-edge source is taken by rule (b) when some other source sending to its
	// destination sends more than one communication.
	ruleB := func(i int) bool { return out[src[i]] == 1 && !ruleA(i) && maxOut[dst[i]] > 1 }
	sumConflict := make([]float64, n) // Σ conflict over the source's edges
	anyC := make([]bool, n)           // some edge of the source falls to rule (c)
	for i := range edges {
		sumConflict[src[i]] += conflict(i)
		if !ruleA(i) && !ruleB(i) {
			anyC[src[i]] = true
		}
	}
	// ρ of the sources' edges under (a) and (c): the max over the source's edges of δ⁺(s) + k.
	groupRho := make([]float64, n)
	for s := 0; s < n; s++ {
		groupRho[s] = float64(out[s])
		if anyC[s] {
			groupRho[s] += sumConflict[s]
		}
	}
	worstBusy := make([]float64, n) // per destination: max ρ over edges from busy sources
	for i := range edges {
		if out[src[i]] > 1 {
			worstBusy[dst[i]] = math.Max(worstBusy[dst[i]], groupRho[src[i]])
		}
	}
	rho := make([]float64, len(edges))
	for i := range edges {
		if ruleB(i) {
			rho[i] = 1 + 1/(worstBusy[dst[i]]-1)
		} else {
			rho[i] = groupRho[src[i]]
		}
	}
	return rho
}
