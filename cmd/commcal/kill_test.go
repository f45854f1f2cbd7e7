package main

import (
	"bytes"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// buildBinary builds commcal into a temporary directory, for tests that need a process to
// signal.
func buildBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "commcal")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// tree reads every file under dir by its relative path.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		files[rel] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func sameTree(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || v != w {
			return false
		}
	}
	return true
}

// leftovers lists what an interrupted run could leave anywhere under dir.
func leftovers(t *testing.T, dir string) []string {
	t.Helper()
	var found []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && (strings.Contains(d.Name(), ".tmp-") || strings.HasSuffix(d.Name(), ".lock") || strings.HasSuffix(d.Name(), ".old")) {
			found = append(found, p)
		}
		return nil
	})
	return found
}

// TestKilledRunLeavesOldOrNew kills "commcal run" with SIGKILL at random moments (seeded) and
// checks after each kill that the output is either absent (no run completed yet) or a
// complete run byte for byte, then that the next run clears every temporary directory. Every
// complete run is the same bytes (SOURCE_DATE_EPOCH pins the time), so "old or new" is "the
// reference".
func TestKilledRunLeavesOldOrNew(t *testing.T) {
	if testing.Short() {
		t.Skip("kills 24 runs of the whole pipeline; not with -short")
	}
	bin := buildBinary(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "run")
	// A run killed while it draws a PDF leaves the font files gonum/plot writes to a temporary
	// directory: TMPDIR keeps them inside the test's own directory.
	tmp := filepath.Join(dir, "tmp")
	if err := os.Mkdir(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "SOURCE_DATE_EPOCH=1795219200", "TMPDIR="+tmp)
	runOnce := func(kill time.Duration) (completed bool) {
		cmd := exec.Command(bin, "run", "--out", out)
		cmd.Env = env
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		if kill > 0 {
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("run failed before the kill: %v\n%s", err, stderr.String())
				}
				return true
			case <-time.After(kill):
				cmd.Process.Signal(syscall.SIGKILL)
				err := <-done
				return err == nil
			}
		}
		if err := <-done; err != nil {
			t.Fatalf("run: %v\n%s", err, stderr.String())
		}
		return true
	}
	start := time.Now()
	runOnce(0)
	full := time.Since(start)
	ref := tree(t, out)
	os.RemoveAll(out)

	rng := rand.New(rand.NewPCG(9, 1))
	completedOnce := false
	const kills = 24
	for i := range kills {
		// Moments over the whole run, a little past its usual end, the last ones packed
		// around the commit.
		at := time.Duration(rng.Float64() * 1.1 * float64(full))
		if i >= kills-6 {
			at = time.Duration((0.85 + 0.2*rng.Float64()) * float64(full))
		}
		completedOnce = runOnce(at) || completedOnce
		if _, err := os.Stat(out); os.IsNotExist(err) {
			if completedOnce {
				t.Fatalf("kill %d at %v: the earlier complete run is gone", i, at)
			}
			continue
		}
		if got := tree(t, out); !sameTree(got, ref) {
			t.Fatalf("kill %d at %v: the output is neither absent nor a complete run (%d files, want %d)", i, at, len(got), len(ref))
		}
		completedOnce = true
	}
	runOnce(0)
	if got := tree(t, out); !sameTree(got, ref) {
		t.Fatal("the run after the kills differs from the reference")
	}
	if left := leftovers(t, dir); len(left) > 0 {
		t.Fatalf("left behind after the kills: %v", left)
	}
	t.Logf("%d kills over a %v run; output always absent or complete", kills, full.Round(time.Millisecond))
}

// lockedBuffer is a buffer a process writes while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestInterruptedRunExits130 sends SIGINT during a run: the run stops with status 130, says
// so on one line, and leaves neither an output nor a temporary directory.
func TestInterruptedRunExits130(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the pipeline in a subprocess; not with -short")
	}
	bin := buildBinary(t)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		dir := t.TempDir()
		out := filepath.Join(dir, "run")
		cmd := exec.Command(bin, "--log-level", "info", "run", "--out", out)
		var stderr lockedBuffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Signal once the ingest stage is over: before this fix, later stages ignored it.
		deadline := time.Now().Add(20 * time.Second)
		for !strings.Contains(stderr.String(), "stage=ingest") && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		cmd.Process.Signal(sig)
		err := cmd.Wait()
		code := cmd.ProcessState.ExitCode()
		if code == 0 {
			t.Logf("%v: the run finished before the signal arrived", sig)
			continue
		}
		if code != exitInterrupted || !strings.Contains(stderr.String(), "interrupted") {
			t.Errorf("%v: exit %d (%v), want %d\n%s", sig, code, err, exitInterrupted, stderr.String())
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("%v: an interrupted run wrote %s", sig, out)
		}
		if left := leftovers(t, dir); len(left) > 0 {
			t.Errorf("%v: left behind: %v", sig, left)
		}
	}
}
