package datasets

import (
	"fmt"
	"regexp"
	"slices"
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
	o := newTextOut("IMB-MPI1")
	if m := imbVersion.FindStringSubmatch(joinHead(lines, 20)); m != nil {
		o.tool += " " + m[1]
	}
	type block struct {
		name  string
		line  int64
		procs int64
		cols  []string
		iters counts
		rows  int
		zeros int
	}
	var (
		b        *block
		blocks   []*block
		skipped  []string
		src, dst string
	)
	col := func(names ...string) int {
		for _, n := range names {
			if i := slices.Index(b.cols, n); i >= 0 {
				return i
			}
		}
		return -1
	}
	for _, l := range lines {
		text := strings.TrimSpace(l.text)
		if m := imbBenchmark.FindStringSubmatch(text); m != nil {
			b = &block{name: m[1], line: l.n}
			blocks = append(blocks, b)
			continue
		}
		if b == nil || text == "" {
			continue // the header before the first block
		}
		if m := imbProcs.FindStringSubmatch(text); m != nil {
			n, err := r.parseCount(l.n, "#processes", m[1])
			if err != nil {
				return nil, err
			}
			b.procs = n
			continue
		}
		if strings.HasPrefix(text, "#bytes") {
			b.cols = strings.Fields(text)
			continue
		}
		if strings.HasPrefix(text, "#") {
			continue
		}
		if b.cols == nil {
			return nil, r.errAt(l.n, "", ErrMissingColumn, "a data row of block %s (line %d) before its #bytes header line", b.name, b.line)
		}
		if b.procs == 0 {
			return nil, r.errAt(l.n, "#processes", ErrMissingColumn, `block %s (line %d) has no "#processes = N" line`, b.name, b.line)
		}
		f := strings.Fields(text)
		if len(f) != len(b.cols) {
			return nil, r.errAt(l.n, "", ErrRaggedRow, "%d fields, but block %s names %d columns (%s)", len(f), b.name, len(b.cols), strings.Join(b.cols, " "))
		}
		size, err := r.parseSize(l.n, "#bytes", f[0])
		if err != nil {
			return nil, err
		}
		if c := col("#repetitions"); c >= 0 {
			n, err := r.parseCount(l.n, "#repetitions", f[c])
			if err != nil {
				return nil, err
			}
			b.iters.add(n)
		}
		kind := imbKinds[b.name]
		if kind == "" || (kind != "scatter" && kind != "gather" && b.procs != 2) {
			key := fmt.Sprintf("%s on %d processes", b.name, b.procs)
			if !slices.Contains(skipped, key) {
				skipped = append(skipped, key)
			}
			continue
		}
		// The time column: t[usec] for the ping-pongs, else t_max (collectives) or t_avg.
		want := []string{"t[usec]", "t_avg[usec]"}
		if kind == "scatter" || kind == "gather" {
			want = []string{"t_max[usec]", "t[usec]"}
		}
		c := col(want...)
		if c < 0 {
			return nil, r.errAt(l.n, want[0], ErrMissingColumn, "block %s (line %d) has no %s column", b.name, b.line, strings.Join(want, " or "))
		}
		us, err := r.parsePositive(l.n, b.cols[c], "time in µs", f[c])
		if err != nil {
			return nil, err
		}
		secs := us * 1e-6
		if src, dst, err = r.nodes("an IMB "+b.name, nil); err != nil {
			return nil, err
		}
		switch kind {
		case "scatter", "gather":
			r.collective(o, l.n, kind, src, b.procs, size, secs)
			b.rows++
			continue
		}
		if size == 0 {
			b.zeros++
			continue
		}
		switch kind {
		case "pingpong":
			r.sweep(o, l.n, src, dst, size, secs)
		case "pingping", "sendrecv":
			r.bidir(o, l.n, src, dst, size, 1, secs)
		case "exchange":
			r.bidir(o, l.n, src, dst, size, 2, secs)
		}
		b.rows++
	}
	if len(blocks) == 0 {
		return nil, inputErr(Location{File: r.path}, "", ErrUnknownFormat, `no "# Benchmarking NAME" block: not an IMB-MPI1 output with results`)
	}
	for _, b := range blocks {
		if b.rows == 0 {
			continue
		}
		what := map[string]string{
			"pingpong": "p2p_sweep transfers of one-way time t[usec] (half the round trip)",
			"pingping": "bidirectional transfers, one flow each way taking t[usec]",
			"sendrecv": "bidirectional transfers, one flow each way taking t_avg",
			"exchange": "bidirectional transfers, two flows each way taking t_avg",
			"scatter":  "scatter collectives of t_max (root " + src + " for IMB's rotating root)",
			"gather":   "gather collectives of t_max (root " + src + " for IMB's rotating root)",
		}[imbKinds[b.name]]
		o.note("%s %s (line %d, %d processes): %d sizes, %s, each an average over %s repetitions; µs read as 10⁻⁶ s",
			o.tool, b.name, b.line, b.procs, b.rows, what, b.iters)
		if b.zeros > 0 {
			o.note("%s %s: the 0-byte row is left out (a transfer moves at least one byte)", o.tool, b.name)
		}
	}
	if len(skipped) > 0 {
		o.note("%s: left out, no table holds them: %s", o.tool, strings.Join(skipped, ", "))
	}
	if o.rows() == 0 {
		return nil, inputErr(Location{File: r.path}, "", ErrUnsupported,
			"an IMB output with only %s: none has a table; commcal reads PingPong, PingPing, Sendrecv and Exchange on 2 processes, and Scatter and Gather",
			strings.Join(skipped, ", "))
	}
	return o, nil
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
