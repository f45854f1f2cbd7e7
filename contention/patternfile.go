package contention

import (
	"bytes"
	"cmp"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/internal/badinput"
	"github.com/commcal/commcal/internal/strictjson"
)

// Pattern is a set of transfers that start together.
type Pattern struct {
	// ID names the pattern within its experiment; random patterns encode their setting in it
	// (see RandomSetting).
	ID         string
	Experiment string
	Flows      []Flow
}

// ReadPatterns reads one or several patterns, each a set of transfers that start together,
// from a file:
//
//   - CSV with a header naming src (or src_node), dst (or dst_node) and bytes, in any order
//     and any case, and optionally pattern (or pattern_id) grouping the rows into patterns
//     (in the order they first appear); other columns are ignored. Excel's "CSV UTF-8" is
//     accepted: a byte-order mark, quoted fields, CRLF line ends.
//   - JSON: {"flows": [{"src": "X1", "dst": "Y2", "bytes": 1e7}, ...]}, the bare list, or
//     {"patterns": [{"id": "a", "flows": [...]}, ...]}: one document, no key twice, no
//     unknown key.
//
// Every transfer needs two different node names without control characters and a positive,
// finite number of bytes; a file or pattern without transfers is an error. Whether the nodes
// exist is the cluster's business: the models check it (and say which transfer). A file of
// one pattern gives it the file's base name as ID.
//
// Errors caused by the file are bad input (internal/badinput), on one line, naming the file
// and the line, row and column (CSV: `p.csv: line 3 (row 2), column "bytes": ...`) or the
// transfer's key (JSON: `p.json: flows[1].src: ...`).
func ReadPatterns(path string) ([]Pattern, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		var pe *fs.PathError
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil, badinput.Errorf(path, "contention: pattern file does not exist")
		case errors.As(err, &pe) && pe.Err != nil && strings.Contains(pe.Err.Error(), "is a directory"):
			return nil, badinput.Errorf(path, "contention: is a directory, want a CSV or JSON pattern file")
		}
		return nil, fmt.Errorf("contention: %w", err)
	}
	return parsePatterns(path, data)
}

// ReadPatternFile reads a file of one pattern (see ReadPatterns) and returns its transfers.
func ReadPatternFile(path string) ([]Flow, error) {
	pats, err := ReadPatterns(path)
	if err != nil {
		return nil, err
	}
	if len(pats) != 1 {
		return nil, badinput.Errorf(path, "contention: %d patterns in the file, want one", len(pats))
	}
	return pats[0].Flows, nil
}

// utf8BOM is the byte-order mark spreadsheet programs put at the start of UTF-8 files.
var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// parsePatterns reads a pattern file's content; path names it in errors and its extension
// chooses JSON (.json, or content that starts with { or [) or CSV.
func parsePatterns(path string, data []byte) ([]Pattern, error) {
	data = bytes.TrimPrefix(data, utf8BOM)
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, badinput.Errorf(path, "contention: empty pattern file, want a CSV header (src,dst,bytes) and transfers, or JSON")
	}
	if strings.EqualFold(filepath.Ext(path), ".json") || trimmed[0] == '{' || trimmed[0] == '[' {
		return parsePatternJSON(path, data)
	}
	return parsePatternCSV(path, data)
}

type jsonFlow struct {
	Src   string  `json:"src"`
	Dst   string  `json:"dst"`
	Bytes float64 `json:"bytes"`
}

type jsonPattern struct {
	ID    string     `json:"id"`
	Flows []jsonFlow `json:"flows"`
}

func parsePatternJSON(path string, data []byte) ([]Pattern, error) {
	var pats []jsonPattern
	prefix := "" // the key of a pattern's list, as messages name a transfer
	if bytes.HasPrefix(bytes.TrimSpace(data), []byte("{")) {
		var doc struct {
			Flows    []jsonFlow    `json:"flows"`
			Patterns []jsonPattern `json:"patterns"`
		}
		if err := strictjson.Decode(data, &doc); err != nil {
			return nil, badinput.Errorf(path, "contention: %s", oneLine(err.Error()))
		}
		switch {
		case doc.Flows != nil && doc.Patterns != nil:
			return nil, badinput.Errorf(path, "contention: both \"flows\" and \"patterns\"; give one")
		case doc.Patterns != nil:
			pats, prefix = doc.Patterns, "patterns[%d].flows"
		default:
			pats, prefix = []jsonPattern{{Flows: doc.Flows}}, "flows"
		}
	} else {
		var list []jsonFlow
		if err := strictjson.Decode(data, &list); err != nil {
			return nil, badinput.Errorf(path, "contention: %s", oneLine(err.Error()))
		}
		pats = []jsonPattern{{Flows: list}}
	}
	if len(pats) == 0 {
		return nil, badinput.Errorf(path, "contention: no patterns")
	}
	out := make([]Pattern, len(pats))
	seen := map[string]bool{}
	for pi, jp := range pats {
		listKey := prefix
		if strings.Contains(prefix, "%d") {
			listKey = fmt.Sprintf(prefix, pi)
			if jp.ID == "" || seen[jp.ID] {
				return nil, badinput.Errorf(path, "contention: patterns[%d].id: %q is empty or repeats an earlier pattern's", pi, jp.ID)
			}
			seen[jp.ID] = true
		}
		if len(jp.Flows) == 0 {
			return nil, badinput.Errorf(path, "contention: %s: no transfers (want a non-empty list of {\"src\", \"dst\", \"bytes\"})", listKey)
		}
		flows := make([]Flow, len(jp.Flows))
		for i, f := range jp.Flows {
			key := fmt.Sprintf("%s[%d]", listKey, i)
			if p := nodeNameProblem(f.Src); p != "" {
				return nil, badinput.Errorf(path, "contention: %s.src: %q %s", key, f.Src, p)
			}
			if p := nodeNameProblem(f.Dst); p != "" {
				return nil, badinput.Errorf(path, "contention: %s.dst: %q %s", key, f.Dst, p)
			}
			if f.Src == f.Dst {
				return nil, badinput.Errorf(path, "contention: %s: src and dst are the same node %q", key, f.Src)
			}
			if !(f.Bytes > 0) || math.IsInf(f.Bytes, 0) {
				return nil, badinput.Errorf(path, "contention: %s.bytes: %g (or missing), want a positive finite number of bytes", key, f.Bytes)
			}
			flows[i] = Flow(f)
		}
		out[pi] = Pattern{ID: cmp.Or(jp.ID, patternName(path)), Flows: flows}
	}
	return out, nil
}

// patternName is the ID of a file's only pattern: its base name without extension.
func patternName(path string) string {
	return strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
}

func parsePatternCSV(path string, data []byte) ([]Pattern, error) {
	r := csv.NewReader(bytes.NewReader(data))
	r.ReuseRecord = true
	header, err := r.Read()
	if err != nil {
		return nil, badinput.Errorf(path, "contention: header: %s", csvProblem(err, 0))
	}
	header = append([]string(nil), header...)
	col := map[string]int{}
	for i, h := range header {
		name := strings.ToLower(strings.TrimSpace(h))
		header[i] = strings.TrimSpace(h)
		if prev, ok := col[name]; ok {
			return nil, badinput.Errorf(path, "contention: line 1, column %d: column %q repeats column %d; a header names each column once", i+1, header[i], prev+1)
		}
		col[name] = i
	}
	find := func(names ...string) (int, error) {
		at := -1
		for _, n := range names {
			if i, ok := col[n]; ok {
				if at >= 0 {
					return 0, badinput.Errorf(path, "contention: line 1: both %q and %q columns; give one", header[at], header[i])
				}
				at = i
			}
		}
		if at < 0 {
			return 0, badinput.Errorf(path, "contention: line 1: no column %s (the header is %q)", strings.Join(names, " or "), strings.Join(header, ","))
		}
		return at, nil
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
	pi := -1 // the optional pattern column
	if _, ok1 := col["pattern"]; ok1 {
		pi, _ = find("pattern", "pattern_id")
	} else if _, ok2 := col["pattern_id"]; ok2 {
		pi, _ = find("pattern_id")
	}
	var pats []Pattern
	index := map[string]int{}
	for row := 1; ; row++ {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, badinput.Errorf(path, "contention: %s", csvProblem(err, row))
		}
		line, _ := r.FieldPos(0)
		at := func(c int) string { return fmt.Sprintf("line %d (row %d), column %q", line, row, header[c]) }
		src, dst := strings.TrimSpace(rec[si]), strings.TrimSpace(rec[di])
		if p := nodeNameProblem(src); p != "" {
			return nil, badinput.Errorf(path, "contention: %s: %q %s", at(si), rec[si], p)
		}
		if p := nodeNameProblem(dst); p != "" {
			return nil, badinput.Errorf(path, "contention: %s: %q %s", at(di), rec[di], p)
		}
		if src == dst {
			return nil, badinput.Errorf(path, "contention: %s: src and dst are the same node %q", at(di), dst)
		}
		b, err := strconv.ParseFloat(strings.TrimSpace(rec[bi]), 64)
		if err != nil || !(b > 0) || math.IsInf(b, 0) {
			return nil, badinput.Errorf(path, "contention: %s: %q is not a positive finite number of bytes", at(bi), rec[bi])
		}
		id := patternName(path)
		if pi >= 0 {
			if id = strings.TrimSpace(rec[pi]); id == "" || nodeNameProblem(id) != "" {
				return nil, badinput.Errorf(path, "contention: %s: %q is not a pattern name", at(pi), rec[pi])
			}
		}
		k, ok := index[id]
		if !ok {
			k = len(pats)
			index[id] = k
			pats = append(pats, Pattern{ID: id})
		}
		pats[k].Flows = append(pats[k].Flows, Flow{Src: src, Dst: dst, Bytes: b})
	}
	if len(pats) == 0 {
		return nil, badinput.Errorf(path, "contention: no transfers after the header")
	}
	return pats, nil
}

// csvProblem describes an encoding/csv error with its line, the data row (0 for the header)
// and the column.
func csvProblem(err error, row int) string {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		at := fmt.Sprintf("line %d", pe.Line)
		if row > 0 {
			at += fmt.Sprintf(" (row %d)", row)
		}
		if errors.Is(pe.Err, csv.ErrFieldCount) {
			return at + ": a different number of fields than the header"
		}
		return fmt.Sprintf("%s, column %d: %v", at, pe.Column, pe.Err)
	}
	if errors.Is(err, io.EOF) {
		return "no header line"
	}
	return oneLine(err.Error())
}

// nodeNameProblem says what is wrong with a node name, or "": empty, not UTF-8, or holding a
// control or format character (NUL, newline, escape, bidirectional override). The cluster
// description refuses the same names, so such a name can never match a node.
func nodeNameProblem(s string) string {
	switch {
	case s == "":
		return "is empty, want a node name"
	case !utf8.ValidString(s):
		return "is not valid UTF-8"
	}
	if i, r := cluster.BadRune(s); i >= 0 {
		return fmt.Sprintf("contains the control character %U at byte %d", r, i)
	}
	return ""
}

// oneLine keeps a library's message on one line.
func oneLine(s string) string {
	return strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ").Replace(s)
}

// ReadSizeMatrix reads an Alltoallv size matrix, a pattern of the given experiment: a CSV
// header "src,<node>,<node>,..." and a row "<node>,<bytes>,<bytes>,..." per sending node (0: no
// transfer). Its ID is the file's base name.
func ReadSizeMatrix(path, experiment string) (Pattern, error) {
	f, err := os.Open(path)
	if err != nil {
		return Pattern{}, badinput.Errorf(path, "contention: %v", err)
	}
	defer f.Close()
	r := csv.NewReader(f)
	recs, err := r.ReadAll()
	if err != nil {
		return Pattern{}, badinput.Errorf(path, "contention: %s", csvProblem(err, 0))
	}
	if len(recs) < 2 || len(recs[0]) < 2 {
		return Pattern{}, badinput.Errorf(path, "contention: want a header \"src,<node>,...\" and a row per sending node")
	}
	dsts := recs[0][1:]
	seen := map[string]int{}
	for i := range dsts {
		dsts[i] = strings.TrimSpace(strings.TrimPrefix(dsts[i], "\ufeff"))
		if prev, ok := seen[dsts[i]]; ok {
			return Pattern{}, badinput.Errorf(path, "contention: line 1: node %q heads columns %d and %d; name each destination once", dsts[i], prev+2, i+2)
		}
		seen[dsts[i]] = i
	}
	p := Pattern{ID: patternName(path), Experiment: experiment}
	rows := map[string]int{}
	for row, rec := range recs[1:] {
		src := strings.TrimSpace(rec[0])
		if prev, ok := rows[src]; ok {
			return Pattern{}, badinput.Errorf(path, "contention: line %d: node %q already sends on line %d; give each source one row", row+2, src, prev)
		}
		rows[src] = row + 2
		for c, cell := range rec[1:] {
			b, err := strconv.ParseFloat(strings.TrimSpace(cell), 64)
			if err != nil || b < 0 || math.IsInf(b, 0) {
				return Pattern{}, badinput.Errorf(path, "contention: line %d, column %q: %q is not a number of bytes", row+2, dsts[c], cell)
			}
			if b > 0 && src != dsts[c] {
				p.Flows = append(p.Flows, Flow{Src: src, Dst: dsts[c], Bytes: b})
			}
		}
	}
	if len(p.Flows) == 0 {
		return Pattern{}, badinput.Errorf(path, "contention: the matrix has no transfer")
	}
	return p, nil
}
