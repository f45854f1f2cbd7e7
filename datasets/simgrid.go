package datasets

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
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
	loc := Location{File: src.Path}
	t := RoundTripsTable
	cr := csv.NewReader(newBufReader(r))
	cr.FieldsPerRecord = 4
	cr.ReuseRecord = true
	rb := newRowBuilder(t, ing.opts.Mem)
	defer rb.release()
	reps := map[int64]int64{}
	var (
		rows, first int64 = 0, 1
		lines       []int64
		pending     bool // an MPI_Send waits for its MPI_Recv
		sendSize    int64
		sendStart   float64
		sendDur     float64
		sendLine    int64
	)
	// field parses a time; every time must be finite, and a duration not negative. loc names
	// the round trip being read (its row) and the line.
	field := func(rec []string, i int, name string, loc Location) (float64, error) {
		v, err := strconv.ParseFloat(strings.TrimSpace(rec[i]), 64)
		switch {
		case err != nil && !errors.Is(err, strconv.ErrRange):
			return 0, inputErr(loc, name, ErrWrongType, "%q is not a number", rec[i])
		case math.IsNaN(v):
			return 0, inputErr(loc, name, ErrNaN, "got NaN, want a number")
		case math.IsInf(v, 0):
			return 0, inputErr(loc, name, ErrInfinite, "got %s, want a finite number", strings.TrimSpace(rec[i]))
		case name == "duration" && v < 0:
			return 0, inputErr(loc, name, ErrNegative, "got %s, want ≥ 0", formatFloat(v))
		}
		return v, nil
	}
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, 0, csvErr(src.Path, err)
		}
		l, _ := cr.FieldPos(0)
		line := int64(l)
		rowLoc := Location{File: src.Path, Line: line, Row: rows + 1}
		op := strings.TrimSpace(rec[0])
		size, err := strconv.ParseInt(strings.TrimSpace(rec[1]), 10, 64)
		if err != nil {
			return nil, 0, inputErr(rowLoc, "size", ErrWrongType, "%q is not an integer", rec[1])
		}
		start, err := field(rec, 2, "start", rowLoc)
		if err != nil {
			return nil, 0, err
		}
		dur, err := field(rec, 3, "duration", rowLoc)
		if err != nil {
			return nil, 0, err
		}
		switch {
		case op == "MPI_Send" && !pending:
			pending, sendSize, sendStart, sendDur, sendLine = true, size, start, dur, line
			continue
		case op == "MPI_Recv" && pending:
			if size != sendSize || start != sendStart {
				return nil, 0, inputErr(Location{File: src.Path, Line: line}, "", ErrUnpaired,
					"MPI_Recv (size %d, start %s) does not match the MPI_Send of line %d (size %d, start %s)",
					size, formatFloat(start), sendLine, sendSize, formatFloat(sendStart))
			}
			pending = false
		case op == "MPI_Send" || op == "MPI_Recv":
			return nil, 0, inputErr(Location{File: src.Path, Line: line}, "operation", ErrUnpaired,
				"%s where a ping-pong needs %s", op, map[bool]string{true: "MPI_Recv", false: "MPI_Send"}[pending])
		default:
			return nil, 0, inputErr(Location{File: src.Path, Line: line}, "operation", ErrUnsupported,
				"operation %q times a single call; only MPI_Send/MPI_Recv ping-pong files are ingested", op)
		}
		if src.Src == "" || src.Dst == "" {
			return nil, 0, inputErr(loc, "", ErrUnsupported,
				"a SimGrid ping-pong file does not name its nodes; give them (--src and --dst)")
		}
		rb.appendString(0, ing.opts.Cluster.Name())
		rb.appendString(1, src.Src)
		rb.appendString(2, src.Dst)
		rb.appendInt(3, size)
		rb.appendInt(4, size)
		rb.appendInt(5, reps[size])
		rb.appendFloat(6, sendDur+dur)
		reps[size]++
		rows++
		lines = append(lines, sendLine)
		if len(lines) == ing.opts.BatchRows {
			n, err := ing.emit(t, rb, batchLoc{file: src.Path, firstRow: first, lines: lines}, idx)
			if err != nil {
				return nil, 0, err
			}
			first += n
			lines = lines[:0]
		}
	}
	if pending {
		return nil, 0, inputErr(Location{File: src.Path, Line: sendLine}, "", ErrUnpaired, "MPI_Send without its MPI_Recv at the end of the file")
	}
	if rows == 0 {
		return nil, 0, inputErr(loc, "", ErrEmptyFile, "no ping-pong rows")
	}
	if len(lines) > 0 {
		if _, err := ing.emit(t, rb, batchLoc{file: src.Path, firstRow: first, lines: lines}, idx); err != nil {
			return nil, 0, err
		}
	}
	return t, rows, nil
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
// name): "pingpong", "calls" (one operation timed alone), "breakpoints" or "sizes".
func simgridKind(path string, head []byte) string {
	first, _, _ := bytes.Cut(bytes.TrimLeft(bytes.TrimPrefix(head, utf8BOM), " \t\r\n"), []byte("\n"))
	first = bytes.TrimSpace(first)
	switch {
	case bytes.HasPrefix(first, []byte("MPI_Send")):
		return "pingpong"
	case bytes.HasPrefix(first, []byte("MPI_")):
		return "calls"
	case strings.HasSuffix(filepath.Base(path), "_breakpoints") || simgridLimitHeader.Match(first):
		return "breakpoints"
	case simgridSizesLine.Match(first):
		return "sizes"
	}
	return ""
}

var (
	simgridLimitHeader = regexp.MustCompile(`(?i)^limit\s*,\s*name\s*$`)
	simgridSizesLine   = regexp.MustCompile(`^(PingPong|Recv|Isend|Send|Ssend|Test|Iprobe|Wtime)\s*,\s*[0-9]+\s*$`)
)

// readSimGridAux reads a calibration file that holds no transfer time: a single-call timing
// file, the breakpoints or the list of sizes. Its textOut has no rows, only aux (the refusal
// when it comes alone) and a note, and for breakpoints the breaks.
func readSimGridAux(r *textReader, kind string, data []byte) (*textOut, error) {
	o := newTextOut("SimGrid calibration")
	var what string
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
		lines, err := splitLines(r.path, data)
		if err != nil {
			return nil, err
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
				return nil, r.errAt(l.n, "", ErrWrongType, `%q: a list of calibration sizes has "Operation, size" lines`, truncate(text, 40))
			}
			if ops[m[1]] == 0 {
				order = append(order, m[1])
			}
			ops[m[1]]++
		}
		parts := make([]string, len(order))
		for i, op := range order {
			parts[i] = fmt.Sprintf("%s %d", op, ops[op])
		}
		what = fmt.Sprintf("the list of operations and message sizes given to SimGrid's calibration program (%s): its input, not a measurement", strings.Join(parts, ", "))
	case "calls":
		s, err := readSimGridCalls(r, data)
		if err != nil {
			return nil, err
		}
		what = s
	}
	o.aux = inputErr(Location{File: r.path}, "", ErrUnsupported,
		"%s; it holds no transfer times: ingest it with the calibration's *_PingPong.csv (the whole output directory)", what)
	o.notes = append(o.notes, what)
	return o, nil
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
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", csvErr(r.path, err)
		}
		l, _ := cr.FieldPos(0)
		line := int64(l)
		name := strings.TrimSpace(rec[0])
		switch {
		case op == "":
			op = name
		case name != op:
			return "", r.errAt(line, "operation", ErrWrongType, "%s in a file of %s timings: a calibration file times one operation", name, op)
		}
		size, err := r.parseSize(line, "size", strings.TrimSpace(rec[1]))
		if err != nil {
			return "", err
		}
		if _, err := r.parseFloat(line, "start", strings.TrimSpace(rec[2])); err != nil {
			return "", err
		}
		d, err := r.parseFloat(line, "duration", strings.TrimSpace(rec[3]))
		if err != nil {
			return "", err
		}
		if d < 0 {
			return "", r.errAt(line, "duration", ErrNegative, "got %s, want ≥ 0", formatFloat(d))
		}
		durs = append(durs, d)
		minSz, maxSz = min(minSz, size), max(maxSz, size)
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
		len(durs), op, what, sizes, formatFloat(durs[len(durs)/2])), nil
}

func formatSizes(v []float64) []string {
	out := make([]string, len(v))
	for i, x := range v {
		out[i] = formatFloat(x)
	}
	return out
}
