package engine

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/contention"
	"github.com/commcal/commcal/datasets"
	"github.com/commcal/commcal/estimate"
	"github.com/commcal/commcal/experiments"
)

// Results are a campaign's rows, one slice per table, and what the manifest reports.
type Results struct {
	datasets.MeasurementRows
	// Repetitions is one entry per repetition of every measurement, with its start skew.
	Repetitions []RepInfo
	// Measurements counts the measurements (patterns, rounds, sweep points), Converged those
	// whose every measure met the stopping rule.
	Measurements, Converged int
	// SyncError is the largest clock-offset error bound of any agent over the campaign.
	SyncError time.Duration
	Elapsed   time.Duration
}

// RepInfo is one repetition: which measurement, and how late its last thread started after
// the common start.
type RepInfo struct {
	Experiment string  `json:"experiment"`
	ID         string  `json:"id"`
	Rep        int     `json:"rep"`
	SkewS      float64 `json:"start_skew_s"`
	// FlowStartS is, for a pattern of concurrent transfers, how late each transfer (in the
	// pattern's order) started after the common start: its sender's first write. The
	// transfers table times every transfer from the common start; these say in which order the
	// transfers really began, which under TCP can decide who gets a shared queue first.
	FlowStartS []float64 `json:"flow_start_s,omitempty"`
}

// Campaign is what Measure runs.
type Campaign struct {
	Cluster   *cluster.Cluster
	Catalogue experiments.Catalogue
	Logger    *slog.Logger
	// Progress is told after every measurement how many are done, of how many, and how long
	// the rest should take at the pace so far.
	Progress func(done, total int, left time.Duration)
}

// measurement is one thing to measure under the stopping rule: a program per repetition
// (fresh connections each time) and the measures a repetition's timings give.
type measurement struct {
	experiment, id string
	program        *Program
	// measures turns one repetition into its measured values (each one under the rule).
	measures func(t *Timings) []float64
	// rows appends the rows of repetition rep, started at start seconds into the campaign.
	rows func(r *Results, rep int, start float64, t *Timings)
	// starts, for patterns of transfers, is each transfer's start after the common start.
	starts func(t *Timings) []float64
}

// resyncEvery is how often clock offsets are estimated again during a campaign: clocks of
// different hosts drift by up to tens of µs per second.
const resyncEvery = 30 * time.Second

// Measure runs a campaign on the joined agents: every measurement of the catalogue, repeated
// under the stopping rule. It stops at the first failure; ctx cancels it.
func (c *Coordinator) Measure(ctx context.Context, camp Campaign) (*Results, error) {
	log := camp.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ms, err := measurements(&camp.Catalogue, camp.Cluster)
	if err != nil {
		return nil, err
	}
	res := &Results{Measurements: len(ms)}
	for _, p := range c.peers {
		res.SyncError = max(res.SyncError, p.SyncError)
	}
	began := now()
	rule := camp.Catalogue.Reps
	for k, m := range ms {
		if time.Since(c.synced) > resyncEvery {
			if err := c.SyncClocks(ctx); err != nil {
				return nil, err
			}
			for _, p := range c.peers {
				res.SyncError = max(res.SyncError, p.SyncError)
			}
		}
		var series [][]float64
		mStart := now()
		converged := false
		for rep := 0; ; rep++ {
			t, err := c.Run(ctx, m.program)
			if err != nil {
				return nil, fmt.Errorf("%s %s, repetition %d: %w", m.experiment, m.id, rep, err)
			}
			start := float64(t.Start-began) / 1e9
			m.rows(res, rep, start, t)
			info := RepInfo{Experiment: m.experiment, ID: m.id, Rep: rep, SkewS: t.Skew}
			if m.starts != nil {
				info.FlowStartS = m.starts(t)
			}
			res.Repetitions = append(res.Repetitions, info)
			vals := m.measures(t)
			if series == nil {
				series = make([][]float64, len(vals))
			}
			for i, v := range vals {
				series[i] = append(series[i], v)
			}
			n := rep + 1
			if n < rule.Min {
				continue
			}
			converged = allConverged(series, rule.MaxRelWidth)
			overBudget := rule.Budget > 0 && time.Duration(now()-mStart) > rule.Budget
			if converged || n >= rule.Max || overBudget {
				break
			}
		}
		if converged {
			res.Converged++
		}
		log.Info("measured", "experiment", m.experiment, "id", m.id, "reps", len(series[0]), "converged", converged)
		if camp.Progress != nil {
			el := time.Duration(now() - began)
			camp.Progress(k+1, len(ms), el/time.Duration(k+1)*time.Duration(len(ms)-k-1))
		}
	}
	res.Elapsed = time.Duration(now() - began)
	return res, nil
}

// allConverged says whether every series' 95% interval is within w of its mean.
func allConverged(series [][]float64, w float64) bool {
	for _, x := range series {
		m, err := estimate.Summarize(x, estimate.StoppingRule{MaxRelWidth: w})
		if err != nil || m.Status != estimate.Converged {
			return false
		}
	}
	return true
}

// measurements compiles the catalogue into measurements, in a fixed order: the transfer
// patterns of experiments.Designs (sweeps, fairness, bidirectional, static-synchronous,
// random), then the LMO round trips and one-to-two experiments, the scatter and gather
// sweeps, the ping-pong pairs, and the collectives of the schedule designs (each schedule
// once, however many designs run it).
func measurements(cat *experiments.Catalogue, cl *cluster.Cluster) ([]measurement, error) {
	pats, err := cat.Designs.Patterns(cl)
	if err != nil {
		return nil, err
	}
	var ms []measurement
	for _, p := range pats {
		ms = append(ms, transferMeasurement(cl.Name(), p))
	}
	if cat.LMO.Bytes > 0 || len(cat.Collectives.Sizes) > 0 {
		nodes := cat.LMONodes(cl)
		if len(nodes) < 3 {
			return nil, fmt.Errorf("engine: the LMO experiments and collective sweeps need at least 3 nodes, the cluster has %d", len(nodes))
		}
		if cat.LMO.Bytes > 0 {
			ms = append(ms, roundTripMeasurements(cl.Name(), nodes, cat.LMO)...)
			ms = append(ms, oneToTwoMeasurements(cl.Name(), nodes, cat.LMO)...)
		}
		for _, op := range []string{"scatter", "gather"} {
			for _, size := range cat.Collectives.Sizes {
				ms = append(ms, collectiveMeasurement(cl.Name(), op, nodes, size))
			}
		}
	}
	if len(cat.PingPong.Sizes) > 0 {
		a, b := bisection(cl)
		for _, pairs := range cat.PingPong.Pairs {
			if pairs > len(a) {
				return nil, fmt.Errorf("engine: pingpong: %d pairs across the bisection, the cluster has room for %d", pairs, len(a))
			}
			for _, size := range cat.PingPong.Sizes {
				ms = append(ms, pingPongMeasurement(cl.Name(), a[:pairs], b[:pairs], size))
			}
		}
	}
	// Two designs can run one schedule: an algorithm a library replaces on some sizes (Open
	// MPI's recursive doubling on a number of ranks that is not a power of two runs Bruck's)
	// or the choice of its rules. Each schedule is measured once, its rows naming the
	// algorithm that ran.
	seen := map[string]bool{}
	for _, d := range cat.Schedules {
		for _, procs := range d.Procs {
			for _, size := range d.Sizes {
				s, err := d.Expand(cl, procs, size)
				if err != nil {
					return nil, fmt.Errorf("engine: %s %s among %d ranks, %d B: %w", d.Op, d.Algorithm, procs, size, err)
				}
				id := scheduleID(s, size)
				if seen[id] {
					continue
				}
				seen[id] = true
				m, err := scheduleMeasurement(cl.Name(), s, size, id)
				if err != nil {
					return nil, err
				}
				ms = append(ms, m)
			}
		}
	}
	return ms, nil
}

// Transfers is the program of a pattern of concurrent transfers: one connection per transfer,
// the sender writes its bytes from the common start, the receiver's last byte ends it. Transfer
// i's sender is thread 2i and its receiver thread 2i + 1. times gives each transfer's
// completion time after the common start, starts its start (its sender's first write).
func Transfers(flows []contention.Flow) (prog *Program, times, starts func(*Timings) []float64) {
	prog = &Program{}
	for i, f := range flows {
		prog.Conns = append(prog.Conns, Conn{From: f.Src, To: f.Dst})
		prog.Threads = append(prog.Threads,
			Thread{Node: f.Src, Ops: []Op{{Kind: Send, Conn: i, Bytes: int64(f.Bytes)}}},
			Thread{Node: f.Dst, Ops: []Op{{Kind: Recv, Conn: i, Bytes: int64(f.Bytes)}}})
	}
	each := func(at func(t *Timings, i int) float64) func(*Timings) []float64 {
		return func(t *Timings) []float64 {
			out := make([]float64, len(flows))
			for i := range flows {
				out[i] = at(t, i)
			}
			return out
		}
	}
	return prog, each(func(t *Timings, i int) float64 { return t.Ops[2*i+1][0].End }),
		each(func(t *Timings, i int) float64 { return t.Ops[2*i][0].Start })
}

// transferMeasurement measures a pattern of concurrent transfers (Transfers).
func transferMeasurement(clusterName string, p contention.Pattern) measurement {
	prog, times, starts := Transfers(p.Flows)
	return measurement{experiment: p.Experiment, id: p.ID, program: prog, measures: times, starts: starts,
		rows: func(r *Results, rep int, start float64, t *Timings) {
			ts := times(t)
			for i, f := range p.Flows {
				r.Transfers = append(r.Transfers, datasets.Transfer{Cluster: clusterName, Experiment: p.Experiment, PatternID: p.ID,
					Rep: int64(rep), FlowID: int64(i), Src: f.Src, Dst: f.Dst, Bytes: int64(f.Bytes), TStart: start, TEnd: start + ts[i]})
			}
		}}
}

// emptyBytes is what an "empty" message carries: TCP has no message of no bytes, so the LMO
// model's empty round trips and replies send one byte (an MPI library's empty message carries
// an envelope of tens of bytes, so this is the closer of the two to nothing).
const emptyBytes = 1

// roundRobin pairs the nodes up in rounds where no node is in two pairs (the circle method):
// n−1 rounds for n even, n for n odd; every pair meets once. Sequential: one pair a round.
func roundRobin(nodes []string, sequential bool) [][][2]string {
	if sequential {
		var rounds [][][2]string
		for i := range nodes {
			for j := i + 1; j < len(nodes); j++ {
				rounds = append(rounds, [][2]string{{nodes[i], nodes[j]}})
			}
		}
		return rounds
	}
	ring := slices.Clone(nodes)
	if len(ring)%2 == 1 {
		ring = append(ring, "")
	}
	n := len(ring)
	var rounds [][][2]string
	for r := 0; r < n-1; r++ {
		var round [][2]string
		for k := 0; k < n/2; k++ {
			a, b := ring[k], ring[n-1-k]
			if a == "" || b == "" {
				continue
			}
			if slices.Index(nodes, a) > slices.Index(nodes, b) {
				a, b = b, a
			}
			round = append(round, [2]string{a, b})
		}
		rounds = append(rounds, round)
		// keep ring[0], rotate the rest by one
		last := ring[n-1]
		copy(ring[2:], ring[1:n-1])
		ring[1] = last
	}
	return rounds
}

// roundTripMeasurements measures, round by round, the round trips i → j → i of the LMO
// model: empty ones, and ones with the message out and an empty reply. Each pair's time is
// its initiator's, on its own clock (a round trip needs no clock agreement).
func roundTripMeasurements(clusterName string, nodes []string, d experiments.LMODesign) []measurement {
	var ms []measurement
	for _, out := range []int64{0, d.Bytes} {
		for ri, round := range roundRobin(nodes, d.Sequential) {
			prog := &Program{}
			for k, pr := range round {
				prog.Conns = append(prog.Conns, Conn{From: pr[0], To: pr[1]})
				prog.Threads = append(prog.Threads,
					Thread{Node: pr[0], Ops: []Op{{Kind: Send, Conn: k, Bytes: max(out, emptyBytes)}, {Kind: Recv, Conn: k, Bytes: emptyBytes}}},
					Thread{Node: pr[1], Ops: []Op{{Kind: Recv, Conn: k, Bytes: max(out, emptyBytes)}, {Kind: Send, Conn: k, Bytes: emptyBytes}}})
			}
			times := func(t *Timings) []float64 {
				v := make([]float64, len(round))
				for k := range round {
					ops := t.Ops[2*k]
					v[k] = ops[1].End - ops[0].Start
				}
				return v
			}
			ms = append(ms, measurement{experiment: "roundtrip", id: fmt.Sprintf("out%d/round%d", out, ri), program: prog, measures: times,
				rows: func(r *Results, rep int, _ float64, t *Timings) {
					for k, pr := range round {
						r.RoundTrips = append(r.RoundTrips, datasets.RoundTrip{Cluster: clusterName, I: pr[0], J: pr[1],
							BytesOut: out, BytesBack: 0, Rep: int64(rep), Seconds: times(t)[k]})
					}
				}})
		}
	}
	return ms
}

// oneToTwoMeasurements measures the one-to-two experiments of the LMO model: root i sends
// the message to j and to k at once (a thread each, as non-blocking sends) and waits for an
// empty reply from both; its time runs from the first send to the last reply. Triplets with
// no node in common run together unless the design is sequential.
func oneToTwoMeasurements(clusterName string, nodes []string, d experiments.LMODesign) []measurement {
	var triplets [][3]string
	for _, root := range nodes {
		for j := range nodes {
			for k := j + 1; k < len(nodes); k++ {
				if nodes[j] != root && nodes[k] != root {
					triplets = append(triplets, [3]string{root, nodes[j], nodes[k]})
				}
			}
		}
	}
	// Greedy grouping in order: a triplet joins the first group where none of its nodes is.
	var groups [][][3]string
	if d.Sequential {
		for _, t := range triplets {
			groups = append(groups, [][3]string{t})
		}
	} else {
		var busy []map[string]bool
	next:
		for _, t := range triplets {
			for g := range groups {
				if !busy[g][t[0]] && !busy[g][t[1]] && !busy[g][t[2]] {
					groups[g] = append(groups[g], t)
					busy[g][t[0]], busy[g][t[1]], busy[g][t[2]] = true, true, true
					continue next
				}
			}
			groups = append(groups, [][3]string{t})
			busy = append(busy, map[string]bool{t[0]: true, t[1]: true, t[2]: true})
		}
	}
	var ms []measurement
	for gi, group := range groups {
		prog := &Program{}
		for _, t := range group {
			for _, r := range t[1:] {
				c := len(prog.Conns)
				prog.Conns = append(prog.Conns, Conn{From: t[0], To: r})
				prog.Threads = append(prog.Threads,
					Thread{Node: t[0], Ops: []Op{{Kind: Send, Conn: c, Bytes: d.Bytes}, {Kind: Recv, Conn: c, Bytes: emptyBytes}}},
					Thread{Node: r, Ops: []Op{{Kind: Recv, Conn: c, Bytes: d.Bytes}, {Kind: Send, Conn: c, Bytes: emptyBytes}}})
			}
		}
		times := func(t *Timings) []float64 {
			v := make([]float64, len(group))
			for g := range group {
				a, b := t.Ops[4*g], t.Ops[4*g+2] // the root's two threads
				v[g] = max(a[1].End, b[1].End) - min(a[0].Start, b[0].Start)
			}
			return v
		}
		ms = append(ms, measurement{experiment: "one_to_two", id: fmt.Sprintf("group%d", gi), program: prog, measures: times,
			rows: func(r *Results, rep int, _ float64, t *Timings) {
				for g, tr := range group {
					r.OneToTwo = append(r.OneToTwo, datasets.OneToTwo{Cluster: clusterName, Root: tr[0], J: tr[1], K: tr[2],
						Bytes: d.Bytes, Rep: int64(rep), Seconds: times(t)[g]})
				}
			}})
	}
	return ms
}

// collectiveMeasurement measures a linear scatter (the root writes the message to each other
// node in turn, on one thread; it ends when the last receiver has its last byte) or a linear
// gather (every other node writes to the root at once; it ends when the root has every
// byte), from nodes[0] to all of nodes.
func collectiveMeasurement(clusterName, op string, nodes []string, size int64) measurement {
	root, others := nodes[0], nodes[1:]
	prog := &Program{}
	rootThread := Thread{Node: root}
	for k, r := range others {
		prog.Conns = append(prog.Conns, Conn{From: root, To: r})
		if op == "scatter" {
			rootThread.Ops = append(rootThread.Ops, Op{Kind: Send, Conn: k, Bytes: size})
			prog.Threads = append(prog.Threads, Thread{Node: r, Ops: []Op{{Kind: Recv, Conn: k, Bytes: size}}})
		} else {
			prog.Threads = append(prog.Threads,
				Thread{Node: r, Ops: []Op{{Kind: Send, Conn: k, Bytes: size}}},
				Thread{Node: root, Ops: []Op{{Kind: Recv, Conn: k, Bytes: size}}})
		}
	}
	if op == "scatter" {
		prog.Threads = append(prog.Threads, rootThread)
	}
	time := func(t *Timings) []float64 {
		end := 0.0
		for i, th := range prog.Threads {
			if th.Ops[0].Kind == Recv {
				end = max(end, t.Ops[i][0].End)
			}
		}
		return []float64{end}
	}
	return measurement{experiment: op, id: fmt.Sprintf("%s:%d", op, size), program: prog, measures: time,
		rows: func(r *Results, rep int, _ float64, t *Timings) {
			r.Collectives = append(r.Collectives, datasets.Collective{Cluster: clusterName, Op: op, Root: root,
				Procs: int64(len(nodes)), Bytes: size, Rep: int64(rep), Seconds: time(t)[0]})
		}}
}

// bisection splits the nodes in two halves facing each other: the racks' first half against
// their second half (two racks: one against the other); one rack: its first half against its
// second. a[i] and b[i] are the i-th pair.
func bisection(cl *cluster.Cluster) (a, b []string) {
	racks := cl.Racks()
	if len(racks) == 1 {
		ns := cl.RackNodes(0)
		h := len(ns) / 2
		return ns[:h], ns[h : 2*h]
	}
	for r := range racks {
		if r < len(racks)/2 {
			a = append(a, cl.RackNodes(r)...)
		} else {
			b = append(b, cl.RackNodes(r)...)
		}
	}
	n := min(len(a), len(b))
	return a[:n], b[:n]
}

// pingPongMeasurement measures the L micro-benchmark (thesis appendix §A.5) for one pair count and size: every
// pair a[i] ↔ b[i] ping-pongs the message at once; each side unpacks what it receives before
// going on. A repetition gives the round trip (the initiator's send to the end of its
// unpacking of the reply) and the overheads, each the mean over the pairs and the two
// directions: Os the write system calls, Or the read system calls, Ur the unpacking copy.
func pingPongMeasurement(clusterName string, a, b []string, size int64) measurement {
	prog := &Program{}
	for i := range a {
		prog.Conns = append(prog.Conns, Conn{From: a[i], To: b[i]})
		prog.Threads = append(prog.Threads,
			Thread{Node: a[i], Ops: []Op{{Kind: Send, Conn: i, Bytes: size}, {Kind: Recv, Conn: i, Bytes: size}, {Kind: Unpack, Bytes: size}}},
			Thread{Node: b[i], Ops: []Op{{Kind: Recv, Conn: i, Bytes: size}, {Kind: Unpack, Bytes: size}, {Kind: Send, Conn: i, Bytes: size}}})
	}
	decompose := func(t *Timings) (rtt, os, or, ur float64) {
		n := float64(len(a))
		for i := range a {
			x, y := t.Ops[2*i], t.Ops[2*i+1]
			rtt += (x[2].End - x[0].Start) / n
			os += (x[0].Busy + y[2].Busy) / (2 * n)
			or += (x[1].Busy + y[0].Busy) / (2 * n)
			ur += (x[2].Busy + y[1].Busy) / (2 * n)
		}
		return
	}
	return measurement{experiment: "pingpong", id: fmt.Sprintf("pairs%d:%d", len(a), size), program: prog,
		measures: func(t *Timings) []float64 { rtt, _, _, _ := decompose(t); return []float64{rtt} },
		rows: func(r *Results, rep int, _ float64, t *Timings) {
			rtt, os, or, ur := decompose(t)
			r.PingPongPairs = append(r.PingPongPairs, datasets.PingPongPairs{Cluster: clusterName, Pairs: int64(len(a)), Bytes: size,
				Rep: int64(rep), RTT: rtt, Os: os, Or: or, Ur: ur})
		}}
}
