package measure

import (
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/commcal/commcal/datasets"
	"github.com/commcal/commcal/experiments"
)

// The launcher tests start real agents with the cluster's launchers — Slurm's srun (daemons
// started by the test) and Open MPI's mpirun — moved into the namespaces of an emulated 2×2
// cluster, so that the launch path and the shaped links are both real. Off CI a missing
// launcher skips them with its name; on CI (CI set) it fails them.

// need skips (or, on CI, fails) when a program is missing.
func need(t *testing.T, progs ...string) {
	t.Helper()
	needRoot(t)
	for _, p := range progs {
		if _, err := exec.LookPath(p); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s is missing on CI: .ci/run installs it", p)
			}
			t.Skipf("skipped: %s is not installed (Debian: slurm-wlm, munge, openmpi-bin)", p)
		}
	}
}

// commcalBinary builds commcal once per test binary, in commcalBinDir, which TestMain removes
// when the tests are over.
var commcalBinary = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "commcal-bin-")
	if err != nil {
		return "", err
	}
	commcalBinDir = dir
	bin := filepath.Join(dir, "commcal")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/commcal/commcal/cmd/commcal").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return bin, nil
})

var commcalBinDir string

// launchSetup is an emulated 2×2 cluster described with each node's address, a catalogue
// with the 2×2 checks and a little of every other experiment, and the agent's arguments.
type launchSetup struct {
	em   *Emulation
	dir  string
	out  string
	args []string
}

func setupLaunch(t *testing.T) *launchSetup {
	t.Helper()
	bin, err := commcalBinary()
	if err != nil {
		t.Fatal(err)
	}
	em, err := Build(context.Background(), twoByTwo(t), DefaultShaping)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := em.Close(); err != nil {
			t.Error(err)
		}
	})
	dir := t.TempDir()
	var desc strings.Builder
	desc.WriteString("name = \"lab2x2\"\nnic_rate_bps = 1e9\n[backbone]\ntopology = \"cable\"\nkind = \"optical\"\nrate_bps = 10e9\n" +
		"[[rack]]\nname = \"A\"\nnodes = [\"a1\", \"a2\"]\n[[rack]]\nname = \"B\"\nnodes = [\"b1\", \"b2\"]\n")
	for _, n := range em.Cluster.Nodes() {
		fmt.Fprintf(&desc, "[[node]]\nname = %q\naddr = %q\n", n.Name, em.NodeIP(n.Name))
	}
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cl := write("lab.toml", desc.String())
	cat := write("catalogue.toml", `sweep = { sizes = [4194304] }
calibration = { bytes = 4194304 }
fairness = { max_k = 2 }
lmo = { bytes = 16384 }
collectives = { sizes = [1024, 65536] }
pingpong = { pairs = [1, 2], sizes = [1024] }
repetitions = { min = 3, max = 3, timeout = "1m" }
`)
	// Node i's namespace ends in n<i>; rank i goes into node i's.
	ns := em.Namespace(em.Cluster.Nodes()[0].Name)
	out := filepath.Join(dir, "measured")
	return &launchSetup{em: em, dir: dir, out: out, args: []string{bin, "agent", "--rendezvous", filepath.Join(dir, "rdv"),
		"--netns", strings.TrimSuffix(ns, "n0") + "n{rank}", "--connect-timeout", "20s", "--join-timeout", "20s",
		"--cluster", cl, "--catalogue", cat, "--out", out}}
}

// checkTwoByTwo checks a launched campaign's dataset as TestEmulatedTwoByTwo checks the
// engine: one transfer alone at the shaped NIC rate, the later of two out of one NIC at half.
func checkTwoByTwo(t *testing.T, s *launchSetup, launcher string) {
	t.Helper()
	ds, err := datasets.Open(s.out)
	if err != nil {
		t.Fatal(err)
	}
	m := ds.Manifest
	if m.Measured == nil || m.Measured.Launcher != launcher || len(m.Measured.Hosts) != 4 {
		t.Fatalf("measurement record %+v, want 4 hosts launched by %s", m.Measured, launcher)
	}
	for _, tab := range []string{"transfers", "roundtrips", "one_to_two", "collectives", "pingpong_pairs"} {
		if m.Rows(tab) == 0 {
			t.Errorf("no %s rows", tab)
		}
	}
	rows, err := datasets.ReadAll[datasets.Transfer](context.Background(), ds, datasets.TransfersTable)
	if err != nil {
		t.Fatal(err)
	}
	const size = 4 << 20
	var alone, later []float64
	byRep := map[string]float64{}
	for _, r := range rows {
		switch {
		case r.Experiment == "p2p_sweep":
			alone = append(alone, size*8/r.Seconds())
		case r.Experiment == "fair_intra" && strings.HasSuffix(r.PatternID, "2"):
			k := fmt.Sprint(r.Rep)
			byRep[k] = math.Max(byRep[k], r.Seconds())
		}
	}
	for _, s := range byRep {
		later = append(later, size*8/s)
	}
	// The best repetition of each: a moment of CPU load beside the emulation only slows a
	// transfer down, while a NIC that is not shared (or not shaped) shows in every repetition
	// (the later of two transfers sharing a NIC cannot beat half its rate: the NIC carries
	// both).
	nic := s.em.ShapedRate(1e9)
	a, l := best(alone), best(later)
	if len(alone) == 0 || a < 0.9*nic || a > nic {
		t.Errorf("%s: one transfer at %.1f Mbit/s at best (%d rows), NIC shaped to %.0f", launcher, a/1e6, len(alone), nic/1e6)
	}
	if len(later) == 0 || math.Abs(l-a/2)/(a/2) > 0.1 {
		t.Errorf("%s: the later of two transfers out of one NIC at %.1f Mbit/s at best (%d reps), half of one alone is %.1f", launcher, l/1e6, len(later), a/2e6)
	}
	t.Logf("%s: alone %.1f Mbit/s; the later of two out of one NIC %.1f Mbit/s; clock sync ≤ %.0f µs; start skew median %.0f µs, max %.0f µs",
		launcher, a/1e6, l/1e6, 1e6*m.Measured.SyncErrorS, 1e6*m.Measured.SkewMedianS, 1e6*m.Measured.SkewMaxS)
	if left, _ := os.ReadDir(filepath.Join(s.dir, "rdv")); len(left) != 0 {
		t.Errorf("rendezvous files left: %v", left)
	}
}

// best is the largest of x, 0 when it is empty.
func best(x []float64) float64 {
	if len(x) == 0 {
		return 0
	}
	return slices.Max(x)
}

// noAgentsLeft fails if an agent of the test outlived its launcher.
func noAgentsLeft(t *testing.T, s *launchSetup) {
	t.Helper()
	out, _ := exec.Command("pgrep", "-f", s.args[0]+" agent").Output()
	if pids := strings.TrimSpace(string(out)); pids != "" {
		t.Errorf("agents still running after their launcher returned: %s", pids)
		exec.Command("pkill", "-9", "-f", s.args[0]+" agent").Run()
	}
}

// slurm starts a single-node Slurm on this machine for the test (testdata/slurm/up.sh) and
// returns the environment its commands need; the daemons are stopped when the test ends.
func slurm(t *testing.T) []string {
	t.Helper()
	need(t, "srun", "slurmctld", "slurmd", "munged")
	dir, err := os.MkdirTemp("", "commcal-slurm-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		exec.Command("testdata/slurm/down.sh", dir).Run()
		os.RemoveAll(dir)
	})
	if out, err := exec.Command("testdata/slurm/up.sh", dir).CombinedOutput(); err != nil {
		logs, _ := exec.Command("sh", "-c", "tail -n 5 "+dir+"/*.log").CombinedOutput()
		if os.Getenv("CI") != "" {
			t.Fatalf("Slurm did not start: %v: %s\n%s", err, out, logs)
		}
		t.Skipf("skipped: Slurm's daemons cannot start here: %v: %s\n%s", err, out, logs)
	}
	return append(os.Environ(), "SLURM_CONF="+filepath.Join(dir, "slurm.conf"))
}

func runLauncher(t *testing.T, env []string, timeout time.Duration, argv ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func TestLaunchSrun(t *testing.T) {
	env := slurm(t)
	t.Run("measure", func(t *testing.T) { measureThrough(t, LaunchSrun, env) })
	s := setupLaunch(t)
	out, err := runLauncher(t, env, 3*time.Minute, append([]string{"srun", "-n", "4", "--kill-on-bad-exit=1"}, s.args...)...)
	if err != nil {
		t.Fatalf("srun: %v\n%s", err, out)
	}
	checkTwoByTwo(t, s, "slurm")
	noAgentsLeft(t, s)
}

func TestLaunchMpirun(t *testing.T) {
	need(t, "mpirun")
	t.Run("measure", func(t *testing.T) { measureThrough(t, LaunchMpirun, os.Environ()) })
	s := setupLaunch(t)
	out, err := runLauncher(t, os.Environ(), 3*time.Minute,
		append([]string{"mpirun", "--allow-run-as-root", "--oversubscribe", "-np", "4"}, s.args...)...)
	if err != nil {
		t.Fatalf("mpirun: %v\n%s", err, out)
	}
	checkTwoByTwo(t, s, "openmpi")
	noAgentsLeft(t, s)
}

// measureThrough runs commcal measure's emulated campaign with the agents started by a
// launcher: they find their namespaces by rank and the coordinator maps them by address.
func measureThrough(t *testing.T, launcher string, env []string) {
	for _, kv := range env {
		if k, v, _ := strings.Cut(kv, "="); k == "SLURM_CONF" {
			t.Setenv(k, v)
		}
	}
	out := filepath.Join(t.TempDir(), "ds")
	m, err := Measure(context.Background(), Options{Cluster: twoByTwo(t), Shaping: DefaultShaping, Socket: DefaultSocket,
		Catalogue: experiments.QuickCatalogue, Out: out, Created: time.Unix(0, 0), Agent: testAgent, Launcher: launcher})
	if err != nil {
		t.Fatal(err)
	}
	if mi := m.Measured; mi == nil || mi.Launcher != "emulated+"+launcher || len(mi.Hosts) != 4 || m.Rows("transfers") == 0 {
		t.Errorf("measured through %s: %+v", launcher, mi)
	}
	hosts := map[string]int{}
	for _, h := range m.Measured.Hosts {
		hosts[h.Node] = h.Rank
	}
	for i, n := range []string{"a1", "a2", "b1", "b2"} {
		if r, ok := hosts[n]; !ok || r != i {
			t.Errorf("node %s measured by rank %d (%v), want rank %d in its namespace", n, r, ok, i)
		}
	}
}

// TestLaunchFailures starts agents that cannot make a run through srun: a cluster
// description without the fourth agent's node, and a killed agent in the middle of a
// transfer. Each ends every agent, writes nothing, and rank 0 names the problem.
func TestLaunchFailures(t *testing.T) {
	env := slurm(t)
	t.Run("node not in the description", func(t *testing.T) {
		s := setupLaunch(t)
		desc, _ := os.ReadFile(s.args[len(s.args)-5])
		short := strings.Replace(string(desc), `nodes = ["b1", "b2"]`, `nodes = ["b1"]`, 1)
		short = short[:strings.LastIndex(short, "[[node]]")]
		os.WriteFile(s.args[len(s.args)-5], []byte(short), 0o644)
		// Rank 0 fails before publishing itself: the others give up at their connect timeout.
		for i, a := range s.args {
			if a == "--connect-timeout" {
				s.args[i+1] = "5s"
			}
		}
		out, err := runLauncher(t, env, time.Minute, append([]string{"srun", "-n", "4"}, s.args...)...)
		if err == nil || !strings.Contains(out, "the cluster description has 3 nodes and the launch 4 agents") {
			t.Errorf("srun: %v\n%s", err, out)
		}
		if _, err := os.Stat(s.out); !os.IsNotExist(err) {
			t.Errorf("output written after a failed run: %v", err)
		}
		noAgentsLeft(t, s)
	})
	t.Run("agent killed mid-transfer", func(t *testing.T) {
		s := setupLaunch(t)
		// 64 MiB sweeps (5 s each at 100 Mbit/s); rank 3's agent is killed 3 s after it starts.
		os.WriteFile(s.args[len(s.args)-3], []byte("sweep = { sizes = [67108864] }\nrepetitions = { min = 2, max = 2 }\n"), 0o644)
		script := `if [ "$SLURM_PROCID" = 3 ]; then "$@" & pid=$!; sleep 3; kill -9 $pid; wait; exit 0; fi; exec "$@"`
		out, err := runLauncher(t, env, 2*time.Minute, append([]string{"srun", "-n", "4", "sh", "-c", script, "sh"}, s.args...)...)
		if err == nil || !strings.Contains(out, "lost node b2 (rank 3") {
			t.Errorf("srun: %v\n%s", err, out)
		}
		if _, err := os.Stat(s.out); !os.IsNotExist(err) {
			t.Errorf("output written after a failed run: %v", err)
		}
		noAgentsLeft(t, s)
	})
}
