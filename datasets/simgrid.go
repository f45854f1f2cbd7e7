package datasets

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// simgrid reads the headerless CSV written by the SimGrid team's MPI calibration program
// (operation,size,start,duration; one row per timed MPI call). A ping-pong appears as an
// MPI_Send row followed by the MPI_Recv row of the same exchange (same size, same start); the
// pair is one round trip from Src to Dst and back, of size bytes each way, whose time is the sum
// of the two durations. Repetitions of a size are numbered in file order. Every start must be
// finite and every duration finite and not negative (an error names the line, the round trip's
// row and the column: operation, size, start or duration). Files of other
// operations (MPI_Isend, MPI_Recv alone) time single calls: readSimGridAux reads them.
func (ing *ingester) simgrid(src Source, r io.Reader, idx int32) (*Table, int64, error) {
	t := RoundTripsTable
	cr := csv.NewReader(newBufReader(r))
	cr.FieldsPerRecord = 4
	cr.ReuseRecord = true
	rb := newRowBuilder(t, ing.opts.Mem)
	defer rb.release()
	p := &simgridPingPong{ing: ing, src: src, rb: rb, reps: map[int64]int64{},
		batch: batcher{ing: ing, t: t, rb: rb, file: src.Path, idx: idx, first: 1}}
	if err := eachRecord(cr, src.Path, p.record); err != nil {
		return nil, 0, err
	}
	if p.pending {
		return nil, 0, inputErr(Location{File: src.Path, Line: p.sendLine}, "", ErrUnpaired, "MPI_Send without its MPI_Recv at the end of the file")
	}
	if p.rows == 0 {
		return nil, 0, inputErr(Location{File: src.Path}, "", ErrEmptyFile, "no ping-pong rows")
	}
	if err := p.batch.finish(); err != nil {
		return nil, 0, err
	}
	return t, p.rows, nil
}

// simgridPingPong is what ingester.simgrid has read so far: the MPI_Send waiting for its
// MPI_Recv, the round trips written, and each size's repetitions.
type simgridPingPong struct {
	ing       *ingester
	src       Source
	rb        *rowBuilder
	batch     batcher
	reps      map[int64]int64 // repetitions so far, by size
	rows      int64
	pending   bool // an MPI_Send waits for its MPI_Recv
	sendSize  int64
	sendStart float64
	sendDur   float64
	sendLine  int64
}

// record reads one call (operation, size, start, duration) at line: an MPI_Send is kept
// until the MPI_Recv that completes its round trip, which is then appended as a row.
func (p *simgridPingPong) record(rec []string, line int64) error {
	rowLoc := Location{File: p.src.Path, Line: line, Row: p.rows + 1}
	op := strings.TrimSpace(rec[0])
	size, err := strconv.ParseInt(strings.TrimSpace(rec[1]), 10, 64)
	if err != nil {
		return inputErr(rowLoc, "size", ErrWrongType, "%s is not an integer", quote(rec[1]))
	}
	start, err := simgridTime(rec, 2, "start", rowLoc)
	if err != nil {
		return err
	}
	dur, err := simgridTime(rec, 3, "duration", rowLoc)
	if err != nil {
		return err
	}
	if done, err := p.pair(line, op, size, start, dur); err != nil || !done {
		return err
	}
	if p.src.Src == "" || p.src.Dst == "" {
		return inputErr(Location{File: p.src.Path}, "", ErrUnsupported,
			"a SimGrid ping-pong file does not name its nodes; give them (--src and --dst)")
	}
	p.rb.appendString(0, p.ing.opts.Cluster.Name())
	p.rb.appendString(1, p.src.Src)
	p.rb.appendString(2, p.src.Dst)
	p.rb.appendInt(3, size)
	p.rb.appendInt(4, size)
	p.rb.appendInt(5, p.reps[size])
	p.rb.appendFloat(6, p.sendDur+dur)
	p.reps[size]++
	p.rows++
	return p.batch.add(p.sendLine)
}

// pair matches an MPI_Send with the MPI_Recv that follows it (same size, same start) and
// reports whether op completed a round trip. Any other operation, or a call out of turn, is
// an error.
func (p *simgridPingPong) pair(line int64, op string, size int64, start, dur float64) (bool, error) {
	loc := Location{File: p.src.Path, Line: line}
	switch {
	case op == "MPI_Send" && !p.pending:
		p.pending, p.sendSize, p.sendStart, p.sendDur, p.sendLine = true, size, start, dur, line
		return false, nil
	case op == "MPI_Recv" && p.pending:
		if size != p.sendSize || start != p.sendStart {
			return false, inputErr(loc, "", ErrUnpaired,
				"MPI_Recv (size %d, start %s) does not match the MPI_Send of line %d (size %d, start %s)",
				size, formatFloat(start), p.sendLine, p.sendSize, formatFloat(p.sendStart))
		}
		p.pending = false
		return true, nil
	case op == "MPI_Send" || op == "MPI_Recv":
		return false, inputErr(loc, "operation", ErrUnpaired,
			"%s where a ping-pong needs %s", op, map[bool]string{true: "MPI_Recv", false: "MPI_Send"}[p.pending])
	}
	if !simgridOps[op] {
		return false, inputErr(loc, "operation", ErrWrongType,
			`operation %s is not one of the calls SimGrid's calibration times (%s): its CSV has no header, one "MPI_…,size,start,duration" line per call`,
			quote(op), strings.Join(slices.Sorted(maps.Keys(simgridOps)), ", "))
	}
	return false, inputErr(loc, "operation", ErrUnsupported,
		"operation %s times a single call; only MPI_Send/MPI_Recv ping-pong files are ingested", quote(op))
}

// simgridTime parses field i of a record, a time; every time must be finite, and a duration
// not negative. loc names the round trip being read (its row) and the line.
func simgridTime(rec []string, i int, name string, loc Location) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSpace(rec[i]), 64)
	switch {
	case err != nil && !errors.Is(err, strconv.ErrRange):
		return 0, inputErr(loc, name, ErrWrongType, "%s is not a number", quote(rec[i]))
	case math.IsNaN(v):
		return 0, inputErr(loc, name, ErrNaN, "got NaN, want a number")
	case math.IsInf(v, 0):
		return 0, inputErr(loc, name, ErrInfinite, "got %s, want a finite number", quote(strings.TrimSpace(rec[i])))
	case name == "duration" && v < 0:
		return 0, inputErr(loc, name, ErrNegative, "got %s, want ≥ 0", formatFloat(v))
	}
	return v, nil
}

// SimGrid's calibration program (platform-calibration's `calibrate -d DIR -p PREFIX -s
// SIZES`) writes one CSV per operation into DIR: PREFIX_PingPong.csv (read above), and
// PREFIX_Recv.csv, PREFIX_Isend.csv, PREFIX_Test.csv, PREFIX_Iprobe.csv, PREFIX_Wtime.csv, each
// timing one call alone. Beside them lie the list of operations and sizes it was given (SIZES:
// "Recv, 26231" lines) and, for its R script, a PREFIX_breakpoints file of protocol
// thresholds. Ingesting the directory reads the ping-pong as round trips and records the rest:
// the single-call timings as notes of the manifest (their sizes differ from the ping-pong's, so
// they cannot be set beside its round trips as overheads of the same message), and the
// breakpoints as the dataset's Hockney breaks (estimate uses them unless --hockney-breaks
// says otherwise). Alone, none of these holds a transfer time, and each is refused with what
// it is.

// simgridKind tells the calibration's files apart by content (and a breakpoints file by its
// name): "pingpong", "calls" (one operation timed alone), "breakpoints" or "sizes". It reads
// the first simgridHeadLines lines of head, not the first alone: a file whose first line is
// damaged is still recognised, and its reader names that line. A file of calls is a ping-pong
// when an MPI_Send is among them.
func simgridKind(path string, head []byte) string {
	if strings.HasSuffix(filepath.Base(path), "_breakpoints") {
		return "breakpoints"
	}
	var lines [][]byte
	for l := range bytes.SplitSeq(bytes.TrimPrefix(head, utf8BOM), []byte("\n")) {
		if l = bytes.TrimSpace(l); len(l) > 0 && len(lines) < simgridHeadLines {
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		return ""
	}
	if simgridLimitHeader.Match(lines[0]) {
		return "breakpoints"
	}
	var calls, sizes int
	send := false
	for _, l := range lines {
		op, _, _ := bytes.Cut(l, []byte(","))
		switch op = bytes.TrimSpace(op); {
		case bytes.HasPrefix(op, []byte("MPI_")):
			calls++
			send = send || string(op) == "MPI_Send"
		case simgridSizesLine.Match(l):
			sizes++
		}
	}
	switch {
	case 2*calls > len(lines) && send:
		return "pingpong"
	case 2*calls > len(lines):
		return "calls"
	case 2*sizes > len(lines):
		return "sizes"
	}
	return ""
}

// simgridOps are the MPI calls that SimGrid's calibration program times.
var simgridOps = map[string]bool{"MPI_Send": true, "MPI_Recv": true, "MPI_Isend": true, "MPI_Ssend": true,
	"MPI_Test": true, "MPI_Iprobe": true, "MPI_Wtime": true}

// simgridHeadLines is how many lines of a file simgridKind reads.
const simgridHeadLines = 8

var (
	simgridLimitHeader = regexp.MustCompile(`(?i)^limit\s*,\s*name\s*$`)
	simgridSizesLine   = regexp.MustCompile(`^(PingPong|Recv|Isend|Send|Ssend|Test|Iprobe|Wtime)\s*,\s*[0-9]+\s*$`)
)

// readSimGridAux reads a calibration file that holds no transfer time: a single-call timing
// file, the breakpoints or the list of sizes. Its textOut has no rows, only aux (the refusal
// when it comes alone) and a note, and for breakpoints the breaks.
func readSimGridAux(r *textReader, kind string, data []byte) (*textOut, error) {
	o := newTextOut("SimGrid calibration")
	var (
		what string
		err  error
	)
	switch kind {
	case "breakpoints":
		b, err := parseBreakpoints(r.path, data)
		if err != nil {
			return nil, err
		}
		o.breaks = b
		what = fmt.Sprintf("a SimGrid calibration breakpoints file: the message sizes at which the MPI stack changes protocol (%s B), recorded as the dataset's Hockney breaks",
			strings.Join(formatSizes(b), ", "))
		o.aux = inputErr(Location{File: r.path}, "", ErrUnsupported,
			"%s; it holds no transfer times: ingest it with the calibration's *_PingPong.csv (the whole output directory), or give it to estimate --hockney-breaks", what)
		o.notes = append(o.notes, what)
		return o, nil
	case "sizes":
		what, err = readSimGridSizes(r, data)
	case "calls":
		what, err = readSimGridCalls(r, data)
	}
	if err != nil {
		return nil, err
	}
	o.aux = inputErr(Location{File: r.path}, "", ErrUnsupported,
		"%s; it holds no transfer times: ingest it with the calibration's *_PingPong.csv (the whole output directory)", what)
	o.notes = append(o.notes, what)
	return o, nil
}

// readSimGridSizes reads the list of operations and sizes given to the calibration program
// ("Recv, 26231" lines) and says what it is: how many sizes of each operation it lists.
func readSimGridSizes(r *textReader, data []byte) (string, error) {
	lines, err := splitLines(r.path, data)
	if err != nil {
		return "", err
	}
	ops := map[string]int{}
	var order []string
	for _, l := range lines {
		text := strings.TrimSpace(l.text)
		if text == "" {
			continue
		}
		m := simgridSizesLine.FindStringSubmatch(text)
		if m == nil {
			return "", r.errAt(l.n, "", ErrWrongType, `%s: a list of calibration sizes has "Operation, size" lines`, quote(text))
		}
		order = appendNew(order, m[1])
		ops[m[1]]++
	}
	parts := make([]string, len(order))
	for i, op := range order {
		parts[i] = fmt.Sprintf("%s %d", op, ops[op])
	}
	return fmt.Sprintf("the list of operations and message sizes given to SimGrid's calibration program (%s): its input, not a measurement", strings.Join(parts, ", ")), nil
}

// readSimGridCalls reads a file timing one MPI call alone and says what it is: its operation,
// number of calls, sizes and median duration.
func readSimGridCalls(r *textReader, data []byte) (string, error) {
	cr := csv.NewReader(bytes.NewReader(bytes.TrimPrefix(data, utf8BOM)))
	cr.FieldsPerRecord = 4
	cr.ReuseRecord = true
	var (
		op           string
		durs         []float64
		minSz, maxSz int64 = math.MaxInt64, 0
	)
	err := eachRecord(cr, r.path, func(rec []string, line int64) error {
		name := strings.TrimSpace(rec[0])
		switch {
		case op == "":
			op = name
		case name != op:
			return r.errAt(line, "operation", ErrWrongType, "%s in a file of %s timings: a calibration file times one operation", quote(name), quote(op))
		}
		size, err := r.parseSize(line, "size", strings.TrimSpace(rec[1]))
		if err != nil {
			return err
		}
		if _, err := r.parseFloat(line, "start", strings.TrimSpace(rec[2])); err != nil {
			return err
		}
		d, err := r.parseFloat(line, "duration", strings.TrimSpace(rec[3]))
		if err != nil {
			return err
		}
		if d < 0 {
			return r.errAt(line, "duration", ErrNegative, "got %s, want ≥ 0", formatFloat(d))
		}
		durs = append(durs, d)
		minSz, maxSz = min(minSz, size), max(maxSz, size)
		return nil
	})
	if err != nil {
		return "", err
	}
	if len(durs) == 0 {
		return "", inputErr(Location{File: r.path}, "", ErrEmptyFile, "no timings")
	}
	slices.Sort(durs)
	what := map[string]string{
		"MPI_Recv":   "the time of a blocking receive of a message that has already arrived (the receive overhead)",
		"MPI_Isend":  "the time to hand a message over to a non-blocking send (the send overhead)",
		"MPI_Test":   "the cost of polling a request",
		"MPI_Iprobe": "the cost of probing for a message",
		"MPI_Wtime":  "the cost of reading the clock (the timer's resolution)",
	}[op]
	sizes := fmt.Sprintf(", sizes %d–%d B", minSz, maxSz)
	if op == "MPI_Wtime" {
		sizes = "" // the calibration gives Wtime sizes too, which mean nothing to a clock
	}
	if what != "" {
		what = ": " + what
	}
	return fmt.Sprintf("a SimGrid calibration file timing %d %s calls alone%s%s, median %s s",
		len(durs), bounded(op), what, sizes, formatFloat(durs[len(durs)/2])), nil
}

func formatSizes(v []float64) []string {
	out := make([]string, len(v))
	for i, x := range v {
		out[i] = formatFloat(x)
	}
	return out
}
