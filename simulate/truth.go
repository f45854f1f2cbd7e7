package simulate

import (
	"math"
	"math/rand/v2"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/datasets"
	"github.com/commcal/commcal/internal/badinput"
)

// TruthFile is the name of the ground-truth file the generator writes beside the tables.
const TruthFile = "truth.json"

// TruthFormat is the format tag of truth.json and of what --help-truth prints.
const TruthFormat = "commcal-truth/1"

// Truth is a set of true model parameters from which the generator draws measurements.
// Units: seconds, bytes, bits per second; t_i and β are in seconds per byte.
type Truth struct {
	// Format is TruthFormat in what commcal writes; a hand-written truth may leave it out.
	Format  string `json:"format,omitempty"`
	Cluster string `json:"cluster"`
	// Seed draws the noise and the contention catalogue's random and static-synchronous
	// patterns (DefaultTruth also draws the LMO parameters from it).
	Seed uint64 `json:"seed"`
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
	// Contention adds concurrent patterns to the transfers table (contention.go).
	Contention *ContentionTruth `json:"contention,omitempty"`
}

// HockneyTruth is T(m) = α + β·m for one path class, measured between Src and Dst over Sizes
// (transfers table, experiment p2p_sweep). These are the simulator's point-to-point sweeps:
// a contention catalogue's sweep sizes do not drive them (see ContentionTruth).
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
// pairs, overheads Os, Or, Ur linear in m, and RTT = 2(Os + L + Or + Ur) (the L micro-benchmark of a thesis appendix, eq. A.3).
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
	tr := &Truth{Format: TruthFormat, Cluster: cl.Name(), Seed: seed, Noise: 0.02, Reps: 10}
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

// ReadTruth reads a truth file (the layout of truth.json) strictly: unknown fields are errors,
// and so is a format tag other than TruthFormat (a hand-written truth may have none).
func ReadTruth(path string) (*Truth, error) {
	var tr Truth
	if err := datasets.ReadJSONFile(path, &tr); err != nil {
		return nil, err
	}
	if tr.Format != "" && tr.Format != TruthFormat {
		return nil, badinput.Errorf(path, "format %q, want %q", tr.Format, TruthFormat)
	}
	return &tr, nil
}
