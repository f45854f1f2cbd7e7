package datasets

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// csvText writes transfers as CSV with the given column order, quoting every field when
// quote is set, with the line end eol.
func csvText(rows []Transfer, order []string, quote bool, eol string) string {
	var b strings.Builder
	field := func(s string) string {
		if quote {
			return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
		}
		return s
	}
	for i, c := range order {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(field(c))
	}
	b.WriteString(eol)
	for _, r := range rows {
		v := map[string]string{"cluster": r.Cluster, "experiment": r.Experiment, "pattern_id": r.PatternID,
			"rep": fmt.Sprint(r.Rep), "flow_id": fmt.Sprint(r.FlowID), "src_node": r.Src, "dst_node": r.Dst,
			"bytes": fmt.Sprint(r.Bytes), "t_start_s": formatFloat(r.TStart), "t_end_s": formatFloat(r.TEnd), "note": "x"}
		for i, c := range order {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(field(v[c]))
		}
		b.WriteString(eol)
	}
	return b.String()
}

var transferColumns = []string{"cluster", "experiment", "pattern_id", "rep", "flow_id", "src_node", "dst_node", "bytes", "t_start_s", "t_end_s"}

// Valid but unusual CSV is read: what Excel saves as "CSV UTF-8" (a byte-order mark and
// quoted header fields, CRLF), columns in any order with an extra one.
func TestCSVUnusualButValid(t *testing.T) {
	cl := testCluster(t, "ccpe-testbed")
	rows := genTransfers(cl, 40, 21)
	shuffled := []string{"t_end_s", "note", "dst_node", "bytes", "cluster", "flow_id", "rep", "pattern_id", "src_node", "experiment", "t_start_s"}
	cases := map[string]string{
		"plain":                   csvText(rows, transferColumns, false, "\n"),
		"Excel CSV UTF-8":         "\ufeff" + csvText(rows, transferColumns, true, "\r\n"),
		"BOM, unquoted":           "\ufeff" + csvText(rows, transferColumns, false, "\n"),
		"CRLF":                    csvText(rows, transferColumns, false, "\r\n"),
		"columns in any order":    csvText(rows, shuffled, false, "\n"),
		"any order, quoted, BOM":  "\ufeff" + csvText(rows, shuffled, true, "\r\n"),
		"no final line end, CRLF": strings.TrimSuffix(csvText(rows, transferColumns, false, "\r\n"), "\r\n"),
	}
	for name, text := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := ingestFile(t, cl, "t.csv", []byte(text), Source{})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, rows) {
				t.Errorf("read %d rows that differ from the %d written", len(got), len(rows))
			}
		})
	}
}

// A column named twice is refused, naming the column (today the last one silently won).
func TestCSVDuplicateColumn(t *testing.T) {
	cl := testCluster(t, "ccpe-testbed")
	rows := genTransfers(cl, 3, 22)
	for _, order := range [][]string{
		append(append([]string{}, transferColumns...), "src_node"),
		append([]string{"bytes"}, transferColumns...),
		append(append([]string{}, transferColumns...), "note", "note"),
	} {
		text := csvText(rows, order, false, "\n")
		_, err := ingestFile(t, cl, "t.csv", []byte(text), Source{})
		ie := wantKind(t, err, ErrDuplicateColumn)
		if ie.Column != order[len(order)-1] && ie.Column != order[0] || ie.Loc.Line != 1 {
			t.Errorf("%v: %v", order, err)
		}
	}
}

// A control character or bytes that are not UTF-8 in any string column are refused, with the
// row and the column, whichever table and format the row comes from.
func TestControlCharacters(t *testing.T) {
	cl := testCluster(t, "ccpe-testbed")
	base := genTransfers(cl, 4, 23)
	// In the middle of the value: white space around a CSV field is trimmed.
	bads := map[string]string{"NUL": "X1\x00", "newline": "X\n1", "CR": "X\r1", "tab": "X\t1", "DEL": "X1\x7f", "C1": "X\u00851", "line separator": "X\u20281", "not UTF-8": "X1\xff"}
	for _, col := range []string{"cluster", "experiment", "pattern_id", "src_node", "dst_node"} {
		for what, v := range bads {
			t.Run(col+"/"+what, func(t *testing.T) {
				rows := append([]Transfer(nil), base...)
				r := &rows[2]
				switch col {
				case "cluster":
					r.Cluster = v
				case "experiment":
					r.Experiment = v
				case "pattern_id":
					r.PatternID = v
				case "src_node":
					r.Src = v
				case "dst_node":
					r.Dst = v
				}
				for _, format := range []string{"csv", "parquet"} {
					var data []byte
					if format == "csv" {
						data = []byte(csvText(rows, transferColumns, true, "\n"))
					} else {
						rec := RecordFromRows(TransfersTable, rows, memory.DefaultAllocator)
						data = writeArrow(t, rec, nil, pqarrow.DefaultWriterProps())
						rec.Release()
					}
					_, err := ingestFile(t, cl, "t."+format, data, Source{})
					ie := wantKind(t, err, ErrControlChar)
					if ie.Column != col || ie.Loc.Row != 3 {
						t.Errorf("%s: %v", format, err)
					}
				}
			})
		}
	}
	// Other tables' string columns, from CSV.
	for _, c := range []struct{ header, row, col string }{
		{"cluster,i,j,bytes_out,bytes_back,rep,seconds", "ccpe-testbed,X1,\"X\x002\",0,0,0,1e-4", "j"},
		{"cluster,root,j,k,bytes,rep,seconds", "ccpe-testbed,\"X\n1\",X2,X3,10,1,1e-3", "root"},
		{"cluster,root,j,k,bytes,rep,seconds", "ccpe-testbed,X1,X2,X\x013,10,1,1e-3", "k"},
		{"cluster,op,root,procs,bytes,rep,seconds", "ccpe-\x1btestbed,gather,X1,4,0,0,0.1", "cluster"},
	} {
		text := c.header + "\nccpe-testbed,X1,X2,X3,10,0,1e-3\n"
		if strings.HasPrefix(c.header, "cluster,i,") {
			text = c.header + "\nccpe-testbed,X1,X2,0,0,1,1e-4\n"
		}
		if strings.HasPrefix(c.header, "cluster,op") {
			text = c.header + "\nccpe-testbed,gather,X1,4,0,1,0.1\n"
		}
		text += c.row + "\n"
		_, err := ingestFile(t, cl, "t.csv", []byte(text), Source{})
		if ie := wantKind(t, err, ErrControlChar); ie.Column != c.col || ie.Loc.Row != 2 {
			t.Errorf("%s: %v", c.header, err)
		}
	}
	// Good names with non-ASCII letters are fine.
	if got := badText("nœud-ü-1"); got != "" {
		t.Errorf("badText refused a UTF-8 name: %s", got)
	}
	if !bytes.Contains([]byte(badText("a\x00b")), []byte("U+0000 at byte 1")) {
		t.Errorf("badText(NUL) = %q", badText("a\x00b"))
	}
}
