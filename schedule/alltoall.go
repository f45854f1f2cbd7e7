package schedule

import "fmt"

// Throttle is how many sends and receives MPICH's scattered all-to-all posts at a time per
// rank, MPIR_CVAR_ALLTOALL_THROTTLE's default (MPICH 4.3.2, src/mpi/coll/cvars.txt).
const Throttle = 32

// The all-to-all algorithms. A trace piece i·n + j is the block rank i sends to rank j.
var alltoallAlgorithms = []algorithm{
	{name: "linear", build: alltoallLinear, transfers: quadratic,
		doc: "one round: every rank posts its n − 1 sends and receives at once",
		src: "Open MPI ompi_coll_base_alltoall_intra_basic_linear (tuned algorithm 1) and linear_sync (algorithm 4, which posts every request at once under the default coll_tuned_alltoall_max_requests = 0)"},
	{name: "pairwise", build: alltoallPairwise, transfers: quadratic,
		doc: "n − 1 rounds; in round s every rank sends to rank + s and receives from rank − s (mod n)",
		src: "Open MPI ompi_coll_base_alltoall_intra_pairwise (tuned algorithm 2); MPICH MPIR_Alltoall_intra_pairwise for a number of ranks that is not a power of two"},
	{name: "pairwise-xor", build: alltoallPairwiseXor, transfers: quadratic, substitute: xorNeedsPow2,
		doc: "n − 1 rounds; in round s every rank exchanges with rank XOR s (a power-of-two n; otherwise pairwise, as MPICH's function does)",
		src: "MPICH MPIR_Alltoall_intra_pairwise for a power-of-two number of ranks"},
	{name: "bruck", build: alltoallBruck, transfers: logarithmic,
		doc: "⌈log₂ n⌉ rounds; in round k every rank sends to rank + 2ᵏ the blocks whose index (counted from the sender after a local rotation) has bit k set, packed in one message",
		src: "Open MPI ompi_coll_base_alltoall_intra_bruck (tuned algorithm 3, modified_bruck); MPICH MPIR_Alltoall_intra_brucks"},
	{name: "scattered", build: alltoallScattered, transfers: quadratic,
		doc: fmt.Sprintf("⌈n/%d⌉ rounds; in round b every rank posts its sends to rank − k and receives from rank + k for the %d offsets k from %d·b on, and waits for them", Throttle, Throttle, Throttle),
		src: "MPICH MPIR_Alltoall_intra_scattered, with MPIR_CVAR_ALLTOALL_THROTTLE = 32"},
	{name: "two-proc", build: alltoallPairwise, transfers: quadratic, substitute: twoOr("pairwise"),
		doc: "two ranks only: one round in which they exchange their blocks",
		src: "Open MPI ompi_coll_base_alltoall_intra_two_procs (tuned algorithm 5)"},
}

// The Alltoallv algorithms: the all-to-all's, each transfer of Sizes[i][j] bytes (none where
// it is zero).
var alltoallvAlgorithms = []algorithm{
	{name: "linear", build: alltoallLinear, transfers: quadratic,
		doc: "one round: every rank posts all its sends and receives at once",
		src: "Open MPI ompi_coll_base_alltoallv_intra_basic_linear (tuned algorithm 1)"},
	{name: "pairwise", build: alltoallPairwise, transfers: quadratic,
		doc: "n − 1 rounds; in round s every rank sends to rank + s and receives from rank − s (mod n)",
		src: "Open MPI ompi_coll_base_alltoallv_intra_pairwise (tuned algorithm 2)"},
	{name: "scattered", build: alltoallScattered, transfers: quadratic,
		doc: fmt.Sprintf("⌈n/%d⌉ rounds of at most %d sends and receives per rank, as the all-to-all's", Throttle, Throttle),
		src: "MPICH MPIR_Alltoallv_intra_scattered, with MPIR_CVAR_ALLTOALL_THROTTLE = 32"},
}

// block is what rank i sends to rank j in an all-to-all or an Alltoallv.
func block(c *Collective, i, j int) float64 {
	if c.Op == Alltoallv {
		return c.Sizes[i][j]
	}
	return c.Bytes
}

// sendBlock places rank i's block for rank j in round k.
func sendBlock(b *builder, c *Collective, k, i, j int) {
	if b.add(k, i, j, block(c, i, j)) && b.trace {
		b.carry([]int32{int32(i*b.n + j)})
	}
}

func alltoallLinear(b *builder, c *Collective) {
	for i := range b.n {
		for j := range b.n {
			if i != j {
				sendBlock(b, c, 0, i, j)
			}
		}
	}
}

func alltoallPairwise(b *builder, c *Collective) {
	n := b.n
	for s := 1; s < n; s++ {
		for r := range n {
			sendBlock(b, c, 0, r, (r+s)%n)
		}
		b.step()
	}
}

func alltoallPairwiseXor(b *builder, c *Collective) {
	for s := 1; s < b.n; s++ {
		for r := range b.n {
			sendBlock(b, c, 0, r, r^s)
		}
		b.step()
	}
}

func xorNeedsPow2(c *Collective) (string, string) {
	if n := len(c.Ranks); !isPow2(n) {
		return "pairwise", fmt.Sprintf("%d ranks are not a power of two: MPICH's MPIR_Alltoall_intra_pairwise shifts (rank ± s) instead of exchanging with rank XOR s", n)
	}
	return "", ""
}

// twoOr substitutes alt for an algorithm of two ranks only (Open MPI's two_procs functions
// refuse other numbers; alt is their generalisation).
func twoOr(alt string) func(c *Collective) (string, string) {
	return func(c *Collective) (string, string) {
		if n := len(c.Ranks); n != 2 {
			return alt, fmt.Sprintf("two-proc needs two ranks, not %d: %s, which sends the same transfers for two", n, alt)
		}
		return "", ""
	}
}

// alltoallBruck places Bruck's rounds. After the local rotation, slot i of rank r holds the
// block r sends to r + i; in the round of distance d every rank sends the slots whose index
// has bit d set to rank + d, which keeps them in the same slots. A slot that has travelled
// t = i mod d so far holds, at rank h, the block from h − t to h + i − t.
func alltoallBruck(b *builder, c *Collective) {
	n := b.n
	for d := 1; d < n; d <<= 1 {
		count := 0
		for i := 1; i < n; i++ {
			if i&d != 0 {
				count++
			}
		}
		for r := range n {
			if b.add(0, r, (r+d)%n, float64(count)*c.Bytes) && b.trace {
				var ids []int32
				for i := 1; i < n; i++ {
					if i&d != 0 {
						t := i & (d - 1)
						ids = append(ids, int32(((r-t+n)%n)*n+(r+i-t)%n))
					}
				}
				b.carry(ids)
			}
		}
		b.step()
	}
}

// alltoallScattered places MPICH's batches: in batch ii every rank sends to rank − k for
// the offsets k from ii to ii + Throttle − 1 (its own block, k = 0, is a local copy).
func alltoallScattered(b *builder, c *Collective) {
	n := b.n
	for ii := 0; ii < n; ii += Throttle {
		for r := range n {
			for k := ii; k < min(ii+Throttle, n); k++ {
				if k != 0 {
					sendBlock(b, c, 0, r, (r-k+n)%n)
				}
			}
		}
		b.step()
	}
}
