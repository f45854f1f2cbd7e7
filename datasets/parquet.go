package datasets

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/apache/arrow/go/v15/parquet/file"
	"github.com/apache/arrow/go/v15/parquet/pqarrow"
)

// openParquet opens a Parquet file for streaming, telling a file that is not Parquet at all
// from one that is truncated or damaged.
func openParquet(path string, rs readSeekerAt, batchRows int, mem memory.Allocator) (*pqarrow.FileReader, error) {
	loc := Location{File: path}
	head := make([]byte, 4)
	if _, err := io.ReadFull(rs, head); err != nil || !bytes.Equal(head, []byte("PAR1")) {
		return nil, inputErr(loc, "", ErrNotParquet, "no Parquet magic number at the start of the file")
	}
	if _, err := rs.Seek(0, io.SeekStart); err != nil {
		return nil, fmt.Errorf("datasets: %s: %w", path, err)
	}
	rdr, err := file.NewParquetReader(rs)
	if err != nil {
		return nil, inputErr(loc, "", ErrCorrupt, "truncated or damaged Parquet file: %v", err)
	}
	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{BatchSize: int64(batchRows)}, mem)
	if err != nil {
		rdr.Close()
		return nil, inputErr(loc, "", ErrCorrupt, "unreadable Parquet schema: %v", err)
	}
	return fr, nil
}

// parquet streams a Parquet file, record batch by record batch, into the table its columns
// identify. Column order does not matter and extra columns are not read. Narrower integer and
// float types and large strings are widened to the schema's types.
func (ing *ingester) parquet(ctx context.Context, src Source, rs readSeekerAt, idx int32) (*Table, int64, error) {
	loc := Location{File: src.Path}
	fr, err := openParquet(src.Path, rs, ing.opts.BatchRows, ing.opts.Mem)
	if err != nil {
		return nil, 0, err
	}
	defer fr.ParquetReader().Close()
	sc, err := fr.Schema()
	if err != nil {
		return nil, 0, inputErr(loc, "", ErrCorrupt, "unreadable Parquet schema: %v", err)
	}
	names := make([]string, sc.NumFields())
	for i, f := range sc.Fields() {
		names[i] = f.Name
	}
	t, err := inferTable(loc, names, src.Table)
	if err != nil {
		return nil, 0, err
	}
	if fr.ParquetReader().NumRows() == 0 {
		return nil, 0, inputErr(loc, "", ErrEmptyFile, "a schema and no rows")
	}
	// Read only the table's columns, in the table's order.
	cols := make([]int, len(t.Columns))
	for ci, c := range t.Columns {
		fi := sc.FieldIndices(c.Name)[0]
		if !convertible(sc.Field(fi).Type, c.Type) {
			return nil, 0, inputErr(loc, c.Name, ErrWrongType, "type %s, want %s", sc.Field(fi).Type, t.schema.Field(ci).Type)
		}
		cols[ci] = fi
	}
	rr, err := fr.GetRecordReader(ctx, leafIndices(fr, cols), nil)
	if err != nil {
		return nil, 0, inputErr(loc, "", ErrCorrupt, "%v", err)
	}
	defer rr.Release()
	var rows int64
	for rr.Next() {
		in := rr.Record()
		rec := conform(t, in, ing.opts.Mem)
		err := ing.put(t, rec, batchLoc{file: src.Path, firstRow: rows + 1}, idx)
		rows += rec.NumRows()
		rec.Release()
		if err != nil {
			return nil, 0, err
		}
	}
	if err := rr.Err(); err != nil && !errors.Is(err, io.EOF) {
		return nil, 0, inputErr(Location{File: src.Path, Row: rows + 1}, "", ErrCorrupt, "truncated or damaged data: %v", err)
	}
	return t, rows, nil
}

// leafIndices maps top-level field indices to Parquet leaf column indices. Our tables are flat,
// so a field with nested children cannot match a table column's type and was rejected above.
func leafIndices(fr *pqarrow.FileReader, fields []int) []int {
	m := fr.Manifest
	out := make([]int, len(fields))
	for i, f := range fields {
		out[i] = m.Fields[f].ColIndex
	}
	return out
}

// convertible says whether a Parquet column's Arrow type can be read as a column type.
func convertible(dt arrow.DataType, want ColType) bool {
	switch want {
	case String:
		return dt.ID() == arrow.STRING || dt.ID() == arrow.LARGE_STRING
	case Int:
		switch dt.ID() {
		case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.UINT8, arrow.UINT16, arrow.UINT32:
			return true
		}
	case Float:
		return dt.ID() == arrow.FLOAT64 || dt.ID() == arrow.FLOAT32
	}
	return false
}

// conform returns rec (columns already in table order) under the table's schema, widening
// columns whose type differs. The caller releases the result.
func conform(t *Table, rec arrow.Record, mem memory.Allocator) arrow.Record {
	n := int(rec.NumRows())
	cols := make([]arrow.Array, len(t.Columns))
	defer func() {
		for _, c := range cols {
			c.Release()
		}
	}()
	for ci := range t.Columns {
		in := rec.Column(ci)
		want := t.schema.Field(ci).Type
		if arrow.TypeEqual(in.DataType(), want) {
			in.Retain()
			cols[ci] = in
			continue
		}
		cols[ci] = widen(in, want, mem)
	}
	return array.NewRecord(t.schema, cols, int64(n))
}

// widen copies an integer, float32 or large-string array into the wider type, keeping nulls
// (the checks report them).
func widen(in arrow.Array, want arrow.DataType, mem memory.Allocator) arrow.Array {
	n := in.Len()
	switch want.ID() {
	case arrow.INT64:
		b := array.NewInt64Builder(mem)
		defer b.Release()
		for i := 0; i < n; i++ {
			if in.IsNull(i) {
				b.AppendNull()
				continue
			}
			var v int64
			switch a := in.(type) {
			case *array.Int8:
				v = int64(a.Value(i))
			case *array.Int16:
				v = int64(a.Value(i))
			case *array.Int32:
				v = int64(a.Value(i))
			case *array.Uint8:
				v = int64(a.Value(i))
			case *array.Uint16:
				v = int64(a.Value(i))
			case *array.Uint32:
				v = int64(a.Value(i))
			}
			b.Append(v)
		}
		return b.NewArray()
	case arrow.FLOAT64:
		b := array.NewFloat64Builder(mem)
		defer b.Release()
		a := in.(*array.Float32)
		for i := 0; i < n; i++ {
			if in.IsNull(i) {
				b.AppendNull()
				continue
			}
			b.Append(float64(a.Value(i)))
		}
		return b.NewArray()
	case arrow.STRING:
		b := array.NewStringBuilder(mem)
		defer b.Release()
		a := in.(*array.LargeString)
		for i := 0; i < n; i++ {
			if in.IsNull(i) {
				b.AppendNull()
				continue
			}
			b.Append(a.Value(i))
		}
		return b.NewArray()
	}
	panic("datasets: cannot widen " + in.DataType().String())
}
