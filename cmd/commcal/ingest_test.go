package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/commcal/commcal/datasets"
)

const transfersHeader = "cluster,experiment,pattern_id,rep,flow_id,src_node,dst_node,bytes,t_start_s,t_end_s\n"

// goodTransfer is a valid transfers row of the built-in ccpe-testbed cluster.
const goodTransfer = "ccpe-testbed,p2p_sweep,p1,0,0,X1,Y1,1000,0,0.01\n"

// runCLI runs commcal in process and returns the exit status, stdout and stderr.
func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), append([]string{"commcal"}, args...), &out, &errb)
	return code, out.String(), errb.String()
}

// writeParquet writes a one-record Parquet file with the given columns.
func writeParquet(t *testing.T, path string, fields []arrow.Field, build func(b *array.RecordBuilder)) {
	t.Helper()
	b := array.NewRecordBuilder(memory.DefaultAllocator, arrow.NewSchema(fields, nil))
	defer b.Release()
	build(b)
	rec := b.NewRecord()
	defer rec.Release()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w, err := pqarrow.NewFileWriter(rec.Schema(), f, nil, pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// simulated generates a ccpe-testbed dataset into dir/sim with the simulate command (extra
// flags such as --reps appended) and returns its path.
func simulated(t *testing.T, dir string, flags ...string) string {
	t.Helper()
	sim := filepath.Join(dir, "sim")
	args := append([]string{"simulate", "--cluster", "ccpe-testbed", "--out", sim}, flags...)
	if code, _, stderr := runCLI(t, args...); code != 0 {
		t.Fatalf("simulate: %d %s", code, stderr)
	}
	return sim
}

// validParquet writes a valid transfers table through the generator and returns its path.
func validParquet(t *testing.T, dir string) string {
	t.Helper()
	return filepath.Join(simulated(t, dir), "transfers.parquet")
}

func TestIngestRejectsBadInput(t *testing.T) {
	type file struct{ name, content string }
	cases := []struct {
		name  string
		files []file
		setup func(t *testing.T, dir string) // makes files that text cannot
		args  []string
		kind  datasets.ErrKind
		want  []string // more substrings of the message: file, line, column
	}{
		{name: "empty file", files: []file{{"t.csv", ""}}, kind: datasets.ErrEmptyFile, want: []string{"t.csv"}},
		{name: "header only", files: []file{{"t.csv", transfersHeader}}, kind: datasets.ErrEmptyFile},
		{name: "missing column", files: []file{{"t.csv", strings.Replace(transfersHeader, ",t_end_s", "", 1) + "ccpe-testbed,p2p_sweep,p1,0,0,X1,Y1,1000,0\n"}},
			kind: datasets.ErrMissingColumn, want: []string{`column "t_end_s"`, "line 1"}},
		{name: "columns of no table", files: []file{{"t.csv", "a,b,c\n1,2,3\n"}}, kind: datasets.ErrUnknownTable},
		{name: "wrong type", files: []file{{"t.csv", transfersHeader + goodTransfer + "ccpe-testbed,p2p_sweep,p2,0,0,X1,Y1,lots,0,0.01\n"}},
			kind: datasets.ErrWrongType, want: []string{"line 3 (row 2)", `column "bytes"`}},
		{name: "ragged row", files: []file{{"t.csv", transfersHeader + "ccpe-testbed,p2p_sweep,p1,0,0,X1,Y1,1000,0\n"}},
			kind: datasets.ErrRaggedRow, want: []string{"line 2"}},
		{name: "missing value", files: []file{{"t.csv", transfersHeader + "ccpe-testbed,p2p_sweep,p1,0,0,,Y1,1000,0,0.01\n"}},
			kind: datasets.ErrMissingValue, want: []string{`column "src_node"`}},
		{name: "NaN", files: []file{{"t.csv", transfersHeader + "ccpe-testbed,p2p_sweep,p1,0,0,X1,Y1,1000,0,NaN\n"}},
			kind: datasets.ErrNaN, want: []string{"line 2 (row 1)", `column "t_end_s"`}},
		{name: "infinite", files: []file{{"t.csv", transfersHeader + "ccpe-testbed,p2p_sweep,p1,0,0,X1,Y1,1000,-Inf,0.01\n"}},
			kind: datasets.ErrInfinite, want: []string{`column "t_start_s"`}},
		{name: "zero size", files: []file{{"t.csv", transfersHeader + "ccpe-testbed,p2p_sweep,p1,0,0,X1,Y1,0,0,0.01\n"}},
			kind: datasets.ErrNonPositive, want: []string{`column "bytes"`}},
		{name: "negative rep", files: []file{{"t.csv", transfersHeader + "ccpe-testbed,p2p_sweep,p1,-1,0,X1,Y1,10,0,0.01\n"}},
			kind: datasets.ErrNegative, want: []string{`column "rep"`}},
		{name: "zero duration", files: []file{{"t.csv", transfersHeader + "ccpe-testbed,p2p_sweep,p1,0,0,X1,Y1,10,0.5,0.5\n"}},
			kind: datasets.ErrZeroDuration, want: []string{`column "t_end_s"`}},
		{name: "end before start", files: []file{{"t.csv", transfersHeader + goodTransfer + goodTransfer[:len(goodTransfer)-10] + "1,0.5,0.4\n"}},
			kind: datasets.ErrEndBeforeStart, want: []string{"line 3 (row 2)"}},
		{name: "non-positive round trip", files: []file{{"rt.csv", "cluster,i,j,bytes_out,bytes_back,rep,seconds\nccpe-testbed,X1,X2,0,0,0,-0.001\n"}},
			kind: datasets.ErrNonPositive, want: []string{`column "seconds"`}},
		{name: "other cluster", files: []file{{"t.csv", transfersHeader + "graphene,p2p_sweep,p1,0,0,X1,Y1,10,0,0.01\n"}},
			kind: datasets.ErrUnknownCluster, want: []string{`column "cluster"`}},
		{name: "unknown node", files: []file{{"t.csv", transfersHeader + "ccpe-testbed,p2p_sweep,p1,0,0,X1,Z9,10,0,0.01\n"}},
			kind: datasets.ErrUnknownNode, want: []string{`"Z9"`, `column "dst_node"`}},
		{name: "same node", files: []file{{"t.csv", transfersHeader + "ccpe-testbed,p2p_sweep,p1,0,0,X1,X1,10,0,0.01\n"}},
			kind: datasets.ErrSameNode},
		{name: "unknown experiment", files: []file{{"t.csv", transfersHeader + "ccpe-testbed,warmup,p1,0,0,X1,Y1,10,0,0.01\n"}},
			kind: datasets.ErrUnknownExperiment, want: []string{`"warmup"`}},
		{name: "unknown collective", files: []file{{"c.csv", "cluster,op,root,procs,bytes,rep,seconds\nccpe-testbed,allreduce,X1,4,10,0,0.1\n"}},
			kind: datasets.ErrUnknownOp},
		{name: "too few processes", files: []file{{"c.csv", "cluster,op,root,procs,bytes,rep,seconds\nccpe-testbed,scatter,X1,1,10,0,0.1\n"}},
			kind: datasets.ErrNonPositive, want: []string{`column "procs"`}},
		{name: "duplicate key across files", files: []file{{"a.csv", transfersHeader + goodTransfer}, {"b.csv", transfersHeader + goodTransfer}},
			kind: datasets.ErrDuplicateKey, want: []string{"b.csv: line 2 (row 1)", "a.csv: line 2 (row 1)"}},
		{name: "not parquet", files: []file{{"t.parquet", transfersHeader + goodTransfer}}, kind: datasets.ErrNotParquet},
		{name: "truncated parquet", setup: func(t *testing.T, dir string) {
			data, err := os.ReadFile(validParquet(t, t.TempDir()))
			if err != nil {
				t.Fatal(err)
			}
			os.WriteFile(filepath.Join(dir, "t.parquet"), data[:len(data)/2], 0o644)
		}, kind: datasets.ErrCorrupt, want: []string{"t.parquet"}},
		{name: "parquet column of wrong type", setup: func(t *testing.T, dir string) {
			fields := []arrow.Field{{Name: "cluster", Type: arrow.BinaryTypes.String}, {Name: "i", Type: arrow.BinaryTypes.String},
				{Name: "j", Type: arrow.BinaryTypes.String}, {Name: "bytes_out", Type: arrow.BinaryTypes.String},
				{Name: "bytes_back", Type: arrow.PrimitiveTypes.Int64}, {Name: "rep", Type: arrow.PrimitiveTypes.Int64},
				{Name: "seconds", Type: arrow.PrimitiveTypes.Float64}}
			writeParquet(t, filepath.Join(dir, "rt.parquet"), fields, func(b *array.RecordBuilder) {
				for i, v := range []string{"ccpe-testbed", "X1", "X2", "ten"} {
					b.Field(i).(*array.StringBuilder).Append(v)
				}
				b.Field(4).(*array.Int64Builder).Append(0)
				b.Field(5).(*array.Int64Builder).Append(0)
				b.Field(6).(*array.Float64Builder).Append(0.1)
			})
		}, kind: datasets.ErrWrongType, want: []string{`column "bytes_out"`}},
		{name: "parquet null", setup: func(t *testing.T, dir string) {
			fields := []arrow.Field{{Name: "cluster", Type: arrow.BinaryTypes.String}, {Name: "pairs", Type: arrow.PrimitiveTypes.Int32},
				{Name: "bytes", Type: arrow.PrimitiveTypes.Int64}, {Name: "rep", Type: arrow.PrimitiveTypes.Int64},
				{Name: "rtt_s", Type: arrow.PrimitiveTypes.Float64, Nullable: true}, {Name: "os_s", Type: arrow.PrimitiveTypes.Float32},
				{Name: "or_s", Type: arrow.PrimitiveTypes.Float64}, {Name: "ur_s", Type: arrow.PrimitiveTypes.Float64}}
			writeParquet(t, filepath.Join(dir, "pp.parquet"), fields, func(b *array.RecordBuilder) {
				for r := 0; r < 2; r++ {
					b.Field(0).(*array.StringBuilder).Append("ccpe-testbed")
					b.Field(1).(*array.Int32Builder).Append(2)
					b.Field(2).(*array.Int64Builder).Append(1024)
					b.Field(3).(*array.Int64Builder).Append(int64(r))
					if r == 1 {
						b.Field(4).(*array.Float64Builder).AppendNull()
					} else {
						b.Field(4).(*array.Float64Builder).Append(1e-4)
					}
					b.Field(5).(*array.Float32Builder).Append(1e-6)
					b.Field(6).(*array.Float64Builder).Append(1e-6)
					b.Field(7).(*array.Float64Builder).Append(1e-6)
				}
			})
		}, kind: datasets.ErrMissingValue, want: []string{"pp.parquet: row 2", `column "rtt_s"`}},
		{name: "simgrid send without recv", args: []string{"--src", "X1", "--dst", "X2"},
			files: []file{{"pp.csv", "MPI_Send,10,1.0,1e-5\nMPI_Send,10,1.1,1e-5\n"}}, kind: datasets.ErrUnpaired, want: []string{"line 2"}},
		{name: "simgrid single calls", args: []string{"--src", "X1", "--dst", "X2"},
			files: []file{{"is.csv", "MPI_Isend,10,1.0,1e-5\n"}}, kind: datasets.ErrUnsupported},
		{name: "simgrid unnamed nodes", files: []file{{"pp.csv", "MPI_Send,10,1.0,1e-5\nMPI_Recv,10,1.0,1e-5\n"}}, kind: datasets.ErrUnsupported},
		{name: "iperf3 error", files: []file{{"run.json", `{"start":{},"end":{},"error":"unable to connect to server: Connection refused"}`}},
			kind: datasets.ErrToolFailure, want: []string{"Connection refused"}},
		{name: "not iperf3 json", files: []file{{"run.json", `{"start": [1,2`}}, kind: datasets.ErrCorrupt},
	}
	kinds := map[datasets.ErrKind]bool{}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			in := filepath.Join(dir, "in")
			os.Mkdir(in, 0o755)
			for _, f := range tc.files {
				if err := os.WriteFile(filepath.Join(in, f.name), []byte(f.content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if tc.setup != nil {
				tc.setup(t, in)
			}
			out := filepath.Join(dir, "out", "ds")
			args := append([]string{"ingest", "--cluster", "ccpe-testbed", "--out", out}, tc.args...)
			code, stdout, stderr := runCLI(t, append(args, in)...)
			if code != exitBadInput {
				t.Fatalf("exit status %d, want %d; stderr: %s", code, exitBadInput, stderr)
			}
			if !strings.Contains(stderr, ": "+string(tc.kind)+": ") {
				t.Errorf("stderr %q does not name the error kind %q", stderr, tc.kind)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr %q does not contain %q", stderr, w)
				}
			}
			if strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
				t.Errorf("want one line of error, got %q", stderr)
			}
			if stdout != "" {
				t.Errorf("stdout should be empty on error, got %q", stdout)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("output %s exists after a failed ingest", out)
			}
			if left, _ := os.ReadDir(filepath.Dir(out)); len(left) != 0 {
				t.Errorf("files left beside the output: %v", left)
			}
			kinds[tc.kind] = true
		})
	}
	if len(kinds) < 15 {
		t.Errorf("only %d kinds of bad input covered, want at least 15", len(kinds))
	}
}

func TestIngestFailureKeepsEarlierDataset(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.csv")
	bad := filepath.Join(dir, "bad.csv")
	os.WriteFile(good, []byte(transfersHeader+goodTransfer), 0o644)
	os.WriteFile(bad, []byte(transfersHeader+"ccpe-testbed,p2p_sweep,p1,0,0,X1,Q1,1000,0,0.01\n"), 0o644)
	out := filepath.Join(dir, "ds")
	if code, _, stderr := runCLI(t, "ingest", "--cluster", "ccpe-testbed", "--out", out, good); code != 0 {
		t.Fatalf("good ingest failed: %s", stderr)
	}
	before, _ := os.ReadFile(filepath.Join(out, "transfers.parquet"))
	if code, _, _ := runCLI(t, "ingest", "--cluster", "ccpe-testbed", "--out", out, good); code != exitBadInput {
		t.Errorf("ingest over an existing dataset without --force: exit %d, want %d", code, exitBadInput)
	}
	if code, _, _ := runCLI(t, "ingest", "--cluster", "ccpe-testbed", "--force", "--out", out, bad); code != exitBadInput {
		t.Fatalf("bad ingest: exit %d, want %d", code, exitBadInput)
	}
	after, _ := os.ReadFile(filepath.Join(out, "transfers.parquet"))
	if len(before) == 0 || !bytes.Equal(before, after) {
		t.Error("a failed --force ingest changed the earlier dataset")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 3 {
		t.Errorf("want good.csv, bad.csv and ds in %s, got %v", dir, entries)
	}
}

func TestUsageErrors(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"unknown flag", []string{"ingest", "--bogus", "x"}, "bogus"},
		{"flag after arguments", []string{"ingest", "--cluster", "ccpe-testbed", "--out", "o", "x.csv", "--force"}, "put flags before"},
		{"no inputs", []string{"ingest", "--cluster", "ccpe-testbed", "--out", "o"}, "missing FILE_OR_DIR"},
		{"no cluster", []string{"ingest", "--out", "o", "ingest_test.go"}, "--cluster is required"},
		{"unknown cluster", []string{"simulate", "--cluster", "nosuch", "--out", "o"}, "neither a file nor a built-in cluster"},
		{"bad format", []string{"ingest", "--cluster", "ccpe-testbed", "--format", "xml", "--out", "o", "ingest_test.go"}, "--format"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, tc.args...)
			if code != exitBadInput || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, stderr, exitBadInput, tc.want)
			}
		})
	}
}
