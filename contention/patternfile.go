package contention

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ReadPatternFile reads the transfers of one pattern, all starting together, from a file:
//
//   - CSV with a header naming src (or src_node), dst (or dst_node) and bytes; other columns
//     are ignored;
//   - JSON, either {"flows": [{"src": "X1", "dst": "Y2", "bytes": 1e7}, ...]} or the bare list.
//
// Errors name the file and the line (CSV) or the transfer (JSON).
func ReadPatternFile(path string) ([]Flow, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	trimmed := bytes.TrimSpace(data)
	if strings.EqualFold(filepath.Ext(path), ".json") || bytes.HasPrefix(trimmed, []byte("{")) || bytes.HasPrefix(trimmed, []byte("[")) {
		return parsePatternJSON(path, trimmed)
	}
	return parsePatternCSV(path, data)
}

type jsonFlow struct {
	Src   string  `json:"src"`
	Dst   string  `json:"dst"`
	Bytes float64 `json:"bytes"`
}

func parsePatternJSON(path string, data []byte) ([]Flow, error) {
	var list []jsonFlow
	if bytes.HasPrefix(data, []byte("{")) {
		var doc struct {
			Flows []jsonFlow `json:"flows"`
		}
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&doc); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		list = doc.Flows
	} else {
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&list); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	flows := make([]Flow, len(list))
	for i, f := range list {
		if f.Src == "" || f.Dst == "" || !(f.Bytes > 0) {
			return nil, fmt.Errorf("%s: transfer %d: want src, dst and a positive bytes, got %+v", path, i, f)
		}
		flows[i] = Flow(f)
	}
	if len(flows) == 0 {
		return nil, fmt.Errorf("%s: no transfers", path)
	}
	return flows, nil
}

func parsePatternCSV(path string, data []byte) ([]Flow, error) {
	r := csv.NewReader(bytes.NewReader(data))
	header, err := r.Read()
	if err != nil {
		return nil, fmt.Errorf("%s: no header line: %w", path, err)
	}
	col := map[string]int{}
	for i, h := range header {
		col[strings.TrimSpace(h)] = i
	}
	find := func(names ...string) (int, error) {
		for _, n := range names {
			if i, ok := col[n]; ok {
				return i, nil
			}
		}
		return 0, fmt.Errorf("%s: line 1: no column %s", path, strings.Join(names, " or "))
	}
	si, err := find("src", "src_node")
	if err != nil {
		return nil, err
	}
	di, err := find("dst", "dst_node")
	if err != nil {
		return nil, err
	}
	bi, err := find("bytes")
	if err != nil {
		return nil, err
	}
	var flows []Flow
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		line, _ := r.FieldPos(0)
		b, err := strconv.ParseFloat(strings.TrimSpace(rec[bi]), 64)
		if err != nil || !(b > 0) {
			return nil, fmt.Errorf("%s: line %d, column %q: %q is not a positive number of bytes", path, line, header[bi], rec[bi])
		}
		flows = append(flows, Flow{Src: strings.TrimSpace(rec[si]), Dst: strings.TrimSpace(rec[di]), Bytes: b})
	}
	if len(flows) == 0 {
		return nil, fmt.Errorf("%s: no transfers", path)
	}
	return flows, nil
}
