package engine

import (
	"fmt"
	"time"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/experiments"
)

// Cost is what a campaign will take, estimated before it starts from its compiled
// measurements: what one repetition of every measurement opens and sends, and a lower bound
// of the time the campaign takes.
type Cost struct {
	// Measurements counts the measurements (patterns, rounds, sweep points).
	Measurements int
	// Transfers and Bytes are one repetition of every measurement: the connections opened and
	// the bytes sent (replies included).
	Transfers, Bytes int64
	// RepSeconds is a lower bound of one repetition of every measurement, in seconds: for each
	// measurement, the start lead every repetition waits (startLead), plus the time the link
	// that carries the most bits takes to carry them at its rate (scale × the description's
	// nominal rate). Latency, TCP's slow start, connection setup and the coordinator's messages
	// are left out, so the campaign takes longer.
	RepSeconds float64
	// MinReps and MaxReps are the catalogue's repetitions of each measurement.
	MinReps, MaxReps int
}

// Least is the lower bound of the whole campaign: every measurement repeated MinReps times.
func (c Cost) Least() time.Duration { return seconds(c.RepSeconds * float64(c.MinReps)) }

// Most is the same bound at MaxReps repetitions, the most the stopping rule runs.
func (c Cost) Most() time.Duration { return seconds(c.RepSeconds * float64(c.MaxReps)) }

// seconds converts to a duration, to the millisecond below a minute and to the second
// above, holding at the largest one rather than overflowing.
func seconds(s float64) time.Duration {
	if s >= float64(1<<63-1)/1e9 {
		return time.Duration(1<<63 - 1)
	}
	d := time.Duration(s * 1e9)
	if d < time.Minute {
		return d.Round(time.Millisecond)
	}
	return d.Round(time.Second)
}

func (c Cost) String() string {
	return fmt.Sprintf("%d measurements; a repetition of each opens %d transfers and sends %d bytes; at least %s at %d repetitions (%s at %d)",
		c.Measurements, c.Transfers, c.Bytes, c.Least(), c.MinReps, c.Most(), c.MaxReps)
}

// EstimateCost checks the catalogue's ceilings that depend on the cluster
// (experiments.Catalogue.CheckCluster), compiles its measurements on cl as a campaign would —
// an error is one the campaign would meet only once the agents have joined — and estimates
// their cost (Cost) at scale times the nominal rates.
func EstimateCost(c *experiments.Catalogue, cl *cluster.Cluster, scale float64) (Cost, error) {
	if err := c.CheckCluster(cl); err != nil {
		return Cost{}, err
	}
	ms, err := measurements(c, cl)
	if err != nil {
		return Cost{}, err
	}
	cost := Cost{Measurements: len(ms), MinReps: c.Reps.Min, MaxReps: c.Reps.Max}
	res := cl.Resources()
	load := make([]float64, len(res)) // bits over each directed link, one measurement at a time
	for _, m := range ms {
		clear(load)
		cost.Transfers += int64(len(m.program.Conns))
		for _, th := range m.program.Threads {
			for _, op := range sends(th.Ops) {
				cost.Bytes += op.Bytes
				conn := m.program.Conns[op.Conn]
				to := conn.To
				if th.Node == conn.To {
					to = conn.From
				}
				path, err := cl.Path(th.Node, to)
				if err != nil {
					return Cost{}, err
				}
				for _, r := range path {
					load[r] += 8 * float64(op.Bytes)
				}
			}
		}
		longest := 0.0
		for r, bits := range load {
			longest = max(longest, bits/(scale*res[r].RateBps))
		}
		cost.RepSeconds += startLead.Seconds() + longest
	}
	return cost, nil
}

// sends lists a thread's sends, a batch's included.
func sends(ops []Op) []Op {
	var out []Op
	for _, op := range ops {
		switch op.Kind {
		case Send:
			out = append(out, op)
		case Batch:
			out = append(out, sends(op.Parts)...)
		}
	}
	return out
}
