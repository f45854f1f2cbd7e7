package estimate

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/contention"
	"github.com/commcal/commcal/datasets"
	"github.com/commcal/commcal/experiments"
)

// SameFinishTol is the relative gap below which two measured completion times of a
// static-synchronous graph count as one step's end: the benchmark's stopping rule bounds each
// mean to ±1% (a 2% wide interval), so closer times cannot be told apart.
const SameFinishTol = 0.01

// BackSolveSteps computes the first-step penalties of one static-synchronous graph (Martinasso
// and Méhaut, Euro-Par 2011, §3.3): every communication sends m bytes from time 0, and
// communication i ends at times[i]. The ends, grouped within SameFinishTol, cut the run into
// steps; in step j ≥ 2 the communications still running have the penalties later(j, active)
// gives (those of the smaller graph that step leaves). Communication i then sent
// m_{i,1} = m − Σ_{j=2..s_i} (τ_j − τ_{j−1})/(α·ρ_{i,j}) bytes in the first step, so
// ρ_{i,1} = τ_1/(α·m_{i,1}). A penalty below 1 − SameFinishTol, or a first step carrying no
// bytes, means the times contradict the later steps' penalties, and is an error.
func BackSolveSteps(m, alpha float64, times []float64, later func(step int, active []int) []float64) ([]float64, error) {
	n := len(times)
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(times[a], times[b]) })
	// Group the ends into steps: τ_j is the mean of the times in group j.
	step := make([]int, n) // 1-based step in which each communication ends
	var tau []float64
	start, s := 0, 1
	for k := 1; k <= n; k++ {
		if k == n || times[order[k]] > times[order[start]]*(1+SameFinishTol) {
			sum := 0.0
			for _, i := range order[start:k] {
				sum += times[i]
				step[i] = s
			}
			tau = append(tau, sum/float64(k-start))
			start, s = k, s+1
		}
	}
	rho := make([]float64, n)
	// laterRho[j][i] is communication i's penalty in step j (j ≥ 2).
	laterRho := make([]map[int]float64, len(tau)+1)
	for j := 2; j <= len(tau); j++ {
		var active []int
		for i := 0; i < n; i++ {
			if step[i] >= j {
				active = append(active, i)
			}
		}
		r := later(j, active)
		laterRho[j] = map[int]float64{}
		for k, i := range active {
			laterRho[j][i] = r[k]
		}
	}
	for i := 0; i < n; i++ {
		m1 := m
		for j := 2; j <= step[i]; j++ {
			m1 -= (tau[j-1] - tau[j-2]) / (alpha * laterRho[j][i])
		}
		if m1 <= 0 {
			return nil, fmt.Errorf("communication %d: the later steps alone carry its %g bytes (first-step share %g)", i, m, m1)
		}
		rho[i] = tau[0] / (alpha * m1)
		if rho[i] < 1-SameFinishTol {
			return nil, fmt.Errorf("communication %d: first-step penalty %.3f is below 1 (faster than alone)", i, rho[i])
		}
		rho[i] = math.Max(rho[i], 1)
	}
	return rho, nil
}

// SolvedGraph is one static-synchronous graph whose penalties were back-solved.
type SolvedGraph struct {
	Pattern   string    `json:"pattern"`
	Graph     string    `json:"graph"`
	Shape     string    `json:"shape"`
	Penalties []float64 `json:"penalties"`
	// ClosedFormSteps counts later steps whose sub-graph had no table entry, so that the
	// closed form stood in.
	ClosedFormSteps int `json:"closed_form_steps"`
}

// UnsolvedGraph is a graph whose penalties could not be solved, and why.
type UnsolvedGraph struct {
	Pattern string `json:"pattern"`
	Graph   string `json:"graph"`
	Reason  string `json:"reason"`
}

// PenaltyFit is the penalty table back-solved from a dataset's static_sync experiments.
type PenaltyFit struct {
	Table    *contention.PenaltyTable `json:"table"`
	Alpha    float64                  `json:"alpha_s_per_byte"`
	Solved   []SolvedGraph            `json:"solved"`
	Unsolved []UnsolvedGraph          `json:"unsolved,omitempty"`
}

// BackSolvePenalties back-solves every static_sync pattern of rows, smallest graphs first, so
// that a graph's later steps find the penalties of the smaller graphs they leave in the table
// (matched by shape, rack placement included); a single communication has penalty 1; a
// sub-graph missing from the table takes the closed form, and the report counts it. α is the
// penalty models' (seconds per byte); when it is 0 it is measured as the paper does, from the
// graphs of one communication: the mean of T/m.
func BackSolvePenalties(cl *cluster.Cluster, rows []datasets.Transfer, alpha float64) (*PenaltyFit, error) {
	pats, err := datasets.MeasuredPatterns(rows, []string{experiments.StaticSync})
	if err != nil {
		return nil, err
	}
	if len(pats) == 0 {
		return nil, fmt.Errorf("estimate: penalty table: no static_sync patterns (transfers rows of experiment static_sync: small communication graphs started together)")
	}
	if alpha == 0 {
		sum, n := 0.0, 0
		for _, p := range pats {
			if len(p.Flows) == 1 {
				sum += p.Mean[0] / p.Flows[0].Bytes
				n++
			}
		}
		if n == 0 {
			return nil, fmt.Errorf("estimate: penalty table: α not given and no static_sync graph of one communication to measure it")
		}
		alpha = sum / float64(n)
	}
	slices.SortStableFunc(pats, func(a, b *datasets.MeasuredPattern) int { return len(a.Flows) - len(b.Flows) })
	fit := &PenaltyFit{Table: contention.NewPenaltyTable(), Alpha: alpha}
	net := &contention.Network{Cluster: cl}
	for _, p := range pats {
		edges := make([]contention.Edge, len(p.Flows))
		for i, f := range p.Flows {
			edges[i] = contention.Edge{Src: f.Src, Dst: f.Dst}
		}
		graph := contention.Describe(edges)
		fail := func(format string, a ...any) {
			fit.Unsolved = append(fit.Unsolved, UnsolvedGraph{Pattern: p.ID, Graph: graph, Reason: fmt.Sprintf(format, a...)})
		}
		if len(contention.Components(edges)) != 1 {
			fail("not connected: a static-synchronous graph is one contention graph")
			continue
		}
		m := p.Flows[0].Bytes
		if slices.ContainsFunc(p.Flows, func(f contention.Flow) bool { return f.Bytes != m }) {
			fail("sizes differ: a static-synchronous graph sends the same size everywhere")
			continue
		}
		sh := contention.Shape(cl, edges)
		if len(edges) == 1 { // by definition
			fit.Table.Add(sh, edges, []float64{1})
			fit.Solved = append(fit.Solved, SolvedGraph{Pattern: p.ID, Graph: graph, Shape: sh.Key, Penalties: []float64{1}})
			continue
		}
		closed := 0
		rho, err := BackSolveSteps(m, alpha, p.Mean, func(_ int, active []int) []float64 {
			sub := make([]contention.Edge, len(active))
			for k, i := range active {
				sub[k] = edges[i]
			}
			// A single communication has penalty 1 both in the table and in the closed form.
			r, hits := fit.Table.Penalties(net, sub)
			if len(sub) > 1 && hits < len(sub) {
				closed++
			}
			return r
		})
		if err != nil {
			fail("%v", err)
			continue
		}
		fit.Table.Add(sh, edges, rho)
		fit.Solved = append(fit.Solved, SolvedGraph{Pattern: p.ID, Graph: graph, Shape: sh.Key, Penalties: rho, ClosedFormSteps: closed})
	}
	return fit, nil
}
