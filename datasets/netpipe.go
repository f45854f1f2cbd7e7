package datasets

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// NetPIPE (3.x: NPtcp, NPmpi, NPopenmpi, …) writes two things:
//
//   - its output file (-o, np.out by default): one line per message size, "bytes Mbps
//     seconds" (extra columns, which some flags add, are not read);
//   - its standard output: "  3:       4 bytes   6634 times -->      3.17 Mbps in       9.61 usec",
//     after lines naming each rank's host ("0: node-a") and a few messages.
//
// Either becomes p2p_sweep transfers from rank 0 (--src, or its host when both hosts are nodes
// of the cluster) to rank 1: the time is NetPIPE's, half a round trip in its default
// ping-pong mode (with -s, streaming, it is the time per message of a stream; the output does
// not say which), the best of its trials, each a mean over "times" round trips. The time
// column is read, not the rate: NetPIPE's Mbps are 2²⁰ bits per second (1 byte in 5.86 µs
// prints 1.30 Mbps). Flags such as -I (invalidate the cache) and -r (reset sockets) change the
// measurement, not these lines. NetPIPE also measures sizes ±3 bytes around each power of two
// (-p 0 turns that off); each is a size of the sweep.
//
// Structure (netpipe.c's main loop): the standard output numbers its measurements 0, 1, 2, …
// in order (a number repeated or skipped is a damaged file; 0 again begins another run). The
// sweep's sizes increase, and with perturbation (-p P) each is measured P bytes below and
// above too, which can step back by up to 2P (or repeat) from one measurement to the next, but
// never below the size three measurements before: that is checked, in both outputs. A main
// loop without measurements is a run that stopped. Columns after the time (a variance, with
// some flags) are not read nor checked: NetPIPE prints them as they come, NaN included.
func readNetPIPE(r *textReader, lines []textLine) (*textOut, error) {
	p := &netpipeParser{r: r, o: newTextOut("NetPIPE"), hosts: map[string]string{}, index: -1}
	p.stdout = slices.ContainsFunc(lines, func(l textLine) bool {
		return strings.Contains(l.text, "-->") || strings.Contains(l.text, "Now starting the main loop")
	})
	for _, l := range lines {
		text := strings.TrimSpace(l.text)
		if text == "" {
			continue
		}
		if strings.Contains(text, "Now starting the main loop") && p.mainLoop == 0 {
			p.mainLoop = l.n
		}
		if err := p.line(l.n, text); err != nil {
			return nil, err
		}
	}
	if p.o.rows() == 0 {
		if p.mainLoop > 0 && p.measured == 0 {
			return nil, r.errNoRows(0, fmt.Sprintf("NetPIPE's main loop (line %d)", p.mainLoop))
		}
		return nil, inputErr(Location{File: r.path}, "", ErrEmptyFile, "no measurement lines with a message size above 0")
	}
	o := p.o
	if p.stdout {
		o.note("%s standard output: each row is NetPIPE's one-way time from %s to %s (half a round trip, the best of its trials of %s round trips each); µs read as 10⁻⁶ s", o.tool, p.src, p.dst, p.times)
	} else {
		o.note("%s output file: each row is NetPIPE's one-way time from %s to %s in seconds (half a round trip, the best of its trials; the file does not say how many round trips each)", o.tool, p.src, p.dst)
	}
	return o, nil
}

// netpipeParser is what readNetPIPE has read so far of NetPIPE's standard output (stdout) or
// output file.
type netpipeParser struct {
	r        *textReader
	o        *textOut
	stdout   bool
	hosts    map[string]string // rank → host, from standard output's "0: node-a" lines
	src, dst string
	times    counts
	mainLoop int64 // the line of "Now starting the main loop", or 0
	measured int   // measurement lines read
	index    int64 // the number of the last measurement of standard output, -1 before the first
	// recent are the sizes of the last three measurements of the run and their lines,
	// oldest first.
	recent [][2]int64
}

// line reads one non-blank line and adds its measurement, if it has one above 0 bytes.
func (p *netpipeParser) line(n int64, text string) error {
	var size int64
	var secs float64
	var ok bool
	var err error
	if p.stdout {
		size, secs, ok, err = p.stdoutLine(n, text)
	} else {
		size, secs, ok, err = p.fileLine(n, text)
	}
	if err != nil || !ok {
		return err
	}
	p.measured++
	if err := p.order(n, size); err != nil || size == 0 {
		return err
	}
	if p.src == "" {
		var named []string
		if p.hosts["0"] != "" && p.hosts["1"] != "" {
			named = []string{p.hosts["0"], p.hosts["1"]}
		}
		if p.src, p.dst, err = p.r.nodes("a NetPIPE", named); err != nil {
			return err
		}
	}
	p.r.sweep(p.o, n, p.src, p.dst, size, secs)
	return nil
}

// order checks a measurement's size against the size three measurements before it (see
// readNetPIPE).
func (p *netpipeParser) order(n, size int64) error {
	if len(p.recent) == 3 {
		if before := p.recent[0]; size <= before[0] {
			return p.r.errAt(n, "bytes", ErrNotIncreasing,
				"size %d B is not above %d B, the size three measurements before (line %d): NetPIPE's sizes increase (with -p P, each is also measured P bytes below and above, which never goes that far back)",
				size, before[0], before[1])
		}
		p.recent = p.recent[1:]
	}
	p.recent = append(p.recent, [2]int64{size, n})
	return nil
}

// number checks the number of a measurement of standard output: 0 first (and 0 again for
// another run), then each one more than the last.
func (p *netpipeParser) number(n int64, s string) error {
	i, err := p.r.parseIndex(n, "measurement", "a measurement number", s)
	switch {
	case err != nil:
		return err
	case i == 0:
		p.recent = nil // a run begins
	case i == p.index:
		return p.r.errAt(n, "measurement", ErrDuplicateKey, "measurement %d again: NetPIPE numbers its measurements 0, 1, 2, … once each", i)
	case i != p.index+1:
		after := "as the first measurement"
		if p.index >= 0 {
			after = fmt.Sprintf("after measurement %d", p.index)
		}
		return p.r.errAt(n, "measurement", ErrCorrupt, "measurement %d %s: NetPIPE numbers its measurements 0, 1, 2, … in order, so lines are missing or out of place", i, after)
	}
	p.index = i
	return nil
}

// stdoutLine reads a line of standard output: a rank's host, a message (ok false), or a
// measurement "N: BYTES bytes TIMES times --> RATE Mbps in TIME usec".
func (p *netpipeParser) stdoutLine(n int64, text string) (size int64, secs float64, ok bool, err error) {
	if m := netpipeHost.FindStringSubmatch(text); m != nil {
		p.hosts[m[1]] = m[2]
		return 0, 0, false, nil
	}
	if !strings.Contains(text, "-->") {
		return 0, 0, false, nil // "Now starting the main loop", "Sending output to …"
	}
	if strings.Contains(text, "Integrity check") {
		return 0, 0, false, p.r.errAt(n, "", ErrUnsupported, "NetPIPE's integrity check (-i) measures no time: run it without -i")
	}
	m := netpipeRow.FindStringSubmatch(text)
	if m == nil {
		return 0, 0, false, p.r.errAt(n, "", ErrWrongType, `%s: want "N: BYTES bytes TIMES times --> RATE Mbps in TIME usec"`, quote(text))
	}
	if err := p.number(n, m[1]); err != nil {
		return 0, 0, false, err
	}
	if size, err = p.r.parseSize(n, "bytes", m[2]); err != nil {
		return 0, 0, false, err
	}
	if err := p.r.addCount(&p.times, n, "times", m[3]); err != nil {
		return 0, 0, false, err
	}
	if secs, err = p.r.parseMicros(n, "usec", "time in µs", m[4]); err != nil {
		return 0, 0, false, err
	}
	return size, secs, true, nil
}

// fileLine reads a line of the output file: bytes, Mbps (checked, not kept), seconds.
func (p *netpipeParser) fileLine(n int64, text string) (size int64, secs float64, ok bool, err error) {
	f := strings.Fields(text)
	if len(f) < 3 {
		hint := ""
		if len(f) == 2 {
			hint = " (NetPIPE's integrity check, -i, writes bytes and repetitions: no time)"
		}
		return 0, 0, false, p.r.errAt(n, "", ErrRaggedRow, "%d fields, want 3: bytes, Mbps, seconds%s", len(f), hint)
	}
	if size, err = p.r.parseSize(n, "bytes", f[0]); err != nil {
		return 0, 0, false, err
	}
	if err := p.r.parseFigure(n, "Mbps", f[1]); err != nil {
		return 0, 0, false, err
	}
	if secs, err = p.r.parsePositive(n, "seconds", "time in seconds", f[2]); err != nil {
		return 0, 0, false, err
	}
	return size, secs, true, nil
}

var (
	netpipeRow  = regexp.MustCompile(`^([0-9]+):\s*([0-9]+)\s+bytes\s+([0-9]+)\s+times\s+-->\s+\S+\s+Mbps\s+in\s+(\S+)\s+usec`)
	netpipeHost = regexp.MustCompile(`^([0-9]+):\s+(\S+)$`)
	// netpipeStart is the start NetPIPE prints of each measurement line of its standard
	// output, whatever follows.
	netpipeStart = regexp.MustCompile(`^[0-9]+:\s*[0-9]+\s+bytes\s+[0-9]+\s+times\s+-->`)
	// netpipeNumber is a number as printf writes one, or NaN or infinity.
	netpipeNumber = regexp.MustCompile(`(?i)^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)(e[+-]?[0-9]+)?$|^[+-]?(nan|inf|infinity)$`)
)

// looksNetPIPE reports whether the head of a file is NetPIPE's standard output (a
// measurement line, or "Now starting the main loop", anywhere in it: NPtcp, NPmpi and mpirun
// print other lines before) or its output file: more lines of numbers, the first an integer,
// than other lines, so that a bad value or a stray line is reported by the adapter with its
// line rather than taken for another format.
func looksNetPIPE(lines []textLine) bool {
	rows, other := 0, 0
	for _, l := range lines[:min(len(lines), 40)] {
		text := strings.TrimSpace(l.text)
		switch {
		case text == "":
		case strings.Contains(text, "Now starting the main loop") || netpipeStart.MatchString(text):
			return true
		case netpipeFileLine(text):
			rows++
		case netpipeHost.MatchString(text) || strings.HasPrefix(text, "Sending output to"):
		default:
			other++
		}
	}
	return rows > other
}

// netpipeFileLine reports whether a line looks like one of NetPIPE's output file: three or
// more numbers, the first an integer (the size).
func netpipeFileLine(text string) bool {
	f := strings.Fields(text)
	if len(f) < 3 || !isInt(f[0]) {
		return false
	}
	for _, v := range f {
		if !netpipeNumber.MatchString(v) {
			return false
		}
	}
	return true
}
