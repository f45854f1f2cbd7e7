package schedule

// The reduce-scatter algorithms, for a commutative operation; the reductions' computing
// time is left out. A trace piece i·n + j is rank i's contribution to block j: a transfer of
// a partial result carries every contribution reduced into it.
var reduceScatterAlgorithms = []algorithm{
	{name: "ring", build: reduceScatterRing, transfers: quadratic,
		doc: "n − 1 rounds; in round k every rank sends to rank + 1 its partial result of block rank − k",
		src: "Open MPI ompi_coll_base_reduce_scatter_intra_ring (tuned algorithm 3)"},
	{name: "recursive-halving", build: reduceScatterHalving, transfers: logarithmic,
		doc: "for n not a power of two, the even ranks below 2(n − p) first send their whole vector to rank + 1 (p: the largest power of two below n); then log₂ p rounds in which the p remaining ranks exchange half of what they still reduce with the rank at distance p/2, p/4, …, 1; then the odd ranks below 2(n − p) send rank − 1 its block",
		src: "Open MPI ompi_coll_base_reduce_scatter_intra_basic_recursivehalving (tuned algorithm 2); MPICH MPIR_Reduce_scatter_intra_recursive_halving"},
	{name: "pairwise", build: reduceScatterPairwise, transfers: quadratic,
		doc: "n − 1 rounds; in round s every rank sends to rank + s its contribution to that rank's block",
		src: "MPICH MPIR_Reduce_scatter_intra_pairwise"},
	{name: "butterfly", build: reduceScatterButterfly, transfers: logarithmic,
		doc: "the same reduction to a power of two p as recursive halving, then log₂ p rounds exchanging halves with the rank at distance 1, 2, …, p/2, then every rank sends its result to the rank of the bit-reversed index (and to the rank left out, when it reduced for one)",
		src: "Open MPI ompi_coll_base_reduce_scatter_intra_butterfly (tuned algorithm 4)"},
	{name: "non-overlapping", transfers: quadratic,
		doc: "a reduce to rank 0 followed by a scatter: its reduce is a collective of its own, with Open MPI's own rules, which this package does not expand",
		src: "Open MPI ompi_coll_base_reduce_scatter_intra_nonoverlapping (tuned algorithm 1)"},
}

// contributions tracks, when tracing, whose contributions each rank has reduced into the
// blocks it still holds (every block a rank holds has the same ones in these algorithms).
type contributions struct {
	b    *builder
	sets [][]int
}

func newContributions(b *builder) *contributions {
	c := &contributions{b: b}
	if b.trace {
		c.sets = make([][]int, b.n)
		for r := range c.sets {
			c.sets[r] = []int{r}
		}
	}
	return c
}

// ids lists rank r's reduced contributions to the given blocks.
func (c *contributions) ids(r int, blocks ...int) []int32 {
	if !c.b.trace {
		return nil
	}
	var out []int32
	for _, j := range blocks {
		for _, i := range c.sets[r] {
			out = append(out, int32(i*c.b.n+j))
		}
	}
	return out
}

// merge adds from's contributions (as they stood, in old) to to's.
func (c *contributions) merge(old [][]int, to, from int) {
	if !c.b.trace {
		return
	}
	for _, i := range old[from] {
		found := false
		for _, j := range c.sets[to] {
			found = found || i == j
		}
		if !found {
			c.sets[to] = append(c.sets[to], i)
		}
	}
}

// snapshot copies the sets, so that the exchanges of a round merge what the partners held
// before it.
func (c *contributions) snapshot() [][]int {
	if !c.b.trace {
		return nil
	}
	old := make([][]int, len(c.sets))
	for r, s := range c.sets {
		old[r] = append([]int(nil), s...)
	}
	return old
}

// reduceScatterRing places the ring: in round k (1 … n − 1) rank r sends to r + 1 block
// r − k, into which ranks r − k + 1 … r have been reduced.
func reduceScatterRing(b *builder, c *Collective) {
	n := b.n
	for k := 1; k < n; k++ {
		for r := range n {
			if b.add(0, r, (r+1)%n, c.Bytes) && b.trace {
				j := (r - k + n) % n
				var ids []int32
				for i := r - k + 1; i <= r; i++ {
					ids = append(ids, int32(((i+n)%n)*n+j))
				}
				b.carry(ids)
			}
		}
		b.step()
	}
}

// reduceScatterPairwise places MPICH's pairwise exchanges: in round s rank r sends its
// contribution to block r + s to rank r + s.
func reduceScatterPairwise(b *builder, c *Collective) {
	n := b.n
	for s := 1; s < n; s++ {
		for r := range n {
			d := (r + s) % n
			if b.add(0, r, d, c.Bytes) {
				b.carry([]int32{int32(r*n + d)})
			}
		}
		b.step()
	}
}

// folding is the reduction of n ranks to the largest power of two p ≤ n that recursive
// halving and the butterfly start with: the even ranks below 2·rem (rem = n − p) send their
// whole vector to rank + 1 and drop out; the others are renumbered 0 … p − 1 (odd r < 2·rem
// becomes r/2, r ≥ 2·rem becomes r − rem), and new rank v < rem reduces blocks 2v and 2v + 1,
// the others block v + rem.
type folding struct{ n, p, rem int }

func newFolding(n int) folding { p := floorPow2(n); return folding{n, p, n - p} }

// rank is the rank of new rank v.
func (f folding) rank(v int) int {
	if v < f.rem {
		return 2*v + 1
	}
	return v + f.rem
}

// blocks lists the blocks of new ranks lo … hi − 1.
func (f folding) blocks(lo, hi int) []int {
	var out []int
	for v := lo; v < hi; v++ {
		if v < f.rem {
			out = append(out, 2*v, 2*v+1)
		} else {
			out = append(out, v+f.rem)
		}
	}
	return out
}

// fold places the first step and returns the contributions after it.
func (f folding) fold(b *builder, c *Collective) *contributions {
	con := newContributions(b)
	all := make([]int, f.n)
	for j := range all {
		all[j] = j
	}
	old := con.snapshot()
	for r := 0; r < 2*f.rem; r += 2 {
		if b.add(0, r, r+1, float64(f.n)*c.Bytes) {
			b.carry(con.ids(r, all...))
			con.merge(old, r+1, r)
		}
	}
	b.step()
	return con
}

// reduceScatterHalving places recursive halving: at distance m = p/2, p/4, …, 1, new rank v
// keeps the half of its range [send, last) on its side of v XOR m and sends the other half;
// then the odd ranks below 2·rem send rank − 1 its block.
func reduceScatterHalving(b *builder, c *Collective) {
	f := newFolding(b.n)
	con := f.fold(b, c)
	send, recv, last := make([]int, f.p), make([]int, f.p), make([]int, f.p)
	for v := range f.p {
		last[v] = f.p
	}
	for m := f.p / 2; m > 0; m /= 2 {
		old := con.snapshot()
		for v := range f.p {
			w := v ^ m
			lo, hi := 0, 0
			if v < w {
				send[v] = recv[v] + m
				lo, hi = send[v], last[v]
			} else {
				recv[v] = send[v] + m
				lo, hi = send[v], recv[v]
			}
			blocks := f.blocks(lo, hi)
			if b.add(0, f.rank(v), f.rank(w), float64(len(blocks))*c.Bytes) {
				b.carry(con.ids(f.rank(v), blocks...))
			}
			con.merge(old, f.rank(v), f.rank(w))
		}
		for v := range f.p {
			send[v] = recv[v]
			last[v] = recv[v] + m
		}
		b.step()
	}
	for r := 1; r < 2*f.rem; r += 2 {
		if b.add(0, r, r-1, c.Bytes) {
			b.carry(con.ids(r, r-1))
		}
	}
	b.step()
}

// reduceScatterButterfly places Open MPI's butterfly: at distance m = 1, 2, …, p/2, new rank
// v halves its range of new blocks, keeping the lower half when v's bit m is clear, and
// exchanges the other half with v XOR m. New rank v then holds the result of new block
// mirror(v) (its bits reversed); it sends it to the rank of new rank mirror(v): first the
// block of the rank left out there, when that one reduced for two, then the other block, in
// an exchange with that rank.
func reduceScatterButterfly(b *builder, c *Collective) {
	f := newFolding(b.n)
	con := f.fold(b, c)
	bits := 0
	for 1<<bits < f.p {
		bits++
	}
	send, recv := make([]int, f.p), make([]int, f.p)
	width := f.p
	for m := 1; m < f.p; m <<= 1 {
		width /= 2
		old := con.snapshot()
		for v := range f.p {
			if v&m == 0 {
				send[v] += width
			} else {
				recv[v] += width
			}
			blocks := f.blocks(send[v], send[v]+width)
			if b.add(0, f.rank(v), f.rank(v^m), float64(len(blocks))*c.Bytes) {
				b.carry(con.ids(f.rank(v), blocks...))
			}
			con.merge(old, f.rank(v), f.rank(v^m))
		}
		for v := range f.p {
			send[v] = recv[v]
		}
		b.step()
	}
	// The last exchange: a rank that first sends to a rank left out meets its partner one
	// round later.
	late := make([]bool, f.p)
	for v := range f.p {
		if w := mirror(v, bits); w < f.rem {
			late[v] = true
			blocks := f.blocks(send[v], send[v]+1)
			if b.add(0, f.rank(v), f.rank(w)-1, c.Bytes) {
				b.carry(con.ids(f.rank(v), blocks[0]))
			}
		}
	}
	for v := range f.p {
		w := mirror(v, bits)
		if w == v {
			continue
		}
		k := 0
		if late[v] || late[w] {
			k = 1
		}
		blocks := f.blocks(send[v], send[v]+1)
		if b.add(k, f.rank(v), f.rank(w), c.Bytes) {
			b.carry(con.ids(f.rank(v), blocks[len(blocks)-1]))
		}
	}
	b.step()
}

// mirror reverses the low bits of x.
func mirror(x, bits int) int {
	y := 0
	for range bits {
		y = y<<1 | x&1
		x >>= 1
	}
	return y
}
