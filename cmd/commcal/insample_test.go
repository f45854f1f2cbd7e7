package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestValidateInSample: --in-sample prints the reach table and writes it into accuracy.json
// beside the held-out accuracy, which it leaves as it is without the flag, and its predictions
// into predictions_in_sample.parquet; thresholds still read the held-out accuracy only.
func TestValidateInSample(t *testing.T) {
	dir := t.TempDir()
	sim := simulated(t, dir)
	code, plain, stderr := runCLI(t, "validate", "--out", filepath.Join(dir, "plain"), sim)
	if code != exitOK {
		t.Fatalf("validate: exit %d\n%s", code, stderr)
	}
	code, stdout, stderr := runCLI(t, "validate", "--in-sample", "--fail-below", "hockney:0.99", "--out", filepath.Join(dir, "val"), sim)
	if code != exitAlarm || !strings.Contains(stderr, "hockney") {
		t.Fatalf("validate --in-sample --fail-below hockney:0.99: exit %d, want %d (the held-out accuracy's alarm)\n%s", code, exitAlarm, stderr)
	}
	if !strings.Contains(stdout, "in-sample reach") || strings.Contains(plain, "in-sample reach") {
		t.Errorf("the reach table is printed with --in-sample only:\n%s", stdout)
	}
	read := func(sub string) map[string]json.RawMessage {
		b, err := os.ReadFile(filepath.Join(dir, sub, "accuracy.json"))
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	with, without := read("val"), read("plain")
	if _, ok := with["in_sample"]; !ok {
		t.Error("accuracy.json has no in_sample with --in-sample")
	}
	if _, ok := without["in_sample"]; ok {
		t.Error("accuracy.json has in_sample without --in-sample")
	}
	if !fileExists(filepath.Join(dir, "val", "predictions_in_sample.parquet")) || fileExists(filepath.Join(dir, "plain", "predictions_in_sample.parquet")) {
		t.Error("predictions_in_sample.parquet is written with --in-sample only")
	}
	delete(with, "in_sample")
	if len(with) != len(without) {
		t.Errorf("accuracy.json has %d members with --in-sample (in_sample left out), %d without", len(with), len(without))
	}
	for k, v := range without {
		if string(with[k]) != string(v) {
			t.Errorf("%s differs with --in-sample: the held-out accuracy must not move", k)
		}
	}
}
