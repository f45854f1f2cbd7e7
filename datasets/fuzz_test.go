package datasets

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet/metadata"
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
		checkInputError(t, err, src.Path)
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
	client := ip3{client: "10.0.0.1", srv: "10.0.0.2", bidir: true, requested: 1000, sent: 1000, recv: 1000, secs: 0.01, rsent: 1000, rrecv: 1000, rsecs: 0.02}
	server := ip3{server: true, client: "10.0.0.1", srv: "10.0.0.2", reverse: true, requested: 1000, sent: 1000, recv: 1000, secs: 0.01}
	f.Add([]byte(iperf3Doc(client) + iperf3Doc(server)))
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzIngest(t, "run.json", data, Source{Format: FormatIperf3, Src: "X1", Dst: "Y1"})
	})
}

// FuzzIngestParquet is seeded with a real table file written by the package (and the corpus in
// testdata/fuzz/FuzzIngestParquet: that file damaged in its footer, its pages, its logical
// types, truncated). Every input must give a dataset or an *InputError naming the file, never
// a panic or a hang. Fuzz with TMPDIR=/dev/shm: each successful input is committed with fsync.
func FuzzIngestParquet(f *testing.F) {
	cl := testCluster(f, "ccpe-testbed")
	good := tableFile(f, cl, TransfersTable, genTransfers(cl, 12, 51))
	f.Add(good)
	f.Add(rewriteFooter(f, good, func(md *metadata.FileMetaData) {
		md.FileMetaData.RowGroups[0].Columns[2].MetaData.TotalCompressedSize = -1
	}))
	f.Add(unknownLogicalType(f, good))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzIngest(t, "in.parquet", data, Source{Format: FormatParquet}) })
}

// FuzzReadManifest decodes manifests: an error is an *InputError naming manifest.json on one
// line; a manifest that decodes encodes and decodes back to itself.
func FuzzReadManifest(f *testing.F) {
	cl := testCluster(f, "ccpe-testbed")
	dir := filepath.Join(f.TempDir(), "ds")
	w, err := NewDirWriter(dir, false, cl, nil)
	if err != nil {
		f.Fatal(err)
	}
	if err := WriteRows(w, TransfersTable, "gen", genTransfers(cl, 5, 52)); err != nil {
		f.Fatal(err)
	}
	if err := w.Commit(&Manifest{Format: ManifestFormat, Tool: "commcal", Cluster: cl.Description(), Notes: []string{"seed"}}); err != nil {
		f.Fatal(err)
	}
	good, err := os.ReadFile(filepath.Join(dir, ManifestFile))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add(append(bytes.Clone(good), good...))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ParseManifest(data)
		if err != nil {
			checkInputError(t, err, ManifestFile)
			return
		}
		again, err := EncodeJSON(m)
		if err != nil {
			t.Fatal(err)
		}
		m2, err := ParseManifest(again)
		if err != nil {
			t.Fatalf("a decoded manifest does not decode once encoded: %v\n%s", err, again)
		}
		if !reflect.DeepEqual(m, m2) {
			t.Fatalf("manifest changed through encoding:\n%+v\n%+v", m, m2)
		}
	})
}

// FuzzDecodeJSON checks the strict JSON decoder against encoding/json: what it accepts,
// encoding/json decodes to the same value; trailing data is reported only after a complete
// first document; every error is an *InputError naming the file on one line.
func FuzzDecodeJSON(f *testing.F) {
	f.Add([]byte(`{"name": "x", "alpha": 1e-9, "inner": {"a": 1, "b": 2}, "list": [{"a": 1}, {"a": 1}], "map": {"k": "v"}}`))
	f.Add([]byte(`{"inner": {"a": 1, "a": 2}}`))
	f.Add([]byte("{\"name\": \"x\"}\n{\"name\": \"y\"}"))
	f.Add([]byte(`{"list": [{"a": 1}, {"b": 1, "b": 2}], "name": "\u0000"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var v jsonProbe
		err := decodeJSON("f.json", data, &v)
		if err == nil {
			var w jsonProbe
			if err := json.Unmarshal(bytes.TrimPrefix(data, utf8BOM), &w); err != nil {
				t.Fatalf("strict decoding accepted what encoding/json refuses: %v", err)
			}
			if !reflect.DeepEqual(v, w) {
				t.Fatalf("strict decoding gave %+v, encoding/json %+v", v, w)
			}
			return
		}
		if ie := checkInputError(t, err, "f.json"); ie.Kind == ErrTrailingData {
			var first json.RawMessage
			if err := json.NewDecoder(bytes.NewReader(bytes.TrimPrefix(data, utf8BOM))).Decode(&first); err != nil {
				t.Fatalf("trailing data reported after a first document that does not decode: %v", err)
			}
		}
	})
}

// fuzzText fuzzes one text adapter from the outputs written for its tests.
func fuzzText(f *testing.F, format string, src Source, seeds ...string) {
	for _, name := range seeds {
		data, err := os.ReadFile(filepath.Join("testdata", "benchmarks", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		src.Format = format
		fuzzIngest(t, "out.txt", data, src)
	})
}

// The text adapters' corpora in testdata/fuzz hold, besides these seeds, the malformed
// inputs of TestTextStructure.

// FuzzIngestOSU reads with the nodes of four ranks, so that the multi-pair tests and the
// collectives are placed (and the two-process tests read ranks 0 and 1 from them); its seeds
// are written outputs and real ones (testdata/osu) of every kind of test.
func FuzzIngestOSU(f *testing.F) {
	fuzzText(f, FormatOSU, Source{Src: "X1", Dst: "Y1", Ranks: []string{"X1", "X2", "Y1", "Y2"}}, "osu5_latency.txt", "osu7_latency_full.txt", "osu7_latency_z.txt",
		"osu7_bibw.txt", "osu7_mbw_mr_1pair.txt", "osu7_two_datatypes.txt", "osu71_multi_lat.txt",
		"../osu/osu74_mbw_mr_np4.txt", "../osu/osu53_mbw_mr_np4_p1.txt", "../osu/osu74_mbw_mr_V.txt", "../osu/osu74_multi_lat_np4.txt",
		"../osu/osu53_multi_lat_np4.txt", "../osu/osu74_alltoall_f.txt", "../osu/osu74_scatterv.txt", "../osu/osu53_bcast.txt",
		"../osu/osu74_iallgather.txt", "../osu/osu74_latency_T_c.txt")
}

func FuzzIngestIMB(f *testing.F) {
	fuzzText(f, FormatIMB, Source{Src: "X1", Dst: "Y1", Ranks: []string{"X1", "Y1", "X2", "Y2"}}, "imb_sections.txt", "imb_p2p.txt", "imb_barrier_timeout.txt", "imb_multi.txt")
}

func FuzzIngestSKaMPI(f *testing.F) {
	fuzzText(f, FormatSKaMPI, Source{Src: "X1", Dst: "Y1"}, "skampi_two_blocks.ski", "skampi_loops.ski")
}

func FuzzIngestNetPIPE(f *testing.F) {
	fuzzText(f, FormatNetPIPE, Source{}, "netpipe_np.out", "netpipe_named.stdout", "netpipe_nptcp.stdout", "netpipe_p5.out")
}

// FuzzIngestAuto tells each input's format by its content (detectFormat), then reads it:
// whatever the bytes, a dataset or an *InputError, never a panic.
func FuzzIngestAuto(f *testing.F) {
	entries, err := os.ReadDir(filepath.Join("testdata", "benchmarks"))
	if err != nil {
		f.Fatal(err)
	}
	var seeds []string
	for _, e := range entries {
		if !e.IsDir() && e.Name() != "README.md" {
			seeds = append(seeds, e.Name())
		}
	}
	fuzzText(f, FormatAuto, Source{Src: "X1", Dst: "Y1"}, append(seeds, "sgcal/lab_PingPong.csv", "sgcal/lab_Recv.csv")...)
}

func FuzzIngestMPIBlib(f *testing.F) {
	fuzzText(f, FormatMPIBlib, Source{Src: "X1", Dst: "Y1"}, "mpiblib_p2p.out", "mpiblib_scatter.out")
}

// FuzzIngestSimGridCalibration: the calibration's other files (single-call timings, lists of
// sizes, breakpoints), each alone: refused or read, never a panic.
func FuzzIngestSimGridCalibration(f *testing.F) {
	fuzzText(f, FormatSimGrid, Source{Src: "X1", Dst: "Y1"}, "sgcal/lab_Recv.csv", "sgcal/lab_Wtime.csv", "sgcal/lab_breakpoints")
	f.Add([]byte("Recv, 26231\nPingPong, 7930\n"))
}
