package datasets

import (
	"regexp"
	"slices"
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
	o := newTextOut("SKaMPI")
	if m := skampiVersion.FindStringSubmatch(joinHead(lines, 40)); m != nil {
		o.tool += " " + m[1]
	}
	var (
		block, src, dst string
		used            []string // the Pingpong blocks read
		skipped         = map[string]int{}
		order           []string
		reps            counts
		zeros           int
	)
	for _, l := range lines {
		text := strings.TrimSpace(l.text)
		if m := skampiBegin.FindStringSubmatch(text); m != nil {
			block = m[1]
			continue
		}
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		rest, ok := strings.CutPrefix(text, "count=")
		if !ok {
			return nil, r.errAt(l.n, "", ErrWrongType, `%q is neither a comment nor a "count=" row`, truncate(text, 40))
		}
		if block == "" {
			return nil, r.errAt(l.n, "", ErrMissingColumn, `a "count=" row outside any "# begin result" block: cannot tell what it measured`)
		}
		if !strings.HasPrefix(block, "Pingpong") {
			if skipped[block] == 0 {
				order = append(order, block)
			}
			skipped[block]++
			continue
		}
		f := strings.Fields(rest)
		if len(f) < 5 {
			return nil, r.errAt(l.n, "", ErrRaggedRow, "%d values after count=, want at least 5 (count, bytes, time µs, standard error, repetitions)", len(f))
		}
		if _, err := r.parseSize(l.n, "count", f[0]); err != nil {
			return nil, err
		}
		size, err := r.parseSize(l.n, "bytes", f[1])
		if err != nil {
			return nil, err
		}
		us, err := r.parsePositive(l.n, "time", "round-trip time in µs", f[2])
		if err != nil {
			return nil, err
		}
		if _, err := r.parseFloat(l.n, "standard error", f[3]); err != nil {
			return nil, err
		}
		n, err := r.parseCount(l.n, "repetitions", f[4])
		if err != nil {
			return nil, err
		}
		reps.add(n)
		if size == 0 {
			zeros++
			continue
		}
		if src, dst, err = r.nodes("a SKaMPI "+block, nil); err != nil {
			return nil, err
		}
		if !slices.Contains(used, block) {
			used = append(used, block)
		}
		r.sweep(o, l.n, src, dst, size, us/2*1e-6)
	}
	if o.rows() == 0 {
		if len(order) > 0 {
			return nil, inputErr(Location{File: r.path}, "", ErrUnsupported,
				"a SKaMPI output of %s only: no table holds them; commcal reads the Pingpong_* measurements", strings.Join(order, ", "))
		}
		return nil, inputErr(Location{File: r.path}, "", ErrEmptyFile, `no "count=" rows with a message size above 0`)
	}
	o.note("%s %s: each row is half the measured round trip from %s to %s (one-way), a mean over %s repetitions; µs read as 10⁻⁶ s",
		o.tool, strings.Join(used, ", "), src, dst, reps)
	if len(order) > 0 {
		o.note("%s: left out, no table holds them: %s", o.tool, strings.Join(order, ", "))
	}
	if zeros > 0 {
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
