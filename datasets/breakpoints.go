package datasets

import (
	"bytes"
	"encoding/csv"
	"errors"
	"io"
	"math"
	"strconv"
	"strings"
)

// ReadBreakpoints reads the message sizes at which an MPI stack switches protocols, as
// SimGrid's platform-calibration writes them in its *_breakpoints file: a CSV with a header
// ("Limit, Name") and a row per limit ("65536, Asynchronous"); only the first column is read.
// The sizes come back ascending and distinct. Problems are *InputError naming the line.
func ReadBreakpoints(path string) ([]float64, error) {
	data, err := readInputFile(path)
	if err != nil {
		return nil, err
	}
	return parseBreakpoints(path, data)
}

// parseBreakpoints reads a breakpoints file's content; path names it in errors.
func parseBreakpoints(path string, data []byte) ([]float64, error) {
	r := csv.NewReader(bytes.NewReader(bytes.TrimPrefix(data, utf8BOM)))
	r.FieldsPerRecord = -1
	r.TrimLeadingSpace = true
	var sizes []float64
	for line := 1; ; line++ {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, inputErr(Location{File: path, Line: int64(line)}, "", ErrCorrupt, "%v", err)
		}
		field := strings.TrimSpace(rec[0])
		if field == "" || strings.HasPrefix(field, "#") {
			continue
		}
		v, err := strconv.ParseFloat(field, 64)
		if err != nil {
			if line == 1 || len(sizes) == 0 && strings.EqualFold(field, "limit") {
				continue // the header
			}
			return nil, inputErr(Location{File: path, Line: int64(line)}, "Limit", ErrWrongType, "%s is not a message size", quote(field))
		}
		if !(v > 0) || math.IsInf(v, 0) {
			return nil, inputErr(Location{File: path, Line: int64(line)}, "Limit", ErrNonPositive, "%g is not a positive message size", v)
		}
		if len(sizes) > 0 && v <= sizes[len(sizes)-1] {
			return nil, inputErr(Location{File: path, Line: int64(line)}, "Limit", ErrNotIncreasing, "%g B does not come after %g B: limits are listed in increasing order", v, sizes[len(sizes)-1])
		}
		sizes = append(sizes, v)
	}
	if len(sizes) == 0 {
		return nil, inputErr(Location{File: path}, "", ErrEmptyFile, "no breakpoint")
	}
	return sizes, nil
}
