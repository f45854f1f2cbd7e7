package datasets

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats/scalar"

	"github.com/commcal/commcal/cluster"
)

// The OSU adapter on outputs written from OMB's print statements (testdata/benchmarks): the
// rows, their units (µs to s, MB/s as 10⁶ B/s, aggregate rates per pair), the experiments the
// placements make, and the notes.
func TestOSUOutputs(t *testing.T) {
	t.Run("osu5 latency", func(t *testing.T) {
		m, tr, _, _, err := benchIngest(t, x1y1, "osu5_latency.txt")
		if err != nil {
			t.Fatal(err)
		}
		// The 0-byte row is left out; µs become seconds; one-way times as printed.
		checkSweep(t, tr, "p2p_sweep", 1, []sweepPoint{{1, 1e-6}, {2, 1.02e-6}, {1024, 2.5e-6}, {65536, 30e-6}})
		if m.Sources[0].Format != FormatOSU || m.Sources[0].Table != "transfers" || !hasNote(m, "0-byte row is left out") {
			t.Errorf("source %+v", m.Sources[0])
		}
		// The sweep's pattern ID is text.go's (sweep); it ends with the pair and size.
		if tr[0].Src != "X1" || tr[0].Dst != "Y1" || !strings.HasSuffix(tr[0].PatternID, "X1>Y1:1") || tr[0].Rep != 0 {
			t.Errorf("first row %+v", tr[0])
		}
	})
	t.Run("osu7 latency full format", func(t *testing.T) {
		m, tr, _, _, err := benchIngest(t, x1y1, "osu7_latency_full.txt")
		if err != nil {
			t.Fatal(err)
		}
		checkSweep(t, tr, "p2p_sweep", 1, []sweepPoint{{1, 2e-6}, {4096, 6e-6}, {1048576, 110e-6}})
		if !hasNote(m, "over 100–1000 iterations") {
			t.Errorf("notes %q do not give the iterations", m.Sources[0].Notes)
		}
	})
	t.Run("osu7 latency percentiles and validation", func(t *testing.T) {
		m, tr, _, _, err := benchIngest(t, x1y1, "osu7_latency_z.txt")
		if err != nil {
			t.Fatal(err)
		}
		checkSweep(t, tr, "p2p_sweep", 1, []sweepPoint{{1, 2e-6}, {4096, 6e-6}, {1048576, 110e-6}})
		if !hasNote(m, "percentile columns") {
			t.Errorf("notes %q", m.Sources[0].Notes)
		}
	})
	t.Run("osu multi_lat 7.1", func(t *testing.T) {
		// Two processes on --ranks X1, X2 (one rack): one pair, the k = 1 point of fair_intra.
		m, tr, _, _, err := benchIngest(t, Source{Ranks: []string{"X1", "X2"}}, "osu71_multi_lat.txt")
		if err != nil {
			t.Fatal(err)
		}
		checkSweep(t, tr, "fair_intra", 1, []sweepPoint{{1, 4e-6}, {2, 4.1e-6}, {4096, 12e-6}})
		if tr[0].PatternID != "osu_multi_lat/X1>X2:1" || !hasNote(m, "averaged over the pairs") || !hasNote(m, "fair_intra, 1 pairs: X1>X2") {
			t.Errorf("first row %+v, notes %q", tr[0], m.Sources[0].Notes)
		}
	})
	t.Run("osu bibw", func(t *testing.T) {
		_, tr, _, _, err := benchIngest(t, x1y1, "osu7_bibw.txt")
		if err != nil {
			t.Fatal(err)
		}
		// Each direction: 2·bytes / (MB/s · 10⁶); a same-peer exchange, across racks or not.
		checkSweep(t, tr, "exchange_calibration", 2, []sweepPoint{{1, 2 / 2e6}, {1024, 2048 / 1000e6}, {1048576, 2 * 1048576 / 20000e6}})
		if tr[0].Src != "X1" || tr[1].Src != "Y1" || tr[1].Dst != "X1" || tr[1].FlowID != 1 || tr[0].PatternID != "osu_bibw/X1<>Y1:1" || tr[1].PatternID != tr[0].PatternID {
			t.Errorf("flows %+v %+v", tr[0], tr[1])
		}
	})
	t.Run("osu mbw_mr one pair", func(t *testing.T) {
		// One pair across racks (X1, Y1): the k = 1 point of fair_inter; within a rack, of
		// fair_intra.
		_, tr, _, _, err := benchIngest(t, x1y1, "osu7_mbw_mr_1pair.txt")
		if err != nil {
			t.Fatal(err)
		}
		checkSweep(t, tr, "fair_inter", 1, []sweepPoint{{1, 1 / 2e6}, {1024, 1024 / 1024e6}, {4194304, 4194304 / 10000e6}})
		_, tr, _, _, err = benchIngest(t, Source{Ranks: []string{"X1", "X2"}}, "osu7_mbw_mr_1pair.txt")
		if err != nil {
			t.Fatal(err)
		}
		checkSweep(t, tr, "fair_intra", 1, []sweepPoint{{1, 1 / 2e6}, {1024, 1024 / 1024e6}, {4194304, 4194304 / 10000e6}})
		if tr[0].PatternID != "osu_mbw_mr/X1>X2:1" {
			t.Errorf("pattern %q", tr[0].PatternID)
		}
	})
	t.Run("osu mbw_mr four pairs", func(t *testing.T) {
		// Ranks 0-3 on X1-X4, 4-7 on Y1-Y4: four disjoint pairs, each flow bytes·4 / rate.
		src := Source{Ranks: []string{"X1", "X2", "X3", "X4", "Y1", "Y2", "Y3", "Y4"}}
		_, tr, _, _, err := benchIngest(t, src, "osu7_mbw_mr_4pairs.txt")
		if err != nil {
			t.Fatal(err)
		}
		checkSweep(t, tr, "fair_inter", 4, []sweepPoint{{1, 4 / 2e6}, {1024, 4 * 1024 / 1024e6}, {4194304, 4 * 4194304 / 10000e6}})
		if tr[3].Src != "X4" || tr[3].Dst != "Y4" || tr[3].FlowID != 3 || tr[3].PatternID != "osu_mbw_mr/X1>Y1,X2>Y2,X3>Y3,X4>Y4:1" {
			t.Errorf("fourth flow %+v", tr[3])
		}
	})
	t.Run("osu alltoall -f", func(t *testing.T) {
		m, _, co, _, err := benchIngest(t, Source{Ranks: []string{"Y2", "X1", "X2", "Y1"}}, "osu7_alltoall_f.txt")
		if err != nil {
			t.Fatal(err)
		}
		// The Max Latency column: the collective is complete when its slowest process is.
		want := []Collective{{Op: "alltoall", Bytes: 1, Seconds: 30e-6}, {Op: "alltoall", Bytes: 1024, Seconds: 50e-6}, {Op: "alltoall", Bytes: 1048576, Seconds: 2100e-6}}
		if len(co) != len(want) {
			t.Fatalf("%d rows, want %d: %+v", len(co), len(want), co)
		}
		for i, w := range want {
			c := co[i]
			if c.Op != w.Op || c.Bytes != w.Bytes || c.Root != "Y2" || c.Procs != 4 || c.Rep != 0 || !scalar.EqualWithinAbsOrRel(c.Seconds, w.Seconds, 0, 1e-12) {
				t.Errorf("row %d: %+v, want %+v rooted at Y2 over 4 processes", i, c, w)
			}
		}
		if !hasNote(m, "over 100–1000 iterations") || !hasNote(m, "4 processes, root Y2") || !hasNote(m, "3 rows are OSU's Max Latency (-f: the slowest process's mean time per call") {
			t.Errorf("notes %q", m.Sources[0].Notes)
		}
	})
	t.Run("osu persistent scatter", func(t *testing.T) {
		// osu_scatter_persistent prints osu_scatter's header and rows under its own title.
		dir := t.TempDir()
		path := filepath.Join(dir, "s.txt")
		text := "# OSU MPI Scatter Persistent Latency Test v7.4\n# Datatype: MPI_CHAR.\n# Size       Avg Latency(us)\n1                       7.00\n2                       8.00\n"
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		_, co := osuIngest(t, testCluster(t, "ccpe-testbed"), Source{Path: path, Ranks: []string{"X1", "Y1", "Y2"}})
		if len(co) != 2 || co[1] != (Collective{Cluster: "ccpe-testbed", Op: "scatter", Root: "X1", Procs: 3, Bytes: 2, Seconds: 8e-6}) {
			t.Errorf("rows %+v", co)
		}
	})
	t.Run("osu two datatypes", func(t *testing.T) {
		// -T mpi_char mpi_int: a header per datatype, each with its sizes.
		_, tr, _, _, err := benchIngest(t, x1y1, "osu7_two_datatypes.txt")
		if err != nil {
			t.Fatal(err)
		}
		checkSweep(t, tr, "p2p_sweep", 1, []sweepPoint{{1, 2e-6}, {4, 2.1e-6}, {4, 2.2e-6}, {8, 2.3e-6}})
		if tr[1].Rep != 0 || tr[2].Rep != 1 {
			t.Errorf("repetitions %+v", tr)
		}
	})
}

// osuIngest ingests sources on cl into a fresh dataset and returns its transfers and
// collectives.
func osuIngest(t *testing.T, cl *cluster.Cluster, srcs ...Source) ([]Transfer, []Collective) {
	t.Helper()
	got, err := ingestTables(t, cl, 0, srcs)
	if err != nil {
		t.Fatal(err)
	}
	return got.tr, got.co
}

// osuCase is one real OSU output (testdata/osu, made with OMB 7.4 and 5.3; see its README)
// ingested with the nodes src gives, and what it must become: transfers of experiment exp,
// flows per pattern, or collectives rows of op (root the first of --ranks, procs its length);
// points patterns or rows in all; the last one's size and time (the file's last figure,
// converted as the source says) and repetition, its pattern ID and flows.
type osuCase struct {
	name, file string
	src        Source
	exp, op    string
	flows      int
	points     int
	last       sweepPoint
	rep        int64
	id, pairs  string
	notes      []string
}

var (
	ranksXXYY = []string{"X1", "X2", "Y1", "Y2"}
	x1x2      = Source{Src: "X1", Dst: "X2"}
)

// osuRealCases: every real output made for the adapter, read as the experiment it is. The
// times are the figures the files print: µs × 10⁻⁶, or bytes × pairs / (MB/s × 10⁶).
var osuRealCases = []osuCase{
	{"mbw_mr 7.4 one pair", "osu74_mbw_mr_np2.txt", x1x2, "fair_intra", "", 1, 17, sweepPoint{65536, 65536 / 3580.80e6}, 0,
		"osu_mbw_mr/X1>X2:65536", "X1>X2", []string{"sums the k pairs", "fair_intra, 1 pairs: X1>X2"}},
	{"mbw_mr 7.4 two pairs on two nodes", "osu74_mbw_mr_np4.txt", Source{Ranks: []string{"X1", "X1", "X2", "X2"}}, "fair_intra", "", 2, 17,
		sweepPoint{65536, 2 * 65536 / 3676.07e6}, 0, "osu_mbw_mr/X1>X2:65536×2", "X1>X2, X1>X2", []string{"fair_intra, 2 pairs: X1>X2, X1>X2"}},
	{"mbw_mr 7.4 two disjoint pairs", "osu74_mbw_mr_np4.txt", Source{Ranks: ranksXXYY}, "fair_inter", "", 2, 17,
		sweepPoint{65536, 2 * 65536 / 3676.07e6}, 0, "osu_mbw_mr/X1>Y1,X2>Y2:65536", "X1>Y1, X2>Y2", nil},
	{"mbw_mr 5.3 two disjoint pairs", "osu53_mbw_mr_np4.txt", Source{Ranks: ranksXXYY}, "fair_inter", "", 2, 23,
		sweepPoint{4194304, 2 * 4194304 / 8764.43e6}, 0, "osu_mbw_mr/X1>Y1,X2>Y2:4194304", "X1>Y1, X2>Y2", nil},
	// 5.3's -p 1 on four processes: one pair, rank 0 to rank 1; ranks 2 and 3 idle.
	{"mbw_mr 5.3 -p 1 of four processes", "osu53_mbw_mr_np4_p1.txt", Source{Ranks: ranksXXYY}, "fair_intra", "", 1, 23,
		sweepPoint{4194304, 4194304 / 6166.85e6}, 0, "osu_mbw_mr/X1>X2:4194304", "X1>X2", nil},
	{"multi_lat 7.4 one pair across racks", "osu74_multi_lat_np2.txt", Source{Ranks: []string{"X1", "Y1"}}, "fair_inter", "", 1, 17,
		sweepPoint{65536, 23.39e-6}, 0, "osu_multi_lat/X1>Y1:65536", "X1>Y1", []string{"averaged over the pairs"}},
	{"multi_lat 7.4 two disjoint pairs", "osu74_multi_lat_np4.txt", Source{Ranks: ranksXXYY}, "fair_inter", "", 2, 17,
		sweepPoint{65536, 42.09e-6}, 0, "osu_multi_lat/X1>Y1,X2>Y2:65536", "X1>Y1, X2>Y2", nil},
	{"multi_lat 5.3 two pairs on two nodes", "osu53_multi_lat_np4.txt", Source{Ranks: []string{"X1", "X1", "Y1", "Y1"}}, "fair_intra", "", 2, 23,
		sweepPoint{4194304, 690.23e-6}, 0, "osu_multi_lat/X1>Y1:4194304×2", "X1>Y1, X1>Y1", []string{"0-byte row is left out"}},
	{"bibw 7.4", "osu74_bibw.txt", x1x2, "exchange_calibration", "", 2, 21,
		sweepPoint{1048576, 2 * 1048576 / 5275.16e6}, 0, "osu_bibw/X1<>X2:1048576", "X1>X2, X2>X1", []string{"exchange_calibration pattern of one flow each way"}},
	{"bibw 7.4 held out (--role)", "osu74_bibw.txt", Source{Src: "X1", Dst: "X2", Role: RoleHeldOut}, "exchange", "", 2, 21,
		sweepPoint{1048576, 2 * 1048576 / 5275.16e6}, 0, "osu_bibw/X1<>X2:1048576", "X1>X2, X2>X1", nil},
	{"bibw 5.3 nodes from --ranks", "osu53_bibw.txt", Source{Ranks: []string{"X1", "Y1"}}, "exchange_calibration", "", 2, 23,
		sweepPoint{4194304, 2 * 4194304 / 3705.29e6}, 0, "osu_bibw/X1<>Y1:4194304", "X1>Y1, Y1>X1", nil},
	{"bw 7.4 -m -i -x -W", "osu74_bw_m_i_x.txt", x1y1, "p2p_sweep", "", 1, 11,
		sweepPoint{1048576, 1048576 / 5780.38e6}, 0, "X1>Y1:1048576", "X1>Y1", []string{"from X1 to Y1"}},
	{"bw_persistent 7.4", "osu74_bw_persistent.txt", x1y1, "p2p_sweep", "", 1, 17,
		sweepPoint{65536, 65536 / 771.47e6}, 0, "X1>Y1:65536", "X1>Y1", []string{"OSU osu_bw_persistent v7.4"}},
	{"latency 7.4 -z", "osu74_latency_z.txt", x1y1, "p2p_sweep", "", 1, 14,
		sweepPoint{65536, 29.33e-6}, 0, "X1>Y1:65536", "X1>Y1", []string{"percentile columns"}},
	// -T all: three datatypes' blocks; the third 1024 B row is repetition 2.
	{"latency 7.4 -T all -c", "osu74_latency_T_c.txt", x1y1, "p2p_sweep", "", 1, 29,
		sweepPoint{1024, 6.33e-6}, 2, "X1>Y1:1024", "X1>Y1", nil},
	// Without -f, OSU's average over the processes, and a note that it is below the
	// collective's completion; with -f, the Max Latency column.
	{"alltoall 7.4", "osu74_alltoall.txt", Source{Ranks: ranksXXYY}, "", "alltoall", 0, 21, sweepPoint{1048576, 1277.81e-6}, 0, "", "",
		[]string{"the block each process sends to each other", "4 processes, root X1",
			"21 rows are OSU's average latency (the mean over the processes of each one's mean time per call: below the collective's completion"}},
	{"alltoall 7.4 -f", "osu74_alltoall_f.txt", Source{Ranks: ranksXXYY}, "", "alltoall", 0, 21, sweepPoint{1048576, 1472.62e-6}, 0, "", "",
		[]string{"over 10 iterations", "21 rows are OSU's Max Latency"}},
	{"allgather 7.4", "osu74_allgather.txt", Source{Ranks: ranksXXYY}, "", "allgather", 0, 21, sweepPoint{1048576, 2139.29e-6}, 0, "", "", nil},
	{"bcast 7.4 root Y3", "osu74_bcast.txt", Source{Ranks: []string{"Y3", "X1", "X2", "Y1"}}, "", "bcast", 0, 21, sweepPoint{1048576, 388.72e-6}, 0, "", "",
		[]string{"root Y3"}},
	{"scatter 7.4", "osu74_scatter.txt", Source{Ranks: ranksXXYY}, "", "scatter", 0, 21, sweepPoint{1048576, 381.48e-6}, 0, "", "", nil},
	{"gather 7.4", "osu74_gather.txt", Source{Ranks: ranksXXYY}, "", "gather", 0, 21, sweepPoint{1048576, 379.96e-6}, 0, "", "", nil},
	{"scatterv 7.4", "osu74_scatterv.txt", Source{Ranks: ranksXXYY}, "", "scatter", 0, 17, sweepPoint{65536, 103.86e-6}, 0, "", "", nil},
	{"alltoall 5.3 -f", "osu53_alltoall_f.txt", Source{Ranks: ranksXXYY}, "", "alltoall", 0, 21, sweepPoint{1048576, 2714.49e-6}, 0, "", "", nil},
	{"bcast 5.3", "osu53_bcast.txt", Source{Ranks: ranksXXYY}, "", "bcast", 0, 21, sweepPoint{1048576, 2057.53e-6}, 0, "", "", nil},
	{"gather 5.3", "osu53_gather.txt", Source{Ranks: ranksXXYY}, "", "gather", 0, 21, sweepPoint{1048576, 487.31e-6}, 0, "", "", nil},
}

func TestOSURealOutputs(t *testing.T) {
	for _, c := range osuRealCases {
		t.Run(c.name, func(t *testing.T) {
			m, tr, co, _, err := benchIngest(t, c.src, filepath.Join("..", "osu", c.file))
			if err != nil {
				t.Fatal(err)
			}
			if c.op != "" {
				checkOSUCollectives(t, co, c)
			} else {
				checkOSUTransfers(t, tr, c)
			}
			if len(co)+len(tr) == 0 || m.Sources[0].Format != FormatOSU {
				t.Errorf("source %+v", m.Sources[0])
			}
			for _, n := range c.notes {
				if !hasNote(m, n) {
					t.Errorf("notes %q do not say %q", m.Sources[0].Notes, n)
				}
			}
		})
	}
}

// checkOSUTransfers checks an OSU output's transfers against c: every pattern of c.flows
// flows of c.exp, each flow of a pattern alike, and the last pattern's figures.
func checkOSUTransfers(t *testing.T, tr []Transfer, c osuCase) {
	t.Helper()
	if len(tr) != c.flows*c.points {
		t.Fatalf("%d transfers, want %d patterns of %d flows", len(tr), c.points, c.flows)
	}
	for i, x := range tr {
		first := tr[i-i%c.flows]
		if x.Experiment != c.exp || x.FlowID != int64(i%c.flows) || x.PatternID != first.PatternID || x.Bytes != first.Bytes || x.TEnd != first.TEnd || x.TStart != 0 {
			t.Fatalf("row %d: %+v, want flow %d of %s like %+v", i, x, i%c.flows, c.exp, first)
		}
	}
	last := tr[len(tr)-c.flows:]
	var pairs []string
	for _, x := range last {
		pairs = append(pairs, x.Src+">"+x.Dst)
	}
	id := last[0].PatternID
	// A sweep's pattern ID is text.go's (sweep); it ends with the pair and size.
	idOK := id == c.id || c.exp == "p2p_sweep" && strings.HasSuffix(id, c.id)
	if got := strings.Join(pairs, ", "); got != c.pairs || !idOK || last[0].Bytes != c.last.bytes || last[0].Rep != c.rep ||
		!scalar.EqualWithinAbsOrRel(last[0].TEnd, c.last.seconds, 0, 1e-12) {
		t.Errorf("last pattern %q (%s): %+v; want %q (%s) of %d B taking %g s, repetition %d", id, got, last[0], c.id, c.pairs, c.last.bytes, c.last.seconds, c.rep)
	}
}

// checkOSUCollectives checks an OSU collective's rows against c: op, root (rank 0's node),
// procs (--ranks' length), and the last row's figures.
func checkOSUCollectives(t *testing.T, co []Collective, c osuCase) {
	t.Helper()
	if len(co) != c.points {
		t.Fatalf("%d collectives rows, want %d", len(co), c.points)
	}
	for i, r := range co {
		if r.Op != c.op || r.Root != c.src.Ranks[0] || r.Procs != int64(len(c.src.Ranks)) || r.Rep != 0 || r.Cluster != "ccpe-testbed" {
			t.Fatalf("row %d: %+v, want %s rooted at %s over %d processes", i, r, c.op, c.src.Ranks[0], len(c.src.Ranks))
		}
	}
	last := co[len(co)-1]
	if last.Bytes != c.last.bytes || !scalar.EqualWithinAbsOrRel(last.Seconds, c.last.seconds, 0, 1e-12) {
		t.Errorf("last row %+v, want %d B taking %g s", last, c.last.bytes, c.last.seconds)
	}
}

// TestOSURefused: every OSU output that no table holds, or that the nodes given cannot place,
// is refused with a message naming the test, what it is, and what to do instead.
func TestOSURefused(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	real := func(name string) string { return filepath.Join("testdata", "osu", name) }
	ranks := func(r ...string) Source { return Source{Ranks: r} }
	mbwHead := "# OSU MPI Multiple Bandwidth / Message Rate Test v7.4\n# Datatype: MPI_CHAR.\n# Size                  MB/s        Messages/s\n"
	cl := testCluster(t, "ccpe-testbed")
	cases := []struct {
		name, path string
		src        Source
		kind       ErrKind
		want       []string
	}{
		// Real outputs of tests or modes that no table holds.
		{"mbw_mr varied window", real("osu74_mbw_mr_V.txt"), x1y1, ErrUnsupported,
			[]string{"line 2", "osu_mbw_mr", "varied window (-V)", "run it with one window (-W"}},
		{"non-blocking collective", real("osu74_iallgather.txt"), Source{Ranks: ranksXXYY}, ErrUnsupported,
			[]string{"line 2", `"Non-blocking Allgather Latency"`, "non-blocking collective", "overlapped", "run the blocking test", "osu_allgather"}},
		// Real outputs whose nodes are missing or cannot be placed.
		{"mbw_mr pairs without --ranks", real("osu74_mbw_mr_np4.txt"), x1y1, ErrUnsupported,
			[]string{"osu_mbw_mr (2 pairs: rank i sends to rank i + 2)", "4 processes", "--ranks: one node per rank"}},
		{"mbw_mr --ranks too short", real("osu74_mbw_mr_np4.txt"), ranks("X1", "Y1"), ErrUnsupported,
			[]string{"osu_mbw_mr (2 pairs", "--ranks names 2 nodes", "one node per rank"}},
		{"mbw_mr loopback pair", real("osu74_mbw_mr_np4.txt"), ranks("X1", "Y1", "X1", "Y1"), ErrSameNode,
			[]string{"osu_mbw_mr", "ranks 0 and 2, a pair", "node X1", "loopback", "place the two ranks of each pair on two nodes"}},
		{"mbw_mr fan-out", real("osu74_mbw_mr_np4.txt"), ranks("X1", "X1", "X2", "Y1"), ErrUnsupported,
			[]string{"osu_mbw_mr (rank i sends to rank i + 2): 2 pairs placed X1>X2, X1>Y1", "fair_intra", "fair_inter", "place the ranks"}},
		{"mbw_mr 5.3 one pair loopback", real("osu53_mbw_mr_np4_p1.txt"), ranks("X1", "X1", "Y1", "Y1"), ErrSameNode,
			[]string{"ranks 0 and 1", "node X1"}},
		{"multi_lat without --ranks", real("osu74_multi_lat_np2.txt"), x1y1, ErrUnsupported,
			[]string{"osu_multi_lat", "does not say how many processes", "--ranks", "--ranks a,b for a run of two"}},
		{"multi_lat odd --ranks", real("osu74_multi_lat_np4.txt"), ranks("X1", "X2", "Y1"), ErrUnsupported,
			[]string{"osu_multi_lat", "3 nodes", "even number of processes", "one node per rank"}},
		{"multi_lat loopback", real("osu53_multi_lat_np4.txt"), ranks("X1", "Y1", "X1", "Y1"), ErrSameNode,
			[]string{"osu_multi_lat", "ranks 0 and 2", "loopback"}},
		{"collective without --ranks", real("osu74_alltoall.txt"), x1y1, ErrUnsupported,
			[]string{"osu_alltoall", "does not say how many processes ran", "--ranks", "rank 0, the root, first"}},
		{"collective of one node", real("osu53_gather.txt"), ranks("X1"), ErrUnsupported,
			[]string{"osu_gather", "1 node", "two processes or more"}},
		{"collective ranks sharing a node", real("osu74_scatterv.txt"), ranks("X1", "X2", "X1", "Y1"), ErrSameNode,
			[]string{"osu_scatterv", "ranks 0 and 2, of one collective", "node X1", "one rank per node", "--map-by node"}},
		{"mbw_mr held out (--role)", real("osu74_mbw_mr_np2.txt"), Source{Src: "X1", Dst: "X2", Role: RoleHeldOut}, ErrUnsupported,
			[]string{"--role held-out", "fair_intra"}},
		// Written from OMB's print statements.
		{"reduction", write("a.txt", "# OSU MPI Allreduce Latency Test v7.4\n# Size       Avg Latency(us)\n4 2.0\n"), Source{Ranks: ranksXXYY}, ErrUnsupported,
			[]string{"line 1", `"Allreduce Latency"`, "no table holds it", "osu_alltoall"}},
		{"one-sided", write("g.txt", "# OSU MPI_Get latency Test v7.4\n# Size       Avg Latency(us)\n4 2.0\n"), x1y1, ErrUnsupported,
			[]string{`"MPI_Get latency"`, "commcal reads osu_latency"}},
		{"derived datatypes", write("d.txt", "# OSU MPI Latency Test v7.4\n# Datatype: MPI_CHAR.\n# Size       Avg Latency(us)     Transmit Size\n4 2.0 4\n"), x1y1, ErrUnsupported,
			[]string{"line 3", "osu_latency", "derived datatypes (-D", "run it without -D"}},
		{"mbw_mr without its pairs line", write("m.txt", mbwHead+"1 0.24 238400.29\n"), x1y1, ErrMissingColumn,
			[]string{"osu_mbw_mr", `"# [ pairs: N ]"`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := c.src
			src.Path = c.path
			checkRefused(t, cl, src, c.kind, c.want...)
		})
	}
}

// TestOSUTestsDoNotMerge: osu_mbw_mr and osu_multi_lat on the same four ranks are both
// fair_inter patterns of the same pairs and sizes, and stay two sets of patterns, each named
// by its test, every row repetition 0 (on four.toml, the cluster the README's commands use).
func TestOSUTestsDoNotMerge(t *testing.T) {
	cl, err := cluster.Load(filepath.Join("testdata", "osu", "four.toml"))
	if err != nil {
		t.Fatal(err)
	}
	ranks := []string{"a", "b", "c", "d"}
	var srcs []Source
	for _, f := range []string{"osu74_mbw_mr_np4.txt", "osu74_multi_lat_np4.txt"} {
		srcs = append(srcs, Source{Path: filepath.Join("testdata", "osu", f), Ranks: ranks})
	}
	tr, _ := osuIngest(t, cl, srcs...)
	byTest := map[string]int{}
	for _, x := range tr {
		test, _, _ := strings.Cut(x.PatternID, "/")
		byTest[test]++
		if x.Experiment != "fair_inter" || x.Rep != 0 {
			t.Errorf("%+v: want fair_inter, repetition 0", x)
		}
	}
	if len(tr) != 2*17*2 || byTest["osu_mbw_mr"] != 34 || byTest["osu_multi_lat"] != 34 {
		t.Errorf("%d transfers, by test %v; want 34 of each", len(tr), byTest)
	}
}

// TestOSUSharedOutputs checks the adapter on real osu_latency and osu_bw outputs of OSU runs
// other than those of testdata/osu, kept in the shared data beside the repository
// (shared/data/formats, whose README says how they were made), with rank nodes from
// --ranks: every size is a p2p_sweep transfer from a to b, its time the file's figure (µs, or
// bytes over MB/s).
func TestOSUSharedOutputs(t *testing.T) {
	dir := filepath.Join("..", "..", "shared", "data", "formats")
	if _, err := os.Stat(filepath.Join(dir, "osu")); err != nil {
		t.Skipf("needs the shared OSU outputs %s (osu_latency.txt, osu_bw.txt, lab.toml), outside the repository: %v", dir, err)
	}
	cl, err := cluster.Load(filepath.Join(dir, "lab.toml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		file        string
		n           int
		first, last sweepPoint
	}{
		{"osu_latency.txt", 21, sweepPoint{1, 3.63e-6}, sweepPoint{1048576, 1371.29e-6}},
		{"osu_bw.txt", 23, sweepPoint{1, 1 / 0.27e6}, sweepPoint{4194304, 4194304 / 445.77e6}},
	} {
		t.Run(c.file, func(t *testing.T) {
			tr, _ := osuIngest(t, cl, Source{Path: filepath.Join(dir, "osu", c.file), Ranks: []string{"a", "b"}})
			if len(tr) != c.n {
				t.Fatalf("%d transfers, want %d", len(tr), c.n)
			}
			for i, w := range map[int]sweepPoint{0: c.first, c.n - 1: c.last} {
				x := tr[i]
				if x.Experiment != "p2p_sweep" || x.Src != "a" || x.Dst != "b" || x.Bytes != w.bytes || !scalar.EqualWithinAbsOrRel(x.TEnd, w.seconds, 0, 1e-12) {
					t.Errorf("row %d: %+v, want a>b of %d B taking %g s", i, x, w.bytes, w.seconds)
				}
			}
		})
	}
}

// TestOSUTitles: the test and version of OMB's titles (its BENCHMARK strings with the flavour
// of -d cuda and the like), and which tests are read.
func TestOSUTitles(t *testing.T) {
	for _, c := range []struct {
		title, name, version, test string
	}{
		{"# OSU MPI Latency Test v7.4", "Latency", "v7.4", "osu_latency"},
		{"# OSU MPI-CUDA Bi-Directional Bandwidth Test v7.4", "Bi-Directional Bandwidth", "v7.4", "osu_bibw"},
		{"# OSU MPI Multiple Bandwidth / Message Rate Test v5.3", "Multiple Bandwidth / Message Rate", "v5.3", "osu_mbw_mr"},
		{"# OSU MPI-ROCM All-to-Allv Personalized Exchange Latency Test v7.4", "All-to-Allv Personalized Exchange Latency", "v7.4", "osu_alltoallv"},
		{"# OSU MPI Scatter Persistent Latency Test v7.4", "Scatter Persistent Latency", "v7.4", "osu_scatter_persistent"},
		{"# OSU MPI Broadcast Latency Test", "Broadcast Latency", "", "osu_bcast"},
		{"# OSU MPI_Get latency Test v7.4", "MPI_Get latency", "v7.4", ""},
		{"# OSU MPI Non-blocking Allgather Latency Test v7.4", "Non-blocking Allgather Latency", "v7.4", ""},
		{"# OSU MPI Allreduce Latency Test v7.4", "Allreduce Latency", "v7.4", ""},
	} {
		name, version := osuTitle(c.title)
		if name != c.name || version != c.version || osuTests[name].name != c.test {
			t.Errorf("%q: %q %q (test %q), want %q %q (test %q)", c.title, name, version, osuTests[name].name, c.name, c.version, c.test)
		}
	}
}

// A collective whose ranks did not run on the cluster's nodes in order from its root is noted:
// the collectives table keeps the root and the process count only, and validation places
// the ranks in that order.
func TestCollectiveOrderNoted(t *testing.T) {
	inOrder := Source{Format: FormatOSU, Ranks: []string{"X1", "X2", "X3", "X4"}}
	m, _, co, _, err := benchIngest(t, inOrder, "osu7_alltoall_f.txt")
	if err != nil {
		t.Fatal(err)
	}
	if len(co) == 0 || hasNote(m, "validation, which places") {
		t.Errorf("%d rows, notes %q: ranks in the cluster's order are not noted", len(co), m.Sources[0].Notes)
	}
	across := Source{Format: FormatOSU, Ranks: []string{"X1", "X2", "Y1", "Y2"}}
	m, _, co, _, err = benchIngest(t, across, "osu7_alltoall_f.txt")
	if err != nil {
		t.Fatal(err)
	}
	if len(co) == 0 || !hasNote(m, "rank 2 ran on node Y1, where validation") {
		t.Errorf("%d rows, notes %q: want the placement noted", len(co), m.Sources[0].Notes)
	}
}
