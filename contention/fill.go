package contention

import "context"

// fill is progressive filling on the engine's classes. The transfers of a class cross the
// same resources, so they freeze together at the same level: a class is frozen as one, with
// its multiplicity counted in the resources' usage and unfrozen transfers.
//
// What it keeps between steps: on, the classes crossing each resource, from which finished
// classes are dropped lazily (swapped out when a scan meets them: each leaves each list once),
// so that a step scans only active classes; a compact record per class (its path, its active
// transfers, kept up to date from the engine's changed list, and the step at which it was
// last frozen), since the fill visits classes resource by resource, not in class order; the
// buffers of the heap and of the per-resource state. What a step recomputes: the fill itself,
// since a finished transfer can change every rate of its connected component (one backbone
// ties a whole two-rack pattern together).
//
// The fill is driven by a heap of resources ordered by fill level, (capacity − usage)/unfrozen,
// then resource index: the lowest level freezes that resource's classes, which raises the fill
// levels of the other resources they cross. A freeze never lowers a level (a transfer freezes
// at the lowest level, at most its share anywhere), so a resource's key in the heap is a lower
// bound, refreshed in place when it reaches the top. Cost per step O((resources + classes ×
// path length) · log resources) at most. The max-min allocation is unique, so the order in
// which equal levels are frozen does not change the rates (in exact arithmetic).
type fill struct {
	e        *engine
	on       [][]int32 // classes per resource; finished ones are removed lazily
	cls      []fillClass
	usage    []float64
	unfrozen []int32
	heap     minHeap[fillEvent]
}

// fillClass is the fill's record of a class.
type fillClass struct {
	res             [maxPath]int32
	n, mult, frozen int32 // path length, active transfers, step of the last freeze
}

// fillEvent is a resource with its fill level as it was when last computed.
type fillEvent struct {
	r     int32
	level float64
}

// staleTop drops or refreshes the top of a progressive filling's heap when it is out of date
// (its resource has no unfrozen transfer left, or its level, cur, rose since it was pushed)
// and says whether it did; when it returns false, the top is the next resource to saturate.
// The caller passes the top resource's counts and level (plain values, not a function: this
// is max-min's innermost loop).
func staleTop(h *minHeap[fillEvent], unfrozen int32, cur float64) bool {
	if unfrozen == 0 {
		h.pop()
		return true
	}
	if cur > h.items[0].level {
		h.items[0].level = cur
		h.fixTop()
		return true
	}
	return false
}

// lessFill orders fill events by level, then resource.
func lessFill(a, b fillEvent) bool {
	if a.level != b.level {
		return a.level < b.level
	}
	return a.r < b.r
}

func newFill(e *engine) *fill {
	nr := len(e.net.Capacity)
	f := &fill{e: e, on: classLists(nr, len(e.src), e.pathOf), cls: make([]fillClass, len(e.src)), usage: make([]float64, nr),
		unfrozen: make([]int32, nr), heap: minHeap[fillEvent]{less: lessFill}}
	for c, rt := range e.routes {
		f.cls[c] = fillClass{res: rt.res, n: rt.n, mult: e.mult[c]}
	}
	return f
}

// classLists lists, for each of n resources, the classes 0…classes−1 whose path crosses it,
// in increasing order; the lists are carved from one array, each with its own capacity, so
// that appending to one never writes into the next.
func classLists(n, classes int, path func(c int32) []int32) [][]int32 {
	size := make([]int, n)
	total := 0
	for c := range classes {
		for _, r := range path(int32(c)) {
			size[r]++
		}
		total += len(path(int32(c)))
	}
	lists, all := make([][]int32, n), make([]int32, 0, total)
	for r, k := range size {
		lists[r], all = all[len(all):len(all):len(all)+k], all[:len(all)+k]
	}
	for c := range classes {
		for _, r := range path(int32(c)) {
			lists[r] = append(lists[r], int32(c))
		}
	}
	return lists
}

// level is the rate at which resource r fills with its unfrozen transfers.
func (f *fill) level(r int32) float64 {
	return max(f.e.net.Capacity[r]-f.usage[r], 0) / float64(f.unfrozen[r])
}

// rates is progressive filling on the active classes.
func (f *fill) rates(context.Context) error {
	e := f.e
	for _, c := range e.changed {
		f.cls[c].mult = e.mult[c]
	}
	stamp := int32(e.steps + 1)
	f.heap.items = f.heap.items[:0]
	for r, n := range e.count {
		f.usage[r], f.unfrozen[r] = 0, n
		if n > 0 {
			f.heap.items = append(f.heap.items, fillEvent{r: int32(r), level: f.level(int32(r))})
		}
	}
	f.heap.init()
	ceiling := e.net.Ceiling
	for left := e.left; left > 0 && f.heap.Len() > 0; {
		if r := f.heap.top().r; staleTop(&f.heap, f.unfrozen[r], f.level(r)) {
			continue
		}
		ev := f.heap.pop()
		lv := min(ev.level, ceiling)
		on := f.on[ev.r]
		for i := 0; i < len(on); {
			c := on[i]
			cl := &f.cls[c]
			if cl.mult == 0 { // finished: drop it from the list
				on[i] = on[len(on)-1]
				on = on[:len(on)-1]
				continue
			}
			i++
			if cl.frozen == stamp {
				continue
			}
			cl.frozen, e.rate[c] = stamp, lv
			left -= cl.mult
			m := float64(cl.mult)
			for _, r := range cl.res[:cl.n] {
				f.usage[r] += m * lv
				f.unfrozen[r] -= cl.mult
			}
		}
		f.on[ev.r] = on
	}
	return nil
}
