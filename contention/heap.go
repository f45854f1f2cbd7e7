package contention

import "container/heap"

// minHeap is a binary heap of T, smallest first under less, through container/heap. The
// algorithms that need a queue (the asymmetric model's re-queued transfers and tie groups,
// max-min's fill levels) share it.
type minHeap[T any] struct {
	items []T
	less  func(a, b T) bool
}

func (h *minHeap[T]) Len() int           { return len(h.items) }
func (h *minHeap[T]) Less(i, j int) bool { return h.less(h.items[i], h.items[j]) }
func (h *minHeap[T]) Swap(i, j int)      { h.items[i], h.items[j] = h.items[j], h.items[i] }
func (h *minHeap[T]) Push(v any)         { h.items = append(h.items, v.(T)) }
func (h *minHeap[T]) Pop() any {
	v := h.items[len(h.items)-1]
	h.items = h.items[:len(h.items)-1]
	return v
}

// push adds v; pop removes and returns the smallest; top is the smallest, left in place.
func (h *minHeap[T]) push(v T) { heap.Push(h, v) }
func (h *minHeap[T]) pop() T   { return heap.Pop(h).(T) }
func (h *minHeap[T]) top() T   { return h.items[0] }
