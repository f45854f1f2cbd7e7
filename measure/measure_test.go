package measure

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/contention"
	"github.com/commcal/commcal/datasets"
	"github.com/commcal/commcal/engine"
	"github.com/commcal/commcal/experiments"
)

func needRoot(t *testing.T) {
	t.Helper()
	if err := Available(); err != nil {
		t.Skipf("skipped: %v", err)
	}
}

// twoByTwo is two racks of two nodes, 1 Gbit/s NICs and a 10 Gbit/s cable, emulated at a
// tenth: 100 Mbit/s NICs, a 1 Gbit/s backbone.
func twoByTwo(t *testing.T) *cluster.Cluster {
	cl, err := cluster.New(cluster.Description{Name: "lab2x2", NICRateBps: 1e9,
		Backbone: &cluster.Backbone{Topology: cluster.TopologyCable, Kind: cluster.KindOptical, RateBps: 10e9},
		Racks:    []cluster.Rack{{Name: "A", Nodes: []string{"a1", "a2"}}, {Name: "B", Nodes: []string{"b1", "b2"}}}})
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

// TestMain makes the test binary an agent when the emulation starts it as one (the emulator
// starts `commcal agent` processes, which a test binary is not), and removes the commcal the
// launch tests built.
func TestMain(m *testing.M) {
	if os.Getenv(agentEnv) == "1" {
		os.Exit(agentMain(os.Args[1:]))
	}
	code := m.Run()
	if commcalBinDir != "" {
		os.RemoveAll(commcalBinDir)
	}
	os.Exit(code)
}

const agentEnv = "COMMCAL_MEASURE_TEST_AGENT"

// agentMain parses the arguments the emulator gives an agent and runs it.
func agentMain(args []string) int {
	fs := flag.NewFlagSet("agent", flag.ContinueOnError)
	var cfg engine.AgentConfig
	var coord string
	fs.IntVar(&cfg.Rank, "rank", -1, "")
	fs.IntVar(&cfg.Size, "size", 0, "")
	fs.StringVar(&cfg.Node, "node", "", "")
	fs.StringVar(&cfg.NetNS, "netns", "", "")
	fs.StringVar(&coord, "coordinator", "", "")
	fs.DurationVar(&cfg.ConnectTimeout, "connect-timeout", time.Minute, "")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	tok, err := engine.ParseToken(os.Getenv("COMMCAL_TOKEN"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	cfg.Token, cfg.Coordinator = tok, []string{coord}
	if cfg.Rank < 0 { // started by srun or mpirun
		l, err := engine.DetectLaunch(os.Getenv)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		cfg.Rank = l.Rank
		cfg.NetNS = strings.ReplaceAll(cfg.NetNS, "{rank}", strconv.Itoa(l.Rank))
	}
	if err := engine.RunAgent(context.Background(), cfg); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// testAgent starts this test binary as an agent.
func testAgent(args []string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), agentEnv+"=1")
	return cmd
}

// deploy builds an emulation of cl shaped by sh with an agent in every node, joined to a
// coordinator.
func deploy(t *testing.T, cl *cluster.Cluster, sh Shaping) (*Emulation, *engine.Coordinator) {
	t.Helper()
	ctx := context.Background()
	em, err := Build(ctx, cl, sh)
	if err != nil {
		t.Fatal(err)
	}
	tok := engine.NewToken()
	sock := DefaultSocket
	sock.Timeout = time.Minute
	co, err := engine.Listen(ctx, engine.CoordinatorConfig{Cluster: cl, Size: len(cl.Nodes()), Token: tok, Listen: "127.0.0.1:0", Socket: sock})
	if err != nil {
		em.Close()
		t.Fatal(err)
	}
	procs := &agents{log: slog.New(slog.DiscardHandler)}
	t.Cleanup(func() {
		co.Shutdown("")
		if err := procs.stop(nil); err != nil {
			t.Error(err)
		}
		if err := em.Close(); err != nil {
			t.Error(err)
		}
		if left := Leftovers(); len(left) != 0 {
			t.Errorf("left after teardown: %v", left)
		}
	})
	if err := procs.start(em, LaunchExec, testAgent, co.Port(), tok); err != nil {
		t.Fatal(err)
	}
	if err := co.Join(ctx); err != nil {
		t.Fatal(err)
	}
	return em, co
}

// repeat runs a pattern n times and returns each repetition's completion times.
func repeat(t *testing.T, co *engine.Coordinator, flows []contention.Flow, n int) [][]float64 {
	t.Helper()
	prog, times, _ := engine.Transfers(flows)
	var out [][]float64
	for range n {
		tm, err := co.Run(context.Background(), prog)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, times(tm))
	}
	return out
}

// meanOf is the mean over repetitions of f of each repetition's times.
func meanOf(reps [][]float64, f func([]float64) float64) float64 {
	s := 0.0
	for _, r := range reps {
		s += f(r) / float64(len(reps))
	}
	return s
}

func TestEmulatedTwoByTwo(t *testing.T) {
	needRoot(t)
	em, co := deploy(t, twoByTwo(t), DefaultShaping)
	if got := len(Leftovers()); got != 6 { // 4 nodes and 2 switches
		t.Errorf("%d namespaces, want 6", got)
	}
	const m = 4 << 20
	nic := em.ShapedRate(1e9)
	// One transfer alone reaches the shaped NIC rate (within 10%: TCP/IP and Ethernet headers
	// take about 5%).
	rate := m * 8 / meanOf(repeat(t, co, []contention.Flow{{Src: "a1", Dst: "b1", Bytes: m}}, 3), func(x []float64) float64 { return x[0] })
	if rate < 0.9*nic || rate > nic {
		t.Errorf("one transfer at %.1f Mbit/s, NIC shaped to %.0f", rate/1e6, nic/1e6)
	}
	// Two transfers out of one NIC share it: the NIC being the bottleneck, the later of the
	// two ends when both messages have crossed it, at about half the rate of one alone each
	// (within 10%). How TCP splits the NIC until then is its own business (the intra-rack
	// flow, with the shorter round trip, usually gets more), so the earlier one is only held
	// between half and all of the NIC: it cannot have had less than the other.
	two := repeat(t, co, []contention.Flow{{Src: "a1", Dst: "a2", Bytes: m}, {Src: "a1", Dst: "b2", Bytes: m}}, 3)
	early := m * 8 / meanOf(two, func(x []float64) float64 { return math.Min(x[0], x[1]) })
	late := m * 8 / meanOf(two, func(x []float64) float64 { return math.Max(x[0], x[1]) })
	if math.Abs(late-rate/2)/(rate/2) > 0.1 {
		t.Errorf("the later of two transfers out of one NIC averaged %.1f Mbit/s, half of one alone is %.1f", late/1e6, rate/2e6)
	}
	if early < 0.95*rate/2 || early > 1.02*rate {
		t.Errorf("the earlier of two transfers out of one NIC averaged %.1f Mbit/s, outside [half, all] of %.1f", early/1e6, rate/1e6)
	}
	var sync time.Duration
	for _, a := range co.Agents() {
		sync = max(sync, a.SyncError)
	}
	t.Logf("alone %.1f Mbit/s; two out of one NIC: the earlier %.1f, the later %.1f Mbit/s; clock sync ≤ %v", rate/1e6, early/1e6, late/1e6, sync)
}

// TestMeasureSmallCatalogue measures a few patterns end to end and reads the dataset back.
func TestMeasureSmallCatalogue(t *testing.T) {
	needRoot(t)
	out := filepath.Join(t.TempDir(), "ds")
	before, _ := os.ReadFile(engine.TCPNoMetricsSave)
	m, err := Measure(context.Background(), Options{Cluster: twoByTwo(t), Shaping: DefaultShaping, Socket: DefaultSocket,
		Catalogue: experiments.QuickCatalogue, Out: out, Created: time.Unix(0, 0), Agent: testAgent, ForgetTCPMetrics: true})
	if err != nil {
		t.Fatal(err)
	}
	ds, err := datasets.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := datasets.ReadAll[datasets.Transfer](context.Background(), ds, datasets.TransfersTable)
	if err != nil || int64(len(rows)) != m.Rows("transfers") || len(rows) == 0 {
		t.Fatalf("%d rows, %v", len(rows), err)
	}
	exps := map[string]bool{}
	for _, r := range rows {
		exps[r.Experiment] = true
		if r.Seconds() <= 0 {
			t.Fatalf("row %+v", r)
		}
	}
	for _, e := range []string{"p2p_sweep", "fair_intra", "fair_inter", "bidir_nic", "bidir_backbone", "incast", "outcast", "random"} {
		if !exps[e] {
			t.Errorf("no %s transfers", e)
		}
	}
	// Every table of the catalogue's other experiments, and the measurement's record.
	for _, tab := range []string{"roundtrips", "one_to_two", "collectives", "pingpong_pairs", "schedules"} {
		if m.Rows(tab) == 0 {
			t.Errorf("no %s rows", tab)
		}
	}
	mi := m.Measured
	if mi == nil || mi.Launcher != "emulated" || len(mi.Hosts) != 4 || mi.Repetitions == 0 || !(mi.SyncErrorS > 0) || mi.Hosts[0].Info["kernel"] == "" {
		t.Errorf("measurement record %+v", mi)
	}
	// The nodes' TCP settings as read in their namespaces: the metrics cache off there
	// (ForgetTCPMetrics), the machine's own untouched.
	for _, h := range mi.Hosts {
		if h.Info["tcp_no_metrics_save"] != "1" {
			t.Errorf("%s: tcp_no_metrics_save %q in its namespace, want 1", h.Node, h.Info["tcp_no_metrics_save"])
		}
	}
	if after, _ := os.ReadFile(engine.TCPNoMetricsSave); string(after) != string(before) {
		t.Errorf("the machine's tcp_no_metrics_save went from %q to %q", before, after)
	}
	if _, err := os.Stat(filepath.Join(out, engine.RepetitionsFile)); err != nil {
		t.Error(err)
	}
	if left := Leftovers(); len(left) != 0 {
		t.Errorf("left after the measurement: %v", left)
	}
}

// TestCancelTearsDown cancels a measurement in the middle of a transfer: it returns at once
// with the context's error and leaves no namespace behind.
func TestCancelTearsDown(t *testing.T) {
	needRoot(t)
	ctx, cancel := context.WithCancel(context.Background())
	cat := experiments.QuickCatalogue
	cat.SweepSizes = []int64{64 << 20} // 64 MiB at 100 Mbit/s: about 5 s
	time.AfterFunc(2*time.Second, cancel)
	began := time.Now()
	_, err := Measure(ctx, Options{Cluster: twoByTwo(t), Shaping: DefaultShaping, Socket: DefaultSocket, Catalogue: cat,
		Out: filepath.Join(t.TempDir(), "ds"), Created: time.Unix(0, 0), Agent: testAgent})
	if err == nil {
		t.Fatal("a cancelled measurement succeeded")
	}
	if d := time.Since(began); d > 5*time.Second {
		t.Errorf("cancellation took %v", d)
	}
	if left := Leftovers(); len(left) != 0 {
		t.Errorf("left after cancellation: %v", left)
	}
}

// TestCleanupSparesLiveRuns leaves namespaces as a crashed run (its process gone), a run of
// another live process (pid 1) and an older version (no process in the name) would: Cleanup
// removes the first and the last and keeps the live run's.
func TestCleanupSparesLiveRuns(t *testing.T) {
	needRoot(t)
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	var made []*Emulation
	defer func() {
		for _, em := range made {
			em.Close() // the removed ones' deletion fails; their handles close all the same
		}
	}()
	for _, id := range []string{fmt.Sprintf("%dx0001", dead.Process.Pid), "1x0002", "0a1b2c"} {
		em := &Emulation{ID: id}
		made = append(made, em)
		if _, err := em.newNS("n0"); err != nil {
			t.Fatal(err)
		}
	}
	exists := func(em *Emulation) bool {
		_, err := os.Stat(filepath.Join(netnsDir, em.names[0]))
		return err == nil
	}
	n, err := Cleanup()
	if err != nil {
		t.Fatal(err)
	}
	if n != 2 || exists(made[0]) || !exists(made[1]) || exists(made[2]) {
		t.Errorf("removed %d; left: crashed %v, live %v, older %v", n, exists(made[0]), exists(made[1]), exists(made[2]))
	}
}

// TestForgetTCPMetrics checks the emulation's nodes keep TCP's per-destination metrics cache by
// default, as the kernel has it, and not after ForgetTCPMetrics; the machine's stays as it was.
func TestForgetTCPMetrics(t *testing.T) {
	needRoot(t)
	machine, err := os.ReadFile(engine.TCPNoMetricsSave)
	if err != nil {
		t.Skipf("no %s: %v", engine.TCPNoMetricsSave, err)
	}
	em, err := Build(context.Background(), twoByTwo(t), DefaultShaping)
	if err != nil {
		t.Fatal(err)
	}
	defer em.Close()
	read := func() map[string]string {
		got := map[string]string{}
		for _, n := range em.Cluster.Nodes() {
			if err := engine.InNetNS(em.Namespace(n.Name), func() error {
				b, err := os.ReadFile(engine.TCPNoMetricsSave)
				got[n.Name] = strings.TrimSpace(string(b))
				return err
			}); err != nil {
				t.Fatal(err)
			}
		}
		return got
	}
	for node, v := range read() {
		if v != "0" {
			t.Errorf("%s: tcp_no_metrics_save %q in a new namespace, want the kernel's 0", node, v)
		}
	}
	if err := em.ForgetTCPMetrics(); err != nil {
		t.Fatal(err)
	}
	for node, v := range read() {
		if v != "1" {
			t.Errorf("%s: tcp_no_metrics_save %q after ForgetTCPMetrics, want 1", node, v)
		}
	}
	if after, _ := os.ReadFile(engine.TCPNoMetricsSave); string(after) != string(machine) {
		t.Errorf("the machine's tcp_no_metrics_save went from %q to %q", machine, after)
	}
}
