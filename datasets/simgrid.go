package datasets

import (
	"encoding/csv"
	"errors"
	"io"
	"math"
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
// operations (MPI_Isend, MPI_Recv alone) time single calls and have no table here.
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
