package datasets

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats/scalar"

	"github.com/commcal/commcal/cluster"
)

// realIngest ingests files of a testdata directory (imb, netpipe: real outputs, see their
// README) into a fresh dataset of the four-node cluster imb/lab4.toml (nodes a, b, c, d).
func realIngest(t *testing.T, src Source, dir string, files ...string) (*Manifest, []Transfer, []Collective, error) {
	t.Helper()
	cl, err := cluster.Load(filepath.Join("testdata", "imb", "lab4.toml"))
	if err != nil {
		t.Fatal(err)
	}
	var srcs []Source
	for _, f := range files {
		s := src
		s.Path = filepath.Join(dir, f)
		if !filepath.IsAbs(dir) && !strings.HasPrefix(dir, "..") {
			s.Path = filepath.Join("testdata", dir, f)
		}
		srcs = append(srcs, s)
	}
	got, err := ingestTables(t, cl, 0, srcs)
	return got.m, got.tr, got.co, err
}

// patternRows returns the transfers of one pattern, in flow order.
func patternRows(tr []Transfer, id string) []Transfer {
	var out []Transfer
	for _, r := range tr {
		if r.PatternID == id {
			out = append(out, r)
		}
	}
	return out
}

// checkPattern checks a pattern's experiment, its flows (src>dst each) and that every flow
// takes seconds.
func checkPattern(t *testing.T, tr []Transfer, id, exp string, flows []string, seconds float64) {
	t.Helper()
	got := patternRows(tr, id)
	if len(got) != len(flows) {
		t.Fatalf("pattern %s: %d flows, want %d: %+v", id, len(got), len(flows), got)
	}
	for i, r := range got {
		if r.Experiment != exp || r.Src+">"+r.Dst != flows[i] || r.FlowID != int64(i) || !scalar.EqualWithinAbsOrRel(r.TEnd, seconds, 0, 1e-12) {
			t.Errorf("pattern %s flow %d: %+v, want %s %s taking %g s", id, i, r, exp, flows[i], seconds)
		}
	}
}

// countBy counts transfers by experiment.
func countBy(tr []Transfer) map[string]int {
	n := map[string]int{}
	for _, r := range tr {
		n[r.Experiment]++
	}
	return n
}

var abcd = Source{Ranks: []string{"a", "b", "c", "d"}}

// The IMB outputs made here (testdata/imb/README.md), each read as the experiments it ran:
// figures are the file's, µs as 10⁻⁶ s, t_max (t[usec] for the single transfers).
func TestIMBRealOutputs(t *testing.T) {
	t.Run("2 processes", func(t *testing.T) {
		m, tr, _, err := realIngest(t, abcd, "imb", "v2021.11_p2p_np2.txt")
		if err != nil {
			t.Fatal(err)
		}
		// 21 sizes above 0 B: PingPong 1 flow, PingPing and Sendrecv 2, Exchange 4.
		if n := countBy(tr); n["p2p_sweep"] != 21 || n["exchange_calibration"] != 21*(2+2+4) || len(tr) != 189 {
			t.Errorf("experiments %v", n)
		}
		checkPattern(t, tr, "IMB-MPI1/PingPong/a>b:1024", "p2p_sweep", []string{"a>b"}, 4.47e-6)
		checkPattern(t, tr, "IMB-MPI1/PingPing/a<>b:1024", "exchange_calibration", []string{"a>b", "b>a"}, 7.64e-6)
		checkPattern(t, tr, "IMB-MPI1/Sendrecv/a<>b:1024", "exchange_calibration", []string{"a>b", "b>a"}, 7.00e-6)
		checkPattern(t, tr, "IMB-MPI1/Exchange/a<>b:1024", "exchange_calibration", []string{"a>b", "a>b", "b>a", "b>a"}, 11.82e-6)
		if !hasNote(m, "IMB-MPI1 2021.11 Exchange (line 118, 2 processes): 21 sizes, exchange_calibration patterns a<>b (each rank sends its two neighbours, both the one peer), 4 flows each taking t_max") {
			t.Errorf("notes %q", m.Sources[0].Notes)
		}
	})
	t.Run("4 processes: cycles", func(t *testing.T) {
		for _, f := range []string{"v2021.11_p2p_np4.txt", "head_p2p_np4.txt"} {
			m, tr, _, err := realIngest(t, abcd, "imb", f)
			if err != nil {
				t.Fatal(err)
			}
			// PingPong and PingPing on ranks 0 and 1; Sendrecv 4 flows, Exchange 8.
			if n := countBy(tr); n["p2p_sweep"] != 21 || n["exchange_calibration"] != 42 || n["cycle_calibration"] != 21*(4+8) {
				t.Errorf("%s: experiments %v", f, n)
			}
			if f == "v2021.11_p2p_np4.txt" {
				checkPattern(t, tr, "IMB-MPI1/PingPong/a>b:1024", "p2p_sweep", []string{"a>b"}, 9.30e-6)
				checkPattern(t, tr, "IMB-MPI1/Sendrecv/ring(a,b,c,d):1024", "cycle_calibration", []string{"a>b", "b>c", "c>d", "d>a"}, 18.45e-6)
				checkPattern(t, tr, "IMB-MPI1/Exchange/ring(a,b,c,d):1024", "cycle_calibration",
					[]string{"a>b", "a>d", "b>c", "b>a", "c>d", "c>b", "d>a", "d>c"}, 30.97e-6)
			}
			if !hasNote(m, "cycle_calibration patterns ring(a,b,c,d) (each rank sends to the next and receives from the one before at once), 4 flows each taking t_max") {
				t.Errorf("%s: notes %q", f, m.Sources[0].Notes)
			}
		}
	})
	t.Run("collectives", func(t *testing.T) {
		for _, f := range []string{"v2021.11_coll_np4.txt", "head_coll_np4.txt"} {
			m, _, co, err := realIngest(t, abcd, "imb", f)
			if err != nil {
				t.Fatal(err)
			}
			if len(co) != 5*22 {
				t.Fatalf("%s: %d collectives", f, len(co))
			}
			for _, c := range co {
				if c.Root != "a" || c.Procs != 4 {
					t.Errorf("%s: %+v", f, c)
				}
			}
			if f != "v2021.11_coll_np4.txt" {
				continue
			}
			// The 1024 B row of each block, t_max.
			want := map[string]float64{"alltoall": 58.69e-6, "allgather": 56.95e-6, "bcast": 24.52e-6, "scatter": 26.80e-6, "gather": 34.44e-6}
			for _, c := range co {
				if c.Bytes == 1024 && !scalar.EqualWithinAbsOrRel(c.Seconds, want[c.Op], 0, 1e-12) {
					t.Errorf("%+v, want %g s", c, want[c.Op])
				}
			}
			if !hasNote(m, "bcast collectives of t_max (the slowest rank's time), root a, the node of rank 0, where IMB keeps it") || !hasNote(m, "alltoall collectives of t_max (the slowest rank's time), no root: rank 0's node a") {
				t.Errorf("notes %q", m.Sources[0].Notes)
			}
		}
	})
	t.Run("collectives root from --src", func(t *testing.T) {
		// Without --ranks, --src names rank 0's node, which is all a collective row keeps.
		_, _, co, err := realIngest(t, Source{Src: "c", Dst: "d"}, "imb", "v2021.11_coll_np4.txt")
		if err != nil {
			t.Fatal(err)
		}
		if len(co) != 110 || co[0].Root != "c" {
			t.Errorf("%d collectives, first %+v", len(co), co[0])
		}
	})
	t.Run("several process counts", func(t *testing.T) {
		_, tr, co, err := realIngest(t, abcd, "imb", "v2021.11_npmin2_np4.txt", "v2021.11_np3.txt")
		if err != nil {
			t.Fatal(err)
		}
		// -npmin 2 on 4 processes: 2 then 4; 3 processes: 2 then 3. 17 sizes above 0 B (1 B to 64 KiB).
		checkPattern(t, tr, "IMB-MPI1/Sendrecv/ring(a,b,c):16", "cycle_calibration", []string{"a>b", "b>c", "c>a"}, 17.18e-6)
		checkPattern(t, tr, "IMB-MPI1/Exchange/ring(a,b,c):16", "cycle_calibration", []string{"a>b", "a>c", "b>c", "b>a", "c>a", "c>b"}, 27.46e-6)
		if got := patternRows(tr, "IMB-MPI1/Sendrecv/a<>b:16"); len(got) != 4 || got[2].Rep != 1 || got[0].Experiment != "exchange_calibration" {
			t.Errorf("Sendrecv on 2 processes in both files: %+v", got)
		}
		if n := countBy(tr); n["exchange_calibration"] != 2*17*(2+4) || n["cycle_calibration"] != 17*(4+8+3+6) {
			t.Errorf("experiments %v", n)
		}
		procs := map[string][]int64{}
		for _, c := range co {
			if c.Bytes == 16 {
				procs[c.Op] = append(procs[c.Op], c.Procs)
			}
		}
		if len(procs["alltoall"]) != 2 || procs["alltoall"][1] != 4 || len(procs["bcast"]) != 2 || procs["bcast"][1] != 3 {
			t.Errorf("collectives by op %v", procs)
		}
	})
	t.Run("-map reorders the ranks", func(t *testing.T) {
		// -map 2x2: the block's ranks are MPI_COMM_WORLD's 0 2 1 3.
		_, tr, co, err := realIngest(t, abcd, "imb", "v2021.11_map2x2_np4.txt")
		if err != nil {
			t.Fatal(err)
		}
		checkPattern(t, tr, "IMB-MPI1/Sendrecv/ring(a,c,b,d):16", "cycle_calibration", []string{"a>c", "c>b", "b>d", "d>a"}, 815.90e-6)
		if len(co) != 6 || co[5].Root != "a" || !scalar.EqualWithinAbsOrRel(co[5].Seconds, 215.81e-6, 0, 1e-12) {
			t.Errorf("collectives %+v", co)
		}
	})
	t.Run("-multi 0", func(t *testing.T) {
		// Multi-Sendrecv: 2 groups of 2 (ranks 0 1 and 2 3) exchanging at once, one pattern of
		// t_max over all; Multi-PingPong (ping-pongs at once) is left out; Sendrecv on one group
		// of 4 is a cycle.
		m, tr, _, err := realIngest(t, abcd, "imb", "v2021.11_multi0_np4.txt")
		if err != nil {
			t.Fatal(err)
		}
		checkPattern(t, tr, "IMB-MPI1/Multi-Sendrecv/a<>b,c<>d:16", "exchange_calibration", []string{"a>b", "b>a", "c>d", "d>c"}, 87.91e-6)
		checkPattern(t, tr, "IMB-MPI1/Sendrecv/ring(a,b,c,d):16", "cycle_calibration", []string{"a>b", "b>c", "c>d", "d>a"}, 137.46e-6)
		if len(tr) != 2*5*4 || !hasNote(m, "exchange_calibration patterns a<>b,c<>d (MPI_Sendrecv with one peer, in 2 groups at once (-multi)), 4 flows each taking t_max") ||
			!hasNote(m, "left out, no table holds them: Multi-PingPong on 2 groups of 2 processes") {
			t.Errorf("%d transfers, notes %q", len(tr), m.Sources[0].Notes)
		}
	})
	t.Run("older versions", func(t *testing.T) {
		for _, c := range []struct{ file, version string }{{"v2019.6_np4.txt", "2019 Update 6"}, {"v2018.1_np4.txt", "2018 Update 1"}} {
			m, tr, co, err := realIngest(t, abcd, "imb", c.file)
			if err != nil {
				t.Fatal(err)
			}
			// 9 sizes above 0 B: PingPing 2 flows, Sendrecv 2 then 4, Exchange 4 then 8;
			// Bcast and Gather at 2 and 4 processes, 10 sizes each.
			if n := countBy(tr); n["exchange_calibration"] != 9*(2+2+4) || n["cycle_calibration"] != 9*(4+8) || len(co) != 40 {
				t.Errorf("%s: experiments %v, %d collectives", c.file, n, len(co))
			}
			if !hasNote(m, "IMB-MPI1 "+c.version+" Bcast") {
				t.Errorf("%s: notes %q", c.file, m.Sources[0].Notes)
			}
		}
	})
}

// IMB outputs that cannot be read as an experiment are refused with the tool, the benchmark,
// the mode and what to do.
func TestIMBRefused(t *testing.T) {
	cases := []struct {
		name, file string
		src        Source
		kind       ErrKind
		want       []string
	}{
		{"cycle without ranks", "v2021.11_p2p_np4.txt", Source{Src: "a", Dst: "b"}, ErrUnsupported,
			[]string{"IMB-MPI1 2021.11 Sendrecv output of 4 processes does not name their nodes", "--ranks"}},
		{"too few ranks", "v2021.11_p2p_np4.txt", Source{Ranks: []string{"a", "b", "c"}}, ErrUnsupported,
			[]string{"Sendrecv output of 4 processes, and --ranks names 3 nodes"}},
		{"ranks on one node", "v2021.11_p2p_np4.txt", Source{Ranks: []string{"a", "a", "b", "b"}}, ErrSameNode,
			[]string{"line 34", "IMB-MPI1 2021.11 PingPong on 2 processes: ranks 0 and 1", "both on node a", "--map-by node"}},
		{"ring neighbours on one node", "v2021.11_np3.txt", Source{Ranks: []string{"a", "b", "b"}}, ErrSameNode,
			[]string{"Sendrecv on 3 processes: ranks 1 and 2", "both on node b"}},
		// a → b → a → b → a: each node sends to and receives from one peer, not a cycle.
		{"ring on two nodes", "v2021.11_p2p_np4.txt", Source{Ranks: []string{"a", "b", "a", "b"}}, ErrUnsupported,
			[]string{"line 92", "Sendrecv on 4 processes: ranks 0 and 2 of the cycles are both on node a", "distinct nodes", "one rank per node"}},
		{"collective ranks on one node", "v2021.11_coll_np4.txt", Source{Ranks: []string{"a", "a", "b", "b"}}, ErrSameNode,
			[]string{"line 35", "Alltoall on 4 processes: ranks 0 and 1, of one collective, are both on node a", "loopback", "one rank per node (mpirun --map-by node)"}},
		{"root shift", "v2021.11_root_shift_np4.txt", abcd, ErrUnsupported,
			[]string{"line 33", "IMB-MPI1 2021.11 Bcast on 4 processes: the root moves from rank to rank at every iteration (run with -root_shift on)", "re-run with -root_shift off"}},
		{"collective without rank 0", "v2021.11_coll_np4.txt", Source{}, ErrUnsupported,
			[]string{"Alltoall output of 4 processes does not name the node of its rank 0", "--src", "--ranks"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, _, err := realIngest(t, c.src, "imb", c.file)
			ie := wantKind(t, err, c.kind)
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%v\nwant %q in it (%s)", err, w, ie.Kind)
				}
			}
		})
	}
}

// Headers and flags read from IMB's source rather than from a run here: old versions move the
// root, -root_shift off keeps it, -map's rank order may be cut, IMB-P2P pairs ranks.
func TestIMBHeaders(t *testing.T) {
	bcast := "#---\n# Benchmarking Bcast\n# #processes = 2\n#---\n       #bytes #repetitions  t_min[usec]  t_max[usec]  t_avg[usec]\n            8         1000         1.00         2.00         1.50\n"
	v41 := "#    Intel (R) MPI Benchmarks 4.1, MPI-1 part    \n"
	cases := []struct {
		name, content string
		src           Source
		kind          ErrKind   // "" when read
		want          string    // in the error, or in a note
		coll          []float64 // seconds of the collectives read
	}{
		{"IMB 4.1 moves the root", v41 + bcast, x1y1, ErrUnsupported, "the root moves from rank to rank at every iteration (IMB 4.1 moves it by default)", nil},
		{"IMB 4.1 with -root_shift off", v41 + "# Calling sequence was: \n\n# ./IMB-MPI1 Bcast -root_shift off\n\n" + bcast, x1y1, "", "bcast collectives of t_max", []float64{2e-6}},
		{"no header", bcast, x1y1, ErrUnsupported, "the file has no IMB header naming its version", nil},
		{"IMB 2018 wrapped calling sequence", "#    Intel (R) MPI Benchmarks 2018 Update 1, MPI-1 part    \n# Calling sequence was: \n\n# IMB-MPI1 Bcast -msglog 0:12 -iter 50 -time 1 -npmin\n#          2 -root_shift\n#          on\n\n# Minimum message length in bytes:   0\n" + bcast,
			x1y1, ErrUnsupported, "(run with -root_shift on)", nil},
		{"-sync off noted", "#    Intel(R) MPI Benchmarks 2021.11, MPI-1 part\n# Calling sequence was: \n\n# IMB-MPI1 Bcast -sync off \n\n" + bcast, x1y1, "", "without a barrier between iterations (-sync off)", []float64{2e-6}},
		{"-map rank order cut", "#    Intel(R) MPI Benchmarks 2021.11, MPI-1 part\n# Benchmarking Sendrecv\n# #processes = 4; rank order (rowwise): \n#     0    2  ...  3\n#---\n #bytes #repetitions t_min[usec] t_max[usec] t_avg[usec] Mbytes/sec\n 8 10 1.0 2.0 1.5 0.1\n",
			Source{Ranks: []string{"X1", "Y1", "X2", "Y2"}}, ErrUnsupported, "its list of ranks is cut short", nil},
		{"more ranks than a cluster holds", "#    Intel(R) MPI Benchmarks 2021.11, MPI-1 part\n# Benchmarking Multi-Sendrecv\n# ( 2000000 groups of 2 processes each running simultaneous )\n#---\n #bytes #repetitions t_min[usec] t_max[usec] t_avg[usec] Mbytes/sec\n 8 10 1.0 2.0 1.5 0.1\n",
			x1y1, ErrUnsupported, "Multi-Sendrecv on 2000000 groups of 2 processes: more than 1048576 ranks", nil},
		{"IMB-P2P pairs on 4 processes", "#    Intel(R) MPI Benchmarks 2021.7, IMB-P2P part\n# Benchmarking PingPing\n# #processes = 4\n #bytes #repetitions t[usec] Mbytes/sec Msg/sec\n 8 10 1.0 0.1 100\n",
			x1y1, ErrUnsupported, "an IMB-P2P output with only PingPing on 4 processes", nil},
	}
	cl := testCluster(t, "ccpe-testbed")
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			src := c.src
			src.Path = filepath.Join(dir, "imb.txt")
			src.Format = FormatIMB
			if err := os.WriteFile(src.Path, []byte(c.content), 0o644); err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(dir, "ds")
			m, err := Ingest(context.Background(), IngestOptions{Cluster: cl, Sources: []Source{src}, Out: out, Created: fixedTime})
			if c.kind != "" {
				wantKind(t, err, c.kind)
				if !strings.Contains(err.Error(), c.want) {
					t.Errorf("%v\nwant %q in it", err, c.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			ds, err := Open(out)
			if err != nil {
				t.Fatal(err)
			}
			co, err := ReadAll[Collective](context.Background(), ds, CollectivesTable)
			if err != nil {
				t.Fatal(err)
			}
			if len(co) != len(c.coll) || co[0].Root != "X1" || !scalar.EqualWithinAbsOrRel(co[0].Seconds, c.coll[0], 0, 1e-12) || !hasNote(m, c.want) {
				t.Errorf("collectives %+v, notes %q", co, m.Sources[0].Notes)
			}
		})
	}
}

// An IMB output other than those of testdata/imb, kept in the shared data beside the
// repository (shared/data/formats/imb), is read as the same experiments: PingPong a sweep,
// Sendrecv and Exchange on 2 processes exchanges.
func TestIMBSharedOutput(t *testing.T) {
	dir := filepath.Join("..", "..", "shared", "data", "formats", "imb")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("needs the shared IMB output %s (imb_mpi1_pingpong_sendrecv_exchange.txt), outside the repository: %v", dir, err)
	}
	_, tr, _, err := realIngest(t, Source{Src: "a", Dst: "b"}, dir, "imb_mpi1_pingpong_sendrecv_exchange.txt")
	if err != nil {
		t.Fatal(err)
	}
	if n := countBy(tr); n["p2p_sweep"] != 21 || n["exchange_calibration"] != 21*(2+4) {
		t.Errorf("experiments %v", n)
	}
	if got := patternRows(tr, "IMB-MPI1/Exchange/a<>b:1048576"); len(got) != 4 || got[2].Src != "b" {
		t.Errorf("Exchange at 1 MiB: %+v", got)
	}
}
