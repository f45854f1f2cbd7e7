package strictjson

import (
	"errors"
	"testing"
)

type target struct {
	Name  string  `json:"name"`
	Rate  float64 `json:"rate"`
	Racks []struct {
		Name string `json:"name"`
	} `json:"racks"`
}

func TestDecode(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		kind Kind
		line int
		key  string
	}{
		{"duplicate key", "{\"name\": \"a\",\n \"name\": \"b\"}", DuplicateKey, 2, "name"},
		{"keys differing in case", `{"name": "a", "Name": "b"}`, DuplicateKey, 1, "Name"},
		{"nested duplicate", `{"racks": [{"name": "a"}, {"name": "b", "name": "c"}]}`, DuplicateKey, 1, "racks[1].name"},
		{"second document", "{\"name\": \"a\"}\n{\"name\": \"b\"}", Trailing, 2, ""},
		{"empty", "  ", Empty, 0, ""},
		{"syntax", `{"name": }`, Syntax, 1, ""},
		{"cut short", `{"name": "a"`, Syntax, 1, ""},
		{"unknown key", `{"nmae": "a"}`, UnknownKey, 1, "nmae"},
		{"wrong type", `{"rate": "fast"}`, WrongType, 1, "rate"},
	} {
		var v target
		err := Decode([]byte(tc.in), &v)
		var e *Error
		if !errors.As(err, &e) {
			t.Errorf("%s: %v is not an *Error", tc.name, err)
			continue
		}
		if e.Kind != tc.kind || e.Line != tc.line || e.Key != tc.key {
			t.Errorf("%s: %v (kind %d, line %d, key %q), want kind %d, line %d, key %q", tc.name, err, e.Kind, e.Line, e.Key, tc.kind, tc.line, tc.key)
		}
	}
	var v target
	if err := Decode([]byte("\ufeff{\"name\": \"x\", \"racks\": [{\"name\": \"r\"}]}\n"), &v); err != nil || v.Name != "x" || v.Racks[0].Name != "r" {
		t.Errorf("a valid document with a BOM: %v, %+v", err, v)
	}
}

func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"name": "a", "racks": [{"name": "b"}]}`))
	f.Add([]byte(`{"name": "a"} {"name": "a"}`))
	f.Add([]byte(`{"Name": 1, "name": 2}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var v target
		err := Decode(data, &v)
		var e *Error
		if err != nil && !errors.As(err, &e) {
			t.Fatalf("%v is not an *Error", err)
		}
	})
}
