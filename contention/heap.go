package contention

// minHeap is a binary heap of T, smallest first under less. Its moves are those of
// container/heap (Init, Push, Pop and Fix sift the same elements the same way), so that
// elements that compare equal, or a less that is not transitive (the tie groups of
// Algorithm 1 compare rates within a tolerance), come out in the same order as from the
// reference implementation; unlike container/heap it boxes nothing, so pushing allocates
// only when the backing array grows. Algorithm 1's re-queued transfers and tie groups and
// max-min's resources share it.
type minHeap[T any] struct {
	items []T
	less  func(a, b T) bool
}

func (h *minHeap[T]) Len() int { return len(h.items) }

// init orders items already appended, like heap.Init.
func (h *minHeap[T]) init() {
	n := len(h.items)
	for i := n/2 - 1; i >= 0; i-- {
		h.down(i, n)
	}
}

// push adds v; pop removes and returns the smallest; top is the smallest, left in place;
// fixTop restores the order after the top was changed in place (heap.Fix(h, 0)).
func (h *minHeap[T]) push(v T) {
	h.items = append(h.items, v)
	h.up(len(h.items) - 1)
}

func (h *minHeap[T]) pop() T {
	n := len(h.items) - 1
	h.items[0], h.items[n] = h.items[n], h.items[0]
	h.down(0, n)
	v := h.items[n]
	h.items = h.items[:n]
	return v
}

func (h *minHeap[T]) top() T { return h.items[0] }

func (h *minHeap[T]) fixTop() {
	if !h.down(0, len(h.items)) {
		h.up(0)
	}
}

func (h *minHeap[T]) up(j int) {
	for {
		i := (j - 1) / 2 // parent
		if i == j || !h.less(h.items[j], h.items[i]) {
			break
		}
		h.items[i], h.items[j] = h.items[j], h.items[i]
		j = i
	}
}

func (h *minHeap[T]) down(i0, n int) bool {
	i := i0
	for {
		j1 := 2*i + 1
		if j1 >= n || j1 < 0 { // j1 < 0 after int overflow
			break
		}
		j := j1 // left child
		if j2 := j1 + 1; j2 < n && h.less(h.items[j2], h.items[j1]) {
			j = j2 // = 2*i + 2  // right child
		}
		if !h.less(h.items[j], h.items[i]) {
			break
		}
		h.items[i], h.items[j] = h.items[j], h.items[i]
		i = j
	}
	return i > i0
}
