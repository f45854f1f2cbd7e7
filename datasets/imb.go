package datasets

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/commcal/commcal/experiments"
)

// Intel MPI Benchmarks (IMB-MPI1, IMB-P2P). An output is a header of "#" lines (the version
// and suite, "Intel(R) MPI Benchmarks 2021.11, MPI-1 part", and the calling sequence), then
// one block per benchmark and process count:
//
//	#---------------------------------------------------
//	# Benchmarking Sendrecv
//	# #processes = 4
//	#---------------------------------------------------
//	       #bytes #repetitions  t_min[usec]  t_max[usec]  t_avg[usec]   Mbytes/sec
//	            0         1000         0.25         0.31         0.28         0.00
//
// Structure (IMB_output.c, IMB_show_procids): a block is its "# Benchmarking" line, its
// process count ("#processes = P", with "( N additional processes waiting in MPI_Barrier)" when
// the run has more; under -map PxQ "; rank order (rowwise):" and the MPI_COMM_WORLD rank of
// each of the block's ranks on the lines after it; under -multi "# Benchmarking Multi-NAME" and
// "( N groups of M processes each running simultaneous )"), a column header ("#bytes …";
// Barrier's "#repetitions …" has no size; -multi 1 puts a Group column first) and one row per
// size of IMB's list, each size once (the powers of two of -msglog, or -msglen's file in its
// order). A size IMB could not measure is printed as "SIZE time-out.; …", "out-of-mem.; …" or
// "int-overflow; …": left out with a note. A block that ends before its first row is a run
// that was killed or cut: refused. Every figure of a row, read or not, is a number ≥ 0.
// Columns are found by name; times are µs; Mbytes/sec is not read (IMB 2021 divides by 10⁶,
// older versions by 2²⁰).
//
// The P processes of a block are ranks 0 … P−1 of MPI_COMM_WORLD (IMB_set_communicator), or,
// under -map, the ranks its rank order lists; their nodes come from --ranks (MPI_COMM_WORLD
// order), or --src and --dst for ranks 0 and 1. A block of more processes without --ranks is
// refused, asking for it, and so is a transfer between two ranks of one node (it does not
// cross the network). The pattern IDs name the suite and benchmark (imbPattern), so that two
// benchmarks' or tools' exchanges of the same nodes and size never merge.
//
// Times (IMB_calculate_times, IMB_display_times): each rank times its loop and divides by the
// repetitions; t_min, t_max and t_avg are the minimum, maximum and mean over the block's ranks,
// and t[usec], printed alone by the single-transfer benchmarks, is the maximum. IMB's
// Mbytes/sec derives from the maximum, so t_max (t[usec]) is the operation's time here: the
// pattern is done when its slowest rank is. IMB-P2P prints instead the mean over the ranks as
// t[usec] (imb_p2p_pingping.c), read as such.
//
// What each block becomes (one row per size, an average over #repetitions, repetition 0):
//   - PingPong (2 processes): t[usec] is half the round trip: a p2p_sweep transfer.
//   - PingPing (2 processes): both ranks MPI_Isend to each other and MPI_Recv at once
//     (IMB_pingping.c): an exchange_calibration pattern, one flow each way.
//   - Sendrecv (IMB_sendrecv.c): rank i sends to i+1 and receives from i−1 (mod P) in one
//     MPI_Sendrecv. On 2 processes both are the same peer: exchange_calibration, one flow
//     each way; on 3 or more a directed cycle of P flows: cycle_calibration.
//   - Exchange (IMB_exchange.c): rank i sends to both neighbours i+1 and i−1 and receives from
//     both. On 2 processes both neighbours are the one peer, so each rank sends it two
//     messages: exchange_calibration, two flows each way; on 3 or more the ring in both
//     directions, 2P flows: cycle_calibration.
//   - Alltoall, Allgather, Bcast, Scatter, Gather: collectives rows (op in lower case, procs =
//     P, bytes = IMB's size, which is MPI's count of bytes per process and peer — each block of
//     an all-to-all, all-gather, scatter or gather — and bcast's whole message; seconds =
//     t_max). The root is the node of the block's rank 0: IMB 2017 and later keep the root at
//     rank 0 unless run with -root_shift on; older versions, and -root_shift on, move it to
//     the next rank at every iteration, and such blocks of Bcast, Scatter and Gather are
//     refused (their time has no one root). All-to-all and all-gather have no root: rank 0.
//   - Under -multi, a block of N groups of P processes runs them at once: group g is the
//     ranks its "Group g:" line lists. Multi-PingPing, Multi-Sendrecv and Multi-Exchange
//     under -multi 0 (one row per size, t_max over every group's ranks) become one pattern
//     of every group's flows: exchange_calibration for groups of 2, cycle_calibration for
//     more, pattern "IMB-MPI1/Multi-Sendrecv/a<>b,c<>d:1024". Under -multi 1 (a row per
//     group, each its own time) and for the other benchmarks (ping-pongs or collectives at
//     once) no table holds them.
//   - Every other block (Barrier, Allreduce, Reduce, Uniband, IMB-P2P's pairs on more than 2
//     processes, the Multi- blocks above, …) has no table and is left out with a note. A file
//     with nothing but such blocks is refused.
func readIMB(r *textReader, lines []textLine) (*textOut, error) {
	h := readIMBHead(lines)
	p := &imbParser{r: r, o: newTextOut(h.tool()), head: h}
	for _, l := range lines {
		if err := p.line(l); err != nil {
			return nil, err
		}
	}
	return p.finish()
}

// imbHead is what an IMB output's header says: its suite and version, and the flags of its
// calling sequence that change what a block means.
type imbHead struct {
	suite, version string
	// year is the version's first number (2021 for "2021.11", 4 for "4.1"), 0 when the header
	// names no version.
	year int
	// rootShift and sync are the values given to -root_shift and -sync ("" when not given).
	rootShift, sync string
}

func (h imbHead) tool() string {
	if h.version == "" {
		return h.suite
	}
	return h.suite + " " + h.version
}

// rotatingRoot says why the root of Bcast, Scatter and Gather moves from rank to rank
// (IMB_bcast.c: root = (root + root_shift) % P after each iteration), or "" when it stays at
// rank 0: -root_shift on, or a version before IMB 2017, which moved it by default (the option
// came in IMB 4.1, its default turned off in IMB 2017, ReadMe_IMB.txt).
func (h imbHead) rotatingRoot() string {
	switch {
	case imbOn(h.rootShift):
		return "run with -root_shift " + h.rootShift
	case h.rootShift != "":
		return ""
	case h.year == 0:
		return "the file has no IMB header naming its version, and IMB before 2017 moved the root by default"
	case h.year < 2017:
		return fmt.Sprintf("IMB %s moves it by default", h.version)
	}
	return ""
}

// unsynced reports whether the collectives ran without a barrier between iterations (-sync
// off, the default before IMB 2017).
func (h imbHead) unsynced() bool {
	if h.sync != "" {
		return !imbOn(h.sync)
	}
	return h.year > 0 && h.year < 2017
}

// imbOn reads an IMB boolean option's value (args_parser.cpp: on, yes, true, enable, 1).
func imbOn(v string) bool {
	switch strings.ToLower(v) {
	case "on", "yes", "true", "enable", "1":
		return true
	}
	return false
}

// readIMBHead reads the header before the first block: the version line and the calling
// sequence (one "# …" line since IMB 2019, wrapped over several before).
func readIMBHead(lines []textLine) imbHead {
	h := imbHead{suite: "IMB-MPI1"}
	// calling is 1 after "Calling sequence was", 2 on its lines (up to the next blank line).
	calling := 0
	var args []string
	for _, l := range lines {
		text := strings.TrimSpace(l.text)
		if imbBenchmark.MatchString(text) {
			break
		}
		if m := imbVersion.FindStringSubmatch(text); m != nil && h.version == "" {
			h.version = bounded(strings.Join(strings.Fields(m[1]), " "))
			h.year, _ = strconv.Atoi(imbYear.FindString(m[1]))
			if s, ok := imbSuites[m[2]]; ok {
				h.suite = s
			}
			continue
		}
		switch {
		case strings.Contains(text, "Calling sequence was"):
			calling = 1
		case calling > 0 && strings.HasPrefix(text, "#"):
			calling = 2
			args = append(args, strings.Fields(strings.TrimPrefix(text, "#"))...)
		case calling == 2:
			calling = 0
		}
	}
	for i := 0; i+1 < len(args); i++ {
		switch args[i] {
		case "-root_shift":
			h.rootShift = bounded(args[i+1])
		case "-sync":
			h.sync = bounded(args[i+1])
		}
	}
	return h
}

// imbBlock is one "# Benchmarking NAME" block of an IMB output.
type imbBlock struct {
	name   string
	line   int64
	procs  int64 // "#processes = N", or the processes of each group under -multi
	groups int64 // "( N groups of M processes each running simultaneous )" under -multi
	// world is the MPI_COMM_WORLD rank of each of the block's ranks, read while inOrder holds
	// from the lines after -map's "rank order (rowwise):" or after -multi's groups line (the
	// ranks of group 0, then of group 1, …); nil when the block lists none.
	world   []int64
	listed  map[int64]bool // the ranks of world
	inOrder bool
	cols    []string
	// sizeCol and groupCol are the columns of #bytes (-1 in Barrier's table, which has no
	// size) and of -multi 1's Group (-1 without).
	sizeCol, groupCol int
	sizes             map[string]*sizeOrder // by group
	iters             counts
	lines             int      // rows, measured or not
	failed            []string // sizes IMB did not measure: "1048576 B (time-out)"
	rows              int
	zeros             int
	// kind is what the block becomes (imbKinds), "" when no table holds it; nodes are the
	// nodes of its ranks (block rank order), settled at its first row.
	kind    string
	kindSet bool
	nodes   []string
}

// what names the block for notes and the list of blocks left out.
func (b *imbBlock) what() string {
	if b.groups > 0 {
		return fmt.Sprintf("%s on %d groups of %d processes", b.name, b.groups, b.procs)
	}
	return fmt.Sprintf("%s on %d processes", b.name, b.procs)
}

// imbParser is what readIMB has read so far: the blocks, the one being read, and the blocks
// that no table holds.
type imbParser struct {
	r       *textReader
	o       *textOut
	head    imbHead
	b       *imbBlock // the block being read
	blocks  []*imbBlock
	skipped []string // "NAME on N processes"
}

// line reads one line: a block's start, its process count (or -multi's groups), -map's rank
// order, its column header, a comment, or a row. Lines before the first block are the file's
// header.
func (p *imbParser) line(l textLine) error {
	text := strings.TrimSpace(l.text)
	if m := imbBenchmark.FindStringSubmatch(text); m != nil {
		if err := p.endBlock(l.n); err != nil {
			return err
		}
		p.b = &imbBlock{name: bounded(m[1]), line: l.n, sizeCol: -1, groupCol: -1, sizes: map[string]*sizeOrder{}}
		p.blocks = append(p.blocks, p.b)
		return nil
	}
	if p.b == nil || text == "" {
		return nil // the header before the first block
	}
	if m := imbProcs.FindStringSubmatch(text); m != nil {
		p.b.inOrder = strings.Contains(text, "rank order")
		return p.procs(l.n, "#processes", m[1])
	}
	if m := imbGroups.FindStringSubmatch(text); m != nil {
		groups, err := p.r.parseCount(l.n, "groups", m[1])
		if err != nil {
			return err
		}
		p.b.groups, p.b.inOrder = groups, true
		return p.procs(l.n, "processes", m[2])
	}
	switch {
	case imbHeader(text):
		p.b.inOrder = false
		p.header(text)
		return nil
	case p.b.inOrder && strings.HasPrefix(text, "#-"):
		p.b.inOrder = false
		return nil
	case p.b.inOrder:
		return p.rankOrder(l.n, text)
	case strings.HasPrefix(text, "#"):
		return nil
	}
	if err := p.r.whole(l); err != nil {
		return err
	}
	return p.row(l.n, text)
}

// procs reads the block's process count; a second line giving another count contradicts the
// first.
func (p *imbParser) procs(n int64, column, s string) error {
	procs, err := p.r.parseCount(n, column, s)
	if err != nil {
		return err
	}
	if b := p.b; b.procs != 0 && procs != b.procs {
		return p.r.errAt(n, column, ErrCorrupt, "%d processes in block %s (line %d), which said %d", procs, b.name, b.line, b.procs)
	}
	p.b.procs = procs
	return nil
}

// rankOrder reads a line of -map's rank order or of -multi's groups ("# Group  1:     2    3"):
// the MPI_COMM_WORLD ranks of the block's next ranks. IMB shortens a list of more than 1024
// ranks or groups with " ... " or "  . ", which leaves the ranks unknown.
func (p *imbParser) rankOrder(n int64, text string) error {
	b := p.b
	text = strings.TrimSpace(strings.TrimPrefix(text, "#"))
	if m := imbGroupRanks.FindStringSubmatch(text); m != nil {
		text = m[1]
	}
	for _, f := range strings.Fields(text) {
		if f == "..." || f == "." {
			return p.r.errAt(n, "", ErrUnsupported, "%s %s: its list of ranks is cut short (%s), so the nodes of its ranks are unknown; re-run with fewer processes, or without -map and -multi",
				p.o.tool, b.what(), quote(text))
		}
		w, err := p.r.parseIndex(n, "rank", "a rank", f)
		if err != nil {
			return err
		}
		if b.listed[w] {
			return p.r.errAt(n, "rank", ErrDuplicateKey, "rank %d twice in the ranks of block %s (line %d)", w, b.name, b.line)
		}
		if b.listed == nil {
			b.listed = map[int64]bool{}
		}
		b.listed[w] = true
		b.world = append(b.world, w)
	}
	return nil
}

// imbHeader reports whether a line is a block's column header: "#bytes #repetitions …", or
// "#repetitions t_min[usec] …" (Barrier, which has no size), after -multi 1's "Group".
func imbHeader(text string) bool {
	f := strings.Fields(text)
	if len(f) > 0 && f[0] == "Group" {
		f = f[1:]
	}
	return len(f) > 0 && (f[0] == "#bytes" || f[0] == "#repetitions")
}

// header reads the current block's column header.
func (p *imbParser) header(text string) {
	b := p.b
	b.cols = strings.Fields(text)
	b.sizeCol, b.groupCol = findColumn(b.cols, "#bytes"), findColumn(b.cols, "Group")
}

// endBlock refuses the current block if it has no rows, at the line where the next begins
// (0: the end of the file).
func (p *imbParser) endBlock(at int64) error {
	if b := p.b; b != nil && b.lines == 0 {
		return p.r.errNoRows(at, fmt.Sprintf("IMB block %s (line %d)", b.name, b.line))
	}
	return nil
}

// row reads a data row of the current block, or a size IMB did not measure. A block that no
// table holds (see readIMB) is recorded as skipped once its row is checked.
func (p *imbParser) row(n int64, text string) error {
	b := p.b
	if b.cols == nil {
		return p.r.errAt(n, "", ErrMissingColumn, "a data row of block %s (line %d) before its #bytes header line", b.name, b.line)
	}
	if b.procs == 0 {
		return p.r.errAt(n, "#processes", ErrMissingColumn, `block %s (line %d) has no "#processes = N" line`, b.name, b.line)
	}
	b.lines++
	f := strings.Fields(text)
	if i := slices.IndexFunc(f, isIMBFailure); i > 0 {
		return p.failure(n, f[i-1], f[i])
	}
	if len(f) != len(b.cols) {
		return p.r.errAt(n, "", ErrRaggedRow, "%d fields, but block %s names %d columns (%s)", len(f), b.name, len(b.cols), strings.Join(b.cols, " "))
	}
	size, err := p.size(n, f)
	if err != nil {
		return err
	}
	if c := findColumn(b.cols, "#repetitions"); c >= 0 {
		if err := p.r.addCount(&b.iters, n, "#repetitions", f[c]); err != nil {
			return err
		}
	}
	if err := p.figures(n, f); err != nil {
		return err
	}
	if !b.kindSet {
		b.kind, b.kindSet = p.kindOf(b), true
	}
	if b.kind == "" {
		p.skipped = appendNew(p.skipped, b.what())
		return nil
	}
	if size < 0 {
		return p.r.errAt(n, "#bytes", ErrMissingColumn, "block %s (line %d) has no #bytes column", b.name, b.line)
	}
	secs, err := p.time(n, f)
	if err != nil {
		return err
	}
	if b.nodes == nil {
		if b.nodes, err = p.nodes(b); err != nil {
			return err
		}
	}
	return p.add(n, size, secs)
}

// kindOf returns what a block becomes (imbKinds), or "" for a block that no table holds:
// a benchmark without one; under -multi, groups running at once other than PingPing's,
// Sendrecv's and Exchange's, or rows per group (-multi 1); IMB-P2P's pairs of ranks i and
// i + P/2 all at once on more than 2 processes; a point-to-point benchmark on other than 2
// processes.
func (p *imbParser) kindOf(b *imbBlock) string {
	kind := imbKinds[strings.TrimPrefix(b.name, "Multi-")]
	switch {
	case p.head.suite != "IMB-MPI1" && p.head.suite != "IMB-P2P", b.procs < 2:
		return ""
	case b.groups > 0 && (b.groupCol >= 0 || kind != "pingping" && kind != "sendrecv" && kind != "exchange"):
		return ""
	case p.head.suite == "IMB-P2P" && (kind != "pingpong" && kind != "pingping" || b.procs != 2):
		return ""
	case (kind == "pingpong" || kind == "pingping") && b.procs != 2:
		return ""
	}
	return kind
}

// size reads a row's size (-1 in a table without sizes) and checks it against the sizes of
// the block (of its group under -multi 1): IMB measures each size of its list once.
func (p *imbParser) size(n int64, f []string) (int64, error) {
	b := p.b
	if b.sizeCol < 0 {
		return -1, nil
	}
	size, err := p.r.parseSize(n, "#bytes", f[b.sizeCol])
	if err != nil {
		return 0, err
	}
	group := ""
	if b.groupCol >= 0 {
		group = f[b.groupCol]
	}
	order := b.sizes[group]
	if order == nil {
		order = newSizeOrder(sizesOnce, fmt.Sprintf("block %s (line %d)", b.name, b.line),
			"IMB measures each size of its list once per block (-msglog's powers of two, or -msglen's sizes in the file's order)")
		b.sizes[group] = order
	}
	return size, order.add(p.r, n, "#bytes", size)
}

// figures checks the columns of a row that are not stored (t_min, Mbytes/sec, …): each a
// number ≥ 0, as IMB prints them.
func (p *imbParser) figures(n int64, f []string) error {
	for i, c := range p.b.cols {
		if c == "#bytes" || c == "#repetitions" || c == "Group" {
			continue
		}
		if err := p.r.parseFigure(n, c, f[i]); err != nil {
			return err
		}
	}
	return nil
}

// isIMBFailure reports whether a field starts what IMB prints instead of the figures of a size
// it did not measure (IMB_display_times).
func isIMBFailure(field string) bool {
	return strings.HasPrefix(field, "time-out.") || strings.HasPrefix(field, "out-of-mem.") || strings.HasPrefix(field, "int-overflow;")
}

// failure records a size that IMB did not measure (out of time or memory, or an int overflow):
// it has no figures and is left out, with a note.
func (p *imbParser) failure(n int64, sizeField, reason string) error {
	size, err := p.r.parseSize(n, "#bytes", sizeField)
	if err != nil {
		return err
	}
	reason = strings.TrimRight(reason, ".;")
	p.b.failed = append(p.b.failed, fmt.Sprintf("%d B (%s)", size, reason))
	return nil
}

// time reads a row's time in seconds: t_max, or t[usec] where the benchmark prints one time
// (see readIMB).
func (p *imbParser) time(n int64, f []string) (float64, error) {
	want := []string{"t_max[usec]", "t[usec]"}
	c := findColumn(p.b.cols, want...)
	if c < 0 {
		return 0, p.r.errAt(n, want[0], ErrMissingColumn, "block %s (line %d) has no %s column", p.b.name, p.b.line, strings.Join(want, " or "))
	}
	return p.r.parseMicros(n, p.b.cols[c], "time in µs", f[c])
}

// nodes returns the node of each rank of a block, in the block's rank order: --ranks (through
// -map's rank order when the block has one), or --src and --dst for 2 processes. A collective
// needs only its rank 0, the root: --src names it when --ranks is not given. It refuses a
// root that moves, and ranks placed other than as the block's design needs (textReader.place:
// two ranks of a transfer or a collective on one node, whose messages do not cross the
// network; a ring whose nodes repeat).
func (p *imbParser) nodes(b *imbBlock) ([]string, error) {
	what := p.o.tool + " " + b.name
	if b.procs > imbMaxRanks/max(b.groups, 1) {
		return nil, inputErr(Location{File: p.r.path, Line: b.line}, "", ErrUnsupported,
			"%s %s: more than %d ranks, beyond what a cluster description holds", p.o.tool, b.what(), imbMaxRanks)
	}
	total := int(b.procs * max(b.groups, 1))
	if b.world != nil && len(b.world) != total {
		return nil, inputErr(Location{File: p.r.path, Line: b.line}, "", ErrCorrupt,
			"block %s lists %d ranks for %s", b.name, len(b.world), b.what())
	}
	if slices.Contains(imbRooted, b.kind) {
		if why := p.head.rotatingRoot(); why != "" {
			return nil, inputErr(Location{File: p.r.path, Line: b.line}, "", ErrUnsupported,
				"%s on %d processes: the root moves from rank to rank at every iteration (%s), so its time has no one root; re-run with -root_shift off (the default since IMB 2017), or delete the rooted collectives' blocks (Bcast, Scatter, Gather) to ingest the rest",
				what, b.procs, why)
		}
	}
	if slices.Contains(CollectiveOps, b.kind) && len(p.r.ranks) == 0 && (b.world == nil || b.world[0] == 0) {
		if p.r.src == "" {
			return nil, inputErr(Location{File: p.r.path}, "", ErrUnsupported,
				"%s output of %d processes does not name the node of its rank 0, the root; give it (--src), or every rank's (--ranks: one node per rank, in rank order)", what, b.procs)
		}
		return []string{p.r.src}, nil
	}
	world := b.world
	if world == nil {
		world = make([]int64, total)
		for i := range world {
			world[i] = int64(i)
		}
	}
	if top := slices.Max(world); top >= imbMaxRanks {
		return nil, inputErr(Location{File: p.r.path, Line: b.line}, "", ErrUnsupported,
			"%s %s: rank %d, beyond what a cluster description holds", p.o.tool, b.what(), top)
	}
	all, err := p.r.rankNodes(what, int(slices.Max(world))+1)
	if err != nil {
		return nil, err
	}
	nodes := make([]string, len(world))
	for i, w := range world {
		nodes[i] = all[w]
	}
	d, groups := b.placement(world)
	if _, err := p.r.place(b.line, p.o.tool+" "+b.what(), d, groups, all); err != nil {
		return nil, err
	}
	return nodes, nil
}

// placement returns the design of a block's ranks and their groups, as MPI_COMM_WORLD ranks
// (world: those of the block's ranks, in block order), for textReader.place: a collective's
// ranks; PingPong's pair; on 2 processes, each group's exchange; on more, each group's ring.
func (b *imbBlock) placement(world []int64) (design, [][]int) {
	ranks := make([]int, len(world))
	for i, w := range world {
		ranks[i] = int(w)
	}
	switch {
	case slices.Contains(CollectiveOps, b.kind):
		return designCollective, [][]int{ranks}
	case b.kind == "pingpong":
		return designPairs, [][]int{ranks[:2]}
	}
	groups := slices.Collect(slices.Chunk(ranks, int(b.procs)))
	if b.procs == 2 {
		return designExchanges, groups
	}
	return designCycles, groups
}

// flows returns the flows of one iteration of a point-to-point block, as (sender, receiver)
// pairs of its ranks: those of imbFlows in each group, which run at once under -multi.
func (b *imbBlock) flows() [][2]int {
	procs := int(b.procs)
	var flows [][2]int
	for g := range max(int(b.groups), 1) {
		for _, f := range imbFlows(b.kind, procs) {
			flows = append(flows, [2]int{g*procs + f[0], g*procs + f[1]})
		}
	}
	return flows
}

// imbFlows returns the flows of one iteration of a point-to-point benchmark on procs ranks, as
// (sender, receiver) rank pairs in the block's rank order (see readIMB).
func imbFlows(kind string, procs int) [][2]int {
	var flows [][2]int
	switch {
	case kind == "pingpong":
		flows = [][2]int{{0, 1}}
	case kind == "pingping" || kind == "sendrecv" && procs == 2:
		flows = [][2]int{{0, 1}, {1, 0}}
	case kind == "exchange" && procs == 2:
		flows = [][2]int{{0, 1}, {0, 1}, {1, 0}, {1, 0}}
	case kind == "sendrecv":
		for i := range procs {
			flows = append(flows, [2]int{i, (i + 1) % procs})
		}
	case kind == "exchange":
		for i := range procs {
			flows = append(flows, [2]int{i, (i + 1) % procs}, [2]int{i, (i + procs - 1) % procs})
		}
	}
	return flows
}

// add appends a row of the current block as what its kind becomes (see readIMB). A
// collective keeps its 0-byte row; a transfer's is counted and left out.
func (p *imbParser) add(n, size int64, secs float64) error {
	b := p.b
	switch {
	case slices.Contains(CollectiveOps, b.kind):
		p.r.collective(p.o, n, b.kind, b.nodes[0], b.procs, size, secs)
	case size == 0:
		b.zeros++
		return nil
	case b.kind == "pingpong":
		p.o.bench = p.head.suite + "/" + b.name // "IMB-MPI1/PingPong/a>b:1024", as the other blocks' IDs
		p.r.sweep(p.o, n, b.nodes[0], b.nodes[1], size, secs)
	default:
		var flows [][2]string
		for _, f := range b.flows() {
			flows = append(flows, [2]string{b.nodes[f[0]], b.nodes[f[1]]})
		}
		p.r.concurrent(p.o, n, imbExperiment(int(b.procs)), imbPattern(p.head.suite, b.name, b.nodes, int(b.procs), size), flows, size, secs)
	}
	b.rows++
	return nil
}

// imbExperiment is the experiment of a Sendrecv, Exchange or PingPing block on procs
// processes: a same-peer exchange on 2, a directed cycle on more.
func imbExperiment(procs int) string {
	if procs == 2 {
		return experiments.ExchangeCalibration
	}
	return experiments.CycleCalibration
}

// imbPattern is the pattern ID of a row of a Sendrecv, Exchange or PingPing block: the suite
// and benchmark, so that no other tool's or benchmark's rows repeat it, then the nodes of
// each group of procs ranks — "IMB-MPI1/PingPing/a<>b:1024" on 2 processes,
// "IMB-MPI1/Sendrecv/ring(a,b,c):1024", the nodes in rank order, on more,
// "IMB-MPI1/Multi-PingPing/a<>b,c<>d:1024" for -multi's groups — and the size.
func imbPattern(suite, bench string, nodes []string, procs int, size int64) string {
	return fmt.Sprintf("%s/%s/%s:%d", suite, bench, imbNodesID(nodes, procs), size)
}

// imbNodesID names the nodes of each group of procs ranks for a pattern ID: "a<>b" for 2,
// "ring(a,b,c)" for more, joined by commas.
func imbNodesID(nodes []string, procs int) string {
	var groups []string
	for g := range slices.Chunk(nodes, procs) {
		if procs == 2 {
			groups = append(groups, g[0]+"<>"+g[1])
		} else {
			groups = append(groups, "ring("+strings.Join(g, ",")+")")
		}
	}
	return strings.Join(groups, ",")
}

// concurrent appends one repetition of a pattern of flows that start together, each of bytes
// and each taking seconds (flow IDs in the order given).
func (r *textReader) concurrent(o *textOut, line int64, exp, pattern string, flows [][2]string, bytes int64, seconds float64) {
	for i, f := range flows {
		o.transfers = append(o.transfers, Transfer{Cluster: r.cl.Name(), Experiment: exp, PatternID: pattern,
			FlowID: int64(i), Src: f[0], Dst: f[1], Bytes: bytes, TEnd: seconds})
		o.lines[TransfersTable] = append(o.lines[TransfersTable], line)
	}
}

// finish refuses an output without blocks or with none that a table holds, and notes what
// each block's rows are and which blocks were left out.
func (p *imbParser) finish() (*textOut, error) {
	o := p.o
	if len(p.blocks) == 0 {
		return nil, inputErr(Location{File: p.r.path}, "", ErrUnknownFormat, `no "# Benchmarking NAME" block: not an IMB-MPI1 output with results`)
	}
	if err := p.endBlock(0); err != nil {
		return nil, err
	}
	var failed []string
	for _, b := range p.blocks {
		if b.rows > 0 {
			o.note("%s %s (line %d, %d processes): %d sizes, %s, each an average over %s repetitions; µs read as 10⁻⁶ s",
				o.tool, b.name, b.line, b.procs, b.rows, p.rowsNote(b), b.iters)
		}
		if b.zeros > 0 {
			o.note("%s %s: the 0-byte row is left out (a transfer moves at least one byte)", o.tool, b.name)
		}
		if len(b.failed) > 0 {
			failed = append(failed, b.name+" "+strings.Join(b.failed, ", "))
			o.note("%s %s (line %d): sizes IMB did not measure, left out: %s", o.tool, b.name, b.line, strings.Join(b.failed, ", "))
		}
	}
	o.noteLeftOut(p.skipped)
	switch {
	case o.rows() > 0:
		return o, nil
	case len(p.skipped) > 0:
		return nil, inputErr(Location{File: p.r.path}, "", ErrUnsupported,
			"an %s output with only %s: none has a table; commcal reads IMB-MPI1's PingPong, PingPing, Sendrecv, Exchange, Alltoall, Allgather, Bcast, Scatter and Gather, and under -multi 0 PingPing's, Sendrecv's and Exchange's groups at once; re-run those benchmarks",
			p.head.suite, strings.Join(p.skipped, ", "))
	case len(failed) > 0:
		return nil, inputErr(Location{File: p.r.path}, "", ErrEmptyFile, "IMB measured no size above 0 bytes: %s", strings.Join(failed, "; "))
	}
	return nil, inputErr(Location{File: p.r.path}, "", ErrEmptyFile, "no rows with a message size above 0")
}

// rowsNote says, for a note, what the rows of a block are.
func (p *imbParser) rowsNote(b *imbBlock) string {
	tmax := "t_max, its slowest rank's time"
	switch {
	case p.head.suite == "IMB-P2P":
		tmax = "t[usec], IMB-P2P's mean over its ranks"
	case findColumn(b.cols, "t_max[usec]") < 0:
		tmax = "t[usec], its slower rank's time"
	}
	switch b.kind {
	case "pingpong":
		return fmt.Sprintf("p2p_sweep transfers from %s to %s of one-way time t[usec] (half the round trip)", b.nodes[0], b.nodes[1])
	case "pingping", "sendrecv", "exchange":
		procs := int(b.procs)
		how := map[string][2]string{
			"pingping": {"both ranks send at once", ""},
			"sendrecv": {"MPI_Sendrecv with one peer", "each rank sends to the next and receives from the one before at once"},
			"exchange": {"each rank sends its two neighbours, both the one peer", "each rank sends to both neighbours and receives from both at once"},
		}[b.kind][min(procs-2, 1)]
		if b.groups > 0 {
			how += fmt.Sprintf(", in %d groups at once (-multi)", b.groups)
		}
		return fmt.Sprintf("%s patterns %s (%s), %d flows each taking %s", imbExperiment(procs), imbNodesID(b.nodes, procs), how, len(b.flows()), tmax)
	}
	root := "root " + b.nodes[0] + ", the node of rank 0, where IMB keeps it"
	if !slices.Contains(imbRooted, b.kind) {
		root = "no root: rank 0's node " + b.nodes[0]
	}
	sync := ""
	if p.head.unsynced() {
		sync = "; run without a barrier between iterations (-sync off), so the operations overlapped"
	}
	return fmt.Sprintf("%s collectives of t_max (the slowest rank's time), %s, bytes as IMB's size%s", b.kind, root, sync)
}

var (
	imbBenchmark = regexp.MustCompile(`^#\s*Benchmarking\s+(\S+)`)
	imbProcs     = regexp.MustCompile(`^#\s*#processes\s*=\s*([0-9]+)`)
	imbGroups    = regexp.MustCompile(`^#\s*\(\s*([0-9]+)\s+groups\s+of\s+([0-9]+)\s+processes\b`)
	// imbGroupRanks is a group's line of ranks after the groups line, "#" taken off.
	imbGroupRanks = regexp.MustCompile(`^Group\s+[0-9]+:(.*)$`)
	// imbVersion matches the version line: "Intel(R) MPI Benchmarks 2021.11, MPI-1 part",
	// "Intel (R) MPI Benchmarks 2018 Update 1, MPI-1 part", "Intel (R) MPI Benchmark Suite
	// V3.2.4, MPI-1 part", "Intel(R) MPI Benchmarks 2021.7, IMB-P2P part".
	imbVersion = regexp.MustCompile(`Intel\s*\(R\)\s*MPI Benchmark(?:s| Suite)\s+V?([0-9][0-9.]*(?:\s+Update\s+[0-9]+)?)\s*,\s*(\S+)\s+part`)
	imbYear    = regexp.MustCompile(`^[0-9]+`)
	// imbSuites maps the part a version line names to the program that prints it.
	imbSuites = map[string]string{"MPI-1": "IMB-MPI1", "IMB-P2P": "IMB-P2P", "MPI-NBC": "IMB-NBC", "MPI-RMA": "IMB-RMA",
		"MPI-2": "IMB-EXT", "MPI-IO": "IMB-IO", "MPI-4": "IMB-MPI4", "RMA": "IMB-RMA"}
	// imbKinds maps the blocks that have a table to what they become: a point-to-point
	// benchmark (PingPong and PingPing with any source selection) or a collective op.
	imbKinds = map[string]string{"PingPong": "pingpong", "PingPongSpecificSource": "pingpong", "PingPongAnySource": "pingpong",
		"PingPing": "pingping", "PingPingSpecificSource": "pingping", "PingPingAnySource": "pingping",
		"Sendrecv": "sendrecv", "Exchange": "exchange", "Alltoall": "alltoall", "Allgather": "allgather",
		"Bcast": "bcast", "Scatter": "scatter", "Gather": "gather"}
	// imbMaxRanks bounds the ranks of a block (2²⁰: 16 per node of the largest cluster a
	// description holds, 65,536 nodes); more is a damaged file, refused before any list of
	// ranks is made.
	imbMaxRanks = int64(1 << 20)
	// imbRooted are the collectives that have a root.
	imbRooted = []string{"bcast", "scatter", "gather"}
)

// joinHead joins the first n lines, for version lines and content detection.
func joinHead(lines []textLine, n int) string {
	var b strings.Builder
	for _, l := range lines[:min(n, len(lines))] {
		b.WriteString(l.text)
		b.WriteByte('\n')
	}
	return b.String()
}

// looksIMB reports whether the head of a file is an IMB output.
func looksIMB(head string) bool {
	return imbVersionAnywhere.MatchString(head) || imbBenchmarkAnywhere.MatchString(head)
}

var (
	imbBenchmarkAnywhere = regexp.MustCompile(`(?m)^#\s*Benchmarking\s+\S+`)
	imbVersionAnywhere   = regexp.MustCompile(`Intel\s*\(R\)\s*MPI Benchmark`)
)
