package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// indexEntry is a campaign index's entry for a dataset campaigns/a/NAME beside it.
func indexEntry(name string) string {
	return `[[campaign]]
name = "` + name + `"
path = "campaigns/a/` + name + `"
shape = "a"
cluster = "clusters/a.toml"
catalogue = "catalogues/catalogue.toml"
seed = 1
role = "development"
round = 1
measured = "2026-11-24"
use = "a test"
`
}

// TestLeaderboardIndex: --index puts the index's datasets, in its order and relative to the
// index's directory, before the DATASET arguments; a missing index is bad input, and without
// --index a DATASET is needed.
func TestLeaderboardIndex(t *testing.T) {
	dir := t.TempDir()
	index := filepath.Join(dir, "campaigns.toml")
	write(t, index, indexEntry("b-seed2")+indexEntry("a-seed1"))
	got, err := leaderboardDatasets(index, []string{"runs/x/dataset"})
	want := []string{filepath.Join(dir, "campaigns", "a", "b-seed2"), filepath.Join(dir, "campaigns", "a", "a-seed1"), "runs/x/dataset"}
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("datasets %q (%v), want %q", got, err, want)
	}
	none := filepath.Join(dir, "none.toml")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"leaderboard", "--index", none}, none + ": campaigns: no such file"},
		{[]string{"leaderboard", "--markdown"}, "missing DATASET..."},
	} {
		if code, _, stderr := runCLI(t, c.args...); code != exitBadInput || !strings.Contains(stderr, c.want) {
			t.Errorf("%q: exit %d, %s; want %d saying %q", c.args, code, stderr, exitBadInput, c.want)
		}
	}
}

// The same dataset given twice — by another spelling of its path, a symbolic link, or as an
// index entry and an argument — is a usage error naming both, before any dataset is scored:
// it would count twice.
func TestLeaderboardDatasetTwice(t *testing.T) {
	dir := t.TempDir()
	ds := filepath.Join(dir, "campaigns", "a", "a-seed1")
	if err := os.MkdirAll(ds, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(ds, link); err != nil {
		t.Fatal(err)
	}
	index := filepath.Join(dir, "campaigns.toml")
	write(t, index, indexEntry("a-seed1"))
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"leaderboard", ds, ds + "/"}, `leaderboard: dataset 2, "` + ds + `/", is dataset 1, "` + ds + `", again: each dataset counts once`},
		{[]string{"leaderboard", ds, filepath.Join(ds, "..", "a-seed1")}, "leaderboard: dataset 2, "},
		{[]string{"leaderboard", link, ds}, `dataset 2, "` + ds + `", is dataset 1, "` + link + `", again`},
		{[]string{"leaderboard", "--index", index, link}, `dataset 2, "` + link + `", is dataset 1, "` + ds + `", again`},
	} {
		code, stdout, stderr := runCLI(t, c.args...)
		if code != exitBadInput || stdout != "" || !strings.Contains(stderr, c.want) {
			t.Errorf("%q: exit %d, %s; want %d saying %q", c.args, code, stderr, exitBadInput, c.want)
		}
	}
}
