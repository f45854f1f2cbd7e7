package contention

import (
	"math"
	"math/bits"
)

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

// levelHeap is a minHeap of fill events by level, then resource (fillEvent.before), written out
// for them: progressive filling pops and refreshes a resource's level at every freeze, which
// makes the heap's comparisons max-min's innermost loop, and minHeap calls its less function,
// which is not inlined, at every comparison, where written out they are inlined. Its moves are
// minHeap's, which are container/heap's.
type levelHeap struct {
	items []fillEvent
}

func (h *levelHeap) Len() int { return len(h.items) }

func (h *levelHeap) init() {
	n := len(h.items)
	for i := n/2 - 1; i >= 0; i-- {
		h.down(i, n)
	}
}

func (h *levelHeap) pop() fillEvent {
	n := len(h.items) - 1
	h.items[0], h.items[n] = h.items[n], h.items[0]
	h.down(0, n)
	v := h.items[n]
	h.items = h.items[:n]
	return v
}

func (h *levelHeap) top() fillEvent { return h.items[0] }

func (h *levelHeap) fixTop() {
	if !h.down(0, len(h.items)) {
		h.up(0)
	}
}

// up and down move the hole rather than swapping at each level; the elements end where
// minHeap's swaps put them.
func (h *levelHeap) up(j int) {
	items := h.items
	v := items[j]
	for j > 0 {
		i := (j - 1) / 2
		if !v.before(items[i]) {
			break
		}
		items[j] = items[i]
		j = i
	}
	items[j] = v
}

func (h *levelHeap) down(i0, n int) bool {
	if 2*i0+1 >= n {
		return false
	}
	items := h.items[:n]
	i := i0
	v := items[i]
	for {
		j := 2*i + 1
		if j >= n {
			break
		}
		if j2 := j + 1; j2 < n {
			j += int(beforeBit(items[j2], items[j]))
		}
		if beforeBit(items[j], v) == 0 {
			break
		}
		items[i] = items[j]
		i = j
	}
	items[i] = v
	return i > i0
}

// beforeBit is 1 when fill event a comes before b, by level then resource, else 0 (before is
// it as a bool), computed without a branch: which of two children is the smaller is a coin
// toss that a branch mispredicts half the time. (level, r) compares as the 128-bit integer of
// level's bits over r's: a level is never negative (capacity left, at least 0, over positive
// counts or weights), and the bits of non-negative floats order as the floats do.
func beforeBit(a, b fillEvent) uint64 {
	_, borrow := bits.Sub64(uint64(uint32(a.r)), uint64(uint32(b.r)), 0)
	_, borrow = bits.Sub64(math.Float64bits(a.level), math.Float64bits(b.level), borrow)
	return borrow
}

// keyHeap is a heap of ids (classes or groups) by a float key, then id (so that equal keys come
// out in one order every run), with each id's place in the heap so that its key can change in
// place: runGrouped keeps the groups by the instant their next member finishes, and each
// group's classes by the bytes at which they finish, and moves only what a step changed,
// O(log n) each. pos is per id, −1 for an id not in the heap; several heaps can share one pos
// array, for ids each in one heap at most.
type keyHeap struct {
	items []keyItem
	pos   []int32
}

// keyItem is an id and its key.
type keyItem struct {
	key float64
	id  int32
}

func (a keyItem) before(b keyItem) bool { return keyBefore(a, b) == 1 }

// keyBefore is a.before(b) as 1 or 0, computed without a branch (as beforeBit): the keys as
// integers ordered as the floats (orderedBits), then the ids.
func keyBefore(a, b keyItem) uint64 {
	_, borrow := bits.Sub64(uint64(uint32(a.id)), uint64(uint32(b.id)), 0)
	_, borrow = bits.Sub64(orderedBits(a.key), orderedBits(b.key), borrow)
	return borrow
}

// orderedBits maps a float64 that is not NaN to a uint64 of the same order: a non-negative
// float's bits with the sign bit set, a negative one's bits inverted (−0 comes just before +0).
func orderedBits(x float64) uint64 {
	b := math.Float64bits(x)
	return b ^ (uint64(int64(b)>>63) | 1<<63)
}

// init orders items appended without set, and records their places.
func (h *keyHeap) init() {
	for j, it := range h.items {
		h.pos[it.id] = int32(j)
	}
	for j := int32(len(h.items)/2 - 1); j >= 0; j-- {
		h.down(j)
	}
}

// set gives id the key, adding id if it is not in the heap.
func (h *keyHeap) set(id int32, key float64) {
	j := h.pos[id]
	if j < 0 {
		j = int32(len(h.items))
		h.items = append(h.items, keyItem{key, id})
		h.pos[id] = j
		h.up(j)
		return
	}
	old := h.items[j].key
	h.items[j].key = key
	if key < old {
		h.up(j)
	} else {
		h.down(j)
	}
}

// remove takes id, which is in the heap, out of it.
func (h *keyHeap) remove(id int32) {
	j, n := h.pos[id], int32(len(h.items)-1)
	h.pos[id] = -1
	if j != n {
		h.items[j] = h.items[n]
		h.pos[h.items[j].id] = j
	}
	h.items = h.items[:n]
	if j < n {
		h.down(j)
		h.up(j)
	}
}

func (h *keyHeap) up(j int32) {
	it := h.items[j]
	for j > 0 {
		i := (j - 1) / 2
		if !it.before(h.items[i]) {
			break
		}
		h.items[j] = h.items[i]
		h.pos[h.items[j].id] = j
		j = i
	}
	h.items[j] = it
	h.pos[it.id] = j
}

func (h *keyHeap) down(j int32) {
	n := int32(len(h.items))
	it := h.items[j]
	for {
		k := 2*j + 1
		if k >= n {
			break
		}
		if k+1 < n {
			k += int32(keyBefore(h.items[k+1], h.items[k]))
		}
		if !h.items[k].before(it) {
			break
		}
		h.items[j] = h.items[k]
		h.pos[h.items[j].id] = j
		j = k
	}
	h.items[j] = it
	h.pos[it.id] = j
}
