package datasets

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
)

// fuzzIngest ingests one file and checks the all-or-nothing contract: either a dataset whose
// manifest agrees with what reads back, or an error and no output at all.
func fuzzIngest(t *testing.T, name string, data []byte, src Source) {
	cl := testCluster(t, "ccpe-testbed")
	dir := t.TempDir()
	src.Path = filepath.Join(dir, name)
	if err := os.WriteFile(src.Path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	m, err := Ingest(context.Background(), IngestOptions{Cluster: cl, Sources: []Source{src}, Out: out, Created: fixedTime, BatchRows: 7})
	if err != nil {
		if _, statErr := os.Stat(out); !os.IsNotExist(statErr) {
			t.Fatalf("output left after error %v", err)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 1 {
			t.Fatalf("temporary files left after error %v: %v", err, entries)
		}
		return
	}
	ds, err := Open(out)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, tab := range Tables {
		if err := ds.Scan(context.Background(), tab, nil, func(r arrow.Record) error { n += r.NumRows(); return nil }); err != nil {
			t.Fatal(err)
		}
	}
	if n != m.Sources[0].Rows || n == 0 {
		t.Fatalf("manifest says %d rows, read %d", m.Sources[0].Rows, n)
	}
}

func FuzzIngestCSV(f *testing.F) {
	f.Add([]byte("cluster,experiment,pattern_id,rep,flow_id,src_node,dst_node,bytes,t_start_s,t_end_s\nccpe-testbed,p2p_sweep,p1,0,0,X1,Y1,1000,0,0.01\n"))
	f.Add([]byte("cluster,i,j,bytes_out,bytes_back,rep,seconds\nccpe-testbed,X1,X2,0,0,0,1e-4\nccpe-testbed,X1,X2,0,0,1,1e-4\n"))
	f.Add([]byte("cluster,op,root,procs,bytes,rep,seconds\nccpe-testbed,gather,X1,4,0,0,0.1\n"))
	f.Add([]byte("a,b\n\"x\ny\",2\n"))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzIngest(t, "in.csv", data, Source{Format: FormatCSV}) })
}

func FuzzIngestSimGrid(f *testing.F) {
	f.Add([]byte("MPI_Send,10,1.0,1e-5\nMPI_Recv,10,1.0,2e-5\n"))
	f.Add([]byte("MPI_Send,10,1.0,1e-5\nMPI_Recv,10,1.0,2e-5\nMPI_Send,10,1.5,1e-5\nMPI_Recv,10,1.5,-2e-5\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzIngest(t, "pp.csv", data, Source{Format: FormatSimGrid, Src: "X1", Dst: "Y1"})
	})
}

func FuzzIngestIperf3(f *testing.F) {
	f.Add([]byte(`{"start":{"connected":[{"local_host":"127.0.0.1","remote_host":"127.0.0.1"}],"test_start":{"protocol":"TCP","num_streams":1,"reverse":0}},` +
		`"end":{"sum_sent":{"seconds":0.01,"bytes":1000},"sum_received":{"seconds":0.011,"bytes":1000}}}`))
	f.Add([]byte(`{"error":"x"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzIngest(t, "run.json", data, Source{Format: FormatIperf3, Src: "X1", Dst: "Y1"})
	})
}
