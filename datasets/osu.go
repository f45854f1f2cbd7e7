package datasets

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/commcal/commcal/experiments"
)

// OSU Micro-Benchmarks (MVAPICH's OMB, 5.x to 7.x). An output is a title line ("# OSU MPI
// Latency Test v7.4"), comment lines that changed across versions ("# Datatype: MPI_CHAR.",
// "# [ pairs: 2 ] [ window size: 64 ]"), a header line naming the columns ("# Size  Avg
// Latency(us)" in 7.x, "# Size  Latency (us)" in 5.x pt2pt tests, with "Min Latency(us)  Max
// Latency(us)  Iterations" under -f, "P50 Tail Lat(us)" … under -z, "Validation" under -c,
// "Messages/s" in osu_mbw_mr), and one line per message size. Columns are found by their
// names, so extra ones are tolerated; lines before the title (a launcher's noise) are skipped.
//
// Structure: each header line begins a block (OSU 7 prints "# Datatype: …" and a header per
// datatype of -T), whose rows follow it; OSU's loop doubles the size from one row to the next
// (-m MIN:MAX), so within a block the sizes increase. A block without rows is a run that
// stopped before measuring, and is refused. A second title of the same test begins another run
// (a file of several runs); one of another test is refused. Every column a row has must hold a
// number ≥ 0 (Validation: Pass), the columns that are not stored too.
//
// What each test becomes, from OMB's sources (c/mpi/pt2pt/standard/*.c,
// c/mpi/collective/blocking/*.c, c/util/osu_util_mpi.c; mpi/pt2pt and mpi/collective in 5.x).
// One row per size, an average, repetition 0; the persistent variants (MPI_Send_init,
// MPI_Scatter_init, … started and waited on in the same loops) are read as their tests.
//   - osu_latency: rank 0 sends first, rank 1 answers; OSU prints the average one-way latency,
//     half the round trip, in µs. A p2p_sweep transfer taking that time, from the node of rank
//     0 (--src, or --ranks' first) to that of rank 1. -z's percentile columns are checked,
//     not stored.
//   - osu_bw: bandwidth in MB/s (10⁶ bytes/s: OSU divides bytes by 1e6) of windows of
//     back-to-back messages from rank 0 to rank 1. A p2p_sweep transfer of bytes taking
//     bytes / bandwidth: the time per message when they stream, which hides the latency, so
//     a Hockney fit of it has α near zero and β the streaming rate's inverse.
//   - osu_bibw: the same both ways at once; the bandwidth counts both directions, so each
//     direction's message takes 2·bytes / bandwidth. A same-peer exchange (exchange_calibration)
//     of one flow each way.
//   - osu_mbw_mr: "# [ pairs: k ]" pairs stream at once, rank i to rank i + k (i < k; OSU
//     sets k = P/2 in 7.4, whatever -p says; -p k ≤ P/2 in 5.x). calc_bw sums over the pairs: MB/s = bytes·k·iterations
//     ·window / (the senders' mean time), so each pair's message takes bytes·k / (MB/s·10⁶):
//     k flows of that time. The nodes of ranks 0 … 2k−1 come from --ranks (or --src and --dst
//     for one pair). A run over several window sizes (-V, "window size: varied") prints a
//     table of rates per window, and is refused.
//   - osu_multi_lat: P/2 pairs ping-pong at once, rank i with rank i + P/2; OSU prints the mean
//     over the pairs (5.x: over every process) of the one-way latency. k flows of that time.
//     The file does not say P: it is --ranks' length, and a file without --ranks is refused.
//   - The pairs of osu_mbw_mr and osu_multi_lat are one pattern of k concurrent transfers
//     (textReader.place): fair_intra when every pair runs from one node to one other node,
//     fair_inter when the pairs join distinct nodes; any other placement is refused, as is a
//     pair on one node (loopback says nothing of the network).
//   - osu_alltoall, osu_allgather, osu_bcast, osu_scatter, osu_gather and their v variants
//     (equal counts for every process, so the same operation): collectives rows. OSU's Size is
//     the block each process sends to or receives from each other (bcast: the whole message),
//     the table's bytes. Each process times its calls and OSU reduces their mean times over
//     the processes to an average, and under -f a minimum and a maximum: the time is the Max
//     Latency where the file has it, since a collective is complete when its slowest process
//     is (IMB's t_max, the saturation test's slowest rank), else the average, which is below
//     that, with a note saying so. The root is rank 0 (bcast always; scatter and gather
//     unless -k, which the file does not print); procs is --ranks' length, which the file does
//     not print either: without --ranks they are refused, and so are ranks sharing a node
//     (the table counts one process per node; textReader.place).
//
// Any other test (reductions, barriers, non-blocking and neighbourhood collectives, one-sided
// and multi-threaded tests) is refused with what it is; so is -D (derived datatypes: the bytes
// moved are not the Size column).
func readOSU(r *textReader, lines []textLine) (*textOut, error) {
	title := slices.IndexFunc(lines, func(l textLine) bool { return strings.HasPrefix(strings.TrimSpace(l.text), "# OSU ") })
	if title < 0 {
		return nil, inputErr(Location{File: r.path}, "", ErrUnknownFormat, `no "# OSU ... Test" title line: not an OSU Micro-Benchmarks output`)
	}
	p, err := newOSUParser(r, lines[title])
	if err != nil {
		return nil, err
	}
	for _, l := range lines[title:] {
		if err := p.line(l); err != nil {
			return nil, err
		}
	}
	return p.finish()
}

// osuRead is how the rows of an OSU test become table rows.
type osuRead int

const (
	osuLatency     osuRead = iota // one-way latency from rank 0 to rank 1: p2p_sweep
	osuBandwidth                  // a stream from rank 0 to rank 1: p2p_sweep of bytes / bandwidth
	osuBiBandwidth                // streams both ways between ranks 0 and 1: an exchange
	osuMultiBW                    // osu_mbw_mr: pairs streaming at once
	osuMultiLat                   // osu_multi_lat: pairs ping-ponging at once
	osuCollective                 // a collective: collectives rows
)

// osuTest is a test an OSU title names: its program, how its rows are read and, for a
// collective, the collectives table's op.
type osuTest struct {
	name string
	read osuRead
	op   string
}

// latency says whether the test prints a latency column (else a bandwidth column).
func (t osuTest) latency() bool {
	return t.read == osuLatency || t.read == osuMultiLat || t.read == osuCollective
}

// osuTests maps a title's test name (without the MPI flavour and "Test") to the test. The
// titles are OMB's BENCHMARK strings: 5.3's and 7.4's are the same, and the persistent tests
// are 7.x's.
var osuTests = map[string]osuTest{
	"Latency":                             {"osu_latency", osuLatency, ""},
	"Latency Persistent":                  {"osu_latency_persistent", osuLatency, ""},
	"Bandwidth":                           {"osu_bw", osuBandwidth, ""},
	"Bandwidth Persistent":                {"osu_bw_persistent", osuBandwidth, ""},
	"Bi-Directional Bandwidth":            {"osu_bibw", osuBiBandwidth, ""},
	"Bi-Directional Bandwidth Persistent": {"osu_bibw_persistent", osuBiBandwidth, ""},
	"Multiple Bandwidth / Message Rate":   {"osu_mbw_mr", osuMultiBW, ""},
	"Multi Latency":                       {"osu_multi_lat", osuMultiLat, ""},

	"All-to-All Personalized Exchange Latency":             {"osu_alltoall", osuCollective, "alltoall"},
	"All-to-Allv Personalized Exchange Latency":            {"osu_alltoallv", osuCollective, "alltoall"},
	"All-to-All Personalized Exchange Persistent Latency":  {"osu_alltoall_persistent", osuCollective, "alltoall"},
	"All-to-Allv Personalized Exchange Persistent Latency": {"osu_alltoallv_persistent", osuCollective, "alltoall"},
	"Allgather Latency":             {"osu_allgather", osuCollective, "allgather"},
	"Allgatherv Latency":            {"osu_allgatherv", osuCollective, "allgather"},
	"Allgather Persistent Latency":  {"osu_allgather_persistent", osuCollective, "allgather"},
	"Allgatherv Persistent Latency": {"osu_allgatherv_persistent", osuCollective, "allgather"},
	"Broadcast Latency":             {"osu_bcast", osuCollective, "bcast"},
	"Broadcast Persistent Latency":  {"osu_bcast_persistent", osuCollective, "bcast"},
	"Scatter Latency":               {"osu_scatter", osuCollective, "scatter"},
	"Scatterv Latency":              {"osu_scatterv", osuCollective, "scatter"},
	"Scatter Persistent Latency":    {"osu_scatter_persistent", osuCollective, "scatter"},
	"Scatterv Persistent Latency":   {"osu_scatterv_persistent", osuCollective, "scatter"},
	"Gather Latency":                {"osu_gather", osuCollective, "gather"},
	"Gatherv Latency":               {"osu_gatherv", osuCollective, "gather"},
	"Gather Persistent Latency":     {"osu_gather_persistent", osuCollective, "gather"},
	"Gatherv Persistent Latency":    {"osu_gatherv_persistent", osuCollective, "gather"},
}

// osuCollectiveList and osuReadList name the collectives and all the tests commcal reads, for
// messages.
const (
	osuCollectiveList = "osu_alltoall, osu_allgather, osu_bcast, osu_scatter, osu_gather, or their v and persistent variants"
	osuReadList       = "osu_latency, osu_bw, osu_bibw, osu_mbw_mr, osu_multi_lat and the collectives " + osuCollectiveList
)

// osuParser is what readOSU has read so far of one OSU output: the test its title names,
// the columns of the last header line, the nodes of the run, and what the notes will say.
type osuParser struct {
	r        *textReader
	o        *textOut
	test     osuTest
	cols     []string // normalised header names
	names    []string // the header's names as printed, for messages
	colLine  int64
	rowsSeen int        // rows of the block under the last header
	runLine  int64      // the line of the last title
	runRows  int        // rows since it
	sizes    *sizeOrder // of the block under the last header
	pairs    int64      // from "# [ pairs: N ]", -1 until then
	iters    counts
	zeros    int
	// maxRows and avgRows count the collectives rows that store OSU's Max Latency (-f) and
	// its average, for the notes.
	maxRows, avgRows int
	// The nodes of the current run, settled at its first row (run.set): the flows of a
	// transfers pattern, or a collective's root and processes.
	run osuRun
	// placements are the runs' placements, for the notes, in the order first met.
	placements []string
}

// osuRun is where one run's processes were: the flows each row becomes and their experiment,
// or a collective's root node and process count.
type osuRun struct {
	set   bool
	exp   string
	flows [][2]string // src, dst of each flow, rank order
	root  string
	procs int64
}

// newOSUParser reads the title line: the test and its version. A test that no table holds is
// refused here, with what it is.
func newOSUParser(r *textReader, tl textLine) (*osuParser, error) {
	name, version := osuTitle(strings.TrimSpace(tl.text))
	test, ok := osuTests[name]
	if !ok {
		return nil, r.errAt(tl.n, "", ErrUnsupported, "%s", osuUnread(name))
	}
	return &osuParser{r: r, o: newTextOut("OSU " + test.name + " " + bounded(version)), test: test, pairs: -1}, nil
}

// osuUnread says why a test commcal does not read is refused, and what to run instead.
func osuUnread(name string) string {
	if lower := strings.ToLower(name); strings.HasPrefix(lower, "non-blocking ") {
		return fmt.Sprintf("an OSU %s test, a non-blocking collective: its times are of the collective overlapped with OSU's dummy computation (Overall, Compute, Pure Comm. columns), not of the collective alone; run the blocking test instead (%s)",
			quote(name), osuCollectiveList)
	}
	return fmt.Sprintf("an OSU %s test: no table holds it; commcal reads %s", quote(name), osuReadList)
}

// col returns the index of the first of names (normalised) that the header has, or -1.
func (p *osuParser) col(names ...string) int { return findColumn(p.cols, names...) }

// line reads one line from the title on: blank, a title, a comment (the pairs, the header)
// or a row.
func (p *osuParser) line(l textLine) error {
	text := strings.TrimSpace(l.text)
	switch {
	case text == "":
		return nil
	case strings.HasPrefix(text, "# OSU "):
		return p.title(l.n, text)
	case strings.HasPrefix(text, "#"):
		return p.comment(l.n, strings.TrimSpace(strings.TrimPrefix(text, "#")))
	}
	if err := p.r.whole(l); err != nil {
		return err
	}
	return p.row(l.n, text)
}

// title reads a title line: the first, or one that begins another run of the same test in the
// same file (its header, pairs and nodes follow it again).
func (p *osuParser) title(n int64, text string) error {
	name, _ := osuTitle(text)
	if test, ok := osuTests[name]; !ok || test.name != p.test.name {
		what := test.name
		if !ok {
			what = quote(name)
		}
		return p.r.errAt(n, "", ErrCorrupt, "a second OSU title, of %s, in an output of %s: give each test's output as its own file", what, p.test.name)
	}
	if p.runLine > 0 {
		if err := p.endRun(n); err != nil {
			return err
		}
	}
	p.cols, p.names, p.pairs, p.runLine, p.runRows, p.run = nil, nil, -1, n, 0, osuRun{}
	return nil
}

// endRun refuses a run (a title and what follows it) whose last block, or which, has no
// rows, at the line that ends it (0: the file's end).
func (p *osuParser) endRun(at int64) error {
	if err := p.endBlock(at); err != nil {
		return err
	}
	if p.runRows == 0 {
		return p.r.errNoRows(at, fmt.Sprintf("the %s run titled at line %d", p.test.name, p.runLine))
	}
	return nil
}

// endBlock refuses a header without rows, at the line that ends its block (0: the file's end).
func (p *osuParser) endBlock(at int64) error {
	if p.cols != nil && p.rowsSeen == 0 {
		return p.r.errNoRows(at, fmt.Sprintf("the %s block under the header of line %d", p.test.name, p.colLine))
	}
	return nil
}

// comment reads a "#" line: osu_mbw_mr's pairs and window, or the header naming the columns
// (which replaces any earlier one). Other comments say nothing the rows need.
func (p *osuParser) comment(n int64, body string) error {
	if m := osuPairs.FindStringSubmatch(body); m != nil && p.test.read == osuMultiBW {
		pairs, err := p.r.parseCount(n, "pairs", m[1])
		if err != nil {
			return err
		}
		if osuVaried.MatchString(body) {
			return p.r.errAt(n, "window size", ErrUnsupported,
				"osu_mbw_mr with a varied window (-V): its rows are a table of rates per window size, not one rate per size; run it with one window (-W, default 64)")
		}
		p.pairs = pairs
	}
	if f := strings.Fields(body); len(f) > 0 && f[0] == "Size" {
		if err := p.endBlock(n); err != nil {
			return err
		}
		p.cols, p.names, p.colLine, p.rowsSeen = nil, nil, n, 0
		p.sizes = newSizeOrder(sizesIncrease, "", "OSU prints each size once, doubling it from one row to the next")
		for _, c := range osuColSep.Split(body, -1) {
			p.names = append(p.names, c)
			p.cols = append(p.cols, strings.ToLower(strings.ReplaceAll(c, " ", "")))
		}
		if p.col("transmitsize") >= 0 {
			return p.r.errAt(n, "Transmit Size", ErrUnsupported,
				"%s with derived datatypes (-D, the Transmit Size column): the bytes it moves are not the Size column's, and a strided send is not one transfer; run it without -D", p.test.name)
		}
	}
	return nil
}

// row reads a data line: one message size and its time, which becomes transfers or a
// collectives row. A 0-byte row of a transfers test is counted and left out.
func (p *osuParser) row(n int64, text string) error {
	if p.cols == nil {
		return p.r.errAt(n, "", ErrMissingColumn, `a data row before the "# Size ..." header line`)
	}
	f := strings.Fields(text)
	if len(f) != len(p.cols) {
		return p.r.errAt(n, "", ErrRaggedRow, "%d fields, but the header of line %d names %d columns", len(f), p.colLine, len(p.cols))
	}
	p.rowsSeen++
	p.runRows++
	if v := p.col("validation"); v >= 0 && !strings.EqualFold(f[v], "pass") {
		return p.r.errAt(n, "Validation", ErrCorrupt, "OSU's data check says %s at this size: the data arrived damaged", quote(f[v]))
	}
	size, err := p.r.parseSize(n, "Size", f[0])
	if err != nil {
		return err
	}
	if err := p.sizes.add(p.r, n, "Size", size); err != nil {
		return err
	}
	if it := p.col("iterations"); it >= 0 {
		if err := p.r.addCount(&p.iters, n, "Iterations", f[it]); err != nil {
			return err
		}
	}
	value, err := p.rowValue(n, f)
	if err != nil {
		return err
	}
	if err := p.figures(n, f); err != nil {
		return err
	}
	if size == 0 && p.test.read != osuCollective {
		p.zeros++
		return nil
	}
	if err := p.settle(); err != nil {
		return err
	}
	p.add(n, size, value)
	return nil
}

// rowValue reads a row's figure: the latency in seconds (µs in the file), or the bandwidth in
// bytes per second (MB/s, 10⁶ B/s, in the file). A collective's latency is its Max Latency
// where the header has one (-f): the slowest process's mean time per call, when the
// collective is complete; else OSU's average over the processes.
func (p *osuParser) rowValue(n int64, f []string) (float64, error) {
	if p.test.read == osuCollective && p.col("maxlatency(us)") >= 0 {
		p.maxRows++
		us, err := p.positive(n, f, "Max Latency(us)", "latency in µs", "", "maxlatency(us)")
		return us * 1e-6, err
	}
	if p.test.read == osuCollective {
		p.avgRows++
	}
	if p.test.latency() {
		us, err := p.positive(n, f, "Avg Latency(us)", "latency in µs",
			"the header names no latency column (Avg Latency(us) or Latency (us))", "avglatency(us)", "latency(us)")
		return us * 1e-6, err
	}
	mbs, err := p.positive(n, f, "Bandwidth (MB/s)", "bandwidth in MB/s",
		"the header names no bandwidth column (Bandwidth (MB/s) or MB/s)", "bandwidth(mb/s)", "mb/s")
	return mbs * 1e6, err
}

// add appends what one row of size bytes and figure value (rowValue) becomes.
func (p *osuParser) add(n, size int64, value float64) {
	r, o, b := p.r, p.o, float64(size)
	switch p.test.read {
	case osuLatency:
		r.sweep(o, n, p.run.flows[0][0], p.run.flows[0][1], size, value)
	case osuBandwidth:
		r.sweep(o, n, p.run.flows[0][0], p.run.flows[0][1], size, b/value)
	case osuBiBandwidth:
		p.flows(n, size, 2*b/value)
	case osuMultiBW:
		p.flows(n, size, b*float64(len(p.run.flows))/value)
	case osuMultiLat:
		p.flows(n, size, value)
	case osuCollective:
		r.collective(o, n, p.test.op, p.run.root, p.run.procs, size, value)
	}
}

// flows appends one repetition of the run's pattern: its flows of bytes, starting together,
// each taking seconds.
func (p *osuParser) flows(n, bytes int64, seconds float64) {
	id := osuPatternID(p.test.name, p.run.exp, p.run.flows, bytes)
	for i, fl := range p.run.flows {
		p.o.transfers = append(p.o.transfers, Transfer{Cluster: p.r.cl.Name(), Experiment: p.run.exp, PatternID: id,
			FlowID: int64(i), Src: fl[0], Dst: fl[1], Bytes: bytes, TEnd: seconds})
		p.o.lines[TransfersTable] = append(p.o.lines[TransfersTable], n)
	}
}

// osuPatternID names a pattern of an OSU test's flows of bytes, with the test's name first so
// that no two tests' rows share a pattern: "osu_bibw/a<>b:4096" (an exchange),
// "osu_mbw_mr/a>b:4096×2" (k flows of one pair of nodes), "osu_mbw_mr/a>c,b>d:4096".
func osuPatternID(test, exp string, flows [][2]string, bytes int64) string {
	if exp == experiments.ExchangeCalibration {
		return fmt.Sprintf("%s/%s<>%s:%d", test, flows[0][0], flows[0][1], bytes)
	}
	if k := len(flows); !slices.ContainsFunc(flows, func(f [2]string) bool { return f != flows[0] }) {
		id := fmt.Sprintf("%s/%s>%s:%d", test, flows[0][0], flows[0][1], bytes)
		if k > 1 {
			id += fmt.Sprintf("×%d", k)
		}
		return id
	}
	pairs := make([]string, len(flows))
	for i, f := range flows {
		pairs[i] = f[0] + ">" + f[1]
	}
	return fmt.Sprintf("%s/%s:%d", test, strings.Join(pairs, ","), bytes)
}

// figures checks the columns of a row that are not stored (minima, maxima, percentiles,
// message rates): each must be a number ≥ 0, as OSU prints them.
func (p *osuParser) figures(n int64, f []string) error {
	for i, c := range p.cols {
		if i == 0 || c == "validation" || c == "iterations" {
			continue
		}
		if err := p.r.parseFigure(n, p.names[i], f[i]); err != nil {
			return err
		}
	}
	return nil
}

// positive reads the value > 0 of a row in the first of the columns names; column and unit
// name it in messages, and missing says what the header lacks when it has none of them.
func (p *osuParser) positive(n int64, f []string, column, unit, missing string, names ...string) (float64, error) {
	c := p.col(names...)
	if c < 0 {
		return 0, p.r.errAt(p.colLine, column, ErrMissingColumn, "%s", missing)
	}
	return p.r.parsePositive(n, column, unit, f[c])
}

// settle finds, at a run's first row, where its processes were (osuRun): the nodes of ranks 0
// and 1, of osu_mbw_mr's and osu_multi_lat's pairs, or of a collective's processes.
func (p *osuParser) settle() error {
	if p.run.set {
		return nil
	}
	var err error
	switch p.test.read {
	case osuLatency, osuBandwidth, osuBiBandwidth:
		err = p.settleTwo()
	case osuMultiBW:
		err = p.settleMultiBW()
	case osuMultiLat:
		err = p.settleMultiLat()
	case osuCollective:
		err = p.settleCollective()
	}
	if err != nil {
		return err
	}
	p.run.set = true
	return nil
}

// settleTwo reads the nodes of ranks 0 and 1 of a two-process test: --ranks' first two, else
// --src and --dst.
func (p *osuParser) settleTwo() error {
	var src, dst string
	if len(p.r.ranks) > 0 {
		nodes, err := p.r.rankNodes(p.test.name, 2)
		if err != nil {
			return err
		}
		src, dst = nodes[0], nodes[1]
	} else {
		var err error
		if src, dst, err = p.r.nodes("OSU "+p.test.name, nil); err != nil {
			return err
		}
	}
	p.run.flows, p.run.exp = [][2]string{{src, dst}}, experiments.P2PSweep
	d := designPairs
	if p.test.read == osuBiBandwidth {
		p.run.flows, p.run.exp, d = [][2]string{{src, dst}, {dst, src}}, experiments.ExchangeCalibration, designExchanges
	}
	_, err := p.r.place(0, p.test.name, d, [][]int{{0, 1}}, []string{src, dst})
	return err
}

// settleMultiBW reads the pairs of an osu_mbw_mr run from its pairs line: ranks 0 … 2k−1 on
// --ranks (or --src and --dst for one pair).
func (p *osuParser) settleMultiBW() error {
	if p.pairs < 0 {
		return inputErr(Location{File: p.r.path}, "pairs", ErrMissingColumn,
			`osu_mbw_mr output without its "# [ pairs: N ]" line before the rows: cannot tell how many pairs streamed at once`)
	}
	nodes, err := p.r.rankNodes(fmt.Sprintf("osu_mbw_mr (%d pairs: rank i sends to rank i + %d)", p.pairs, p.pairs), int(2*p.pairs))
	if err != nil {
		return err
	}
	return p.settlePairs(nodes, int(p.pairs))
}

// settleMultiLat reads the pairs of an osu_multi_lat run: P processes from --ranks, rank i
// with rank i + P/2. The file does not say P, so --ranks is required.
func (p *osuParser) settleMultiLat() error {
	n := len(p.r.ranks)
	switch {
	case n == 0:
		return inputErr(Location{File: p.r.path}, "", ErrUnsupported,
			"osu_multi_lat output does not say how many processes ran (OSU pairs rank i with rank i + P/2 and averages over the pairs); give their nodes (--ranks: one node per rank, in rank order; --ranks a,b for a run of two)")
	case n%2 != 0:
		return inputErr(Location{File: p.r.path}, "", ErrUnsupported,
			"osu_multi_lat on --ranks of %d nodes: OSU pairs rank i with rank i + P/2, so a run has an even number of processes; give one node per rank of the run, in rank order", n)
	}
	return p.settlePairs(p.r.ranks, n/2)
}

// settlePairs sets the run's flows to OSU's k pairs on the nodes of ranks 0 … 2k−1, rank i to
// rank i + k, and their experiment (textReader.place).
func (p *osuParser) settlePairs(nodes []string, k int) error {
	pairs := make([][]int, k)
	flows := make([][2]string, k)
	for i := range flows {
		pairs[i] = []int{i, i + k}
		flows[i] = [2]string{nodes[i], nodes[i+k]}
	}
	exp, err := p.r.place(0, fmt.Sprintf("%s (rank i sends to rank i + %d)", p.test.name, k), designPairs, pairs, nodes)
	if err != nil {
		return err
	}
	p.run.flows, p.run.exp = flows, exp
	p.placed(fmt.Sprintf("%s, %d pairs: %s", exp, k, pairList(flows)))
	return nil
}

// settleCollective reads a collective's processes from --ranks: procs is its length, the root
// rank 0's node. The table counts one process per node, so ranks sharing a node are refused
// (textReader.place).
func (p *osuParser) settleCollective() error {
	n := len(p.r.ranks)
	switch {
	case n == 0:
		return inputErr(Location{File: p.r.path}, "", ErrUnsupported,
			"%s output does not say how many processes ran, nor where; give their nodes (--ranks: one node per rank, in rank order; rank 0, the root, first)", p.test.name)
	case n < 2:
		return inputErr(Location{File: p.r.path}, "", ErrUnsupported,
			"%s on --ranks of 1 node: OSU's collectives run on two processes or more; give one node per rank of the run, in rank order", p.test.name)
	}
	if _, err := p.r.place(0, p.test.name, designCollective, [][]int{rankRange(0, n)}, p.r.ranks); err != nil {
		return err
	}
	p.run.root, p.run.procs = p.r.ranks[0], int64(n)
	p.placed(fmt.Sprintf("%d processes, root %s", n, p.run.root))
	return nil
}

// flows0 returns the nodes of the first flow, or empty strings before any.
func (r osuRun) flows0() (src, dst string) {
	if len(r.flows) == 0 {
		return "", ""
	}
	return r.flows[0][0], r.flows[0][1]
}

// placed records a run's placement for the notes, once.
func (p *osuParser) placed(s string) { p.placements = appendNew(p.placements, s) }

// finish refuses an output without a header, a last block without rows, or an output
// without a row above 0 bytes, and notes what the rows are.
func (p *osuParser) finish() (*textOut, error) {
	if p.colLine == 0 {
		return nil, inputErr(Location{File: p.r.path}, "", ErrEmptyFile, `no "# Size ..." header line and no data rows`)
	}
	if err := p.endRun(0); err != nil {
		return nil, err
	}
	if p.o.rows() == 0 {
		return nil, inputErr(Location{File: p.r.path}, "", ErrEmptyFile, "no data rows with a message size above 0")
	}
	p.notes()
	return p.o, nil
}

// notes says what each row is, what it is an average of, where the processes were, and which
// columns were not stored.
func (p *osuParser) notes() {
	o := p.o
	avg := "the file does not say over how many iterations (-i)"
	if p.iters.hi > 0 {
		avg = "over " + p.iters.String() + " iterations (Iterations column)"
	}
	where := strings.Join(p.placements, "; ")
	src, dst := p.run.flows0()
	switch p.test.read {
	case osuLatency:
		o.note("%s: each row is OSU's average one-way latency (half the round trip; %s sends first), %s; µs read as 10⁻⁶ s", o.tool, src, avg)
	case osuBandwidth:
		o.note("%s: each row's time is bytes / bandwidth (MB = 10⁶ B), the per-message time of a window of back-to-back messages from %s to %s, %s: latency is hidden, so a Hockney fit's α is near zero", o.tool, src, dst, avg)
	case osuBiBandwidth:
		o.note("%s: an exchange_calibration pattern of one flow each way between %s and %s; each direction's time is 2 × bytes / bandwidth (OSU's bandwidth counts both directions; MB = 10⁶ B), per message of a window streamed both ways, %s", o.tool, src, dst, avg)
	case osuMultiBW:
		o.note("%s: the pairs (rank i sends to rank i + k) stream at once, one pattern of k flows; each flow's time is bytes × k / bandwidth (OSU's MB/s sums the k pairs; MB = 10⁶ B), the per-message time of each pair's stream, %s; Messages/s is not stored; %s", o.tool, avg, where)
	case osuMultiLat:
		o.note("%s: the pairs (rank i with rank i + P/2, P from --ranks) ping-pong at once, one pattern of k flows; each flow's time is OSU's one-way latency averaged over the pairs, %s; µs read as 10⁻⁶ s; %s", o.tool, avg, where)
	case osuCollective:
		var times []string
		if p.maxRows > 0 {
			times = append(times, fmt.Sprintf("%d rows are OSU's Max Latency (-f: the slowest process's mean time per call, when the collective is complete, as IMB's t_max)", p.maxRows))
		}
		if p.avgRows > 0 {
			times = append(times, fmt.Sprintf("%d rows are OSU's average latency (the mean over the processes of each one's mean time per call: below the collective's completion, its slowest process's time; run with -f for the Max Latency column)", p.avgRows))
		}
		o.note("%s: collectives rows of op %s; %s, %s; µs read as 10⁻⁶ s; bytes is OSU's Size (%s); %s from --ranks; the root is rank 0's node (OSU's root unless the run used -k, which the file does not print)",
			o.tool, p.test.op, strings.Join(times, "; "), avg, osuSizeMeaning[p.test.op], where)
	}
	if p.col("p50taillat(us)") >= 0 || p.col("p50tailbw(mb/s)") >= 0 {
		o.note("%s: the percentile columns (-z) are not stored: a row holds one figure, the average", o.tool)
	}
	if p.zeros > 0 {
		o.note("%s: the 0-byte row is left out (a transfer moves at least one byte)", o.tool)
	}
}

// osuSizeMeaning says what OSU's Size is for each collective: the count each call passes.
var osuSizeMeaning = map[string]string{
	"alltoall":  "the block each process sends to each other",
	"allgather": "the block each process contributes to every other",
	"bcast":     "the whole message the root sends",
	"scatter":   "the block the root sends to each process",
	"gather":    "the block each process sends to the root",
}

var (
	osuPairs  = regexp.MustCompile(`pairs:\s*([0-9]+)`)
	osuVaried = regexp.MustCompile(`window size:\s*varied`)
	osuColSep = regexp.MustCompile(`\s{2,}|\t+`)
)

// osuTitle splits "# OSU MPI-CUDA Latency Test v5.6" into the test's name ("Latency": the
// words after the MPI flavour, "MPI" or "MPI-…", and before "Test") and its version ("v5.6",
// or ""). A one-sided test keeps its operation: "MPI_Get latency".
func osuTitle(line string) (name, version string) {
	t := strings.TrimSpace(strings.TrimPrefix(line, "# OSU "))
	if i := strings.LastIndex(t, " Test"); i >= 0 {
		version = strings.TrimSpace(t[i+len(" Test"):])
		t = t[:i]
	}
	if first, rest, ok := strings.Cut(t, " "); ok && (first == "MPI" || strings.HasPrefix(first, "MPI-")) {
		t = rest
	}
	return strings.TrimSpace(t), version
}

// looksOSU reports whether the head of a file is an OSU output.
func looksOSU(head string) bool { return strings.Contains(head, "# OSU ") }
