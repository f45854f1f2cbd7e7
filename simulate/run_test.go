package simulate

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/datasets"
)

func testCluster(t testing.TB, name string) *cluster.Cluster {
	t.Helper()
	cl, err := cluster.LoadNamed(name)
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

var fixedTime = time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)

// simulateDir writes the default truth of a seed as a dataset and returns its directory and rows.
func simulateDir(t *testing.T, cl *cluster.Cluster, seed uint64) (string, *Generated) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "sim")
	_, g, err := Run(context.Background(), Options{Cluster: cl, Truth: DefaultTruth(cl, seed), Out: out, Version: "test", Created: fixedTime})
	if err != nil {
		t.Fatal(err)
	}
	return out, g
}

// readTable appends every row of one table of a dataset to dst.
func readTable[R any](t *testing.T, ds *datasets.Dataset, tab *datasets.Table, dst *[]R) {
	t.Helper()
	rows, err := datasets.ReadAll[R](context.Background(), ds, tab)
	if err != nil {
		t.Fatal(err)
	}
	*dst = rows
}

// readBack reads every table of a dataset directory.
func readBack(t *testing.T, dir string) *Generated {
	t.Helper()
	ds, err := datasets.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	g := &Generated{}
	readTable(t, ds, datasets.TransfersTable, &g.Transfers)
	readTable(t, ds, datasets.RoundTripsTable, &g.RoundTrips)
	readTable(t, ds, datasets.OneToTwoTable, &g.OneToTwo)
	readTable(t, ds, datasets.CollectivesTable, &g.Collectives)
	readTable(t, ds, datasets.PingPongPairsTable, &g.PingPongPairs)
	return g
}

// A simulated dataset ingested again reads back as the rows the generator drew, every table
// of it, with no Arrow memory left behind.
func TestSimulateIngestReadBack(t *testing.T) {
	for _, name := range []string{"ccpe-testbed", "graphene"} {
		t.Run(name, func(t *testing.T) {
			cl := testCluster(t, name)
			sim, want := simulateDir(t, cl, 7)
			if len(want.Transfers) == 0 || len(want.RoundTrips) == 0 || len(want.OneToTwo) == 0 || len(want.Collectives) == 0 || len(want.PingPongPairs) == 0 {
				t.Fatalf("generator left a table empty: %d %d %d %d %d", len(want.Transfers), len(want.RoundTrips), len(want.OneToTwo), len(want.Collectives), len(want.PingPongPairs))
			}
			if got := readBack(t, sim); !reflect.DeepEqual(got, want) {
				t.Fatal("rows of the simulated dataset differ from the generated rows")
			}
			srcs, err := datasets.ExpandSources([]string{sim}, datasets.Source{})
			if err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(t.TempDir(), "ingested")
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			if _, err := datasets.Ingest(context.Background(), datasets.IngestOptions{Cluster: cl, Sources: srcs, Out: out, Created: fixedTime, Mem: mem, BatchRows: 1000}); err != nil {
				t.Fatal(err)
			}
			if got := readBack(t, out); !reflect.DeepEqual(got, want) {
				t.Fatal("rows read back differ from the simulated rows")
			}
			mem.AssertSize(t, 0)
		})
	}
}

// dirFiles reads every file of a dataset directory (it holds no sub-directories), by name.
func dirFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for _, e := range entries {
		if files[e.Name()], err = os.ReadFile(filepath.Join(dir, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	return files
}

// The same seed gives the same bytes, truth.json included; another seed other transfers. The
// truth written beside the tables reads back as the truth that drew them.
func TestSameSeedSameBytes(t *testing.T) {
	cl := testCluster(t, "graphene")
	a, _ := simulateDir(t, cl, 3)
	b, _ := simulateDir(t, cl, 3)
	ta, tb := dirFiles(t, a), dirFiles(t, b)
	if _, ok := ta[TruthFile]; !ok {
		t.Fatalf("no %s among %d files", TruthFile, len(ta))
	}
	if !reflect.DeepEqual(ta, tb) {
		t.Fatal("two simulations with the same seed differ")
	}
	c, _ := simulateDir(t, cl, 4)
	if bytes.Equal(ta["transfers.parquet"], dirFiles(t, c)["transfers.parquet"]) {
		t.Fatal("a different seed gave the same transfers")
	}
	tr, err := ReadTruth(filepath.Join(a, TruthFile))
	if err != nil {
		t.Fatal(err)
	}
	if want := DefaultTruth(cl, 3); !reflect.DeepEqual(tr, want) {
		t.Errorf("truth read back:\n%+v\nwant\n%+v", tr, want)
	}
}

// truth.json is tagged commcal-truth/1; a truth without a tag (written by hand) reads, one
// of another format does not.
func TestTruthFormat(t *testing.T) {
	cl := testCluster(t, "ccpe-testbed")
	dir, _ := simulateDir(t, cl, 2)
	path := filepath.Join(dir, TruthFile)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(data, []byte("{\n  \"format\": \"commcal-truth/1\",")) {
		t.Fatalf("truth.json starts %q", data[:min(len(data), 60)])
	}
	for _, c := range []struct {
		format string
		ok     bool
	}{{"", true}, {"commcal-truth/2", false}, {"commcal-calibration/2", false}} {
		doc := bytes.Replace(data, []byte(`"format": "commcal-truth/1",`), []byte(`"format": "`+c.format+`",`), 1)
		if c.format == "" {
			doc = bytes.Replace(data, []byte(`"format": "commcal-truth/1",`), nil, 1)
		}
		p := filepath.Join(t.TempDir(), "truth.json")
		if err := os.WriteFile(p, doc, 0o644); err != nil {
			t.Fatal(err)
		}
		tr, err := ReadTruth(p)
		if c.ok != (err == nil) || (err == nil && tr.Cluster != "ccpe-testbed") {
			t.Errorf("format %q: %v", c.format, err)
		}
	}
}
