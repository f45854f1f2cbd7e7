package datasets

import (
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
func readNetPIPE(r *textReader, lines []textLine) (*textOut, error) {
	p := &netpipeParser{r: r, o: newTextOut("NetPIPE"), hosts: map[string]string{}}
	p.stdout = slices.ContainsFunc(lines, func(l textLine) bool { return strings.Contains(l.text, "-->") })
	for _, l := range lines {
		text := strings.TrimSpace(l.text)
		if text == "" {
			continue
		}
		if err := p.line(l.n, text); err != nil {
			return nil, err
		}
	}
	if p.o.rows() == 0 {
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
	if err != nil || !ok || size == 0 {
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
	m := netpipeRow.FindStringSubmatch(text)
	if m == nil {
		return 0, 0, false, p.r.errAt(n, "", ErrWrongType, `%q: want "N: BYTES bytes TIMES times --> RATE Mbps in TIME usec"`, truncate(text, 60))
	}
	if size, err = p.r.parseSize(n, "bytes", m[1]); err != nil {
		return 0, 0, false, err
	}
	if err := p.r.addCount(&p.times, n, "times", m[2]); err != nil {
		return 0, 0, false, err
	}
	if secs, err = p.r.parseMicros(n, "usec", "time in µs", m[3]); err != nil {
		return 0, 0, false, err
	}
	return size, secs, true, nil
}

// fileLine reads a line of the output file: bytes, Mbps (checked, not kept), seconds.
func (p *netpipeParser) fileLine(n int64, text string) (size int64, secs float64, ok bool, err error) {
	f := strings.Fields(text)
	if len(f) < 3 {
		return 0, 0, false, p.r.errAt(n, "", ErrRaggedRow, "%d fields, want 3: bytes, Mbps, seconds", len(f))
	}
	if size, err = p.r.parseSize(n, "bytes", f[0]); err != nil {
		return 0, 0, false, err
	}
	if _, err := p.r.parseFloat(n, "Mbps", f[1]); err != nil {
		return 0, 0, false, err
	}
	if secs, err = p.r.parsePositive(n, "seconds", "time in seconds", f[2]); err != nil {
		return 0, 0, false, err
	}
	return size, secs, true, nil
}

var (
	netpipeRow  = regexp.MustCompile(`^[0-9]+:\s*([0-9]+)\s+bytes\s+([0-9]+)\s+times\s+-->\s+\S+\s+Mbps\s+in\s+(\S+)\s+usec`)
	netpipeHost = regexp.MustCompile(`^([0-9]+):\s+(\S+)$`)
	// netpipeFileRow is a line of NetPIPE's output file: bytes, Mbps, seconds.
	netpipeFileRow = regexp.MustCompile(`^\s*[0-9]+\s+[0-9.]+\s+[0-9.]+(e[-+]?[0-9]+)?(\s+\S+)*\s*$`)
)

// looksNetPIPE reports whether the head of a file is NetPIPE's standard output or output file.
func looksNetPIPE(lines []textLine) bool {
	n := 0
	for _, l := range lines[:min(len(lines), 20)] {
		text := strings.TrimSpace(l.text)
		switch {
		case text == "":
			continue
		case strings.Contains(text, "Now starting the main loop") || netpipeRow.MatchString(text):
			return true
		case netpipeFileRow.MatchString(text):
			n++
		default:
			if !netpipeHost.MatchString(text) && !strings.HasPrefix(text, "Sending output to") {
				return false
			}
		}
	}
	return n > 0
}
