package datasets

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/commcal/commcal/cluster"
)

const benchRows = 1_000_000

var (
	benchOnce sync.Once
	benchFile string
	benchErr  error
)

// benchTransfers writes, once per process, a transfers table of a million rows: random
// patterns of 1–57 transfers on the two-rack testbed, five repetitions each.
func benchTransfers(b *testing.B) (*cluster.Cluster, string) {
	cl := testCluster(b, "ccpe-testbed")
	benchOnce.Do(func() {
		dir, err := os.MkdirTemp("", "commcal-bench-")
		if err != nil {
			benchErr = err
			return
		}
		rng := rand.New(rand.NewPCG(1, 2))
		nodes := cl.Nodes()
		rows := make([]Transfer, 0, benchRows)
		for p := 0; len(rows) < benchRows; p++ {
			n := 1 + rng.IntN(57)
			for rep := int64(0); rep < 5; rep++ {
				t0 := float64(p*5+int(rep)) * 10
				for f := 0; f < n && len(rows) < benchRows; f++ {
					s := rng.IntN(len(nodes))
					d := (s + 1 + rng.IntN(len(nodes)-1)) % len(nodes)
					rows = append(rows, Transfer{Cluster: cl.Name(), Experiment: "random", PatternID: fmt.Sprintf("p%d", p),
						Rep: rep, FlowID: int64(f), Src: nodes[s].Name, Dst: nodes[d].Name, Bytes: 1 << (10 + rng.IntN(14)),
						TStart: t0, TEnd: t0 + 0.001 + rng.Float64()})
				}
			}
		}
		w, err := NewDirWriter(filepath.Join(dir, "ds"), false, cl, nil)
		if err == nil {
			err = WriteRows(w, TransfersTable, "bench", rows)
		}
		if err == nil {
			err = w.Commit(&Manifest{Format: ManifestFormat, Cluster: cl.Description()})
		}
		benchFile, benchErr = filepath.Join(dir, "ds", TransfersTable.File()), err
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	return cl, benchFile
}

// peakHeap samples the heap while fn runs and returns the largest growth over the start.
func peakHeap(fn func()) uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base, peak := ms.HeapAlloc, ms.HeapAlloc
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var m runtime.MemStats
		for {
			select {
			case <-done:
				return
			case <-time.After(2 * time.Millisecond):
				runtime.ReadMemStats(&m)
				peak = max(peak, m.HeapAlloc)
			}
		}
	}()
	fn()
	close(done)
	wg.Wait()
	return peak - base
}

// BenchmarkIngest measures ingest of a million-row Parquet transfers table (read, check every
// row, fingerprint keys, write Parquet) against two anchors on the same file: reading it with
// pqarrow alone, and copying it with pqarrow (read every column with its file reader, write
// them with its writer under the writer settings of ingest: Snappy, dictionaries and
// statistics as parquetProps says, the same row groups). Each of these reports rows/s and its
// peak heap. On a shared machine the load changes from one sub-benchmark to the next, so the
// ratio the design cares about, ingest time over copy time (ingest/copy, wanted close to 1),
// comes from a fourth that alternates an ingest and a copy in every iteration.
func BenchmarkIngest(b *testing.B) {
	cl, path := benchTransfers(b)
	// measure runs fn b.N times, reporting rows/s and the largest heap growth of a run.
	measure := func(fn func(b *testing.B)) func(b *testing.B) {
		return func(b *testing.B) {
			var peak uint64
			for i := 0; i < b.N; i++ {
				peak = max(peak, peakHeap(func() { fn(b) }))
			}
			b.ReportMetric(float64(benchRows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
		}
	}
	b.Run("commcal-ingest", measure(func(b *testing.B) { ingestOnce(b, cl, path) }))
	b.Run("pqarrow-read", measure(func(b *testing.B) { pqarrowCopy(b, path, false) }))
	b.Run("pqarrow-read-write", measure(func(b *testing.B) { pqarrowCopy(b, path, true) }))
	b.Run("ingest-vs-read-write", func(b *testing.B) {
		var ingestTime, copyTime time.Duration
		for i := 0; i < b.N; i++ {
			start := time.Now()
			ingestOnce(b, cl, path)
			mid := time.Now()
			pqarrowCopy(b, path, true)
			ingestTime, copyTime = ingestTime+mid.Sub(start), copyTime+time.Since(mid)
		}
		b.ReportMetric(ingestTime.Seconds()/copyTime.Seconds(), "ingest/copy")
	})
}

// ingestOnce ingests the Parquet file at path into a new dataset directory.
func ingestOnce(b *testing.B, cl *cluster.Cluster, path string) {
	out := filepath.Join(b.TempDir(), "ds")
	if _, err := Ingest(context.Background(), IngestOptions{Cluster: cl, Sources: []Source{{Path: path}}, Out: out}); err != nil {
		b.Fatal(err)
	}
}

// pqarrowCopy reads every column of the Parquet file at path with pqarrow's file reader and,
// with write, writes the records to a new file with pqarrow's writer.
func pqarrowCopy(b *testing.B, path string, write bool) {
	rdr, err := file.OpenParquetFile(path, false)
	if err != nil {
		b.Fatal(err)
	}
	defer rdr.Close()
	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{BatchSize: 1 << 16}, memory.DefaultAllocator)
	if err != nil {
		b.Fatal(err)
	}
	rr, err := fr.GetRecordReader(context.Background(), nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer rr.Release()
	var fw *pqarrow.FileWriter
	if write {
		out, err := os.Create(filepath.Join(b.TempDir(), TransfersTable.File()))
		if err != nil {
			b.Fatal(err)
		}
		fw, err = pqarrow.NewFileWriter(rr.Schema(), out, parquetProps(TransfersTable, nil), pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
		if err != nil {
			b.Fatal(err)
		}
	}
	var n int64
	for rr.Next() {
		n += rr.Record().NumRows()
		if fw != nil {
			if err := fw.WriteBuffered(rr.Record()); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := rr.Err(); err != nil && !errors.Is(err, io.EOF) { // some versions report the end as io.EOF
		b.Fatal(err)
	}
	if n != benchRows {
		b.Fatalf("read %d rows", n)
	}
	if fw != nil {
		if err := fw.Close(); err != nil { // closes the file too
			b.Fatal(err)
		}
	}
}

func TestMain(m *testing.M) {
	code := m.Run()
	if benchFile != "" {
		os.RemoveAll(filepath.Dir(filepath.Dir(benchFile)))
	}
	os.Exit(code)
}
