package schedule

import (
	"fmt"
	"math"
)

// KnomialRadix is the radix of Open MPI's k-nomial broadcast, the default of
// coll_tuned_bcast_algorithm_knomial_radix (Open MPI 4.1.8, coll_tuned_bcast_decision.c).
const KnomialRadix = 4

// The broadcast algorithms. Open MPI's tuned component calls them without segmentation
// (its fixed rules pass a segment size of 0) and with a fan-out of 0, which its chain makes
// 1: chain and pipeline then send the same transfers. A trace piece is one of the slices the
// algorithm cuts the message into (builder.slices): the whole message, its two halves, or
// the n slices of ⌈Bytes/n⌉ bytes of the scatter-based algorithms.
var bcastAlgorithms = []algorithm{
	{name: "linear", build: bcastTree(starTree, true), transfers: quadratic,
		doc: "one round: the root sends the message to every other rank at once",
		src: "Open MPI ompi_coll_base_bcast_intra_basic_linear (tuned algorithm 1)"},
	{name: "chain", build: bcastTree(chainTree, true), transfers: quadratic,
		doc: "n − 1 rounds: rank root + i forwards the message to root + i + 1",
		src: "Open MPI ompi_coll_base_bcast_intra_chain (tuned algorithm 2, fan-out 1, one segment)"},
	{name: "pipeline", build: bcastTree(chainTree, true), transfers: quadratic,
		doc: "n − 1 rounds: rank root + i forwards the message to root + i + 1",
		src: "Open MPI ompi_coll_base_bcast_intra_pipeline (tuned algorithm 3, one segment)"},
	{name: "binomial", build: bcastTree(binomialTree, false), transfers: logarithmic,
		doc: "⌈log₂ n⌉ rounds: in round k every rank that holds the message sends it to the rank 2^(⌈log₂ n⌉ − 1 − k) away (relative to the root), one child per round",
		src: "MPICH MPIR_Bcast_intra_binomial"},
	{name: "bmtree", build: bcastTree(bmTree, true), transfers: logarithmic,
		doc: "Open MPI's binomial tree: a rank sends the message to all its children (v + 2ʲ for every 2ʲ above v) at once when it has received it, one tree level per round",
		src: "Open MPI ompi_coll_base_bcast_intra_binomial (tuned algorithm 6) over ompi_coll_base_topo_build_bmtree"},
	{name: "bintree", build: bcastTree(func(n int) tree { return karyTree(n, 2) }, true), transfers: logarithmic,
		doc: "a binary tree (level ℓ holds 2ˡ ranks): a rank sends the message to its two children at once, one level per round",
		src: "Open MPI ompi_coll_base_bcast_intra_bintree (tuned algorithm 5) over ompi_coll_base_topo_build_tree(2)"},
	{name: "split-bintree", build: bcastSplitBintree, transfers: logarithmic, substitute: splitNeedsTwoBytes,
		doc: "the binary tree carrying the first half of the message down the left subtree and the second down the right, a rank sending to its children one after the other; then every rank exchanges its half with its twin in the other subtree",
		src: "Open MPI ompi_coll_base_bcast_intra_split_bintree (tuned algorithm 4)"},
	{name: "knomial", build: bcastTree(func(n int) tree { return knomialTree(n, KnomialRadix) }, true), transfers: logarithmic,
		doc: fmt.Sprintf("a %d-nomial tree: a rank sends the message to all its children at once when it has received it, one level per round", KnomialRadix),
		src: "Open MPI ompi_coll_base_bcast_intra_knomial (tuned algorithm 7, radix 4) over ompi_coll_base_topo_build_kmtree"},
	{name: "scatter-allgather", build: bcastScatterAllgather(bcastRecursiveDoubling), transfers: logarithmic, substitute: scatterNeedsBytes,
		doc: "van de Geijn's broadcast: a binomial scatter of n slices of ⌈m/n⌉ bytes (one child per round), then a recursive-doubling allgather of the slices, with the recursive-halving completion for a number of ranks that is not a power of two",
		src: "Open MPI ompi_coll_base_bcast_intra_scatter_allgather (tuned algorithm 8); MPICH MPIR_Bcast_intra_scatter_recursive_doubling_allgather"},
	{name: "scatter-ring-allgather", build: bcastScatterAllgather(bcastRing), transfers: quadratic, substitute: scatterNeedsBytes,
		doc: "van de Geijn's broadcast: a binomial scatter of n slices of ⌈m/n⌉ bytes, then a ring allgather of the slices (n − 1 rounds)",
		src: "Open MPI ompi_coll_base_bcast_intra_scatter_allgather_ring (tuned algorithm 9); MPICH MPIR_Bcast_intra_scatter_ring_allgather"},
}

// bcastTree broadcasts the whole message down the tree of mk.
func bcastTree(mk func(n int) tree, concurrent bool) func(b *builder, c *Collective) {
	return func(b *builder, c *Collective) {
		b.slices = []float64{c.Bytes}
		whole := []int32{0}
		b.down(mk(b.n), c.Root, concurrent, func(int, int) (float64, []int32) { return c.Bytes, whole })
	}
}

func splitNeedsTwoBytes(c *Collective) (string, string) {
	if c.Bytes < 2 {
		return "chain", "a message of one byte has no two halves: Open MPI's split_bintree runs the chain"
	}
	return "", ""
}

// bcastSplitBintree places Open MPI's split binary tree: in the binary tree, the processes at
// odd vranks form the left subtree and receive the first half (⌈m/2⌉ bytes), those at even
// vranks the right one and the second half, each process sending to its children one after
// the other. Then every process but the root exchanges its half with its twin (v + 1 for a
// left v, v − 1 for a right one); for an even n, the last process has no twin and the root
// sends it the second half.
func bcastSplitBintree(b *builder, c *Collective) {
	n := b.n
	first := math.Ceil(c.Bytes / 2)
	half := [2]float64{first, c.Bytes - first}
	b.slices = half[:]
	side := func(v int) int { return (v + 1) % 2 } // 0: left, 1: right (the root too)
	ids := [2][]int32{{0}, {1}}
	b.down(karyTree(n, 2), c.Root, false, func(_, ch int) (float64, []int32) {
		return half[side(ch)], ids[side(ch)]
	})
	for v := 1; v < n; v++ {
		s := side(v)
		twin := v + 1
		if s == 1 {
			twin = v - 1
		}
		if twin == n {
			continue
		}
		if b.add(0, rank(v, c.Root, n), rank(twin, c.Root, n), half[s]) {
			b.carry(ids[s])
		}
	}
	if n%2 == 0 && b.add(0, c.Root, rank(n-1, c.Root, n), half[1]) {
		b.carry(ids[1])
	}
	b.step()
}

func scatterNeedsBytes(c *Collective) (string, string) {
	if n := len(c.Ranks); c.Bytes < float64(n) {
		return "linear", fmt.Sprintf("%g bytes are fewer than the %d ranks: Open MPI's scatter-allgather broadcasts run the linear one", c.Bytes, n)
	}
	return "", ""
}

// slicing cuts a message of m bytes into n slices of ⌈m/n⌉ bytes (the last ones shorter or
// empty), as the scatter-based broadcasts do.
type slicing struct {
	m, size float64
	n       int
}

func newSlicing(m float64, n int) slicing { return slicing{m, math.Ceil(m / float64(n)), n} }

// bytes is the size of slices lo … hi − 1.
func (s slicing) bytes(lo, hi int) float64 {
	if hi <= lo {
		return 0
	}
	return max(0, math.Min(s.m, float64(hi)*s.size)-float64(lo)*s.size)
}

// ids lists the non-empty slices among lo … hi − 1, when tracing.
func (s slicing) ids(b *builder, lo, hi int) []int32 {
	if !b.trace {
		return nil
	}
	var out []int32
	for j := lo; j < hi; j++ {
		if s.bytes(j, j+1) > 0 {
			out = append(out, int32(j))
		}
	}
	return out
}

// bcastScatterAllgather scatters the slices down MPICH's binomial tree (slice v ends at vrank
// v; a child v + m receives the slices of its subtree, v + m … v + 2m − 1), then runs
// allgather over them.
func bcastScatterAllgather(allgather func(b *builder, c *Collective, s slicing)) func(b *builder, c *Collective) {
	return func(b *builder, c *Collective) {
		n := b.n
		s := newSlicing(c.Bytes, n)
		if b.trace {
			b.slices = make([]float64, n)
			for j := range n {
				b.slices[j] = s.bytes(j, j+1)
			}
		}
		b.down(binomialTree(n), c.Root, false, func(v, ch int) (float64, []int32) {
			end := min(ch+(ch-v), n)
			return s.bytes(ch, end), s.ids(b, ch, end)
		})
		allgather(b, c, s)
	}
}

// bcastRecursiveDoubling is the allgather of Open MPI's scatter-allgather: at distance m,
// vrank v sends the slices of its group [v − v mod m, + m) to v XOR m when that exists. When
// the partner group of v's lower half is incomplete, the processes of the lower half that
// received it pass it on to those that did not by recursive halving, sending at distance
// h = m/2, m/4, …, 1 to v + h whenever v holds it and v + h does not (a round per distance).
func bcastRecursiveDoubling(b *builder, c *Collective, s slicing) {
	n := b.n
	at := func(v int) int { return rank(v, c.Root, n) }
	for m := 1; m < n; m <<= 1 {
		for v := range n {
			if w := v ^ m; w < n {
				lo := v - v%m
				if b.add(0, at(v), at(w), s.bytes(lo, min(lo+m, n))) {
					b.carry(s.ids(b, lo, min(lo+m, n)))
				}
			}
		}
		k := 1
		for h := m >> 1; h > 0; h >>= 1 {
			for v := range n {
				group, partner := v-v%m, (v^m)-(v^m)%m
				if partner+m <= n {
					continue
				}
				have := n - group - m // processes of the lower half that received the partner group
				root := v - v%(2*h)
				if w := v ^ h; w > v && v < root+have && w >= root+have {
					hi := min(group+2*m, n)
					if b.add(k, at(v), at(w), s.bytes(group+m, hi)) {
						b.carry(s.ids(b, group+m, hi))
					}
				}
			}
			k++
		}
		b.step()
	}
}

// bcastRing is the ring allgather of the slices: in round i (1 … n − 1), vrank v sends slice
// v − i + 1 to v + 1.
func bcastRing(b *builder, c *Collective, s slicing) {
	n := b.n
	for i := 1; i < n; i++ {
		for v := range n {
			j := (v - i + 1 + n) % n
			if b.add(0, rank(v, c.Root, n), rank(v+1, c.Root, n), s.bytes(j, j+1)) {
				b.carry(s.ids(b, j, j+1))
			}
		}
		b.step()
	}
}
