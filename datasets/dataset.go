package datasets

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/memory"

	"github.com/commcal/commcal/cluster"
)

// Dataset is a dataset directory opened for reading.
type Dataset struct {
	Dir      string
	Manifest *Manifest
	Cluster  *cluster.Cluster
}

// ReadManifest reads and checks a dataset directory's manifest.json.
func ReadManifest(dir string) (*Manifest, error) {
	path := filepath.Join(dir, ManifestFile)
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("datasets: %w", err)
	}
	m, err := ParseManifest(data)
	if err != nil {
		return nil, fmt.Errorf("datasets: %s: %w", path, err)
	}
	return m, nil
}

// ParseManifest decodes a manifest strictly and checks its format version.
func ParseManifest(data []byte) (*Manifest, error) {
	var m Manifest
	if err := decodeJSON(data, &m); err != nil {
		return nil, err
	}
	if m.Format != ManifestFormat {
		return nil, fmt.Errorf("manifest format %q, want %q", m.Format, ManifestFormat)
	}
	return &m, nil
}

// Open opens a dataset directory written by Ingest or the generator.
func Open(dir string) (*Dataset, error) {
	m, err := ReadManifest(dir)
	if err != nil {
		return nil, err
	}
	cl, err := cluster.New(m.Cluster)
	if err != nil {
		return nil, fmt.Errorf("datasets: %s: manifest's cluster: %w", dir, err)
	}
	for _, ti := range m.Tables {
		if _, ok := TableByName(ti.Name); !ok {
			return nil, fmt.Errorf("datasets: %s: manifest lists unknown table %q", dir, ti.Name)
		}
		if _, err := os.Stat(filepath.Join(dir, ti.File)); err != nil {
			return nil, fmt.Errorf("datasets: %s: %w", dir, err)
		}
	}
	return &Dataset{Dir: dir, Manifest: m, Cluster: cl}, nil
}

// Scan streams a table's records to fn; a table the dataset lacks has no records. Records are
// released after fn returns; fn must Retain what it keeps.
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
		return fmt.Errorf("datasets: %w", err)
	}
	defer f.Close()
	fr, err := openParquet(path, f, 1<<16, mem)
	if err != nil {
		return err
	}
	defer fr.ParquetReader().Close()
	sc, err := fr.Schema()
	if err != nil {
		return fmt.Errorf("datasets: %s: %w", path, err)
	}
	if !sameColumns(sc, t.schema) {
		return fmt.Errorf("datasets: %s: columns differ from table %s's:\n%s", path, t.Name, sc)
	}
	rr, err := fr.GetRecordReader(ctx, nil, nil)
	if err != nil {
		return fmt.Errorf("datasets: %s: %w", path, err)
	}
	defer rr.Release()
	for rr.Next() {
		if err := fn(rr.Record()); err != nil {
			return err
		}
	}
	if err := rr.Err(); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("datasets: %s: %w", path, err)
	}
	return nil
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

// sameColumns compares names, types and nullability, ignoring metadata (Parquet adds its own).
func sameColumns(a, b *arrow.Schema) bool {
	if a.NumFields() != b.NumFields() {
		return false
	}
	for i := range a.Fields() {
		fa, fb := a.Field(i), b.Field(i)
		if fa.Name != fb.Name || fa.Nullable != fb.Nullable || !arrow.TypeEqual(fa.Type, fb.Type) {
			return false
		}
	}
	return true
}
