package datasets

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/experiments"
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

// ingested is what a test ingest gave: the manifest and the tables the adapters write.
type ingested struct {
	m  *Manifest
	tr []Transfer
	co []Collective
	rt []RoundTrip
	sc []Schedule
}

// ingestTables ingests srcs on cl into a fresh dataset (batchRows rows a batch, 0 for the
// default) and reads its tables back; the error is Ingest's, after which nothing may be left
// at the output.
func ingestTables(t *testing.T, cl *cluster.Cluster, batchRows int, srcs []Source) (ingested, error) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "ds")
	m, err := Ingest(context.Background(), IngestOptions{Cluster: cl, Sources: srcs, Out: out, Created: fixedTime, BatchRows: batchRows})
	if err != nil {
		if _, statErr := os.Stat(out); !os.IsNotExist(statErr) {
			t.Fatalf("output left after error %v", err)
		}
		return ingested{}, err
	}
	ds, err := Open(out)
	if err != nil {
		t.Fatal(err)
	}
	got := ingested{m: m}
	var errs [4]error
	got.tr, errs[0] = ReadAll[Transfer](context.Background(), ds, TransfersTable)
	got.co, errs[1] = ReadAll[Collective](context.Background(), ds, CollectivesTable)
	got.rt, errs[2] = ReadAll[RoundTrip](context.Background(), ds, RoundTripsTable)
	got.sc, errs[3] = ReadAll[Schedule](context.Background(), ds, SchedulesTable)
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	return got, nil
}

// synthRows holds rows of every table, as the tests write and read them back.
type synthRows struct {
	Transfers     []Transfer
	RoundTrips    []RoundTrip
	OneToTwo      []OneToTwo
	Collectives   []Collective
	PingPongPairs []PingPongPairs
}

// synthesize draws valid rows of every table on the first six nodes of a cluster: 48
// patterns of 1–4 transfers over every experiment name, round trips, one-to-two
// experiments, scatter and gather sweeps and ping-pong pairs, three repetitions each, every
// time drawn at full float64 precision. The same seed gives the same rows. The simulator
// (package simulate) writes datasets through this package, so these tests cannot import it;
// they need valid rows, not a model (the simulator's own round trip is tested there).
func synthesize(cl *cluster.Cluster, seed uint64) *synthRows {
	rng := rand.New(rand.NewPCG(seed, 0x726f7773))
	secs := func() float64 { return 1e-6 + rng.Float64() }
	var nodes []string
	for _, n := range cl.Nodes()[:min(6, len(cl.Nodes()))] {
		nodes = append(nodes, n.Name)
	}
	n, name := len(nodes), cl.Name()
	g := &synthRows{}
	exps, clock := experiments.All(), 0.0
	for p := range 48 {
		for rep := range int64(3) {
			longest := 0.0
			for f := range 1 + p%4 {
				t := secs()
				longest = max(longest, t)
				g.Transfers = append(g.Transfers, Transfer{Cluster: name, Experiment: exps[p%len(exps)], PatternID: fmt.Sprintf("p%03d", p),
					Rep: rep, FlowID: int64(f), Src: nodes[(p+f)%n], Dst: nodes[(p+f+1+f%(n-1))%n], Bytes: 1 + rng.Int64N(1<<24),
					TStart: clock, TEnd: clock + t})
			}
			clock += longest + 1e-3
		}
	}
	for i := range n {
		for j := i + 1; j < n; j++ {
			for _, out := range []int64{0, 32 << 10} {
				for rep := range int64(3) {
					g.RoundTrips = append(g.RoundTrips, RoundTrip{Cluster: name, I: nodes[i], J: nodes[j], BytesOut: out, Rep: rep, Seconds: secs()})
				}
			}
			for k := j + 1; k < n; k++ {
				for rep := range int64(3) {
					g.OneToTwo = append(g.OneToTwo, OneToTwo{Cluster: name, Root: nodes[(i+1)%n], J: nodes[(j+1)%n], K: nodes[(k+1)%n],
						Bytes: 32 << 10, Rep: rep, Seconds: secs()})
				}
			}
		}
	}
	for _, op := range CollectiveOps {
		for m := int64(0); m <= 40<<10; m += 2 << 10 {
			for rep := range int64(3) {
				g.Collectives = append(g.Collectives, Collective{Cluster: name, Op: op, Root: nodes[0], Procs: int64(n), Bytes: m, Rep: rep, Seconds: secs()})
			}
		}
	}
	for _, pairs := range []int64{1, 2, 4} {
		for e := 10; e <= 20; e++ {
			for rep := range int64(3) {
				g.PingPongPairs = append(g.PingPongPairs, PingPongPairs{Cluster: name, Pairs: pairs, Bytes: 1 << e, Rep: rep,
					RTT: secs(), Os: rng.Float64() * 1e-5, Or: rng.Float64() * 1e-5, Ur: rng.Float64() * 1e-5})
			}
		}
	}
	return g
}

// simulateDir writes the synthetic rows of a seed as a dataset directory, as the simulator
// does (every table, then the manifest), and returns the directory and the rows.
func simulateDir(t *testing.T, cl *cluster.Cluster, seed uint64) (string, *synthRows) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "sim")
	g := synthesize(cl, seed)
	w, err := NewDirWriter(out, false, cl, nil)
	if err != nil {
		t.Fatal(err)
	}
	m := &Manifest{Format: ManifestFormat, Tool: "commcal", Version: "test", Created: fixedTime.Format(time.RFC3339), Cluster: cl.Description()}
	writes := []func() error{
		func() error { return WriteRows(w, TransfersTable, "synth:transfers", g.Transfers) },
		func() error { return WriteRows(w, RoundTripsTable, "synth:roundtrips", g.RoundTrips) },
		func() error { return WriteRows(w, OneToTwoTable, "synth:one_to_two", g.OneToTwo) },
		func() error { return WriteRows(w, CollectivesTable, "synth:collectives", g.Collectives) },
		func() error { return WriteRows(w, PingPongPairsTable, "synth:pingpong_pairs", g.PingPongPairs) },
	}
	for _, write := range writes {
		if err := write(); err != nil {
			w.Abort()
			t.Fatal(err)
		}
	}
	if err := w.Commit(m); err != nil {
		t.Fatal(err)
	}
	return out, g
}

func readBack(t *testing.T, dir string, mem memory.Allocator) *synthRows {
	t.Helper()
	ds, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	g := &synthRows{}
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

// checkRefused ingests src on cl and checks that it is refused as bad input of kind, naming
// its file and saying each of want, with nothing left at the output.
func checkRefused(t *testing.T, cl *cluster.Cluster, src Source, kind ErrKind, want ...string) {
	t.Helper()
	_, err := ingestTables(t, cl, 0, []Source{src})
	if err == nil {
		t.Fatal("accepted")
	}
	if ie := checkInputError(t, err, src.Path); ie.Kind != kind {
		t.Errorf("kind %s, want %s: %v", ie.Kind, kind, err)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%q does not say %q", err, w)
		}
	}
}

// A CSV file with the collectives table's columns goes to that table, and one that also has
// an algorithm column to the schedules table: the table that misses none of its columns wins
// over one that misses some, when both find as many.
func TestCollectivesAndSchedulesCSV(t *testing.T) {
	cl := testCluster(t, "ccpe-testbed")
	root := cl.Nodes()[0].Name
	dir := t.TempDir()
	coll := filepath.Join(dir, "coll.csv")
	sched := filepath.Join(dir, "sched.csv")
	if err := os.WriteFile(coll, []byte("cluster,op,root,procs,bytes,rep,seconds\n"+cl.Name()+",alltoall,"+root+",4,1000,0,0.5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(sched, []byte("cluster,op,algorithm,root,procs,bytes,rep,seconds\n"+cl.Name()+",bcast,binomial,"+root+",8,4096,0,0.25\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := ingestTables(t, cl, 0, []Source{{Path: coll}, {Path: sched}})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.co) != 1 || got.co[0].Op != "alltoall" || got.co[0].Seconds != 0.5 {
		t.Errorf("collectives rows %+v, want the all-to-all", got.co)
	}
	if len(got.sc) != 1 || got.sc[0].Algorithm != "binomial" || got.sc[0].Procs != 8 || got.sc[0].Seconds != 0.25 {
		t.Errorf("schedules rows %+v, want the binomial broadcast", got.sc)
	}
	// A schedules row of a collective no schedule design measures is refused at its row and
	// column.
	if err := os.WriteFile(sched, []byte("cluster,op,algorithm,root,procs,bytes,rep,seconds\n"+cl.Name()+",scatter,binomial,"+root+",8,4096,0,0.25\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = ingestTables(t, cl, 0, []Source{{Path: sched}})
	if ie := checkInputError(t, err, sched); ie.Kind != ErrUnknownOp || ie.Column != "op" || !strings.Contains(ie.Detail, "alltoall, allgather, bcast") {
		t.Errorf("a scatter schedule: %v", err)
	}
}

// TestInferTableFewestMisses checks that of the tables with as many of a file's columns, the
// one missing fewest is named (one_to_two, not transfers, which comes first).
func TestInferTableFewestMisses(t *testing.T) {
	_, err := inferTable(Location{}, []string{"cluster", "bytes", "rep"}, "")
	if err == nil || !strings.Contains(err.Error(), "looks like table one_to_two") {
		t.Errorf("cluster, bytes, rep: %v, want it taken for one_to_two", err)
	}
}
