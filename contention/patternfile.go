package contention

import (
	"bufio"
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

// Ceilings of the patterns read from files and generated for predict, checked before a
// transfer is kept.
const (
	// MaxTransferBytes bounds a transfer's size: a pebibyte, beyond any one message, yet far
	// from where a float64 stops holding whole bytes (2⁵³) or bytes × 8 / rate overflows, so
	// that every predicted time is finite.
	MaxTransferBytes = 1 << 50
	// MaxPatternTransfers bounds the transfers of one pattern file, size matrix or generated
	// workload, counted before they are held: ten million transfers (an all-to-all of 3,162
	// nodes) take about a gigabyte to hold and predict.
	MaxPatternTransfers = 10_000_000
)

// ParseBytes parses a transfer size as pattern files and workloads write it, in integer or
// floating-point notation (4194304, 4e6): a whole number of bytes from least (0 or 1) to
// MaxTransferBytes. The error says what is wrong, quoting s cut to badinput.MaxQuote.
func ParseBytes(s string, least float64) (float64, error) {
	b, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	switch {
	case errors.Is(err, strconv.ErrRange) && b != 0 || math.IsInf(b, 0):
		return 0, fmt.Errorf("%s is outside %g to %d bytes", badinput.Quote(s), least, int64(MaxTransferBytes))
	case err != nil || math.IsNaN(b):
		return 0, fmt.Errorf("%s is not a number of bytes", badinput.Quote(s))
	case b != math.Trunc(b):
		return 0, fmt.Errorf("%s is not a whole number of bytes", badinput.Quote(s))
	case b < least || b > MaxTransferBytes:
		return 0, fmt.Errorf("%s is outside %g to %d bytes", badinput.Quote(s), least, int64(MaxTransferBytes))
	}
	return b, nil
}

// checkBytes checks a transfer size read as a JSON number as ParseBytes checks text.
func checkBytes(b float64) error {
	_, err := ParseBytes(strconv.FormatFloat(b, 'g', -1, 64), 1)
	return err
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
// Every transfer needs two different node names without control characters and a whole
// number of bytes from 1 to MaxTransferBytes; a file or pattern without transfers, or one of
// more than MaxPatternTransfers, is an error. Whether the nodes
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
	total := 0
	for _, jp := range pats {
		if total += len(jp.Flows); total > MaxPatternTransfers {
			return nil, badinput.Errorf(path, "contention: more than %d transfers in one file", MaxPatternTransfers)
		}
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
			if f.Bytes == 0 {
				return nil, badinput.Errorf(path, "contention: %s.bytes: 0 (or missing), want a whole number of bytes from 1 to %d", key, int64(MaxTransferBytes))
			}
			if err := checkBytes(f.Bytes); err != nil {
				return nil, badinput.Errorf(path, "contention: %s.bytes: %v", key, err)
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

// csvColumns are the columns of a pattern CSV file: its header, and the indices of src, dst,
// bytes and the optional pattern column (−1 when absent).
type csvColumns struct {
	header              []string
	src, dst, bytes, id int
}

// readPatternHeader reads a pattern CSV file's header and finds its columns (case does not
// matter; src or src_node, dst or dst_node, bytes, and pattern or pattern_id, each once).
func readPatternHeader(path string, r *csv.Reader) (csvColumns, error) {
	header, err := r.Read()
	if err != nil {
		return csvColumns{}, badinput.Errorf(path, "contention: header: %s", csvProblem(err, 0))
	}
	cols := csvColumns{header: append([]string(nil), header...), id: -1}
	col := map[string]int{}
	for i, h := range cols.header {
		name := strings.ToLower(strings.TrimSpace(h))
		cols.header[i] = strings.TrimSpace(h)
		if prev, ok := col[name]; ok {
			return csvColumns{}, badinput.Errorf(path, "contention: line 1, column %d: column %q repeats column %d; a header names each column once", i+1, cols.header[i], prev+1)
		}
		col[name] = i
	}
	find := func(names ...string) (int, error) {
		at := -1
		for _, n := range names {
			if i, ok := col[n]; ok {
				if at >= 0 {
					return 0, badinput.Errorf(path, "contention: line 1: both %q and %q columns; give one", cols.header[at], cols.header[i])
				}
				at = i
			}
		}
		if at < 0 {
			return 0, badinput.Errorf(path, "contention: line 1: no column %s (the header is %q)", strings.Join(names, " or "), strings.Join(cols.header, ","))
		}
		return at, nil
	}
	for _, c := range []struct {
		at    *int
		names []string
	}{{&cols.src, []string{"src", "src_node"}}, {&cols.dst, []string{"dst", "dst_node"}}, {&cols.bytes, []string{"bytes"}}} {
		if *c.at, err = find(c.names...); err != nil {
			return csvColumns{}, err
		}
	}
	_, p1 := col["pattern"]
	_, p2 := col["pattern_id"]
	if p1 || p2 {
		if cols.id, err = find("pattern", "pattern_id"); err != nil {
			return csvColumns{}, err // both: which names the patterns is not said
		}
	}
	return cols, nil
}

func parsePatternCSV(path string, data []byte) ([]Pattern, error) {
	r := csv.NewReader(bytes.NewReader(data))
	r.ReuseRecord = true
	cols, err := readPatternHeader(path, r)
	if err != nil {
		return nil, err
	}
	header, si, di, bi, pi := cols.header, cols.src, cols.dst, cols.bytes, cols.id
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
		if row > MaxPatternTransfers {
			return nil, badinput.Errorf(path, "contention: %s: more than %d transfers in one file", at(bi), MaxPatternTransfers)
		}
		b, err := ParseBytes(rec[bi], 1)
		if err != nil {
			return nil, badinput.Errorf(path, "contention: %s: %v", at(bi), err)
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

// nodeNameProblem says what is wrong with a node name, or "": empty, or what the cluster
// description refuses in a name (cluster.NameTextProblem: too long, not UTF-8, a control or
// format character), so that such a name can never match a node.
func nodeNameProblem(s string) string {
	if s == "" {
		return "is empty, want a node name"
	}
	return cluster.NameTextProblem(s)
}

// oneLine keeps a library's message on one line.
func oneLine(s string) string {
	return strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ").Replace(s)
}

// ReadSizeMatrix reads an Alltoallv size matrix, a pattern of the given experiment: a CSV
// header "src,<node>,<node>,..." and a row "<node>,<bytes>,<bytes>,..." per node of the header,
// in any order (0: no transfer; a node's own cell is not a transfer, as an MPI library copies
// it in memory). Its ID is the file's base name. Every node of the header needs its row and
// every row's node its column, each once; every cell is a whole number of bytes from 0 to
// MaxTransferBytes; a matrix of more than MaxPatternTransfers transfers, or of none, is
// refused. Errors are bad input naming the file, the line and the column.
func ReadSizeMatrix(path, experiment string) (Pattern, error) {
	f, err := os.Open(path)
	if err != nil {
		return Pattern{}, badinput.Errorf(path, "contention: %v", err)
	}
	defer f.Close()
	// A spreadsheet's byte-order mark goes before the whole file, as for pattern files.
	br := bufio.NewReader(f)
	if head, _ := br.Peek(len(utf8BOM)); bytes.Equal(head, utf8BOM) {
		br.Discard(len(utf8BOM))
	}
	r := csv.NewReader(br)
	header, err := r.Read()
	if err != nil {
		return Pattern{}, badinput.Errorf(path, "contention: header: %s", csvProblem(err, 0))
	}
	if len(header) < 3 {
		return Pattern{}, badinput.Errorf(path, "contention: line 1: want a header \"src,<node>,<node>,...\" naming at least two nodes")
	}
	dsts, cols, err := matrixColumns(path, header[1:])
	if err != nil {
		return Pattern{}, err
	}
	p := Pattern{ID: patternName(path), Experiment: experiment}
	rows := map[string]int{} // node → the line of its row
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return Pattern{}, badinput.Errorf(path, "contention: %s", csvProblem(err, len(rows)+1))
		}
		line, _ := r.FieldPos(0)
		src := strings.TrimSpace(rec[0])
		if _, ok := cols[src]; !ok {
			return Pattern{}, badinput.Errorf(path, "contention: line %d, column 1: node %s has a row but no column; the header names every node of the matrix", line, badinput.Quote(src))
		}
		if prev, ok := rows[src]; ok {
			return Pattern{}, badinput.Errorf(path, "contention: line %d, column 1: node %s already sends on line %d; give each node one row", line, badinput.Quote(src), prev)
		}
		rows[src] = line
		for c, cell := range rec[1:] {
			b, err := ParseBytes(cell, 0)
			if err != nil {
				return Pattern{}, badinput.Errorf(path, "contention: line %d, column %d (to %s): %v", line, c+2, badinput.Quote(dsts[c]), err)
			}
			if b > 0 && src != dsts[c] {
				if len(p.Flows) == MaxPatternTransfers {
					return Pattern{}, badinput.Errorf(path, "contention: line %d: more than %d transfers in one matrix", line, MaxPatternTransfers)
				}
				p.Flows = append(p.Flows, Flow{Src: src, Dst: dsts[c], Bytes: b})
			}
		}
	}
	for i, d := range dsts {
		if _, ok := rows[d]; !ok {
			return Pattern{}, badinput.Errorf(path, "contention: line 1, column %d: node %s heads a column but has no row; give every node a row (0 for no transfer)", i+2, badinput.Quote(d))
		}
	}
	if len(p.Flows) == 0 {
		return Pattern{}, badinput.Errorf(path, "contention: the matrix has no transfer")
	}
	return p, nil
}

// matrixColumns reads the nodes heading a size matrix's columns: names without control
// characters, each once. cols maps each to its index.
func matrixColumns(path string, heads []string) (dsts []string, cols map[string]int, err error) {
	cols = map[string]int{}
	dsts = make([]string, len(heads))
	for i, h := range heads {
		d := strings.TrimSpace(h)
		if p := nodeNameProblem(d); p != "" {
			return nil, nil, badinput.Errorf(path, "contention: line 1, column %d: %s %s", i+2, badinput.Quote(h), p)
		}
		if prev, ok := cols[d]; ok {
			return nil, nil, badinput.Errorf(path, "contention: line 1: node %s heads columns %d and %d; name each node once", badinput.Quote(d), prev+2, i+2)
		}
		dsts[i], cols[d] = d, i
	}
	return dsts, cols, nil
}
