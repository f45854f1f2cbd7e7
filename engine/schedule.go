package engine

import (
	"fmt"
	"math"

	"github.com/commcal/commcal/datasets"
	"github.com/commcal/commcal/schedule"
)

// CollectiveProgram is the program of a collective expanded into its algorithm's rounds, run
// as MPI processes run it: one thread per rank on the rank's node, which posts, round after
// round, the rank's sends and receives of the round together (a Batch, as an MPI_Sendrecv or
// a batch of non-blocking calls completed by one wait does) once its own previous round's
// have ended. No barrier separates rounds: a rank waits only for its own operations. A
// message starts as soon as its sender posts it, the receiver's socket buffering it until
// the receiver reaches the round and reads it (an MPI library's rendezvous protocol would
// hold a large message back until the receive is posted). One connection joins every pair
// of ranks that exchange, carrying both directions, as an MPI library's one socket per peer
// does. The collective's time is the last rank's last byte after the common start (lastEnd).
//
// Every rank runs on its own node (ranks sharing a node exchange through memory in an MPI
// library, which the engine does not emulate); a schedule whose ranks share a node is an
// error. A transfer of less than a byte sends one byte, as the engine's empty messages do.
func CollectiveProgram(s *schedule.Schedule) (*Program, error) {
	seen := map[string]bool{}
	for r, node := range s.Ranks {
		if seen[node] {
			return nil, fmt.Errorf("engine: %s %s: rank %d shares node %s with another rank; the engine runs one rank per node", s.Op, s.Algorithm, r, node)
		}
		seen[node] = true
	}
	prog := &Program{}
	conn := map[[2]int]int{}
	connOf := func(a, b int) int {
		k := [2]int{min(a, b), max(a, b)}
		c, ok := conn[k]
		if !ok {
			c = len(prog.Conns)
			conn[k] = c
			prog.Conns = append(prog.Conns, Conn{From: s.Ranks[k[0]], To: s.Ranks[k[1]]})
		}
		return c
	}
	ops := make([][]Op, len(s.Ranks))
	for _, round := range s.Rounds {
		parts := make([][]Op, len(s.Ranks))
		for _, t := range round {
			b := max(int64(math.Ceil(t.Bytes)), emptyBytes)
			c := connOf(t.Src, t.Dst)
			parts[t.Src] = addPart(parts[t.Src], Op{Kind: Send, Conn: c, Bytes: b})
			parts[t.Dst] = addPart(parts[t.Dst], Op{Kind: Recv, Conn: c, Bytes: b})
		}
		for r, p := range parts {
			if len(p) > 0 {
				ops[r] = append(ops[r], Op{Kind: Batch, Parts: p})
			}
		}
	}
	for r, o := range ops {
		if len(o) > 0 {
			prog.Threads = append(prog.Threads, Thread{Node: s.Ranks[r], Ops: o})
		}
	}
	return prog, nil
}

// lastEnd is when a program's last thread ended: the latest end of a thread's last operation,
// in seconds after the common start.
func lastEnd(t *Timings) float64 {
	end := 0.0
	for _, th := range t.Ops {
		if len(th) > 0 {
			end = max(end, th[len(th)-1].End)
		}
	}
	return end
}

// addPart adds a send or receive to a rank's batch, merging it with one of the same kind on
// the same connection: a round that sends one peer two pieces (an algorithm's blocks moved
// in one step) sends them as one message.
func addPart(parts []Op, op Op) []Op {
	for i := range parts {
		if parts[i].Kind == op.Kind && parts[i].Conn == op.Conn {
			parts[i].Bytes += op.Bytes
			return parts
		}
	}
	return append(parts, op)
}

// scheduleID is the measurement id of a schedule of a design at size bytes: two designs that
// expand to one algorithm on one communicator size and message size share it.
func scheduleID(s *schedule.Schedule, bytes int64) string {
	return fmt.Sprintf("%s/%s:%d:%d", s.Op, s.Algorithm, len(s.Ranks), bytes)
}

// scheduleMeasurement measures one collective of a schedule design (CollectiveProgram), id
// its scheduleID, a schedules row per repetition. Its program is checked here, when the
// campaign's measurements are made, so that a program the agents would refuse stops the
// campaign before it starts rather than when it comes to it.
func scheduleMeasurement(clusterName string, s *schedule.Schedule, bytes int64, id string) (measurement, error) {
	prog, err := CollectiveProgram(s)
	if err != nil {
		return measurement{}, err
	}
	if err := prog.check(); err != nil {
		return measurement{}, fmt.Errorf("engine: %s: %w", id, err)
	}
	return measurement{experiment: "schedule", id: id, program: prog,
		measures: func(t *Timings) []float64 { return []float64{lastEnd(t)} },
		rows: func(r *Results, rep int, _ float64, t *Timings) {
			r.Schedules = append(r.Schedules, datasets.Schedule{Cluster: clusterName, Op: string(s.Op), Algorithm: s.Algorithm,
				Root: s.Ranks[0], Procs: int64(len(s.Ranks)), Bytes: bytes, Rep: int64(rep), Seconds: lastEnd(t)})
		}}, nil
}
