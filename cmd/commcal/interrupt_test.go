package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// longPrediction writes, into dir, a cluster of two racks of 64 nodes and a pattern of 10⁵
// random transfers (seeded) of 1…1000 MB between them, which the default model takes some 20 s
// of CPU to predict (some 48,000 steps: transfers of distinct sizes finish in distinct
// steps). It returns the two files.
func longPrediction(t *testing.T, dir string) (clusterFile, patternFile string) {
	t.Helper()
	var desc strings.Builder
	desc.WriteString("name = \"big\"\nnic_rate_bps = 1e9\n[backbone]\ntopology = \"cable\"\nkind = \"optical\"\nrate_bps = 10e9\n")
	var nodes []string
	for _, rack := range []string{"a", "b"} {
		fmt.Fprintf(&desc, "[[rack]]\nname = %q\nnode_prefix = %q\nnode_first = 1\nnode_count = 64\n", strings.ToUpper(rack), rack)
		for i := 1; i <= 64; i++ {
			nodes = append(nodes, fmt.Sprintf("%s%d", rack, i))
		}
	}
	clusterFile = filepath.Join(dir, "big.toml")
	if err := os.WriteFile(clusterFile, []byte(desc.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(36, 1))
	var b strings.Builder
	b.WriteString("src,dst,bytes\n")
	for range 100_000 {
		s := rng.IntN(len(nodes))
		d := (s + 1 + rng.IntN(len(nodes)-1)) % len(nodes)
		fmt.Fprintf(&b, "%s,%s,%d\n", nodes[s], nodes[d], (1+rng.IntN(1000))*1_000_000)
	}
	patternFile = filepath.Join(dir, "big.csv")
	if err := os.WriteFile(patternFile, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return clusterFile, patternFile
}

// TestInterruptedPredictExits130 signals `commcal predict` of 10⁵ transfers under the default
// model a second after it starts, in the middle of the step loop: it exits 130 within a
// second of the signal, saying so, and with --parquet leaves neither the file nor a temporary
// one.
func TestInterruptedPredictExits130(t *testing.T) {
	if testing.Short() {
		t.Skip("predicts 10⁵ transfers in a subprocess; not with -short")
	}
	bin := buildBinary(t)
	clusterFile, patternFile := longPrediction(t, t.TempDir())
	for _, tc := range []struct {
		sig     syscall.Signal
		parquet bool
	}{{syscall.SIGINT, false}, {syscall.SIGTERM, false}, {syscall.SIGINT, true}, {syscall.SIGTERM, true}} {
		name := fmt.Sprintf("%v parquet=%v", tc.sig, tc.parquet)
		dir := t.TempDir()
		out := filepath.Join(dir, "predictions.parquet")
		args := []string{"predict", "--cluster", clusterFile, "--models", "ackpath-alpha", "--summary"}
		if tc.parquet {
			args = append(args, "--parquet", out)
		}
		cmd := exec.Command(bin, append(args, patternFile)...)
		var stderr lockedBuffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second)
		signalled := time.Now()
		if err := cmd.Process.Signal(tc.sig); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		err := cmd.Wait()
		lag := time.Since(signalled)
		code := cmd.ProcessState.ExitCode()
		if code == exitOK && lag < time.Second {
			t.Fatalf("%s: the prediction ended (exit 0) as it was signalled: the test needs a longer one", name)
		}
		if code != exitInterrupted || !strings.Contains(stderr.String(), "commcal: interrupted; nothing was left half written") {
			t.Errorf("%s: exit %d (%v), want %d and the interruption's message\n%s", name, code, err, exitInterrupted, stderr.String())
		}
		if lag > time.Second {
			t.Errorf("%s: exited %v after the signal, want at most 1s", name, lag)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("%s: an interrupted prediction wrote %s", name, out)
		}
		if left := leftovers(t, dir); len(left) > 0 {
			t.Errorf("%s: left behind: %v", name, left)
		}
		t.Logf("%s: exit %d %v after the signal", name, code, lag.Round(time.Millisecond))
	}
}
