package datasets

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/internal/badinput"
)

// genTransfers makes n transfers of random patterns on cl, seeded.
func genTransfers(cl *cluster.Cluster, n int, seed uint64) []Transfer {
	nodes := cl.Nodes()
	rng := rand.New(rand.NewPCG(seed, 4))
	var rows []Transfer
	for p := 0; len(rows) < n; p++ {
		for f := 0; f < 3 && len(rows) < n; f++ {
			s := rng.IntN(len(nodes))
			d := (s + 1 + rng.IntN(len(nodes)-1)) % len(nodes)
			rows = append(rows, Transfer{Cluster: cl.Name(), Experiment: "random", PatternID: fmt.Sprintf("p%d", p), FlowID: int64(f),
				Src: nodes[s].Name, Dst: nodes[d].Name, Bytes: 1 << (10 + rng.IntN(14)), TStart: float64(p), TEnd: float64(p) + 0.001 + rng.Float64()})
		}
	}
	return rows
}

// tableFile writes rows as a dataset with the package's own writer and returns the bytes of
// the table's Parquet file.
func tableFile[R any](t testing.TB, cl *cluster.Cluster, tab *Table, rows []R) []byte {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "ds")
	w, err := NewDirWriter(dir, false, cl, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteRows(w, tab, "gen", rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(&Manifest{Format: ManifestFormat, Cluster: cl.Description()}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, tab.File()))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// ingestFile writes data as a file called name and ingests it. On error it checks that nothing
// was left behind and that the error is an *InputError naming the file on one line.
func ingestFile(t testing.TB, cl *cluster.Cluster, name string, data []byte, src Source) ([]Transfer, error) {
	t.Helper()
	dir := t.TempDir()
	src.Path = filepath.Join(dir, name)
	if err := os.WriteFile(src.Path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	_, err := Ingest(context.Background(), IngestOptions{Cluster: cl, Sources: []Source{src}, Out: out, Created: fixedTime})
	if err != nil {
		if entries, _ := os.ReadDir(dir); len(entries) != 1 {
			t.Fatalf("files left after error %v: %v", err, entries)
		}
		checkInputError(t, err, src.Path)
		return nil, err
	}
	ds, err := Open(out)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := ReadAll[Transfer](context.Background(), ds, TransfersTable)
	if err != nil {
		t.Fatal(err)
	}
	return rows, nil
}

// checkInputError fails unless err is an *InputError that names file and fits on one line.
func checkInputError(t testing.TB, err error, file string) *InputError {
	t.Helper()
	ie, ok := IsInputError(err)
	if !ok {
		t.Fatalf("%T %v is not an *InputError", err, err)
	}
	if ie.Loc.File != file {
		t.Errorf("error names %q, want %q: %v", ie.Loc.File, file, err)
	}
	if strings.ContainsAny(err.Error(), "\n\r") {
		t.Errorf("error message is not one line: %q", err.Error())
	}
	if len(err.Error()) > badinput.MaxMessage {
		t.Errorf("error message of %d bytes, more than %d: %.200q…", len(err.Error()), badinput.MaxMessage, err.Error())
	}
	return ie
}

// wantKind fails unless err is an *InputError of the kind (ingestFile has checked the file).
func wantKind(t testing.TB, err error, kind ErrKind) *InputError {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want %s", kind)
	}
	ie, ok := IsInputError(err)
	if !ok {
		t.Fatalf("%T %v is not an *InputError", err, err)
	}
	if ie.Kind != kind {
		t.Fatalf("kind %s, want %s: %v", ie.Kind, kind, err)
	}
	return ie
}

// rewriteFooter decodes a Parquet file's footer with the library, lets edit change it, and
// writes it back: a way to damage the metadata precisely.
func rewriteFooter(t testing.TB, data []byte, edit func(md *metadata.FileMetaData)) []byte {
	t.Helper()
	n := len(data)
	flen := int(binary.LittleEndian.Uint32(data[n-8 : n-4]))
	md, err := metadata.NewFileMetaData(data[n-8-flen:n-8], nil)
	if err != nil {
		t.Fatal(err)
	}
	edit(md)
	ser, err := md.Serialize(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := append(bytes.Clone(data[:n-8-flen]), ser...)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(ser)))
	return append(out, "PAR1"...)
}

// Damaged footers, each of which made the Arrow library panic (most of them on a goroutine of
// its own, where no recover reaches, so the whole process died) or read wrong data.
func TestParquetDamagedMetadata(t *testing.T) {
	cl := testCluster(t, "ccpe-testbed")
	good := tableFile(t, cl, TransfersTable, genTransfers(cl, 60, 1))
	// Schema element 0 is the root; 1…10 are the columns in table order, and column chunk
	// j of a row group is schema element j+1.
	cases := []struct {
		name string
		edit func(md *metadata.FileMetaData)
	}{
		{"negative chunk length", func(md *metadata.FileMetaData) {
			md.FileMetaData.RowGroups[0].Columns[3].MetaData.TotalCompressedSize = -336
		}},
		{"chunk past the end", func(md *metadata.FileMetaData) {
			md.FileMetaData.RowGroups[0].Columns[8].MetaData.DataPageOffset = 1 << 40
		}},
		{"chunk inside the magic", func(md *metadata.FileMetaData) { md.FileMetaData.RowGroups[0].Columns[9].MetaData.DataPageOffset = 0 }},
		{"row group with negative rows", func(md *metadata.FileMetaData) { md.FileMetaData.RowGroups[0].NumRows = -1 }},
		{"more rows than the row groups", func(md *metadata.FileMetaData) { md.FileMetaData.NumRows = 1000 }},
		{"rows and no row groups", func(md *metadata.FileMetaData) { md.FileMetaData.RowGroups = nil }},
		{"value count differs from rows", func(md *metadata.FileMetaData) { md.FileMetaData.RowGroups[0].Columns[7].MetaData.NumValues = 3 }},
		{"row group missing columns", func(md *metadata.FileMetaData) {
			md.FileMetaData.RowGroups[0].Columns = md.FileMetaData.RowGroups[0].Columns[:5]
		}},
		{"unknown codec", func(md *metadata.FileMetaData) { md.FileMetaData.RowGroups[0].Columns[8].MetaData.Codec += 50 }},
		{"chunk type differs from schema", func(md *metadata.FileMetaData) {
			md.FileMetaData.RowGroups[0].Columns[9].MetaData.Type = md.FileMetaData.RowGroups[0].Columns[0].MetaData.Type
		}},
		{"string logical type on an integer", func(md *metadata.FileMetaData) {
			*md.FileMetaData.Schema[1].Type = *md.FileMetaData.Schema[4].Type
		}},
		{"logical type of another column", func(md *metadata.FileMetaData) {
			md.FileMetaData.Schema[6].LogicalType = md.FileMetaData.Schema[4].LogicalType
		}},
		{"stored Arrow schema is not base64", func(md *metadata.FileMetaData) {
			for _, kv := range md.FileMetaData.KeyValueMetadata {
				if kv.Key == arrowSchemaKey {
					v := "%%% not base64 %%%"
					kv.Value = &v
				}
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			data := rewriteFooter(t, good, c.edit)
			if c.name == "logical type of another column" && bytes.Equal(data, rewriteFooter(t, good, func(*metadata.FileMetaData) {})) {
				t.Fatal("the edit changed nothing")
			}
			rows, err := ingestFile(t, cl, "t.parquet", data, Source{})
			if c.name == "stored Arrow schema is not base64" {
				// The stored Arrow schema is not read (dropStoredArrowSchema): the file is fine.
				if err != nil || len(rows) != 60 {
					t.Fatalf("%d rows, %v", len(rows), err)
				}
				return
			}
			wantKind(t, err, ErrCorrupt)
		})
	}
}

// unknownLogicalType damages the footer so that column src_node's logical type is a union
// member no reader knows (thrift field 9, unused): the Thrift decoder skips it and leaves an
// empty union, on which the library panics ("invalid logical type") while opening the file.
func unknownLogicalType(t testing.TB, good []byte) []byte {
	t.Helper()
	data := bytes.Clone(good)
	n := len(data)
	footer := data[n-8-int(binary.LittleEndian.Uint32(data[n-8:n-4])) : n-8]
	// The schema comes first in the footer. In Thrift's compact protocol, after the column's
	// name, its logical type is a field header (field 10, struct: 0x4c) and a union whose set
	// member is a field header (field 1 STRING, struct: 0x1c), the empty StringType (stop
	// 0x00) and the union's stop (0x00).
	name := bytes.Index(footer, []byte("src_node"))
	i := bytes.Index(footer[name:], []byte{0x4c, 0x1c, 0x00, 0x00})
	if name < 0 || i < 0 || i > 16 {
		t.Fatalf("cannot find src_node's logical type in the footer")
	}
	footer[name+i+1] = 0x9c // field 9 (unused), type struct
	return data
}

// An unknown logical type makes the library panic while reading the footer; it is a damaged
// file, reported as such.
func TestParquetUnknownLogicalType(t *testing.T) {
	cl := testCluster(t, "ccpe-testbed")
	good := tableFile(t, cl, TransfersTable, genTransfers(cl, 20, 11))
	_, err := ingestFile(t, cl, "t.parquet", unknownLogicalType(t, good), Source{})
	if ie := wantKind(t, err, ErrCorrupt); !strings.Contains(ie.Detail, "invalid logical type") {
		t.Errorf("not the library's panic: %v", err)
	}
}

// Pages whose compressed bytes are damaged. Each of the first 48 bytes of a column chunk is
// overwritten in turn (the page header, the snappy length and the first tags): every outcome
// is a dataset or an *InputError naming the file (ingestFile checks it), and the snappy
// decoder's rejection of a damaged page must have been met and reported as corrupt. (Arrow
// v15's snappy decoder panicked on such pages; arrow-go v18's returns "s2: corrupt input".
// Other damage still makes the library panic, a nil dereference while decoding a page, which
// openParquet's recover reports as "the reader failed".)
func TestParquetCorruptPage(t *testing.T) {
	cl := testCluster(t, "ccpe-testbed")
	good := tableFile(t, cl, TransfersTable, genTransfers(cl, 60, 2))
	n := len(good)
	md, err := metadata.NewFileMetaData(good[n-8-int(binary.LittleEndian.Uint32(good[n-8:n-4])):n-8], nil)
	if err != nil {
		t.Fatal(err)
	}
	snappy, panics := 0, 0
	for _, j := range []int{TransfersTable.ColumnIndex("t_end_s"), TransfersTable.ColumnIndex("src_node")} {
		cc, err := md.RowGroup(0).ColumnChunk(j)
		if err != nil {
			t.Fatal(err)
		}
		start := cc.DataPageOffset()
		if cc.HasDictionaryPage() && cc.DictionaryPageOffset() > 0 && cc.DictionaryPageOffset() < start {
			start = cc.DictionaryPageOffset()
		}
		for off := start; off < start+48; off++ {
			data := bytes.Clone(good)
			data[off] = 0xff
			_, err := ingestFile(t, cl, "t.parquet", data, Source{})
			ie, ok := IsInputError(err)
			if !ok || ie.Kind != ErrCorrupt {
				continue
			}
			if strings.Contains(ie.Detail, "decompress") && strings.Contains(ie.Detail, "corrupt input") {
				snappy++
			}
			if strings.Contains(ie.Detail, "the reader failed") {
				panics++
			}
		}
	}
	if snappy == 0 {
		t.Error("no damaged page met the snappy decoder's rejection")
	}
	t.Logf("%d damaged pages failed in the snappy decoder, %d panics of the library recovered", snappy, panics)
}

// corrupt damages data in place: 1–4 bit flips or byte overwrites, or a run of up to 16
// random bytes; half of the damage falls in the footer, where the metadata is.
func corrupt(rng *rand.Rand, data []byte, footer int) {
	pos := func() int {
		if rng.IntN(2) == 0 {
			return len(data) - 1 - rng.IntN(footer)
		}
		return rng.IntN(len(data))
	}
	switch rng.IntN(3) {
	case 0:
		for k := 1 + rng.IntN(4); k > 0; k-- {
			data[pos()] ^= 1 << rng.IntN(8)
		}
	case 1:
		for k := 1 + rng.IntN(4); k > 0; k-- {
			data[pos()] = byte(rng.Uint32())
		}
	default:
		p := pos()
		for k := 1 + rng.IntN(16); k > 0 && p < len(data); k-- {
			data[p] = byte(rng.Uint32())
			p++
		}
	}
}

// TestParquetRandomCorruption ingests thousands of randomly damaged copies of a real table file
// (written by the package's writer): every outcome must be a dataset or an *InputError naming
// the file on one line, never a panic, and nothing is left behind on error. It runs 10,000
// corruptions (a few hundred under -short) on 4 goroutines; ingest's commit (fsync) is most of
// the time.
func TestParquetRandomCorruption(t *testing.T) {
	cl := testCluster(t, "ccpe-testbed")
	good := tableFile(t, cl, TransfersTable, genTransfers(cl, 120, 3))
	footer := int(binary.LittleEndian.Uint32(good[len(good)-8:])) + 8
	n := 10_000
	if testing.Short() {
		n = 300
	}
	const workers = 4
	// Successful ingests commit with fsync, most of the time on a disk: work in memory
	// (/dev/shm) when the machine has it.
	base := t.TempDir()
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		if d, err := os.MkdirTemp("/dev/shm", "commcal-corrupt-"); err == nil {
			base = d
			defer os.RemoveAll(d)
		}
	}
	var (
		mu     sync.Mutex
		kinds  = map[ErrKind]int{}
		ok     int
		failed int
		caught int // library panics turned into corrupt errors
	)
	start := time.Now()
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += workers {
				rng := rand.New(rand.NewPCG(uint64(i), 7))
				data := bytes.Clone(good)
				corrupt(rng, data, footer)
				ie, err := ingestCorrupted(cl, base, data)
				mu.Lock()
				switch {
				case err != nil:
					failed++
					if failed <= 5 {
						name := filepath.Join(t.TempDir(), fmt.Sprintf("corruption-%d.parquet", i))
						os.WriteFile(name, data, 0o644)
						t.Errorf("corruption %d (kept as %s): %v", i, name, err)
					}
				case ie == nil:
					ok++
				default:
					kinds[ie.Kind]++
					if strings.Contains(ie.Detail, "the reader failed") {
						caught++
					}
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	t.Logf("%d corruptions in %v: %d read, errors by kind %v; %d of them panics of the library, recovered",
		n, time.Since(start).Round(time.Millisecond), ok, kinds, caught)
}

// ingestCorrupted ingests data and returns the input error, nil on success, or an error when
// the contract is broken: a panic, an error that is not an *InputError naming the file on one
// line, or output left behind.
func ingestCorrupted(cl *cluster.Cluster, dir string, data []byte) (_ *InputError, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	tmp, err := os.MkdirTemp(dir, "c")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	path := filepath.Join(tmp, "t.parquet")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return nil, err
	}
	out := filepath.Join(tmp, "out")
	_, ierr := Ingest(context.Background(), IngestOptions{Cluster: cl, Sources: []Source{{Path: path}}, Out: out, Created: fixedTime})
	if ierr == nil {
		return nil, nil
	}
	ie, ok := IsInputError(ierr)
	switch {
	case !ok:
		return nil, fmt.Errorf("%T is not an *InputError: %v", ierr, ierr)
	case ie.Loc.File != path:
		return nil, fmt.Errorf("error names %q: %v", ie.Loc.File, ierr)
	case strings.ContainsAny(ierr.Error(), "\r\n"):
		return nil, fmt.Errorf("message on several lines: %q", ierr.Error())
	}
	if entries, _ := os.ReadDir(tmp); len(entries) != 1 {
		return nil, fmt.Errorf("left behind after %v: %v", ierr, entries)
	}
	return ie, nil
}

// The stored Arrow schema (a base64 IPC flatbuffer) is decoded by the library without
// verification: a damaged length in it made it allocate tens of gigabytes, a fatal error no
// recover catches. It is not read (dropStoredArrowSchema): every damaged variant reads.
func TestParquetDamagedStoredSchema(t *testing.T) {
	cl := testCluster(t, "ccpe-testbed")
	good := tableFile(t, cl, TransfersTable, genTransfers(cl, 30, 4))
	var fb []byte
	rewriteFooter(t, good, func(md *metadata.FileMetaData) {
		for _, kv := range md.FileMetaData.KeyValueMetadata {
			if kv.Key == arrowSchemaKey {
				var err error
				if fb, err = base64.StdEncoding.DecodeString(kv.GetValue()); err != nil {
					t.Fatal(err)
				}
			}
		}
	})
	if len(fb) < 64 {
		t.Fatalf("no stored Arrow schema (%d bytes)", len(fb))
	}
	step := 4
	if testing.Short() {
		step = 32
	}
	for off := 0; off+4 <= len(fb); off += step {
		bad := bytes.Clone(fb)
		binary.LittleEndian.PutUint32(bad[off:], 0x7fffffff)
		data := rewriteFooter(t, good, func(md *metadata.FileMetaData) {
			for _, kv := range md.FileMetaData.KeyValueMetadata {
				if kv.Key == arrowSchemaKey {
					v := base64.StdEncoding.EncodeToString(bad)
					kv.Value = &v
				}
			}
		})
		pr, err := openParquet("t.parquet", bytes.NewReader(data), 1024, false, memory.DefaultAllocator)
		if err != nil {
			t.Fatalf("offset %d: %v", off, err)
		}
		if got := schemaDiff(pr.Schema(), TransfersTable.Schema()); got != "" {
			t.Errorf("offset %d: %s", off, got)
		}
		pr.close()
	}
}

// A Parquet file with a schema and no rows, and one whose row groups hold none although its
// metadata promises some, are errors: an empty input gives no dataset.
func TestParquetNoRows(t *testing.T) {
	cl := testCluster(t, "ccpe-testbed")
	var buf bytes.Buffer
	rec := RecordFromRows(TransfersTable, []Transfer{}, memory.DefaultAllocator)
	defer rec.Release()
	fw, err := pqarrow.NewFileWriter(TransfersTable.Schema(), &buf, nil, pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	if err := fw.Write(rec); err != nil {
		t.Fatal(err)
	}
	fw.Close()
	_, err = ingestFile(t, cl, "empty.parquet", buf.Bytes(), Source{})
	wantKind(t, err, ErrEmptyFile)

	good := tableFile(t, cl, TransfersTable, genTransfers(cl, 10, 5))
	data := rewriteFooter(t, good, func(md *metadata.FileMetaData) { md.FileMetaData.RowGroups[0].NumRows = 0 })
	_, err = ingestFile(t, cl, "lying.parquet", data, Source{})
	wantKind(t, err, ErrCorrupt)
}

// writeArrow writes a record as Parquet with pqarrow, the way other Arrow tools do.
func writeArrow(t *testing.T, rec arrow.Record, props *parquet.WriterProperties, aprops pqarrow.ArrowWriterProperties) []byte {
	t.Helper()
	var buf bytes.Buffer
	fw, err := pqarrow.NewFileWriter(rec.Schema(), &buf, props, aprops)
	if err != nil {
		t.Fatal(err)
	}
	if err := fw.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := fw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// pandasLike rebuilds a transfers record the way pandas/pyarrow lay it out: columns in another
// order, an extra index column, int32 counters, and the string columns as Arrow dictionaries
// (pandas categoricals) when dict is set.
func pandasLike(t *testing.T, rows []Transfer, dict bool) arrow.Record {
	mem := memory.DefaultAllocator
	rec := RecordFromRows(TransfersTable, rows, mem)
	defer rec.Release()
	order := []string{"t_end_s", "src_node", "__index_level_0__", "dst_node", "bytes", "cluster", "pattern_id", "experiment", "rep", "flow_id", "t_start_s"}
	var fields []arrow.Field
	var cols []arrow.Array
	for _, name := range order {
		if name == "__index_level_0__" {
			b := array.NewInt64Builder(mem)
			for i := range rows {
				b.Append(int64(i))
			}
			cols = append(cols, b.NewArray())
			b.Release()
			fields = append(fields, arrow.Field{Name: name, Type: arrow.PrimitiveTypes.Int64})
			continue
		}
		in := rec.Column(TransfersTable.ColumnIndex(name))
		switch a := in.(type) {
		case *array.String:
			if !dict {
				a.Retain()
				cols = append(cols, a)
				fields = append(fields, arrow.Field{Name: name, Type: arrow.BinaryTypes.String, Nullable: true})
				continue
			}
			dt := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
			b := array.NewDictionaryBuilder(mem, dt).(*array.BinaryDictionaryBuilder)
			for i := 0; i < a.Len(); i++ {
				if err := b.AppendString(a.Value(i)); err != nil {
					t.Fatal(err)
				}
			}
			cols = append(cols, b.NewArray())
			b.Release()
			fields = append(fields, arrow.Field{Name: name, Type: dt, Nullable: true})
		case *array.Int64:
			if name == "rep" || name == "flow_id" {
				b := array.NewInt32Builder(mem)
				for _, v := range a.Int64Values() {
					b.Append(int32(v))
				}
				cols = append(cols, b.NewArray())
				b.Release()
				fields = append(fields, arrow.Field{Name: name, Type: arrow.PrimitiveTypes.Int32, Nullable: true})
				continue
			}
			a.Retain()
			cols = append(cols, a)
			fields = append(fields, arrow.Field{Name: name, Type: arrow.PrimitiveTypes.Int64, Nullable: true})
		default:
			in.Retain()
			cols = append(cols, in)
			fields = append(fields, arrow.Field{Name: name, Type: in.DataType(), Nullable: true})
		}
	}
	out := array.NewRecord(arrow.NewSchema(fields, nil), cols, int64(len(rows)))
	for _, c := range cols {
		c.Release()
	}
	return out
}

// What pandas and pyarrow write is read: columns in any order with an extra index column,
// narrower integers, dictionary-encoded string columns (with the stored Arrow schema saying
// dictionary<int32, string>, and without it), and several row groups.
func TestParquetPandasLike(t *testing.T) {
	cl := testCluster(t, "ccpe-testbed")
	rows := genTransfers(cl, 500, 6)
	cases := []struct {
		name   string
		dict   bool
		props  *parquet.WriterProperties
		aprops pqarrow.ArrowWriterProperties
	}{
		{"categorical, stored schema", true, parquet.NewWriterProperties(parquet.WithDictionaryDefault(true), parquet.WithCompression(compress.Codecs.Snappy)),
			pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema())},
		{"categorical, no stored schema", true, parquet.NewWriterProperties(parquet.WithDictionaryDefault(true)), pqarrow.DefaultWriterProps()},
		{"dictionary-encoded strings", false, parquet.NewWriterProperties(parquet.WithDictionaryDefault(true), parquet.WithMaxRowGroupLength(128)),
			pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema())},
		{"plain strings", false, parquet.NewWriterProperties(parquet.WithDictionaryDefault(false)), pqarrow.DefaultWriterProps()},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rec := pandasLike(t, rows, c.dict)
			defer rec.Release()
			data := writeArrow(t, rec, c.props, c.aprops)
			got, err := ingestFile(t, cl, "pandas.parquet", data, Source{})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, rows) {
				t.Errorf("rows read back differ (%d rows, want %d)", len(got), len(rows))
			}
		})
	}
}

// A Parquet file that names a column twice (Arrow allows it) is refused: which one to read?
func TestParquetDuplicateColumn(t *testing.T) {
	cl := testCluster(t, "ccpe-testbed")
	rows := genTransfers(cl, 5, 7)
	rec := RecordFromRows(TransfersTable, rows, memory.DefaultAllocator)
	defer rec.Release()
	fields := append(rec.Schema().Fields(), arrow.Field{Name: "src_node", Type: arrow.BinaryTypes.String})
	cols := append(rec.Columns(), rec.Column(TransfersTable.ColumnIndex("dst_node")))
	dup := array.NewRecord(arrow.NewSchema(fields, nil), cols, rec.NumRows())
	defer dup.Release()
	_, err := ingestFile(t, cl, "dup.parquet", writeArrow(t, dup, nil, pqarrow.DefaultWriterProps()), Source{})
	if ie := wantKind(t, err, ErrDuplicateColumn); ie.Column != "src_node" {
		t.Errorf("names column %q", ie.Column)
	}
}

// Reading a dataset's table file that holds another table's columns says in one line which.
func TestScanSchemaMismatch(t *testing.T) {
	cl := testCluster(t, "ccpe-testbed")
	dir, _ := simulateDir(t, cl, 8)
	other, err := os.ReadFile(filepath.Join(dir, RoundTripsTable.File()))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, TransfersTable.File())
	if err := os.WriteFile(path, other, 0o644); err != nil {
		t.Fatal(err)
	}
	ds, err := OpenWith(dir, OpenOptions{NoVerify: true})
	if err != nil {
		t.Fatal(err)
	}
	_, err = ReadAll[Transfer](context.Background(), ds, TransfersTable)
	ie := wantKind(t, err, ErrSchemaMismatch)
	checkInputError(t, err, path)
	want := "missing experiment, pattern_id, flow_id, src_node, dst_node, bytes, t_start_s, t_end_s; unexpected i, j, bytes_out, bytes_back, seconds"
	if !strings.Contains(ie.Detail, want) {
		t.Errorf("detail %q, want it to say %q", ie.Detail, want)
	}
	// The same for an output table read with ReadParquetFile, and a type that differs.
	_, err = ReadParquetFile[RoundTrip](path, TransfersTable)
	if err == nil || !strings.Contains(err.Error(), "not a transfers table") {
		t.Errorf("ReadParquetFile: %v", err)
	}
	got := schemaDiff(arrow.NewSchema([]arrow.Field{{Name: "a", Type: arrow.PrimitiveTypes.Float64}, {Name: "b", Type: arrow.BinaryTypes.String}}, nil),
		arrow.NewSchema([]arrow.Field{{Name: "b", Type: arrow.BinaryTypes.String}, {Name: "a", Type: arrow.PrimitiveTypes.Int64}}, nil))
	if got != "a is float64, want int64" {
		t.Errorf("schemaDiff %q", got)
	}
	got = schemaDiff(arrow.NewSchema([]arrow.Field{{Name: "a", Type: arrow.PrimitiveTypes.Int64}, {Name: "b", Type: arrow.BinaryTypes.String}}, nil),
		arrow.NewSchema([]arrow.Field{{Name: "b", Type: arrow.BinaryTypes.String}, {Name: "a", Type: arrow.PrimitiveTypes.Int64}}, nil))
	if got != "column 1 is a, want b (order differs)" {
		t.Errorf("schemaDiff %q", got)
	}
}

// ReadParquetFile, Scan and ReadAll turn damage into *InputError naming the file, never a panic.
func TestReadDamagedTables(t *testing.T) {
	cl := testCluster(t, "ccpe-testbed")
	dir, _ := simulateDir(t, cl, 9)
	path := filepath.Join(dir, TransfersTable.File())
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	n := len(good)
	md, err := metadata.NewFileMetaData(good[n-8-int(binary.LittleEndian.Uint32(good[n-8:n-4])):n-8], nil)
	if err != nil {
		t.Fatal(err)
	}
	cc, _ := md.RowGroup(0).ColumnChunk(TransfersTable.ColumnIndex("t_end_s"))
	end := cc.DataPageOffset() + cc.TotalCompressedSize()
	damaged := map[string][]byte{
		"page": bytes.Clone(good),
		"footer": rewriteFooter(t, good, func(md *metadata.FileMetaData) {
			md.FileMetaData.RowGroups[0].Columns[3].MetaData.TotalCompressedSize = -336
		}),
		"logical type": unknownLogicalType(t, good),
		"truncated":    good[:n/2],
	}
	for i := end - cc.TotalCompressedSize(); i < end-cc.TotalCompressedSize()+48; i++ {
		damaged["page"][i] = 0xff
	}
	for name, data := range damaged {
		t.Run(name, func(t *testing.T) {
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			ds, err := OpenWith(dir, OpenOptions{NoVerify: true})
			if err != nil {
				t.Fatal(err)
			}
			_, err = ReadAll[Transfer](context.Background(), ds, TransfersTable)
			if ie := checkInputError(t, err, path); ie.Kind != ErrCorrupt {
				t.Errorf("ReadAll: %v", err)
			}
			_, err = ReadParquetFile[Transfer](path, TransfersTable)
			if ie := checkInputError(t, err, path); ie.Kind != ErrCorrupt {
				t.Errorf("ReadParquetFile: %v", err)
			}
			_, err = Open(dir)
			if ie := checkInputError(t, err, path); ie.Kind != ErrChecksumMismatch {
				t.Errorf("Open: %v", err)
			}
		})
	}
	_, err = ReadParquetFile[Transfer](filepath.Join(dir, "absent.parquet"), TransfersTable)
	if ie := checkInputError(t, err, filepath.Join(dir, "absent.parquet")); ie.Kind != ErrMissingFile {
		t.Errorf("missing file: %v", err)
	}
}

// Ingest reads Parquet strings as dictionaries and writes them out plainly (plainStrings): the
// table it writes must not depend on how the input stored its strings. The same rows as CSV,
// as plain Parquet strings, and as dictionaries in small row groups (a batch spans several
// dictionaries) that outgrow their page limit (pages fall back to plain) give the same bytes,
// with every Arrow buffer released.
func TestParquetStringEncodingsSameBytes(t *testing.T) {
	cl := testCluster(t, "ccpe-testbed")
	rows := genTransfers(cl, 3000, 12)
	rec := RecordFromRows(TransfersTable, rows, memory.DefaultAllocator)
	defer rec.Release()
	in := t.TempDir()
	writeCSV(t, filepath.Join(in, "t.csv"), TransfersTable, rows)
	inputs := map[string][]byte{
		"plain.parquet": writeArrow(t, rec, parquet.NewWriterProperties(parquet.WithDictionaryDefault(false)), pqarrow.DefaultWriterProps()),
		"dict.parquet": writeArrow(t, rec, parquet.NewWriterProperties(parquet.WithDictionaryDefault(true), parquet.WithMaxRowGroupLength(700),
			parquet.WithDictionaryPageSizeLimit(1000)), pqarrow.DefaultWriterProps()),
	}
	for name, data := range inputs {
		if err := os.WriteFile(filepath.Join(in, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var want []byte
	for _, name := range []string{"t.csv", "plain.parquet", "dict.parquet"} {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		out := filepath.Join(t.TempDir(), "ds")
		_, err := Ingest(context.Background(), IngestOptions{Cluster: cl, Sources: []Source{{Path: filepath.Join(in, name)}}, Out: out,
			Created: fixedTime, BatchRows: 1000, Mem: mem})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		mem.AssertSize(t, 0)
		got := treeBytes(t, out)[TransfersTable.File()]
		if want == nil {
			want = got
		} else if !bytes.Equal(got, want) {
			t.Errorf("%s: the transfers table differs from the one ingested from CSV", name)
		}
	}
}

// A missing string in a dictionary-encoded column is reported at its row, like any other.
func TestParquetDictionaryNull(t *testing.T) {
	cl := testCluster(t, "ccpe-testbed")
	rows := genTransfers(cl, 300, 13)
	rec := RecordFromRows(TransfersTable, rows, memory.DefaultAllocator)
	defer rec.Release()
	ci := TransfersTable.ColumnIndex("dst_node")
	b := array.NewStringBuilder(memory.DefaultAllocator)
	defer b.Release()
	for r := range rows {
		if r == 211 {
			b.AppendNull()
		} else {
			b.Append(rows[r].Dst)
		}
	}
	dst := b.NewArray()
	defer dst.Release()
	fields := slices.Clone(rec.Schema().Fields())
	fields[ci].Nullable = true
	cols := slices.Clone(rec.Columns())
	cols[ci] = dst
	withNull := array.NewRecord(arrow.NewSchema(fields, nil), cols, rec.NumRows())
	defer withNull.Release()
	data := writeArrow(t, withNull, parquet.NewWriterProperties(parquet.WithDictionaryDefault(true)), pqarrow.DefaultWriterProps())
	_, err := ingestFile(t, cl, "null.parquet", data, Source{})
	if ie := wantKind(t, err, ErrMissingValue); ie.Column != "dst_node" || ie.Loc.Row != 212 {
		t.Errorf("reported at row %d, column %q; want row 212, dst_node", ie.Loc.Row, ie.Column)
	}
}
