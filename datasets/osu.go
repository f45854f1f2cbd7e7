package datasets

import (
	"regexp"
	"strings"
)

// OSU Micro-Benchmarks (MVAPICH's osu_latency, osu_multi_lat, osu_bw, osu_bibw, osu_mbw_mr).
// An output is a title line ("# OSU MPI Latency Test v7.4"), comment lines that changed across
// versions ("# Datatype: MPI_CHAR.", "# [ pairs: 1 ] [ window size: 64 ]"), a header line
// naming the columns ("# Size  Avg Latency(us)" in 7.x, "# Size  Latency (us)" in 5.x, with
// "Min Latency(us)  Max Latency(us)  Iterations" under -f, "P50 Tail Lat(us)" … under -z,
// "Validation" under -c), and one line per message size. Columns are found by their names,
// so extra ones are tolerated; lines before the title (a launcher's noise) are skipped.
//
// What each becomes (rank 0 on --src sends first; one row per size, an average, repetition 0):
//   - osu_latency: OSU prints the average one-way latency, half the round trip, in µs. A
//     p2p_sweep transfer taking that time. -z's percentile columns are read for their shape
//     only: a row holds one time, the average.
//   - osu_multi_lat: the same, averaged over every pair that ran; the file does not say how
//     many, so it is read as one pair between --src and --dst (right for a 2-process run).
//   - osu_bw: bandwidth in MB/s (10⁶ bytes/s: OSU divides bytes by 1e6) of windows of
//     back-to-back messages from rank 0 to rank 1. A p2p_sweep transfer of bytes taking
//     bytes / bandwidth: the time per message when they stream, which hides the latency, so
//     a Hockney fit of it has α near zero and β the streaming rate's inverse.
//   - osu_bibw: the same both ways at once; the bandwidth counts both directions, so each
//     direction's message takes 2·bytes / bandwidth: a bidir_nic pattern (bidir_backbone
//     across racks) of one flow each way.
//   - osu_mbw_mr: with one pair ("# [ pairs: 1 ]"), as osu_bw (Messages/s is not read).
//     With more, the rate is the pairs' aggregate on nodes the file does not name: refused.
func readOSU(r *textReader, lines []textLine) (*textOut, error) {
	title := -1
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l.text), "# OSU ") {
			title = i
			break
		}
	}
	if title < 0 {
		return nil, inputErr(Location{File: r.path}, "", ErrUnknownFormat, `no "# OSU ... Test" title line: not an OSU Micro-Benchmarks output`)
	}
	tl := lines[title]
	name, version := osuTitle(strings.TrimSpace(tl.text))
	kind, ok := osuKinds[name]
	if !ok {
		return nil, r.errAt(tl.n, "", ErrUnsupported, "an OSU %q test: no table holds it; commcal reads osu_latency, osu_multi_lat, osu_bw, osu_bibw and osu_mbw_mr", name)
	}
	o := newTextOut("OSU " + kind + " " + version)
	var (
		cols    []string // normalised header names
		colLine int64
		pairs   int64 = -1
		iters   counts
		zeros   int
		src     string
		dst     string
	)
	col := func(names ...string) int {
		for _, n := range names {
			for i, c := range cols {
				if c == n {
					return i
				}
			}
		}
		return -1
	}
	for _, l := range lines[title+1:] {
		text := strings.TrimSpace(l.text)
		switch {
		case text == "":
			continue
		case strings.HasPrefix(text, "#"):
			body := strings.TrimSpace(strings.TrimPrefix(text, "#"))
			if m := osuPairs.FindStringSubmatch(body); m != nil {
				n, err := r.parseCount(l.n, "pairs", m[1])
				if err != nil {
					return nil, err
				}
				pairs = n
			}
			if f := strings.Fields(body); len(f) > 0 && f[0] == "Size" {
				cols, colLine = nil, l.n
				for _, c := range osuColSep.Split(body, -1) {
					cols = append(cols, strings.ToLower(strings.ReplaceAll(c, " ", "")))
				}
			}
			continue
		}
		if cols == nil {
			return nil, r.errAt(l.n, "", ErrMissingColumn, `a data row before the "# Size ..." header line`)
		}
		if kind == "osu_mbw_mr" && pairs != 1 {
			if pairs < 0 {
				return nil, r.errAt(l.n, "pairs", ErrMissingColumn, `osu_mbw_mr output without its "# [ pairs: N ]" line: cannot tell one pair from many`)
			}
			return nil, r.errAt(l.n, "pairs", ErrUnsupported,
				"osu_mbw_mr with %d pairs: its rate is the pairs' aggregate, on nodes the file does not name; ingest a one-pair run (-np 2), or osu_bw", pairs)
		}
		f := strings.Fields(text)
		if len(f) != len(cols) {
			return nil, r.errAt(l.n, "", ErrRaggedRow, "%d fields, but the header of line %d names %d columns", len(f), colLine, len(cols))
		}
		if v := col("validation"); v >= 0 && !strings.EqualFold(f[v], "pass") {
			return nil, r.errAt(l.n, "Validation", ErrCorrupt, "OSU's data check says %q at this size: the data arrived damaged", f[v])
		}
		size, err := r.parseSize(l.n, "Size", f[0])
		if err != nil {
			return nil, err
		}
		if it := col("iterations"); it >= 0 {
			n, err := r.parseCount(l.n, "Iterations", f[it])
			if err != nil {
				return nil, err
			}
			iters.add(n)
		}
		var secs float64
		perWay := 0 // 0: one-way sweep; 1: bidirectional
		switch kind {
		case "osu_latency", "osu_multi_lat":
			c := col("avglatency(us)", "latency(us)")
			if c < 0 {
				return nil, r.errAt(colLine, "Avg Latency(us)", ErrMissingColumn, "the header names no latency column (Avg Latency(us) or Latency (us))")
			}
			us, err := r.parsePositive(l.n, "Avg Latency(us)", "latency in µs", f[c])
			if err != nil {
				return nil, err
			}
			secs = us * 1e-6
		default:
			c := col("bandwidth(mb/s)", "mb/s")
			if c < 0 {
				return nil, r.errAt(colLine, "Bandwidth (MB/s)", ErrMissingColumn, "the header names no bandwidth column (Bandwidth (MB/s) or MB/s)")
			}
			bw, err := r.parsePositive(l.n, "Bandwidth (MB/s)", "bandwidth in MB/s", f[c])
			if err != nil {
				return nil, err
			}
			secs = float64(size) / (bw * 1e6)
			if kind == "osu_bibw" {
				secs, perWay = 2*secs, 1
			}
		}
		if size == 0 {
			zeros++
			continue
		}
		if src, dst, err = r.nodes("an OSU "+kind, nil); err != nil {
			return nil, err
		}
		if perWay > 0 {
			r.bidir(o, l.n, src, dst, size, perWay, secs)
		} else {
			r.sweep(o, l.n, src, dst, size, secs)
		}
	}
	if cols == nil {
		return nil, inputErr(Location{File: r.path}, "", ErrEmptyFile, `no "# Size ..." header line and no data rows`)
	}
	if o.rows() == 0 {
		return nil, inputErr(Location{File: r.path}, "", ErrEmptyFile, "no data rows with a message size above 0")
	}
	avg := "the file does not say over how many iterations (-i)"
	if iters.hi > 0 {
		avg = "over " + iters.String() + " iterations (Iterations column)"
	}
	switch kind {
	case "osu_latency", "osu_multi_lat":
		o.note("%s: each row is OSU's average one-way latency (half the round trip; %s sends first), %s; µs read as 10⁻⁶ s", o.tool, src, avg)
		if col("p50taillat(us)") >= 0 {
			o.note("%s: the percentile columns (-z) are not stored: a row holds one time, the average", o.tool)
		}
		if kind == "osu_multi_lat" {
			o.note("%s: the latency is averaged over every pair that ran, and the file does not say how many: read as the one pair %s–%s", o.tool, src, dst)
		}
	case "osu_bibw":
		o.note("%s: each direction's time is 2 × bytes / bandwidth (OSU's bandwidth counts both directions; MB = 10⁶ B), per message of a window streamed both ways, %s", o.tool, avg)
	default:
		o.note("%s: each row's time is bytes / bandwidth (MB = 10⁶ B), the per-message time of a window of back-to-back messages from %s to %s, %s: latency is hidden, so a Hockney fit's α is near zero", o.tool, src, dst, avg)
	}
	if zeros > 0 {
		o.note("%s: the 0-byte row is left out (a transfer moves at least one byte)", o.tool)
	}
	return o, nil
}

var (
	osuPairs  = regexp.MustCompile(`pairs:\s*([0-9]+)`)
	osuColSep = regexp.MustCompile(`\s{2,}|\t+`)
	// osuKinds maps a title's test name (without "MPI" and "Test") to the benchmark.
	osuKinds = map[string]string{
		"Latency":                           "osu_latency",
		"Multi Latency":                     "osu_multi_lat",
		"Bandwidth":                         "osu_bw",
		"Bi-Directional Bandwidth":          "osu_bibw",
		"Multiple Bandwidth / Message Rate": "osu_mbw_mr",
	}
)

// osuTitle splits "# OSU MPI-CUDA Latency Test v5.6" into the test's name ("Latency": the
// words between the MPI flavour and "Test") and its version ("v5.6", or "").
func osuTitle(line string) (name, version string) {
	t := strings.TrimSpace(strings.TrimPrefix(line, "# OSU "))
	if i := strings.LastIndex(t, " Test"); i >= 0 {
		version = strings.TrimSpace(t[i+len(" Test"):])
		t = t[:i]
	}
	if first, rest, ok := strings.Cut(t, " "); ok && strings.HasPrefix(first, "MPI") {
		t = rest
	}
	return strings.TrimSpace(t), version
}

// looksOSU reports whether the head of a file is an OSU output.
func looksOSU(head string) bool { return strings.Contains(head, "# OSU ") }
