package datasets

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/gonum/floats/scalar"
)

// loopbackRanks are the nodes that stand for the four ranks of the loopback run.
var loopbackRanks = Source{Ranks: []string{"X1", "X2", "Y1", "Y2"}}

// satIngest ingests files of testdata/saturation into a fresh ccpe-testbed dataset.
func satIngest(t *testing.T, src Source, files ...string) (*Manifest, []Transfer, []Collective, error) {
	t.Helper()
	var srcs []Source
	for _, f := range files {
		s := src
		s.Path = filepath.Join("testdata", "saturation", f)
		srcs = append(srcs, s)
	}
	got, err := ingestTables(t, testCluster(t, "ccpe-testbed"), 7, srcs)
	return got.m, got.tr, got.co, err
}

// patternCounts counts the rows of each experiment and pattern ID, and the repetitions.
func patternCounts(tr []Transfer) map[string][2]int {
	out := map[string][2]int{}
	for _, r := range tr {
		c := out[r.Experiment+" "+r.PatternID]
		c[0]++
		c[1] = max(c[1], int(r.Rep)+1)
		out[r.Experiment+" "+r.PatternID] = c
	}
	return out
}

// find returns the transfer of a pattern, repetition and flow.
func find(t *testing.T, tr []Transfer, pattern string, rep, flow int64) Transfer {
	t.Helper()
	for _, r := range tr {
		if r.PatternID == pattern && r.Rep == rep && r.FlowID == flow {
			return r
		}
	}
	t.Fatalf("no %s rep %d flow %d", pattern, rep, flow)
	return Transfer{}
}

// The four files of the loopback run (testdata/saturation/loopback, made with the program
// itself, not written for the parser), each told by its content and read into its patterns.
// The expected times are the log's figures at the lines named, in ms.
func TestSaturationLoopbackRun(t *testing.T) {
	dir := "loopback"
	m, tr, co, err := satIngest(t, loopbackRanks, dir+"/load_send.csv", dir+"/load_sendrecv_same.csv", dir+"/load_sendrecv_diff.csv", dir+"/load_alltoall.csv")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range m.Sources {
		if s.Format != FormatSaturation {
			t.Errorf("%s: format %s", s.Path, s.Format)
		}
	}
	want := map[string][2]int{ // rows, repetitions
		"fair_inter saturation/send/k=1":                    {10, 10},
		"fair_inter saturation/send/k=2":                    {20, 10},
		"exchange_calibration saturation/sendrecv_same/k=1": {20, 10},
		"exchange saturation/sendrecv_same/k=2":             {40, 10},
		"cycle_calibration saturation/sendrecv_diff/k=2":    {40, 10},
	}
	if got := patternCounts(tr); !mapsEqual(got, want) {
		t.Errorf("patterns %v, want %v", got, want)
	}
	checks := []struct {
		pattern   string
		rep, flow int64
		src, dst  string
		ms        float64
	}{
		{"saturation/send/k=1", 0, 0, "X1", "Y1", 6.346},      // load_send.csv line 31: rank 2, step 1, run 0
		{"saturation/send/k=2", 6, 0, "X1", "Y1", 1.173},      // line 47: rank 2, its 17th row (step 2, run 6)
		{"saturation/send/k=2", 6, 1, "X2", "Y2", 0.519},      // line 57: rank 3, its 7th row (step 2, run 6)
		{"saturation/sendrecv_diff/k=2", 0, 2, "Y1", "X2", 0}, // rank 2 sends to rank 1: rank 1's first row
		{"saturation/sendrecv_diff/k=2", 0, 3, "Y2", "X1", 0}, // rank 3 sends to rank 0
	}
	diff := readLog(t, "testdata/saturation/loopback/load_sendrecv_diff.csv")
	checks[3].ms, checks[4].ms = diff[1][0], diff[0][0]
	for _, c := range checks {
		r := find(t, tr, c.pattern, c.rep, c.flow)
		if r.Src != c.src || r.Dst != c.dst || r.Bytes != 4000000 || r.TStart != 0 || !scalar.EqualWithinAbsOrRel(r.TEnd, c.ms/1e3, 0, 1e-12) {
			t.Errorf("%s rep %d flow %d: %+v, want %s→%s in %g ms", c.pattern, c.rep, c.flow, r, c.src, c.dst, c.ms)
		}
	}
	// load_alltoall.csv: k = 1 run 0 is the slower of rank 0's 5.283 ms (line 1) and rank 1's
	// 4.705 (line 7); k = 2 run 0 the slowest of 18.451 (line 4), 15.958, 16.998, 10.986.
	if len(co) != 6 {
		t.Fatalf("%d collectives rows, want 6", len(co))
	}
	for i, w := range []struct {
		procs, rep int64
		ms         float64
	}{{2, 0, 5.283}, {4, 0, 18.451}} {
		c := co[3*i]
		if c.Op != "alltoall" || c.Root != "X1" || c.Procs != w.procs || c.Rep != w.rep || c.Bytes != 4000000 || !scalar.EqualWithinAbsOrRel(c.Seconds, w.ms/1e3, 0, 1e-12) {
			t.Errorf("collectives row %d: %+v, want %d procs rep %d in %g ms", 3*i, c, w.procs, w.rep, w.ms)
		}
	}
	if !hasNote(m, "saturation test send on 4 ranks, k = 1–2 (2 steps), 10 runs each") || !hasNote(m, "alltoall on 4 ranks, k = 1–2 (2 steps), 3 runs each") ||
		!hasNote(m, "exchange_calibration for k = 1, exchange (held out) for k = 2 (--role overrides)") {
		t.Errorf("notes %v", m.Sources)
	}
}

func mapsEqual(a, b map[string][2]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// readLog reads a saturation log's durations by rank, in file order, the plain way: split
// on commas.
func readLog(t *testing.T, path string) map[int][]float64 {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[int][]float64{}
	for l := range strings.Lines(string(data)) {
		var rank int
		var op string
		var size int64
		var start, dur float64
		if _, err := fmt.Sscanf(strings.ReplaceAll(l, ",", " "), "%d %s %d %g %g", &rank, &op, &size, &start, &dur); err != nil {
			t.Fatalf("%s: %q: %v", path, l, err)
		}
		out[rank] = append(out[rank], dur)
	}
	return out
}

// satLog writes a log of test (send, sendrecv_same, sendrecv_diff, alltoall) on p ranks with
// runs runs per step, as the program orders it: every call 1 ms, one after the other.
func satLog(test string, p, runs int) string {
	t := satTest(slices.Index([]string{"send", "sendrecv_same", "sendrecv_diff", "alltoall"}, test))
	op := map[satTest]string{satSend: "MPI_Send", satSame: "MPI_Sendrecv", satDiff: "MPI_Sendrecv", satAlltoall: "MPI_Alltoall"}[t]
	half := p / 2
	steps := t.steps(half)
	var b strings.Builder
	for r := range p {
		start := 10.0
		for range (len(steps) - t.first(r, half)) * runs {
			fmt.Fprintf(&b, "%d,%s,4000000,%f,%e\n", r, op, start, 1.0)
			start += 1.5
		}
	}
	return b.String()
}

// Files that the program could not have written are refused with the line, the column and
// what was expected; so are runs without --ranks.
func TestSaturationStructure(t *testing.T) {
	ranks4 := Source{Format: FormatSaturation, Ranks: []string{"X1", "X2", "Y1", "Y2"}}
	send := satLog("send", 4, 2) // ranks 0 and 2: 4 rows each, ranks 1 and 3: 2
	lines := strings.SplitAfter(send, "\n")
	edit := func(i int, from, to string) string {
		ls := slices.Clone(lines)
		ls[i] = strings.Replace(ls[i], from, to, 1)
		return strings.Join(ls, "")
	}
	drop := func(i int) string { return strings.Join(slices.Delete(slices.Clone(lines), i, i+1), "") }
	cases := []structureCase{
		{"ragged row", "load_send.csv", edit(2, ",1.000000e+00", ""), ranks4, ErrRaggedRow,
			"FILE: line 3: ragged-row: 4 fields, want 5: the saturation test writes rank,op,size,start_ms,duration_ms for each call"},
		{"unknown operation", "load_send.csv", edit(0, "MPI_Send", "MPI_Recv"), ranks4, ErrWrongType,
			`FILE: line 1, column "op": wrong-type: operation "MPI_Recv", want MPI_Send, MPI_Sendrecv or MPI_Alltoall (the calls the saturation test times)`},
		{"two operations", "load_send.csv", edit(5, "MPI_Send", "MPI_Sendrecv"), ranks4, ErrWrongType,
			`FILE: line 6, column "op": wrong-type: operation MPI_Sendrecv after MPI_Send rows (line 1): each file of the saturation test holds one operation`},
		{"another size", "load_send.csv", edit(3, "4000000", "4000"), ranks4, ErrWrongType,
			`FILE: line 4, column "size": wrong-type: size 4000 B, want 4000000 B as on line 1: the saturation test sends one size throughout`},
		{"clock back", "load_send.csv", edit(2, "13.000000", "11.000000"), ranks4, ErrNotIncreasing,
			`FILE: line 3, column "start_ms": not-increasing: rank 0's call starts at 11 ms, before its previous call ended (line 2: 11.5 + 1 ms): a rank's calls run one after the other on its own clock`},
		{"rank out of order", "load_send.csv", edit(4, "1,", "3,"), ranks4, ErrNotIncreasing,
			`FILE: line 6, column "rank": not-increasing: rank 1 after rank 3's rows (from line 5): the saturation test gathers each rank's rows together, in rank order`},
		{"a run missing", "load_send.csv", drop(7), ranks4, ErrCorrupt,
			`FILE: line 9, column "rank": corrupt: rank 2 has 3 rows, want 4: the send test on 4 ranks (2 runs per step, from rank 0) has it take part in k = 1–2 (2 steps)`},
		{"a rank missing", "load_send.csv", strings.Join(lines[:4], "") + strings.Join(lines[6:], ""), ranks4, ErrCorrupt,
			`FILE: line 5, column "rank": corrupt: rank 1 has no rows: the send test on 4 ranks has it take part`},
		{"not rank 0 first", "load_send.csv", strings.Join(lines[4:], ""), ranks4, ErrCorrupt,
			`FILE: line 1, column "rank": corrupt: the rows start with rank 1: rank 0 takes part in every step of the send test`},
		{"zero duration", "load_send.csv", edit(1, "1.000000e+00", "0.000000e+00"), ranks4, ErrNonPositive,
			`FILE: line 2, column "duration_ms": non-positive: duration_ms 0.000000e+00: want a duration in ms > 0`},
		{"nan start", "load_send.csv", edit(1, "11.500000", "-nan"), ranks4, ErrNaN,
			`FILE: line 2, column "start_ms": nan: got "-nan" (NaN: the tool's figure is undefined), want a number`},
		{"negative start", "load_send.csv", edit(0, "10.000000", "-10.000000"), ranks4, ErrNegative,
			`FILE: line 1, column "start_ms": negative: start_ms -10.000000, want ≥ 0 (ms since the rank's start)`},
		{"no ranks", "load_send.csv", send, Source{Format: FormatSaturation}, ErrUnsupported,
			"FILE: unsupported: saturation output of 4 processes does not name their nodes; give them (--ranks: one node per rank, in rank order)"},
		{"too few ranks", "load_send.csv", send, Source{Format: FormatSaturation, Ranks: []string{"X1", "X2"}}, ErrUnsupported,
			"FILE: unsupported: saturation output of 4 processes, and --ranks names 2 nodes; give one node per rank, in rank order"},
		{"sendrecv fitting neither", "load_sendrecv_diff.csv", strings.Join(strings.SplitAfter(satLog("sendrecv_diff", 8, 2), "\n")[1:], ""), Source{Format: FormatSaturation,
			Ranks: []string{"X1", "X2", "X3", "X4", "Y1", "Y2", "Y3", "Y4"}}, ErrCorrupt,
			`FILE: line 3, column "rank": corrupt: rank 0 has 3 rows: the sendrecv_diff test on 8 ranks has it take part in 2 steps, each of the same number of runs`},
		{"simgrid forced", "load_send.csv", send, Source{Format: FormatSimGrid}, ErrUnknownFormat,
			"FILE: unknown-format: rank,op,size,start_ms,duration_ms lines: a log of platform-calibration's saturation test, not of its calibration program; give --format saturation"},
		{"held out sends", "load_send.csv", send, Source{Format: FormatSaturation, Ranks: ranks4.Ranks, Role: RoleHeldOut}, ErrUnsupported,
			`FILE: line 7, column "experiment": unsupported: --role held-out: fair_inter patterns have no held-out experiment (the random, exchange and cycle designs have both roles)`},
		{"same node twice", "load_send.csv", send, Source{Format: FormatSaturation, Ranks: []string{"X1", "X2", "X1", "Y2"}}, ErrSameNode,
			"FILE: same-node: saturation send at k = 2 (rank f sends to rank f + 2): ranks 0 and 2, a pair, are both on node X1: their messages go through the node's loopback or shared memory, which says nothing about the network; place the two ranks of each pair on two nodes (mpirun --map-by node does) and give each rank's node (--ranks, or --src and --dst for two ranks)"},
	}
	checkStructure(t, cases)
}

// The two exchange tests are told apart by their ranks' steps, whatever the file's name; the
// smallest k calibrates and the others are held out unless --role says otherwise.
func TestSaturationExchanges(t *testing.T) {
	cl := testCluster(t, "ccpe-testbed")
	ranks := []string{"X1", "X2", "X3", "X4", "X5", "X6", "Y1", "Y2", "Y3", "Y4", "Y5", "Y6"}
	cases := []struct {
		name, file, log string
		role            string
		want            map[string][2]int
		note            string
	}{
		{"same", "load_sendrecv_same.csv", satLog("sendrecv_same", 8, 3), "", map[string][2]int{
			"exchange_calibration saturation/sendrecv_same/k=1": {6, 3},
			"exchange saturation/sendrecv_same/k=2":             {12, 3},
			"exchange saturation/sendrecv_same/k=3":             {18, 3},
			"exchange saturation/sendrecv_same/k=4":             {24, 3},
		}, "exchange_calibration for k = 1, exchange (held out) for k = 2–4"},
		// half = 3 is odd: ranks 2 and 5 take no part, and k = 2 is the only step.
		{"diff on 6 ranks, named same", "load_sendrecv_same.csv", satLog("sendrecv_diff", 6, 2), "", map[string][2]int{
			"cycle_calibration saturation/sendrecv_diff/k=2": {8, 2},
		}, "named load_sendrecv_same.csv, but its rows are those of the sendrecv_diff test"},
		{"diff on 12 ranks, all calibration", "cycles.csv", satLog("sendrecv_diff", 12, 2), RoleCalibration, map[string][2]int{
			"cycle_calibration saturation/sendrecv_diff/k=2": {8, 2},
			"cycle_calibration saturation/sendrecv_diff/k=4": {16, 2},
			"cycle_calibration saturation/sendrecv_diff/k=6": {24, 2},
		}, "sendrecv_diff on 12 ranks, k = 2–6 (3 steps), 2 runs each"},
		{"diff held out", "load_sendrecv_diff.csv", satLog("sendrecv_diff", 4, 1), RoleHeldOut, map[string][2]int{
			"cycle saturation/sendrecv_diff/k=2": {4, 1},
		}, "cycle_calibration for k = 2 (--role overrides)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, c.file)
			if err := os.WriteFile(path, []byte(c.log), 0o644); err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(dir, "ds")
			m, err := Ingest(context.Background(), IngestOptions{Cluster: cl, Out: out, Created: fixedTime,
				Sources: []Source{{Path: path, Ranks: ranks, Role: c.role}}})
			if err != nil {
				t.Fatal(err)
			}
			ds, err := Open(out)
			if err != nil {
				t.Fatal(err)
			}
			tr, err := ReadAll[Transfer](context.Background(), ds, TransfersTable)
			if err != nil {
				t.Fatal(err)
			}
			if got := patternCounts(tr); !mapsEqual(got, c.want) {
				t.Errorf("patterns %v, want %v", got, c.want)
			}
			if !hasNote(m, c.note) {
				t.Errorf("notes %q lack %q", m.Sources[0].Notes, c.note)
			}
		})
	}
	// The cycle on 6 ranks: 0 → 3 → 1 → 4 → 0.
	_, tr, _, err := satIngestContent(t, "load_sendrecv_diff.csv", satLog("sendrecv_diff", 6, 1), ranks)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range tr {
		got = append(got, r.Src+">"+r.Dst)
	}
	if want := []string{"X1>X4", "X2>X5", "X4>X2", "X5>X1"}; !slices.Equal(got, want) {
		t.Errorf("flows %v, want %v", got, want)
	}
}

// satIngestContent ingests one log written to a file of the given name.
func satIngestContent(t *testing.T, name, content string, ranks []string) (*Manifest, []Transfer, []Collective, error) {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "ds")
	m, err := Ingest(context.Background(), IngestOptions{Cluster: testCluster(t, "ccpe-testbed"), Out: out, Created: fixedTime,
		Sources: []Source{{Path: path, Ranks: ranks}}})
	if err != nil {
		return nil, nil, nil, err
	}
	ds, err := Open(out)
	if err != nil {
		t.Fatal(err)
	}
	tr, err1 := ReadAll[Transfer](context.Background(), ds, TransfersTable)
	co, err2 := ReadAll[Collective](context.Background(), ds, CollectivesTable)
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	return m, tr, co, nil
}

// A saturation log is told from its content, and only a log: commcal's CSV tables, with their
// header, and SimGrid's calibration files, which start with the operation, are not.
func TestDetectSaturation(t *testing.T) {
	cases := []struct {
		name, content, want string
	}{
		{"loopback send", "", FormatSaturation},
		{"first line damaged", "0,MPI_Send,4000000,x,1\n" + strings.Join(strings.SplitAfter(satLog("send", 4, 2), "\n")[1:], ""), FormatSaturation},
		{"transfers table", "cluster,experiment,pattern_id,rep,flow_id,src_node,dst_node,bytes,t_start_s,t_end_s\nccpe-testbed,p2p_sweep,p1,0,0,X1,Y1,1000,0,0.01\n", FormatCSV},
		{"simgrid ping-pong", "MPI_Send,1,0.5,0.001\nMPI_Recv,1,0.5,0.002\n", FormatSimGrid},
		{"four fields", "0,MPI_Send,4000000,1.0\n", FormatCSV},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			data := []byte(c.content)
			if c.content == "" {
				var err error
				if data, err = os.ReadFile("testdata/saturation/loopback/load_send.csv"); err != nil {
					t.Fatal(err)
				}
			}
			got, err := detectFormat("log.csv", strings.NewReader(string(data)))
			if err != nil || got != c.want {
				t.Errorf("got %q, %v; want %q", got, err, c.want)
			}
		})
	}
}

// Two runs of different sizes (4 and 8 ranks) give the pattern saturation/send/k=2 other
// flows: they are refused together, not read as repetitions of one pattern.
func TestSaturationOtherFlowsRefused(t *testing.T) {
	dir := t.TempDir()
	var srcs []Source
	for _, p := range []int{4, 8} {
		path := filepath.Join(dir, fmt.Sprintf("p%d", p), "load_send.csv")
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(satLog("send", p, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		srcs = append(srcs, Source{Path: path, Ranks: []string{"X1", "X2", "X3", "X4", "Y1", "Y2", "Y3", "Y4"}})
	}
	_, err := Ingest(context.Background(), IngestOptions{Cluster: testCluster(t, "ccpe-testbed"), Out: filepath.Join(dir, "ds"), Created: fixedTime, Sources: srcs})
	ie, ok := IsInputError(err)
	want := `FILE: line 11, column "pattern_id": duplicate-key: fair_inter pattern "saturation/send/k=1" again with other flows (flow 0 is X1>Y1 4000000 B, before X1>X3 4000000 B): repetitions of a pattern are the same transfers; ingest outputs of other placements or process counts into separate datasets`
	if !ok || strings.ReplaceAll(err.Error(), srcs[1].Path, "FILE") != want {
		t.Errorf("got %v (%v)\nwant %s", err, ie, want)
	}
}

// FuzzIngestSaturation is seeded with the loopback run's four logs (and its corpus in
// testdata/fuzz with the malformed inputs of TestSaturationStructure): whatever the bytes, a
// dataset or an *InputError, never a panic.
func FuzzIngestSaturation(f *testing.F) {
	for _, name := range []string{"load_send.csv", "load_sendrecv_same.csv", "load_sendrecv_diff.csv", "load_alltoall.csv"} {
		data, err := os.ReadFile(filepath.Join("testdata", "saturation", "loopback", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(satLog("sendrecv_diff", 6, 2)))
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzIngest(t, "load.csv", data, Source{Format: FormatSaturation, Ranks: loopbackRanks.Ranks})
	})
}

// The send test's pairs take the experiment their nodes make, and every test's ranks must be
// placed as the test means them: pairs on two nodes each, exchanges with one peer per node,
// cycles and all-to-alls on distinct nodes.
func TestSaturationPlacement(t *testing.T) {
	for _, c := range []struct {
		name  string
		ranks []string
		want  map[string][2]int
		note  string
	}{
		// Ranks 0, 1 on X1 and 2, 3 on X2: k = 2 is two X1→X2 flows sharing those NICs.
		{"two pairs between two nodes", []string{"X1", "X1", "X2", "X2"}, map[string][2]int{
			"fair_intra saturation/send/k=1": {2, 2}, "fair_intra saturation/send/k=2": {4, 2}},
			"fair_intra pattern saturation/send/k=K (rank f sends to rank f+2, f < k; --ranks: every pair between the same two nodes)"},
		// X1→X2 within a rack, then Y1→Y2: pairs between distinct nodes, k = 1 included.
		{"disjoint pairs", []string{"X1", "Y1", "X2", "Y2"}, map[string][2]int{
			"fair_inter saturation/send/k=1": {2, 2}, "fair_inter saturation/send/k=2": {4, 2}},
			"fair_inter pattern saturation/send/k=K (rank f sends to rank f+2, f < k; --ranks: pairs between distinct nodes)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, tr, _, err := satIngestContent(t, "load_send.csv", satLog("send", 4, 2), c.ranks)
			if err != nil {
				t.Fatal(err)
			}
			if got := patternCounts(tr); !mapsEqual(got, c.want) {
				t.Errorf("patterns %v, want %v", got, c.want)
			}
			if !hasNote(m, c.note) {
				t.Errorf("notes %q lack %q", m.Sources[0].Notes, c.note)
			}
		})
	}
	src := func(ranks ...string) Source { return Source{Format: FormatSaturation, Ranks: ranks} }
	const loopback = "their messages go through the node's loopback or shared memory, which says nothing about the network; "
	checkStructure(t, []structureCase{
		{"pairs that exchange", "load_send.csv", satLog("send", 4, 1), src("X1", "X2", "X2", "X1"), ErrUnsupported,
			"FILE: unsupported: saturation send at k = 2 (rank f sends to rank f + 2): 2 pairs placed X1>X2, X2>X1 (--ranks): neither every pair between the same two nodes (fair_intra) nor pairs between distinct nodes (fair_inter), so no experiment holds them; place the ranks so that one of the two holds"},
		{"alltoall on one node", "load_alltoall.csv", satLog("alltoall", 4, 1), src("X1", "X1", "X1", "X1"), ErrSameNode,
			"FILE: same-node: saturation alltoall at k = 2: ranks 0 and 1, of one collective, are both on node X1: " + loopback + "place one rank per node (mpirun --map-by node) and give each rank's node (--ranks, or --src and --dst for two ranks)"},
		{"exchange on one node", "load_sendrecv_same.csv", satLog("sendrecv_same", 4, 1), src("X1", "X2", "X1", "X3"), ErrSameNode,
			"FILE: same-node: saturation sendrecv_same at k = 2 (ranks f and f + 2 exchange): ranks 0 and 2, an exchanging pair, are both on node X1: " + loopback + "place the two ranks of each pair on two nodes (mpirun --map-by node does) and give each rank's node (--ranks, or --src and --dst for two ranks)"},
		{"a node with two peers", "load_sendrecv_same.csv", satLog("sendrecv_same", 4, 1), src("X1", "X2", "X2", "X3"), ErrUnsupported,
			"FILE: unsupported: saturation sendrecv_same at k = 2 (ranks f and f + 2 exchange): node X2 exchanges with X1 and with X3 (--ranks): in a same-peer exchange every node sends to and receives from one peer; place the ranks so that each node has one peer"},
		// 0 → 2 → 1 → 3 → 0 on X1, Y1, X1, Y1: X1 sends to Y1 and receives from Y1.
		{"cycle on two nodes", "load_sendrecv_diff.csv", satLog("sendrecv_diff", 4, 1), src("X1", "X1", "Y1", "Y1"), ErrUnsupported,
			"FILE: unsupported: saturation sendrecv_diff at k = 2 (cycles 2c → 2c + 2 → 2c + 1 → 2c + 3 → 2c): ranks 0 and 1 of the cycles are both on node X1 (--ranks): in a directed cycle every node sends to one peer and receives from another, so the cycles' ranks are on distinct nodes; place one rank per node (mpirun --map-by node)"},
		{"cycle neighbours on one node", "load_sendrecv_diff.csv", satLog("sendrecv_diff", 4, 1), src("X1", "Y1", "X1", "Y2"), ErrSameNode,
			"FILE: same-node: saturation sendrecv_diff at k = 2 (cycles 2c → 2c + 2 → 2c + 1 → 2c + 3 → 2c): ranks 0 and 2, neighbours in a cycle, are both on node X1: " + loopback + "place one rank per node (mpirun --map-by node) and give each rank's node (--ranks, or --src and --dst for two ranks)"},
	})
}

// Reading a log's rows takes time linear in its ranks: 100,000 ranks of one row each (a log
// that the send test could not have written, refused when its steps are counted) are read
// and refused in well under a second.
func TestSaturationManyRanks(t *testing.T) {
	const ranks = 100_000
	var b strings.Builder
	for r := range ranks {
		fmt.Fprintf(&b, "%d,MPI_Send,4000000,10.000000,1.000000e+00\n", r)
	}
	lines, err := splitLines("load_send.csv", []byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = readSaturation(&textReader{path: "load_send.csv", cl: testCluster(t, "ccpe-testbed")}, lines)
	took := time.Since(start)
	want := `load_send.csv: line 1, column "rank": corrupt: rank 0 has 1 rows: the send test on 100000 ranks has it take part in 50000 steps, each of the same number of runs`
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
	if took > time.Second {
		t.Errorf("%d ranks read in %v, want under a second", ranks, took)
	}
}
