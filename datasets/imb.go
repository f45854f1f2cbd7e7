package datasets

import (
	"fmt"
	"regexp"
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
// 10⁶, older versions by 2²⁰).
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
//   - Every other block (Alltoall, Bcast, Allreduce, Multi-… of -multi, …) has no table and
//     is left out with a note. A file with nothing but such blocks is refused.
func readIMB(r *textReader, lines []textLine) (*textOut, error) {
	p := &imbParser{r: r, o: newTextOut("IMB-MPI1")}
	if m := imbVersion.FindStringSubmatch(joinHead(lines, 20)); m != nil {
		p.o.tool += " " + m[1]
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
	name  string
	line  int64
	procs int64
	cols  []string
	iters counts
	rows  int
	zeros int
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

// line reads one line: a block's start, its process count, its column header, a comment, or
// a data row. Lines before the first block are the file's header.
func (p *imbParser) line(l textLine) error {
	text := strings.TrimSpace(l.text)
	if m := imbBenchmark.FindStringSubmatch(text); m != nil {
		p.b = &imbBlock{name: m[1], line: l.n}
		p.blocks = append(p.blocks, p.b)
		return nil
	}
	if p.b == nil || text == "" {
		return nil // the header before the first block
	}
	if m := imbProcs.FindStringSubmatch(text); m != nil {
		n, err := p.r.parseCount(l.n, "#processes", m[1])
		if err != nil {
			return err
		}
		p.b.procs = n
		return nil
	}
	switch {
	case strings.HasPrefix(text, "#bytes"):
		p.b.cols = strings.Fields(text)
		return nil
	case strings.HasPrefix(text, "#"):
		return nil
	}
	return p.row(l.n, text)
}

// row reads a data row of the current block. A block that no table holds (see readIMB) is
// recorded as skipped once its row is checked.
func (p *imbParser) row(n int64, text string) error {
	b := p.b
	if b.cols == nil {
		return p.r.errAt(n, "", ErrMissingColumn, "a data row of block %s (line %d) before its #bytes header line", b.name, b.line)
	}
	if b.procs == 0 {
		return p.r.errAt(n, "#processes", ErrMissingColumn, `block %s (line %d) has no "#processes = N" line`, b.name, b.line)
	}
	f := strings.Fields(text)
	if len(f) != len(b.cols) {
		return p.r.errAt(n, "", ErrRaggedRow, "%d fields, but block %s names %d columns (%s)", len(f), b.name, len(b.cols), strings.Join(b.cols, " "))
	}
	size, err := p.r.parseSize(n, "#bytes", f[0])
	if err != nil {
		return err
	}
	if c := findColumn(b.cols, "#repetitions"); c >= 0 {
		if err := p.r.addCount(&b.iters, n, "#repetitions", f[c]); err != nil {
			return err
		}
	}
	kind := imbKinds[b.name]
	if kind == "" || (kind != "scatter" && kind != "gather" && b.procs != 2) {
		p.skipped = appendNew(p.skipped, fmt.Sprintf("%s on %d processes", b.name, b.procs))
		return nil
	}
	secs, err := p.time(n, kind, f)
	if err != nil {
		return err
	}
	if p.src, p.dst, err = p.r.nodes("an IMB "+b.name, nil); err != nil {
		return err
	}
	p.add(n, kind, size, secs)
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
	for _, b := range p.blocks {
		if b.rows == 0 {
			continue
		}
		o.note("%s %s (line %d, %d processes): %d sizes, %s, each an average over %s repetitions; µs read as 10⁻⁶ s",
			o.tool, b.name, b.line, b.procs, b.rows, imbRows(imbKinds[b.name], p.src), b.iters)
		if b.zeros > 0 {
			o.note("%s %s: the 0-byte row is left out (a transfer moves at least one byte)", o.tool, b.name)
		}
	}
	o.noteLeftOut(p.skipped)
	if o.rows() == 0 {
		return nil, inputErr(Location{File: p.r.path}, "", ErrUnsupported,
			"an IMB output with only %s: none has a table; commcal reads PingPong, PingPing, Sendrecv and Exchange on 2 processes, and Scatter and Gather",
			strings.Join(p.skipped, ", "))
	}
	return o, nil
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
