package contention

import (
	"container/heap"
	"math"
)

// MaxMin is exact max-min fair sharing by progressive filling: every transfer's rate rises at
// the same pace until a resource fills (its transfers freeze at that level) or the ceiling is
// reached; the others go on rising. The result is the allocation in which no rate can grow
// without lowering a smaller or equal one. It is what flow-level simulators compute; it knows
// nothing of TCP's asymmetric behaviour.
type MaxMin struct{}

// Name implements Model.
func (MaxMin) Name() string { return "maxmin" }

// Predict implements Model.
func (MaxMin) Predict(net *Network, flows []Flow) (*Prediction, error) {
	return stepLoop(net, flows, func(a *active) ([]float64, error) { return maxMinRates(a), nil })
}

// fillEvent is the level at which a resource fills, given its unfrozen transfers all rise
// together, as it was when queued: levels only rise as transfers freeze, so a queued level is
// a lower bound, refreshed when it reaches the top.
type fillEvent struct {
	r     int
	level float64
}

// lessFill orders fill events by level, then resource.
func lessFill(a, b fillEvent) bool {
	if a.level != b.level {
		return a.level < b.level
	}
	return a.r < b.r
}

// maxMinRates is progressive filling driven by a heap of fill levels: a resource with
// capacity c, frozen usage u and n unfrozen transfers fills at level (c − u)/n. The lowest
// level freezes that resource's transfers, which raises the fill levels of the other resources
// they cross. A freeze never lowers a level (a transfer freezes at the lowest level, at most
// its share anywhere), so queued levels are lower bounds: the top is refreshed and queued
// again when it is stale, instead of queueing every change. Cost O((F·L + R)·log R) at most.
func maxMinRates(a *active) []float64 {
	nr := len(a.net.Capacity)
	on := make([][]int, nr) // active positions per resource
	for j, id := range a.ids {
		for _, r := range a.paths[id] {
			on[r] = append(on[r], j)
		}
	}
	unfrozen := make([]int, nr)
	usage := make([]float64, nr)
	rate := make([]float64, len(a.ids))
	frozen := make([]bool, len(a.ids))
	level := func(r int) float64 { return math.Max(a.net.Capacity[r]-usage[r], 0) / float64(unfrozen[r]) }
	q := minHeap[fillEvent]{less: lessFill}
	for r := range on {
		unfrozen[r] = len(on[r])
		if unfrozen[r] > 0 {
			q.items = append(q.items, fillEvent{r: r, level: level(r)})
		}
	}
	heap.Init(&q)
	left := len(a.ids)
	for left > 0 && q.Len() > 0 {
		ev := q.pop()
		if unfrozen[ev.r] == 0 {
			continue
		}
		if cur := level(ev.r); cur > ev.level {
			q.push(fillEvent{r: ev.r, level: cur})
			continue
		}
		lv := math.Min(ev.level, a.net.Ceiling)
		for _, j := range on[ev.r] {
			if frozen[j] {
				continue
			}
			frozen[j], rate[j] = true, lv
			left--
			for _, r := range a.paths[a.ids[j]] {
				usage[r] += lv
				unfrozen[r]--
			}
		}
	}
	return rate
}
