package experiments

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/contention"
)

// RandomSpec sets up the random validation patterns of Zhu et al. (CCPE 2014, §7.1).
type RandomSpec struct {
	Nodes int // |N|, split equally over the first Racks racks
	D     int // how many times each node draws a destination
	Racks int // racks used (default 2, as on both of the paper's platforms)
	// Sizes are the message sizes in bytes, drawn uniformly per transfer (default 10 MB).
	Sizes []int64
	// Tag, when set, names a second design of the same setting (other sizes, say): it joins
	// the IDs ("N10-d2-mixed-003") and draws its own patterns.
	Tag string
	// Calibration draws patterns of experiment random_calibration instead of random, from a
	// stream of their own: the same setting and seed give other patterns than the held-out ones.
	Calibration bool
}

// RandomPatterns draws count random patterns: |N| nodes are taken equally from the first racks
// (the first nodes of each); each node, d times, picks another of the |N| nodes at random and
// keeps the transfer to it with probability 1/2. A draw that keeps no transfer at all is drawn
// again (an empty pattern measures nothing). The same seed gives the same patterns; IDs are
// "N<|N|>-d<d>-<index>".
func RandomPatterns(cl *cluster.Cluster, spec RandomSpec, count int, seed uint64) ([]contention.Pattern, error) {
	if spec.Racks == 0 {
		spec.Racks = min(2, len(cl.Racks()))
	}
	if len(spec.Sizes) == 0 {
		spec.Sizes = []int64{10_000_000}
	}
	if count < 0 || count > MaxRandomPatterns {
		return nil, fmt.Errorf("experiments: %d random patterns, want 0 to %d", count, MaxRandomPatterns)
	}
	if spec.Racks < 1 || spec.Racks > len(cl.Racks()) || spec.Nodes < 2 || spec.Nodes%spec.Racks != 0 || spec.D < 1 || spec.D > MaxRandomDraws {
		return nil, fmt.Errorf("experiments: random patterns need |N| ≥ 2 divisible by the %d racks used and d from 1 to %d (cluster %s has %d racks); got |N| = %d, d = %d",
			spec.Racks, MaxRandomDraws, cl.Name(), len(cl.Racks()), spec.Nodes, spec.D)
	}
	per := spec.Nodes / spec.Racks
	var nodes []string
	for r := 0; r < spec.Racks; r++ {
		rack := cl.RackNodes(r)
		if len(rack) < per {
			return nil, fmt.Errorf("experiments: rack %s has %d nodes, %d needed", cl.Racks()[r], len(rack), per)
		}
		nodes = append(nodes, rack[:per]...)
	}
	if spec.Tag != "" && !validTag(spec.Tag) {
		return nil, fmt.Errorf("experiments: random pattern tag %q: want lower-case letters and digits", spec.Tag)
	}
	stream := uint64(spec.Nodes)<<32 | uint64(spec.D)
	if spec.Tag != "" {
		h := fnv.New64a()
		h.Write([]byte(spec.Tag))
		stream ^= h.Sum64()
	}
	exp := Random
	if spec.Calibration {
		exp, stream = RandomCalibration, stream^0x63616c6962726174 // "calibrat"
	}
	rng := rand.New(rand.NewPCG(seed, stream))
	prefix := fmt.Sprintf("N%d-d%d-", spec.Nodes, spec.D)
	if spec.Tag != "" {
		prefix += spec.Tag + "-"
	}
	out := make([]contention.Pattern, 0, count)
	for len(out) < count {
		var flows []contention.Flow
		for s := range nodes {
			for k := 0; k < spec.D; k++ {
				d := rng.IntN(len(nodes) - 1)
				if d >= s {
					d++ // a different node
				}
				if rng.IntN(2) == 0 {
					continue
				}
				flows = append(flows, contention.Flow{Src: nodes[s], Dst: nodes[d], Bytes: float64(spec.Sizes[rng.IntN(len(spec.Sizes))])})
			}
		}
		if len(flows) == 0 {
			continue
		}
		out = append(out, contention.Pattern{ID: fmt.Sprintf("%s%03d", prefix, len(out)), Experiment: exp, Flows: flows})
	}
	return out, nil
}

// validTag says whether a random design's tag is lower-case letters and digits (a hyphen
// would break RandomSetting's reading of the IDs).
func validTag(tag string) bool {
	for _, r := range tag {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return tag != ""
}

// RandomSetting recovers (|N|, d) from a random pattern's ID; ok is false for IDs of another
// form, which validation then groups under one setting.
func RandomSetting(id string) (nodes, d int, ok bool) {
	parts := strings.Split(id, "-")
	if len(parts) < 2 || !strings.HasPrefix(parts[0], "N") || !strings.HasPrefix(parts[1], "d") {
		return 0, 0, false
	}
	n, err1 := strconv.Atoi(parts[0][1:])
	dd, err2 := strconv.Atoi(parts[1][1:])
	if err1 != nil || err2 != nil {
		return 0, 0, false
	}
	return n, dd, true
}

// FairnessPatterns are the unidirectional calibration designs of CCPE 2014 §5.1, for
// k = 1…maxK: fair_intra (A: k transfers from the first node of the first rack to its second
// node) and, on clusters of several racks, fair_inter (B: k transfers from k distinct nodes of
// the first rack to k distinct nodes of the second; k is capped by the rack sizes).
func FairnessPatterns(cl *cluster.Cluster, maxK int, bytes int64) []contention.Pattern {
	var out []contention.Pattern
	r0 := cl.RackNodes(0)
	for k := 1; k <= maxK && len(r0) >= 2; k++ {
		p := contention.Pattern{ID: fmt.Sprintf("k%d", k), Experiment: FairIntra}
		for i := 0; i < k; i++ {
			p.Flows = append(p.Flows, contention.Flow{Src: r0[0], Dst: r0[1], Bytes: float64(bytes)})
		}
		out = append(out, p)
	}
	if len(cl.Racks()) > 1 {
		r1 := cl.RackNodes(1)
		for k := 1; k <= maxK && k <= len(r0) && k <= len(r1); k++ {
			p := contention.Pattern{ID: fmt.Sprintf("k%d", k), Experiment: FairInter}
			for i := 0; i < k; i++ {
				p.Flows = append(p.Flows, contention.Flow{Src: r0[i], Dst: r1[i], Bytes: float64(bytes)})
			}
			out = append(out, p)
		}
	}
	return out
}

// ExchangePatterns are k = 1…maxK same-peer exchanges at once, as SimGrid's
// platform-calibration saturation test runs them: with the cluster's nodes in description
// order and half their number h, pair j joins node j and node h + j, and each pair sends
// bytes both ways at once (2k transfers, "exchange-k<k>"). The smallest k is measured for
// calibration (exchange_calibration), the others held out (exchange), so that a model
// calibrated on one exchange is judged on the rest. k stops at h: pairs never share a node.
func ExchangePatterns(cl *cluster.Cluster, maxK int, bytes int64) []contention.Pattern {
	nodes := cl.NodeNames()
	h := len(nodes) / 2
	var out []contention.Pattern
	for k := 1; k <= min(maxK, h); k++ {
		p := contention.Pattern{ID: fmt.Sprintf("exchange-k%d", k), Experiment: Exchange}
		if k == 1 {
			p.Experiment = ExchangeCalibration
		}
		for j := range k {
			a, b := nodes[j], nodes[h+j]
			p.Flows = append(p.Flows, contention.Flow{Src: a, Dst: b, Bytes: float64(bytes)}, contention.Flow{Src: b, Dst: a, Bytes: float64(bytes)})
		}
		out = append(out, p)
	}
	return out
}

// CyclePatterns are directed cycles of k = 2, 4, … up to maxK pairs, as the saturation test
// forms them: with h half the nodes, cycle c runs node 2c → h+2c → 2c+1 → h+2c+1 → 2c, so that
// every node sends to one peer and receives from another (2k transfers, "cycle-k<k>"). The
// smallest k is measured for calibration (cycle_calibration), the others held out (cycle).
// k stops at the largest even number of pairs the cluster holds.
func CyclePatterns(cl *cluster.Cluster, maxK int, bytes int64) []contention.Pattern {
	nodes := cl.NodeNames()
	h := len(nodes) / 2
	var out []contention.Pattern
	for k := 2; k <= min(maxK, h); k += 2 {
		p := contention.Pattern{ID: fmt.Sprintf("cycle-k%d", k), Experiment: Cycle}
		if k == 2 {
			p.Experiment = CycleCalibration
		}
		for c := range k / 2 {
			ring := []string{nodes[2*c], nodes[h+2*c], nodes[2*c+1], nodes[h+2*c+1]}
			for i, src := range ring {
				p.Flows = append(p.Flows, contention.Flow{Src: src, Dst: ring[(i+1)%len(ring)], Bytes: float64(bytes)})
			}
		}
		out = append(out, p)
	}
	return out
}

// IncastPatterns are k = 2…maxK nodes sending to one node at once ("incast-k<k>"): with the
// cluster's nodes in description order and h half their number, nodes h … h+k−1 send bytes
// to node 0, as the exchanges' pairs join node j and node h + j (on two racks of equal size,
// from the other rack). k stops at h.
func IncastPatterns(cl *cluster.Cluster, maxK int, bytes int64) []contention.Pattern {
	return fanPatterns(cl, maxK, bytes, Incast)
}

// OutcastPatterns are one node sending to k = 2…maxK nodes at once ("outcast-k<k>"): node 0
// to nodes h … h+k−1, as IncastPatterns the other way.
func OutcastPatterns(cl *cluster.Cluster, maxK int, bytes int64) []contention.Pattern {
	return fanPatterns(cl, maxK, bytes, Outcast)
}

// fanPatterns are the incast or outcast patterns between node 0 and nodes h … h+k−1.
func fanPatterns(cl *cluster.Cluster, maxK int, bytes int64, exp Name) []contention.Pattern {
	nodes := cl.NodeNames()
	h := len(nodes) / 2
	var out []contention.Pattern
	for k := 2; k <= min(maxK, h); k++ {
		p := contention.Pattern{ID: fmt.Sprintf("%s-k%d", exp, k), Experiment: exp}
		for j := range k {
			f := contention.Flow{Src: nodes[h+j], Dst: nodes[0], Bytes: float64(bytes)}
			if exp == Outcast {
				f.Src, f.Dst = f.Dst, f.Src
			}
			p.Flows = append(p.Flows, f)
		}
		out = append(out, p)
	}
	return out
}

// BidirectionalPatterns are the designs of CCPE 2014 §5.2 for every in ∈ 1…maxIn and
// out ∈ 1…maxOut: bidir_nic, in transfers into the first node of the first rack from other
// nodes of that rack and out transfers from it to others; and, on clusters of several racks,
// bidir_backbone, in transfers from distinct nodes of the second rack to distinct nodes of the
// first and out transfers the other way. Node choices wrap around when a rack is small.
func BidirectionalPatterns(cl *cluster.Cluster, maxIn, maxOut int, bytes int64) []contention.Pattern {
	var out []contention.Pattern
	r0 := cl.RackNodes(0)
	b := float64(bytes)
	if len(r0) >= 2 {
		others := r0[1:]
		for i := 1; i <= maxIn; i++ {
			for o := 1; o <= maxOut; o++ {
				p := contention.Pattern{ID: fmt.Sprintf("in%d-out%d", i, o), Experiment: BidirNIC}
				for k := 0; k < i; k++ {
					p.Flows = append(p.Flows, contention.Flow{Src: others[k%len(others)], Dst: r0[0], Bytes: b})
				}
				for k := 0; k < o; k++ {
					p.Flows = append(p.Flows, contention.Flow{Src: r0[0], Dst: others[len(others)-1-k%len(others)], Bytes: b})
				}
				out = append(out, p)
			}
		}
	}
	if len(cl.Racks()) > 1 {
		r1 := cl.RackNodes(1)
		for i := 1; i <= maxIn; i++ {
			for o := 1; o <= maxOut; o++ {
				p := contention.Pattern{ID: fmt.Sprintf("in%d-out%d", i, o), Experiment: BidirBackbone}
				for k := 0; k < i; k++ {
					p.Flows = append(p.Flows, contention.Flow{Src: r1[k%len(r1)], Dst: r0[k%len(r0)], Bytes: b})
				}
				for k := 0; k < o; k++ {
					p.Flows = append(p.Flows, contention.Flow{Src: r0[len(r0)-1-k%len(r0)], Dst: r1[len(r1)-1-k%len(r1)], Bytes: b})
				}
				out = append(out, p)
			}
		}
	}
	return out
}

// PairID names the pattern of a single transfer of a point-to-point sweep: "src>dst:bytes".
func PairID(src, dst string, bytes int64) string { return fmt.Sprintf("%s>%s:%d", src, dst, bytes) }

// AlltoallvPattern is an MPI_Alltoallv as point-to-point transfers: sizes[i][j] bytes from nodes[i]
// to nodes[j], for every i ≠ j with a positive size.
func AlltoallvPattern(id string, nodes []string, sizes [][]int64) (contention.Pattern, error) {
	if len(sizes) != len(nodes) {
		return contention.Pattern{}, fmt.Errorf("experiments: alltoallv: %d nodes but %d rows of sizes", len(nodes), len(sizes))
	}
	p := contention.Pattern{ID: id, Experiment: Alltoallv}
	for i, row := range sizes {
		if len(row) != len(nodes) {
			return contention.Pattern{}, fmt.Errorf("experiments: alltoallv: row %d has %d sizes, want %d", i, len(row), len(nodes))
		}
		for j, m := range row {
			if i != j && m > 0 {
				p.Flows = append(p.Flows, contention.Flow{Src: nodes[i], Dst: nodes[j], Bytes: float64(m)})
			}
		}
	}
	return p, nil
}

// StaticSyncPatterns draws the static-synchronous contention graphs of Martinasso and Méhaut
// (Euro-Par 2011, §3.3): communications of the same size that start together. It draws count
// connected random graphs of 2 to maxEdges edges (at most 3 leaving a node) on the first six
// nodes of the first rack and, on clusters of several racks, the first three of the second,
// and adds every connected sub-graph of each (the back-solving of a graph's penalties needs
// those of the graphs its later steps leave), keeping one graph per shape. IDs are
// "g<index>"; the same seed gives the same graphs.
func StaticSyncPatterns(cl *cluster.Cluster, count, maxEdges int, bytes int64, seed uint64) []contention.Pattern {
	pool := cl.RackNodes(0)
	pool = pool[:min(6, len(pool))]
	if len(cl.Racks()) > 1 {
		r1 := cl.RackNodes(1)
		pool = append(pool, r1[:min(3, len(r1))]...)
	}
	if len(pool) < 2 || maxEdges < 1 {
		return nil
	}
	rng := rand.New(rand.NewPCG(seed, 0x7373))
	seen := map[string]bool{}
	var out []contention.Pattern
	add := func(edges []contention.Edge) {
		sh := contention.Shape(cl, edges)
		if seen[sh.Key] {
			return
		}
		seen[sh.Key] = true
		p := contention.Pattern{ID: fmt.Sprintf("g%03d", len(out)), Experiment: StaticSync}
		for _, e := range edges {
			p.Flows = append(p.Flows, contention.Flow{Src: e.Src, Dst: e.Dst, Bytes: float64(bytes)})
		}
		out = append(out, p)
	}
	for g := 0; g < count; g++ {
		n := 2 + rng.IntN(max(1, maxEdges-1))
		var edges []contention.Edge
		used := map[string]bool{}
		outDeg := map[string]int{}
		for len(edges) < n {
			s, d := pool[rng.IntN(len(pool))], pool[rng.IntN(len(pool))]
			if s == d || outDeg[s] >= 3 || (len(edges) > 0 && !used[s] && !used[d]) {
				continue
			}
			edges = append(edges, contention.Edge{Src: s, Dst: d})
			used[s], used[d] = true, true
			outDeg[s]++
		}
		// Every connected sub-graph, smallest first, then the graph itself last.
		for mask := 1; mask < 1<<len(edges); mask++ {
			var sub []contention.Edge
			for i, e := range edges {
				if mask&(1<<i) != 0 {
					sub = append(sub, e)
				}
			}
			if len(contention.Components(sub)) == 1 {
				add(sub)
			}
		}
	}
	slices.SortStableFunc(out, func(a, b contention.Pattern) int { return len(a.Flows) - len(b.Flows) })
	for i := range out {
		out[i].ID = fmt.Sprintf("g%03d", i)
	}
	return out
}
