package datasets

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"reflect"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/commcal/commcal/internal/atomicio"
)

// rowBuilder accumulates rows of one table into Arrow arrays of the table's schema.
type rowBuilder struct {
	t *Table
	b *array.RecordBuilder
	n int
}

func newRowBuilder(t *Table, mem memory.Allocator) *rowBuilder {
	return &rowBuilder{t: t, b: array.NewRecordBuilder(mem, t.schema)}
}

func (rb *rowBuilder) appendString(col int, v string) {
	rb.b.Field(col).(*array.StringBuilder).Append(v)
}
func (rb *rowBuilder) appendInt(col int, v int64) { rb.b.Field(col).(*array.Int64Builder).Append(v) }
func (rb *rowBuilder) appendFloat(col int, v float64) {
	rb.b.Field(col).(*array.Float64Builder).Append(v)
}
func (rb *rowBuilder) appendBool(col int, v bool) { rb.b.Field(col).(*array.BooleanBuilder).Append(v) }

// appendStruct appends one row struct (a value of the table's row type).
func (rb *rowBuilder) appendStruct(v reflect.Value) {
	for i, c := range rb.t.Columns {
		f := v.FieldByIndex(c.field)
		switch c.Type {
		case String:
			rb.appendString(i, f.String())
		case Int:
			rb.appendInt(i, f.Int())
		case Float:
			rb.appendFloat(i, f.Float())
		case Bool:
			rb.appendBool(i, f.Bool())
		}
	}
	rb.n++
}

// record returns the rows appended so far as a record and resets the builder.
func (rb *rowBuilder) record() arrow.Record {
	rb.n = 0
	return rb.b.NewRecord()
}

func (rb *rowBuilder) release() { rb.b.Release() }

func checkRowType[R any](t *Table) {
	if reflect.TypeFor[R]() != t.rowType {
		panic("datasets: row type " + reflect.TypeFor[R]().String() + " does not belong to table " + t.Name)
	}
}

// RecordFromRows converts row structs of table t (for example []Transfer for TransfersTable)
// into one record of t's schema. The caller releases it.
func RecordFromRows[R any](t *Table, rows []R, mem memory.Allocator) arrow.Record {
	checkRowType[R](t)
	rb := newRowBuilder(t, mem)
	defer rb.release()
	for i := range rows {
		rb.appendStruct(reflect.ValueOf(&rows[i]).Elem())
	}
	return rb.record()
}

// AppendRows appends the rows of a record of table t's schema to dst.
func AppendRows[R any](t *Table, rec arrow.Record, dst []R) []R {
	checkRowType[R](t)
	n := int(rec.NumRows())
	start := len(dst)
	dst = append(dst, make([]R, n)...)
	for i, c := range t.Columns {
		col := rec.Column(i)
		for r := 0; r < n; r++ {
			f := reflect.ValueOf(&dst[start+r]).Elem().FieldByIndex(c.field)
			switch c.Type {
			case String:
				f.SetString(col.(*array.String).Value(r))
			case Int:
				f.SetInt(col.(*array.Int64).Value(r))
			case Float:
				f.SetFloat(col.(*array.Float64).Value(r))
			case Bool:
				f.SetBool(col.(*array.Boolean).Value(r))
			}
		}
	}
	return dst
}

// WriteParquetFile writes rows of table t as one Parquet file, atomically. It is for output
// tables (measurement summaries, predictions), which are not checked like inputs.
func WriteParquetFile[R any](path string, t *Table, rows []R) error {
	rec := RecordFromRows(t, rows, memory.DefaultAllocator)
	defer rec.Release()
	var buf bytes.Buffer
	fw, err := pqarrow.NewFileWriter(t.schema, &buf, parquetProps(t, nil), pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	if err != nil {
		return fmt.Errorf("datasets: %w", err)
	}
	if err := fw.WriteBuffered(rec); err != nil {
		return fmt.Errorf("datasets: %s: %w", path, err)
	}
	if err := fw.Close(); err != nil {
		return fmt.Errorf("datasets: %s: %w", path, err)
	}
	if err := atomicio.WriteFile(path, buf.Bytes()); err != nil {
		return fmt.Errorf("datasets: %w", err)
	}
	return nil
}

// ReadParquetFile reads a whole Parquet file of table t (an output table) into row structs.
// A missing, damaged or foreign file is an *InputError naming it, never a panic.
func ReadParquetFile[R any](path string, t *Table) ([]R, error) {
	var rows []R
	err := ScanParquetFile(context.Background(), path, t, memory.DefaultAllocator, func(rec arrow.Record) error {
		rows = AppendRows(t, rec, rows)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return rows, nil
}

// ScanParquetFile streams a Parquet file of table t (an output table, or a dataset's table
// file read without its manifest) to fn, record batch by record batch, with the checks of
// Dataset.Scan: a file whose columns are not t's is an *InputError (schema-mismatch), a
// damaged one an *InputError (corrupt), never a panic. Records are released after fn returns.
func ScanParquetFile(ctx context.Context, path string, t *Table, mem memory.Allocator, fn func(arrow.Record) error) error {
	f, err := os.Open(path)
	if err != nil {
		if os.IsNotExist(err) {
			return inputErr(Location{File: path}, "", ErrMissingFile, "no such file")
		}
		return fmt.Errorf("datasets: %w", err)
	}
	defer f.Close()
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	return readTable(ctx, path, f, t, mem, fn)
}

// TableKey is the key of the Parquet file metadata entry that names the commcal table a file
// holds (every file commcal writes has it).
const TableKey = "commcal.table"

// ParquetTable finds the table of a Parquet file that commcal wrote, by the file's TableKey
// metadata, among DefinedTables. A file without it, or of a table this program does not
// define, is an *InputError.
func ParquetTable(path string) (*Table, error) {
	f, err := os.Open(path)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, inputErr(Location{File: path}, "", ErrMissingFile, "no such file")
		}
		return nil, fmt.Errorf("datasets: %w", err)
	}
	defer f.Close()
	pr, err := openParquet(path, f, 1, false, memory.DefaultAllocator)
	if err != nil {
		return nil, err
	}
	defer pr.close()
	v := pr.rdr.MetaData().KeyValueMetadata().FindValue(TableKey)
	if v == nil {
		return nil, inputErr(Location{File: path}, "", ErrUnknownTable, "not a table commcal wrote: no %q in the file's metadata", TableKey)
	}
	name := *v
	var names []string
	for _, t := range DefinedTables() {
		if t.Name == name {
			return t, nil
		}
		names = append(names, t.Name)
	}
	return nil, inputErr(Location{File: path}, "", ErrUnknownTable, "table %s, want one of %s", quote(name), list(names))
}
