package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/commcal/commcal/internal/atomicio"
)

// TestExitStatusGolden runs one invocation of each kind of outcome of every command and
// compares the exit status, stdout and stderr with testdata/exit_status.golden (paths under
// the test's directory shown as $DIR), so that a change of a status or a message shows in
// review.
func TestExitStatusGolden(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "1795219200")
	dir := t.TempDir()
	sim := simulated(t, dir, "--reps", "3")
	run := filepath.Join(dir, "run")
	if code, _, stderr := runCLI(t, "run", "--out", run, sim); code != 0 {
		t.Fatal(stderr)
	}
	write(t, filepath.Join(dir, "mine", "thesis.tex"), "x")
	write(t, filepath.Join(dir, "bad.csv"), transfersHeader+"ccpe-testbed,p2p_sweep,p1,0,0,X1,Y1,1000,0.5,0.4\n")
	busy := filepath.Join(dir, "busy")
	held, err := atomicio.Claim(context.Background(), atomicio.Target{Path: busy})
	if err != nil {
		t.Fatal(err)
	}
	defer held.Release()
	cases := []struct {
		args       []string
		showStdout bool
	}{
		{[]string{"predict", "--cluster", "testdata/table1.toml", "testdata/table1.csv"}, true},
		{[]string{"predict", "--cluster", "testdata/table1.toml", "--contra-factor", "2", "testdata/table1.csv"}, true},
		{[]string{"ingest", "--cluster", "ccpe-testbed", "--out", "$DIR/ds", "$DIR/bad.csv"}, true},
		{[]string{"ingest", "--cluster", "ccpe-testbed", "--out", "$DIR/sim", "$DIR/bad.csv"}, true},
		{[]string{"ingest", "--mpi-library", "intel", "--out", "$DIR/ds", "$DIR/sim"}, true},
		{[]string{"simulate", "--cluster", "ccpe-testbed", "--out", "$DIR/busy"}, true},
		{[]string{"estimate", "--out", "$DIR/mine", "$DIR/sim"}, true},
		{[]string{"validate", "--held-out", "static_sync", "--out", "$DIR/val", "$DIR/sim"}, true},
		{[]string{"validate", "--fail-below", "all:1", "--out", "$DIR/val", "$DIR/sim"}, false},
		{[]string{"plot", "$DIR/mine"}, true},
		{[]string{"compare", "--out", "$DIR/cmp", "$DIR/run", "$DIR/sim"}, true},
		{[]string{"compare", "--fail-on-drift", "--out", "$DIR/cmp", "$DIR/run", "$DIR/run"}, false},
		{[]string{"run", "--out", "$DIR/sim", "$DIR/sim"}, true},
		{[]string{"measure", "--cluster", "ccpe-testbed", "--scale", "2", "--out", "$DIR/m"}, true},
		{[]string{"measure", "--cluster", "ccpe-testbed", "--host-rate", "2", "--out", "$DIR/m"}, true},
		{[]string{"frobnicate"}, true},
	}
	var b strings.Builder
	for _, tc := range cases {
		args := make([]string, len(tc.args))
		for i, a := range tc.args {
			args[i] = strings.ReplaceAll(a, "$DIR", dir)
		}
		code, stdout, stderr := runCLI(t, args...)
		if !tc.showStdout {
			stdout = fmt.Sprintf("(%d lines)\n", strings.Count(stdout, "\n"))
		}
		fmt.Fprintf(&b, "$ commcal %s\nexit %d\n--- stdout\n%s--- stderr\n%s\n", strings.Join(tc.args, " "), code,
			strings.ReplaceAll(stdout, dir, "$DIR"), strings.ReplaceAll(stderr, dir, "$DIR"))
	}
	golden(t, "exit_status.golden", b.String())
	if _, err := os.Stat(filepath.Join(dir, "val")); err != nil {
		t.Error("an accuracy alarm kept validate from writing its output")
	}
}
