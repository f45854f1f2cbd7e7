package schedule

// The scatter algorithms. A trace piece j is rank j's block.
var scatterAlgorithms = []algorithm{
	{name: "binomial", build: scatterBinomial, transfers: logarithmic,
		doc: "⌈log₂ n⌉ rounds down the binomial tree: a rank sends each child (largest subtree first, one per round) the blocks of the child's subtree",
		src: "Open MPI ompi_coll_base_scatter_intra_binomial (tuned algorithm 2); MPICH MPIR_Scatter_intra_binomial"},
	{name: "linear", build: scatterLinear, transfers: quadratic,
		doc: "n − 1 rounds: the root sends each rank its block with a blocking send, in rank order",
		src: "Open MPI ompi_coll_base_scatter_intra_basic_linear (tuned algorithm 1)"},
	{name: "linear-nb", build: scatterLinearNB, transfers: quadratic,
		doc: "one round: the root posts the n − 1 sends at once",
		src: "Open MPI ompi_coll_base_scatter_intra_linear_nb (tuned algorithm 3, with the default coll_tuned_scatter_blocking_send_ratio = 0: no blocking send)"},
}

// The gather algorithms. A trace piece j is rank j's block. Messages below the eager limit
// overlap in a real run of the linear gathers, which the sequential rounds bound from above.
var gatherAlgorithms = []algorithm{
	{name: "binomial", build: gatherBinomial, transfers: logarithmic,
		doc: "⌈log₂ n⌉ rounds up the binomial tree: a rank receives from its children (smallest subtree first, one per round), then sends its parent the blocks of its subtree",
		src: "Open MPI ompi_coll_base_gather_intra_binomial (tuned algorithm 2); MPICH MPIR_Gather_intra_binomial"},
	{name: "linear", build: gatherLinear, transfers: quadratic,
		doc: "n − 1 rounds: the root receives the ranks' blocks with blocking receives, in rank order",
		src: "Open MPI ompi_coll_base_gather_intra_basic_linear (tuned algorithm 1)"},
	{name: "linear-sync", build: gatherLinear, transfers: quadratic,
		doc: "n − 1 rounds: the root asks each rank in turn (a zero-byte message) and waits for its block",
		src: "Open MPI ompi_coll_base_gather_intra_linear_sync (tuned algorithm 3, whose first segment is the whole block under the fixed rules' segment size 0)"},
}

// subtree lists the ranks of the binomial subtree of vrank ch whose parent is v: vranks ch …
// ch + (ch − v) − 1, below n.
func subtree(b *builder, c *Collective, v, ch int) (float64, []int32) {
	end := min(ch+(ch-v), b.n)
	var ids []int32
	if b.trace {
		for u := ch; u < end; u++ {
			ids = append(ids, int32(rank(u, c.Root, b.n)))
		}
	}
	return float64(end-ch) * c.Bytes, ids
}

func scatterBinomial(b *builder, c *Collective) {
	b.down(binomialTree(b.n), c.Root, false, func(v, ch int) (float64, []int32) { return subtree(b, c, v, ch) })
}

func gatherBinomial(b *builder, c *Collective) {
	b.up(binomialTree(b.n).reversed(), c.Root, func(v, ch int) (float64, []int32) { return subtree(b, c, v, ch) })
}

// scatterLinear sends the blocks in rank order, one round each.
func scatterLinear(b *builder, c *Collective) {
	for r := range b.n {
		if r != c.Root && b.add(0, c.Root, r, c.Bytes) {
			b.carry([]int32{int32(r)})
			b.step()
		}
	}
}

func scatterLinearNB(b *builder, c *Collective) {
	for r := range b.n {
		if r != c.Root && b.add(0, c.Root, r, c.Bytes) {
			b.carry([]int32{int32(r)})
		}
	}
	b.step()
}

// gatherLinear receives the blocks in rank order, one round each.
func gatherLinear(b *builder, c *Collective) {
	for r := range b.n {
		if r != c.Root && b.add(0, r, c.Root, c.Bytes) {
			b.carry([]int32{int32(r)})
			b.step()
		}
	}
}
