package engine

import (
	"cmp"
	"slices"
	"time"
)

// epoch is this process's clock origin. Agents and coordinators time everything on the
// monotonic clock relative to it: wall-clock steps (NTP) cannot move a measurement, and the
// coordinator estimates each agent's offset instead of trusting any clock to agree.
var epoch = time.Now()

// now is the process's monotonic clock in nanoseconds since epoch.
func now() int64 { return int64(time.Since(epoch)) }

// sleepUntil sleeps until the process clock reads t (ns).
func sleepUntil(t int64) {
	if d := time.Duration(t - now()); d > 0 {
		time.Sleep(d)
	}
}

// clockSample is one ping exchange: the coordinator's send and receive times and the agent's
// clock in between.
type clockSample struct {
	sent, agent, received int64
}

// offsetOf estimates how far an agent's clock is ahead of the coordinator's from ping
// exchanges (Cristian's method): the exchange with the smallest round trip bounds the error
// best, its agent reading is taken to be at the midpoint of the round trip, and the error is
// at most half that round trip.
func offsetOf(samples []clockSample) (offset, bound int64) {
	if len(samples) == 0 {
		panic("engine: offsetOf of no samples")
	}
	best := slices.MinFunc(samples, func(a, b clockSample) int {
		return cmp.Compare(a.received-a.sent, b.received-b.sent)
	})
	rtt := best.received - best.sent
	return best.agent - (best.sent + rtt/2), (rtt + 1) / 2
}
