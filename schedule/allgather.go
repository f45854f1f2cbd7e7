package schedule

import "fmt"

// The allgather algorithms. A trace piece i is rank i's contribution.
var allgatherAlgorithms = []algorithm{
	{name: "ring", build: allgatherRing, transfers: quadratic,
		doc: "n − 1 rounds; in round s every rank sends to rank + 1 the block it received in round s − 1 (its own first)",
		src: "Open MPI ompi_coll_base_allgather_intra_ring (tuned algorithm 4); MPICH MPIR_Allgather_intra_ring"},
	{name: "recursive-doubling", build: allgatherRecursiveDoubling, transfers: logarithmic, substitute: doublingNeedsPow2,
		doc: "log₂ n rounds for a power-of-two n; in round k every rank exchanges the 2ᵏ blocks it holds with rank XOR 2ᵏ (otherwise Bruck's algorithm, as Open MPI does)",
		src: "Open MPI ompi_coll_base_allgather_intra_recursivedoubling (tuned algorithm 3); MPICH MPIR_Allgather_intra_recursive_doubling"},
	{name: "bruck", build: allgatherBruck, transfers: logarithmic,
		doc: "⌈log₂ n⌉ rounds; in round k every rank sends to rank − 2ᵏ the first min(2ᵏ, n − 2ᵏ) blocks it holds",
		src: "Open MPI ompi_coll_base_allgather_intra_bruck (tuned algorithm 2); MPICH MPIR_Allgather_intra_brucks"},
	{name: "neighbor-exchange", build: allgatherNeighbor, transfers: quadratic, substitute: neighborNeedsEven,
		doc: "n/2 rounds for an even n; neighbours exchange one block, then two blocks with the left and the right neighbour in turn (otherwise the ring, as Open MPI does)",
		src: "Open MPI ompi_coll_base_allgather_intra_neighborexchange (tuned algorithm 5)"},
	{name: "two-proc", build: allgatherRing, transfers: quadratic, substitute: twoOr("ring"),
		doc: "two ranks only: one round in which they exchange their blocks",
		src: "Open MPI ompi_coll_base_allgather_intra_two_procs (tuned algorithm 6)"},
}

// sendBlocks places a transfer of the given contributions (each c.Bytes) in round k.
func sendBlocks(b *builder, c *Collective, k, src, dst int, blocks ...int) {
	if b.add(k, src, dst, float64(len(blocks))*c.Bytes) && b.trace {
		ids := make([]int32, len(blocks))
		for i, p := range blocks {
			ids[i] = int32(p)
		}
		b.carry(ids)
	}
}

// span lists the blocks from first on, count of them, modulo n.
func span(first, count, n int) []int {
	out := make([]int, count)
	for i := range out {
		out[i] = ((first+i)%n + n) % n
	}
	return out
}

func allgatherRing(b *builder, c *Collective) {
	n := b.n
	for s := 0; s < n-1; s++ {
		for r := range n {
			sendBlocks(b, c, 0, r, (r+1)%n, (r-s+n)%n)
		}
		b.step()
	}
}

func doublingNeedsPow2(c *Collective) (string, string) {
	if n := len(c.Ranks); !isPow2(n) {
		return "bruck", fmt.Sprintf("%d ranks are not a power of two: Open MPI's ompi_coll_base_allgather_intra_recursivedoubling runs Bruck's algorithm instead", n)
	}
	return "", ""
}

// allgatherRecursiveDoubling places the exchanges of distance d = 1, 2, 4, …: rank r holds
// the blocks of its group [r − r mod d, + d) and sends them to r XOR d.
func allgatherRecursiveDoubling(b *builder, c *Collective) {
	for d := 1; d < b.n; d <<= 1 {
		for r := range b.n {
			sendBlocks(b, c, 0, r, r^d, span(r-r%d, d, b.n)...)
		}
		b.step()
	}
}

// allgatherBruck places Bruck's rounds: before the round of distance d, rank r holds the
// blocks r … r + d − 1, and sends the first min(d, n − d) of them to r − d.
func allgatherBruck(b *builder, c *Collective) {
	n := b.n
	for d := 1; d < n; d <<= 1 {
		count := min(d, n-d)
		for r := range n {
			sendBlocks(b, c, 0, r, (r-d+n)%n, span(r, count, n)...)
		}
		b.step()
	}
}

func neighborNeedsEven(c *Collective) (string, string) {
	if n := len(c.Ranks); n%2 != 0 {
		return "ring", fmt.Sprintf("%d ranks are odd: Open MPI's ompi_coll_base_allgather_intra_neighborexchange runs the ring instead", n)
	}
	return "", ""
}

// allgatherNeighbor places the neighbour exchange of Chen et al. (HPC Asia 2005) as Open MPI
// runs it: an even rank's neighbours are r + 1 then r − 1, an odd rank's r − 1 then r + 1;
// the first round exchanges the own blocks with the first neighbour, and round i (1 … n/2 − 1)
// sends to neighbour i mod 2 the two blocks received in round i − 1 (for an even rank in the
// round after the first, its own pair).
func allgatherNeighbor(b *builder, c *Collective) {
	n := b.n
	for r := range n {
		sendBlocks(b, c, 0, r, neighbor(r, 0, n), r)
	}
	b.step()
	from := make([]int, n) // the first of the two blocks each rank sends next
	recv := make([][2]int, n)
	for r := range n {
		if r%2 == 0 {
			from[r], recv[r] = r, [2]int{r, r}
		} else {
			from[r], recv[r] = r-1, [2]int{r - 1, r - 1}
		}
	}
	for i := 1; i < n/2; i++ {
		p := i % 2
		for r := range n {
			offset := [2]int{2, -2}
			if r%2 != 0 {
				offset = [2]int{-2, 2}
			}
			recv[r][p] = (recv[r][p] + offset[p] + n) % n
			sendBlocks(b, c, 0, r, neighbor(r, p, n), span(from[r], 2, n)...)
			from[r] = recv[r][p]
		}
		b.step()
	}
}

// neighbor is rank r's neighbour p (0 or 1) in the neighbour exchange.
func neighbor(r, p, n int) int {
	if (r%2 == 0) == (p == 0) {
		return (r + 1) % n
	}
	return (r - 1 + n) % n
}
