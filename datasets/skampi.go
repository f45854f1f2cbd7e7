package datasets

import (
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
// a row belongs to the last block begun). A row is "count=" then the element count, the
// message length in bytes, the measured time in µs (the mean over the repetitions), its
// standard error, the number of repetitions, and per-process values, which are not read.
//
// A Pingpong_* measurement (Pingpong_Send_Recv, Pingpong_Isend_Recv, …) times a whole round
// trip between rank 0 (--src) and rank 1 (--dst): half of it is the one-way time of a
// p2p_sweep transfer (on the griffon file, 144,965 µs for 8 MiB is 926 Mbit/s each way on
// Gigabit Ethernet only when halved). A size measured twice gives repetitions 0 and 1. Blocks
// of other measurements (collectives, one-sided) have no table and are left out with a note.
func readSKaMPI(r *textReader, lines []textLine) (*textOut, error) {
	p := &skampiParser{r: r, o: newTextOut("SKaMPI")}
	if m := skampiVersion.FindStringSubmatch(joinHead(lines, 40)); m != nil {
		p.o.tool += " " + m[1]
	}
	for _, l := range lines {
		if err := p.line(l); err != nil {
			return nil, err
		}
	}
	return p.finish()
}

// skampiParser is what readSKaMPI has read so far: the block being read, the Pingpong blocks
// read and the other blocks left out.
type skampiParser struct {
	r               *textReader
	o               *textOut
	block, src, dst string
	used            []string // the Pingpong blocks read
	skipped         []string // the other blocks, in the order first seen
	reps            counts
	zeros           int
}

// line reads one line: a block's start, a comment, or a "count=" row of the last block begun.
func (p *skampiParser) line(l textLine) error {
	text := strings.TrimSpace(l.text)
	if m := skampiBegin.FindStringSubmatch(text); m != nil {
		p.block = m[1]
		return nil
	}
	if text == "" || strings.HasPrefix(text, "#") {
		return nil
	}
	rest, ok := strings.CutPrefix(text, "count=")
	if !ok {
		return p.r.errAt(l.n, "", ErrWrongType, `%q is neither a comment nor a "count=" row`, truncate(text, 40))
	}
	if p.block == "" {
		return p.r.errAt(l.n, "", ErrMissingColumn, `a "count=" row outside any "# begin result" block: cannot tell what it measured`)
	}
	if !strings.HasPrefix(p.block, "Pingpong") {
		p.skipped = appendNew(p.skipped, p.block)
		return nil
	}
	return p.row(l.n, strings.Fields(rest))
}

// row reads the values of a Pingpong row (count, bytes, time µs, standard error,
// repetitions) and adds half its round trip as a p2p_sweep transfer; a 0-byte row is
// counted and left out.
func (p *skampiParser) row(n int64, f []string) error {
	if len(f) < 5 {
		return p.r.errAt(n, "", ErrRaggedRow, "%d values after count=, want at least 5 (count, bytes, time µs, standard error, repetitions)", len(f))
	}
	if _, err := p.r.parseSize(n, "count", f[0]); err != nil {
		return err
	}
	size, err := p.r.parseSize(n, "bytes", f[1])
	if err != nil {
		return err
	}
	us, err := p.r.parsePositive(n, "time", "round-trip time in µs", f[2])
	if err != nil {
		return err
	}
	if _, err := p.r.parseFloat(n, "standard error", f[3]); err != nil {
		return err
	}
	if err := p.r.addCount(&p.reps, n, "repetitions", f[4]); err != nil {
		return err
	}
	if size == 0 {
		p.zeros++
		return nil
	}
	if p.src, p.dst, err = p.r.nodes("a SKaMPI "+p.block, nil); err != nil {
		return err
	}
	p.used = appendNew(p.used, p.block)
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
	skampiVersion = regexp.MustCompile(`SKaMPI Version\s+(\S+)`)
	skampiRow     = regexp.MustCompile(`(?m)^count=\s*[0-9]`)
)

// looksSKaMPI reports whether the head of a file is a SKaMPI output.
func looksSKaMPI(head string) bool {
	return strings.Contains(head, "SKaMPI") || strings.Contains(head, "# begin result") || skampiRow.MatchString(head)
}

// truncate shortens s for a message.
func truncate(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
