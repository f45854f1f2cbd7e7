package datasets

import (
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"os"
	"path/filepath"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/internal/atomicio"
)

// rowGroupRows fixes the size of the Parquet row groups we write, so that the bytes written
// depend on the rows only, not on how the input happened to be batched.
const rowGroupRows = 1 << 17

// parquetProps are the writer settings of every table commcal writes. created_by is pinned so
// that files do not change with the Arrow library's patch version. The writer's own buffers
// come from mem (nil: Go's allocator), so that tests with a checked allocator see them
// released too (Arrow v15 leaked one buffer per column chunk and could not be given one).
// The schema's root is REQUIRED, as the Parquet format says a root is: the library's default
// (REPEATED, kept for compatibility with old Arrow files) makes strict readers such as
// hyparquet refuse the file.
//
// Strings (cluster, experiment and node names) repeat and are dictionary-encoded; numbers
// are nearly all distinct, and dictionary-encoding them costs more time than it saves space.
func parquetProps(t *Table, mem memory.Allocator) *parquet.WriterProperties {
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	opts := []parquet.WriterProperty{
		parquet.WithAllocator(mem),
		parquet.WithRootRepetition(parquet.Repetitions.Required),
		parquet.WithCompression(compress.Codecs.Snappy),
		parquet.WithMaxRowGroupLength(rowGroupRows),
		parquet.WithCreatedBy("commcal"),
	}
	// Min/max statistics of strings cost a fifth of the writing time and help no reader of
	// ours; those of numbers are cheap and kept.
	for _, c := range t.Columns {
		opts = append(opts, parquet.WithDictionaryFor(c.Name, c.Type == String), parquet.WithStatsFor(c.Name, c.Type != String))
	}
	return parquet.NewWriterProperties(opts...)
}

// tableWriter streams one table into a Parquet file. Encoding Parquet is the dearest step of
// ingest, so it runs on its own goroutine while the next batch is read and checked.
type tableWriter struct {
	t     *Table
	f     *os.File
	fw    *pqarrow.FileWriter
	queue chan arrow.Record
	done  chan error // the writer goroutine's result, sent once when queue is closed
	err   error      // the first error the writer goroutine reported
	rows  int64
	keys  *keyIndex
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
	keyRun   int // rows of key hashes sorted in memory (keyRunRows; tests make it small)
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
		tables: map[*Table]*tableWriter{}, seed1: maphash.MakeSeed(), seed2: maphash.MakeSeed(), keyRun: keyRunRows}, nil
}

// TempDir is where files are being written; extra outputs (a truth file) may be put there
// before Commit.
func (w *DirWriter) TempDir() string { return w.tmp }

// source registers an input file and returns its index for key references.
func (w *DirWriter) source(file string) int32 {
	w.files = append(w.files, file)
	return int32(len(w.files) - 1)
}

// write checks a record of t's schema and appends it to t's file. dicts, when not nil, holds
// by column the same strings as rec's as dictionary arrays (nil for other columns), which the
// checks use.
func (w *DirWriter) write(t *Table, rec arrow.Record, dicts []*array.Dictionary, loc batchLoc, src int32) error {
	if err := w.ck.check(t, rec, dicts, loc); err != nil {
		return err
	}
	tw, err := w.table(t)
	if err != nil {
		return err
	}
	if err := w.fingerprint(tw, rec, loc, src); err != nil {
		return fmt.Errorf("datasets: %w", err)
	}
	rec.Retain()
	select {
	case tw.queue <- rec:
	case err := <-tw.done: // the writer stopped early
		rec.Release()
		tw.err, tw.queue = err, nil
		return fmt.Errorf("datasets: writing %s: %w", t.File(), err)
	}
	tw.rows += rec.NumRows()
	return nil
}

// writeLoop encodes queued records until the queue closes, then reports the first error.
// After an error it stops consuming, which the sender notices through done.
func (tw *tableWriter) writeLoop(queue <-chan arrow.Record) {
	for rec := range queue {
		err := tw.fw.WriteBuffered(rec)
		rec.Release()
		if err != nil {
			tw.done <- err
			return
		}
	}
	tw.done <- nil
}

// finish closes the queue, waits for the writer goroutine and returns its error.
func (tw *tableWriter) finish() error {
	if tw.queue == nil {
		return tw.err
	}
	close(tw.queue)
	tw.queue = nil
	tw.err = <-tw.done
	return tw.err
}

// TableRows are one table's rows of a writer that fills several tables (the simulator, the
// measurement engine): the table, how many rows, and how to write them.
type TableRows struct {
	Table *Table
	N     int
	write func(w *DirWriter, source string) error
}

// RowsOf wraps rows of t's row type as TableRows.
func RowsOf[R any](t *Table, rows []R) TableRows {
	return TableRows{t, len(rows), func(w *DirWriter, src string) error { return WriteRows(w, t, src, rows) }}
}

// MeasurementRows are rows of the six measurement tables, as a generator or a measurement makes them.
type MeasurementRows struct {
	Transfers     []Transfer
	RoundTrips    []RoundTrip
	OneToTwo      []OneToTwo
	Collectives   []Collective
	PingPongPairs []PingPongPairs
	Schedules     []Schedule
}

// Rows lists the tables in the order of a dataset's sources.
func (t *MeasurementRows) Rows() []TableRows {
	return []TableRows{
		RowsOf(TransfersTable, t.Transfers),
		RowsOf(RoundTripsTable, t.RoundTrips),
		RowsOf(OneToTwoTable, t.OneToTwo),
		RowsOf(CollectivesTable, t.Collectives),
		RowsOf(PingPongPairsTable, t.PingPongPairs),
		RowsOf(SchedulesTable, t.Schedules),
	}
}

// Write writes the rows under a source name (WriteRows).
func (r TableRows) Write(w *DirWriter, source string) error { return r.write(w, source) }

// WriteRows checks and appends generated rows (the row type of t) under a source name used in
// error messages.
func WriteRows[R any](w *DirWriter, t *Table, source string, rows []R) error {
	src := w.source(source)
	for off := 0; off < len(rows); off += rowGroupRows {
		end := min(off+rowGroupRows, len(rows))
		rec := RecordFromRows(t, rows[off:end], w.mem)
		err := w.write(t, rec, nil, batchLoc{file: source, firstRow: int64(off) + 1}, src)
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
	fw, err := pqarrow.NewFileWriter(t.schema, f, parquetProps(t, w.mem), pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema(), pqarrow.WithAllocator(w.mem)))
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("datasets: %w", err)
	}
	keys, err := newKeyIndex(filepath.Join(w.tmp, scratchDir, t.Name), w.keyRun)
	if err != nil {
		fw.Close()
		return nil, fmt.Errorf("datasets: %w", err)
	}
	tw := &tableWriter{t: t, f: f, fw: fw, keys: keys, queue: make(chan arrow.Record, 2), done: make(chan error, 1)}
	go tw.writeLoop(tw.queue)
	w.tables[t] = tw
	return tw, nil
}

// scratchDir holds the key index's files inside the temporary directory until Commit.
const scratchDir = ".scratch"

// fingerprint records the key of every row of rec: two seeded hashes of the key's columns,
// strings prefixed by their length.
func (w *DirWriter) fingerprint(tw *tableWriter, rec arrow.Record, loc batchLoc, src int32) error {
	n := int(rec.NumRows())
	strs := make([]*array.String, len(tw.t.keyIdx)) // the key's columns, one of the two set
	ints := make([][]int64, len(tw.t.keyIdx))
	for i, ci := range tw.t.keyIdx {
		switch col := rec.Column(ci).(type) {
		case *array.String:
			strs[i] = col
		case *array.Int64:
			ints[i] = col.Int64Values()
		default:
			panic("datasets: key column of unexpected type")
		}
	}
	var buf []byte
	for r := 0; r < n; r++ {
		buf = buf[:0]
		for i, s := range strs {
			if s != nil {
				v := s.Value(r)
				buf = binary.AppendUvarint(buf, uint64(len(v)))
				buf = append(buf, v...)
			} else {
				buf = binary.LittleEndian.AppendUint64(buf, uint64(ints[i][r]))
			}
		}
		l := loc.at(r)
		if err := tw.keys.add(keyRef{h1: maphash.Bytes(w.seed1, buf), h2: maphash.Bytes(w.seed2, buf), src: src, row: l.Row, line: l.Line}); err != nil {
			return err
		}
	}
	return nil
}

// duplicates reports the duplicate key whose second occurrence comes first in input order.
func (w *DirWriter) duplicates(tw *tableWriter) error {
	first, second, found, err := tw.keys.duplicate()
	if err != nil {
		return fmt.Errorf("datasets: checking %s keys: %w", tw.t.Name, err)
	}
	if !found {
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
		tw.keys.close()
		if err := tw.finish(); err != nil {
			return fmt.Errorf("datasets: writing %s: %w", t.File(), err)
		}
		if err := tw.fw.Close(); err != nil { // closes the file too
			return fmt.Errorf("datasets: closing %s: %w", t.File(), err)
		}
	}
	return os.RemoveAll(filepath.Join(w.tmp, scratchDir))
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
	if err := WriteJSONFile(filepath.Join(w.tmp, ManifestFile), m); err != nil {
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
		tw.finish()
		tw.f.Close()
	}
	os.RemoveAll(w.tmp)
}
