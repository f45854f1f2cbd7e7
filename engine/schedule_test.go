package engine

import (
	"context"
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
	prog, _, err := CollectiveProgram(s)
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
	prog, _, err = CollectiveProgram(s)
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

	if _, _, err := CollectiveProgram(&schedule.Schedule{Collective: schedule.Collective{Op: schedule.Alltoall, Ranks: []string{"n1", "n1"}},
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
// repetition, and each rank's rounds in order, a round starting only once the rank's previous
// one has ended, its parts all inside it.
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
	// Chaining, on one program run directly.
	s, err := cat.Schedules[0].Expand(cl, 5, 64<<10)
	if err != nil {
		t.Fatal(err)
	}
	prog, seconds, err := CollectiveProgram(s)
	if err != nil {
		t.Fatal(err)
	}
	tm, err := lr.co.Run(context.Background(), prog)
	if err != nil {
		t.Fatal(err)
	}
	for i, ops := range tm.Ops {
		if len(ops) != 4 {
			t.Fatalf("thread %d: %d rounds timed, want 4", i, len(ops))
		}
		for k := 1; k < len(ops); k++ {
			if ops[k].Start < ops[k-1].End {
				t.Errorf("thread %d: round %d started at %g s, before its previous round ended at %g s", i, k, ops[k].Start, ops[k-1].End)
			}
		}
		if ops[3].End > seconds(tm) {
			t.Errorf("thread %d ends at %g s, after the collective's time %g s", i, ops[3].End, seconds(tm))
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
