package datasets

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/commcal/commcal/internal/atomicio"
)

// writeCSV writes rows of table t as a CSV file with a header, floats in their shortest exact
// form so that parsing them back gives the same bits.
func writeCSV[R any](t *testing.T, path string, tab *Table, rows []R) {
	t.Helper()
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	header := make([]string, len(tab.Columns))
	for i, c := range tab.Columns {
		header[i] = c.Name
	}
	w.Write(header)
	for _, r := range rows {
		v := reflect.ValueOf(r)
		rec := make([]string, len(tab.Columns))
		for i, c := range tab.Columns {
			f := v.FieldByIndex(c.field)
			switch c.Type {
			case String:
				rec[i] = f.String()
			case Int:
				rec[i] = strconv.FormatInt(f.Int(), 10)
			case Float:
				rec[i] = strconv.FormatFloat(f.Float(), 'g', -1, 64)
			}
		}
		w.Write(rec)
	}
	w.Flush()
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestCSVRoundTrip(t *testing.T) {
	cl := testCluster(t, "ccpe-testbed")
	_, want := simulateDir(t, cl, 11)
	in := t.TempDir()
	writeCSV(t, filepath.Join(in, "1-transfers.csv"), TransfersTable, want.Transfers)
	writeCSV(t, filepath.Join(in, "2-roundtrips.csv"), RoundTripsTable, want.RoundTrips)
	writeCSV(t, filepath.Join(in, "3-one_to_two.csv"), OneToTwoTable, want.OneToTwo)
	writeCSV(t, filepath.Join(in, "4-collectives.csv"), CollectivesTable, want.Collectives)
	writeCSV(t, filepath.Join(in, "5-pingpong.csv"), PingPongPairsTable, want.PingPongPairs)
	srcs, err := ExpandSources([]string{in}, Source{})
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "ds")
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	m, err := Ingest(context.Background(), IngestOptions{Cluster: cl, Sources: srcs, Out: out, Created: fixedTime, Mem: mem, BatchRows: 97})
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range m.Sources {
		if s.Format != FormatCSV || s.Table != Tables[i].Name {
			t.Errorf("source %s read as %s/%s", s.Path, s.Format, s.Table)
		}
	}
	if got := readBack(t, out, mem); !reflect.DeepEqual(got, want) {
		t.Error("rows ingested from CSV differ from the simulated rows")
	}
}

// treeBytes reads every file under dir, by relative path.
func treeBytes(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		files[rel] = data
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func TestSameInputSameBytes(t *testing.T) {
	cl := testCluster(t, "graphene")
	a, _ := simulateDir(t, cl, 3)
	b, _ := simulateDir(t, cl, 3)
	if !reflect.DeepEqual(treeBytes(t, a), treeBytes(t, b)) {
		t.Fatal("two simulations with the same seed differ")
	}
	c, _ := simulateDir(t, cl, 4)
	if bytes.Equal(treeBytes(t, a)["transfers.parquet"], treeBytes(t, c)["transfers.parquet"]) {
		t.Fatal("a different seed gave the same transfers")
	}
	srcs, err := ExpandSources([]string{a, "testdata/graphene_eth/graphene_eth_PingPong.csv"}, Source{Src: "graphene-1", Dst: "graphene-2"})
	if err != nil {
		t.Fatal(err)
	}
	var outs []map[string][]byte
	for i := 0; i < 2; i++ {
		out := filepath.Join(t.TempDir(), "ds")
		if _, err := Ingest(context.Background(), IngestOptions{Cluster: cl, Sources: srcs, Out: out, Created: fixedTime, BatchRows: 500 + 300*i}); err != nil {
			t.Fatal(err)
		}
		outs = append(outs, treeBytes(t, out))
	}
	if _, ok := outs[0][atomicio.Marker]; len(outs[0]) != 7 || !ok { // the simulation's five tables, the manifest and the output marker
		t.Errorf("ingested dataset has %d files (marker %t)", len(outs[0]), ok)
	}
	if !reflect.DeepEqual(outs[0], outs[1]) {
		t.Error("ingesting the same input twice (with different batch sizes) gave different bytes")
	}
}

func TestIngestGraphenePingPong(t *testing.T) {
	// The real SimGrid calibration file of Grid5000's graphene (test copy).
	cl := testCluster(t, "graphene")
	out := filepath.Join(t.TempDir(), "ds")
	src := Source{Path: "testdata/graphene_eth/graphene_eth_PingPong.csv", Src: "graphene-1", Dst: "graphene-2"}
	m, err := Ingest(context.Background(), IngestOptions{Cluster: cl, Sources: []Source{src}, Out: out, Created: fixedTime})
	if err != nil {
		t.Fatal(err)
	}
	if s := m.Sources[0]; s.Format != FormatSimGrid || s.Table != "roundtrips" || s.Rows != 6620 || s.Bytes == 0 || len(s.SHA256) != 64 {
		t.Errorf("manifest source %+v", s)
	}
	ds, err := Open(out)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := ReadAll[RoundTrip](context.Background(), ds, RoundTripsTable)
	if err != nil {
		t.Fatal(err)
	}
	sizes := map[int64]int{}
	for _, r := range rows {
		sizes[r.BytesOut]++
		if r.BytesOut != r.BytesBack {
			t.Fatalf("ping-pong with %d out and %d back", r.BytesOut, r.BytesBack)
		}
	}
	// The file's README: 490 sizes from 1 B to 989,921 B.
	if len(sizes) != 490 || sizes[1] == 0 || sizes[989921] == 0 {
		t.Errorf("%d sizes", len(sizes))
	}
	// First exchange of the file: MPI_Send 765921 B 5.012126e-03 s, MPI_Recv 8.841378e-03 s.
	first := rows[0]
	if first.BytesOut != 765921 || first.Rep != 0 || first.Seconds != 5.012126e-03+8.841378e-03 {
		t.Errorf("first round trip %+v", first)
	}
}

func TestIngestStopsWhenCancelled(t *testing.T) {
	cl := testCluster(t, "graphene")
	ctx, cancel := context.WithCancel(context.Background())
	out := filepath.Join(t.TempDir(), "ds")
	src := Source{Path: "testdata/graphene_eth/graphene_eth_PingPong.csv", Src: "graphene-1", Dst: "graphene-2"}
	// Cancel after the first batch, as Ctrl-C would in the middle of a long file.
	_, err := Ingest(ctx, IngestOptions{Cluster: cl, Sources: []Source{src}, Out: out, BatchRows: 100,
		Progress: func(rows int64) { cancel() }})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	if entries, _ := os.ReadDir(filepath.Dir(out)); len(entries) != 0 {
		t.Errorf("left behind: %v", entries)
	}
}

// --role and --ranks place and label the rows of benchmarks' text outputs; given for an input
// whose rows they would not change (a dataset's tables, CSV, Parquet, iperf3, SimGrid), they
// are refused rather than ignored.
func TestFlagsOfTextOutputsOnly(t *testing.T) {
	cl := testCluster(t, "ccpe-testbed")
	dir, rows := simulateDir(t, cl, 3)
	csvPath := filepath.Join(t.TempDir(), "t.csv")
	writeCSV(t, csvPath, TransfersTable, rows.Transfers)
	// The flags are checked before the run is read: any JSON file is an iperf3 run.
	jsonPath := filepath.Join(t.TempDir(), "r.json")
	if err := os.WriteFile(jsonPath, []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	const texts = "applies to the text outputs of MPI benchmarks (osu, imb, skampi, netpipe, mpiblib, saturation), not to "
	const tables = ", whose rows name their nodes and experiment: leave it out, or ingest those outputs on their own"
	cases := []struct {
		name string
		path string
		base Source
		want string
	}{
		{"dataset --role", dir, Source{Role: RoleHeldOut}, "unused-flag: --role held-out " + texts + "a commcal dataset's table" + tables},
		{"dataset --ranks", dir, Source{Ranks: []string{"X1", "Y1"}}, "unused-flag: --ranks " + texts + "a commcal dataset's table" + tables},
		{"csv --ranks", csvPath, Source{Ranks: []string{"X1", "Y1"}}, "unused-flag: --ranks " + texts + "a CSV table" + tables},
		{"parquet --role", filepath.Join(dir, "transfers.parquet"), Source{Role: RoleCalibration}, "unused-flag: --role calibration " + texts + "a Parquet table" + tables},
		{"iperf3 --role", jsonPath, Source{Role: RoleCalibration},
			"unused-flag: --role calibration " + texts + "an iperf3 run (--src, --dst and --experiment set its transfer): leave it out, or ingest those outputs on their own"},
		{"simgrid --ranks", "testdata/benchmarks/sgcal", Source{Src: "X1", Dst: "Y1", Ranks: []string{"X1", "Y1"}},
			"unused-flag: --ranks " + texts + "a SimGrid calibration file (--src and --dst name its two nodes): leave it out, or ingest those outputs on their own"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srcs, err := ExpandSources([]string{c.path}, c.base)
			if err != nil {
				t.Fatal(err)
			}
			_, err = Ingest(context.Background(), IngestOptions{Cluster: cl, Sources: srcs, Out: filepath.Join(t.TempDir(), "ds"), Created: fixedTime})
			ie := wantKind(t, err, ErrUnusedFlag)
			if got := ie.Kind + ": " + ErrKind(ie.Detail); string(got) != c.want || ie.Loc.File != srcs[0].Path {
				t.Errorf("got  %v\nwant %s: %s", err, srcs[0].Path, c.want)
			}
		})
	}
}
