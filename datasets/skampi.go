package datasets

import (
	"fmt"
	"regexp"
	"strings"
)

// SKaMPI (the Special Karlsruher MPI-Benchmark, 5.x) prints its measurements in blocks:
//
//	# begin result "Pingpong_Send_Recv"
//	count= 1        1     109.2       0.2       32     106.7     107.7
//	# end result "Pingpong_Send_Recv"
//
// (the .ski.dat files kept with SimGrid put the rows after the "end result" line; either way
// a row belongs to the last block begun). A row (measurement.c) is "NAME= VALUE" for each loop
// variable of the .ski script around the measurement ("count= 1" above; "iterations= 8"…),
// then the message length in bytes, the measured time in µs (the mean over the repetitions),
// its standard error, the number of repetitions, and per-process values ("---" for a process
// without one), which are not read.
//
// A Pingpong_* measurement (Pingpong_Send_Recv, Pingpong_Isend_Recv, …) times a whole round
// trip between rank 0 (--src) and rank 1 (--dst): half of it is the one-way time of a
// p2p_sweep transfer (on the griffon file, 144,965 µs for 8 MiB is 926 Mbit/s each way on
// Gigabit Ethernet only when halved). A size measured twice gives repetitions 0 and 1. Blocks
// of other measurements (collectives, one-sided) have no table and are left out with a note.
//
// Structure (parser.y): each "# begin result" is closed by the "# end result" of the same
// name before the next begins; a file that ends inside a block, or a Pingpong block without
// rows, is a run that stopped and is refused. SKaMPI prints a loop's rows in its order, or,
// when it refines the loop (step "..."), sorted by the loop variable (output.c), which can
// measure a size twice: the sizes of a Pingpong block run one way (for each value of the
// outer loops' variables). Every figure of a row is a number ≥ 0.
func readSKaMPI(r *textReader, lines []textLine) (*textOut, error) {
	p := &skampiParser{r: r, o: newTextOut("SKaMPI")}
	if m := skampiVersion.FindStringSubmatch(joinHead(lines, 40)); m != nil {
		p.o.tool += " " + bounded(m[1])
	}
	for _, l := range lines {
		if err := p.line(l); err != nil {
			return nil, err
		}
	}
	if err := p.endBlock(0); err != nil {
		return nil, err
	}
	return p.finish()
}

// skampiParser is what readSKaMPI has read so far: the block being read, the Pingpong blocks
// read and the other blocks left out.
type skampiParser struct {
	r               *textReader
	o               *textOut
	block, src, dst string
	blockLine       int64
	ended           bool                  // the block's "# end result" line was read
	blockRows       int                   // rows of the block
	sizes           map[string]*sizeOrder // of the block, by the outer loop variables' values
	used            []string              // the Pingpong blocks read
	skipped         []string              // the other blocks, in the order first seen
	reps            counts
	zeros           int
}

// line reads one line: a block's start or end, a comment, or a row of the last block begun.
func (p *skampiParser) line(l textLine) error {
	text := strings.TrimSpace(l.text)
	if m := skampiBegin.FindStringSubmatch(text); m != nil {
		if err := p.endBlock(l.n); err != nil {
			return err
		}
		p.block, p.blockLine, p.ended, p.blockRows, p.sizes = m[1], l.n, false, 0, map[string]*sizeOrder{}
		return nil
	}
	if m := skampiEnd.FindStringSubmatch(text); m != nil {
		return p.end(l.n, m[1])
	}
	if text == "" || strings.HasPrefix(text, "#") {
		return nil
	}
	if err := p.r.whole(l); err != nil {
		return err
	}
	loops, f := skampiLoops(strings.Fields(text))
	if len(loops) == 0 && (len(f) == 0 || !isInt(f[0])) {
		return p.r.errAt(l.n, "", ErrWrongType, `%s is neither a comment nor a row ("NAME= VALUE" per loop variable, then bytes, time, standard error, repetitions)`, quote(text))
	}
	if p.block == "" {
		return p.r.errAt(l.n, "", ErrMissingColumn, `a row outside any "# begin result" block: cannot tell what it measured`)
	}
	p.blockRows++
	return p.row(l.n, loops, f)
}

// end reads a block's "# end result NAME" line, which must close the block begun last.
func (p *skampiParser) end(n int64, name string) error {
	switch {
	case p.block == "":
		return p.r.errAt(n, "", ErrCorrupt, `"# end result" of %s without its "# begin result" line`, quote(name))
	case name != p.block || p.ended:
		return p.r.errAt(n, "", ErrCorrupt, `"# end result" of %s, but the block open is %s (line %d)%s`, quote(name), quote(p.block), p.blockLine,
			map[bool]string{true: ", already ended", false: ""}[p.ended])
	}
	p.ended = true
	return nil
}

// endBlock refuses the block being read if it was not ended, or is a Pingpong block without
// rows, at the line where the next block begins (0: the end of the file).
func (p *skampiParser) endBlock(at int64) error {
	what := fmt.Sprintf("SKaMPI block %s (line %d)", quote(p.block), p.blockLine)
	switch {
	case p.block == "":
	case strings.HasPrefix(p.block, "Pingpong") && p.blockRows == 0:
		return p.r.errNoRows(at, what)
	case !p.ended:
		where := "the end of the file"
		if at > 0 {
			where = fmt.Sprintf("line %d, where the next block begins", at)
		}
		return inputErr(Location{File: p.r.path}, "", ErrCorrupt, `%s has no "# end result" line before %s: the run stopped inside it, or the file was cut`, what, where)
	}
	return nil
}

// skampiLoops splits a row's fields into its loop variables ("count= 1": name, then value)
// and the rest.
func skampiLoops(f []string) (loops [][2]string, rest []string) {
	for len(f) >= 2 && skampiLoopVar.MatchString(f[0]) {
		loops = append(loops, [2]string{strings.TrimSuffix(f[0], "="), f[1]})
		f = f[2:]
	}
	return loops, f
}

// row reads a row's loop variables and values (bytes, time µs, standard error, repetitions,
// then per-process values). A Pingpong row adds half its round trip as a p2p_sweep transfer (a
// 0-byte row is counted and left out); the figures of another block's row are checked.
func (p *skampiParser) row(n int64, loops [][2]string, f []string) error {
	if len(f) < 4 {
		return p.r.errAt(n, "", ErrRaggedRow, "%d values after the loop variables, want at least 4 (bytes, time µs, standard error, repetitions)", len(f))
	}
	for _, lv := range loops {
		if _, err := p.r.parseFloat(n, lv[0], lv[1]); err != nil {
			return err
		}
	}
	size, err := p.r.parseSize(n, "bytes", f[0])
	if err != nil {
		return err
	}
	for i, v := range f[1:] {
		if i > 2 && v == "---" {
			continue // a process without a time of its own
		}
		if err := p.r.parseFigure(n, skampiColumn(i+1), v); err != nil {
			return err
		}
	}
	if !strings.HasPrefix(p.block, "Pingpong") {
		p.skipped = appendNew(p.skipped, bounded(p.block))
		return nil
	}
	return p.pingpong(n, loops, size, f)
}

// skampiColumn names the value at index i of a row (after its loop variables), for messages.
func skampiColumn(i int) string {
	if i < 4 {
		return []string{"bytes", "time", "standard error", "repetitions"}[i]
	}
	return fmt.Sprintf("process %d", i-4)
}

// pingpong adds a Pingpong row of size bytes (f: its values) as half its round trip, after
// checking its size against the block's order.
func (p *skampiParser) pingpong(n int64, loops [][2]string, size int64, f []string) error {
	outer := ""
	if len(loops) > 1 {
		outer = fmt.Sprint(loops[:len(loops)-1])
	}
	order := p.sizes[outer]
	if order == nil {
		order = newSizeOrder(sizesOneWay, fmt.Sprintf("block %s (line %d)", quote(p.block), p.blockLine),
			"SKaMPI prints a loop's rows in its order, or sorted when it refines the loop, so a block's sizes run one way")
		p.sizes[outer] = order
	}
	if err := order.add(p.r, n, "bytes", size); err != nil {
		return err
	}
	us, err := p.r.parsePositive(n, "time", "round-trip time in µs", f[1])
	if err != nil {
		return err
	}
	if err := p.r.addCount(&p.reps, n, "repetitions", f[3]); err != nil {
		return err
	}
	if size == 0 {
		p.zeros++
		return nil
	}
	if p.src, p.dst, err = p.r.nodes("SKaMPI "+bounded(p.block), nil); err != nil {
		return err
	}
	p.used = appendNew(p.used, bounded(p.block))
	p.r.sweep(p.o, n, p.src, p.dst, size, us/2*1e-6)
	return nil
}

// finish refuses an output without Pingpong rows above 0 bytes and notes what the rows are
// and which blocks were left out.
func (p *skampiParser) finish() (*textOut, error) {
	o := p.o
	if o.rows() == 0 {
		if len(p.skipped) > 0 {
			return nil, inputErr(Location{File: p.r.path}, "", ErrUnsupported,
				"a SKaMPI output of %s only: no table holds them; commcal reads the Pingpong_* measurements", strings.Join(p.skipped, ", "))
		}
		return nil, inputErr(Location{File: p.r.path}, "", ErrEmptyFile, `no "count=" rows with a message size above 0`)
	}
	o.note("%s %s: each row is half the measured round trip from %s to %s (one-way), a mean over %s repetitions; µs read as 10⁻⁶ s",
		o.tool, strings.Join(p.used, ", "), p.src, p.dst, p.reps)
	o.noteLeftOut(p.skipped)
	if p.zeros > 0 {
		o.note("%s: the 0-byte rows are left out (a transfer moves at least one byte)", o.tool)
	}
	return o, nil
}

var (
	skampiBegin   = regexp.MustCompile(`^#\s*begin result\s+"([^"]*)"`)
	skampiEnd     = regexp.MustCompile(`^#\s*end result\s+"([^"]*)"`)
	skampiLoopVar = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=$`)
	skampiVersion = regexp.MustCompile(`SKaMPI Version\s+(\S+)`)
	skampiRow     = regexp.MustCompile(`(?m)^count=\s*[0-9]`)
)

// looksSKaMPI reports whether the head of a file is a SKaMPI output.
func looksSKaMPI(head string) bool {
	return strings.Contains(head, "SKaMPI") || strings.Contains(head, "# begin result") || skampiRow.MatchString(head)
}
