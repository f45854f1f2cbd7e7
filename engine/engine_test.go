package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/experiments"
)

func oneRack(t testing.TB, nodes ...string) *cluster.Cluster {
	cl, err := cluster.New(cluster.Description{Name: "loop", NICRateBps: 1e9,
		Racks: []cluster.Rack{{Name: "r", Nodes: nodes}}})
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

// loopRun is a coordinator and agents in this process over loopback.
type loopRun struct {
	co     *Coordinator
	cancel []context.CancelFunc
	errs   []error
	wg     sync.WaitGroup
}

// startLoop starts a coordinator for cl and one agent per node (agent i gets cfgs[i]
// applied, if given) and joins them.
func startLoop(t *testing.T, cl *cluster.Cluster, tweak func(rank int, cfg *AgentConfig)) (*loopRun, error) {
	t.Helper()
	tok := NewToken()
	co, err := Listen(context.Background(), CoordinatorConfig{Cluster: cl, Size: len(cl.Nodes()), Token: tok, Listen: "127.0.0.1:0",
		Socket: SocketOptions{Timeout: 20 * time.Second}, JoinTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	lr := &loopRun{co: co, errs: make([]error, len(cl.Nodes()))}
	for i, n := range cl.Nodes() {
		ctx, cancel := context.WithCancel(context.Background())
		lr.cancel = append(lr.cancel, cancel)
		cfg := AgentConfig{Rank: i, Size: len(cl.Nodes()), Host: "host-" + n.Name, Node: n.Name, Token: tok,
			Coordinator: []string{fmt.Sprintf("127.0.0.1:%d", co.Port())}, ConnectTimeout: 5 * time.Second}
		if tweak != nil {
			tweak(i, &cfg)
		}
		lr.wg.Add(1)
		go func() {
			defer lr.wg.Done()
			lr.errs[i] = RunAgent(ctx, cfg)
		}()
	}
	t.Cleanup(func() {
		co.Shutdown("test over")
		for _, c := range lr.cancel {
			c()
		}
		lr.wg.Wait()
	})
	return lr, co.Join(context.Background())
}

// wait ends the run normally and returns the agents' errors.
func (lr *loopRun) wait() []error {
	lr.co.Shutdown("")
	lr.wg.Wait()
	return lr.errs
}

func TestLoopbackCampaign(t *testing.T) {
	cl := oneRack(t, "n1", "n2", "n3", "n4")
	lr, err := startLoop(t, cl, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range lr.co.Agents() {
		// One process, one clock: the estimated offset must be within its own error bound.
		if a.Offset < -a.SyncError-50*time.Microsecond || a.Offset > a.SyncError+50*time.Microsecond {
			t.Errorf("%s: offset %v outside its bound ±%v on one clock", a.Node, a.Offset, a.SyncError)
		}
		if a.Info["kernel"] == "" {
			t.Errorf("%s: no kernel in the host info %v", a.Node, a.Info)
		}
	}
	cat := experiments.Catalogue{
		Designs:     experiments.Designs{SweepSizes: []int64{1 << 10, 256 << 10}, Bytes: 64 << 10, FairnessMaxK: 2},
		LMO:         experiments.LMODesign{Bytes: 32 << 10},
		Collectives: experiments.CollectiveDesign{Sizes: []int64{1 << 10, 128 << 10}},
		PingPong:    experiments.PingPongDesign{Pairs: []int{1, 2}, Sizes: []int64{100, 64 << 10}},
		Reps:        experiments.Repetitions{Min: 2, Max: 3, MaxRelWidth: 0.02, Timeout: 20 * time.Second},
	}
	res, err := lr.co.Measure(context.Background(), Campaign{Cluster: cl, Catalogue: cat})
	if err != nil {
		t.Fatal(err)
	}
	// 4 nodes: 6 pairs × 2 sizes of round trips, 4 roots × 3 pairs of one-to-two.
	pairs := map[[2]string]bool{}
	for _, r := range res.RoundTrips {
		pairs[[2]string{r.I, r.J}] = true
		if !(r.Seconds > 0 && r.Seconds < 1) {
			t.Errorf("round trip %+v: implausible time", r)
		}
	}
	if len(pairs) != 6 {
		t.Errorf("round trips cover %d pairs, want 6", len(pairs))
	}
	triplets := map[[3]string]bool{}
	for _, r := range res.OneToTwo {
		triplets[[3]string{r.Root, r.J, r.K}] = true
	}
	if len(triplets) != 12 {
		t.Errorf("one-to-two covers %d triplets, want 12", len(triplets))
	}
	ops := map[string]int{}
	for _, r := range res.Collectives {
		ops[r.Op]++
		if r.Procs != 4 || r.Root != "n1" || !(r.Seconds > 0) {
			t.Errorf("collective row %+v", r)
		}
	}
	if ops["scatter"] < 4 || ops["gather"] < 4 {
		t.Errorf("collective rows per op %v, want at least 2 sizes × 2 reps each", ops)
	}
	for _, r := range res.PingPongPairs {
		// The receive-side parts are inside the round trip. The send overhead need not be:
		// on loopback a write system call delivers the packet to the receiver itself, so the
		// reply can be unpacked before the replier's write returns.
		if !(r.RTT > 0 && r.Os > 0 && r.Or > 0 && r.Ur > 0 && r.Or+r.Ur < r.RTT) {
			t.Errorf("ping-pong row %+v: the overheads do not fit in the round trip", r)
		}
	}
	if len(res.PingPongPairs) < 8 {
		t.Errorf("%d ping-pong rows, want at least 2 counts × 2 sizes × 2 reps", len(res.PingPongPairs))
	}
	for _, tr := range res.Transfers {
		if !(tr.TEnd > tr.TStart) {
			t.Errorf("transfer %+v ends before it starts", tr)
		}
	}
	if len(res.Repetitions) == 0 || res.Measurements == 0 {
		t.Errorf("no repetitions recorded: %+v", res)
	}
	// Each transfer's own start: one per transfer of the repetition's pattern, none for other
	// experiments; at or after the common start (within the clock sync) and before the
	// transfer's own end.
	type rep struct {
		experiment, id string
		rep            int
	}
	ends := map[rep][]float64{}
	for _, tr := range res.Transfers {
		k := rep{tr.Experiment, tr.PatternID, int(tr.Rep)}
		ends[k] = append(ends[k], tr.TEnd-tr.TStart)
	}
	withStarts := 0
	for _, r := range res.Repetitions {
		end := ends[rep{r.Experiment, r.ID, r.Rep}]
		n := len(end)
		if len(r.FlowStartS) != n {
			t.Errorf("%s %s rep %d: %d transfer starts for %d transfers", r.Experiment, r.ID, r.Rep, len(r.FlowStartS), n)
			continue
		}
		for i, s := range r.FlowStartS {
			if !(s >= -1e-3 && s < end[i]) {
				t.Errorf("%s %s rep %d: transfer %d started %g s after the common start, ended %g s after it", r.Experiment, r.ID, r.Rep, i, s, end[i])
			}
		}
		if n > 0 {
			withStarts++
		}
	}
	if withStarts == 0 {
		t.Error("no repetition of a transfer pattern")
	}
	for i, err := range lr.wait() {
		if err != nil {
			t.Errorf("agent %d: %v", i, err)
		}
	}
}

func TestWrongTokenNamesTheHost(t *testing.T) {
	cl := oneRack(t, "n1", "n2", "n3")
	lr, err := startLoop(t, cl, func(rank int, cfg *AgentConfig) {
		if rank == 2 {
			cfg.Token = NewToken()
		}
	})
	if err == nil || !strings.Contains(err.Error(), "wrong token") || !strings.Contains(err.Error(), "host-n3") {
		t.Fatalf("join: %v, want a wrong token naming host-n3", err)
	}
	errs := lr.wait()
	if errs[2] == nil || !strings.Contains(errs[2].Error(), "refused") {
		t.Errorf("the agent with the wrong token: %v", errs[2])
	}
	for i := range 2 {
		if errs[i] == nil {
			t.Errorf("agent %d ended without an error after a failed join", i)
		}
	}
}

func TestJoinRefusals(t *testing.T) {
	cases := []struct {
		name  string
		tweak func(rank int, cfg *AgentConfig)
		want  string
	}{
		{"unknown node", func(rank int, cfg *AgentConfig) {
			if rank == 1 {
				cfg.Node = "zz9"
			}
		}, `node "zz9" is not in the cluster description`},
		{"duplicate host", func(rank int, cfg *AgentConfig) {
			if rank == 1 {
				cfg.Node, cfg.Host = "n1", "host-n1"
			}
		}, "node n1 is claimed by two agents"},
		{"duplicate rank", func(rank int, cfg *AgentConfig) {
			if rank == 1 {
				cfg.Rank = 0
			}
		}, "two agents have rank 0"},
		{"no mapping", func(rank int, cfg *AgentConfig) {
			if rank == 2 {
				cfg.Node = ""
			}
		}, `no node of the cluster description is named "host-n3"`},
		{"size", func(rank int, cfg *AgentConfig) {
			if rank == 1 {
				cfg.Size = 5
			}
		}, "it was started as one of 5 agents (its --size or its launcher's), the coordinator's launch has 3"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			lr, err := startLoop(t, oneRack(t, "n1", "n2", "n3"), tc.tweak)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("join: %v, want %q", err, tc.want)
			}
			lr.wait() // every agent ends
		})
	}
}

func TestUnreachableCoordinator(t *testing.T) {
	start := time.Now()
	err := RunAgent(context.Background(), AgentConfig{Rank: 1, Size: 2, Host: "h", Token: NewToken(),
		Coordinator: []string{"127.0.0.1:1"}, ConnectTimeout: 700 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "cannot reach the coordinator at 127.0.0.1:1") {
		t.Fatalf("got %v", err)
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Errorf("gave up after %v, the timeout was 0.7 s", el)
	}
}

func TestLostAgentMidProgram(t *testing.T) {
	cl := oneRack(t, "n1", "n2", "n3")
	lr, err := startLoop(t, cl, nil)
	if err != nil {
		t.Fatal(err)
	}
	// n3 receives 2 GB from n1 (seconds on loopback) and is killed 300 ms in.
	prog := &Program{Conns: []Conn{{From: "n1", To: "n3"}}, Threads: []Thread{
		{Node: "n1", Ops: []Op{{Kind: Send, Conn: 0, Bytes: 2 << 30}}},
		{Node: "n3", Ops: []Op{{Kind: Recv, Conn: 0, Bytes: 2 << 30}}}}}
	time.AfterFunc(300*time.Millisecond, lr.cancel[2])
	start := time.Now()
	_, err = lr.co.Run(context.Background(), prog)
	if err == nil || !strings.Contains(err.Error(), "lost node n3") {
		t.Fatalf("run: %v, want the loss of n3 named", err)
	}
	if el := time.Since(start); el > 10*time.Second {
		t.Errorf("the loss took %v to notice", el)
	}
	lr.co.Shutdown(err.Error())
	lr.wg.Wait()
	for i, e := range lr.errs {
		if e == nil {
			t.Errorf("agent %d ended without error after a failed run", i)
		}
	}
	if !errors.Is(lr.errs[2], context.Canceled) {
		t.Errorf("the killed agent: %v", lr.errs[2])
	}
}

func TestRoundRobinMeetsEveryPairOnce(t *testing.T) {
	for n := 3; n <= 8; n++ {
		nodes := make([]string, n)
		for i := range nodes {
			nodes[i] = fmt.Sprintf("x%d", i)
		}
		seen := map[[2]string]int{}
		for _, round := range roundRobin(nodes, false) {
			busy := map[string]bool{}
			for _, p := range round {
				if busy[p[0]] || busy[p[1]] {
					t.Fatalf("n=%d: a node twice in one round %v", n, round)
				}
				busy[p[0]], busy[p[1]] = true, true
				seen[p]++
			}
		}
		if len(seen) != n*(n-1)/2 {
			t.Errorf("n=%d: %d pairs, want %d", n, len(seen), n*(n-1)/2)
		}
		for p, k := range seen {
			if k != 1 {
				t.Errorf("n=%d: pair %v met %d times", n, p, k)
			}
		}
	}
}

func TestOffsetOf(t *testing.T) {
	// The agent's clock is 1000 ns ahead; the best exchange (rtt 100) bounds the error by 50.
	s := []clockSample{{0, 1500, 1000}, {2000, 3050, 2100}, {5000, 6400, 5700}}
	off, bound := offsetOf(s)
	if off != 1000 || bound != 50 {
		t.Errorf("offset %d ± %d, want 1000 ± 50", off, bound)
	}
}
