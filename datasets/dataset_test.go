package datasets

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Open checks every table file against the manifest's size and SHA-256: a table swapped for
// another dataset's (same size or not), or damaged in place, is refused; OpenWith NoVerify
// skips the check.
func TestOpenVerifiesChecksums(t *testing.T) {
	cl := testCluster(t, "ccpe-testbed")
	a, _ := simulateDir(t, cl, 41)
	b, _ := simulateDir(t, cl, 42)
	if _, err := Open(a); err != nil {
		t.Fatalf("an intact dataset: %v", err)
	}
	m, err := ReadManifest(a)
	if err != nil {
		t.Fatal(err)
	}
	sums := map[string]TableInfo{}
	for _, ti := range m.Tables {
		sums[ti.Name] = ti
	}
	read := func(dir string, tab *Table) []byte {
		data, err := os.ReadFile(filepath.Join(dir, tab.File()))
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	orig := read(a, TransfersTable)
	flipped := append([]byte{}, orig...)
	flipped[len(flipped)/2] ^= 1
	cases := map[string]struct {
		data []byte
		msg  string
	}{
		"swapped for another dataset's": {read(b, TransfersTable), "manifest says"},
		"one bit flipped":               {flipped, "checksum mismatch: manifest says SHA-256 " + sums["transfers"].SHA256 + ", file has "},
		"truncated":                     {orig[:len(orig)-1], "size mismatch: manifest says"},
	}
	path := filepath.Join(a, TransfersTable.File())
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			if err := os.WriteFile(path, c.data, 0o644); err != nil {
				t.Fatal(err)
			}
			defer os.WriteFile(path, orig, 0o644)
			_, err := Open(a)
			ie := checkInputError(t, err, path)
			if ie.Kind != ErrChecksumMismatch || !strings.Contains(ie.Detail, c.msg) {
				t.Errorf("%v, want %s saying %q", err, ErrChecksumMismatch, c.msg)
			}
			if _, err := OpenWith(a, OpenOptions{NoVerify: true}); err != nil {
				t.Errorf("NoVerify: %v", err)
			}
		})
	}
	// A table file that is gone, and a manifest without a checksum.
	os.Rename(path, path+".away")
	_, err = Open(a)
	if ie := checkInputError(t, err, path); ie.Kind != ErrMissingFile {
		t.Errorf("missing table: %v", err)
	}
	os.Rename(path+".away", path)
	m.Tables[0].SHA256 = ""
	if err := WriteJSONFile(filepath.Join(a, ManifestFile), m); err != nil {
		t.Fatal(err)
	}
	_, err = Open(a)
	if ie := checkInputError(t, err, filepath.Join(a, m.Tables[0].File)); ie.Kind != ErrChecksumMismatch {
		t.Errorf("no checksum: %v", err)
	}
}
