package main

import (
	"encoding/json"
	"math"
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
	// A collective with the calibration: its rounds end with their expected slowest transfer
	// under the calibration's transfer spread, later than without (bare: the same parameters,
	// the spread left out), on the calibration's cluster and on another one.
	raw, err := os.ReadFile(cal)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	if _, ok := doc["transfer_spread"]; !ok {
		t.Fatal("calibration.json has no transfer_spread")
	}
	delete(doc, "transfer_spread")
	bare := filepath.Join(dir, "bare-calibration.json")
	if b, err := json.Marshal(doc); err != nil {
		t.Fatal(err)
	} else {
		write(t, bare, string(b))
	}
	for _, cl := range []string{"ccpe-testbed", "graphene"} {
		collective := func(calibration string) collectiveRow {
			t.Helper()
			code, stdout, stderr := runCLI(t, "predict", "--cluster", cl, "--calibration", calibration, "--models", "ackpath-alpha", "--json",
				"--collective", "alltoall:1e6:ranks=8:alg=pairwise")
			var got struct {
				Collectives []collectiveRow `json:"collectives"`
			}
			if code != 0 || json.Unmarshal([]byte(stdout), &got) != nil || len(got.Collectives) != 1 {
				t.Fatalf("predict --collective on %s: exit %d: %s\n%s", cl, code, stderr, stdout)
			}
			return got.Collectives[0]
		}
		with := collective(cal)
		without := collective(bare)
		if !with.ExpectedMax || without.ExpectedMax || !(with.Seconds > without.Seconds) {
			t.Errorf("%s: with the spread %+v, without %+v; want the expected maximum, and later", cl, with, without)
		}
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

// A collective is predicted as its schedule's rounds: the rule names the library, the rounds
// are the algorithm's, and the time is the sum of the rounds' (the JSON holds each round).
func TestPredictCollectives(t *testing.T) {
	code, out, errOut := runCLI(t, "predict", "--cluster", "../../pipeline/sample/lab.toml", "--models", "maxmin",
		"--collective", "alltoall:4e6:ranks=4:alg=auto:mpich", "--collective", "bcast:1e6:alg=binomial")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"pairwise-xor  3       maxmin", "binomial      4       maxmin", "MPICH 4.3.2", "bcast:1e6:alg=binomial: named by the user"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	code, out, errOut = runCLI(t, "predict", "--cluster", "../../pipeline/sample/lab.toml", "--models", "maxmin", "--json",
		"--collective", "allgather:1e6:alg=ring")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var got struct {
		Collectives []collectiveRow `json:"collectives"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Collectives) != 1 || len(got.Collectives[0].Rounds) != 9 || got.Collectives[0].Ranks != 10 {
		t.Fatalf("collectives %+v, want a ring allgather of 9 rounds among 10 ranks", got.Collectives)
	}
	var sum float64
	for _, r := range got.Collectives[0].Rounds {
		sum += r
	}
	if c := got.Collectives[0]; !(c.Seconds > 0) || math.Abs(sum-c.Seconds) > 1e-12*c.Seconds {
		t.Errorf("time %g s, rounds sum to %g s", c.Seconds, sum)
	}
	for _, bad := range [][]string{{"--collective", "alltoall:4e6:alg=nope"}, {"--collective", "alltoall:4e6:alg=linear", "--parquet", filepath.Join(t.TempDir(), "p.parquet")}} {
		if code, _, errOut := runCLI(t, append([]string{"predict", "--cluster", "../../pipeline/sample/lab.toml"}, bad...)...); code != 2 || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%v: exit %d, %q; want 2 and one line", bad, code, errOut)
		}
	}
}
