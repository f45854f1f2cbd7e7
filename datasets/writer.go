package datasets

import (
	"cmp"
	"fmt"
	"hash/maphash"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/apache/arrow/go/v15/parquet"
	"github.com/apache/arrow/go/v15/parquet/compress"
	"github.com/apache/arrow/go/v15/parquet/pqarrow"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/internal/atomicio"
)

// rowGroupRows fixes the size of the Parquet row groups we write, so that the bytes written
// depend on the rows only, not on how the input happened to be batched.
const rowGroupRows = 1 << 17

// parquetProps are the writer settings of every table commcal writes. created_by is pinned so
// that files do not change with the Arrow library's patch version. The writer's own buffers
// come from Go's garbage-collected allocator: Arrow v15's buffered row-group writer does not
// release one 256-byte buffer per column chunk on Close, which a checked allocator would
// report as our leak.
func parquetProps() *parquet.WriterProperties {
	return parquet.NewWriterProperties(
		parquet.WithCompression(compress.Codecs.Snappy),
		parquet.WithMaxRowGroupLength(rowGroupRows),
		parquet.WithCreatedBy("commcal"),
	)
}

// keyRef is the fingerprint of one row's key and where the row came from. A 128-bit hash
// keeps duplicate detection at 32 bytes per row while the rows themselves stream through;
// the chance that two different keys collide is about n²/2¹²⁹, 10⁻²⁷ for a million rows.
type keyRef struct {
	h1, h2 uint64
	src    int32
	row    int64
	line   int64
}

// tableWriter streams one table into a Parquet file.
type tableWriter struct {
	t    *Table
	f    *os.File
	fw   *pqarrow.FileWriter
	rows int64
	keys []keyRef
}

// DirWriter builds a dataset directory in a temporary sibling of its destination and moves it
// into place on Commit, so that a failed or killed run leaves no partial dataset behind.
type DirWriter struct {
	out, tmp string
	force    bool
	cl       *cluster.Cluster
	ck       *checker
	mem      memory.Allocator
	tables   map[*Table]*tableWriter
	files    []string // source files by index, for duplicate-key messages
	seed1    maphash.Seed
	seed2    maphash.Seed
	done     bool
}

// NewDirWriter starts a dataset directory that Commit will move to out. Unless force is set, an
// existing out is an error; with force it is replaced at commit.
func NewDirWriter(out string, force bool, cl *cluster.Cluster, mem memory.Allocator) (*DirWriter, error) {
	if _, err := os.Stat(out); err == nil && !force {
		return nil, fmt.Errorf("datasets: %s already exists (use --force to replace it)", out)
	}
	tmp, err := atomicio.TempDir(out)
	if err != nil {
		return nil, fmt.Errorf("datasets: %w", err)
	}
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	return &DirWriter{out: out, tmp: tmp, force: force, cl: cl, ck: newChecker(cl), mem: mem,
		tables: map[*Table]*tableWriter{}, seed1: maphash.MakeSeed(), seed2: maphash.MakeSeed()}, nil
}

// TempDir is where files are being written; extra outputs (a truth file) may be put there
// before Commit.
func (w *DirWriter) TempDir() string { return w.tmp }

// source registers an input file and returns its index for key references.
func (w *DirWriter) source(file string) int32 {
	w.files = append(w.files, file)
	return int32(len(w.files) - 1)
}

// write checks a record of t's schema and appends it to t's file.
func (w *DirWriter) write(t *Table, rec arrow.Record, loc batchLoc, src int32) error {
	if err := w.ck.check(t, rec, loc); err != nil {
		return err
	}
	tw, err := w.table(t)
	if err != nil {
		return err
	}
	w.fingerprint(tw, rec, loc, src)
	if err := tw.fw.WriteBuffered(rec); err != nil {
		return fmt.Errorf("datasets: writing %s: %w", t.File(), err)
	}
	tw.rows += rec.NumRows()
	return nil
}

// WriteRows checks and appends generated rows (the row type of t) under a source name used in
// error messages.
func WriteRows[R any](w *DirWriter, t *Table, source string, rows []R) error {
	src := w.source(source)
	for off := 0; off < len(rows); off += rowGroupRows {
		end := min(off+rowGroupRows, len(rows))
		rec := RecordFromRows(t, rows[off:end], w.mem)
		err := w.write(t, rec, batchLoc{file: source, firstRow: int64(off) + 1}, src)
		rec.Release()
		if err != nil {
			return err
		}
	}
	return nil
}

func (w *DirWriter) table(t *Table) (*tableWriter, error) {
	if tw, ok := w.tables[t]; ok {
		return tw, nil
	}
	f, err := os.Create(filepath.Join(w.tmp, t.File()))
	if err != nil {
		return nil, fmt.Errorf("datasets: %w", err)
	}
	fw, err := pqarrow.NewFileWriter(t.schema, f, parquetProps(), pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("datasets: %w", err)
	}
	tw := &tableWriter{t: t, f: f, fw: fw}
	w.tables[t] = tw
	return tw, nil
}

// fingerprint records the key of every row of rec.
func (w *DirWriter) fingerprint(tw *tableWriter, rec arrow.Record, loc batchLoc, src int32) {
	n := int(rec.NumRows())
	var h1, h2 maphash.Hash
	h1.SetSeed(w.seed1)
	h2.SetSeed(w.seed2)
	var buf []byte
	for r := 0; r < n; r++ {
		buf = buf[:0]
		for _, ci := range tw.t.keyIdx {
			switch col := rec.Column(ci).(type) {
			case *array.String:
				buf = strconv.AppendQuote(buf, col.Value(r))
			case *array.Int64:
				buf = strconv.AppendInt(buf, col.Value(r), 10)
			default:
				panic("datasets: key column of unexpected type")
			}
			buf = append(buf, 0)
		}
		h1.Reset()
		h2.Reset()
		h1.Write(buf)
		h2.Write(buf)
		l := loc.at(r)
		tw.keys = append(tw.keys, keyRef{h1: h1.Sum64(), h2: h2.Sum64(), src: src, row: l.Row, line: l.Line})
	}
}

// duplicates returns the duplicate key whose second occurrence comes first in input order.
func (w *DirWriter) duplicates(tw *tableWriter) error {
	keys := tw.keys
	order := func(a, b keyRef) int {
		return cmp.Or(cmp.Compare(a.src, b.src), cmp.Compare(a.row, b.row))
	}
	slices.SortFunc(keys, func(a, b keyRef) int {
		return cmp.Or(cmp.Compare(a.h1, b.h1), cmp.Compare(a.h2, b.h2), order(a, b))
	})
	var first, second *keyRef
	start := 0 // first index of the current run of equal fingerprints
	for i := 1; i < len(keys); i++ {
		if keys[i].h1 != keys[start].h1 || keys[i].h2 != keys[start].h2 {
			start = i
			continue
		}
		// Runs are sorted by input order, so keys[start+1] is its key's second occurrence.
		if i == start+1 && (second == nil || order(keys[i], *second) < 0) {
			first, second = &keys[start], &keys[i]
		}
	}
	if second == nil {
		return nil
	}
	loc := Location{File: w.files[second.src], Row: second.row, Line: second.line}
	prev := Location{File: w.files[first.src], Row: first.row, Line: first.line}
	return inputErr(loc, "", ErrDuplicateKey, "same %s key (%s) as %s", tw.t.Name, strings.Join(tw.t.Key, ", "), prev)
}

// close finishes every table file; it checks keys first.
func (w *DirWriter) closeTables() error {
	for _, t := range Tables {
		tw, ok := w.tables[t]
		if !ok {
			continue
		}
		if err := w.duplicates(tw); err != nil {
			return err
		}
		tw.keys = nil
		if err := tw.fw.Close(); err != nil { // closes the file too
			return fmt.Errorf("datasets: closing %s: %w", t.File(), err)
		}
	}
	return nil
}

// rowCounts reports rows written per table name.
func (w *DirWriter) rowCounts() map[string]int64 {
	m := map[string]int64{}
	for t, tw := range w.tables {
		m[t.Name] = tw.rows
	}
	return m
}

// Commit finishes the tables, writes the manifest and moves the directory into place.
// The manifest's table list is filled in here.
func (w *DirWriter) Commit(m *Manifest) error {
	if w.done {
		panic("datasets: Commit after Commit or Abort")
	}
	if err := w.closeTables(); err != nil {
		w.Abort()
		return err
	}
	m.Tables = nil
	counts := w.rowCounts()
	for _, t := range Tables {
		if _, ok := w.tables[t]; !ok {
			continue
		}
		sum, size, err := fileSHA256(filepath.Join(w.tmp, t.File()))
		if err != nil {
			w.Abort()
			return err
		}
		m.Tables = append(m.Tables, TableInfo{Name: t.Name, File: t.File(), Rows: counts[t.Name], Bytes: size, SHA256: sum})
	}
	if err := writeJSON(filepath.Join(w.tmp, ManifestFile), m); err != nil {
		w.Abort()
		return err
	}
	if err := atomicio.CommitDir(w.tmp, w.out, w.force); err != nil {
		w.Abort()
		return err
	}
	w.done = true
	return nil
}

// Abort removes everything written so far. It is safe to call after Commit.
func (w *DirWriter) Abort() {
	if w.done {
		return
	}
	w.done = true
	for _, tw := range w.tables {
		tw.f.Close()
	}
	os.RemoveAll(w.tmp)
}
