package datasets

import (
	"fmt"
	"regexp"
	"slices"
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
// Structure: each header line begins a block (OSU 7 prints "# Datatype: …" and a header per
// datatype of -T), whose rows follow it; OSU's loop doubles the size from one row to the next
// (-m MIN:MAX), so within a block the sizes increase. A block without rows is a run that
// stopped before measuring, and is refused. A second title of the same test begins another run
// (a file of several runs); one of another test is refused. Every column a row has must hold a
// number ≥ 0 (Validation: Pass), the columns that are not stored too.
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
	title := slices.IndexFunc(lines, func(l textLine) bool { return strings.HasPrefix(strings.TrimSpace(l.text), "# OSU ") })
	if title < 0 {
		return nil, inputErr(Location{File: r.path}, "", ErrUnknownFormat, `no "# OSU ... Test" title line: not an OSU Micro-Benchmarks output`)
	}
	p, err := newOSUParser(r, lines[title])
	if err != nil {
		return nil, err
	}
	for _, l := range lines[title:] {
		if err := p.line(l); err != nil {
			return nil, err
		}
	}
	return p.finish()
}

// osuParser is what readOSU has read so far of one OSU output: the benchmark its title names,
// the columns of the last header line, and what the notes will say of the rows.
type osuParser struct {
	r        *textReader
	o        *textOut
	kind     string   // the benchmark: "osu_latency", "osu_bw", …
	cols     []string // normalised header names
	names    []string // the header's names as printed, for messages
	colLine  int64
	rowsSeen int        // rows of the block under the last header
	runLine  int64      // the line of the last title
	runRows  int        // rows since it
	sizes    *sizeOrder // of the block under the last header
	pairs    int64      // from "# [ pairs: N ]", -1 until then
	iters    counts
	zeros    int
	src, dst string
}

// newOSUParser reads the title line: the benchmark and its version. A test that no table
// holds (a collective, a one-sided test) is refused here.
func newOSUParser(r *textReader, tl textLine) (*osuParser, error) {
	name, version := osuTitle(strings.TrimSpace(tl.text))
	kind, ok := osuKinds[name]
	if !ok {
		return nil, r.errAt(tl.n, "", ErrUnsupported, "an OSU %s test: no table holds it; commcal reads osu_latency, osu_multi_lat, osu_bw, osu_bibw and osu_mbw_mr", quote(name))
	}
	return &osuParser{r: r, o: newTextOut("OSU " + kind + " " + bounded(version)), kind: kind, pairs: -1}, nil
}

// col returns the index of the first of names (normalised) that the header has, or -1.
func (p *osuParser) col(names ...string) int { return findColumn(p.cols, names...) }

// line reads one line from the title on: blank, a title, a comment (the pairs, the header)
// or a row.
func (p *osuParser) line(l textLine) error {
	text := strings.TrimSpace(l.text)
	switch {
	case text == "":
		return nil
	case strings.HasPrefix(text, "# OSU "):
		return p.title(l.n, text)
	case strings.HasPrefix(text, "#"):
		return p.comment(l.n, strings.TrimSpace(strings.TrimPrefix(text, "#")))
	}
	return p.row(l.n, text)
}

// title reads a title line: the first, or one that begins another run of the same test in the
// same file (its header and pairs follow it again).
func (p *osuParser) title(n int64, text string) error {
	name, _ := osuTitle(text)
	if kind := osuKinds[name]; kind != p.kind {
		what := kind
		if kind == "" {
			what = quote(name)
		}
		return p.r.errAt(n, "", ErrCorrupt, "a second OSU title, of %s, in an output of %s: give each test's output as its own file", what, p.kind)
	}
	if p.runLine > 0 {
		if err := p.endRun(n); err != nil {
			return err
		}
	}
	p.cols, p.names, p.pairs, p.runLine, p.runRows = nil, nil, -1, n, 0
	return nil
}

// endRun refuses a run (a title and what follows it) whose last block, or which, has no
// rows, at the line that ends it (0: the file's end).
func (p *osuParser) endRun(at int64) error {
	if err := p.endBlock(at); err != nil {
		return err
	}
	if p.runRows == 0 {
		return p.r.errNoRows(at, fmt.Sprintf("the %s run titled at line %d", p.kind, p.runLine))
	}
	return nil
}

// endBlock refuses a header without rows, at the line that ends its block (0: the file's end).
func (p *osuParser) endBlock(at int64) error {
	if p.cols != nil && p.rowsSeen == 0 {
		return p.r.errNoRows(at, fmt.Sprintf("the %s block under the header of line %d", p.kind, p.colLine))
	}
	return nil
}

// comment reads a "#" line: the number of pairs, or the header naming the columns (which
// replaces any earlier one). Other comments say nothing the rows need.
func (p *osuParser) comment(n int64, body string) error {
	if m := osuPairs.FindStringSubmatch(body); m != nil {
		pairs, err := p.r.parseCount(n, "pairs", m[1])
		if err != nil {
			return err
		}
		p.pairs = pairs
	}
	if f := strings.Fields(body); len(f) > 0 && f[0] == "Size" {
		if err := p.endBlock(n); err != nil {
			return err
		}
		p.cols, p.names, p.colLine, p.rowsSeen = nil, nil, n, 0
		p.sizes = newSizeOrder(sizesIncrease, "", "OSU prints each size once, doubling it from one row to the next")
		for _, c := range osuColSep.Split(body, -1) {
			p.names = append(p.names, c)
			p.cols = append(p.cols, strings.ToLower(strings.ReplaceAll(c, " ", "")))
		}
	}
	return nil
}

// row reads a data line: one message size and its time, which becomes a p2p_sweep transfer
// or, for osu_bibw, a bidirectional pattern. A 0-byte row is counted and left out.
func (p *osuParser) row(n int64, text string) error {
	if err := p.rowAllowed(n); err != nil {
		return err
	}
	f := strings.Fields(text)
	if len(f) != len(p.cols) {
		return p.r.errAt(n, "", ErrRaggedRow, "%d fields, but the header of line %d names %d columns", len(f), p.colLine, len(p.cols))
	}
	p.rowsSeen++
	p.runRows++
	if v := p.col("validation"); v >= 0 && !strings.EqualFold(f[v], "pass") {
		return p.r.errAt(n, "Validation", ErrCorrupt, "OSU's data check says %s at this size: the data arrived damaged", quote(f[v]))
	}
	size, err := p.r.parseSize(n, "Size", f[0])
	if err != nil {
		return err
	}
	if err := p.sizes.add(p.r, n, "Size", size); err != nil {
		return err
	}
	if it := p.col("iterations"); it >= 0 {
		if err := p.r.addCount(&p.iters, n, "Iterations", f[it]); err != nil {
			return err
		}
	}
	secs, perWay, err := p.rowTime(n, f, size)
	if err != nil {
		return err
	}
	if err := p.figures(n, f); err != nil {
		return err
	}
	if size == 0 {
		p.zeros++
		return nil
	}
	if p.src, p.dst, err = p.r.nodes("an OSU "+p.kind, nil); err != nil {
		return err
	}
	if perWay > 0 {
		p.r.bidir(p.o, n, p.src, p.dst, size, perWay, secs)
	} else {
		p.r.sweep(p.o, n, p.src, p.dst, size, secs)
	}
	return nil
}

// figures checks the columns of a row that are not stored (minima, maxima, percentiles,
// message rates): each must be a number ≥ 0, as OSU prints them.
func (p *osuParser) figures(n int64, f []string) error {
	for i, c := range p.cols {
		if i == 0 || c == "validation" || c == "iterations" {
			continue
		}
		if err := p.r.parseFigure(n, p.names[i], f[i]); err != nil {
			return err
		}
	}
	return nil
}

// rowAllowed refuses a data row before any header, and every row of an osu_mbw_mr run that
// is not known to be of one pair: its rate would be an aggregate over unnamed nodes.
func (p *osuParser) rowAllowed(n int64) error {
	if p.cols == nil {
		return p.r.errAt(n, "", ErrMissingColumn, `a data row before the "# Size ..." header line`)
	}
	if p.kind != "osu_mbw_mr" || p.pairs == 1 {
		return nil
	}
	if p.pairs < 0 {
		return p.r.errAt(n, "pairs", ErrMissingColumn, `osu_mbw_mr output without its "# [ pairs: N ]" line: cannot tell one pair from many`)
	}
	return p.r.errAt(n, "pairs", ErrUnsupported,
		"osu_mbw_mr with %d pairs: its rate is the pairs' aggregate, on nodes the file does not name; ingest a one-pair run (-np 2), or osu_bw", p.pairs)
}

// rowTime returns a row's one-way time in seconds and its flows each way (0: a one-way
// sweep, 1: bidirectional): the latency in µs, or bytes over the bandwidth in MB/s, doubled
// for osu_bibw, whose bandwidth counts both directions.
func (p *osuParser) rowTime(n int64, f []string, size int64) (secs float64, perWay int, err error) {
	switch p.kind {
	case "osu_latency", "osu_multi_lat":
		us, err := p.positive(n, f, "Avg Latency(us)", "latency in µs",
			"the header names no latency column (Avg Latency(us) or Latency (us))", "avglatency(us)", "latency(us)")
		return us * 1e-6, 0, err
	}
	bw, err := p.positive(n, f, "Bandwidth (MB/s)", "bandwidth in MB/s",
		"the header names no bandwidth column (Bandwidth (MB/s) or MB/s)", "bandwidth(mb/s)", "mb/s")
	if err != nil {
		return 0, 0, err
	}
	secs = float64(size) / (bw * 1e6)
	if p.kind == "osu_bibw" {
		return 2 * secs, 1, nil
	}
	return secs, 0, nil
}

// positive reads the value > 0 of a row in the first of the columns names; column and unit
// name it in messages, and missing says what the header lacks when it has none of them.
func (p *osuParser) positive(n int64, f []string, column, unit, missing string, names ...string) (float64, error) {
	c := p.col(names...)
	if c < 0 {
		return 0, p.r.errAt(p.colLine, column, ErrMissingColumn, "%s", missing)
	}
	return p.r.parsePositive(n, column, unit, f[c])
}

// finish refuses an output without a header, a last block without rows, or an output
// without a row above 0 bytes, and notes what the rows are.
func (p *osuParser) finish() (*textOut, error) {
	if p.colLine == 0 {
		return nil, inputErr(Location{File: p.r.path}, "", ErrEmptyFile, `no "# Size ..." header line and no data rows`)
	}
	if err := p.endRun(0); err != nil {
		return nil, err
	}
	if p.o.rows() == 0 {
		return nil, inputErr(Location{File: p.r.path}, "", ErrEmptyFile, "no data rows with a message size above 0")
	}
	p.notes()
	return p.o, nil
}

// notes says what each row is an average of, and which columns were not stored.
func (p *osuParser) notes() {
	o, src, dst := p.o, p.src, p.dst
	avg := "the file does not say over how many iterations (-i)"
	if p.iters.hi > 0 {
		avg = "over " + p.iters.String() + " iterations (Iterations column)"
	}
	switch p.kind {
	case "osu_latency", "osu_multi_lat":
		o.note("%s: each row is OSU's average one-way latency (half the round trip; %s sends first), %s; µs read as 10⁻⁶ s", o.tool, src, avg)
		if p.col("p50taillat(us)") >= 0 {
			o.note("%s: the percentile columns (-z) are not stored: a row holds one time, the average", o.tool)
		}
		if p.kind == "osu_multi_lat" {
			o.note("%s: the latency is averaged over every pair that ran, and the file does not say how many: read as the one pair %s–%s", o.tool, src, dst)
		}
	case "osu_bibw":
		o.note("%s: each direction's time is 2 × bytes / bandwidth (OSU's bandwidth counts both directions; MB = 10⁶ B), per message of a window streamed both ways, %s", o.tool, avg)
	default:
		o.note("%s: each row's time is bytes / bandwidth (MB = 10⁶ B), the per-message time of a window of back-to-back messages from %s to %s, %s: latency is hidden, so a Hockney fit's α is near zero", o.tool, src, dst, avg)
	}
	if p.zeros > 0 {
		o.note("%s: the 0-byte row is left out (a transfer moves at least one byte)", o.tool)
	}
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
