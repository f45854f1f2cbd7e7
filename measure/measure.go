package measure

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/contention"
	"github.com/commcal/commcal/datasets"
	"github.com/commcal/commcal/engine"
	"github.com/commcal/commcal/experiments"
)

// Options configures Measure.
type Options struct {
	Cluster   *cluster.Cluster
	Shaping   Shaping
	Socket    engine.SocketOptions
	Catalogue experiments.Catalogue
	// ForgetTCPMetrics turns the kernel's per-destination TCP metrics cache off in the nodes'
	// namespaces (Emulation.ForgetTCPMetrics), so that no connection starts from what an
	// earlier measurement left; by default it stays on, as on a real cluster's hosts.
	ForgetTCPMetrics bool
	Out              string
	Force            bool
	Version          string
	Created          time.Time
	Logger           *slog.Logger
	// Progress is told after every measurement how many are done, of how many, and how long
	// the rest should take at the pace so far.
	Progress func(done, total int, left time.Duration)
	// Agent makes the command that starts one agent with the given arguments; nil: this
	// executable's `agent` command (commcal agent ARGS).
	Agent func(args []string) *exec.Cmd
	// Launcher starts the agents: LaunchExec (default) starts each itself; LaunchSrun and
	// LaunchMpirun through the cluster launcher, as on a real cluster (Slurm must be
	// configured for this machine; SLURM_CONF is passed on).
	Launcher string
}

// The launchers of an emulated cluster's agents.
const (
	LaunchExec   = "exec"
	LaunchSrun   = "srun"
	LaunchMpirun = "mpirun"
)

// Launchers lists the launchers Options.Launcher takes.
var Launchers = []string{LaunchExec, LaunchSrun, LaunchMpirun}

// DefaultSocket is CUBIC (this machine's default is BBR) with the kernel's buffer autotuning.
var DefaultSocket = engine.SocketOptions{Congestion: "cubic"}

// Measure builds the emulated cluster, starts one agent per node inside the node's
// namespace, and runs the engine's coordinator on them exactly as rank 0 of a real cluster
// does; then it ends the agents, tears the emulation down and writes the dataset. Leftovers
// of crashed runs are removed first. The manifest records every setting that changes TCP's
// behaviour.
func Measure(ctx context.Context, o Options) (*datasets.Manifest, error) {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if n, err := Cleanup(); err != nil {
		return nil, err
	} else if n > 0 {
		o.Logger.Warn("removed namespaces left by an earlier run", "count", n)
	}
	if o.Agent == nil {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("measure: finding commcal to start the agents: %w", err)
		}
		o.Agent = func(args []string) *exec.Cmd { return exec.Command(exe, append([]string{"agent"}, args...)...) }
	}
	em, err := Build(ctx, o.Cluster, o.Shaping)
	if err != nil {
		return nil, err
	}
	defer em.Close()
	metrics := "kept (the kernel's default: a connection starts from what the last one to the same node left)"
	if o.ForgetTCPMetrics {
		if err := em.ForgetTCPMetrics(); err != nil {
			return nil, err
		}
		metrics = "not kept (net.ipv4.tcp_no_metrics_save = 1 in every node's namespace)"
	}
	if o.Launcher == "" {
		o.Launcher = LaunchExec
	}
	if !slices.Contains(Launchers, o.Launcher) {
		return nil, fmt.Errorf("measure: unknown launcher %q (want one of %s)", o.Launcher, strings.Join(Launchers, ", "))
	}
	tok := engine.NewToken()
	procs := &agents{log: o.Logger}
	addrs := map[string]string{}
	for _, n := range o.Cluster.Nodes() {
		addrs[n.Name] = em.NodeIP(n.Name).String()
	}
	launcher := "emulated"
	if o.Launcher != LaunchExec {
		launcher += "+" + o.Launcher
	}
	defer procs.stop(errors.New("measure ended early")) // a no-op after the stop below
	kernel, _ := os.ReadFile("/proc/sys/kernel/osrelease")
	run := engine.CampaignRun{Cluster: o.Cluster, Catalogue: o.Catalogue, Token: tok, Listen: "127.0.0.1:0", JoinTimeout: 30 * time.Second,
		Addrs: addrs, Socket: o.Socket, Logger: o.Logger, Progress: o.Progress,
		Dataset: engine.DatasetOptions{Out: o.Out, Force: o.Force, Version: o.Version, Created: o.Created, Launcher: launcher,
			Provenance: "commcal measure on an emulated cluster of network namespaces",
			Notes: []string{
				fmt.Sprintf("emulation: Linux %s, veth pairs shaped by tbf at %g × the nominal rates (burst max(64 KiB, 2 ms), peak rate %g × the rate with a %d B peak bucket on the nodes' ends, queue %g s)",
					strings.TrimSpace(string(kernel)), o.Shaping.Scale, peakRatio, peakBurst, o.Shaping.Latency),
				fmt.Sprintf("tcp: congestion control %q set per socket; socket buffers %s; offloads at the veth defaults (%s); per-destination metrics %s",
					o.Socket.Congestion, bufferNote(o.Socket.Buffer), em.Offloads(), metrics),
				hostNote(o.Shaping),
			}},
		Started: func(port int) error { return procs.start(em, o.Launcher, o.Agent, port, tok) },
		Check:   func(ctx context.Context, co *engine.Coordinator) (string, error) { return checkHeadroom(ctx, em, co) },
	}
	m, res, err := engine.Coordinate(ctx, run)
	if werr := procs.stop(err); err == nil && werr != nil {
		err = werr
	}
	if err != nil {
		return nil, err
	}
	o.Logger.Info("measured", "summary", res.Summary())
	if err := em.Close(); err != nil {
		return nil, err
	}
	return m, nil
}

// hostNote says how the emulation bounds its hosts (Shaping.HostRate).
func hostNote(sh Shaping) string {
	if sh.HostRate == 0 {
		return "hosts: not bound (a NIC's two directions are independent token buckets)"
	}
	return fmt.Sprintf("hosts: bound to %g × the shaped NIC rate for what a node sends and receives together (one token bucket, burst max(64 KiB, 2 ms), queue %g s, on an ifb device fed by both directions of the node's switch port)",
		sh.HostRate, sh.Latency)
}

func bufferNote(b int) string {
	if b == 0 {
		return "kernel autotuning"
	}
	return fmt.Sprintf("SO_SNDBUF = SO_RCVBUF = %d B", b)
}

// agents are the agent processes of an emulation: one per node, or the launcher that started
// them.
type agents struct {
	log   *slog.Logger
	cmds  []*exec.Cmd
	out   []*bytes.Buffer
	names []string
	done  chan struct{}
	errs  []error
}

// start starts one agent per node, inside the node's namespace, told to join the
// coordinator on this machine's loopback (the control channel stays in the host's
// namespace). Started directly, each agent is told its node and rank; through srun or
// mpirun, the launcher gives the rank, rank i goes into node i's namespace, and the
// coordinator maps each agent by its address, as on a real cluster. The token goes through
// the environment, not the command line, which every user of the machine can read.
func (a *agents) start(em *Emulation, launcher string, mk func([]string) *exec.Cmd, port int, tok engine.Token) error {
	nodes := em.Cluster.Nodes()
	n := strconv.Itoa(len(nodes))
	common := []string{"--size", n, "--coordinator", fmt.Sprintf("127.0.0.1:%d", port), "--connect-timeout", "30s"}
	env := func(c *exec.Cmd) *exec.Cmd {
		c.Env = append(c.Environ(), "COMMCAL_TOKEN="+tok.String())
		return c
	}
	switch launcher {
	case LaunchExec:
		for i, nd := range nodes {
			c := env(mk(append([]string{"--rank", strconv.Itoa(i), "--node", nd.Name, "--netns", em.Namespace(nd.Name)}, common...)))
			if err := a.run(c, nd.Name); err != nil {
				return err
			}
		}
	default:
		// Node i's namespace ends in n<i> (Build); the launcher's rank i goes there.
		ns := strings.TrimSuffix(em.Namespace(nodes[0].Name), "n0") + "n{rank}"
		agent := env(mk(append([]string{"--netns", ns}, common...)))
		var argv []string
		if launcher == LaunchSrun {
			argv = []string{"srun", "-n", n, "--kill-on-bad-exit=1"}
		} else {
			argv = []string{"mpirun", "--oversubscribe", "-np", n}
			if os.Geteuid() == 0 {
				argv = append(argv, "--allow-run-as-root")
			}
			// mpirun passes on only the variables it is told to.
			base := map[string]bool{}
			for _, kv := range os.Environ() {
				base[kv] = true
			}
			for _, kv := range agent.Env {
				if !base[kv] {
					name, _, _ := strings.Cut(kv, "=")
					argv = append(argv, "-x", name)
				}
			}
		}
		c := exec.Command(argv[0], append(append(argv[1:], agent.Path), agent.Args[1:]...)...)
		c.Env = agent.Env
		if err := a.run(c, launcher); err != nil {
			return err
		}
	}
	a.done = make(chan struct{})
	a.errs = make([]error, len(a.cmds))
	var wg sync.WaitGroup
	for i, c := range a.cmds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a.errs[i] = c.Wait()
		}()
	}
	go func() { wg.Wait(); close(a.done) }()
	return nil
}

// run starts one process, its output kept for the log.
func (a *agents) run(c *exec.Cmd, name string) error {
	buf := &bytes.Buffer{}
	c.Stdout, c.Stderr = buf, buf
	if err := c.Start(); err != nil {
		return fmt.Errorf("measure: starting the agent of %s: %w", name, err)
	}
	a.cmds, a.out, a.names = append(a.cmds, c), append(a.out, buf), append(a.names, name)
	return nil
}

// stop waits for the agents to leave (the coordinator has ended the run, or died), killing
// any still there after ten seconds. When the run failed (runErr), the agents' exits follow
// from it and are logged at debug level; when it did not, an agent that failed is a warning
// and the error.
func (a *agents) stop(runErr error) error {
	if a.done == nil {
		return nil
	}
	select {
	case <-a.done:
	case <-time.After(10 * time.Second):
		for _, c := range a.cmds {
			c.Process.Kill()
		}
		<-a.done
	}
	a.done = nil
	level := slog.LevelWarn
	if runErr != nil && a.names[0] != LaunchSrun && a.names[0] != LaunchMpirun {
		// Agents the run's failure ended; a launcher's output, though, may say why the agents
		// never came (srun waiting for resources, mpirun refusing to start).
		level = slog.LevelDebug
	}
	var first error
	for i, err := range a.errs {
		if err != nil {
			a.log.Log(context.Background(), level, "agent failed", "agent", a.names[i], "status", err.Error(), "output", strings.TrimSpace(a.out[i].String()))
			if first == nil {
				first = fmt.Errorf("measure: the agent of %s: %v: %s", a.names[i], err, lastLine(a.out[i].String()))
			}
		}
	}
	return first
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// hostShare is the share of its NIC's rate a host bound at rate (Shaping.HostRate) leaves a
// node that only sends: all of it from 1 up (or unbound), rate below.
func hostShare(rate float64) float64 {
	if rate == 0 {
		return 1
	}
	return min(1, rate)
}

// checkHeadroom measures whether the machine keeps up with the emulation's heaviest traffic:
// every node of the first rack sends to a node of another rack (or of its own) at once, the
// most the catalogue loads the shaping. The aggregate rate is compared with what the shaped
// links allow (and a host bound below the NIC rate); when the best of three tries carries
// under 85% of it (headers take 5%) the CPU, not the shaping, limits the transfers, and the
// measurement is refused rather than recorded.
func checkHeadroom(ctx context.Context, em *Emulation, co *engine.Coordinator) (string, error) {
	src := em.Cluster.RackNodes(0)
	var dst []string
	if len(em.Cluster.Racks()) > 1 {
		dst = em.Cluster.RackNodes(1)
	} else { // one rack: pair the nodes up inside it
		half := len(src) / 2
		src, dst = src[:half], src[half:]
	}
	k := min(len(src), len(dst))
	if k == 0 {
		return "headroom: not checked (one node)", nil
	}
	const m = 4 << 20
	var flows []contention.Flow
	var expected float64
	for i := 0; i < k; i++ {
		flows = append(flows, contention.Flow{Src: src[i], Dst: dst[i], Bytes: m})
		nd, _ := em.Cluster.Node(src[i])
		expected += em.ShapedRate(nd.NICRateBps) * hostShare(em.Shaping.HostRate)
	}
	if b := em.Cluster.Description().Backbone; b != nil && len(em.Cluster.Racks()) > 1 {
		expected = min(expected, em.ShapedRate(b.RateBps))
	}
	prog, times, _ := engine.Transfers(flows)
	// What the machine can carry is the best of a few tries: one try meets whatever else
	// the machine is doing at that moment (a test run beside it, a cron job), and a
	// transient dip is not a machine too slow for the emulation.
	const tries = 3
	got := 0.0
	for range tries {
		t, err := co.Run(ctx, prog)
		if err != nil {
			return "", fmt.Errorf("measure: headroom check: %w", err)
		}
		longest := 0.0
		for _, x := range times(t) {
			longest = max(longest, x)
		}
		got = max(got, float64(k)*m*8/longest)
		if got >= 0.85*expected {
			break
		}
	}
	msg := fmt.Sprintf("%d concurrent transfers carried %.0f Mbit/s of the %.0f Mbit/s the shaping allows (%.0f%%; TCP/IP headers take about 5%%)",
		k, got/1e6, expected/1e6, 100*got/expected)
	if got < 0.85*expected {
		return "", fmt.Errorf("measure: the machine cannot keep up with the emulation: %s; lower --scale", msg)
	}
	return "headroom: " + msg, nil
}
