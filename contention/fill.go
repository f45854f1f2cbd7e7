package contention

import (
	"context"
	"math"
)

// fill is progressive filling on the engine's classes: every transfer's rate rises at the same
// pace until a resource fills (its transfers freeze at that level) or the ceiling is reached.
// The transfers of a class cross the same resources, so they freeze together at the same
// level: a class is frozen as one, with its multiplicity counted in the resources' usage and
// unfrozen transfers.
//
// The fill is driven by a heap of resources ordered by fill level, (capacity − usage)/unfrozen,
// then resource index: the lowest level freezes that resource's classes, which raises the fill
// levels of the other resources they cross. A freeze never lowers a level (a transfer freezes
// at the lowest level, at most its share anywhere), so a resource's key in the heap is a lower
// bound, refreshed in place when it reaches the top. The max-min allocation is unique, so the
// order in which equal levels are frozen does not change the rates (in exact arithmetic).
//
// From one step to the next it fills again only what the step's completions can change. A
// class that loses transfers froze at some level λ; every resource it crosses filled at λ or
// above (it froze at the lowest of them), so the filling below λ never involves it, and every
// class that froze below λ keeps its rate: only the classes at λ and above (in the order they
// froze, a suffix) are filled again, λ the lowest level of the step's changed classes, from
// the usage the others leave. That suffix is a small part of the active classes: finishing
// transfers are mostly the fast ones, which froze high. The usage a class leaves is taken off
// as it is filled again, so it drifts by rounding (a few units of the last place of a capacity
// per step; the levels are compared to 1e-9).
//
// The classes a resource freezes all get its level: a class's group is the resource it froze
// at (grouping), and the step loop counts bytes by group (runGrouped). A resource's classes
// freeze in one block of the order, filled again whole or not at all, so that a group's
// classes always share one level. From one step to the next few classes change groups and few
// groups are filled again, as a completion reopens only the levels at and above its class's
// (docs/performance.md gives the counts).
type fill struct {
	e        *engine
	capacity []float64   // per resource
	rate     []float64   // per class, its rate (level)
	cls      []fillClass // per class
	usage    []float64   // per resource: Σ rate × members over the frozen classes crossing it
	unfrozen []int32     // per resource: the members of the classes filled again crossing it
	order    []int32     // the frozen classes, in the order they froze (increasing levels)
	free     [][]int32   // per resource: the classes filled again that cross it
	touched  []int32     // the resources some class filled again crosses
	heap     levelHeap
	step     int32 // stamp of the current fill (fillClass.frozen)
	valid    bool  // rate, usage and order hold the last fill of the engine's classes
	cut      int   // order[cut:] are the classes the last fill filled again
	groups   grouping
}

// fillClass is the fill's record of a class.
type fillClass struct {
	res             [maxPath + 2]int32
	n, mult, frozen int32 // path length, active transfers as of the last fill, stamp of its fill
}

// fillEvent is a resource with its fill level as it was when last computed.
type fillEvent struct {
	r     int32
	level float64
}

// staleTop drops or refreshes the top of a progressive filling's heap when it is out of date
// (its resource has no unfrozen transfer left, or its level, max(room, 0)/share, rose since it
// was pushed) and says whether it did; when it returns false, the top is the next resource to
// saturate. The caller passes the top resource's counts, capacity left and share (plain
// values, not a function: this is max-min's innermost loop); the level's division is done only
// where a transfer is left.
func staleTop(h *levelHeap, unfrozen int32, room, share float64) bool {
	if unfrozen == 0 {
		h.pop()
		return true
	}
	if cur := max(room, 0) / share; cur > h.items[0].level {
		h.items[0].level = cur
		h.fixTop()
		return true
	}
	return false
}

// before orders fill events by level, then resource: beforeBit, whose order is the floats'
// for levels, never negative nor NaN.
func (a fillEvent) before(b fillEvent) bool { return beforeBit(a, b) == 1 }

// newFill is max-min's fill of e's classes on the network's capacities, rates into e.rate.
func newFill(e *engine) *fill {
	return newFillOn(e, e.net.Capacity, e.rate, e.pathOf)
}

// newFillOn is the fill of e's classes on resources of the given capacities (which the caller
// may change between fills, calling invalidate), every class held at the network's ceiling,
// class c crossing path(c); the rates go into rate.
func newFillOn(e *engine, capacity []float64, rate []float64, path func(c int32) []int32) *fill {
	nr, nc := len(capacity), len(e.src)
	f := &fill{e: e, capacity: capacity, rate: rate, cls: make([]fillClass, nc),
		groups: grouping{of: make([]int32, nc), rate: make([]float64, nr)},
		usage:  make([]float64, nr), unfrozen: make([]int32, nr), order: make([]int32, 0, nc)}
	for c := range f.cls {
		cl := &f.cls[c]
		cl.n = int32(copy(cl.res[:], path(int32(c))))
	}
	// Each resource's list of classes filled again holds at most the classes crossing it.
	f.free = classLists(nr, nc, path)
	for r := range f.free {
		f.free[r] = f.free[r][:0]
	}
	return f
}

// invalidate makes the next fill start from nothing: the engine was reset, or the capacities
// changed.
func (f *fill) invalidate() { f.valid = false }

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
	return max(f.capacity[r]-f.usage[r], 0) / float64(f.unfrozen[r])
}

// rates implements rateRule: progressive filling on the active classes.
func (f *fill) rates(context.Context) error {
	f.solve()
	return nil
}

// grouping implements groupRule: a class's group is the resource it froze at, and the group's
// rate that resource's level when it froze.
func (f *fill) grouping() *grouping { return &f.groups }

// again is the classes the last fill filled again: after a fill from nothing, every active
// class (cut is 0, and every active class froze). The others kept their rates bit for bit.
func (f *fill) again() []int32 { return f.order[f.cut:] }

// fillAgainTol is the relative margin below the lowest changed level from which classes are
// filled again: a class that froze within it of that level may have frozen at a resource the
// changed class crosses, its level equal to rounding.
const fillAgainTol = 1e-9

// solve fills the active classes: from nothing when the last fill is not valid, else again
// from the lowest level of the classes whose members changed (e.changed) up.
func (f *fill) solve() {
	e := f.e
	f.step++
	stamp, ceiling := f.step, e.net.Ceiling
	cut := 0
	if f.valid {
		low := math.Inf(1)
		for _, c := range e.changed {
			low = min(low, f.rate[c])
		}
		cut = len(f.order)
		for cut > 0 && f.rate[f.order[cut-1]] >= low*(1-fillAgainTol) {
			cut--
		}
	} else {
		clear(f.usage)
		f.order = f.order[:0]
	}
	// The classes filled again: those of the order's suffix (their usage taken off, with the
	// members they had), or every active class. The changed ones are among them.
	again := f.order[cut:]
	if !f.valid {
		again = e.act
	}
	f.touched = f.touched[:0]
	for _, c := range again {
		cl := &f.cls[c]
		if f.valid {
			u := f.rate[c] * float64(cl.mult)
			for _, r := range cl.res[:cl.n] {
				f.usage[r] -= u
			}
		}
		cl.mult = e.mult[c]
		if cl.mult == 0 {
			continue
		}
		cl.frozen = 0
		for _, r := range cl.res[:cl.n] {
			if len(f.free[r]) == 0 {
				f.touched = append(f.touched, r)
				f.unfrozen[r] = 0
			}
			f.free[r] = append(f.free[r], c)
			f.unfrozen[r] += cl.mult
		}
	}
	g := &f.groups
	f.order, f.cut, g.all = f.order[:cut], cut, !f.valid
	g.moved, g.set = g.moved[:0], g.set[:0]
	f.heap.items = f.heap.items[:0]
	for _, r := range f.touched {
		f.heap.items = append(f.heap.items, fillEvent{r: r, level: f.level(r)})
	}
	f.heap.init()
	for f.heap.Len() > 0 {
		if r := f.heap.top().r; staleTop(&f.heap, f.unfrozen[r], f.capacity[r]-f.usage[r], float64(f.unfrozen[r])) {
			continue
		}
		ev := f.heap.pop()
		lv := min(ev.level, ceiling)
		g.rate[ev.r] = lv
		g.set = append(g.set, ev.r)
		for _, c := range f.free[ev.r] {
			cl := &f.cls[c]
			if cl.frozen == stamp {
				continue
			}
			cl.frozen, f.rate[c] = stamp, lv
			if g.of[c] != ev.r {
				g.of[c] = ev.r
				g.moved = append(g.moved, c)
			}
			f.order = append(f.order, c)
			m := float64(cl.mult)
			for _, r := range cl.res[:cl.n] {
				f.usage[r] += m * lv
				f.unfrozen[r] -= cl.mult
			}
		}
	}
	for _, r := range f.touched {
		f.free[r] = f.free[r][:0]
	}
	f.valid = true
}
