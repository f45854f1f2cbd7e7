package datasets

import (
	"context"
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

// Ingesting a dataset directory checks its tables against the manifest too.
func TestIngestDatasetVerifiesChecksums(t *testing.T) {
	cl := testCluster(t, "ccpe-testbed")
	a, _ := simulateDir(t, cl, 43)
	b, _ := simulateDir(t, cl, 44)
	other, err := os.ReadFile(filepath.Join(b, RoundTripsTable.File()))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(a, RoundTripsTable.File())
	if err := os.WriteFile(path, other, 0o644); err != nil {
		t.Fatal(err)
	}
	srcs, err := ExpandSources([]string{a}, Source{})
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "ds")
	_, err = Ingest(context.Background(), IngestOptions{Cluster: cl, Sources: srcs, Out: out, Created: fixedTime})
	if ie := checkInputError(t, err, path); ie.Kind != ErrChecksumMismatch {
		t.Errorf("%v", err)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Error("output written")
	}
	// A path that does not exist, and an empty directory, are bad input.
	missing := filepath.Join(a, "nope")
	if _, err := ExpandSources([]string{missing}, Source{}); err == nil {
		t.Error("missing path accepted")
	} else if ie := checkInputError(t, err, missing); ie.Kind != ErrMissingFile {
		t.Error(err)
	}
	empty := t.TempDir()
	if _, err := ExpandSources([]string{empty}, Source{}); err == nil {
		t.Error("empty directory accepted")
	} else if ie := checkInputError(t, err, empty); ie.Kind != ErrEmptyFile {
		t.Error(err)
	}
}

// The MPI library given at ingest is kept in the manifest and carried when a dataset is
// ingested again; sources that name different libraries, or one and none, and a library
// commcal does not know, are refused before anything is written.
func TestIngestMPILibrary(t *testing.T) {
	cl := testCluster(t, "ccpe-testbed")
	a, _ := simulateDir(t, cl, 45)
	ingestDir := func(lib string, dirs ...string) (string, string, error) {
		t.Helper()
		srcs, err := ExpandSources(dirs, Source{})
		if err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(t.TempDir(), "ds")
		m, err := Ingest(context.Background(), IngestOptions{Cluster: cl, Sources: srcs, Out: out, Created: fixedTime, MPILibrary: lib})
		if err != nil {
			return "", out, err
		}
		back, err := ReadManifest(out)
		if err != nil {
			t.Fatal(err)
		}
		if back.MPILibrary != m.MPILibrary {
			t.Errorf("written %q, read back %q", m.MPILibrary, back.MPILibrary)
		}
		return m.MPILibrary, out, nil
	}
	lib, mpich, err := ingestDir("mpich", a)
	if err != nil || lib != "mpich" {
		t.Fatalf("library %q, %v; want mpich", lib, err)
	}
	if lib, _, err := ingestDir("", mpich); err != nil || lib != "mpich" {
		t.Errorf("carried: %q, %v; want mpich", lib, err)
	}
	if lib, _, err := ingestDir("openmpi", mpich); err != nil || lib != "openmpi" {
		t.Errorf("given over the dataset's: %q, %v; want openmpi", lib, err)
	}
	b, _ := simulateDir(t, cl, 46)
	_, openmpi, err := ingestDir("openmpi", b)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		dirs []string
		file string // the manifest the error names
	}{
		{[]string{mpich, openmpi}, filepath.Join(openmpi, ManifestFile)},
		{[]string{mpich, a}, filepath.Join(a, ManifestFile)},
		{[]string{a, mpich}, filepath.Join(a, ManifestFile)},
	} {
		_, out, err := ingestDir("", c.dirs...)
		if ie := checkInputError(t, err, c.file); ie.Kind != ErrUnsupported || !strings.Contains(ie.Detail, "give --mpi-library") {
			t.Errorf("%v: %v", c.dirs, err)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("%v: output written", c.dirs)
		}
	}
	if _, _, err := ingestDir("intel", a); err == nil || err.Error() != `--mpi-library: unsupported: MPI library "intel": want openmpi or mpich` {
		t.Errorf("unknown library: %v", err)
	}
}
