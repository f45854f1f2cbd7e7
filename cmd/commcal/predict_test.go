package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPredictManyPatterns predicts patterns from a CSV with a pattern column, a JSON file
// of patterns, a directory and a generated workload in one call, with chosen models; the
// same patterns predicted one by one give the same times (the worker pool keeps the order).
func TestPredictManyPatterns(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "many.csv"), "pattern,src,dst,bytes\nb,X1,Y2,1e7\na,X1,X2,2e7\nb,X2,Y3,2e7\nb,X3,Y1,2e7\nb,Y1,Y3,2e7\n")
	write(t, filepath.Join(dir, "more", "p.json"), `{"patterns": [{"id": "j1", "flows": [{"src": "X1", "dst": "Y2", "bytes": 1e7}]},
		{"id": "j2", "flows": [{"src": "Y2", "dst": "X1", "bytes": 5e6}, {"src": "X1", "dst": "Y2", "bytes": 5e6}]}]}`)
	args := []string{"predict", "--cluster", "ccpe-testbed", "--models", "asymmetric,maxmin", "--json",
		"--workload", "random:nodes=10,d=2,count=20,seed=3", filepath.Join(dir, "many.csv"), filepath.Join(dir, "more")}
	code, stdout, stderr := runCLI(t, args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var doc struct {
		Format    string
		Transfers []struct {
			Pattern string
			FlowID  int64 `json:"flow_id"`
			Model   string
			Seconds float64
		}
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Format != "commcal-predict/1" {
		t.Errorf("format %q", doc.Format)
	}
	rows := doc.Transfers
	seen := map[string]bool{}
	for _, r := range rows {
		seen[r.Pattern] = true
		if r.Model != "asymmetric" && r.Model != "maxmin" {
			t.Fatalf("model %s not asked for", r.Model)
		}
	}
	if !seen["a"] || !seen["b"] || !seen["j1"] || !seen["j2"] || len(seen) != 24 {
		t.Fatalf("patterns predicted: %v", seen)
	}
	// Table I's pattern, alone: pattern b of many.csv is e1, e3, e4, e5 of Table I.
	write(t, filepath.Join(dir, "b.csv"), "src,dst,bytes\nX1,Y2,1e7\nX2,Y3,2e7\nX3,Y1,2e7\nY1,Y3,2e7\n")
	code, stdout, _ = runCLI(t, "predict", "--cluster", "ccpe-testbed", "--models", "asymmetric,maxmin", "--json", filepath.Join(dir, "b.csv"))
	var aloneDoc struct {
		Transfers []struct {
			Model   string
			Seconds float64
		}
	}
	err := json.Unmarshal([]byte(stdout), &aloneDoc)
	alone := aloneDoc.Transfers
	if code != 0 || err != nil || len(alone) != 8 {
		t.Fatalf("alone: exit %d, %d rows", code, len(alone))
	}
	var inMany []float64
	for _, r := range rows {
		if r.Pattern == "b" {
			inMany = append(inMany, r.Seconds)
		}
	}
	for i := range alone {
		if alone[i].Seconds != inMany[i] {
			t.Fatalf("pattern b's transfer %d: %g alone, %g among others", i, alone[i].Seconds, inMany[i])
		}
	}
	// --summary: a line per pattern and model.
	code, stdout, _ = runCLI(t, "predict", "--cluster", "ccpe-testbed", "--models", "maxmin", "--summary", "--workload", "all-to-all:1e6")
	if code != 0 || !strings.Contains(stdout, "makespan (s)") || strings.Count(stdout, "\n") != 2 || !strings.Contains(stdout, "all-to-all  870") {
		t.Errorf("all-to-all summary: exit %d\n%s", code, stdout)
	}
}

// TestPredictWithCalibration predicts with a run's calibration (its parameters and penalty
// table): penalty-table then differs from penalty, as the table says; on another cluster,
// the calibration is carried class by class.
func TestPredictWithCalibration(t *testing.T) {
	dir := t.TempDir()
	sim := simulated(t, dir, "--reps", "3")
	run := filepath.Join(dir, "run")
	if code, _, stderr := runCLI(t, "run", "--out", run, sim); code != 0 {
		t.Fatal(stderr)
	}
	cal := filepath.Join(run, "calibration.json")
	write(t, filepath.Join(dir, "p.csv"), "src,dst,bytes\nX1,Y1,1e7\nX2,Y1,1e7\nX3,X1,1e7\n")
	code, stdout, stderr := runCLI(t, "predict", "--cluster", "ccpe-testbed", "--calibration", cal, "--summary", filepath.Join(dir, "p.csv"))
	if code != 0 || !strings.Contains(stdout, "penalty-table") {
		t.Fatalf("predict --calibration: exit %d: %s\n%s", code, stderr, stdout)
	}
	// On graphene the NIC parameters are carried; the cable's capacity is not carried to
	// uplinks under a core router.
	write(t, filepath.Join(dir, "g.csv"), "src,dst,bytes\ngraphene-1,graphene-40,1e7\ngraphene-2,graphene-3,1e7\n")
	code, _, stderr = runCLI(t, "predict", "--cluster", "graphene", "--calibration", cal, filepath.Join(dir, "g.csv"))
	if code != 0 || !strings.Contains(stderr, "the calibration of cluster ccpe-testbed applied to cluster graphene") ||
		!strings.Contains(stderr, "fitted for a backbone of 10 Gbit/s; the cluster has uplinks of 10 Gbit/s") {
		t.Errorf("another cluster's calibration: exit %d: %s", code, stderr)
	}
	for _, args := range [][]string{
		{"--models", "nosuch"},
		{"--calibration", cal, "--params", cal},
		{"--workload", "bcast:1"},
	} {
		full := append(append([]string{"predict", "--cluster", "ccpe-testbed"}, args...), filepath.Join(dir, "p.csv"))
		if code, _, _ := runCLI(t, full...); code != exitBadInput {
			t.Errorf("predict %v: exit %d, want %d", args, code, exitBadInput)
		}
	}
	if code, _, _ := runCLI(t, "predict", "--cluster", "ccpe-testbed"); code != exitBadInput {
		t.Errorf("predict without patterns: exit %d", code)
	}
	if _, err := os.Stat(filepath.Join(dir, "p.csv")); err != nil {
		t.Fatal(err)
	}
}
