package contention

import (
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/commcal/commcal/internal/badinput"
)

func writePattern(t *testing.T, name, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestPatternFilesAccepted: valid but unusual pattern files, such as Excel's "CSV UTF-8".
func TestPatternFilesAccepted(t *testing.T) {
	want := []Flow{{"X1", "Y2", 1e7}, {"Y1", "X3", 2.5e6}}
	cases := []struct{ name, file, text string }{
		{"plain CSV", "p.csv", "src,dst,bytes\nX1,Y2,10000000\nY1,X3,2500000\n"},
		{"Excel CSV UTF-8: BOM, quoted header, CRLF", "p.csv", "\ufeff\"src\",\"dst\",\"bytes\"\r\n\"X1\",\"Y2\",\"10000000\"\r\n\"Y1\",\"X3\",\"2.5e6\"\r\n"},
		{"BOM only", "p.csv", "\ufeffsrc,dst,bytes\nX1,Y2,1e7\nY1,X3,2.5e6"},
		{"columns in any order and case, extra columns, spaces", "p.csv", "Bytes, note ,DST_NODE,Src_Node\n1e7,first,Y2 , X1\n2500000,\"a, b\",X3,Y1\n"},
		{"JSON object", "p.json", `{"flows":[{"src":"X1","dst":"Y2","bytes":1e7},{"src":"Y1","dst":"X3","bytes":2500000}]}`},
		{"JSON list with a BOM, CRLF and no extension", "pattern", "\ufeff[\r\n{\"src\":\"X1\",\"dst\":\"Y2\",\"bytes\":1e7},\r\n{\"src\":\"Y1\",\"dst\":\"X3\",\"bytes\":2.5e6}\r\n]\r\n"},
	}
	for _, tc := range cases {
		got, err := ReadPatternFile(writePattern(t, tc.file, tc.text))
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %v, want %v", tc.name, got, want)
		}
	}
}

// TestPatternFilesRefused: every refusal is bad input on one line naming the file and, for
// CSV, the line, row and column, for JSON the key.
func TestPatternFilesRefused(t *testing.T) {
	cases := []struct {
		name, file, text string
		want             []string
	}{
		{"empty file", "p.csv", "", []string{"empty pattern file"}},
		{"blank file", "p.csv", " \r\n\n", []string{"empty pattern file"}},
		{"BOM only", "p.csv", "\ufeff", []string{"empty pattern file"}},
		{"header only", "p.csv", "src,dst,bytes\n", []string{"no transfers after the header"}},
		{"no bytes column", "p.csv", "src,dst,size\nX1,Y2,1\n", []string{"line 1: no column bytes", `"src,dst,size"`}},
		{"duplicate column", "p.csv", "src,dst,bytes,src\nX1,Y2,1,Y1\n", []string{`line 1, column 4: column "src" repeats column 1`}},
		{"duplicate column by case and spaces", "p.csv", "src,dst,bytes, BYTES\nX1,Y2,1,2\n", []string{`column 4: column "BYTES" repeats column 3`}},
		{"duplicate ignored column", "p.csv", "src,dst,bytes,note,note\nX1,Y2,1,a,b\n", []string{`column "note" repeats column 4`}},
		{"src and src_node", "p.csv", "src,src_node,dst,bytes\nX1,X1,Y2,1\n", []string{`both "src" and "src_node" columns`}},
		{"pattern and pattern_id", "p.csv", "src,dst,bytes,pattern,pattern_id\nX1,Y2,1,a,b\n", []string{`both "pattern" and "pattern_id" columns`}},
		{"ragged row", "p.csv", "src,dst,bytes\nX1,Y2,1\nX1,Y2\n", []string{"line 3 (row 2): a different number of fields than the header"}},
		{"bad quote", "p.csv", "src,dst,bytes\nX1,\"Y2,1\n", []string{"line 2 (row 1), column 10: extraneous"}},
		{"zero bytes", "p.csv", "src,dst,bytes\nX1,Y2,1\r\nX1,Y2,0\r\n", []string{`line 3 (row 2), column "bytes": "0" is outside 1 to 1125899906842624 bytes`}},
		{"fractional bytes", "p.csv", "src,dst,bytes\nX1,Y2,0.5\n", []string{`line 2 (row 1), column "bytes": "0.5" is not a whole number of bytes`}},
		{"bytes beyond the ceiling", "p.csv", "src,dst,bytes\nX1,Y2,1e308\n", []string{`column "bytes": "1e308" is outside 1 to 1125899906842624 bytes`}},
		{"JSON fractional bytes", "p.json", `[{"src":"X1","dst":"Y2","bytes":2.5}]`, []string{`[0].bytes: "2.5" is not a whole number of bytes`}},
		{"JSON bytes beyond the ceiling", "p.json", `[{"src":"X1","dst":"Y2","bytes":1e300}]`, []string{`[0].bytes: "1e+300" is outside 1 to 1125899906842624 bytes`}},
		{"negative bytes", "p.csv", "src,dst,bytes\nX1,Y2,-1\n", []string{`line 2 (row 1), column "bytes": "-1"`}},
		{"NaN bytes", "p.csv", "src,dst,bytes\nX1,Y2,NaN\n", []string{`column "bytes": "NaN"`}},
		{"infinite bytes", "p.csv", "src,dst,bytes\nX1,Y2,Inf\n", []string{`column "bytes": "Inf"`}},
		{"overflowing bytes", "p.csv", "src,dst,bytes\nX1,Y2,1e400\n", []string{`column "bytes": "1e400"`}},
		{"empty bytes", "p.csv", "src,dst,bytes\nX1,Y2,\n", []string{`column "bytes": ""`}},
		{"text bytes", "p.csv", "src,dst,bytes\nX1,Y2,ten\n", []string{`column "bytes": "ten"`}},
		{"empty src", "p.csv", "src,dst,bytes\n ,Y2,1\n", []string{`line 2 (row 1), column "src": " " is empty, want a node name`}},
		{"NUL in dst", "p.csv", "src,dst,bytes\nX1,Y\x002,1\n", []string{`line 2 (row 1), column "dst": "Y\x002" contains the control character U+0000 at byte 1`}},
		{"newline in a quoted src", "p.csv", "src,dst,bytes\n\"X\n1\",Y2,1\n", []string{`line 2 (row 1), column "src": "X\n1" contains the control character U+000A`}},
		{"invalid UTF-8", "p.csv", "src,dst,bytes\nX\xff,Y2,1\n", []string{`column "src"`, "not valid UTF-8"}},
		{"same node", "p.csv", "src,dst,bytes\nX1,X1,5\n", []string{`line 2 (row 1), column "dst": src and dst are the same node "X1"`}},
		{"JSON trailing document", "p.json", `{"flows":[{"src":"X1","dst":"Y2","bytes":1}]}` + "\n" + `{"flows":[]}`, []string{"line 2, column 1: more data after the end"}},
		{"JSON duplicate key in a flow", "p.json", `{"flows":[{"src":"X1","dst":"Y2","bytes":1},{"src":"X1","dst":"Y2","src":"Y1","bytes":1}]}`, []string{`key "src" appears twice in flows[1]`}},
		{"JSON duplicate flows", "p.json", `{"flows":[{"src":"X1","dst":"Y2","bytes":1}],"flows":[]}`, []string{`key "flows" appears twice in the top-level object`}},
		{"JSON keys differing in case", "p.json", `[{"src":"X1","dst":"Y2","bytes":1,"Bytes":2}]`, []string{`key "Bytes" repeats "bytes" in [0]`}},
		{"JSON unknown key", "p.json", `[{"src":"X1","dst":"Y2","bytes":1,"size":2}]`, []string{`unknown key "size"`}},
		{"JSON type", "p.json", `{"flows":[{"src":"X1","dst":"Y2","bytes":"1"}]}`, []string{"line 1, column 45: flows.bytes: JSON string, want a number that fits float64"}},
		{"JSON syntax", "p.json", "[\n{\"src\":\"X1\",}\n]", []string{"line 2, column"}},
		{"JSON truncated", "p.json", `[{"src":"X1"`, []string{"ends inside a JSON value"}},
		{"JSON empty list", "p.json", `{"flows":[]}`, []string{"no transfers"}},
		{"JSON null flows", "p.json", `{"flows":null}`, []string{"no transfers"}},
		{"JSON missing bytes", "p.json", `[{"src":"X1","dst":"Y2"}]`, []string{"[0].bytes: 0 (or missing)"}},
		{"JSON NUL in src", "p.json", `{"flows":[{"src":"X1","dst":"Y2","bytes":1},{"src":"X\u00001","dst":"Y2","bytes":1}]}`, []string{`flows[1].src: "X\x001" contains the control character U+0000`}},
		{"JSON empty dst", "p.json", `[{"src":"X1","dst":"","bytes":1}]`, []string{`[0].dst: "" is empty`}},
		{"JSON same node", "p.json", `[{"src":"X1","dst":"X1","bytes":1}]`, []string{`[0]: src and dst are the same node "X1"`}},
	}
	for _, tc := range cases {
		path := writePattern(t, tc.file, tc.text)
		_, err := ReadPatternFile(path)
		checkBadInput(t, tc.name, err, append([]string{path + ": contention: "}, tc.want...)...)
		if err != nil && !strings.HasPrefix(err.Error(), path+": ") {
			t.Errorf("%s: %q does not start with the file", tc.name, err)
		}
	}
	missing := filepath.Join(t.TempDir(), "none.csv")
	_, err := ReadPatternFile(missing)
	checkBadInput(t, "missing file", err, missing+": contention: pattern file does not exist")
	dir := t.TempDir()
	_, err = ReadPatternFile(dir)
	checkBadInput(t, "directory", err, dir+": contention: is a directory")
}

// FuzzReadPattern reads random CSV and JSON pattern files: no panic; a refusal is bad input on
// one line naming the file; an accepted pattern has transfers between two different, clean
// node names with a positive finite size.
func FuzzReadPattern(f *testing.F) {
	f.Add([]byte("src,dst,bytes\nX1,Y2,10000000\nY1,X3,2500000\n"), false)
	f.Add([]byte("\ufeff\"src\",\"dst\",\"bytes\"\r\n\"X1\",\"Y2\",\"1e7\"\r\n"), false)
	f.Add([]byte("bytes,dst_node,src_node,note\n1,a,b,\"x\ny\"\n"), false)
	f.Add([]byte("src,dst,bytes,src\nX1,Y2,1,Y1\n"), false)
	f.Add([]byte("src,dst,bytes\nX\x001,Y2,1\n"), false)
	f.Add([]byte(`{"flows":[{"src":"X1","dst":"Y2","bytes":1e7}]}`), true)
	f.Add([]byte(`[{"src":"X1","dst":"Y2","bytes":1e7},{"src":"Y2","dst":"X1","bytes":5}]`), true)
	f.Add([]byte(`{"flows":[{"src":"X1","dst":"Y2","bytes":1}]} {"flows":[]}`), true)
	f.Add([]byte(`{"flows":[{"src":"X1","src":"Y2","bytes":1}]}`), true)
	f.Add([]byte("pattern,src,dst,bytes\na,X1,Y2,1\nb,X1,Y2,2\na,Y1,X2,3\n"), false)
	f.Add([]byte(`{"patterns":[{"id":"a","flows":[{"src":"X1","dst":"Y2","bytes":1}]},{"id":"a","flows":[]}]}`), true)
	f.Fuzz(func(t *testing.T, data []byte, isJSON bool) {
		name := "fuzz.csv"
		if isJSON {
			name = "fuzz.json"
		}
		pats, err := parsePatterns(name, data)
		if err != nil {
			if !badinput.Is(err) || strings.ContainsAny(err.Error(), "\r\n") || !strings.HasPrefix(err.Error(), name+": contention: ") {
				t.Fatalf("error %q: want bad input on one line naming the file", err)
			}
			return
		}
		if len(pats) == 0 {
			t.Fatal("no patterns and no error")
		}
		ids := map[string]bool{}
		for _, p := range pats {
			if len(p.Flows) == 0 || p.ID == "" || ids[p.ID] {
				t.Fatalf("pattern %q accepted with %d transfers (IDs so far %v)", p.ID, len(p.Flows), ids)
			}
			ids[p.ID] = true
			for i, fl := range p.Flows {
				if nodeNameProblem(fl.Src) != "" || nodeNameProblem(fl.Dst) != "" || fl.Src == fl.Dst || !(fl.Bytes > 0) || math.IsInf(fl.Bytes, 0) {
					t.Fatalf("transfer %d accepted: %+v", i, fl)
				}
			}
		}
	})
}

func TestReadPatternsGroups(t *testing.T) {
	dir := t.TempDir()
	csvPath := filepath.Join(dir, "many.csv")
	os.WriteFile(csvPath, []byte("pattern,src,dst,bytes\nb,X1,Y2,1\na,X1,Y2,2\nb,Y1,X2,3\n"), 0o644)
	pats, err := ReadPatterns(csvPath)
	if err != nil || len(pats) != 2 || pats[0].ID != "b" || len(pats[0].Flows) != 2 || pats[1].ID != "a" || pats[0].Flows[1].Bytes != 3 {
		t.Fatalf("CSV with a pattern column: %+v, %v", pats, err)
	}
	jsonPath := filepath.Join(dir, "many.json")
	os.WriteFile(jsonPath, []byte(`{"patterns":[{"id":"p","flows":[{"src":"X1","dst":"Y2","bytes":1}]},{"id":"q","flows":[{"src":"Y2","dst":"X1","bytes":2}]}]}`), 0o644)
	if pats, err = ReadPatterns(jsonPath); err != nil || len(pats) != 2 || pats[1].ID != "q" {
		t.Fatalf("JSON patterns: %+v, %v", pats, err)
	}
	one := filepath.Join(dir, "one.csv")
	os.WriteFile(one, []byte("src,dst,bytes\nX1,Y2,1\n"), 0o644)
	if pats, err = ReadPatterns(one); err != nil || len(pats) != 1 || pats[0].ID != "one" {
		t.Fatalf("one pattern: %+v, %v", pats, err)
	}
	if _, err := ReadPatternFile(csvPath); err == nil {
		t.Error("ReadPatternFile accepted a file of two patterns")
	}
	os.WriteFile(jsonPath, []byte(`{"patterns":[{"id":"p","flows":[{"src":"X1","dst":"Y2","bytes":1}]},{"id":"p","flows":[{"src":"Y2","dst":"X1","bytes":2}]}]}`), 0o644)
	if _, err := ReadPatterns(jsonPath); err == nil || !badinput.Is(err) {
		t.Errorf("repeated pattern IDs: %v", err)
	}
}

// A size matrix whose rows and columns do not name the same nodes, or with a cell that is not
// a whole number of bytes (NaN, fractional, beyond the ceiling), is bad input naming the line
// and the column; a valid one gives a transfer per positive cell off the diagonal.
func TestSizeMatrix(t *testing.T) {
	p, err := ReadSizeMatrix(writePattern(t, "a2av.csv", "src,X1,X2,Y1\nY1,1,2,3\nX1,0,10,20\nX2,5,0,0\n"), "alltoallv")
	if err != nil || p.ID != "a2av" || len(p.Flows) != 5 || p.Flows[0] != (Flow{Src: "Y1", Dst: "X1", Bytes: 1}) || p.Flows[2] != (Flow{Src: "X1", Dst: "X2", Bytes: 10}) {
		t.Fatalf("%+v, %v", p, err)
	}
	// A spreadsheet's byte-order mark, before a quoted header, is read as pattern files read it.
	if p, err := ReadSizeMatrix(writePattern(t, "bom.csv", "\ufeff\"src\",\"X1\",\"X2\"\nX1,0,7\nX2,0,0\n"), "alltoallv"); err != nil || len(p.Flows) != 1 || p.Flows[0] != (Flow{Src: "X1", Dst: "X2", Bytes: 7}) {
		t.Errorf("matrix with a byte-order mark: %+v, %v", p, err)
	}
	for _, tc := range []struct{ name, text, want string }{
		{"missing row", "src,X1,X2,Y1\nX1,0,10,20\nX2,5,0,0\n", `line 1, column 4: node "Y1" heads a column but has no row; give every node a row (0 for no transfer)`},
		{"row without a column", "src,X1,X2\nX1,0,1\nX2,1,0\nY1,1,2\n", `line 4, column 1: node "Y1" has a row but no column`},
		{"row twice", "src,X1,X2\nX1,0,1\nX2,1,0\nX1,3,4\n", `line 4, column 1: node "X1" already sends on line 2`},
		{"column twice", "src,X1,X1\nX1,0,1\n", `line 1: node "X1" heads columns 2 and 3`},
		{"NaN cell", "src,X1,X2\nX1,0,NaN\nX2,1,0\n", `line 2, column 3 (to "X2"): "NaN" is not a number of bytes`},
		{"fractional cell", "src,X1,X2\nX1,0,1\nX2,0.5,0\n", `line 3, column 2 (to "X1"): "0.5" is not a whole number of bytes`},
		{"negative cell", "src,X1,X2\nX1,0,-1\nX2,1,0\n", `line 2, column 3 (to "X2"): "-1" is outside 0 to 1125899906842624 bytes`},
		{"cell beyond the ceiling", "src,X1,X2\nX1,0,1e308\nX2,1,0\n", `line 2, column 3 (to "X2"): "1e308" is outside 0 to 1125899906842624 bytes`},
		{"empty cell", "src,X1,X2\nX1,0,\nX2,1,0\n", `line 2, column 3 (to "X2"): "" is not a number of bytes`},
		{"short row", "src,X1,X2\nX1,0\nX2,1,0\n", "line 2 (row 1): a different number of fields than the header"},
		{"one node", "src,X1\nX1,0\n", "line 1: want a header"},
		{"control character", "src,X1,X\x002\nX1,0,1\n", `line 1, column 3: "X\x002" contains the control character U+0000`},
		{"no transfer", "src,X1,X2\nX1,0,0\nX2,0,0\n", "the matrix has no transfer"},
	} {
		path := writePattern(t, "m.csv", tc.text)
		_, err := ReadSizeMatrix(path, "alltoallv")
		checkBadInput(t, tc.name, err, path+": contention: "+tc.want)
	}
}

// FuzzReadSizeMatrix reads random size matrices: no panic; a refusal is bad input on one line
// naming the file; an accepted matrix has whole, bounded sizes between two nodes it names.
func FuzzReadSizeMatrix(f *testing.F) {
	f.Add([]byte("src,X1,X2,Y1\nX1,0,10,20\nX2,5,0,0\nY1,1,2,3\n"))
	f.Add([]byte("src,X1,X2,Y1\nX1,0,10,20\nX2,5,0,0\n"))
	f.Add([]byte("src,X1,X2\nX1,0,NaN\nX2,0.5,0\n"))
	f.Add([]byte("\ufeffsrc,X1,X2\r\nX1,0,1e308\r\nX2,1,0\r\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "m.csv")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		p, err := ReadSizeMatrix(path, "alltoallv")
		if err != nil {
			if !badinput.Is(err) || strings.ContainsAny(err.Error(), "\r\n") || !strings.HasPrefix(err.Error(), path+": contention: ") {
				t.Fatalf("error %q: want bad input on one line naming the file", err)
			}
			return
		}
		for _, fl := range p.Flows {
			if fl.Src == fl.Dst || fl.Bytes < 1 || fl.Bytes > MaxTransferBytes || fl.Bytes != math.Trunc(fl.Bytes) {
				t.Fatalf("transfer accepted: %+v", fl)
			}
		}
		if len(p.Flows) == 0 {
			t.Fatal("a matrix without transfers accepted")
		}
	})
}
