package datasets

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

type jsonProbe struct {
	Name  string            `json:"name"`
	Alpha float64           `json:"alpha"`
	Inner *jsonProbeInner   `json:"inner"`
	List  []jsonProbeInner  `json:"list"`
	Map   map[string]string `json:"map"`
}

type jsonProbeInner struct {
	A int `json:"a"`
	B int `json:"b"`
}

func TestReadJSONFile(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name, text string
		kind       ErrKind
		col        string
		line       int64
		msg        string
	}{
		{"ok", `{"name": "x", "alpha": 1e-9, "inner": {"a": 1, "b": 2}, "list": [{"a": 1}, {"a": 1}], "map": {"k": "v"}}`, "", "", 0, ""},
		{"ok with BOM and trailing space", "\ufeff{\"name\": \"x\"}\n\n  \t\n", "", "", 0, ""},
		{"second document", "{\"name\": \"x\"}\n{\"name\": \"y\"}\n", ErrTrailingData, "", 2, "more data after the end"},
		{"trailing garbage", "{\"name\": \"x\"} x", ErrTrailingData, "", 1, ""},
		{"duplicate key", "{\"name\": \"x\",\n \"alpha\": 1,\n \"alpha\": -7.98}", ErrDuplicateField, "alpha", 3, `key "alpha" appears twice in the top-level object`},
		{"duplicate nested key", `{"inner": {"a": 1, "b": 2, "a": 3}}`, ErrDuplicateField, "inner.a", 1, `key "a" appears twice in inner`},
		{"duplicate key in an array element", `{"list": [{"a": 1}, {"b": 1, "b": 2}]}`, ErrDuplicateField, "list[1].b", 1, "list[1]"},
		{"duplicate map key", `{"map": {"k": "v", "k": "w"}}`, ErrDuplicateField, "map.k", 1, ""},
		{"unknown key", `{"name": "x", "nmae": "y"}`, ErrUnknownField, "nmae", 1, `unknown key "nmae"`},
		{"wrong type", "{\n\"alpha\": \"fast\"}", ErrWrongType, "alpha", 2, "JSON string, want a number that fits float64"},
		{"syntax", "{\n\"name\": \"x\",,}", ErrCorrupt, "", 2, "invalid character"},
		{"truncated", `{"name": "x"`, ErrCorrupt, "", 1, "ends inside a JSON value"},
		{"empty", "", ErrEmptyFile, "", 0, ""},
		{"only space", " \n ", ErrEmptyFile, "", 0, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_")+".json")
			if err := os.WriteFile(path, []byte(c.text), 0o644); err != nil {
				t.Fatal(err)
			}
			var v jsonProbe
			err := ReadJSONFile(path, &v)
			if c.kind == "" {
				if err != nil || v.Name != "x" {
					t.Fatalf("%+v, %v", v, err)
				}
				return
			}
			ie := checkInputError(t, err, path)
			if ie.Kind != c.kind || ie.Column != c.col || ie.Loc.Line != c.line || !strings.Contains(ie.Detail, c.msg) {
				t.Errorf("got %v (kind %s, column %q, line %d), want %s, %q, line %d, %q", err, ie.Kind, ie.Column, ie.Loc.Line, c.kind, c.col, c.line, c.msg)
			}
		})
	}
	// A missing file, and a directory, are bad input too.
	var v jsonProbe
	missing := filepath.Join(dir, "absent.json")
	if ie := checkInputError(t, ReadJSONFile(missing, &v), missing); ie.Kind != ErrMissingFile {
		t.Errorf("missing file: %v", ie)
	}
	if ie := checkInputError(t, ReadJSONFile(dir, &v), dir); ie.Kind != ErrMissingFile {
		t.Errorf("directory: %v", ie)
	}
	// A scalar document is decoded (and refused by the type), a top-level array too.
	path := filepath.Join(dir, "scalar.json")
	os.WriteFile(path, []byte(`[1, 2, 2]`), 0o644)
	var xs []int
	if err := ReadJSONFile(path, &xs); err != nil || len(xs) != 3 {
		t.Errorf("array: %v %v", xs, err)
	}
}

func TestReadManifestErrors(t *testing.T) {
	cl := testCluster(t, "ccpe-testbed")
	dir, _ := simulateDir(t, cl, 31)
	path := filepath.Join(dir, ManifestFile)
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ParseManifest(good); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct {
		data []byte
		kind ErrKind
	}{
		"appended":       {append(append([]byte{}, good...), good...), ErrTrailingData},
		"repeated key":   {[]byte(strings.Replace(string(good), `"tool": "commcal",`, `"tool": "commcal", "tool": "other",`, 1)), ErrDuplicateField},
		"format":         {[]byte(strings.Replace(string(good), ManifestFormat, "commcal-dataset/0", 1)), ErrUnsupported},
		"not JSON":       {[]byte("PAR1"), ErrCorrupt},
		"misspelled key": {[]byte(strings.Replace(string(good), `"tool"`, `"tol"`, 1)), ErrUnknownField},
		"mpi library":    {[]byte(strings.Replace(string(good), `"tool": "commcal",`, `"tool": "commcal", "mpi_library": "intel",`, 1)), ErrUnsupported},
	} {
		t.Run(name, func(t *testing.T) {
			if string(c.data) == string(good) {
				t.Fatal("the edit changed nothing")
			}
			if err := os.WriteFile(path, c.data, 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := ReadManifest(dir)
			if ie := checkInputError(t, err, path); ie.Kind != c.kind {
				t.Errorf("%v, want %s", err, c.kind)
			}
			if _, err := Open(dir); err == nil {
				t.Error("Open accepted it")
			}
		})
	}
	empty := t.TempDir()
	_, err = Open(empty)
	if ie := checkInputError(t, err, empty); ie.Kind != ErrMissingFile || !strings.Contains(ie.Detail, "not a dataset directory") {
		t.Errorf("a directory without a manifest: %v", err)
	}
}

// An input error is one line whatever the input put in it.
func TestInputErrorOneLine(t *testing.T) {
	e := inputErr(Location{File: "a\nb.csv", Line: 2}, "col\r", ErrUnknownTable, "columns %s", "x\ny\u2028z\x00")
	if got, want := e.Error(), `a\nb.csv: line 2, column "col\r": unknown-table: columns x\ny\u2028z\x00`; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
