package datasets

import (
	"regexp"
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
	o := newTextOut("NetPIPE")
	stdout := false
	for _, l := range lines {
		if strings.Contains(l.text, "-->") {
			stdout = true
			break
		}
	}
	var (
		hosts    = map[string]string{}
		src, dst string
		times    counts
	)
	for _, l := range lines {
		text := strings.TrimSpace(l.text)
		if text == "" {
			continue
		}
		var size int64
		var secs float64
		var err error
		if stdout {
			if m := netpipeHost.FindStringSubmatch(text); m != nil {
				hosts[m[1]] = m[2]
				continue
			}
			if !strings.Contains(text, "-->") {
				continue // "Now starting the main loop", "Sending output to …"
			}
			m := netpipeRow.FindStringSubmatch(text)
			if m == nil {
				return nil, r.errAt(l.n, "", ErrWrongType, `%q: want "N: BYTES bytes TIMES times --> RATE Mbps in TIME usec"`, truncate(text, 60))
			}
			if size, err = r.parseSize(l.n, "bytes", m[1]); err != nil {
				return nil, err
			}
			n, err := r.parseCount(l.n, "times", m[2])
			if err != nil {
				return nil, err
			}
			times.add(n)
			us, err := r.parsePositive(l.n, "usec", "time in µs", m[3])
			if err != nil {
				return nil, err
			}
			secs = us * 1e-6
		} else {
			f := strings.Fields(text)
			if len(f) < 3 {
				return nil, r.errAt(l.n, "", ErrRaggedRow, "%d fields, want 3: bytes, Mbps, seconds", len(f))
			}
			if size, err = r.parseSize(l.n, "bytes", f[0]); err != nil {
				return nil, err
			}
			if _, err := r.parseFloat(l.n, "Mbps", f[1]); err != nil {
				return nil, err
			}
			if secs, err = r.parsePositive(l.n, "seconds", "time in seconds", f[2]); err != nil {
				return nil, err
			}
		}
		if size == 0 {
			continue
		}
		if src == "" {
			var named []string
			if hosts["0"] != "" && hosts["1"] != "" {
				named = []string{hosts["0"], hosts["1"]}
			}
			if src, dst, err = r.nodes("a NetPIPE", named); err != nil {
				return nil, err
			}
		}
		r.sweep(o, l.n, src, dst, size, secs)
	}
	if o.rows() == 0 {
		return nil, inputErr(Location{File: r.path}, "", ErrEmptyFile, "no measurement lines with a message size above 0")
	}
	if stdout {
		o.note("%s standard output: each row is NetPIPE's one-way time from %s to %s (half a round trip, the best of its trials of %s round trips each); µs read as 10⁻⁶ s", o.tool, src, dst, times)
	} else {
		o.note("%s output file: each row is NetPIPE's one-way time from %s to %s in seconds (half a round trip, the best of its trials; the file does not say how many round trips each)", o.tool, src, dst)
	}
	return o, nil
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
