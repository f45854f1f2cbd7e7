package main

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/commcal/commcal/contention"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		os.MkdirAll("testdata", 0o755)
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s (run go test -update if the change is intended):\n%s", path, got)
	}
}

func TestRunSampleGolden(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "1795219200")
	out := filepath.Join(t.TempDir(), "run")
	code, stdout, stderr := runCLI(t, "run", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	golden(t, "run.golden", strings.ReplaceAll(stdout, out, "RUN_DIR"))

	code, stdout, _ = runCLI(t, "run", "--json", "--out", out)
	var s struct {
		Summary struct {
			Cluster     string
			Experiments []struct{ Measurements int }
		}
		Accuracy struct{ Settings []struct{ Setting string } }
	}
	if code != 0 || json.Unmarshal([]byte(stdout), &s) != nil || s.Summary.Cluster != "lab" || len(s.Summary.Experiments) < 7 ||
		len(s.Accuracy.Settings) != 5 { // N4 and N10 × d 1, 2, and N10-d3
		t.Errorf("run --json: exit %d, %q", code, stdout[:min(len(stdout), 200)])
	}
}

func TestSimulateThenIngestGolden(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "1795219200")
	wd, _ := os.Getwd()
	dir := t.TempDir()
	t.Chdir(dir) // relative paths keep the golden files free of temporary names
	sim := "sim"
	code, stdout, stderr := runCLI(t, "simulate", "--cluster", "ccpe-testbed", "--seed", "5", "--reps", "3", "--out", sim)
	if code != 0 {
		t.Fatalf("simulate: %d %s", code, stderr)
	}
	ds := "ds"
	code, stdout2, stderr := runCLI(t, "ingest", "--out", ds, sim) // the cluster comes from the dataset
	if code != 0 {
		t.Fatalf("ingest: %d %s", code, stderr)
	}
	manifest, _ := os.ReadFile(filepath.Join(ds, "manifest.json"))
	t.Chdir(wd)
	golden(t, "simulate_ingest.golden", stdout+"\n"+stdout2)
	golden(t, "manifest.golden.json", string(manifest))
}

func TestValidateCommand(t *testing.T) {
	dir := t.TempDir()
	sim := simulated(t, dir, "--reps", "3")
	out := filepath.Join(dir, "val")
	code, stdout, stderr := runCLI(t, "validate", "--out", out, sim)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"N30-d3", "asymmetric-fitted", "overall", "hockney"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("table lacks %q:\n%s", want, stdout)
		}
	}
	for _, f := range []string{"predictions.parquet", "accuracy.json"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
	// Scoring a calibration experiment is refused.
	if code, _, stderr := runCLI(t, "validate", "--held-out", "fair_intra", "--out", out, sim); code != exitBadInput || !strings.Contains(stderr, "calibration experiment") {
		t.Errorf("held-out fair_intra: exit %d, %s", code, stderr)
	}
	if code, _, _ := runCLI(t, "validate", "--contra-factor", "2", "--out", out, sim); code != exitBadInput {
		t.Errorf("contra-factor 2: exit %d", code)
	}
}

func TestPredictTableI(t *testing.T) {
	dir := t.TempDir()
	pq := filepath.Join(dir, "p.parquet")
	code, stdout, stderr := runCLI(t, "predict", "--cluster", "testdata/table1.toml", "--efficiency", "1", "--parquet", pq, "testdata/table1.csv")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	golden(t, "predict_table1.golden", stdout)
	if _, err := os.Stat(pq); err != nil {
		t.Error(err)
	}
	code, stdout, _ = runCLI(t, "predict", "--cluster", "testdata/table1.toml", "--efficiency", "1", "--json", "testdata/table1.csv")
	var doc struct {
		Transfers []struct {
			Model   string
			Seconds float64
		}
	}
	err := json.Unmarshal([]byte(stdout), &doc)
	rows := doc.Transfers
	if code != 0 || err != nil || len(rows) != 5*len(contention.Models()) || rows[2].Model != "asymmetric" {
		t.Fatalf("predict --json: exit %d, %d rows", code, len(rows))
	}
	// Table I: e3 finishes at 0.4255 s (printed 0.425).
	if s := rows[2].Seconds; s < 0.4255 || s > 0.4256 {
		t.Errorf("e3 under asymmetric: %g s", s)
	}
}

func TestEstimateCommand(t *testing.T) {
	dir := t.TempDir()
	sim := simulated(t, dir, "--reps", "5")
	out := filepath.Join(dir, "calib")
	code, stdout, stderr := runCLI(t, "estimate", "--weighted", "--out", out, sim)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"hockney intra-rack α", "fair_inter capacity", "asymmetric-fitted φ", "lmo", "thresholds", "L a", "penalty table"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("estimate output lacks %q:\n%s", want, stdout)
		}
	}
	for _, f := range []string{"calibration.json", "lmo_nodes.parquet", "lmo_links.parquet"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
	// validate with that calibration file, and the calibration read back intact.
	val := filepath.Join(dir, "val")
	if code, _, stderr := runCLI(t, "validate", "--calibration", filepath.Join(out, "calibration.json"), "--out", val, sim); code != 0 {
		t.Fatalf("validate --calibration: exit %d: %s", code, stderr)
	}
	// A dataset without calibration experiments: every estimator skipped, with reasons.
	empty := filepath.Join(dir, "empty.csv")
	os.WriteFile(empty, []byte(transfersHeader+goodTransfer), 0o644)
	ds := filepath.Join(dir, "ds")
	if code, _, stderr := runCLI(t, "ingest", "--cluster", "ccpe-testbed", "--out", ds, empty); code != 0 {
		t.Fatal(stderr)
	}
	code, stdout, _ = runCLI(t, "estimate", "--out", filepath.Join(dir, "c2"), ds)
	if code != 0 || !strings.Contains(stdout, "skipped lmo") || !strings.Contains(stdout, "skipped hockney") {
		t.Errorf("estimate on a dataset without calibration data: exit %d\n%s", code, stdout)
	}
}

func TestCompareCommand(t *testing.T) {
	dir := t.TempDir()
	run := filepath.Join(dir, "run")
	if code, _, stderr := runCLI(t, "run", "--out", run); code != 0 {
		t.Fatal(stderr)
	}
	// A run against itself: nothing drifts, even with --fail-on-drift.
	code, stdout, stderr := runCLI(t, "compare", "--fail-on-drift", "--out", filepath.Join(dir, "cmp"), run, run)
	if code != exitOK || !strings.Contains(stdout, "hockney/intra-rack/alpha_s") || strings.Contains(stdout, "DRIFT") {
		t.Errorf("self-comparison: exit %d, %s\n%s", code, stderr, stdout)
	}
	for _, f := range []string{"compare.json", "compare.html", "errors_asymmetric.svg"} {
		if _, err := os.Stat(filepath.Join(dir, "cmp", f)); err != nil {
			t.Error(err)
		}
	}
	// Against a run of another cluster: parameters drift, and --fail-on-drift says so with the alarm status.
	sim := simulated(t, dir, "--reps", "4")
	other := filepath.Join(dir, "run2")
	if code, _, stderr := runCLI(t, "run", "--out", other, sim); code != 0 {
		t.Fatal(stderr)
	}
	code, stdout, stderr = runCLI(t, "compare", "--fail-on-drift", "--out", filepath.Join(dir, "cmp3"), run, other)
	if code != exitAlarm || !strings.Contains(stdout, "DRIFT") || !strings.Contains(stderr, "drifted") {
		t.Errorf("drifting comparison: exit %d, stderr %s", code, stderr)
	}
	// An unknown directory is bad usage.
	if code, _, _ := runCLI(t, "compare", "--out", filepath.Join(dir, "cmp2"), run, dir); code != exitBadInput {
		t.Errorf("compare with a non-run directory: exit %d", code)
	}
}

// TestMeasureThenRun measures a few patterns on an emulated 2×2 cluster and runs the whole
// pipeline on them (root only).
func TestMeasureThenRun(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("skipped: commcal measure needs root")
	}
	dir := t.TempDir()
	desc := filepath.Join(dir, "lab.toml")
	os.WriteFile(desc, []byte("name = \"mini\"\nnic_rate_bps = 1e9\n[backbone]\ntopology = \"cable\"\nkind = \"optical\"\nrate_bps = 10e9\n"+
		"[[rack]]\nname = \"A\"\nnodes = [\"a1\", \"a2\"]\n[[rack]]\nname = \"B\"\nnodes = [\"b1\", \"b2\"]\n"), 0o644)
	ds := filepath.Join(dir, "measured")
	code, stdout, stderr := runCLI(t, "measure", "--quick", "--max-reps", "3", "--cluster", desc, "--out", ds)
	if code != 0 || !strings.Contains(stdout, "congestion control \"cubic\"") {
		t.Fatalf("measure: exit %d: %s\n%s", code, stderr, stdout)
	}
	if code, stdout, stderr = runCLI(t, "run", "--out", filepath.Join(dir, "run"), ds); code != 0 || !strings.Contains(stdout, "asymmetric") {
		t.Fatalf("run on measured data: exit %d: %s", code, stderr)
	}
}
