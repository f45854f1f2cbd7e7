package datasets

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/commcal/commcal/experiments"
)

// NetPIPE (3.x: NPtcp, NPmpi, NPopenmpi, …) writes two things:
//
//   - its output file (-o, np.out by default): one line per message size, "bytes Mbps
//     seconds" (extra columns, which some flags add, are not read);
//   - its standard output: "  3:       4 bytes   6634 times -->      3.17 Mbps in       9.61 usec"
//     (on standard error, which a capture usually joins), after lines naming each rank's host
//     ("0: node-a") and messages, among them the mode: "Streaming in one direction only." for
//     -s, "Passing data in both directions simultaneously." for -2.
//
// What a row is depends on the mode (netpipe.c's main loop; each figure is the best of its
// trials, each the mean over "times" repetitions):
//   - default, ping-pong: rank 0 sends, the last rank sends the message back, and the time is
//     half the round trip: a p2p_sweep transfer from rank 0 to the last rank.
//   - -2, both directions at once: both ranks send a message and then receive the other's; the
//     time is one exchange, not halved, and its Mbps count both directions. Standard output
//     prints the size of one message; the output file writes twice that (bits·(1+bidir)/8).
//     Each row is an exchange_calibration pattern "NetPIPE -2/a<>b:bytes", one flow each way,
//     both taking the time.
//   - -s, streaming: rank 0 sends "times" messages back to back and the receiver's time over
//     their number is the time per message of a one-way stream, latency hidden: a p2p_sweep
//     transfer of pattern "NetPIPE -s/a>b:bytes", kept apart from the ping-pong's (as osu_bw).
//
// How the mode is told: standard output by its mode line; without one (standard error
// captured alone) by the rates, since a -2 line's Mbps is twice its one-way figure (a line
// whose rate is at least 1 Mbps and time at least 1 µs, so that printf's rounding stays
// under 1%, decides); a -2 line under the streaming line, or lines that disagree, are a
// damaged file. A -s run's lines look like a ping-pong's, so standard output without a mode
// line is read as the default ping-pong. The output file names no mode: its rows are read as
// the default ping-pong, except that a file whose every size is even, as -2 writes them, is
// refused (a ping-pong started at an even -l with an even -p writes such sizes too), and a
// -s run's file cannot be told at all: ingest the standard output of such runs.
//
// Nodes: --src and --dst; else, when standard output names the ranks' hosts ("0: host"),
// rank 0's and the last rank's nodes in --ranks, or these hosts when both are nodes of the
// cluster. Times: the time column is read, not the rate: NetPIPE's Mbps are 2²⁰ bits per
// second (1 byte in 5.86 µs prints 1.30 Mbps). Flags such as -I (invalidate the cache) and -r
// (reset sockets) change the measurement, not these lines.
// NetPIPE also measures sizes ±3 bytes around each power of two (-p 0 turns that off); each is
// a size of the sweep.
//
// Structure: the standard output numbers its measurements 0, 1, 2, … in order (a number
// repeated or skipped is a damaged file; 0 again begins another run). The sweep's sizes
// increase, and with perturbation (-p P) each is measured P bytes below and above too, which
// can step back by up to 2P (or repeat) from one measurement to the next, but never below the
// size three measurements before: that is checked, in both outputs. A main loop without
// measurements is a run that stopped. A last measurement line cut after "-->", or followed
// there by NetPIPE's error ("NetPIPE: read failed …"), is a run that stopped there: the sizes
// before are kept, with a note; a measurement after it is a damaged file. Any other line of
// figures without its line end was cut while written (textReader.whole) and is refused. Columns after the
// time (a variance, with some flags) are not read nor checked: NetPIPE prints them as they
// come, NaN included.
func readNetPIPE(r *textReader, lines []textLine) (*textOut, error) {
	p := &netpipeParser{r: r, hosts: map[int64]string{}, index: -1}
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
		if err := p.line(l, text); err != nil {
			return nil, err
		}
	}
	if len(p.meas) == 0 {
		if p.mainLoop > 0 && p.measured == 0 {
			return nil, r.errNoRows(0, fmt.Sprintf("NetPIPE's main loop (line %d)", p.mainLoop))
		}
		return nil, inputErr(Location{File: r.path}, "", ErrEmptyFile, "no measurement lines with a message size above 0")
	}
	mode, err := p.mode()
	if err != nil {
		return nil, err
	}
	tool := strings.TrimSpace("NetPIPE " + mode.flag)
	src, dst, err := p.nodes(tool)
	if err != nil {
		return nil, err
	}
	o := newTextOut(tool)
	for _, m := range p.meas {
		switch mode.flag {
		case "":
			r.sweep(o, m.line, src, dst, m.size, m.secs)
		case "-s":
			r.concurrent(o, m.line, experiments.P2PSweep, "NetPIPE -s/"+experiments.PairID(src, dst, m.size), [][2]string{{src, dst}}, m.size, m.secs)
		case "-2":
			r.concurrent(o, m.line, experiments.ExchangeCalibration, fmt.Sprintf("NetPIPE -2/%s<>%s:%d", src, dst, m.size), [][2]string{{src, dst}, {dst, src}}, m.size, m.secs)
		}
	}
	p.notes(o, mode, src, dst)
	return o, nil
}

// nodes returns the nodes of rank 0 and of the last rank, which measure (mpi.c's Setup):
// --src and --dst; else, when standard output names the ranks' hosts, --ranks' nodes of
// those ranks, or the hosts themselves when both are nodes of the cluster.
func (p *netpipeParser) nodes(tool string) (string, string, error) {
	r := p.r
	var named []string
	if len(p.hosts) > 0 {
		last := slices.Max(slices.Collect(maps.Keys(p.hosts)))
		if p.hosts[0] != "" && last > 0 && last < imbMaxRanks && len(r.ranks) > 0 && r.src == "" && r.dst == "" {
			ranks, err := r.rankNodes(tool, int(last)+1)
			if err != nil {
				return "", "", err
			}
			return ranks[0], ranks[last], nil
		}
		if p.hosts[0] != "" && last > 0 {
			named = []string{p.hosts[0], p.hosts[last]}
		}
	}
	return r.nodes(tool, named)
}

// netpipeMode is a NetPIPE run's mode: its flag ("" for the default ping-pong, "-2", "-s")
// and how it was told, for the note.
type netpipeMode struct{ flag, how string }

// mode tells the run's mode (see readNetPIPE), or refuses a file that cannot say it or whose
// lines contradict each other.
func (p *netpipeParser) mode() (netpipeMode, error) {
	if !p.stdout {
		if !slices.ContainsFunc(p.meas, func(m netpipeMeas) bool { return m.size%2 != 0 }) {
			return netpipeMode{}, inputErr(Location{File: p.r.path}, "", ErrUnsupported,
				"a NetPIPE output file whose every size is even (%d B, …): NetPIPE -2 (both directions at once) writes twice the message size, and the file does not record its mode; ingest the run's standard output, which names the mode and each message's size (a ping-pong started at an even size, -l, with an even -p, writes even sizes too: its standard output is read as such)",
				p.meas[0].size)
		}
		return netpipeMode{how: "the output file does not record NetPIPE's mode: read as the default ping-pong (a -s run writes the same columns: ingest a -s run's standard output instead)"}, nil
	}
	var one, two *netpipeMeas
	for i := range p.meas {
		m := &p.meas[i]
		if m.rate < 1 || m.secs < 1e-6 {
			continue
		}
		switch k := m.rate / (float64(m.size) * 8 / (m.secs * (1 << 20))); {
		case k > 0.95 && k < 1.05 && one == nil:
			one = m
		case k > 1.9 && k < 2.1 && two == nil:
			two = m
		}
	}
	if one != nil && two != nil {
		return netpipeMode{}, p.r.errAt(two.line, "Mbps", ErrCorrupt,
			"%g Mbps for %d B in %g µs counts two directions, but line %d's rate counts one: lines of two NetPIPE runs of different modes, or a damaged file",
			two.rate, two.size, two.secs*1e6, one.line)
	}
	switch {
	case p.modeLine == "-2" && one != nil:
		return netpipeMode{}, p.r.errAt(one.line, "Mbps", ErrCorrupt, "%g Mbps for %d B in %g µs counts one direction, but line %d says NetPIPE ran with -2, whose rates count both", one.rate, one.size, one.secs*1e6, p.modeAt)
	case p.modeLine == "-s" && two != nil:
		return netpipeMode{}, p.r.errAt(two.line, "Mbps", ErrCorrupt, "%g Mbps for %d B in %g µs counts two directions, but line %d says NetPIPE ran with -s, which streams one way", two.rate, two.size, two.secs*1e6, p.modeAt)
	case p.modeLine != "":
		return netpipeMode{flag: p.modeLine, how: fmt.Sprintf("its mode line (line %d)", p.modeAt)}, nil
	case two != nil:
		return netpipeMode{flag: "-2", how: fmt.Sprintf("its rates, which count both directions (line %d: %g Mbps for %d B in %g µs); the -2 line of standard output is missing", two.line, two.rate, two.size, two.secs*1e6)}, nil
	}
	return netpipeMode{how: "no -s or -2 line: the default ping-pong"}, nil
}

// notes says what the rows are, how the mode was told, and where a run stopped.
func (p *netpipeParser) notes(o *textOut, mode netpipeMode, src, dst string) {
	what := "output file"
	if p.stdout {
		what = "standard output"
	}
	trials := "the best of its trials"
	if p.stdout {
		each := map[string]string{"": "round trips", "-2": "exchanges", "-s": "messages"}[mode.flag]
		trials += fmt.Sprintf(" of %s %s each", p.times, each)
	}
	switch mode.flag {
	case "":
		o.note("%s %s: each row is NetPIPE's one-way time from %s to %s (half a round trip, %s); mode: %s", o.tool, what, src, dst, trials, mode.how)
	case "-2":
		o.note("%s %s: each row is an exchange_calibration pattern %s<>%s, one message each way at once, both taking NetPIPE's time of one exchange (not halved; %s); mode: %s", o.tool, what, src, dst, trials, mode.how)
	case "-s":
		o.note("%s %s: each row is NetPIPE's time per message of a one-way stream from %s to %s (the receiver's time over the messages, %s): p2p_sweep transfers, latency hidden; mode: %s", o.tool, what, src, dst, trials, mode.how)
	}
	if p.stdout {
		o.note("%s: µs read as 10⁻⁶ s", o.tool)
	}
	if p.stopped != "" {
		o.note("%s: %s", o.tool, p.stopped)
	}
}

// netpipeMeas is one measurement above 0 bytes: its line, size, time and (standard output)
// rate in Mbps.
type netpipeMeas struct {
	line       int64
	size       int64
	secs, rate float64
}

// netpipeParser is what readNetPIPE has read so far of NetPIPE's standard output (stdout) or
// output file.
type netpipeParser struct {
	r        *textReader
	stdout   bool
	hosts    map[int64]string // rank → host, from standard output's "0: node-a" lines
	modeLine string           // "-2" or "-s" when standard output prints the mode
	modeAt   int64            // the line that printed it
	meas     []netpipeMeas
	times    counts
	mainLoop int64 // the line of "Now starting the main loop", or 0
	measured int   // measurement lines read
	index    int64 // the number of the last measurement of standard output, -1 before the first
	// recent are the sizes of the last three measurements of the run and their lines,
	// oldest first.
	recent [][2]int64
	// stopped says where the run stopped (a last line without figures), and stopAt its line.
	stopped string
	stopAt  int64
}

// line reads one non-blank line (text: l's, trimmed) and keeps its measurement, if it has
// one above 0 bytes.
func (p *netpipeParser) line(l textLine, text string) error {
	n := l.n
	var m netpipeMeas
	var ok bool
	var err error
	if p.stdout {
		m, ok, err = p.stdoutLine(l, text)
	} else if err = p.r.whole(l); err == nil {
		m, ok, err = p.fileLine(n, text)
	}
	if err != nil || !ok {
		return err
	}
	p.measured++
	if err := p.order(n, m.size); err != nil || m.size == 0 {
		return err
	}
	p.meas = append(p.meas, m)
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

// stdoutLine reads a line of standard output (text: l's, trimmed): a rank's host, the mode, a
// message (ok false), a measurement "N: BYTES bytes TIMES times --> RATE Mbps in TIME usec",
// or the last one of a run that stopped (see readNetPIPE). A measurement line cut short
// (textLine.cut) is refused unless it is that of a run that stopped: its figures may have
// lost digits.
func (p *netpipeParser) stdoutLine(l textLine, text string) (m netpipeMeas, ok bool, err error) {
	n := l.n
	if h := netpipeHost.FindStringSubmatch(text); h != nil {
		rank, err := p.r.parseIndex(n, "rank", "a rank", h[1])
		p.hosts[rank] = h[2]
		return m, false, err
	}
	if mode := netpipeModes[text]; mode != "" && p.modeLine == "" {
		p.modeLine, p.modeAt = mode, n
	}
	if !strings.Contains(text, "-->") {
		return m, false, nil // "Now starting the main loop", "Sending output to …"
	}
	f := netpipeRow.FindStringSubmatch(text)
	if f == nil {
		return m, false, p.r.errAt(n, "", ErrWrongType, `%s: want "N: BYTES bytes TIMES times --> RATE Mbps in TIME usec"`, quote(text))
	}
	switch {
	case f[1] == "0":
		p.stopAt = 0 // another run begins
	case p.stopAt > 0:
		return m, false, p.r.errAt(n, "", ErrCorrupt, "a measurement after the run stopped on line %d: lines of two runs, or a damaged file", p.stopAt)
	}
	if err := p.number(n, f[1]); err != nil {
		return m, false, err
	}
	m.line = n
	if m.size, err = p.r.parseSize(n, "bytes", f[2]); err != nil {
		return m, false, err
	}
	if err := p.r.addCount(&p.times, n, "times", f[3]); err != nil {
		return m, false, err
	}
	rest := f[4]
	switch {
	case strings.Contains(rest, "Integrity check"):
		return m, false, p.r.errAt(n, "", ErrUnsupported, "NetPIPE's integrity check (-i) measures no time: run it without -i")
	case rest == "" || strings.HasPrefix(rest, "NetPIPE:"):
		why := "its line ends after \"-->\" (killed)"
		if rest != "" {
			why = "NetPIPE reported " + quote(rest)
		}
		p.stopped = fmt.Sprintf("the run stopped at measurement %s (%d B, line %d): %s; the sizes before it are kept", f[1], m.size, n, why)
		p.stopAt = n
		return m, false, nil
	}
	if err := p.r.whole(l); err != nil {
		return m, false, err
	}
	fig := netpipeFigures.FindStringSubmatch(rest)
	if fig == nil {
		return m, false, p.r.errAt(n, "", ErrWrongType, `%s: want "N: BYTES bytes TIMES times --> RATE Mbps in TIME usec"`, quote(text))
	}
	if m.rate, err = p.r.parseFloat(n, "Mbps", fig[1]); err != nil {
		return m, false, err
	}
	if m.secs, err = p.r.parseMicros(n, "usec", "time in µs", fig[2]); err != nil {
		return m, false, err
	}
	return m, true, nil
}

// fileLine reads a line of the output file: bytes, Mbps (checked, not kept), seconds.
func (p *netpipeParser) fileLine(n int64, text string) (m netpipeMeas, ok bool, err error) {
	f := strings.Fields(text)
	if len(f) < 3 {
		hint := ""
		if len(f) == 2 {
			hint = " (NetPIPE's integrity check, -i, writes bytes and repetitions: no time)"
		}
		return m, false, p.r.errAt(n, "", ErrRaggedRow, "%d fields, want 3: bytes, Mbps, seconds%s", len(f), hint)
	}
	m.line = n
	if m.size, err = p.r.parseSize(n, "bytes", f[0]); err != nil {
		return m, false, err
	}
	if err := p.r.parseFigure(n, "Mbps", f[1]); err != nil {
		return m, false, err
	}
	if m.secs, err = p.r.parsePositive(n, "seconds", "time in seconds", f[2]); err != nil {
		return m, false, err
	}
	return m, true, nil
}

var (
	// netpipeRow is a measurement line up to "-->" and what follows it: the figures, an
	// integrity check's verdict, an error, or nothing.
	netpipeRow     = regexp.MustCompile(`^([0-9]+):\s*([0-9]+)\s+bytes\s+([0-9]+)\s+times\s+-->\s*(.*)$`)
	netpipeFigures = regexp.MustCompile(`^(\S+)\s+Mbps\s+in\s+(\S+)\s+usec`)
	netpipeHost    = regexp.MustCompile(`^([0-9]+):\s+(\S+)$`)
	// netpipeModes are the lines netpipe.c prints for the modes that change what a row is.
	netpipeModes = map[string]string{"Streaming in one direction only.": "-s", "Passing data in both directions simultaneously.": "-2"}
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
