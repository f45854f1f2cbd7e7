package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

func TestVersionCompletionAndQuiet(t *testing.T) {
	code, stdout, _ := runCLI(t, "version", "--json")
	var b buildInfo
	if code != 0 || json.Unmarshal([]byte(stdout), &b) != nil || b.Version == "" || !strings.HasPrefix(b.Go, "go") {
		t.Fatalf("version --json: exit %d, %q", code, stdout)
	}
	if code, stdout, _ := runCLI(t, "--version"); code != 0 || !strings.Contains(stdout, b.Version) {
		t.Errorf("--version: exit %d, %q", code, stdout)
	}
	for shell, want := range map[string]string{"bash": "complete -o bashdefault", "zsh": "compdef _commcal commcal",
		"fish": "complete -c commcal", "man": ".TH commcal 1"} {
		if code, stdout, _ := runCLI(t, "completion", shell); code != 0 || !strings.Contains(stdout, want) {
			t.Errorf("completion %s: exit %d, no %q", shell, code, want)
		}
	}
	if code, _, _ := runCLI(t, "completion", "tcsh"); code != exitBadInput {
		t.Errorf("completion tcsh: exit %d", code)
	}
	// --quiet: nothing on stdout, outputs written, statuses unchanged; JSON logs.
	out := filepath.Join(t.TempDir(), "pred.parquet")
	code, stdout, stderr := runCLI(t, "--quiet", "predict", "--cluster", "testdata/table1.toml", "--parquet", out, "testdata/table1.csv")
	if code != 0 || stdout != "" || stderr != "" || !fileExists(out) {
		t.Errorf("--quiet predict: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if code, _, stderr := runCLI(t, "--quiet", "predict", "--cluster", "nosuch", "testdata/table1.csv"); code != exitBadInput || !strings.Contains(stderr, "nosuch") {
		t.Errorf("--quiet keeps errors: exit %d, %q", code, stderr)
	}
	dir := t.TempDir()
	write(t, filepath.Join(dir, "t.csv"), transfersHeader+goodTransfer)
	code, _, stderr = runCLI(t, "--log-format", "json", "--log-level", "info", "ingest", "--cluster", "ccpe-testbed", "--out", filepath.Join(dir, "ds"), filepath.Join(dir, "t.csv"))
	if code != 0 {
		t.Fatalf("ingest: exit %d: %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	for _, l := range lines {
		var rec map[string]any
		if err := json.Unmarshal([]byte(l), &rec); err != nil || rec["msg"] == nil {
			t.Errorf("log line %q is not a JSON record: %v", l, err)
		}
	}
	if !strings.Contains(stderr, `"msg":"ingest done"`) {
		t.Errorf("no JSON record of the ingest: %q", stderr)
	}
	if code, _, _ := runCLI(t, "--log-format", "xml", "version"); code != exitBadInput {
		t.Errorf("--log-format xml: exit %d", code)
	}
}
