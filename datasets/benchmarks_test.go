package datasets

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats/scalar"
)

// benchIngest ingests testdata/benchmarks files (as given, detected by content) into a fresh
// dataset of the ccpe-testbed cluster and returns its manifest and tables.
func benchIngest(t *testing.T, src Source, files ...string) (*Manifest, []Transfer, []Collective, []RoundTrip, error) {
	t.Helper()
	cl := testCluster(t, "ccpe-testbed")
	var srcs []Source
	for _, f := range files {
		s := src
		s.Path = filepath.Join("testdata", "benchmarks", f)
		srcs = append(srcs, s)
	}
	if st, err := os.Stat(srcs[0].Path); err == nil && st.IsDir() {
		var err error
		if srcs, err = ExpandSources([]string{srcs[0].Path}, src); err != nil {
			t.Fatal(err)
		}
	}
	got, err := ingestTables(t, cl, 2, srcs)
	return got.m, got.tr, got.co, got.rt, err
}

// sweepPoint is what a p2p_sweep or bidirectional row must be.
type sweepPoint struct {
	bytes   int64
	seconds float64
}

// checkSweep compares a dataset's transfers with the points expected, in order, each with
// flows flows (1 for p2p_sweep). Times are compared to 1e-12 relative: they are the file's
// decimal figures times a power of ten, or divided by a rate, in float64.
func checkSweep(t *testing.T, got []Transfer, exp string, flows int, want []sweepPoint) {
	t.Helper()
	if len(got) != flows*len(want) {
		t.Fatalf("%d transfers, want %d: %+v", len(got), flows*len(want), got)
	}
	for i, tr := range got {
		w := want[i/flows]
		if tr.Experiment != exp || tr.Bytes != w.bytes || tr.TStart != 0 || !scalar.EqualWithinAbsOrRel(tr.TEnd, w.seconds, 0, 1e-12) {
			t.Errorf("row %d: %+v, want %s of %d B taking %g s", i, tr, exp, w.bytes, w.seconds)
		}
	}
}

func hasNote(m *Manifest, sub string) bool {
	for _, s := range m.Sources {
		for _, n := range s.Notes {
			if strings.Contains(n, sub) {
				return true
			}
		}
	}
	return false
}

var x1y1 = Source{Src: "X1", Dst: "Y1"}

// Each adapter on outputs written from the tools' documented formats: the rows, their units
// (µs to s, MB/s as 10⁶ B/s, half round trips), formats told by content, and the notes.
func TestBenchmarkOutputs(t *testing.T) {
	t.Run("imb sections", func(t *testing.T) {
		ranks := Source{Ranks: []string{"X1", "Y1", "X2", "Y2"}}
		m, tr, co, _, err := benchIngest(t, ranks, "imb_sections.txt")
		if err != nil {
			t.Fatal(err)
		}
		// PingPong (0 B left out), then PingPing: one flow each way of t[usec], then Sendrecv
		// on 4: the cycle X1→Y1→X2→Y2→X1 of t_max. Exchange on 4 has only its 0-byte row.
		checkSweep(t, tr[:3], "p2p_sweep", 1, []sweepPoint{{1, 1.6e-6}, {4096, 4e-6}, {1048576, 200e-6}})
		checkSweep(t, tr[3:7], "exchange_calibration", 2, []sweepPoint{{1, 1.9e-6}, {1048576, 300e-6}})
		checkSweep(t, tr[7:], "cycle_calibration", 4, []sweepPoint{{1, 2.2e-6}})
		if tr[3].PatternID != "IMB-MPI1/PingPing/X1<>Y1:1" || tr[7].PatternID != "IMB-MPI1/Sendrecv/ring(X1,Y1,X2,Y2):1" || tr[10].Src != "Y2" || tr[10].Dst != "X1" {
			t.Errorf("patterns %+v %+v %+v", tr[3], tr[7], tr[10])
		}
		// Scatter at 2 and 4 processes, Gather and Alltoall at 4: t_max, root rank 0's node,
		// bytes per process.
		want := []Collective{{Op: "scatter", Procs: 2, Bytes: 0, Seconds: 0.7e-6}, {Op: "scatter", Procs: 2, Bytes: 1024, Seconds: 4e-6},
			{Op: "scatter", Procs: 4, Bytes: 0, Seconds: 1e-6}, {Op: "scatter", Procs: 4, Bytes: 1024, Seconds: 8e-6},
			{Op: "gather", Procs: 4, Bytes: 1024, Seconds: 9e-6}, {Op: "alltoall", Procs: 4, Bytes: 0, Seconds: 0.2e-6},
			{Op: "alltoall", Procs: 4, Bytes: 1024, Seconds: 12e-6}}
		if len(co) != len(want) {
			t.Fatalf("collectives %+v", co)
		}
		for i, c := range co {
			w := want[i]
			if c.Op != w.Op || c.Procs != w.Procs || c.Bytes != w.Bytes || c.Root != "X1" || !scalar.EqualWithinAbsOrRel(c.Seconds, w.Seconds, 0, 1e-12) {
				t.Errorf("collective %d: %+v, want %+v", i, c, w)
			}
		}
		if s := m.Sources[0]; s.Table != "transfers,collectives" || s.Rows != int64(len(tr)+len(co)) {
			t.Errorf("source %+v", s)
		}
		if !hasNote(m, "IMB-MPI1 2019 Update 6 Exchange: the 0-byte row is left out") || !hasNote(m, "IMB-MPI1 2019") {
			t.Errorf("notes %q", m.Sources[0].Notes)
		}
	})
	t.Run("imb twice: repetitions", func(t *testing.T) {
		// The same output twice is two runs: its rows again, as repetition 1.
		_, tr, co, _, err := benchIngest(t, Source{Ranks: []string{"X1", "Y1", "X2", "Y2"}}, "imb_sections.txt", "imb_sections.txt")
		if err != nil {
			t.Fatal(err)
		}
		n := len(tr) / 2
		if tr[0].Rep != 0 || tr[n].Rep != 1 || tr[n].PatternID != tr[0].PatternID || co[len(co)/2].Rep != 1 {
			t.Errorf("repetitions %+v %+v", tr[0], tr[n])
		}
	})
	t.Run("skampi", func(t *testing.T) {
		m, tr, _, _, err := benchIngest(t, x1y1, "skampi_two_blocks.ski")
		if err != nil {
			t.Fatal(err)
		}
		// Half the round trip; bytes from the second value; the size measured twice is
		// repetitions 0 and 1.
		checkSweep(t, tr, "p2p_sweep", 1, []sweepPoint{{4, 50e-6}, {1024, 100e-6}, {1024, 101e-6}, {1048576, 9000e-6}})
		if tr[1].Rep != 0 || tr[2].Rep != 1 {
			t.Errorf("repetitions %d %d", tr[1].Rep, tr[2].Rep)
		}
		if !hasNote(m, "left out, no table holds them: MPI_Bcast") || !hasNote(m, "SKaMPI 5.0.4") {
			t.Errorf("notes %q", m.Sources[0].Notes)
		}
	})
	t.Run("netpipe output file", func(t *testing.T) {
		_, tr, _, _, err := benchIngest(t, x1y1, "netpipe_np.out")
		if err != nil {
			t.Fatal(err)
		}
		checkSweep(t, tr, "p2p_sweep", 1, []sweepPoint{{1, 8e-6}, {2, 8e-6}, {1024, 20e-6}, {1048576, 1e-3}})
	})
	t.Run("netpipe stdout names its hosts", func(t *testing.T) {
		m, tr, _, _, err := benchIngest(t, Source{}, "netpipe_named.stdout")
		if err != nil {
			t.Fatal(err)
		}
		checkSweep(t, tr, "p2p_sweep", 1, []sweepPoint{{1, 8e-6}, {1024, 20e-6}, {1048576, 1e-3}})
		if tr[0].Src != "X1" || tr[0].Dst != "Y1" || !hasNote(m, "20–1000 round trips") {
			t.Errorf("%+v, notes %q", tr[0], m.Sources[0].Notes)
		}
	})
	t.Run("mpiblib p2p", func(t *testing.T) {
		m, tr, _, _, err := benchIngest(t, x1y1, "mpiblib_p2p.out")
		if err != nil {
			t.Fatal(err)
		}
		checkSweep(t, tr, "p2p_sweep", 1, []sweepPoint{{1024, 20e-6}, {2048, 30e-6}, {3072, 40e-6}})
		if !hasNote(m, "over 5–100 repetitions") {
			t.Errorf("notes %q", m.Sources[0].Notes)
		}
	})
	t.Run("mpiblib scatter", func(t *testing.T) {
		_, _, co, _, err := benchIngest(t, Source{}, "mpiblib_scatter.out")
		if err != nil {
			t.Fatal(err)
		}
		if len(co) != 2 || co[1] != (Collective{Cluster: "ccpe-testbed", Op: "scatter", Root: "Y1", Procs: 4, Bytes: 1024, Seconds: 3e-5}) || co[0].Bytes != 0 {
			t.Errorf("collectives %+v", co)
		}
	})
	t.Run("simgrid calibration directory", func(t *testing.T) {
		m, _, _, rt, err := benchIngest(t, x1y1, "sgcal")
		if err != nil {
			t.Fatal(err)
		}
		if len(rt) != 2 || rt[1].BytesOut != 100000 || !scalar.EqualWithinAbsOrRel(rt[1].Seconds, 1e-4, 0, 1e-12) {
			t.Errorf("round trips %+v", rt)
		}
		if !slices.Equal(m.HockneyBreaks, []float64{1420, 65536}) {
			t.Errorf("breaks %v", m.HockneyBreaks)
		}
		if !hasNote(m, "MPI_Wtime calls alone: the cost of reading the clock") || !hasNote(m, "MPI_Recv calls alone") || !hasNote(m, "breakpoints file") {
			t.Errorf("notes %+v", m.Sources)
		}
		for _, s := range m.Sources {
			if s.Format != FormatSimGrid {
				t.Errorf("%s read as %s", s.Path, s.Format)
			}
		}
	})
}

// Outputs that other versions and flags of the tools print, read from their source: each is
// read (or refused for what it is) by the structural checks, not taken for a damaged file.
func TestUnusualBenchmarkOutputs(t *testing.T) {
	t.Run("netpipe perturbation steps back", func(t *testing.T) {
		// NPtcp -p 5: a size of the sweep is measured 5 B below and above it once the step
		// exceeds 6 B, so 12 is followed by 11 and 21 by 19.
		_, tr, _, _, err := benchIngest(t, x1y1, "netpipe_p5.out")
		if err != nil {
			t.Fatal(err)
		}
		if len(tr) != 25 || tr[6].Bytes != 12 || tr[7].Bytes != 11 || tr[10].Bytes != 19 || !scalar.EqualWithinAbsOrRel(tr[7].TEnd, 5.11e-6, 0, 1e-12) {
			t.Errorf("%d transfers: %+v", len(tr), tr)
		}
	})
	t.Run("netpipe NPtcp stdout", func(t *testing.T) {
		// NPtcp prints its socket buffers before the main loop, and no hosts.
		_, tr, _, _, err := benchIngest(t, x1y1, "netpipe_nptcp.stdout")
		if err != nil {
			t.Fatal(err)
		}
		checkSweep(t, tr, "p2p_sweep", 1, []sweepPoint{{1, 8e-6}, {2, 8e-6}, {3, 8e-6}, {4, 8e-6}})
	})
	t.Run("imb-p2p", func(t *testing.T) {
		m, tr, _, _, err := benchIngest(t, x1y1, "imb_p2p.txt")
		if err != nil {
			t.Fatal(err)
		}
		checkSweep(t, tr, "p2p_sweep", 1, []sweepPoint{{1, 1.5e-6}, {1024, 4e-6}})
		if !hasNote(m, "IMB-P2P 2021.7 PingPong (line 11, 2 processes)") {
			t.Errorf("notes %q", m.Sources[0].Notes)
		}
	})
	t.Run("imb time-out and barrier", func(t *testing.T) {
		// The size IMB ran out of time for is left out, and Barrier (no sizes) noted.
		m, tr, _, _, err := benchIngest(t, x1y1, "imb_barrier_timeout.txt")
		if err != nil {
			t.Fatal(err)
		}
		checkSweep(t, tr, "p2p_sweep", 1, []sweepPoint{{1, 1.6e-6}, {4096, 4e-6}})
		if !hasNote(m, "sizes IMB did not measure, left out: 4194304 B (time-out)") || !hasNote(m, "no table holds them: Barrier on 2 processes") {
			t.Errorf("notes %q", m.Sources[0].Notes)
		}
	})
	t.Run("imb -multi", func(t *testing.T) {
		// Groups running at once, on nodes the file does not name: refused for what it is.
		_, _, _, _, err := benchIngest(t, x1y1, "imb_multi.txt")
		ie := wantKind(t, err, ErrUnsupported)
		if !strings.Contains(ie.Detail, "only Multi-PingPong on 2 groups of 2 processes") || !strings.Contains(ie.Detail, "under -multi 0 PingPing's, Sendrecv's and Exchange's groups at once") {
			t.Error(err)
		}
	})
	t.Run("skampi loop variables", func(t *testing.T) {
		// Any loop variable's name; a second loop restarts the sizes; "---" for a process.
		_, tr, _, _, err := benchIngest(t, x1y1, "skampi_loops.ski")
		if err != nil {
			t.Fatal(err)
		}
		checkSweep(t, tr, "p2p_sweep", 1, []sweepPoint{{4, 5e-6}, {8, 6e-6}, {4, 5.5e-6}, {8, 6.5e-6}, {4, 5.6e-6}, {8, 6.6e-6}})
		if tr[0].Rep != 0 || tr[2].Rep != 1 || tr[4].Rep != 2 || tr[5].Rep != 2 {
			t.Errorf("repetitions %+v", tr)
		}
	})
}

// Files that hold no transfer time, or that the adapters cannot map honestly, are refused
// with what they are; bad content names the line and the column.
func TestBenchmarkOutputsRefused(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cl := testCluster(t, "ccpe-testbed")
	osuHead := "# OSU MPI Latency Test v7.4\n# Datatype: MPI_CHAR.\n# Size       Avg Latency(us)\n"
	imbHead := "# Benchmarking PingPong\n# #processes = 2\n       #bytes #repetitions      t[usec]   Mbytes/sec\n"
	cases := []struct {
		name, file, content string
		src                 Source
		kind                ErrKind
		want                []string
	}{
		{"osu many pairs", "", "", x1y1, ErrUnsupported, []string{"4 pairs"}},
		{"osu without nodes", "l.txt", osuHead + "1 2.0\n", Source{}, ErrUnsupported, []string{"--src", "rank 0"}},
		{"osu bad number", "l.txt", osuHead + "1 fast\n", x1y1, ErrWrongType, []string{"line 4", `column "Avg Latency(us)"`, `"fast"`}},
		{"osu zero latency", "l.txt", osuHead + "1 0.00\n", x1y1, ErrNonPositive, []string{"line 4"}},
		{"osu ragged row", "l.txt", osuHead + "1 2.0 3.0\n", x1y1, ErrRaggedRow, []string{"line 4", "header of line 3"}},
		{"osu row before header", "l.txt", "# OSU MPI Latency Test v7.4\n1 2.0\n", x1y1, ErrMissingColumn, []string{"line 2"}},
		{"osu collective", "a.txt", "# OSU MPI Allreduce Latency Test v7.4\n# Size Avg Latency(us)\n1 2.0\n", x1y1, ErrUnsupported, []string{"Allreduce"}},
		{"osu failed validation", "l.txt", "# OSU MPI Latency Test v7.4\n# Size       Avg Latency(us)        Validation\n1 2.0 Fail\n", x1y1, ErrCorrupt, []string{"Validation"}},
		{"imb only allreduce", "i.txt", "# Benchmarking Allreduce\n# #processes = 4\n #bytes #repetitions t_min[usec] t_max[usec] t_avg[usec]\n 8 10 1.0 2.0 1.5\n", x1y1, ErrUnsupported, []string{"Allreduce on 4 processes"}},
		{"imb negative size", "i.txt", imbHead + "-8 10 1.0 0.1\n", x1y1, ErrNegative, []string{"line 4", `column "#bytes"`}},
		{"imb no processes", "i.txt", "# Benchmarking PingPong\n #bytes #repetitions t[usec] Mbytes/sec\n 8 10 1.0 0.1\n", x1y1, ErrMissingColumn, []string{"#processes"}},
		{"skampi row outside block", "s.ski", "# SKaMPI Version 5\ncount= 1 1 2.0 0.1 4 2.0 2.0\n", x1y1, ErrMissingColumn, []string{"line 2"}},
		{"skampi short row", "s.ski", "# begin result \"Pingpong_Send_Recv\"\ncount= 1 1 2.0\n", x1y1, ErrRaggedRow, []string{"line 2"}},
		{"netpipe bad line", "np.stdout", "Now starting the main loop\n  0:       1 bytes  29026 times -->      1.30 Mbps in  soon usec\n", x1y1, ErrWrongType, []string{"line 2"}},
		{"netpipe hosts not nodes", "np.stdout", "0: vm\n1: vm2\n  0:       1 bytes  29026 times -->      1.30 Mbps in  5.86 usec\n", Source{}, ErrUnsupported, []string{`"vm"`, "--src"}},
		{"mpiblib coarse clock", "m.out", "#p2p adaptive benchmark 0-1\n#msg\ttime\t\twtick\treps\tci\n8\t1e-6\t0\t5\t1e-8\n", x1y1, ErrCorrupt, []string{"wtick"}},
		{"mpiblib bcast", "m.out", "#nodes\t\t4\n#root\t\t0\n#operation\tMPI_Bcast\n#msg\ttime\t\twtick\treps\tci\n8\t1e-6\t1\t5\t1e-8\n", x1y1, ErrUnsupported, []string{"MPI_Bcast"}},
		{"simgrid wtime alone", "lab_Wtime.csv", "MPI_Wtime,1,0.03,5e-08\n", Source{}, ErrUnsupported, []string{"cost of reading the clock", "*_PingPong.csv"}},
		{"simgrid breakpoints alone", "lab_breakpoints", "Limit, Name\n1420, Small\n", Source{}, ErrUnsupported, []string{"--hockney-breaks"}},
		{"simgrid mixed calls", "lab_Recv.csv", "MPI_Recv,1,0.03,5e-08\nMPI_Isend,1,0.03,5e-08\n", Source{}, ErrWrongType, []string{"line 2", `column "operation"`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join("testdata", "benchmarks", "osu7_mbw_mr_4pairs.txt")
			if c.file != "" {
				path = write(c.file, c.content)
			}
			src := c.src
			src.Path = path
			checkRefused(t, cl, src, c.kind, c.want...)
		})
	}
}

// TestDetectBenchmarkFormats: every file is told by its content, whatever its name.
func TestDetectBenchmarkFormats(t *testing.T) {
	want := map[string]string{
		"osu5_latency.txt": FormatOSU, "osu7_bibw.txt": FormatOSU, "osu71_multi_lat.txt": FormatOSU,
		"imb_sections.txt": FormatIMB, "skampi_two_blocks.ski": FormatSKaMPI, "netpipe_np.out": FormatNetPIPE,
		"netpipe_named.stdout": FormatNetPIPE, "mpiblib_p2p.out": FormatMPIBlib, "mpiblib_scatter.out": FormatMPIBlib,
		"sgcal/lab_PingPong.csv": FormatSimGrid, "sgcal/lab_Wtime.csv": FormatSimGrid, "sgcal/lab_breakpoints": FormatSimGrid,
		"netpipe_p5.out": FormatNetPIPE, "netpipe_nptcp.stdout": FormatNetPIPE, "imb_p2p.txt": FormatIMB,
		"imb_barrier_timeout.txt": FormatIMB, "imb_multi.txt": FormatIMB, "skampi_loops.ski": FormatSKaMPI,
		"osu7_two_datatypes.txt": FormatOSU,
	}
	for name, format := range want {
		f, err := os.Open(filepath.Join("testdata", "benchmarks", name))
		if err != nil {
			t.Fatal(err)
		}
		got, err := detectFormat("renamed", f)
		f.Close()
		if err != nil || got != format {
			t.Errorf("%s: %q, %v; want %s", name, got, err, format)
		}
	}
}
