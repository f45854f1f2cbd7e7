package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// quietEnv is an environment that prints nothing.
func quietEnv() env {
	return env{stdout: io.Discard, stderr: io.Discard, log: slog.New(slog.DiscardHandler)}
}

// logEnv is an environment whose output and log go to buf.
func logEnv(buf *bytes.Buffer) env {
	return env{stdout: buf, stderr: buf, log: slog.New(slog.NewTextHandler(buf, nil))}
}

// TestCampaignCatalogueMustFitCluster: a catalogue the cluster cannot hold (three racks asked
// of a two-rack cluster) is bad input naming the file and the design, before --out is claimed
// or anything is built; the built-in catalogue on a cluster too small for it is a usage error
// that says to give a catalogue.
func TestCampaignCatalogueMustFitCluster(t *testing.T) {
	dir := t.TempDir()
	catFile := filepath.Join(dir, "three-racks.toml")
	if err := os.WriteFile(catFile, []byte("random = [ { nodes = 6, d = 1, patterns = 1, sizes = [1048576], racks = 3 } ]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tiny := filepath.Join(dir, "tiny.toml")
	if err := os.WriteFile(tiny, []byte("name = \"tiny\"\nnic_rate_bps = 1e9\n[[rack]]\nname = \"A\"\nnode_prefix = \"a\"\nnode_count = 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		cluster, catalogue string
		want               []string
	}{
		{filepath.Join("..", "..", "data", "tcp", "clusters", "two-rack-1g.toml"), catFile, []string{catFile, "cluster two-rack-1g", "racks", "(random[0])"}},
		{tiny, "", []string{"built-in catalogue does not fit cluster tiny", "give a --catalogue"}},
	} {
		out := filepath.Join(dir, "out")
		_, _, claimed, err := campaignOptions{CatalogueFile: c.catalogue}.start(context.Background(), quietEnv(), c.cluster, outputOptions{Out: out}, 0)
		if claimed != nil {
			claimed.Release()
		}
		if code := exitCode(err); code != exitBadInput {
			t.Errorf("%s: exit %d (%v), want %d", c.cluster, code, err, exitBadInput)
		}
		for _, w := range c.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %v, want it to say %q", c.cluster, err, w)
			}
		}
		if _, serr := os.Stat(out); !os.IsNotExist(serr) {
			t.Errorf("%s: --out %s was created (%v)", c.cluster, out, serr)
		}
	}
}

// A campaign's cost is estimated and logged before anything is claimed, and a campaign whose
// lower bound is above --max-cost is refused (usage, exit 2) naming the flag, before --out is
// created.
func TestCampaignCost(t *testing.T) {
	dir := t.TempDir()
	twoRack := filepath.Join("..", "..", "data", "tcp", "clusters", "two-rack-1g.toml")
	catFile := filepath.Join(dir, "sweep.toml")
	// Two class pairs × two sizes: a repetition of each waits the 30 ms start lead, and 8 MiB
	// take 67.1 ms on a 1 Gbit/s NIC (1 KiB 8.2 µs): 4 × 30 ms + 2 × 67.1 ms + 2 × 8.2 µs =
	// 254.23 ms, 763 ms at three repetitions and 1.271 s at five.
	if err := os.WriteFile(catFile, []byte("sweep = { sizes = [1024, 8388608] }\nrepetitions = { min = 3, max = 5 }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	out := filepath.Join(dir, "out")
	_, _, claimed, err := campaignOptions{CatalogueFile: catFile, MaxCost: time.Hour}.start(context.Background(), logEnv(&log), twoRack, outputOptions{Out: out}, 0)
	if err != nil {
		t.Fatal(err)
	}
	claimed.Release()
	for _, w := range []string{"campaign: 4 measurements; a repetition of each opens 4 transfers and sends 16779264 bytes; at least 763ms at 3 repetitions (1.271s at 5), at 1 × the nominal rates (--max-cost 1h0m0s)\n",
		`msg="campaign cost" measurements=4 transfers_per_rep=4 bytes_per_rep=16779264 at_least=763ms min_reps=3 at_max_reps=1.271s max_reps=5 rate_scale=1 max_cost=1h0m0s`} {
		if !strings.Contains(log.String(), w) {
			t.Errorf("log %q does not say %q", log.String(), w)
		}
	}
	os.RemoveAll(out)
	for _, c := range []struct {
		o    campaignOptions
		want string
	}{
		{campaignOptions{CatalogueFile: catFile, MaxCost: 500 * time.Millisecond},
			"catalogue " + catFile + " on cluster two-rack-1g: 4 measurements; a repetition of each opens 4 transfers and sends 16779264 bytes; at least 763ms at 3 repetitions (1.271s at 5); that is above --max-cost 500ms: give a larger --max-cost (COMMCAL_MAX_COST)"},
		{campaignOptions{MaxCost: time.Minute, Scale: 0.1}, "the built-in catalogue on cluster two-rack-1g: 329 measurements; a repetition of each opens 1654 transfers and sends 1029922979 bytes; at least 2m30s at 3 repetitions (8m22s at 10); that is above --max-cost 1m0s"},
	} {
		_, _, claimed, err := c.o.start(context.Background(), quietEnv(), twoRack, outputOptions{Out: out}, 0)
		if claimed != nil {
			claimed.Release()
		}
		if code := exitCode(err); code != exitBadInput || err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("exit %d (%v), want %d saying %q", code, err, exitBadInput, c.want)
		}
		if _, serr := os.Stat(out); !os.IsNotExist(serr) {
			t.Errorf("--out %s was created (%v)", out, serr)
		}
	}
}

// Rank 0 of commcal agent estimates the cost before it listens, and refuses above --max-cost
// (COMMCAL_MAX_COST) with exit 2, on one line that says the cost, and nothing on stdout.
func TestAgentCampaignCost(t *testing.T) {
	dir := t.TempDir()
	catFile := filepath.Join(dir, "big.toml")
	if err := os.WriteFile(catFile, []byte("sweep = { sizes = [4294967296] }\nrepetitions = { min = 10, max = 20 }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("COMMCAL_MAX_COST", "5m")
	code, stdout, stderr := runCLI(t, "agent", "--rank", "0", "--size", "10", "--cluster", filepath.Join("..", "..", "data", "tcp", "clusters", "two-rack-1g.toml"),
		"--rendezvous", dir, "--catalogue", catFile, "--out", filepath.Join(dir, "out"))
	// 2 × 4 GiB at 1 Gbit/s, 68.7 s, and two start leads: 68.78 s a repetition.
	if code != exitBadInput || stdout != "" ||
		strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "at least 11m28s at 10 repetitions (22m56s at 20); that is above --max-cost 5m0s") {
		t.Errorf("exit %d, stdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
}

// The campaign flags are bounded: a usage error names the flag and its range.
func TestCampaignFlagBounds(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--max-reps", "100000000"}, "agent: --max-reps 100000000: want 0 (the catalogue's) to 1000"},
		{[]string{"--max-reps", "-1"}, "agent: --max-reps -1: want 0 (the catalogue's) to 1000"},
		{[]string{"--socket-buffer", "-5"}, "agent: --socket-buffer -5: want 0 (autotuning) to 1073741824 bytes"},
		{[]string{"--socket-buffer", "10000000000"}, "agent: --socket-buffer 10000000000: want 0 (autotuning) to 1073741824 bytes"},
		{[]string{"--max-cost", "-1h"}, "agent: --max-cost -1h0m0s: want a positive duration"},
	} {
		code, _, stderr := runCLI(t, append(append([]string{"agent", "--rank", "0", "--size", "2"}, c.args...), "--rendezvous", t.TempDir())...)
		if code != exitBadInput || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, %q; want %d saying %q", c.args, code, stderr, exitBadInput, c.want)
		}
	}
}
