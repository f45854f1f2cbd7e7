package datasets

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/schedule"
)

// Dataset is a dataset directory opened for reading.
type Dataset struct {
	Dir      string
	Manifest *Manifest
	Cluster  *cluster.Cluster
}

// ReadManifest reads and checks a dataset directory's manifest.json. A directory without one
// is bad input, like a damaged manifest.
func ReadManifest(dir string) (*Manifest, error) {
	path := filepath.Join(dir, ManifestFile)
	if _, err := os.Stat(path); os.IsNotExist(err) {
		if _, err := os.Stat(dir); err == nil {
			return nil, inputErr(Location{File: dir}, "", ErrMissingFile, "not a dataset directory: it has no %s", ManifestFile)
		}
	}
	data, err := readInputFile(path)
	if err != nil {
		return nil, err
	}
	return parseManifest(path, data)
}

// ParseManifest decodes a manifest strictly and checks its format version. Errors are
// *InputError naming manifest.json.
func ParseManifest(data []byte) (*Manifest, error) {
	return parseManifest(ManifestFile, data)
}

func parseManifest(name string, data []byte) (*Manifest, error) {
	var m Manifest
	if err := decodeJSON(name, data, &m); err != nil {
		return nil, err
	}
	if m.Format != ManifestFormat {
		return nil, inputErr(Location{File: name}, "format", ErrUnsupported, "manifest format %s, want %q", quote(m.Format), ManifestFormat)
	}
	if m.MPILibrary != "" {
		if err := CheckMPILibrary(m.MPILibrary); err != nil {
			return nil, inputErr(Location{File: name}, "mpi_library", ErrUnsupported, "%v", err)
		}
	}
	return &m, nil
}

// MPILibraries are the MPI libraries whose default rules commcal knows (schedule.Libraries),
// as a manifest and --mpi-library name them.
func MPILibraries() []string {
	var names []string
	for _, l := range schedule.Libraries() {
		names = append(names, string(l))
	}
	return names
}

// CheckMPILibrary says whether lib is one of MPILibraries: nil, or what was wanted.
func CheckMPILibrary(lib string) error {
	if !slices.Contains(MPILibraries(), lib) {
		return fmt.Errorf("MPI library %s: want %s", quote(lib), strings.Join(MPILibraries(), " or "))
	}
	return nil
}

// OpenOptions configures OpenWith.
type OpenOptions struct {
	// NoVerify skips checking each table file's size and SHA-256 against the manifest. Reading
	// a file means hashing it once more; skip it only when the files are known to be intact.
	NoVerify bool
}

// Open opens a dataset directory written by Ingest or the generator and verifies every table
// file against the manifest's size and SHA-256 (OpenWith with default options).
func Open(dir string) (*Dataset, error) { return OpenWith(dir, OpenOptions{}) }

// sha256Hex is the form of a SHA-256 in a manifest.
var sha256Hex = regexp.MustCompile(`^[0-9a-f]{64}$`)

// OpenWith opens a dataset directory. Unless opts.NoVerify is set, each table file's size and
// SHA-256 must be the manifest's: a table swapped for another, truncated or damaged is an
// *InputError of kind checksum-mismatch naming the file.
func OpenWith(dir string, opts OpenOptions) (*Dataset, error) {
	m, err := ReadManifest(dir)
	if err != nil {
		return nil, err
	}
	mpath := filepath.Join(dir, ManifestFile)
	cl, err := cluster.New(m.Cluster)
	if err != nil {
		return nil, inputErr(Location{File: mpath}, "cluster", ErrCorrupt, "the manifest's cluster description: %v", err)
	}
	for _, ti := range m.Tables {
		t, ok := TableByName(ti.Name)
		if !ok {
			return nil, inputErr(Location{File: mpath}, "tables", ErrUnknownTable, "unknown table %s (want one of %s)", quote(ti.Name), list(TableNames()))
		}
		if ti.File != t.File() {
			return nil, inputErr(Location{File: mpath}, "tables", ErrCorrupt, "table %s is in file %s, want %q", ti.Name, quote(ti.File), t.File())
		}
		path := filepath.Join(dir, ti.File)
		st, err := os.Stat(path)
		if err != nil {
			if os.IsNotExist(err) {
				return nil, inputErr(Location{File: path}, "", ErrMissingFile, "the manifest lists table %s, but the file is missing", ti.Name)
			}
			return nil, fmt.Errorf("datasets: %w", err)
		}
		if opts.NoVerify {
			continue
		}
		if !sha256Hex.MatchString(ti.SHA256) {
			return nil, inputErr(Location{File: path}, "", ErrChecksumMismatch, "the manifest records no valid SHA-256 for it (%s)", quote(ti.SHA256))
		}
		if st.Size() != ti.Bytes {
			return nil, inputErr(Location{File: path}, "", ErrChecksumMismatch, "size mismatch: manifest says %d bytes, file has %d", ti.Bytes, st.Size())
		}
		sum, _, err := fileSHA256(path)
		if err != nil {
			return nil, fmt.Errorf("datasets: %w", err)
		}
		if sum != ti.SHA256 {
			return nil, inputErr(Location{File: path}, "", ErrChecksumMismatch, "checksum mismatch: manifest says SHA-256 %s, file has %s", ti.SHA256, sum)
		}
	}
	return &Dataset{Dir: dir, Manifest: m, Cluster: cl}, nil
}

// Scan streams a table's records to fn; a table the dataset lacks has no records. Records are
// released after fn returns; fn must Retain what it keeps. A table file whose columns are not
// the table's is an *InputError (schema-mismatch) that says in one line which columns differ;
// a damaged file is an *InputError (corrupt), never a panic.
func (d *Dataset) Scan(ctx context.Context, t *Table, mem memory.Allocator, fn func(arrow.Record) error) error {
	if d.Manifest.Rows(t.Name) == 0 {
		return nil
	}
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	path := filepath.Join(d.Dir, t.File())
	f, err := os.Open(path)
	if err != nil {
		if os.IsNotExist(err) {
			return inputErr(Location{File: path}, "", ErrMissingFile, "the manifest lists table %s, but the file is missing", t.Name)
		}
		return fmt.Errorf("datasets: %w", err)
	}
	defer f.Close()
	return readTable(ctx, path, f, t, mem, fn)
}

// ReadAll reads a whole table into row structs (for example ReadAll[Transfer](ctx, d,
// TransfersTable)). Calibration tables are small; stream with Scan where they are not.
func ReadAll[R any](ctx context.Context, d *Dataset, t *Table) ([]R, error) {
	var rows []R
	err := d.Scan(ctx, t, nil, func(rec arrow.Record) error {
		rows = AppendRows(t, rec, rows)
		return nil
	})
	return rows, err
}
