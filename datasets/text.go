package datasets

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/experiments"
	"github.com/commcal/commcal/internal/badinput"
)

// The text outputs of MPI benchmarks (OSU, IMB, SKaMPI, NetPIPE, MPIBlib) are small tables
// printed for people: a header of comment lines, then one line per message size. Each adapter
// (osu.go, imb.go, ...) reads a whole output into a textOut, and ingester.text writes it. No Go
// library reads these formats; they are parsed by hand, by content rather than by position,
// since their headers change across versions and flags.
//
// Conventions shared by every text adapter:
//   - A one-way time (half a round trip, as OSU, IMB PingPong and NetPIPE print it, or a round
//     trip halved, as SKaMPI's and MPIBlib's) becomes a p2p_sweep transfer: one flow of
//     pattern "BENCH/src>dst:bytes", t_start_s 0 and t_end_s the time. That is the table
//     Hockney's fit (estimate.FitHockney) reads.
//   - Every pattern ID starts with the benchmark that measured it and a slash (textOut.bench:
//     "osu_latency/X1>Y1:4096", "IMB-MPI1/X1<>Y1:4096", "saturation/send/k=3"), so that two
//     benchmarks' rows never become repetitions of one pattern: osu_latency's one-way latency
//     and osu_bw's per-message time of a stream differ fivefold at 4 MiB. The IDs of commcal's
//     own engine, of simulate and of iperf3 runs carry no such prefix.
//   - Repetitions of one pattern (experiment and ID) are the same transfers measured again: a
//     later file or repetition whose flows differ (other nodes, sizes or flow count) is refused.
//   - A row that the tool averaged over N iterations is one row; its repetition number counts
//     the rows of the same pattern across the whole ingest (0 for the first), so two runs of
//     one benchmark become repetitions 0 and 1. The source's notes in the manifest say what
//     the rows are averages of.
//   - These outputs do not name hosts (except where said): --src is the node of rank 0, the
//     rank that sends first, and --dst that of rank 1.
//   - Times are converted from µs to seconds (×10⁻⁶); a rate in MB/s is 10⁶ bytes per second
//     unless the adapter says otherwise.
//   - A 0-byte row is left out of transfers (a transfer moves at least one byte), and a note
//     says so.
//   - Structure is checked as well as values, from what each tool prints: a block that ends
//     before its first row is a run that was killed or cut (refused, not read as a shorter
//     sweep); a data line without its line end, the last of the file, was cut while it was
//     written and is refused (textReader.whole), while a comment or header cut so is read as
//     it is; the sizes of a block follow the order the tool prints them in (sizeOrder); a
//     figure that is not read must still be a number (a "-nan" percentile is refused); text
//     that is not UTF-8 is not a benchmark's output.
//   - A value quoted in a message is cut to badinput.MaxQuote bytes (quote).

// textOut is what a text adapter read from one file.
type textOut struct {
	tool string // what the file is, for messages: "OSU osu_latency v7.4"
	// bench starts every pattern ID of the output; empty means the program named by tool
	// (benchName). An adapter whose output holds several benchmarks may set it per block.
	bench       string
	transfers   []Transfer
	roundtrips  []RoundTrip
	collectives []Collective
	// lines holds, by table, the input line of each row.
	lines map[*Table][]int64
	notes []string
	// breaks are protocol thresholds (SimGrid's *_breakpoints file).
	breaks []float64
	// aux, when set, says that the file holds no transfer times: what it is and what to use
	// instead. Alone it is refused with this error; beside files that have rows, it is kept as
	// a note of the manifest.
	aux *InputError
}

func newTextOut(tool string) *textOut { return &textOut{tool: tool, lines: map[*Table][]int64{}} }

// patternID is id prefixed with the benchmark and a slash: "osu_latency/X1>Y1:4096".
func (o *textOut) patternID(id string) string {
	bench := o.bench
	if bench == "" {
		bench = benchName(o.tool)
	}
	return bench + "/" + id
}

// benchName is the program of a tool's description, without its suite or version: the last
// word that is not a version number ("osu_latency" of "OSU osu_latency v7.4", "IMB-MPI1" of
// "IMB-MPI1 2021.11", "SKaMPI" of "SKaMPI 5.0.4"). A version is a word that starts with a
// digit, or with v and a digit.
func benchName(tool string) string {
	words := strings.Fields(tool)
	for i := len(words) - 1; i >= 0; i-- {
		w := words[i]
		if len(w) > 1 && (w[0] == 'v' || w[0] == 'V') {
			w = w[1:]
		}
		if w[0] < '0' || w[0] > '9' {
			return words[i]
		}
	}
	return tool
}

func (o *textOut) note(format string, a ...any) { o.notes = append(o.notes, fmt.Sprintf(format, a...)) }

func (o *textOut) rows() int {
	return len(o.transfers) + len(o.roundtrips) + len(o.collectives)
}

// textReader gives the context a text adapter needs: where the file is, the nodes the flags
// name, and the cluster.
type textReader struct {
	path     string
	src, dst string
	ranks    []string // the node of each rank (--ranks), or nil
	// orderNote, once set, says that a collective's ranks ran off the order validation
	// assumes (checkCollectiveOrder); textSource adds it to the source's notes.
	orderNote string
	cl        *cluster.Cluster
	// from and to are the nodes settled by the first call of nodes.
	from, to string
}

func (r *textReader) at(line int64) Location { return Location{File: r.path, Line: line} }

// errAt is an InputError at a line of the file.
func (r *textReader) errAt(line int64, column string, kind ErrKind, format string, a ...any) *InputError {
	return inputErr(r.at(line), column, kind, format, a...)
}

// nodes returns the sender (rank 0) and receiver (rank 1) nodes of tool's output (for
// messages: "NetPIPE -2"): the flags, or hosts the file names when both are nodes of the
// cluster (named may be nil), on two nodes (place). The first answer holds for the whole
// file.
func (r *textReader) nodes(tool string, named []string) (string, string, error) {
	switch {
	case r.from != "":
	case r.src != "" && r.dst != "":
		r.from, r.to = r.src, r.dst
	case len(named) >= 2 && r.src == "" && r.dst == "" && named[0] != named[1] && r.hasNode(named[0]) && r.hasNode(named[1]):
		r.from, r.to = named[0], named[1]
	}
	if r.from != "" {
		_, err := r.place(0, tool, designPairs, [][]int{{0, 1}}, []string{r.from, r.to})
		return r.from, r.to, err
	}
	what := "does not name its nodes"
	if len(named) >= 2 {
		what = fmt.Sprintf("names hosts %s and %s, which are not two nodes of cluster %s", quote(named[0]), quote(named[1]), r.cl.Name())
	}
	return "", "", inputErr(Location{File: r.path}, "", ErrUnsupported,
		"%s output %s; give them (--src: the node of rank 0, which sends first; --dst: the node of rank 1)", tool, what)
}

// checkCollectiveOrder notes, once per file, a collective whose ranks do not run on the
// cluster's nodes in the description's order from its first rank's node: the collectives
// table keeps only the root and the process count, and validation places the ranks that way.
func (r *textReader) checkCollectiveOrder(what string, ranks []int, nodes []string) {
	if r.orderNote != "" || len(ranks) == 0 {
		return
	}
	placed := r.cl.PlaceRanks(nodes[ranks[0]], len(ranks))
	if placed == nil {
		return
	}
	for i, rk := range ranks {
		if want := placed[i]; nodes[rk] != want {
			r.orderNote = fmt.Sprintf("%s: rank %d ran on node %s, where validation, which places a collective's ranks one per node in the cluster's order from its root, puts it on %s: its predictions of these collectives are for that placement",
				what, i, bounded(nodes[rk]), bounded(want))
			return
		}
	}
}

// rankNodes returns the nodes of ranks 0 … n−1: --ranks, or --src and --dst for a run of two
// processes. A file that does not name its nodes is refused with a request for --ranks, for
// tool (the benchmark, for the message).
func (r *textReader) rankNodes(tool string, n int) ([]string, error) {
	switch {
	case len(r.ranks) >= n:
		return r.ranks[:n], nil
	case len(r.ranks) > 0:
		return nil, inputErr(Location{File: r.path}, "", ErrUnsupported,
			"%s output of %d processes, and --ranks names %d nodes; give one node per rank, in rank order", tool, n, len(r.ranks))
	case n == 2 && r.src != "" && r.dst != "":
		return []string{r.src, r.dst}, nil
	}
	return nil, inputErr(Location{File: r.path}, "", ErrUnsupported,
		"%s output of %d processes does not name their nodes; give them (--ranks: one node per rank, in rank order)", tool, n)
}

// design is how the ranks of a benchmark's pattern communicate, for textReader.place.
type design int

const (
	// designPairs: one-way pairs at once; each group is a sender and its receiver.
	designPairs design = iota
	// designExchanges: same-peer exchanges; each group is two ranks sending to each other.
	designExchanges
	// designCycles: directed cycles; each group is a ring of ranks, each sending to the next
	// (and, for IMB's Exchange, to the one before).
	designCycles
	// designCollective: one collective; the one group is every rank that takes part.
	designCollective
)

// place checks that the ranks of a pattern are placed as its design needs: groups are the
// pattern's groups of ranks (design), nodes the node of each rank (indexed by rank); what
// names the benchmark and run in messages, line the line that begins it (or 0). It is the
// one placement check of the text adapters:
//   - Two ranks of one pair, one exchange, neighbours in one cycle, or of one collective on
//     one node are refused: their messages go through loopback or shared memory, which says
//     nothing about the network (a collectives row counts one process per node, too).
//   - Pairs: every pair between the same two nodes is fair_intra (k flows sharing those NICs,
//     fairness design A), pairs between distinct nodes fair_inter (k disjoint transfers,
//     design B), and a single pair, the k = 1 point of both designs, which commcal measures
//     within a rack for fair_intra and across racks for fair_inter, takes the experiment of
//     its path. Any other placement (a node in two pairs of other peers, or sending and
//     receiving) is refused, naming it. The experiment is returned.
//   - Exchanges: every node sends to and receives from one same peer (experiments'
//     definition); a node exchanging with two peers is refused.
//   - Cycles: every node sends to one peer and receives from another, so the ranks of the
//     cycles are on distinct nodes; two on one node are refused.
//
// Other designs return "".
func (r *textReader) place(line int64, what string, d design, groups [][]int, nodes []string) (string, error) {
	loc := Location{File: r.path, Line: line}
	sameNode := func(i, j int, role string) error {
		do := "place one rank per node (mpirun --map-by node)"
		if d == designPairs || d == designExchanges {
			do = "place the two ranks of each pair on two nodes (mpirun --map-by node does)"
		}
		return inputErr(loc, "", ErrSameNode,
			"%s: ranks %d and %d, %s, are both on node %s: their messages go through the node's loopback or shared memory, which says nothing about the network; %s and give each rank's node (--ranks, or --src and --dst for two ranks)",
			what, i, j, role, bounded(nodes[i]), do)
	}
	switch d {
	case designPairs, designExchanges:
		role := map[design]string{designPairs: "a pair", designExchanges: "an exchanging pair"}[d]
		for _, g := range groups {
			if nodes[g[0]] == nodes[g[1]] {
				return "", sameNode(g[0], g[1], role)
			}
		}
	case designCycles:
		for _, g := range groups {
			for i, rk := range g {
				if next := g[(i+1)%len(g)]; nodes[rk] == nodes[next] {
					return "", sameNode(rk, next, "neighbours in a cycle")
				}
			}
		}
		at := map[string]int{}
		for _, g := range groups {
			for _, rk := range g {
				if j, ok := at[nodes[rk]]; ok {
					return "", inputErr(loc, "", ErrUnsupported,
						"%s: ranks %d and %d of the cycles are both on node %s (--ranks): in a directed cycle every node sends to one peer and receives from another, so the cycles' ranks are on distinct nodes; place one rank per node (mpirun --map-by node)",
						what, j, rk, bounded(nodes[rk]))
				}
				at[nodes[rk]] = rk
			}
		}
	case designCollective:
		at := map[string]int{}
		for _, rk := range groups[0] {
			if j, ok := at[nodes[rk]]; ok {
				return "", sameNode(j, rk, "of one collective")
			}
			at[nodes[rk]] = rk
		}
		r.checkCollectiveOrder(what, groups[0], nodes)
	}
	switch d {
	case designPairs:
		return r.pairsExperiment(loc, what, groups, nodes)
	case designExchanges:
		peer := map[string]string{}
		for _, g := range groups {
			for _, e := range [][2]string{{nodes[g[0]], nodes[g[1]]}, {nodes[g[1]], nodes[g[0]]}} {
				if p, ok := peer[e[0]]; ok && p != e[1] {
					return "", inputErr(loc, "", ErrUnsupported,
						"%s: node %s exchanges with %s and with %s (--ranks): in a same-peer exchange every node sends to and receives from one peer; place the ranks so that each node has one peer",
						what, bounded(e[0]), bounded(p), bounded(e[1]))
				}
				peer[e[0]] = e[1]
			}
		}
	}
	return "", nil
}

// pairsExperiment names the experiment of one-way pairs of ranks (groups: sender, receiver)
// that place has found on two nodes each (see place).
func (r *textReader) pairsExperiment(loc Location, what string, groups [][]int, nodes []string) (string, error) {
	flows := make([][2]string, len(groups))
	for i, g := range groups {
		flows[i] = [2]string{nodes[g[0]], nodes[g[1]]}
	}
	if len(flows) == 1 {
		if c, err := r.cl.Class(flows[0][0], flows[0][1]); err == nil && c == cluster.InterRack {
			return experiments.FairInter, nil
		}
		return experiments.FairIntra, nil
	}
	if !slices.ContainsFunc(flows, func(f [2]string) bool { return f != flows[0] }) {
		return experiments.FairIntra, nil
	}
	seen := make(map[string]bool, 2*len(flows))
	disjoint := true
	for _, f := range flows {
		disjoint = disjoint && !seen[f[0]] && !seen[f[1]]
		seen[f[0]], seen[f[1]] = true, true
	}
	if disjoint {
		return experiments.FairInter, nil
	}
	return "", inputErr(loc, "", ErrUnsupported,
		"%s: %d pairs placed %s (--ranks): neither every pair between the same two nodes (fair_intra) nor pairs between distinct nodes (fair_inter), so no experiment holds them; place the ranks so that one of the two holds",
		what, len(flows), bounded(pairList(flows)))
}

// rankRange returns the ranks from, …, to−1.
func rankRange(from, to int) []int {
	rs := make([]int, to-from)
	for i := range rs {
		rs[i] = from + i
	}
	return rs
}

// pairList writes pairs as "X1>Y1, X2>Y2" for notes and messages.
func pairList(flows [][2]string) string {
	s := make([]string, len(flows))
	for i, f := range flows {
		s[i] = f[0] + ">" + f[1]
	}
	return strings.Join(s, ", ")
}

func (r *textReader) hasNode(name string) bool {
	_, ok := r.cl.Node(name)
	return ok
}

// sweep appends a p2p_sweep transfer of bytes taking seconds one way, of pattern
// "BENCH/src>dst:bytes".
func (r *textReader) sweep(o *textOut, line int64, src, dst string, bytes int64, seconds float64) {
	o.transfers = append(o.transfers, Transfer{Cluster: r.cl.Name(), Experiment: "p2p_sweep",
		PatternID: o.patternID(experiments.PairID(src, dst, bytes)), Src: src, Dst: dst, Bytes: bytes, TEnd: seconds})
	o.lines[TransfersTable] = append(o.lines[TransfersTable], line)
}

// bidir appends one repetition of a bidirectional pattern: perWay flows of bytes from src to
// dst and as many from dst to src, all starting together and each taking seconds. The
// experiment is bidir_nic, or bidir_backbone when the nodes are in different racks; the
// pattern is "BENCH/src<>dst:bytes", or "BENCH/src<>dst:bytes×k" with k flows each way.
func (r *textReader) bidir(o *textOut, line int64, src, dst string, bytes int64, perWay int, seconds float64) {
	exp := "bidir_nic"
	if c, err := r.cl.Class(src, dst); err == nil && c == cluster.InterRack {
		exp = "bidir_backbone"
	}
	id := fmt.Sprintf("%s<>%s:%d", src, dst, bytes)
	if perWay > 1 {
		id += fmt.Sprintf("×%d", perWay)
	}
	pattern := o.patternID(id)
	for f := range 2 * perWay {
		s, d := src, dst
		if f >= perWay {
			s, d = dst, src
		}
		o.transfers = append(o.transfers, Transfer{Cluster: r.cl.Name(), Experiment: exp, PatternID: pattern,
			FlowID: int64(f), Src: s, Dst: d, Bytes: bytes, TEnd: seconds})
		o.lines[TransfersTable] = append(o.lines[TransfersTable], line)
	}
}

// collective appends a scatter or gather sweep point.
func (r *textReader) collective(o *textOut, line int64, op, root string, procs, bytes int64, seconds float64) {
	o.collectives = append(o.collectives, Collective{Cluster: r.cl.Name(), Op: op, Root: root, Procs: procs, Bytes: bytes, Seconds: seconds})
	o.lines[CollectivesTable] = append(o.lines[CollectivesTable], line)
}

// textLine is one line of a text file, without its line end.
type textLine struct {
	n    int64 // 1-based
	text string
	// cut is set on the last line of a file that does not end with a line end: the tools end
	// every line they print, so the line was cut while it was written (a run killed, a copy
	// or a disk that filled up), and its last figure may have lost digits (whole).
	cut bool
}

// splitLines cuts data into lines (LF or CRLF), dropping a UTF-8 byte-order mark, and marks
// a last line without its line end as cut. Text that is not UTF-8 or holds NUL bytes is not
// a benchmark's output and is refused, with the line.
func splitLines(path string, data []byte) ([]textLine, error) {
	data = bytes.TrimPrefix(data, utf8BOM)
	if i := bytes.IndexByte(data, 0); i >= 0 {
		return nil, inputErr(Location{File: path, Line: int64(bytes.Count(data[:i], []byte("\n")) + 1)}, "", ErrCorrupt, "a NUL byte: binary content, not a benchmark's text output")
	}
	raw := strings.Split(string(data), "\n")
	cut := raw[len(raw)-1] != ""
	if !cut {
		raw = raw[:len(raw)-1]
	}
	out := make([]textLine, len(raw))
	for i, l := range raw {
		if !utf8.ValidString(l) {
			return nil, inputErr(Location{File: path, Line: int64(i + 1)}, "", ErrControlChar, "%s", notUTF8(l))
		}
		out[i] = textLine{n: int64(i + 1), text: strings.TrimSuffix(l, "\r")}
	}
	if cut {
		out[len(out)-1].cut = true
	}
	return out, nil
}

// whole refuses a data line that is cut short (textLine.cut): read, its last figure could
// be a few digits of the one printed (1277.81 cut to 127). The adapters call it on the lines
// that hold figures; a comment or header cut at the end of a file is read as it is, since no
// row follows that could depend on it (a block it begins has no rows, which is refused).
func (r *textReader) whole(l textLine) error {
	if !l.cut {
		return nil
	}
	return r.errAt(l.n, "", ErrCorrupt, "the line is cut short (no end of line): a truncated file, whose last figure may have lost digits; re-run the benchmark, or delete the cut line")
}

// notUTF8 says where line, which is not UTF-8, first goes wrong.
func notUTF8(line string) string {
	at := 0
	for at < len(line) {
		r, size := utf8.DecodeRuneInString(line[at:])
		if r == utf8.RuneError && size <= 1 {
			break
		}
		at += size
	}
	return fmt.Sprintf("byte 0x%02x at byte %d of the line is not UTF-8: text in another encoding, or binary, is not a benchmark's output", line[min(at, len(line)-1)], at+1)
}

// parseInt reads an integer; what names it ("a count") in the message when s is not one.
func (r *textReader) parseInt(line int64, column, what, s string) (int64, error) {
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, r.errAt(line, column, ErrWrongType, "%s is not %s (an integer)", quote(s), what)
	}
	return v, nil
}

// parseSize reads a message size in bytes (an integer ≥ 0).
func (r *textReader) parseSize(line int64, column, s string) (int64, error) {
	v, err := r.parseInt(line, column, "a message size in bytes", s)
	if err == nil && v < 0 {
		return 0, r.errAt(line, column, ErrNegative, "message size %d, want ≥ 0", v)
	}
	return v, err
}

// parseIndex reads a number that counts from 0 (an integer ≥ 0): what names it, "a rank" or
// "a measurement number".
func (r *textReader) parseIndex(line int64, column, what, s string) (int64, error) {
	v, err := r.parseInt(line, column, what, s)
	if err == nil && v < 0 {
		return 0, r.errAt(line, column, ErrNegative, "%s %d, want ≥ 0", column, v)
	}
	return v, err
}

// parsePositive reads a finite number > 0 (a time or a rate); unit names it in messages.
func (r *textReader) parsePositive(line int64, column, unit, s string) (float64, error) {
	v, err := r.parseFloat(line, column, s)
	if err != nil {
		return 0, err
	}
	if !(v > 0) {
		return 0, r.errAt(line, column, ErrNonPositive, "%s %s: want a %s > 0", column, bounded(s), unit)
	}
	return v, nil
}

// parseFloat reads a finite number. C's printf writes an undefined figure as "nan" or "-nan"
// (glibc), "-nan(ind)" (Windows): each is NaN here.
func (r *textReader) parseFloat(line int64, column, s string) (float64, error) {
	v, err := strconv.ParseFloat(s, 64)
	switch {
	case math.IsNaN(v) || err != nil && cNaN.MatchString(s):
		return 0, r.errAt(line, column, ErrNaN, "got %s (NaN: the tool's figure is undefined), want a number", quote(s))
	case err != nil && !errors.Is(err, strconv.ErrRange):
		return 0, r.errAt(line, column, ErrWrongType, "%s is not a number", quote(s))
	case math.IsInf(v, 0) || errors.Is(err, strconv.ErrRange) && v != 0:
		return 0, r.errAt(line, column, ErrInfinite, "%s is out of range, want a finite number", quote(s))
	}
	return v, nil
}

// cNaN matches the ways C's printf writes NaN.
var cNaN = regexp.MustCompile(`(?i)^[+-]?nan(\(.*\))?$`)

// parseFigure reads a figure the adapter checks but does not store (a minimum, a percentile,
// a rate): a finite number ≥ 0.
func (r *textReader) parseFigure(line int64, column, s string) error {
	v, err := r.parseFloat(line, column, s)
	if err == nil && v < 0 {
		return r.errAt(line, column, ErrNegative, "%s %s, want ≥ 0", column, bounded(s))
	}
	return err
}

// parseCount reads a repetition count (an integer > 0).
func (r *textReader) parseCount(line int64, column, s string) (int64, error) {
	v, err := r.parseInt(line, column, "a count", s)
	if err == nil && v <= 0 {
		return 0, r.errAt(line, column, ErrNonPositive, "count %d, want > 0", v)
	}
	return v, err
}

// addCount reads an iteration or repetition count (an integer > 0) into c.
func (r *textReader) addCount(c *counts, line int64, column, s string) error {
	n, err := r.parseCount(line, column, s)
	if err != nil {
		return err
	}
	c.add(n)
	return nil
}

// parseMicros reads a time in µs (a finite number > 0; unit names it in messages) and
// returns it in seconds.
func (r *textReader) parseMicros(line int64, column, unit, s string) (float64, error) {
	us, err := r.parsePositive(line, column, unit, s)
	return us * 1e-6, err
}

// findColumn returns the index in cols of the first of names that cols holds, or -1: the
// adapters find columns by name, trying the names that versions of a tool gave them.
func findColumn(cols []string, names ...string) int {
	for _, n := range names {
		if i := slices.Index(cols, n); i >= 0 {
			return i
		}
	}
	return -1
}

// appendNew appends s to list unless list holds it already, keeping the order in which
// names are first seen.
func appendNew(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

// noteLeftOut notes the blocks of an output that no table holds, when there are any.
func (o *textOut) noteLeftOut(blocks []string) {
	if len(blocks) > 0 {
		o.note("%s: left out, no table holds them: %s", o.tool, strings.Join(blocks, ", "))
	}
}

// counts summarises the iteration counts of averaged rows for a note: "1000", or "40–200".
type counts struct{ lo, hi int64 }

func (c *counts) add(n int64) {
	if c.lo == 0 || n < c.lo {
		c.lo = n
	}
	c.hi = max(c.hi, n)
}

func (c counts) String() string {
	if c.lo == c.hi {
		return strconv.FormatInt(c.lo, 10)
	}
	return fmt.Sprintf("%d–%d", c.lo, c.hi)
}

// text writes what a text adapter read: each table's rows, their repetitions numbered per
// key across the whole ingest (ing.reps), in batches of BatchRows.
func (ing *ingester) text(src Source, o *textOut, idx int32) ([]string, int64, error) {
	var tables []string
	var total int64
	for _, t := range Tables {
		var n int
		var err error
		switch t {
		case TransfersTable:
			if err := ing.sameFlows(src, o); err != nil {
				return nil, 0, err
			}
			n, err = emitTextRows(ing, src, t, o.transfers, o.lines[t], idx, func(r *Transfer) (string, bool) {
				return "t\x00" + r.Experiment + "\x00" + r.PatternID, r.FlowID == 0
			}, func(r *Transfer, rep int64) { r.Rep = rep })
		case RoundTripsTable:
			n, err = emitTextRows(ing, src, t, o.roundtrips, o.lines[t], idx, func(r *RoundTrip) (string, bool) {
				return fmt.Sprintf("r\x00%s\x00%s\x00%d\x00%d", r.I, r.J, r.BytesOut, r.BytesBack), true
			}, func(r *RoundTrip, rep int64) { r.Rep = rep })
		case CollectivesTable:
			n, err = emitTextRows(ing, src, t, o.collectives, o.lines[t], idx, func(r *Collective) (string, bool) {
				return fmt.Sprintf("c\x00%s\x00%s\x00%d\x00%d", r.Op, r.Root, r.Procs, r.Bytes), true
			}, func(r *Collective, rep int64) { r.Rep = rep })
		}
		if err != nil {
			return nil, 0, err
		}
		if n > 0 {
			tables = append(tables, t.Name)
			total += int64(n)
		}
	}
	return tables, total, nil
}

// sameFlows checks that every repetition of a pattern of o (the rows from one with flow 0 to
// the next) has the flows of the pattern's first repetition, in this source or an earlier one
// of the ingest (ing.flows): the same sources, destinations and sizes, in the same order.
func (ing *ingester) sameFlows(src Source, o *textOut) error {
	lines := o.lines[TransfersTable]
	for start := 0; start < len(o.transfers); {
		end := start + 1
		for end < len(o.transfers) && o.transfers[end].FlowID != 0 {
			end++
		}
		first := o.transfers[start]
		flows := make([]string, end-start)
		for i, t := range o.transfers[start:end] {
			flows[i] = fmt.Sprintf("%s>%s %d B", t.Src, t.Dst, t.Bytes)
		}
		key := first.Experiment + "\x00" + first.PatternID
		before, seen := ing.flows[key]
		if !seen {
			ing.flows[key] = flows
		} else if !slices.Equal(before, flows) {
			var line int64
			if start < len(lines) {
				line = lines[start]
			}
			return inputErr(Location{File: src.Path, Line: line}, "pattern_id", ErrDuplicateKey,
				"%s pattern %s again with other flows (%s): repetitions of a pattern are the same transfers; ingest outputs of other placements or process counts into separate datasets",
				first.Experiment, quote(first.PatternID), flowsDiffer(before, flows))
		}
		start = end
	}
	return nil
}

// flowsDiffer says where two lists of flows first differ, for a message.
func flowsDiffer(before, now []string) string {
	for i := range min(len(before), len(now)) {
		if before[i] != now[i] {
			return fmt.Sprintf("flow %d is %s, before %s", i, now[i], before[i])
		}
	}
	return fmt.Sprintf("%d flows, before %d", len(now), len(before))
}

// emitTextRows numbers the repetitions of rows (key gives a row's key without rep, and whether
// the row starts a new repetition; the flows of one repetition follow its first) and writes
// them in batches.
func emitTextRows[R any](ing *ingester, src Source, t *Table, rows []R, lines []int64, idx int32,
	key func(*R) (string, bool), setRep func(*R, int64)) (int, error) {
	if len(rows) == 0 {
		return 0, nil
	}
	rb := newRowBuilder(t, ing.opts.Mem)
	defer rb.release()
	var rep int64
	for start := 0; start < len(rows); start += ing.opts.BatchRows {
		end := min(start+ing.opts.BatchRows, len(rows))
		for i := start; i < end; i++ {
			k, first := key(&rows[i])
			if first {
				rep = ing.reps[k]
				ing.reps[k]++
			}
			setRep(&rows[i], rep)
			rb.appendStruct(reflect.ValueOf(&rows[i]).Elem())
		}
		if _, err := ing.emit(t, rb, batchLoc{file: src.Path, firstRow: int64(start) + 1, lines: slices.Clone(lines[start:end])}, idx); err != nil {
			return 0, err
		}
	}
	return len(rows), nil
}

// bounded is s as it is when it is short enough to quote whole (a name a note repeats), else
// quoted and cut (quote).
func bounded(s string) string {
	if len(s) <= badinput.MaxQuote {
		return s
	}
	return quote(s)
}

// sizeRule is the order in which a tool prints the message sizes of one block.
type sizeRule int

const (
	// sizesIncrease: each size larger than the one before (OSU's doubling loop, MPIBlib's
	// stride or sorted adaptive set).
	sizesIncrease sizeRule = iota
	// sizesOnce: each size at most once, in any order (IMB runs -msglen's sizes in the file's
	// order).
	sizesOnce
	// sizesOneWay: sizes that never change direction and may repeat (SKaMPI prints a loop's
	// rows in its order, or sorted by the loop variable when it refines the loop, which can
	// measure a size twice).
	sizesOneWay
)

// sizeOrder checks the message sizes of one block of rows against the order its tool prints
// them in: a size listed twice, or sizes going down, is a damaged or concatenated file, not a
// sweep.
type sizeOrder struct {
	rule sizeRule
	// block names the block in messages ("block PingPong (line 30)"), or is empty when the
	// file is one block; why says what the tool prints, for messages.
	block, why string
	last       int64
	lastLine   int64 // 0 before the first size
	dir        int   // sizesOneWay: +1 rising, -1 falling, 0 not yet known
	seen       map[int64]int64
}

func newSizeOrder(rule sizeRule, block, why string) *sizeOrder {
	return &sizeOrder{rule: rule, block: block, why: why, seen: map[int64]int64{}}
}

// add checks the size of the row at line (in column, for messages).
func (s *sizeOrder) add(r *textReader, line int64, column string, size int64) error {
	in := ""
	if s.block != "" {
		in = " in " + s.block
	}
	prev, seenAt := s.last, s.seen[size]
	s.seen[size] = line
	if s.lastLine == 0 {
		s.last, s.lastLine = size, line
		return nil
	}
	dir := map[bool]int{true: 1, false: -1}[size > prev]
	switch {
	case s.rule != sizesOneWay && seenAt > 0:
		return r.errAt(line, column, ErrDuplicateKey, "size %d B again%s, as on line %d: %s", size, in, seenAt, s.why)
	case s.rule == sizesIncrease && size < prev:
		return r.errAt(line, column, ErrNotIncreasing, "size %d B after %d B (line %d)%s: %s", size, prev, s.lastLine, in, s.why)
	case s.rule == sizesOneWay && size != prev && s.dir != 0 && dir != s.dir:
		return r.errAt(line, column, ErrNotIncreasing, "size %d B after %d B (line %d)%s, whose sizes %s until then: %s",
			size, prev, s.lastLine, in, map[int]string{1: "rose", -1: "fell"}[s.dir], s.why)
	case s.rule == sizesOneWay && size != prev:
		s.dir = dir
	}
	s.last, s.lastLine = size, line
	return nil
}

// errNoRows is the error of a block (what names it) that ends before its first row, at line
// (0: at the end of the file): a run killed, failed or out of time, or a file cut short. Its
// other blocks are not read as a shorter sweep.
func (r *textReader) errNoRows(at int64, what string) *InputError {
	end := "the end of the file"
	if at > 0 {
		end = fmt.Sprintf("line %d", at)
	}
	return inputErr(Location{File: r.path}, "", ErrCorrupt,
		"%s has no rows before %s: the run stopped (killed, failed or out of time) or the file was cut before its first measurement; re-run it, or delete the block", what, end)
}
