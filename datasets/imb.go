package datasets

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Intel MPI Benchmarks (IMB-MPI1). An output is a header of "#" lines, then one block per
// benchmark and process count:
//
//	#---------------------------------------------------
//	# Benchmarking PingPong
//	# #processes = 2
//	#---------------------------------------------------
//	       #bytes #repetitions      t[usec]   Mbytes/sec
//	            0         1000         0.25         0.00
//
// A file holds several blocks (one per benchmark, and per "#processes = N" section when
// -npmin runs a benchmark at several process counts). Columns are found by name: t[usec] (the
// ping-pong benchmarks), t_min[usec] t_max[usec] t_avg[usec] (the others), #repetitions (the
// iterations each row averages). Times are µs; Mbytes/sec is not read (IMB 2021 divides by
// 10⁶, older versions by 2²⁰). IMB-P2P prints the same blocks (with a Msg/sec column).
//
// Structure (IMB_output.c): a block is its "# Benchmarking" line, its process count — or under
// -multi, "# Benchmarking Multi-NAME" and "( N groups of M processes each running
// simultaneous )" —, a column header ("#bytes …"; Barrier's "#repetitions …" has no size;
// -multi 1 puts a Group column first) and one row per size of IMB's list, each size once (the
// powers of two of -msglog, or -msglen's file in its order). A size IMB could not measure is
// printed as "SIZE time-out.; …", "out-of-mem.; …" or "int-overflow; …": left out with a
// note. A block that ends before its first row is a run that was killed or cut: refused. Every
// figure of a row, read or not, is a number ≥ 0.
//
// What each block becomes (rank 0 on --src; one row per size, an average, repetition 0):
//   - PingPong (2 processes): t[usec] is half the round trip, a one-way time: a p2p_sweep
//     transfer.
//   - PingPing (2 processes): both ranks send at once and t[usec] is the time of a message
//     that meets an oncoming one: a bidir_nic pattern (bidir_backbone across racks), one flow
//     each way, each taking t.
//   - Sendrecv on 2 processes: each rank sends to and receives from the other in one call:
//     one flow each way. Exchange on 2 processes: each rank sends two messages to the other
//     (its left and right neighbours are the same rank): two flows each way. The flows take
//     t_avg (IMB does not say which rank took t_min and which t_max; its Mbytes/sec uses
//     t_max). On more processes these run around a ring of nodes the file does not name, and
//     are left out with a note.
//   - Scatter, Gather: collectives rows (op scatter / gather, procs = #processes, bytes per
//     process, seconds = t_max: the collective is done when its last process is). IMB moves
//     the root from rank to rank between iterations; the rows name --src as the root.
//   - Every other block (Alltoall, Bcast, Allreduce, Barrier, Multi-… of -multi: groups
//     running at once on nodes the file does not name, …) has no table and is left out with a
//     note. A file with nothing but such blocks is refused.
func readIMB(r *textReader, lines []textLine) (*textOut, error) {
	head := joinHead(lines, 20)
	suite := "IMB-MPI1"
	if strings.Contains(head, "IMB-P2P part") {
		suite = "IMB-P2P"
	}
	p := &imbParser{r: r, o: newTextOut(suite)}
	if m := imbVersion.FindStringSubmatch(head); m != nil {
		p.o.tool += " " + bounded(m[1])
	}
	for _, l := range lines {
		if err := p.line(l); err != nil {
			return nil, err
		}
	}
	return p.finish()
}

// imbBlock is one "# Benchmarking NAME" block of an IMB output.
type imbBlock struct {
	name   string
	line   int64
	procs  int64 // "#processes = N", or the processes of each group under -multi
	groups int64 // "( N groups of M processes each running simultaneous )" under -multi
	cols   []string
	// sizeCol and groupCol are the columns of #bytes (-1 in Barrier's table, which has no
	// size) and of -multi 1's Group (-1 without).
	sizeCol, groupCol int
	sizes             map[string]*sizeOrder // by group
	iters             counts
	lines             int      // rows, measured or not
	failed            []string // sizes IMB did not measure: "1048576 B (time-out)"
	rows              int
	zeros             int
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
	r        *textReader
	o        *textOut
	b        *imbBlock // the block being read
	blocks   []*imbBlock
	skipped  []string // "NAME on N processes"
	src, dst string
}

// line reads one line: a block's start, its process count (or -multi's groups), its column
// header, a comment, or a row. Lines before the first block are the file's header.
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
		return p.procs(l.n, "#processes", m[1])
	}
	if m := imbGroups.FindStringSubmatch(text); m != nil {
		groups, err := p.r.parseCount(l.n, "groups", m[1])
		if err != nil {
			return err
		}
		p.b.groups = groups
		return p.procs(l.n, "processes", m[2])
	}
	switch {
	case imbHeader(text):
		p.header(text)
		return nil
	case strings.HasPrefix(text, "#"):
		return nil
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
	kind := imbKinds[b.name]
	if kind == "" || (kind != "scatter" && kind != "gather" && b.procs != 2) || b.groups > 0 {
		p.skipped = appendNew(p.skipped, b.what())
		return p.figures(n, f)
	}
	if size < 0 {
		return p.r.errAt(n, "#bytes", ErrMissingColumn, "block %s (line %d) has no #bytes column", b.name, b.line)
	}
	secs, err := p.time(n, kind, f)
	if err != nil {
		return err
	}
	if err := p.figures(n, f); err != nil {
		return err
	}
	if p.src, p.dst, err = p.r.nodes("an IMB "+b.name, nil); err != nil {
		return err
	}
	p.add(n, kind, size, secs)
	return nil
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
		if c == "#bytes" || c == "#repetitions" {
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

// time reads a row's time in seconds from its time column: t[usec] for the ping-pongs, else
// t_max (collectives) or t_avg.
func (p *imbParser) time(n int64, kind string, f []string) (float64, error) {
	want := []string{"t[usec]", "t_avg[usec]"}
	if kind == "scatter" || kind == "gather" {
		want = []string{"t_max[usec]", "t[usec]"}
	}
	c := findColumn(p.b.cols, want...)
	if c < 0 {
		return 0, p.r.errAt(n, want[0], ErrMissingColumn, "block %s (line %d) has no %s column", p.b.name, p.b.line, strings.Join(want, " or "))
	}
	return p.r.parseMicros(n, p.b.cols[c], "time in µs", f[c])
}

// add appends a row of the current block as what its kind becomes (see readIMB). A
// collective keeps its 0-byte row; a transfer's is counted and left out.
func (p *imbParser) add(n int64, kind string, size int64, secs float64) {
	b := p.b
	switch {
	case kind == "scatter" || kind == "gather":
		p.r.collective(p.o, n, kind, p.src, b.procs, size, secs)
	case size == 0:
		b.zeros++
		return
	case kind == "pingpong":
		p.r.sweep(p.o, n, p.src, p.dst, size, secs)
	case kind == "pingping" || kind == "sendrecv":
		p.r.bidir(p.o, n, p.src, p.dst, size, 1, secs)
	case kind == "exchange":
		p.r.bidir(p.o, n, p.src, p.dst, size, 2, secs)
	}
	b.rows++
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
				o.tool, b.name, b.line, b.procs, b.rows, imbRows(imbKinds[b.name], p.src), b.iters)
		}
		if b.rows > 0 && b.zeros > 0 {
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
			"an IMB output with only %s: none has a table; commcal reads PingPong, PingPing, Sendrecv and Exchange on 2 processes, and Scatter and Gather, run without -multi",
			strings.Join(p.skipped, ", "))
	case len(failed) > 0:
		return nil, inputErr(Location{File: p.r.path}, "", ErrEmptyFile, "IMB measured no size above 0 bytes: %s", strings.Join(failed, "; "))
	}
	return nil, inputErr(Location{File: p.r.path}, "", ErrEmptyFile, "no rows with a message size above 0")
}

// imbRows says, for a note, what the rows of a block of kind are; root is the collectives'
// root.
func imbRows(kind, root string) string {
	return map[string]string{
		"pingpong": "p2p_sweep transfers of one-way time t[usec] (half the round trip)",
		"pingping": "bidirectional transfers, one flow each way taking t[usec]",
		"sendrecv": "bidirectional transfers, one flow each way taking t_avg",
		"exchange": "bidirectional transfers, two flows each way taking t_avg",
		"scatter":  "scatter collectives of t_max (root " + root + " for IMB's rotating root)",
		"gather":   "gather collectives of t_max (root " + root + " for IMB's rotating root)",
	}[kind]
}

var (
	imbBenchmark = regexp.MustCompile(`^#\s*Benchmarking\s+(\S+)`)
	imbProcs     = regexp.MustCompile(`^#\s*#processes\s*=\s*([0-9]+)`)
	imbGroups    = regexp.MustCompile(`^#\s*\(\s*([0-9]+)\s+groups\s+of\s+([0-9]+)\s+processes\b`)
	imbVersion   = regexp.MustCompile(`Intel\(R\) MPI Benchmarks\s+([0-9][0-9.]*)`)
	// imbKinds maps the blocks that have a table to what they become.
	imbKinds = map[string]string{"PingPong": "pingpong", "PingPing": "pingping", "Sendrecv": "sendrecv",
		"Exchange": "exchange", "Scatter": "scatter", "Gather": "gather"}
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
	return strings.Contains(head, "Intel(R) MPI Benchmarks") || imbBenchmarkAnywhere.MatchString(head)
}

var imbBenchmarkAnywhere = regexp.MustCompile(`(?m)^#\s*Benchmarking\s+\S+`)
