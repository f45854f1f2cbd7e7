package engine

import (
	"context"
	"fmt"
	"math"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/commcal/commcal/experiments"
	"github.com/commcal/commcal/schedule"
)

// TestCollectiveProgramShape checks the program of a pairwise all-to-all and of MPICH's
// binomial broadcast: one thread per rank, one batch per round the rank takes part in, each
// holding that rank's sends and receives of the round, and one connection per pair of ranks.
func TestCollectiveProgramShape(t *testing.T) {
	ranks := []string{"n1", "n2", "n3", "n4"}
	s, err := schedule.New(schedule.Collective{Op: schedule.Alltoall, Ranks: ranks, Bytes: 1000}, "pairwise")
	if err != nil {
		t.Fatal(err)
	}
	prog, err := CollectiveProgram(s)
	if err != nil {
		t.Fatal(err)
	}
	if len(prog.Conns) != 6 || len(prog.Threads) != 4 {
		t.Fatalf("pairwise all-to-all of 4 ranks: %d connections and %d threads, want 6 and 4", len(prog.Conns), len(prog.Threads))
	}
	for _, th := range prog.Threads {
		if len(th.Ops) != 3 {
			t.Errorf("%s: %d rounds, want 3", th.Node, len(th.Ops))
		}
		for k, op := range th.Ops {
			kinds := map[OpKind]int{}
			for _, p := range op.Parts {
				kinds[p.Kind]++
				if p.Bytes != 1000 {
					t.Errorf("%s round %d: a part of %d B, want 1000", th.Node, k, p.Bytes)
				}
			}
			if op.Kind != Batch || kinds[Send] != 1 || kinds[Recv] != 1 {
				t.Errorf("%s round %d: %s with parts %v, want a batch of one send and one receive", th.Node, k, op.Kind, kinds)
			}
		}
	}

	s, err = schedule.New(schedule.Collective{Op: schedule.Bcast, Ranks: ranks, Bytes: 500}, "binomial")
	if err != nil {
		t.Fatal(err)
	}
	prog, err = CollectiveProgram(s)
	if err != nil {
		t.Fatal(err)
	}
	// MPICH's binomial tree on 4 ranks: 0 → 2, then 0 → 1 and 2 → 3; the root sends twice, one
	// child a round, and ranks 1 and 3 only receive.
	ops := map[string][]OpKind{}
	for _, th := range prog.Threads {
		for _, op := range th.Ops {
			for _, p := range op.Parts {
				ops[th.Node] = append(ops[th.Node], p.Kind)
			}
		}
	}
	want := map[string]string{"n1": "send send", "n2": "recv", "n3": "recv send", "n4": "recv"}
	for node, w := range want {
		var got []string
		for _, k := range ops[node] {
			got = append(got, string(k))
		}
		if strings.Join(got, " ") != w {
			t.Errorf("binomial broadcast, %s: %v, want %s", node, got, w)
		}
	}

	if _, err := CollectiveProgram(&schedule.Schedule{Collective: schedule.Collective{Op: schedule.Alltoall, Ranks: []string{"n1", "n1"}},
		Algorithm: "pairwise", Rounds: []schedule.Round{{{Src: 0, Dst: 1, Bytes: 1}, {Src: 1, Dst: 0, Bytes: 1}}}}); err == nil ||
		!strings.Contains(err.Error(), "shares node n1") {
		t.Errorf("two ranks on one node: %v, want a refusal naming the node", err)
	}
}

// TestProgramRefusesBadBatches checks the batches a program may hold.
func TestProgramRefusesBadBatches(t *testing.T) {
	conns := []Conn{{From: "a", To: "b"}}
	for _, c := range []struct {
		name string
		op   Op
		want string
	}{
		{"empty", Op{Kind: Batch}, "empty batch"},
		{"unpack inside", Op{Kind: Batch, Parts: []Op{{Kind: Unpack, Bytes: 1}}}, "holds sends and receives"},
		{"two sends on one connection", Op{Kind: Batch, Parts: []Op{{Kind: Send, Bytes: 1}, {Kind: Send, Bytes: 2}}}, "second send"},
		{"parts on a send", Op{Kind: Send, Bytes: 1, Parts: []Op{{Kind: Send, Bytes: 1}}}, "has no parts"},
	} {
		p := &Program{Conns: conns, Threads: []Thread{{Node: "a", Ops: []Op{c.op}}}}
		if err := p.check(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error saying %q", c.name, err, c.want)
		}
	}
	ok := &Program{Conns: conns, Threads: []Thread{{Node: "a", Ops: []Op{{Kind: Batch, Parts: []Op{{Kind: Send, Bytes: 1}, {Kind: Recv, Bytes: 1}}}}}}}
	if err := ok.check(); err != nil {
		t.Errorf("a send and a receive on one connection: %v", err)
	}
}

// TestLoopbackSchedules measures collectives of a schedule design over loopback: a row per
// repetition, every rank's rounds timed, and each round's transfers ending at their receivers
// after their senders began the round.
func TestLoopbackSchedules(t *testing.T) {
	cl := oneRack(t, "n1", "n2", "n3", "n4", "n5")
	lr, err := startLoop(t, cl, nil)
	if err != nil {
		t.Fatal(err)
	}
	cat := experiments.Catalogue{
		Schedules: []experiments.ScheduleDesign{
			{Op: "alltoall", Algorithm: "pairwise", Procs: []int{3, 5}, Sizes: []int64{64 << 10}},
			{Op: "bcast", Algorithm: "auto:mpich", Procs: []int{4}, Sizes: []int64{1 << 20}},
		},
		Reps: experiments.Repetitions{Min: 2, Max: 2, MaxRelWidth: 0.02, Timeout: 20 * time.Second},
	}
	res, err := lr.co.Measure(context.Background(), Campaign{Cluster: cl, Catalogue: cat})
	if err != nil {
		t.Fatal(err)
	}
	type key struct {
		op, alg string
		procs   int64
	}
	rows := map[key]int{}
	for _, r := range res.Schedules {
		rows[key{r.Op, r.Algorithm, r.Procs}]++
		if r.Root != "n1" || !(r.Seconds > 0 && r.Seconds < 10) {
			t.Errorf("schedule row %+v", r)
		}
	}
	// MPICH 4.3.2 broadcasts among fewer than 8 ranks by a binomial tree, whatever the size.
	want := map[key]int{{"alltoall", "pairwise", 3}: 2, {"alltoall", "pairwise", 5}: 2, {"bcast", "binomial", 4}: 2}
	for k, n := range want {
		if rows[k] != n {
			t.Errorf("%v: %d rows, want %d (rows: %v)", k, rows[k], n, rows)
		}
	}
	// The rounds' timings, on one program run directly, at 4 MiB a transfer (a millisecond or
	// more on loopback, well above the error of the agents' clock offsets): each rank's rounds
	// timed, and a receiver's round ending no sooner than its sender's round began, on the
	// coordinator's clock, as its last byte is sent within it.
	s, err := cat.Schedules[0].Expand(cl, 5, 4<<20)
	if err != nil {
		t.Fatal(err)
	}
	prog, err := CollectiveProgram(s)
	if err != nil {
		t.Fatal(err)
	}
	tm, err := lr.co.Run(context.Background(), prog)
	if err != nil {
		t.Fatal(err)
	}
	if len(tm.Ops) != len(s.Ranks) {
		t.Fatalf("%d threads timed, want one per rank (%d)", len(tm.Ops), len(s.Ranks))
	}
	for i, ops := range tm.Ops {
		if len(ops) != 4 {
			t.Fatalf("thread %d: %d rounds timed, want 4", i, len(ops))
		}
	}
	thread := map[string]int{}
	for i, th := range prog.Threads {
		thread[th.Node] = i
	}
	for k, round := range s.Rounds {
		for _, tr := range round {
			// Every rank of a pairwise exchange takes part in every round: its op k is round k.
			src, dst := tm.Ops[thread[s.Ranks[tr.Src]]][k], tm.Ops[thread[s.Ranks[tr.Dst]]][k]
			if dst.End < src.Start {
				t.Errorf("round %d: rank %d's receive from rank %d ended at %g s, before the sender's round began at %g s",
					k, tr.Dst, tr.Src, dst.End, src.Start)
			}
		}
	}
	for i, err := range lr.wait() {
		if err != nil {
			t.Errorf("agent %d: %v", i, err)
		}
	}
}

// Designs that run one schedule measure it once: Open MPI's recursive-doubling allgather on 6
// ranks runs Bruck's, as the bruck design does.
func TestSchedulesMeasuredOnce(t *testing.T) {
	cl := oneRack(t, "n1", "n2", "n3", "n4", "n5", "n6")
	cat := experiments.Catalogue{Schedules: []experiments.ScheduleDesign{
		{Op: "allgather", Algorithm: "recursive-doubling", Procs: []int{4, 6}, Sizes: []int64{1000}},
		{Op: "allgather", Algorithm: "bruck", Procs: []int{6}, Sizes: []int64{1000}},
	}}
	ms, err := measurements(&cat, cl)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, m := range ms {
		ids = append(ids, m.id)
	}
	want := []string{"allgather/recursive-doubling:4:1000", "allgather/bruck:6:1000"}
	if strings.Join(ids, " ") != strings.Join(want, " ") {
		t.Errorf("measurements %v, want %v", ids, want)
	}
}

// tcpPair opens a loopback TCP connection and returns both ends.
func tcpPair(t *testing.T) (a, b *net.TCPConn) {
	t.Helper()
	ln, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	done := make(chan *net.TCPConn, 1)
	go func() {
		c, err := ln.AcceptTCP()
		if err != nil {
			done <- nil
			return
		}
		done <- c
	}()
	a, err = net.DialTCP("tcp", nil, ln.Addr().(*net.TCPAddr))
	if err != nil {
		t.Fatal(err)
	}
	if b = <-done; b == nil {
		t.Fatal("accept failed")
	}
	t.Cleanup(func() { a.Close(); b.Close() })
	return a, b
}

// A batch whose receive fails (its peer closed the connection) ends its send to a peer that
// never reads at once, with the receive's error rather than the send's timeout; a part on a
// connection the agent does not hold fails before any part starts.
func TestBatchFailsFast(t *testing.T) {
	recvEnd, closing := tcpPair(t)
	sendEnd, _ := tcpPair(t) // its peer never reads: 64 MiB cannot fit in the socket buffers
	closing.Close()
	conns := map[int]*net.TCPConn{0: recvEnd, 1: sendEnd}
	parts := []Op{{Kind: Send, Conn: 1, Bytes: 64 << 20}, {Kind: Recv, Conn: 0, Bytes: 1000}}
	bufs := [][]byte{make([]byte, chunk), make([]byte, chunk)}
	start := time.Now()
	_, err := runBatch(parts, conns, bufs, time.Now().Add(time.Minute))
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("the batch took %v after its receive failed", took)
	}
	if err == nil || !strings.Contains(err.Error(), "closed the connection") {
		t.Errorf("error %v, want the receive's (the peer closed the connection)", err)
	}
	if _, err := runBatch([]Op{{Kind: Send, Conn: 7, Bytes: 1}}, conns, bufs, time.Now().Add(time.Minute)); err == nil ||
		!strings.Contains(err.Error(), "connection 7 is not open here") {
		t.Errorf("a connection the agent does not hold: %v", err)
	}
}

// The largest schedules a catalogue allows are valid programs that fit the control lines:
// every algorithm of the scored collectives among experiments.MaxScheduleProcs ranks, with 4
// GiB messages and node addresses of 255 bytes, passes the program check and gives each agent
// a prepare, and a done with every operation's timings at 19 digits, within MaxRunLine.
func TestSchedulePreparesFitTheControlLine(t *testing.T) {
	n := experiments.MaxScheduleProcs
	ranks := make([]string, n)
	for i := range ranks {
		ranks[i] = fmt.Sprintf("n%03d", i)
	}
	addr := strings.Repeat("a", 249) + ":65535"
	limit := MaxRunLine(n)
	for _, op := range []schedule.Op{schedule.Alltoall, schedule.Allgather, schedule.Bcast} {
		for _, alg := range schedule.Algorithms(op) {
			s, err := schedule.New(schedule.Collective{Op: op, Ranks: ranks, Bytes: experiments.MaxMessageBytes}, alg)
			if err != nil {
				t.Fatal(err)
			}
			prog, err := CollectiveProgram(s)
			if err != nil {
				t.Fatal(err)
			}
			if err := prog.check(); err != nil {
				t.Fatalf("%s %s among %d ranks: %v", op, alg, n, err)
			}
			parts, err := agentParts(prog, math.MaxInt64, func(string) (string, bool) { return addr, true })
			if err != nil {
				t.Fatal(err)
			}
			for node, p := range parts {
				if prep, done := controlLines(t, p); prep > limit || done > limit {
					t.Fatalf("%s %s among %d ranks, %s: a prepare of %d bytes and a done of %d, over the %d-byte line", op, alg, n, node, prep, done, limit)
				}
			}
		}
	}
}
