package datasets

import (
	"bytes"
	"encoding/csv"
	"errors"
	"io"
	"strconv"
	"strings"
)

// csv reads a CSV file whose first line names the columns (any order; extra columns are
// ignored; a name given twice is an error) into the table those columns identify. What Excel
// writes as "CSV UTF-8" is read too: a byte-order mark before the header, quoted header
// fields, CRLF line ends.
func (ing *ingester) csv(src Source, r io.Reader, idx int32) (*Table, int64, error) {
	br := newBufReader(r)
	if head, _ := br.Peek(len(utf8BOM)); bytes.Equal(head, utf8BOM) {
		br.Discard(len(utf8BOM))
	}
	cr := csv.NewReader(br)
	cr.ReuseRecord = true
	header, err := cr.Read()
	if err != nil {
		return nil, 0, csvErr(src.Path, err)
	}
	header = append([]string(nil), header...)
	hloc := Location{File: src.Path, Line: 1}
	col := map[string]int{} // field index of each named column
	for hi, h := range header {
		h = strings.TrimSpace(h)
		header[hi] = h
		if h == "" {
			continue
		}
		if _, dup := col[h]; dup {
			return nil, 0, inputErr(hloc, h, ErrDuplicateColumn, "column %s appears more than once in the header", quote(h))
		}
		col[h] = hi
	}
	t, err := inferTable(hloc, header, src.Table)
	if err != nil {
		return nil, 0, err
	}
	pos := make([]int, len(t.Columns)) // field index of each table column
	for ci, c := range t.Columns {
		pos[ci] = col[c.Name]
	}
	rb := newRowBuilder(t, ing.opts.Mem)
	defer rb.release()
	b := batcher{ing: ing, t: t, rb: rb, file: src.Path, idx: idx, first: 1}
	var rows int64
	err = eachRecord(cr, src.Path, func(rec []string, line int64) error {
		rows++
		loc := Location{File: src.Path, Row: rows, Line: line}
		for ci, c := range t.Columns {
			if err := appendField(rb, ci, c, strings.TrimSpace(rec[pos[ci]]), loc); err != nil {
				return err
			}
		}
		return b.add(line)
	})
	if err != nil {
		return nil, 0, err
	}
	if rows == 0 {
		return nil, 0, inputErr(Location{File: src.Path}, "", ErrEmptyFile, "a header and no rows")
	}
	if err := b.finish(); err != nil {
		return nil, 0, err
	}
	return t, rows, nil
}

// appendField parses one text field as column c's type. NaN and ±Inf parse here and are
// rejected by the checks with their own error kinds.
func appendField(rb *rowBuilder, ci int, c Column, s string, loc Location) error {
	if s == "" {
		return inputErr(loc, c.Name, ErrMissingValue, "empty field")
	}
	switch c.Type {
	case String:
		rb.appendString(ci, s)
	case Int:
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return inputErr(loc, c.Name, ErrWrongType, "%s is not an integer", quote(s))
		}
		rb.appendInt(ci, v)
	case Float:
		v, err := strconv.ParseFloat(s, 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return inputErr(loc, c.Name, ErrWrongType, "%s is not a number", quote(s))
		}
		rb.appendFloat(ci, v)
	}
	return nil
}

// eachRecord calls fn with every record cr reads and the line it starts on, until the end
// of the file or fn's first error; a record encoding/csv cannot read is an input error of
// path (csvErr).
func eachRecord(cr *csv.Reader, path string, fn func(rec []string, line int64) error) error {
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return csvErr(path, err)
		}
		line, _ := cr.FieldPos(0)
		if err := fn(rec, int64(line)); err != nil {
			return err
		}
	}
}

// csvErr turns encoding/csv's errors into input errors with the line.
func csvErr(path string, err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		kind := ErrCorrupt
		if errors.Is(pe.Err, csv.ErrFieldCount) {
			kind = ErrRaggedRow
		}
		return inputErr(Location{File: path, Line: int64(pe.Line)}, "", kind, "%v", pe.Err)
	}
	if err == io.EOF {
		return inputErr(Location{File: path}, "", ErrEmptyFile, "no header line")
	}
	return inputErr(Location{File: path}, "", ErrCorrupt, "%v", err)
}
