package atomicio

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/commcal/commcal/internal/badinput"
)

func mkfile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// build writes a commcal output at out holding one file.
func build(t *testing.T, out, content string) {
	t.Helper()
	c, err := Claim(context.Background(), Target{Path: out})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Release()
	if err := BuildDir(out, func(tmp string) error { return os.WriteFile(filepath.Join(tmp, "f"), []byte(content), 0o644) }); err != nil {
		t.Fatal(err)
	}
}

func TestClaimRefuses(t *testing.T) {
	dir := t.TempDir()
	mkfile(t, filepath.Join(dir, "thesis", "thesis.tex"), "my thesis")
	mkfile(t, filepath.Join(dir, "notes.txt"), "notes")
	mkfile(t, filepath.Join(dir, "ds", "manifest.json"), "{}")
	if err := os.Symlink(filepath.Join(dir, "ds"), filepath.Join(dir, "ds-link")); err != nil {
		t.Fatal(err)
	}
	build(t, filepath.Join(dir, "run"), "old")
	cases := []struct {
		name string
		t    Target
	}{
		{"user directory", Target{Path: filepath.Join(dir, "thesis")}},
		{"regular file as directory", Target{Path: filepath.Join(dir, "notes.txt")}},
		{"existing file output", Target{Path: filepath.Join(dir, "notes.txt"), File: true}},
		{"input through a symlink", Target{Path: filepath.Join(dir, "ds"), Inputs: []string{filepath.Join(dir, "ds-link")}, Force: true}},
		{"output is a symlink", Target{Path: filepath.Join(dir, "ds-link"), Force: true}},
		{"output is the input file", Target{Path: filepath.Join(dir, "notes.txt"), File: true, Inputs: []string{filepath.Join(dir, "notes.txt")}, Force: true}},
		{"output inside the input", Target{Path: filepath.Join(dir, "ds", "sub"), Inputs: []string{filepath.Join(dir, "ds")}, Force: true}},
		{"output contains the input", Target{Path: dir, Inputs: []string{filepath.Join(dir, "ds", "manifest.json")}, Force: true}},
		{"commcal output needing force", Target{Path: filepath.Join(dir, "run"), ReplaceNeedsForce: true}},
		{"empty path", Target{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Claim(context.Background(), tc.t)
			if err == nil {
				c.Release()
				t.Fatal("claimed")
			}
			if !badinput.Is(err) {
				t.Fatalf("%v is not bad input", err)
			}
		})
	}
	if got := read(t, filepath.Join(dir, "thesis", "thesis.tex")); got != "my thesis" {
		t.Fatalf("thesis.tex = %q", got)
	}
	// Allowed: an earlier commcal output, an empty directory, a user directory with --force.
	for _, tg := range []Target{{Path: filepath.Join(dir, "run")}, {Path: filepath.Join(dir, "new", "run")},
		{Path: t.TempDir()}, {Path: filepath.Join(dir, "thesis"), Force: true}, {Path: filepath.Join(dir, "notes.txt"), File: true, Force: true}} {
		c, err := Claim(context.Background(), tg)
		if err != nil {
			t.Errorf("Claim(%+v): %v", tg, err)
			continue
		}
		c.Release()
	}
}

func TestClaimLocks(t *testing.T) {
	out := filepath.Join(t.TempDir(), "run")
	c, err := Claim(context.Background(), Target{Path: out})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Claim(context.Background(), Target{Path: out}); !errors.Is(err, ErrBusy) || badinput.Is(err) {
		t.Fatalf("second claim: %v, want ErrBusy", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		c2, err := Claim(ctx, Target{Path: out, Wait: true})
		if err == nil {
			c2.Release()
		}
		done <- err
	}()
	c.Release()
	if err := <-done; err != nil {
		t.Fatalf("waiting claim: %v", err)
	}
	cancel()
}

func TestClaimClearsWhatAKilledRunLeft(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "run")
	build(t, out, "old")
	// A killed build: a marked temporary directory, an unmarked empty one, a WriteFile temp,
	// and a user's file that only looks like one.
	tmp, err := TempDir(out)
	if err != nil {
		t.Fatal(err)
	}
	mkfile(t, filepath.Join(tmp, "half"), "x")
	os.Mkdir(filepath.Join(dir, ".run.tmp-999"), 0o755)
	mkfile(t, filepath.Join(dir, ".run.tmp-123456"), "partial")
	mkfile(t, filepath.Join(dir, ".run.tmp-mine.txt"), "user's")
	c, err := Claim(context.Background(), Target{Path: out})
	if err != nil {
		t.Fatal(err)
	}
	c.Release()
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	want := []string{".run.tmp-mine.txt", "run"}
	if len(names) != len(want) {
		t.Fatalf("left %v, want %v", names, want)
	}
	for i := range want {
		if names[i] != want[i] {
			t.Fatalf("left %v, want %v", names, want)
		}
	}

	// A commit killed between its two renames (file systems without exchange): out is gone
	// and the earlier output waits in "<tmp>.old"; the next claim puts it back.
	tmp, _ = TempDir(out)
	if err := os.Rename(out, tmp+".old"); err != nil {
		t.Fatal(err)
	}
	c, err = Claim(context.Background(), Target{Path: out})
	if err != nil {
		t.Fatal(err)
	}
	c.Release()
	if got := read(t, filepath.Join(out, "f")); got != "old" {
		t.Fatalf("rolled back output holds %q", got)
	}
	if _, err := os.Stat(tmp); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("temporary directory %s kept", tmp)
	}
}

func TestCommitReplacesAtomically(t *testing.T) {
	out := filepath.Join(t.TempDir(), "run")
	build(t, out, "one")
	build(t, out, "two")
	if got := read(t, filepath.Join(out, "f")); got != "two" || !IsOutput(out) {
		t.Fatalf("out holds %q (marked %v)", got, IsOutput(out))
	}
	entries, _ := os.ReadDir(filepath.Dir(out))
	if len(entries) != 1 { // run alone: the lock is gone
		t.Fatalf("%d entries beside the output", len(entries))
	}
}

// TestReleaseRemovesParentsItMade: a claimed output under directories that did not exist,
// never written (the command failed), leaves no empty directories behind; once written, they
// stay.
func TestReleaseRemovesParentsItMade(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "a", "b", "run")
	c, err := Claim(context.Background(), Target{Path: out})
	if err != nil {
		t.Fatal(err)
	}
	c.Release()
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("left %v", entries)
	}
	build(t, out, "x")
	if got := read(t, filepath.Join(out, "f")); got != "x" {
		t.Fatalf("output holds %q", got)
	}
}
