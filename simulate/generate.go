package simulate

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/datasets"
	"github.com/commcal/commcal/experiments"
)

// Generated holds the rows the generator drew, table by table.
type Generated struct {
	datasets.MeasurementRows
}

// noise draws the multiplicative noise factors of one truth.
type noise struct {
	rng   *rand.Rand
	sigma float64
}

func (n *noise) factor() float64 {
	for {
		z := n.rng.NormFloat64()
		if math.Abs(z) <= 3 {
			return 1 + n.sigma*z
		}
	}
}

// Generate draws every measurement of a truth: the Hockney sweeps, the contention catalogue's
// patterns, the LMO experiments, the scatter and gather sweeps, and the L benchmark, in that
// order. The same truth (seed included) gives the same rows. It checks that the truth's nodes
// belong to the cluster. It stops with ctx's error when ctx is done: the contention truth's
// predictions of a large catalogue can take long.
func Generate(ctx context.Context, cl *cluster.Cluster, tr *Truth) (*Generated, error) {
	if tr.Reps < 1 {
		return nil, fmt.Errorf("simulate: truth: reps must be at least 1, got %d", tr.Reps)
	}
	if !(tr.Noise >= 0 && tr.Noise < 1.0/3) {
		return nil, fmt.Errorf("simulate: truth: noise must be in [0, 1/3), got %g", tr.Noise)
	}
	gen := &generator{nz: &noise{rng: rand.New(rand.NewPCG(tr.Seed, 0x6e6f697365000000)), sigma: tr.Noise},
		g: &Generated{}, name: cl.Name(), reps: int64(tr.Reps)}
	clock, err := gen.hockney(cl, tr.Hockney)
	if err != nil {
		return nil, err
	}
	if tr.Contention != nil {
		if err := gen.contention(ctx, cl, tr, clock); err != nil {
			return nil, err
		}
	}
	if lmo := tr.LMO; lmo != nil {
		p, err := newLMOParams(cl, lmo)
		if err != nil {
			return nil, err
		}
		gen.lmo(p, lmo.MessageBytes)
		if s := tr.Scatter; s != nil {
			gen.scatter(p, s)
		}
		if ga := tr.Gather; ga != nil {
			gen.gather(p, ga)
		}
	}
	if l := tr.L; l != nil {
		gen.l(l)
	}
	return gen.g, nil
}

// generator draws the rows of one truth into g, every time multiplied by a draw of nz, in
// the order Generate says: the same truth gives the same draws, so the same rows.
type generator struct {
	nz   *noise
	g    *Generated
	name string // the cluster's
	reps int64
}

// hockney draws the point-to-point sweeps, one transfer after another on a common clock
// (1 ms apart), and returns the clock at their end. A sweep between nodes the cluster does
// not have is an error.
func (gen *generator) hockney(cl *cluster.Cluster, sweeps []HockneyTruth) (float64, error) {
	clock := 0.0
	for _, h := range sweeps {
		if _, err := cl.Path(h.Src, h.Dst); err != nil {
			return 0, fmt.Errorf("simulate: truth: hockney %s: %w", h.Class, err)
		}
		for _, m := range h.Sizes {
			for r := int64(0); r < gen.reps; r++ {
				t := (h.Alpha + h.Beta*float64(m)) * gen.nz.factor()
				gen.g.Transfers = append(gen.g.Transfers, datasets.Transfer{Cluster: gen.name, Experiment: experiments.P2PSweep,
					PatternID: experiments.PairID(h.Src, h.Dst, m), Rep: r, Src: h.Src, Dst: h.Dst, Bytes: m,
					TStart: clock, TEnd: clock + t})
				clock += t + 1e-3
			}
		}
	}
	return clock, nil
}

// lmo draws the LMO experiments: round trips with empty messages and with m-byte messages
// (empty replies) between every pair, then one-to-two experiments of m bytes for every root
// and every pair of other nodes.
func (gen *generator) lmo(p *lmoParams, m int64) {
	n := len(p.names)
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			for _, out := range []int64{0, m} {
				for r := int64(0); r < gen.reps; r++ {
					gen.g.RoundTrips = append(gen.g.RoundTrips, datasets.RoundTrip{Cluster: gen.name, I: p.names[i], J: p.names[j],
						BytesOut: out, BytesBack: 0, Rep: r, Seconds: p.roundTrip(i, j, out, 0) * gen.nz.factor()})
				}
			}
		}
	}
	for root := 0; root < n; root++ {
		for j := 0; j < n; j++ {
			for k := j + 1; k < n; k++ {
				if j == root || k == root {
					continue
				}
				for r := int64(0); r < gen.reps; r++ {
					gen.g.OneToTwo = append(gen.g.OneToTwo, datasets.OneToTwo{Cluster: gen.name, Root: p.names[root], J: p.names[j], K: p.names[k],
						Bytes: m, Rep: r, Seconds: p.oneToTwo(root, j, k, m) * gen.nz.factor()})
				}
			}
		}
	}
}

// scatter draws the scatter sweep from the first LMO node (ScatterTruth): the receivers'
// legs in parallel (their max) up to S bytes, serialised (their sum) above.
func (gen *generator) scatter(p *lmoParams, s *ScatterTruth) {
	for _, m := range s.Sizes {
		for r := int64(0); r < gen.reps; r++ {
			gen.g.Collectives = append(gen.g.Collectives, datasets.Collective{Cluster: gen.name, Op: "scatter", Root: p.names[0],
				Procs: int64(len(p.names)), Bytes: m, Rep: r, Seconds: p.fanOut(m, m > s.S) * gen.nz.factor()})
		}
	}
}

// gather draws the gather sweep to the first LMO node (GatherTruth): the parallel form plus
// κ1·m below M1, the escalation time from M1 to M2, and the serialised form plus κ2·m above.
func (gen *generator) gather(p *lmoParams, ga *GatherTruth) {
	for _, m := range ga.Sizes {
		var t float64
		switch {
		case m < ga.M1:
			t = p.fanOut(m, false) + ga.Kappa1*float64(m)
		case m <= ga.M2:
			t = ga.EscalationS
		default:
			t = p.fanOut(m, true) + ga.Kappa2*float64(m)
		}
		for r := int64(0); r < gen.reps; r++ {
			gen.g.Collectives = append(gen.g.Collectives, datasets.Collective{Cluster: gen.name, Op: "gather", Root: p.names[0],
				Procs: int64(len(p.names)), Bytes: m, Rep: r, Seconds: t * gen.nz.factor()})
		}
	}
}

// l draws the L benchmark: for each number of pairs and size, the round trip
// 2·(os + L + or + ur) and the overheads, each with its own noise.
func (gen *generator) l(l *LTruth) {
	for _, pairs := range l.Pairs {
		for _, m := range l.Sizes {
			fm, fp := float64(m), float64(pairs)
			lat := l.A + l.B*fm + l.C*fp + l.D*fm*fp
			os := l.Os[0] + l.Os[1]*fm
			or := l.Or[0] + l.Or[1]*fm
			ur := l.Ur[0] + l.Ur[1]*fm
			for r := int64(0); r < gen.reps; r++ {
				gen.g.PingPongPairs = append(gen.g.PingPongPairs, datasets.PingPongPairs{Cluster: gen.name, Pairs: pairs, Bytes: m, Rep: r,
					RTT: 2 * (os + lat + or + ur) * gen.nz.factor(), Os: os * gen.nz.factor(), Or: or * gen.nz.factor(), Ur: ur * gen.nz.factor()})
			}
		}
	}
}

// lmoParams indexes an LMOTruth for evaluation.
type lmoParams struct {
	names []string
	c, t  []float64
	inv   [][]float64 // seconds per byte of each link, 8/rate
}

func newLMOParams(cl *cluster.Cluster, lmo *LMOTruth) (*lmoParams, error) {
	n := len(lmo.Nodes)
	if n < 3 {
		return nil, fmt.Errorf("simulate: truth: LMO needs at least 3 nodes, got %d", n)
	}
	p := &lmoParams{names: make([]string, n), c: make([]float64, n), t: make([]float64, n), inv: make([][]float64, n)}
	idx := map[string]int{}
	for i, nd := range lmo.Nodes {
		if _, ok := cl.Node(nd.Name); !ok {
			return nil, fmt.Errorf("simulate: truth: LMO node %q is not in cluster %s", nd.Name, cl.Name())
		}
		p.names[i], p.c[i], p.t[i] = nd.Name, nd.C, nd.T
		idx[nd.Name] = i
		p.inv[i] = make([]float64, n)
	}
	for _, l := range lmo.Links {
		i, ok1 := idx[l.I]
		j, ok2 := idx[l.J]
		if !ok1 || !ok2 || !(l.RateBps > 0) {
			return nil, fmt.Errorf("simulate: truth: LMO link %s–%s: unknown node or non-positive rate", l.I, l.J)
		}
		p.inv[i][j], p.inv[j][i] = 8/l.RateBps, 8/l.RateBps
	}
	for i := range n {
		for j := range n {
			if i != j && p.inv[i][j] == 0 {
				return nil, fmt.Errorf("simulate: truth: LMO link %s–%s has no rate", p.names[i], p.names[j])
			}
		}
	}
	return p, nil
}

// oneWay is C_i + t_i·M + M/β_ij + C_j + t_j·M.
func (p *lmoParams) oneWay(i, j int, m int64) float64 {
	fm := float64(m)
	return p.c[i] + p.t[i]*fm + p.inv[i][j]*fm + p.c[j] + p.t[j]*fm
}

// roundTrip is T_ij(M1, M2), the message and the reply.
func (p *lmoParams) roundTrip(i, j int, out, back int64) float64 {
	return p.oneWay(i, j, out) + p.oneWay(j, i, back)
}

// oneToTwo is T_i(M) = 4C_i + 2t_i·M + max over r ∈ {j, k} of (2C_r + t_r·M + M/β_ir).
func (p *lmoParams) oneToTwo(i, j, k int, m int64) float64 {
	fm := float64(m)
	leg := func(r int) float64 { return 2*p.c[r] + p.t[r]*fm + p.inv[i][r]*fm }
	return 4*p.c[i] + 2*p.t[i]*fm + math.Max(leg(j), leg(k))
}

// fanOut is the scatter model from node 0 to the n−1 others: serial processing at the root
// plus the max (parallel) or the sum (serialised) of the receivers' legs.
func (p *lmoParams) fanOut(m int64, serial bool) float64 {
	fm := float64(m)
	n := len(p.names) - 1
	root := float64(n) * (p.c[0] + p.t[0]*fm)
	var agg float64
	for i := 1; i <= n; i++ {
		leg := p.c[i] + p.t[i]*fm + p.inv[0][i]*fm
		if serial {
			agg += leg
		} else {
			agg = math.Max(agg, leg)
		}
	}
	return root + agg
}
