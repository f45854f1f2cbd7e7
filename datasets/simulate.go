package datasets

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"time"

	"github.com/apache/arrow/go/v15/arrow/memory"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/contention"
)

// TruthFile is the name of the ground-truth file the generator writes beside the tables.
const TruthFile = "truth.json"

// Truth is a set of true model parameters from which the generator draws measurements.
// Units: seconds, bytes, bits per second; t_i and β are in seconds per byte.
type Truth struct {
	Cluster string `json:"cluster"`
	Seed    uint64 `json:"seed"`
	// Noise is the relative standard deviation of the multiplicative measurement noise: every
	// time is multiplied by 1 + Noise·Z, Z standard normal truncated to [−3, 3] (so the noise
	// has mean 1 and times stay positive for Noise < 1/3).
	Noise   float64        `json:"noise"`
	Reps    int            `json:"reps"`
	Hockney []HockneyTruth `json:"hockney"`
	LMO     *LMOTruth      `json:"lmo,omitempty"`
	Scatter *ScatterTruth  `json:"scatter,omitempty"`
	Gather  *GatherTruth   `json:"gather,omitempty"`
	L       *LTruth        `json:"l,omitempty"`
	// Contention adds concurrent patterns to the transfers table (simulate_contention.go).
	Contention *ContentionTruth `json:"contention,omitempty"`
}

// HockneyTruth is T(m) = α + β·m for one path class, measured between Src and Dst over Sizes
// (transfers table, experiment p2p_sweep).
type HockneyTruth struct {
	Class string  `json:"class"`
	Src   string  `json:"src"`
	Dst   string  `json:"dst"`
	Alpha float64 `json:"alpha_s"`
	Beta  float64 `json:"beta_s_per_byte"`
	Sizes []int64 `json:"sizes"`
}

// LMOTruth is the heterogeneous point-to-point model of Lastovetsky, Rychkov and O'Flynn:
// a message of M bytes from i to j takes C_i + t_i·M + M/β_ij + C_j + t_j·M, with C the fixed
// and t the per-byte processing delays of the nodes and β_ij the link's rate (here in bits/s,
// so M/β_ij is 8M/RateBps). The generator writes, with Reps repetitions each: round trips
// with empty messages between every pair, round trips of MessageBytes with empty replies,
// and one-to-two experiments of MessageBytes for every triplet and every root.
type LMOTruth struct {
	Nodes        []LMONode `json:"nodes"`
	Links        []LMOLink `json:"links"`
	MessageBytes int64     `json:"message_bytes"`
}

// LMONode holds one node's delays.
type LMONode struct {
	Name string  `json:"name"`
	C    float64 `json:"c_s"`
	T    float64 `json:"t_s_per_byte"`
}

// LMOLink is one link's rate, the same both ways (a single switch, or a symmetric tree).
type LMOLink struct {
	I       string  `json:"i"`
	J       string  `json:"j"`
	RateBps float64 `json:"rate_bps"`
}

// ScatterTruth is a scatter sweep from the first LMO node to the others: with n receivers,
// T(M) = n(C_0 + t_0·M) + max_i(C_i + t_i·M + M/β_0i) for M ≤ S and the same with the max
// replaced by a sum for M > S (Lastovetsky et al., §3).
type ScatterTruth struct {
	S     int64   `json:"s_bytes"`
	Sizes []int64 `json:"sizes"`
}

// GatherTruth is a gather sweep to the first LMO node: the scatter's max form plus κ1·M for
// M < M1, a constant escalation for M1 ≤ M ≤ M2 (the TCP retransmission stalls the paper
// observed), and the sum form plus κ2·M for M > M2.
type GatherTruth struct {
	M1          int64   `json:"m1_bytes"`
	M2          int64   `json:"m2_bytes"`
	Kappa1      float64 `json:"kappa1_s_per_byte"`
	Kappa2      float64 `json:"kappa2_s_per_byte"`
	EscalationS float64 `json:"escalation_s"`
	Sizes       []int64 `json:"sizes"`
}

// LTruth is the L-parameter benchmark: L(m, P) = A + B·m + C·P + D·m·P for P concurrent
// pairs, overheads Os, Or, Ur linear in m, and RTT = 2(Os + L + Or + Ur) (seed 003, A.3).
type LTruth struct {
	A     float64    `json:"a_s"`
	B     float64    `json:"b_s_per_byte"`
	C     float64    `json:"c_s_per_pair"`
	D     float64    `json:"d_s_per_byte_pair"`
	Os    [2]float64 `json:"os_s_and_s_per_byte"`
	Or    [2]float64 `json:"or_s_and_s_per_byte"`
	Ur    [2]float64 `json:"ur_s_and_s_per_byte"`
	Pairs []int64    `json:"pairs"`
	Sizes []int64    `json:"sizes"`
}

// DefaultTruth makes plausible parameters for a cluster: Hockney latencies of 50 µs (intra)
// and 80 µs (inter), bandwidth 94% of the NIC rate (TCP over Ethernet), up to eight LMO nodes
// with seeded heterogeneous delays and rates, scatter and gather sweeps of 2 KiB steps with
// breaks S = 96 KiB, M1 = 8 KiB and M2 = 64 KiB, an L surface for 1–8 pairs, and concurrent
// patterns with the asymmetric model as ground truth (defaultContention).
func DefaultTruth(cl *cluster.Cluster, seed uint64) *Truth {
	rng := rand.New(rand.NewPCG(seed, 0x7275746800000000))
	nodes := cl.Nodes()
	tr := &Truth{Cluster: cl.Name(), Seed: seed, Noise: 0.02, Reps: 10}
	pow2 := func(lo, hi int) []int64 {
		var s []int64
		for e := lo; e <= hi; e++ {
			s = append(s, 1<<e)
		}
		return s
	}
	alpha := map[cluster.PathClass]float64{cluster.IntraRack: 50e-6, cluster.InterRack: 80e-6}
	for _, p := range cl.ClassPairs() {
		a, _ := cl.Node(p.Src)
		b, _ := cl.Node(p.Dst)
		tr.Hockney = append(tr.Hockney, HockneyTruth{Class: string(p.Class), Src: p.Src, Dst: p.Dst,
			Alpha: alpha[p.Class], Beta: 8 / (0.94 * math.Min(a.NICRateBps, b.NICRateBps)), Sizes: pow2(10, 23)})
	}
	if len(nodes) >= 3 {
		// Up to eight nodes, taken round-robin over the racks.
		var pick []cluster.Node
		for k := 0; len(pick) < min(8, len(nodes)); k++ {
			for r := range cl.Racks() {
				if rack := cl.RackNodes(r); k < len(rack) && len(pick) < 8 {
					n, _ := cl.Node(rack[k])
					pick = append(pick, n)
				}
			}
		}
		lmo := &LMOTruth{MessageBytes: 32 << 10}
		for _, n := range pick {
			lmo.Nodes = append(lmo.Nodes, LMONode{Name: n.Name, C: 20e-6 + 40e-6*rng.Float64(), T: 0.5e-9 + 1.5e-9*rng.Float64()})
		}
		for i := range pick {
			for j := i + 1; j < len(pick); j++ {
				rate := 0.94 * math.Min(pick[i].NICRateBps, pick[j].NICRateBps) * (0.9 + 0.1*rng.Float64())
				lmo.Links = append(lmo.Links, LMOLink{I: pick[i].Name, J: pick[j].Name, RateBps: rate})
			}
		}
		tr.LMO = lmo
		var sizes []int64
		for m := int64(0); m <= 160<<10; m += 2 << 10 {
			sizes = append(sizes, m)
		}
		tr.Scatter = &ScatterTruth{S: 96 << 10, Sizes: sizes}
		tr.Gather = &GatherTruth{M1: 8 << 10, M2: 64 << 10, Kappa1: 2e-9, Kappa2: 4e-9, EscalationS: 0.2, Sizes: sizes}
	}
	tr.L = &LTruth{A: 30e-6, B: 8.5e-9, C: 2e-6, D: 0.4e-9,
		Os: [2]float64{5e-6, 0.2e-9}, Or: [2]float64{6e-6, 0.25e-9}, Ur: [2]float64{2e-6, 0.1e-9},
		Pairs: []int64{1, 2, 4, 8}, Sizes: pow2(10, 20)}
	tr.Contention = defaultContention(cl)
	return tr
}

// Generated holds the rows the generator drew, table by table.
type Generated struct {
	Transfers     []Transfer
	RoundTrips    []RoundTrip
	OneToTwo      []OneToTwo
	Collectives   []Collective
	PingPongPairs []PingPongPairs
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

// Generate draws every measurement of a truth. The same truth (seed included) gives the same
// rows. It checks that the truth's nodes belong to the cluster.
func Generate(cl *cluster.Cluster, tr *Truth) (*Generated, error) {
	if tr.Reps < 1 {
		return nil, fmt.Errorf("datasets: truth: reps must be at least 1, got %d", tr.Reps)
	}
	if !(tr.Noise >= 0 && tr.Noise < 1.0/3) {
		return nil, fmt.Errorf("datasets: truth: noise must be in [0, 1/3), got %g", tr.Noise)
	}
	nz := &noise{rng: rand.New(rand.NewPCG(tr.Seed, 0x6e6f697365000000)), sigma: tr.Noise}
	g := &Generated{}
	name := cl.Name()
	reps := int64(tr.Reps)
	clock := 0.0
	for _, h := range tr.Hockney {
		if _, err := cl.Path(h.Src, h.Dst); err != nil {
			return nil, fmt.Errorf("datasets: truth: hockney %s: %w", h.Class, err)
		}
		for _, m := range h.Sizes {
			for r := int64(0); r < reps; r++ {
				t := (h.Alpha + h.Beta*float64(m)) * nz.factor()
				g.Transfers = append(g.Transfers, Transfer{Cluster: name, Experiment: "p2p_sweep",
					PatternID: contention.PairID(h.Src, h.Dst, m), Rep: r, Src: h.Src, Dst: h.Dst, Bytes: m,
					TStart: clock, TEnd: clock + t})
				clock += t + 1e-3
			}
		}
	}
	if tr.Contention != nil {
		if err := generateContention(cl, tr, nz, clock, g); err != nil {
			return nil, err
		}
	}
	if lmo := tr.LMO; lmo != nil {
		p, err := newLMOParams(cl, lmo)
		if err != nil {
			return nil, err
		}
		n := len(lmo.Nodes)
		m := lmo.MessageBytes
		for i := 0; i < n; i++ {
			for j := i + 1; j < n; j++ {
				for _, out := range []int64{0, m} {
					for r := int64(0); r < reps; r++ {
						g.RoundTrips = append(g.RoundTrips, RoundTrip{Cluster: name, I: p.names[i], J: p.names[j],
							BytesOut: out, BytesBack: 0, Rep: r, Seconds: p.roundTrip(i, j, out, 0) * nz.factor()})
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
					for r := int64(0); r < reps; r++ {
						g.OneToTwo = append(g.OneToTwo, OneToTwo{Cluster: name, Root: p.names[root], J: p.names[j], K: p.names[k],
							Bytes: m, Rep: r, Seconds: p.oneToTwo(root, j, k, m) * nz.factor()})
					}
				}
			}
		}
		if s := tr.Scatter; s != nil {
			for _, m := range s.Sizes {
				for r := int64(0); r < reps; r++ {
					g.Collectives = append(g.Collectives, Collective{Cluster: name, Op: "scatter", Root: p.names[0],
						Procs: int64(n), Bytes: m, Rep: r, Seconds: p.fanOut(m, m > s.S) * nz.factor()})
				}
			}
		}
		if ga := tr.Gather; ga != nil {
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
				for r := int64(0); r < reps; r++ {
					g.Collectives = append(g.Collectives, Collective{Cluster: name, Op: "gather", Root: p.names[0],
						Procs: int64(n), Bytes: m, Rep: r, Seconds: t * nz.factor()})
				}
			}
		}
	}
	if l := tr.L; l != nil {
		for _, pairs := range l.Pairs {
			for _, m := range l.Sizes {
				fm, fp := float64(m), float64(pairs)
				lat := l.A + l.B*fm + l.C*fp + l.D*fm*fp
				os := l.Os[0] + l.Os[1]*fm
				or := l.Or[0] + l.Or[1]*fm
				ur := l.Ur[0] + l.Ur[1]*fm
				for r := int64(0); r < reps; r++ {
					g.PingPongPairs = append(g.PingPongPairs, PingPongPairs{Cluster: name, Pairs: pairs, Bytes: m, Rep: r,
						RTT: 2 * (os + lat + or + ur) * nz.factor(), Os: os * nz.factor(), Or: or * nz.factor(), Ur: ur * nz.factor()})
				}
			}
		}
	}
	return g, nil
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
		return nil, fmt.Errorf("datasets: truth: LMO needs at least 3 nodes, got %d", n)
	}
	p := &lmoParams{names: make([]string, n), c: make([]float64, n), t: make([]float64, n), inv: make([][]float64, n)}
	idx := map[string]int{}
	for i, nd := range lmo.Nodes {
		if _, ok := cl.Node(nd.Name); !ok {
			return nil, fmt.Errorf("datasets: truth: LMO node %q is not in cluster %s", nd.Name, cl.Name())
		}
		p.names[i], p.c[i], p.t[i] = nd.Name, nd.C, nd.T
		idx[nd.Name] = i
		p.inv[i] = make([]float64, n)
	}
	for _, l := range lmo.Links {
		i, ok1 := idx[l.I]
		j, ok2 := idx[l.J]
		if !ok1 || !ok2 || !(l.RateBps > 0) {
			return nil, fmt.Errorf("datasets: truth: LMO link %s–%s: unknown node or non-positive rate", l.I, l.J)
		}
		p.inv[i][j], p.inv[j][i] = 8/l.RateBps, 8/l.RateBps
	}
	for i := range n {
		for j := range n {
			if i != j && p.inv[i][j] == 0 {
				return nil, fmt.Errorf("datasets: truth: LMO link %s–%s has no rate", p.names[i], p.names[j])
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

// SimulateOptions configures Simulate.
type SimulateOptions struct {
	Cluster *cluster.Cluster
	Truth   *Truth
	Out     string
	Force   bool
	Version string
	Created time.Time
	Mem     memory.Allocator
}

// Simulate generates a dataset from a truth and writes it, with the truth as truth.json, to
// opts.Out (atomically, like Ingest).
func Simulate(ctx context.Context, opts SimulateOptions) (*Manifest, *Generated, error) {
	g, err := Generate(opts.Cluster, opts.Truth)
	if err != nil {
		return nil, nil, err
	}
	w, err := NewDirWriter(opts.Out, opts.Force, opts.Cluster, opts.Mem)
	if err != nil {
		return nil, nil, err
	}
	m := &Manifest{Format: ManifestFormat, Tool: "commcal", Version: opts.Version,
		Created: opts.Created.UTC().Format(time.RFC3339), Cluster: opts.Cluster.Description(),
		Synth: &SynthesisInfo{Seed: opts.Truth.Seed, Noise: opts.Truth.Noise, TruthFile: TruthFile}}
	for _, tr := range g.tables() {
		if tr.n == 0 {
			continue
		}
		src := "simulate:" + tr.t.Name
		err := ctx.Err()
		if err == nil {
			err = tr.write(w, src)
		}
		if err != nil {
			w.Abort()
			return nil, nil, err
		}
		m.Sources = append(m.Sources, SourceInfo{Path: src, Format: "synthetic", Table: tr.t.Name, Rows: int64(tr.n)})
	}
	if err := WriteJSONFile(filepath.Join(w.TempDir(), TruthFile), opts.Truth); err != nil {
		w.Abort()
		return nil, nil, err
	}
	if err := w.Commit(m); err != nil {
		return nil, nil, err
	}
	return m, g, nil
}

// generatedTable is one table of a Generated with a writer for its rows.
type generatedTable struct {
	t     *Table
	n     int
	write func(w *DirWriter, src string) error
}

func (g *Generated) tables() []generatedTable {
	return []generatedTable{
		{TransfersTable, len(g.Transfers), func(w *DirWriter, s string) error { return WriteRows(w, TransfersTable, s, g.Transfers) }},
		{RoundTripsTable, len(g.RoundTrips), func(w *DirWriter, s string) error { return WriteRows(w, RoundTripsTable, s, g.RoundTrips) }},
		{OneToTwoTable, len(g.OneToTwo), func(w *DirWriter, s string) error { return WriteRows(w, OneToTwoTable, s, g.OneToTwo) }},
		{CollectivesTable, len(g.Collectives), func(w *DirWriter, s string) error { return WriteRows(w, CollectivesTable, s, g.Collectives) }},
		{PingPongPairsTable, len(g.PingPongPairs), func(w *DirWriter, s string) error {
			return WriteRows(w, PingPongPairsTable, s, g.PingPongPairs)
		}},
	}
}

// ReadTruth reads a truth file.
func ReadTruth(path string) (*Truth, error) {
	var tr Truth
	if err := ReadJSONFile(path, &tr); err != nil {
		return nil, err
	}
	return &tr, nil
}
