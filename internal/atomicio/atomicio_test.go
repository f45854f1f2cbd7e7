package atomicio

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWriteFileReplacesWholly(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a.json")
	for _, content := range []string{"first", "second, longer"} {
		if err := WriteFile(p, []byte(content)); err != nil {
			t.Fatal(err)
		}
		if got, _ := os.ReadFile(p); string(got) != content {
			t.Errorf("read %q, want %q", got, content)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("temporary files left: %v", entries)
	}
	if err := WriteFile(filepath.Join(dir, "missing", "b"), nil); err == nil {
		t.Error("writing into a missing directory succeeded")
	}
}

func TestCommitDir(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	fill := func(content string) string {
		tmp, err := TempDir(out)
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(tmp, "f"), []byte(content), 0o644)
		return tmp
	}
	if err := CommitDir(fill("one"), out, false); err != nil {
		t.Fatal(err)
	}
	tmp := fill("two")
	if err := CommitDir(tmp, out, false); err == nil {
		t.Error("CommitDir without replace overwrote an existing directory")
	}
	os.RemoveAll(tmp)
	if err := CommitDir(fill("three"), out, true); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(out, "f")); string(got) != "three" {
		t.Errorf("after replace: %q", got)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("left beside the output: %v", entries)
	}
}

func TestBuildDirKeepsOutOnFailure(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	write := func(content string) func(string) error {
		return func(tmp string) error { return os.WriteFile(filepath.Join(tmp, "f"), []byte(content), 0o644) }
	}
	if err := BuildDir(out, write("one")); err != nil {
		t.Fatal(err)
	}
	failing := func(tmp string) error {
		write("half")(tmp)
		return os.ErrInvalid
	}
	if err := BuildDir(out, failing); err != os.ErrInvalid {
		t.Errorf("failing fill returned %v", err)
	}
	if got, _ := os.ReadFile(filepath.Join(out, "f")); string(got) != "one" {
		t.Errorf("after a failed build: %q", got)
	}
	if err := BuildDir(out, write("two")); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(out, "f")); string(got) != "two" {
		t.Errorf("after a rebuild: %q", got)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("left beside the output: %v", entries)
	}
}
