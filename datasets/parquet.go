package datasets

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// parquetReader reads a Parquet file record batch by record batch. It is the one way this
// package reads Parquet, and it never lets the Arrow library's panics through:
//
//   - openParquet checks the footer's metadata before anything is read on its word: every row
//     group's row count and column count, every column chunk's physical type, value count,
//     compression codec and byte range (inside the file), and every column's logical type
//     against its physical type. Damaged metadata is the cause of most of the library's panics
//     (a slice made with a negative length, an index past a short row group).
//   - Columns are read with one pqarrow.ColumnReader each, on the caller's goroutine.
//     pqarrow's RecordReader builds its column readers on errgroup goroutines (even when not
//     parallel), where a panic cannot be recovered and kills the process.
//   - Every call into the library recovers a panic into an *InputError of kind corrupt that
//     names the file: a page whose bytes are damaged is only found while decoding it.
//   - A batch whose columns differ in length, or a file that yields fewer or more rows than its
//     metadata says, is corrupt.
type parquetReader struct {
	path   string
	rdr    *file.Reader
	fr     *pqarrow.FileReader
	schema *arrow.Schema // the whole file's Arrow schema
	groups []int         // row groups that hold rows
	cols   []*pqarrow.ColumnReader
	out    *arrow.Schema // schema of the records next returns
	mem    memory.Allocator
	batch  int64
	rows   int64 // rows the metadata promises
	read   int64 // rows returned so far
	done   bool
}

// corruptErr is the error of a damaged Parquet file.
func corruptErr(path string, row int64, format string, a ...any) *InputError {
	return inputErr(Location{File: path, Row: row}, "", ErrCorrupt, format, a...)
}

// recoverCorrupt turns a panic of the Arrow library into a corrupt-file error in *err.
func recoverCorrupt(path string, row int64, err *error) {
	if r := recover(); r != nil {
		*err = corruptErr(path, row, "damaged Parquet file (the reader failed: %v)", r)
	}
}

// openParquet opens a Parquet file and checks its metadata, telling a file that is not
// Parquet at all from one that is truncated or damaged. With dictStrings, every BYTE_ARRAY
// column is read as an Arrow dictionary array (the distinct values and an index per row, as
// Parquet writers store repetitive strings), which is cheaper to decode than a plain string
// array and lets the checks look at each distinct value once.
func openParquet(path string, rs readSeekerAt, batchRows int, dictStrings bool, mem memory.Allocator) (p *parquetReader, err error) {
	loc := Location{File: path}
	head := make([]byte, 4)
	if _, err := io.ReadFull(rs, head); err != nil || !bytes.Equal(head, []byte("PAR1")) {
		return nil, inputErr(loc, "", ErrNotParquet, "no Parquet magic number at the start of the file")
	}
	size, err := rs.Seek(0, io.SeekEnd)
	if err != nil {
		return nil, fmt.Errorf("datasets: %s: %w", path, err)
	}
	if _, err := rs.Seek(0, io.SeekStart); err != nil {
		return nil, fmt.Errorf("datasets: %s: %w", path, err)
	}
	var rdr *file.Reader
	defer func() {
		if r := recover(); r != nil {
			if rdr != nil {
				rdr.Close()
			}
			p, err = nil, corruptErr(path, 0, "damaged Parquet metadata (the reader failed: %v)", r)
		}
	}()
	rdr, err = file.NewParquetReader(rs)
	if err != nil {
		return nil, corruptErr(path, 0, "truncated or damaged Parquet file: %v", err)
	}
	groups, err := checkParquetMeta(path, rdr.MetaData(), size)
	if err != nil {
		rdr.Close()
		return nil, err
	}
	dropStoredArrowSchema(rdr.MetaData())
	// The reader reserves a whole batch per column up front: no more than the file holds.
	batch := min(int64(batchRows), max(rdr.MetaData().NumRows, 1))
	props := pqarrow.ArrowReadProperties{BatchSize: batch}
	if dictStrings {
		for j := 0; j < rdr.MetaData().Schema.NumColumns(); j++ {
			if rdr.MetaData().Schema.Column(j).PhysicalType() == parquet.Types.ByteArray {
				props.SetReadDict(j, true)
			}
		}
	}
	fr, err := pqarrow.NewFileReader(rdr, props, mem)
	if err != nil {
		rdr.Close()
		return nil, corruptErr(path, 0, "unreadable Parquet schema: %v", err)
	}
	sc, err := fr.Schema()
	if err != nil {
		rdr.Close()
		return nil, corruptErr(path, 0, "unreadable Parquet schema: %v", err)
	}
	if len(fr.Manifest.Fields) != sc.NumFields() {
		rdr.Close()
		return nil, corruptErr(path, 0, "the Parquet schema has %d fields and its Arrow schema %d", len(fr.Manifest.Fields), sc.NumFields())
	}
	return &parquetReader{path: path, rdr: rdr, fr: fr, schema: sc, groups: groups, mem: mem, batch: batch, rows: rdr.MetaData().NumRows}, nil
}

// checkParquetMeta checks what the reader would otherwise trust: row counts, column counts,
// byte ranges and types. size is the file's length. It returns the row groups that hold rows
// (a writer may leave an empty row group, whose column chunks point nowhere).
func checkParquetMeta(path string, md *metadata.FileMetaData, size int64) ([]int, error) {
	bad := func(format string, a ...any) ([]int, error) { return nil, corruptErr(path, 0, format, a...) }
	if md == nil || md.Schema == nil || md.Schema.Root() == nil {
		return bad("unreadable Parquet schema")
	}
	if md.NumRows < 0 {
		return bad("metadata says %d rows", md.NumRows)
	}
	var groups []int
	sch := md.Schema
	ncols := sch.NumColumns()
	for j := 0; j < ncols; j++ {
		c := sch.Column(j)
		if lt := c.LogicalType(); lt != nil && (!lt.IsValid() || !lt.IsApplicable(c.PhysicalType(), int32(c.TypeLength()))) {
			return bad("column %s: logical type %s does not apply to its physical type %s", quote(c.Path()), lt, c.PhysicalType())
		}
	}
	var total int64
	for i := 0; i < len(md.RowGroups); i++ {
		rg := md.RowGroup(i)
		n := rg.NumRows()
		if n < 0 || n > md.NumRows-total {
			return bad("row group %d has %d rows, more than the file's %d", i, n, md.NumRows)
		}
		total += n
		if rg.NumColumns() != ncols {
			return bad("row group %d has %d columns, the schema %d", i, rg.NumColumns(), ncols)
		}
		if n == 0 {
			continue
		}
		groups = append(groups, i)
		for j := 0; j < ncols; j++ {
			c := sch.Column(j)
			cc, err := rg.ColumnChunk(j)
			if err != nil {
				return bad("row group %d, column %s: %v", i, quote(c.Path()), err)
			}
			if cc.CryptoMetadata() != nil {
				return nil, inputErr(Location{File: path}, c.Path(), ErrUnsupported, "encrypted Parquet columns are not supported")
			}
			if cc.Type() != c.PhysicalType() {
				return bad("row group %d, column %s: physical type %s, the schema says %s", i, quote(c.Path()), cc.Type(), c.PhysicalType())
			}
			if _, err := compress.GetCodec(cc.Compression()); err != nil {
				return bad("row group %d, column %s: compression: %v", i, quote(c.Path()), err)
			}
			start, length := cc.DataPageOffset(), cc.TotalCompressedSize()
			if cc.HasDictionaryPage() && cc.DictionaryPageOffset() > 0 && cc.DictionaryPageOffset() < start {
				start = cc.DictionaryPageOffset()
			}
			if start < 4 || length <= 0 || start >= size || length > size-start {
				return bad("row group %d, column %s: data at bytes %d+%d, outside the file's %d bytes", i, quote(c.Path()), start, length, size)
			}
			if c.MaxRepetitionLevel() == 0 && cc.NumValues() != n {
				return bad("row group %d, column %s: %d values in %d rows", i, quote(c.Path()), cc.NumValues(), n)
			}
		}
	}
	if total != md.NumRows {
		return bad("row groups hold %d rows, the metadata says %d", total, md.NumRows)
	}
	return groups, nil
}

// arrowSchemaKey is the key-value metadata entry in which Arrow writers (pqarrow with
// WithStoreSchema, pyarrow) store the Arrow schema of the file, as a base64 Arrow IPC
// flatbuffer.
const arrowSchemaKey = "ARROW:schema"

// dropStoredArrowSchema removes the stored Arrow schema from the file's metadata, so that
// column types come from the Parquet schema alone. The Go Arrow library decodes the stored
// flatbuffer without verifying it: one damaged length in it makes the reader allocate tens of
// gigabytes, a fatal out-of-memory that no recover catches. The Parquet schema has all our
// tables need (names, physical and logical types, required or optional); what the stored
// schema adds is Arrow-only detail, such as a pandas categorical column's dictionary type
// (read instead as the plain strings it holds) or field metadata (units, which the table
// definitions already carry).
func dropStoredArrowSchema(md *metadata.FileMetaData) {
	kv := md.FileMetaData.KeyValueMetadata
	out := kv[:0:0]
	for _, e := range kv {
		if e == nil || e.Key != arrowSchemaKey {
			out = append(out, e)
		}
	}
	md.FileMetaData.KeyValueMetadata = out
}

// Schema is the file's Arrow schema.
func (p *parquetReader) Schema() *arrow.Schema { return p.schema }

// NumRows is the number of rows the file's metadata promises.
func (p *parquetReader) NumRows() int64 { return p.rows }

// duplicateField returns a field name that occurs twice in the schema, or "".
func (p *parquetReader) duplicateField() string {
	seen := map[string]bool{}
	for _, f := range p.schema.Fields() {
		if seen[f.Name] {
			return f.Name
		}
		seen[f.Name] = true
	}
	return ""
}

// selectFields prepares to read the given top-level fields, in that order. They must be flat
// (leaf) columns.
func (p *parquetReader) selectFields(ctx context.Context, fields []int) (err error) {
	defer recoverCorrupt(p.path, 0, &err)
	out := make([]arrow.Field, len(fields))
	for i, f := range fields {
		sf := &p.fr.Manifest.Fields[f]
		if len(sf.Children) != 0 || !sf.IsLeaf() {
			return inputErr(Location{File: p.path}, sf.Field.Name, ErrWrongType, "nested column of type %s, want a flat column", sf.Field.Type)
		}
		cr, err := p.fr.GetFieldReader(ctx, f, map[int]bool{sf.ColIndex: true}, p.groups)
		if err != nil {
			return corruptErr(p.path, 0, "column %s: %v", quote(sf.Field.Name), err)
		}
		if cr == nil {
			return corruptErr(p.path, 0, "column %s has no reader", quote(sf.Field.Name))
		}
		p.cols = append(p.cols, cr)
		out[i] = p.schema.Field(f)
	}
	md := p.schema.Metadata()
	p.out = arrow.NewSchema(out, &md)
	return nil
}

// next returns the next record of the selected fields (the caller releases it), or nil at the
// end of the file.
func (p *parquetReader) next() (rec arrow.Record, err error) {
	if p.done {
		return nil, nil
	}
	defer recoverCorrupt(p.path, p.read+1, &err)
	cols := make([]arrow.Array, len(p.cols))
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	n := -1
	for i, cr := range p.cols {
		chunked, err := cr.NextBatch(p.batch)
		if err != nil {
			return nil, corruptErr(p.path, p.read+1, "column %s: %v", quote(p.out.Field(i).Name), err)
		}
		cols[i], err = concatChunks(chunked, p.mem)
		chunked.Release()
		if err != nil {
			return nil, corruptErr(p.path, p.read+1, "column %s: %v", quote(p.out.Field(i).Name), err)
		}
		switch {
		case n < 0:
			n = cols[i].Len()
		case cols[i].Len() != n:
			return nil, corruptErr(p.path, p.read+1, "column %s has %d values where column %s has %d", quote(p.out.Field(i).Name), cols[i].Len(), quote(p.out.Field(0).Name), n)
		}
		if !arrow.TypeEqual(cols[i].DataType(), p.out.Field(i).Type) {
			return nil, corruptErr(p.path, p.read+1, "column %s read as %s, its schema says %s", quote(p.out.Field(i).Name), cols[i].DataType(), p.out.Field(i).Type)
		}
		if d, ok := cols[i].(*array.Dictionary); ok {
			if r := badDictIndex(d); r >= 0 {
				return nil, corruptErr(p.path, p.read+int64(r)+1, "column %s: index %d into a dictionary of %d values", quote(p.out.Field(i).Name), d.GetValueIndex(r), d.Dictionary().Len())
			}
		}
	}
	if n <= 0 {
		p.done = true
		if p.read != p.rows {
			return nil, corruptErr(p.path, 0, "read %d rows, the metadata says %d", p.read, p.rows)
		}
		return nil, nil
	}
	if int64(n) > p.rows-p.read {
		return nil, corruptErr(p.path, p.read+1, "more rows than the metadata's %d", p.rows)
	}
	p.read += int64(n)
	return array.NewRecord(p.out, cols, int64(n)), nil
}

// badDictIndex returns the first row of d whose index is outside its dictionary, or -1. The
// library does not check the indices it decodes from a page.
func badDictIndex(d *array.Dictionary) int {
	n := d.Dictionary().Len()
	if idx, ok := d.Indices().(*array.Int32); ok && d.NullN() == 0 { // what pqarrow reads
		for r, i := range idx.Int32Values() {
			if uint32(i) >= uint32(n) {
				return r
			}
		}
		return -1
	}
	for r := 0; r < d.Len(); r++ {
		if d.IsValid(r) {
			if i := d.GetValueIndex(r); i < 0 || i >= n {
				return r
			}
		}
	}
	return -1
}

// concatChunks returns a batch (which may span row groups) as one array.
func concatChunks(c *arrow.Chunked, mem memory.Allocator) (arrow.Array, error) {
	chunks := c.Chunks()
	if len(chunks) == 1 {
		chunks[0].Retain()
		return chunks[0], nil
	}
	if len(chunks) == 0 {
		return array.MakeArrayOfNull(mem, c.DataType(), 0), nil
	}
	return array.Concatenate(chunks, mem)
}

func (p *parquetReader) close() {
	for _, c := range p.cols {
		c.Release()
	}
	p.cols = nil
	p.rdr.Close()
}

// readTable reads a Parquet file whose columns are exactly those of table t (a dataset's
// table file, or an output table), calling fn with each record. Records are released after fn
// returns.
func readTable(ctx context.Context, path string, rs readSeekerAt, t *Table, mem memory.Allocator, fn func(arrow.Record) error) error {
	pr, err := openParquet(path, rs, 1<<16, false, mem)
	if err != nil {
		return err
	}
	defer pr.close()
	if diff := schemaDiff(pr.Schema(), t.schema); diff != "" {
		return inputErr(Location{File: path}, "", ErrSchemaMismatch, "not a %s table: %s", t.Name, diff)
	}
	fields := make([]int, len(t.Columns))
	for i := range fields {
		fields[i] = i
	}
	if err := pr.selectFields(ctx, fields); err != nil {
		return err
	}
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		rec, err := pr.next()
		if err != nil {
			return err
		}
		if rec == nil {
			return nil
		}
		err = fn(rec)
		rec.Release()
		if err != nil {
			return err
		}
	}
}

// schemaDiff says, in one line, how the columns of got differ from want's (names, order,
// types, nullability; metadata is ignored, Parquet adds its own), or "" when they agree.
func schemaDiff(got, want *arrow.Schema) string {
	var missing, extra, typ []string
	for _, f := range want.Fields() {
		idx := got.FieldIndices(f.Name)
		switch {
		case len(idx) == 0:
			missing = append(missing, f.Name)
		case len(idx) > 1:
			typ = append(typ, fmt.Sprintf("%s appears %d times", f.Name, len(idx)))
		default:
			g := got.Field(idx[0])
			if !arrow.TypeEqual(g.Type, f.Type) {
				typ = append(typ, fmt.Sprintf("%s is %s, want %s", f.Name, g.Type, f.Type))
			} else if g.Nullable != f.Nullable {
				typ = append(typ, fmt.Sprintf("%s is nullable=%t, want %t", f.Name, g.Nullable, f.Nullable))
			}
		}
	}
	for _, f := range got.Fields() {
		if !want.HasField(f.Name) {
			extra = append(extra, f.Name)
		}
	}
	var parts []string
	if len(missing) > 0 {
		parts = append(parts, "missing "+strings.Join(missing, ", "))
	}
	if len(extra) > 0 {
		parts = append(parts, "unexpected "+strings.Join(extra, ", "))
	}
	parts = append(parts, typ...)
	if len(parts) == 0 {
		for i := range want.Fields() {
			if got.Field(i).Name != want.Field(i).Name {
				parts = append(parts, fmt.Sprintf("column %d is %s, want %s (order differs)", i+1, got.Field(i).Name, want.Field(i).Name))
				break
			}
		}
	}
	return strings.Join(parts, "; ")
}

// parquet streams a Parquet file, record batch by record batch, into the table its columns
// identify. Column order does not matter and extra columns are not read; a column name that
// occurs twice is an error. Column types come from the Parquet schema (see
// dropStoredArrowSchema); string columns are read as dictionaries (see openParquet) and
// written out plainly, so dictionary-encoded strings, which pandas and pyarrow write by
// default and for categorical columns, and plain ones read alike; narrower integer and float
// types are widened to the table's.
func (ing *ingester) parquet(ctx context.Context, src Source, rs readSeekerAt, idx int32) (*Table, int64, error) {
	loc := Location{File: src.Path}
	pr, err := openParquet(src.Path, rs, ing.opts.BatchRows, true, ing.opts.Mem)
	if err != nil {
		return nil, 0, err
	}
	defer pr.close()
	sc := pr.Schema()
	if dup := pr.duplicateField(); dup != "" {
		return nil, 0, inputErr(loc, dup, ErrDuplicateColumn, "column %s appears more than once", quote(dup))
	}
	names := make([]string, sc.NumFields())
	for i, f := range sc.Fields() {
		names[i] = f.Name
	}
	t, err := inferTable(loc, names, src.Table)
	if err != nil {
		return nil, 0, err
	}
	if pr.NumRows() == 0 {
		return nil, 0, inputErr(loc, "", ErrEmptyFile, "a schema and no rows")
	}
	// Read only the table's columns, in the table's order.
	fields := make([]int, len(t.Columns))
	for ci, c := range t.Columns {
		fi := sc.FieldIndices(c.Name)[0]
		if dt := valueType(sc.Field(fi).Type); !convertible(dt, c.Type) {
			return nil, 0, inputErr(loc, c.Name, ErrWrongType, "type %s, want %s", dt, t.schema.Field(ci).Type)
		}
		fields[ci] = fi
	}
	if err := pr.selectFields(ctx, fields); err != nil {
		return nil, 0, err
	}
	var rows int64
	for {
		in, err := pr.next()
		if err != nil {
			return nil, 0, err
		}
		if in == nil {
			break
		}
		rec, dicts, err := conform(t, in, ing.opts.Mem)
		if err != nil {
			in.Release()
			return nil, 0, inputErr(Location{File: src.Path, Row: rows + 1}, "", ErrUnsupported, "%v", err)
		}
		err = ing.put(t, rec, dicts, batchLoc{file: src.Path, firstRow: rows + 1}, idx)
		rows += rec.NumRows()
		rec.Release()
		in.Release()
		if err != nil {
			return nil, 0, err
		}
	}
	if rows == 0 {
		return nil, 0, inputErr(loc, "", ErrEmptyFile, "no rows")
	}
	return t, rows, nil
}

// convertible says whether a Parquet column's Arrow type can be read as a column type.
func convertible(dt arrow.DataType, want ColType) bool {
	switch want {
	case String:
		return dt.ID() == arrow.STRING
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

// valueType is the type of a column's values: a dictionary's value type, else dt itself.
func valueType(dt arrow.DataType) arrow.DataType {
	if d, ok := dt.(*arrow.DictionaryType); ok {
		return d.ValueType
	}
	return dt
}

// conform returns rec (columns already in table order) under the table's schema, widening
// columns whose type differs and writing dictionary-encoded strings out plainly. dicts holds
// by column the dictionary arrays of rec (nil for the other columns); they stay valid while
// rec does. The caller releases out.
func conform(t *Table, rec arrow.Record, mem memory.Allocator) (out arrow.Record, dicts []*array.Dictionary, err error) {
	n := int(rec.NumRows())
	cols := make([]arrow.Array, len(t.Columns))
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	for ci := range t.Columns {
		in := rec.Column(ci)
		want := t.schema.Field(ci).Type
		switch {
		case arrow.TypeEqual(in.DataType(), want):
			in.Retain()
			cols[ci] = in
		case in.DataType().ID() == arrow.DICTIONARY:
			if dicts == nil {
				dicts = make([]*array.Dictionary, len(t.Columns))
			}
			dicts[ci] = in.(*array.Dictionary)
			if cols[ci], err = plainStrings(dicts[ci], mem); err != nil {
				return nil, nil, fmt.Errorf("column %q: %w", t.Columns[ci].Name, err)
			}
		default:
			if cols[ci], err = widen(in, want, mem); err != nil {
				return nil, nil, fmt.Errorf("column %q: %w", t.Columns[ci].Name, err)
			}
		}
	}
	return array.NewRecord(t.schema, cols, int64(n)), dicts, nil
}

// plainStrings writes a dictionary array of strings (with int32 indices, as pqarrow reads
// them, all inside the dictionary) out as a string array. The caller releases it.
func plainStrings(d *array.Dictionary, mem memory.Allocator) (arrow.Array, error) {
	values := d.Dictionary().(*array.String)
	idx := d.Indices().(*array.Int32).Int32Values()
	n, nulls := len(idx), d.NullN() > 0
	size := 0
	for r, i := range idx {
		if !nulls || d.IsValid(r) {
			size += values.ValueLen(int(i))
		}
	}
	if size > math.MaxInt32 {
		return nil, fmt.Errorf("%d bytes of strings in %d rows, more than a string array holds", size, n)
	}
	offsets, data := memory.NewResizableBuffer(mem), memory.NewResizableBuffer(mem)
	defer offsets.Release()
	defer data.Release()
	offsets.Resize((n + 1) * arrow.Int32SizeBytes)
	data.Resize(size)
	offs, buf, pos := arrow.Int32Traits.CastFromBytes(offsets.Bytes()), data.Bytes(), 0
	for r, i := range idx {
		offs[r] = int32(pos)
		if !nulls || d.IsValid(r) {
			pos += copy(buf[pos:], values.Value(int(i)))
		}
	}
	offs[n] = int32(pos)
	var valid *memory.Buffer
	if nulls {
		valid = memory.NewResizableBuffer(mem)
		defer valid.Release()
		valid.Resize(int(bitutil.BytesForBits(int64(n))))
		bitutil.CopyBitmap(d.NullBitmapBytes(), d.Data().Offset(), n, valid.Bytes(), 0)
	}
	ad := array.NewData(arrow.BinaryTypes.String, n, []*memory.Buffer{valid, offsets, data}, nil, d.NullN(), 0)
	defer ad.Release()
	return array.NewStringData(ad), nil
}

// widen casts an integer or float32 array to the schema's type (int64 or float64), keeping
// nulls (the checks report them). Every such cast is exact. The caller releases it.
func widen(in arrow.Array, want arrow.DataType, mem memory.Allocator) (arrow.Array, error) {
	return compute.CastArray(compute.WithAllocator(context.Background(), mem), in, compute.SafeCastOptions(want))
}
