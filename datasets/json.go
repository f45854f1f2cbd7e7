package datasets

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// utf8BOM is the byte-order mark that Windows tools put at the start of UTF-8 text.
var utf8BOM = []byte("\ufeff")

// decodeJSON decodes one JSON document strictly into v: an unknown key, a key given twice in
// one object and anything after the document (a second document appended to the file) are
// errors, as is an empty input. name is the file named in errors, which are *InputError.
func decodeJSON(name string, data []byte, v any) error {
	data = bytes.TrimPrefix(data, utf8BOM)
	if err := checkDuplicateKeys(name, data); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		if err == io.EOF {
			return inputErr(Location{File: name}, "", ErrEmptyFile, "no JSON document")
		}
		return jsonErr(name, data, err, "invalid JSON")
	}
	if off := skipSpace(data, dec.InputOffset()); off < int64(len(data)) {
		return inputErr(Location{File: name, Line: lineAt(data, off)}, "", ErrTrailingData,
			"more data after the end of the JSON document (two documents in one file?)")
	}
	return nil
}

// ReadJSONFile decodes a JSON file strictly (see decodeJSON). Every problem with the file,
// including its absence, is an *InputError naming it.
func ReadJSONFile(path string, v any) error {
	data, err := readInputFile(path)
	if err != nil {
		return err
	}
	return decodeJSON(path, data, v)
}

// readInputFile reads a file that the user named: a missing file (or a directory) is bad
// input; other failures to read are the environment's.
func readInputFile(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	switch {
	case err == nil:
		return data, nil
	case errors.Is(err, fs.ErrNotExist):
		return nil, inputErr(Location{File: path}, "", ErrMissingFile, "no such file")
	case errors.Is(err, syscall.EISDIR):
		return nil, inputErr(Location{File: path}, "", ErrMissingFile, "a directory, want a file")
	}
	return nil, fmt.Errorf("datasets: %w", err)
}

// checkDuplicateKeys walks the tokens of the first JSON value in data and reports a key that
// appears twice in one object, with the path of the object. encoding/json keeps the last of
// duplicate keys silently. Syntax errors are left to the decoder, which reports them better.
func checkDuplicateKeys(name string, data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	type frame struct {
		keys    map[string]bool // nil for an array
		wantKey bool            // the next token of an object is a key
		path    string
		index   int // next element of an array
	}
	var stack []*frame
	// value accounts for a value (scalar or the start of a composite) in the current frame and
	// returns the path it sits at.
	var key string
	value := func() string {
		if len(stack) == 0 {
			return ""
		}
		top := stack[len(stack)-1]
		if top.keys != nil {
			top.wantKey = true
			return joinPath(top.path, key)
		}
		top.index++
		return fmt.Sprintf("%s[%d]", top.path, top.index-1)
	}
	for {
		off := dec.InputOffset()
		tok, err := dec.Token()
		if err != nil {
			return nil
		}
		if d, ok := tok.(json.Delim); ok {
			switch d {
			case '{', '[':
				f := &frame{path: value()}
				if d == '{' {
					f.keys, f.wantKey = map[string]bool{}, true
				}
				stack = append(stack, f)
			case '}', ']':
				stack = stack[:len(stack)-1]
				if len(stack) == 0 {
					return nil // the first document ends here
				}
			}
			continue
		}
		if len(stack) == 0 {
			return nil // a scalar document
		}
		top := stack[len(stack)-1]
		if s, ok := tok.(string); ok && top.keys != nil && top.wantKey {
			if top.keys[s] {
				where := "the top-level object"
				if top.path != "" {
					where = top.path
				}
				return inputErr(Location{File: name, Line: lineAt(data, skipSpaceComma(data, off))}, joinPath(top.path, s), ErrDuplicateField,
					"key %s appears twice in %s", strconv.Quote(s), where)
			}
			top.keys[s] = true
			top.wantKey = false
			key = s
			continue
		}
		value()
	}
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// jsonErr turns a decoding error into an input error with the line it occurred on.
func jsonErr(name string, data []byte, err error, what string) *InputError {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return inputErr(Location{File: name, Line: lineAt(data, syn.Offset)}, "", ErrCorrupt, "%s: %v", what, syn)
	case errors.As(err, &typ):
		return inputErr(Location{File: name, Line: lineAt(data, typ.Offset)}, typ.Field, ErrWrongType,
			"a JSON %s where %s is needed", typ.Value, typ.Type)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return inputErr(Location{File: name}, "", ErrCorrupt, "%s: the file ends inside a JSON value", what)
	}
	// encoding/json has no error type for an unknown field; its message is stable.
	if f, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		if u, err := strconv.Unquote(f); err == nil {
			f = u
		}
		return inputErr(Location{File: name}, f, ErrUnknownField, "unknown key %s", strconv.Quote(f))
	}
	return inputErr(Location{File: name}, "", ErrCorrupt, "%s: %v", what, err)
}

// skipSpace returns the offset of the first byte at or after off that is not JSON white space.
func skipSpace(data []byte, off int64) int64 {
	for off < int64(len(data)) {
		switch data[off] {
		case ' ', '\t', '\r', '\n':
			off++
		default:
			return off
		}
	}
	return off
}

// skipSpaceComma skips white space, commas and colons (the separators a token may follow).
func skipSpaceComma(data []byte, off int64) int64 {
	for off < int64(len(data)) {
		switch data[off] {
		case ' ', '\t', '\r', '\n', ',', ':':
			off++
		default:
			return off
		}
	}
	return off
}

// lineAt returns the 1-based line of byte offset off.
func lineAt(data []byte, off int64) int64 {
	off = min(max(off, 0), int64(len(data)))
	return int64(bytes.Count(data[:off], []byte("\n"))) + 1
}
