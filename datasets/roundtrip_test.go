package datasets

import (
	"context"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow/memory"

	"github.com/commcal/commcal/cluster"
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

// simulateDir writes a simulated dataset and returns its directory and rows.
func simulateDir(t *testing.T, cl *cluster.Cluster, seed uint64) (string, *Generated) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "sim")
	_, g, err := Simulate(context.Background(), SimulateOptions{Cluster: cl, Truth: DefaultTruth(cl, seed), Out: out, Version: "test", Created: fixedTime})
	if err != nil {
		t.Fatal(err)
	}
	return out, g
}

func readBack(t *testing.T, dir string, mem memory.Allocator) *Generated {
	t.Helper()
	ds, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	g := &Generated{}
	var errs [5]error
	g.Transfers, errs[0] = ReadAll[Transfer](ctx, ds, TransfersTable)
	g.RoundTrips, errs[1] = ReadAll[RoundTrip](ctx, ds, RoundTripsTable)
	g.OneToTwo, errs[2] = ReadAll[OneToTwo](ctx, ds, OneToTwoTable)
	g.Collectives, errs[3] = ReadAll[Collective](ctx, ds, CollectivesTable)
	g.PingPongPairs, errs[4] = ReadAll[PingPongPairs](ctx, ds, PingPongPairsTable)
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	return g
}

func TestSimulateIngestReadBack(t *testing.T) {
	for _, name := range []string{"ccpe-testbed", "graphene"} {
		t.Run(name, func(t *testing.T) {
			cl := testCluster(t, name)
			sim, want := simulateDir(t, cl, 7)
			if len(want.Transfers) == 0 || len(want.RoundTrips) == 0 || len(want.OneToTwo) == 0 || len(want.Collectives) == 0 || len(want.PingPongPairs) == 0 {
				t.Fatalf("generator left a table empty: %d %d %d %d %d", len(want.Transfers), len(want.RoundTrips), len(want.OneToTwo), len(want.Collectives), len(want.PingPongPairs))
			}
			srcs, err := ExpandSources([]string{sim}, Source{})
			if err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(t.TempDir(), "ingested")
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			if _, err := Ingest(context.Background(), IngestOptions{Cluster: cl, Sources: srcs, Out: out, Created: fixedTime, Mem: mem, BatchRows: 1000}); err != nil {
				t.Fatal(err)
			}
			got := readBack(t, out, mem)
			if !reflect.DeepEqual(got, want) {
				t.Fatal("rows read back differ from the simulated rows")
			}
			mem.AssertSize(t, 0)
		})
	}
}
