package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/commcal/commcal/datasets"
	"github.com/commcal/commcal/experiments"
)

// withoutBidirectional writes tonight's logs of a simulated dataset as a nightly job would
// get them when the bidirectional experiments did not run: the transfers as CSV without
// bidir_* rows, and every other table's Parquet file as it is.
func withoutBidirectional(t *testing.T, sim, dir string) []string {
	t.Helper()
	ds, err := datasets.Open(sim)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := datasets.ReadAll[datasets.Transfer](context.Background(), ds, datasets.TransfersTable)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString(transfersHeader)
	kept := 0
	for _, r := range rows {
		if r.Experiment == experiments.BidirNIC || r.Experiment == experiments.BidirBackbone {
			continue
		}
		kept++
		fmt.Fprintf(&b, "%s,%s,%s,%d,%d,%s,%s,%d,%v,%v\n", r.Cluster, r.Experiment, r.PatternID, r.Rep, r.FlowID, r.Src, r.Dst, r.Bytes, r.TStart, r.TEnd)
	}
	if kept == len(rows) || kept == 0 {
		t.Fatalf("the simulated dataset has %d transfers, %d of them bidirectional", len(rows), len(rows)-kept)
	}
	csv := filepath.Join(dir, "transfers.csv")
	if err := os.WriteFile(csv, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	inputs := []string{csv}
	for _, tab := range datasets.Tables[1:] {
		if p := filepath.Join(sim, tab.File()); fileExists(p) {
			inputs = append(inputs, p)
		}
	}
	return inputs
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// TestAlarmWhenExperimentsVanish: last night's run had every calibration experiment,
// tonight's data lacks the bidirectional ones. The asymmetry parameter vanishes and its
// estimator is newly skipped; run --previous --fail-on-drift and compare --fail-on-drift
// both exit with the alarm status and name it, where compare used to exit 0.
func TestAlarmWhenExperimentsVanish(t *testing.T) {
	dir := t.TempDir()
	sim := simulated(t, dir, "--reps", "4")
	last := filepath.Join(dir, "last")
	if code, _, stderr := runCLI(t, "run", "--out", last, sim); code != 0 {
		t.Fatal(stderr)
	}
	tonight := withoutBidirectional(t, sim, dir)
	out := filepath.Join(dir, "tonight")
	args := append([]string{"run", "--cluster", "ccpe-testbed", "--previous", last, "--fail-on-drift", "--out", out}, tonight...)
	code, _, stderr := runCLI(t, args...)
	if code != exitAlarm || !strings.Contains(stderr, "vanished: contra/phi") || !strings.Contains(stderr, "newly skipped: contra-factor") {
		t.Fatalf("run --previous --fail-on-drift: exit %d, want %d naming contra/phi\n%s", code, exitAlarm, stderr)
	}
	if strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
		t.Errorf("the alarm takes %d lines", strings.Count(stderr, "\n"))
	}
	if !fileExists(filepath.Join(out, "report.html")) {
		t.Error("an alarm must not keep the run from being written")
	}
	code, stdout, stderr := runCLI(t, "compare", "--fail-on-drift", "--out", filepath.Join(dir, "cmp"), last, out)
	if code != exitAlarm || !strings.Contains(stderr, "vanished: contra/phi") || !strings.Contains(stdout, "VANISHED") {
		t.Fatalf("compare --fail-on-drift: exit %d, want %d naming contra/phi\n%s\n%s", code, exitAlarm, stderr, stdout)
	}
	// Without --fail-on-drift the drift is reported and the exit status is 0.
	code, _, stderr = runCLI(t, "compare", "--out", filepath.Join(dir, "cmp"), last, out)
	if code != exitOK || !strings.Contains(stderr, "vanished: contra/phi") {
		t.Errorf("compare: exit %d\n%s", code, stderr)
	}
	// An accuracy threshold on tonight's run.
	code, _, stderr = runCLI(t, "compare", "--fail-above-error", "asymmetric:0.0001", "--out", filepath.Join(dir, "cmp"), last, out)
	if code != exitAlarm || !strings.Contains(stderr, "asymmetric: mean |ε|") {
		t.Errorf("compare --fail-above-error: exit %d\n%s", code, stderr)
	}
	code, _, stderr = runCLI(t, "validate", "--fail-below", "all:1", "--out", filepath.Join(dir, "val"), sim)
	if code != exitAlarm || !strings.Contains(stderr, "accuracy alarm") {
		t.Errorf("validate --fail-below all:1: exit %d\n%s", code, stderr)
	}
	if code, _, _ := runCLI(t, "validate", "--fail-below", "nosuchmodel:0.5", "--out", filepath.Join(dir, "val2"), sim); code != exitBadInput || fileExists(filepath.Join(dir, "val2")) {
		t.Errorf("validate --fail-below with an unknown model: exit %d", code)
	}
}
