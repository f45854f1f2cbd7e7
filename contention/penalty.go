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
	out, in := map[string]int{}, map[string]int{}
	from, into := map[string][]int{}, map[string][]int{}
	for i, e := range edges {
		out[e.Src]++
		in[e.Dst]++
		from[e.Src] = append(from[e.Src], i)
		into[e.Dst] = append(into[e.Dst], i)
	}
	// conflict(i) sums 1/δ⁺(s'') over the edges into i's destination from other sources.
	conflict := func(i int) float64 {
		var k float64
		for _, c := range into[edges[i].Dst] {
			if edges[c].Src != edges[i].Src {
				k += 1 / float64(out[edges[c].Src])
			}
		}
		return k
	}
	ruleA := func(i int) bool {
		e := edges[i]
		if in[e.Dst] > out[e.Src] {
			return false
		}
		for _, c := range into[e.Dst] {
			if edges[c].Src != e.Src && out[edges[c].Src] != out[e.Src] {
				return false
			}
		}
		return true
	}
	rho := make([]float64, len(edges))
	var ruleB []int
	isB := make([]bool, len(edges))
	value := make([]float64, len(edges)) // δ⁺(s) + k(e), for the edges of rules (a) and (c)
	for i, e := range edges {
		switch {
		case ruleA(i):
			value[i] = float64(out[e.Src])
		case out[e.Src] == 1 && hasBusyCompetitor(edges, into[e.Dst], e.Src, out):
			ruleB = append(ruleB, i)
			isB[i] = true
		default:
			var k float64
			for _, sib := range from[e.Src] {
				k += conflict(sib)
			}
			value[i] = float64(out[e.Src]) + k
		}
	}
	for i, e := range edges {
		if isB[i] {
			continue
		}
		for _, sib := range from[e.Src] {
			rho[i] = math.Max(rho[i], value[sib])
		}
	}
	for _, i := range ruleB {
		worst := 0.0
		for _, c := range into[edges[i].Dst] {
			if edges[c].Src != edges[i].Src && out[edges[c].Src] > 1 {
				worst = math.Max(worst, rho[c])
			}
		}
		rho[i] = 1 + 1/(worst-1)
	}
	return rho
}

// hasBusyCompetitor says whether some edge into the same destination comes from another
// source that sends more than one communication.
func hasBusyCompetitor(edges []Edge, into []int, src string, out map[string]int) bool {
	for _, c := range into {
		if edges[c].Src != src && out[edges[c].Src] > 1 {
			return true
		}
	}
	return false
}
