package datasets

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Two benchmarks' outputs never merge into one pattern: an osu_latency sweep and an
// osu_mbw_mr sweep of the same sizes between the same nodes stay two sets of patterns, each
// named by its benchmark, and each of repetition 0.
func TestTextPatternsNameTheirBenchmark(t *testing.T) {
	_, tr, _, _, err := benchIngest(t, x1y1, "osu5_latency.txt", "osu7_mbw_mr_1pair.txt")
	if err != nil {
		t.Fatal(err)
	}
	benches := map[string]int{}
	for _, r := range tr {
		bench, _, _ := strings.Cut(r.PatternID, "/")
		benches[bench]++
		if r.Rep != 0 {
			t.Errorf("%+v: repetition %d, want 0 (one run of each benchmark)", r, r.Rep)
		}
	}
	if len(benches) != 2 || benches["osu_latency"] == 0 || benches["osu_mbw_mr"] == 0 {
		t.Errorf("benchmarks %v, want osu_latency and osu_mbw_mr", benches)
	}
	for _, c := range []struct{ tool, want string }{
		{"OSU osu_latency v7.4", "osu_latency"},
		{"OSU osu_bw ", "osu_bw"},
		{"IMB-MPI1 2021.11", "IMB-MPI1"},
		{"IMB-P2P", "IMB-P2P"},
		{"SKaMPI 5.0.4", "SKaMPI"},
		{"NetPIPE", "NetPIPE"},
		{"MPIBlib", "MPIBlib"},
		{"saturation", "saturation"},
	} {
		if got := benchName(c.tool); got != c.want {
			t.Errorf("benchName(%q) = %q, want %q", c.tool, got, c.want)
		}
	}
}

// cutFile returns the first lines lines of a file with the last cut bytes taken off (its line
// end and cut−1 bytes of the line): the file as a run killed while writing it leaves it.
func cutFile(t *testing.T, path string, lines, cut int) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ls := strings.SplitAfter(string(data), "\n")
	if lines > len(ls) {
		t.Fatalf("%s has %d lines, not %d", path, len(ls), lines)
	}
	kept := strings.Join(ls[:lines], "")
	return kept[:len(kept)-cut]
}

// A file whose last line is a data line without its line end was cut while it was written:
// the figure it ends with may have lost digits (osu_alltoall's 1277.81 µs cut to 127), so
// every text adapter refuses it, naming the line.
func TestCutShortDataLines(t *testing.T) {
	const cutMsg = "corrupt: the line is cut short (no end of line): a truncated file, whose last figure may have lost digits; re-run the benchmark, or delete the cut line"
	ranks := Source{Ranks: []string{"X1", "X2", "Y1", "Y2"}}
	checkStructure(t, []structureCase{
		{"osu alltoall", "osu74_alltoall.txt", cutFile(t, "testdata/osu/osu74_alltoall.txt", 25, 5), ranks, ErrCorrupt, "FILE: line 25: " + cutMsg},
		{"saturation send", "load_send.csv", cutFile(t, "testdata/saturation/loopback/load_send.csv", 60, 2), ranks, ErrCorrupt, "FILE: line 60: " + cutMsg},
		{"netpipe output file", "np.out", cutFile(t, "testdata/netpipe/nptcp_pp.out", 64, 3), x1y1, ErrCorrupt, "FILE: line 64: " + cutMsg},
		{"netpipe standard output", "np.stdout", cutFile(t, "testdata/netpipe/nptcp_pp.stdout", 68, 7), x1y1, ErrCorrupt, "FILE: line 68: " + cutMsg},
		{"imb pingpong", "imb.txt", cutFile(t, "testdata/imb/v2021.11_p2p_np2.txt", 143, 4), x1y1, ErrCorrupt, "FILE: line 143: " + cutMsg},
		{"mpiblib p2p", "p2p.out", cutFile(t, "testdata/benchmarks/mpiblib_p2p.out", 27, 5), x1y1, ErrCorrupt, "FILE: line 27: " + cutMsg},
		// SimGrid's .ski.dat files put the rows after the block's end line.
		{"skampi rows after the end line", "s.ski", skPP + skEnd + "count= 1 1 109.2 0.2 32 106.7 107.7\ncount= 4 4 110.4 0.2 3", x1y1, ErrCorrupt, "FILE: line 5: " + cutMsg},
	})
}

// A comment cut short at the end of a file is read as the comment it is: the rows before it
// are whole, so the file gives the rows it gives uncut.
func TestCutShortComment(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "imb.txt")
	if err := os.WriteFile(path, []byte(cutFile(t, "testdata/imb/v2021.11_p2p_np2.txt", 146, 5)), 0o644); err != nil {
		t.Fatal(err)
	}
	cl := testCluster(t, "ccpe-testbed")
	cut, _ := osuIngest(t, cl, Source{Path: path, Src: "X1", Dst: "Y1"})
	whole, _ := osuIngest(t, cl, Source{Path: "testdata/imb/v2021.11_p2p_np2.txt", Src: "X1", Dst: "Y1"})
	if len(cut) == 0 || !slices.Equal(cut, whole) {
		t.Errorf("%d transfers cut, %d whole; want the same", len(cut), len(whole))
	}
}

// place, the text adapters' one placement check, against the experiments' definitions: the
// designs' placements that hold, with the experiment of pairs, and those refused.
func TestPlace(t *testing.T) {
	r := &textReader{path: "f", cl: testCluster(t, "ccpe-testbed")}
	cases := []struct {
		name   string
		d      design
		groups [][]int
		nodes  []string
		exp    string
		kind   ErrKind // "" when accepted
	}{
		{"one pair within a rack", designPairs, [][]int{{0, 1}}, []string{"X1", "X2"}, "fair_intra", ""},
		{"one pair across racks", designPairs, [][]int{{0, 1}}, []string{"X1", "Y1"}, "fair_inter", ""},
		{"pairs between two nodes", designPairs, [][]int{{0, 2}, {1, 3}}, []string{"X1", "X1", "Y1", "Y1"}, "fair_intra", ""},
		{"pairs between distinct nodes", designPairs, [][]int{{0, 2}, {1, 3}}, []string{"X1", "X2", "X3", "X4"}, "fair_inter", ""},
		{"pairs fanning out", designPairs, [][]int{{0, 2}, {1, 3}}, []string{"X1", "X1", "X2", "X3"}, "", ErrUnsupported},
		{"a node that sends and receives", designPairs, [][]int{{0, 1}, {2, 3}}, []string{"X1", "X2", "X2", "X3"}, "", ErrUnsupported},
		{"pair on one node", designPairs, [][]int{{0, 1}}, []string{"X1", "X1"}, "", ErrSameNode},
		{"two exchanges of one pair of nodes", designExchanges, [][]int{{0, 2}, {1, 3}}, []string{"X1", "X1", "X2", "X2"}, "", ""},
		{"a node exchanging with two peers", designExchanges, [][]int{{0, 1}, {2, 3}}, []string{"X1", "X2", "X2", "X3"}, "", ErrUnsupported},
		{"ring of distinct nodes", designCycles, [][]int{{0, 1, 2}}, []string{"X1", "X2", "Y1"}, "", ""},
		{"two rings sharing a node", designCycles, [][]int{{0, 1, 2}, {3, 4, 5}}, []string{"X1", "X2", "Y1", "X1", "X3", "Y2"}, "", ErrUnsupported},
		{"ring neighbours on one node", designCycles, [][]int{{0, 1, 2}}, []string{"X1", "X2", "X2"}, "", ErrSameNode},
		{"collective on distinct nodes", designCollective, [][]int{{0, 1, 2}}, []string{"X1", "X2", "Y1"}, "", ""},
		{"collective sharing a node", designCollective, [][]int{{0, 1, 2}}, []string{"X1", "X2", "X1"}, "", ErrSameNode},
	}
	for _, c := range cases {
		exp, err := r.place(0, "test", c.d, c.groups, c.nodes)
		switch ie, _ := IsInputError(err); {
		case c.kind == "" && (err != nil || exp != c.exp):
			t.Errorf("%s: %q, %v; want %q", c.name, exp, err, c.exp)
		case c.kind != "" && (ie == nil || ie.Kind != c.kind):
			t.Errorf("%s: %q, %v; want %s", c.name, exp, err, c.kind)
		}
	}
}

// The two-process adapters and MPIBlib's collectives refuse ranks on one node through place,
// saying why: loopback says nothing about the network.
func TestTwoRanksOneNode(t *testing.T) {
	const why = "their messages go through the node's loopback or shared memory, which says nothing about the network; "
	scatter, err := os.ReadFile("testdata/benchmarks/mpiblib_scatter.out")
	if err != nil {
		t.Fatal(err)
	}
	checkStructure(t, []structureCase{
		{"netpipe", "np.out", "       1 1.301760   0.00000586\n       2 2.612286   0.00000584\n       3 2.277941   0.00001005\n", Source{Src: "X1", Dst: "X1"}, ErrSameNode,
			"FILE: same-node: NetPIPE: ranks 0 and 1, a pair, are both on node X1: " + why + "place the two ranks of each pair on two nodes (mpirun --map-by node does) and give each rank's node (--ranks, or --src and --dst for two ranks)"},
		{"mpiblib scatter", "m.out", strings.Replace(string(scatter), "#2\tY3", "#2\tY1", 1), Source{}, ErrSameNode,
			"FILE: line 1: same-node: an MPIBlib MPI_Scatter (#Processors): ranks 0 and 2, of one collective, are both on node Y1: " + why + "place one rank per node (mpirun --map-by node) and give each rank's node (--ranks, or --src and --dst for two ranks)"},
	})
}
