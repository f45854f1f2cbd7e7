package schedule

// tree lists each process's children in the order the process serves them. Processes are
// numbered from the root (vrank = rank − root mod n), as every library builds its trees.
type tree [][]int

// rank is the rank of vrank v of a tree rooted at root.
func rank(v, root, n int) int { return (v + root) % n }

// down places a tree's transfers from parents to children: a process forwards once its own
// receive has ended. A concurrent process sends to all its children in one round (Open MPI's
// ompi_coll_base_bcast_intra_generic posts the sends together and waits for them all); a
// sequential one sends to one child per round, in order (blocking sends, as MPICH's binomial
// trees). edge returns a transfer's bytes and, when tracing, its pieces.
func (b *builder) down(t tree, root int, concurrent bool, edge func(parent, child int) (float64, []int32)) {
	n := b.n
	at := make([]int, n) // the round of each process's receive
	at[0] = -1
	queue := []int{0}
	for len(queue) > 0 {
		v := queue[0]
		queue = queue[1:]
		for i, c := range t[v] {
			k := at[v] + 1
			if !concurrent {
				k += i
			}
			at[c] = k
			bytes, ids := edge(v, c)
			if b.add(k, rank(v, root, n), rank(c, root, n), bytes) {
				b.carry(ids)
			}
			queue = append(queue, c)
		}
	}
	b.step()
}

// up places a tree's transfers from children to parents, as a gather runs them: a process
// receives from its children one at a time, in order (blocking receives), and sends to its
// parent once its last receive has ended; a child's send and its parent's receive meet in the
// later of the rounds each is ready for.
func (b *builder) up(t tree, root int, edge func(parent, child int) (float64, []int32)) {
	n := b.n
	order := make([]int, 0, n) // breadth first, so that children come after their parents
	order = append(order, 0)
	for i := 0; i < len(order); i++ {
		order = append(order, t[order[i]]...)
	}
	last := make([]int, n) // the round of each process's last receive, −1 for none
	type placed struct{ k, parent, child int }
	var edges []placed
	for i := len(order) - 1; i >= 0; i-- {
		v := order[i]
		k := -1
		for _, c := range t[v] {
			k = max(k+1, last[c]+1)
			edges = append(edges, placed{k, v, c})
		}
		last[v] = k
	}
	for i := len(edges) - 1; i >= 0; i-- { // parents' receives in the order they post them
		e := edges[i]
		bytes, ids := edge(e.parent, e.child)
		if b.add(e.k, rank(e.child, root, n), rank(e.parent, root, n), bytes) {
			b.carry(ids)
		}
	}
	b.step()
}

// binomialTree is MPICH's binomial tree (and Open MPI's in-order binomial tree,
// ompi_coll_base_topo_build_in_order_bmtree): the children of v are v + m for the powers of
// two m below v's lowest set bit (every power of two below n for the root), largest first,
// the order in which a process sends to them.
func binomialTree(n int) tree {
	t := make(tree, n)
	for v := range n {
		for m := floorPow2(n - 1); m >= 1; m >>= 1 {
			if (v == 0 || m < v&-v) && v+m < n {
				t[v] = append(t[v], v+m)
			}
		}
	}
	return t
}

// reversed is t with every process's children in the opposite order.
func (t tree) reversed() tree {
	out := make(tree, len(t))
	for v, cs := range t {
		for i := len(cs) - 1; i >= 0; i-- {
			out[v] = append(out[v], cs[i])
		}
	}
	return out
}

// bmTree is the tree of Open MPI's binomial broadcast (ompi_coll_base_topo_build_bmtree): the
// children of v are v + m for the powers of two m above v (every power of two below n for
// the root), while below n.
func bmTree(n int) tree {
	t := make(tree, n)
	for v := range n {
		m := 1
		for m <= v {
			m <<= 1
		}
		for ; m < n && v+m < n; m <<= 1 {
			t[v] = append(t[v], v+m)
		}
	}
	return t
}

// karyTree is Open MPI's tree of the given fan-out (ompi_coll_base_topo_build_tree): level ℓ
// holds fanoutˡ processes, and the children of v, at level ℓ, are v + fanoutˡ·i for
// i = 1 … fanout, while below n.
func karyTree(n, fanout int) tree {
	t := make(tree, n)
	level, first, width := 0, 0, 1 // v's level, the first process of that level, its width
	for v := range n {
		for v >= first+width {
			level++
			first += width
			width *= fanout
		}
		delta := 1
		for range level {
			delta *= fanout
		}
		for i := 1; i <= fanout && v+delta*i < n; i++ {
			t[v] = append(t[v], v+delta*i)
		}
	}
	return t
}

// knomialTree is Open MPI's k-nomial tree (ompi_coll_base_topo_build_kmtree): the children of
// v are v + m·r for r = 1 … radix − 1 and the powers m of radix below the first one that v
// is not a multiple of (below n for the root), largest m first.
func knomialTree(n, radix int) tree {
	t := make(tree, n)
	for v := range n {
		m := 1
		for m < n && v%(radix*m) == 0 {
			m *= radix
		}
		for m /= radix; m > 0; m /= radix {
			for r := 1; r < radix; r++ {
				if c := v + m*r; c < n {
					t[v] = append(t[v], c)
				}
			}
		}
	}
	return t
}

// chainTree is a chain: v sends to v + 1.
func chainTree(n int) tree {
	t := make(tree, n)
	for v := range n - 1 {
		t[v] = []int{v + 1}
	}
	return t
}

// starTree is the root sending to every other process.
func starTree(n int) tree {
	t := make(tree, n)
	for v := 1; v < n; v++ {
		t[0] = append(t[0], v)
	}
	return t
}
