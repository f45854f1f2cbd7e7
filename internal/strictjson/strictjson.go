// Package strictjson decodes one JSON document strictly, reporting what encoding/json lets
// through silently: a key given twice in one object (json.Unmarshal keeps the last one, and
// matches keys to struct fields regardless of case, so "name" and "Name" repeat each other),
// anything after the first document (a second run appended to the file), unknown keys, and
// type mismatches told by their key, each with its line and column. Every reader of
// outside JSON (cluster descriptions, pattern files, manifests, parameters, calibrations)
// goes through it.
package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
)

// Kind is what is wrong with a document.
type Kind int

// The kinds of Error.
const (
	Syntax       Kind = iota // not JSON, or cut short
	Empty                    // no document at all
	DuplicateKey             // a key given twice in one object
	Trailing                 // more after the first document
	UnknownKey               // a key the target does not have
	WrongType                // a value of the wrong JSON type for its key
)

// Error is a problem at a place of a document. Key is the path of the value concerned
// ("racks[1].name"), when known.
type Error struct {
	Kind         Kind
	Line, Column int
	Key          string
	Msg          string
}

func (e *Error) Error() string {
	if e.Line == 0 {
		return e.Msg
	}
	return fmt.Sprintf("line %d, column %d: %s", e.Line, e.Column, e.Msg)
}

// Decode decodes data, one JSON document (a UTF-8 byte-order mark allowed), into v strictly;
// errors are *Error.
func Decode(data []byte, v any) error {
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	if err := Check(data); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return decodeError(data, dec.InputOffset(), err)
	}
	return nil
}

// Check walks the tokens of data and reports a repeated key, anything after the first
// document, a syntax error or an empty input. It checks neither types nor key names (Decode
// does, with the target).
func Check(data []byte) error {
	type frame struct {
		object  bool
		wantKey bool
		keys    map[string]string // folded key → key as written
		path    string            // where this object or array is, e.g. racks[1]
		key     string            // the key whose value is being read (objects)
		index   int               // the index of the next element (arrays)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var stack []*frame
	child := func() string { // the path of the value about to be read
		if len(stack) == 0 {
			return ""
		}
		top := stack[len(stack)-1]
		if top.object {
			return joinPath(top.path, top.key)
		}
		return top.path + "[" + strconv.Itoa(top.index) + "]"
	}
	done := func() { // a value was read completely
		if len(stack) == 0 {
			return
		}
		top := stack[len(stack)-1]
		if top.object {
			top.wantKey = true
		} else {
			top.index++
		}
	}
	started := false
	for {
		off := dec.InputOffset()
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			if !started {
				return &Error{Kind: Empty, Msg: "no JSON document"}
			}
			return at(data, off, Syntax, "", "the input ends inside a JSON value")
		}
		if err != nil {
			return syntaxError(data, off, err)
		}
		started = true
		if n := len(stack); n > 0 && stack[n-1].object && stack[n-1].wantKey {
			top := stack[n-1]
			if d, ok := tok.(json.Delim); ok && d == '}' {
				stack = stack[:n-1]
				done()
			} else {
				k, _ := tok.(string)
				where := "the top-level object"
				if top.path != "" {
					where = top.path
				}
				keyAt := skipSpaceComma(data, off)
				if prev, ok := top.keys[strings.ToLower(k)]; ok {
					if prev == k {
						return at(data, keyAt, DuplicateKey, joinPath(top.path, k), "key %q appears twice in %s", k, where)
					}
					return at(data, keyAt, DuplicateKey, joinPath(top.path, k), "key %q repeats %q in %s (keys are matched regardless of case)", k, prev, where)
				}
				top.keys[strings.ToLower(k)] = k
				top.key, top.wantKey = k, false
			}
		} else {
			switch tok {
			case json.Delim('{'):
				stack = append(stack, &frame{object: true, wantKey: true, keys: map[string]string{}, path: child()})
			case json.Delim('['):
				stack = append(stack, &frame{path: child()})
			case json.Delim(']'):
				stack = stack[:n-1]
				done()
			default:
				done()
			}
		}
		if len(stack) == 0 {
			break
		}
	}
	if off := skipSpace(data, dec.InputOffset()); off < int64(len(data)) {
		return at(data, off, Trailing, "", "more data after the end of the JSON document (two documents in one file?)")
	}
	return nil
}

// at builds an Error at a byte offset of data.
func at(data []byte, off int64, kind Kind, key, format string, a ...any) *Error {
	line, col := lineCol(data, off)
	return &Error{Kind: kind, Line: line, Column: col, Key: key, Msg: fmt.Sprintf(format, a...)}
}

func syntaxError(data []byte, off int64, err error) *Error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		off = se.Offset
	}
	return at(data, off, Syntax, "", "%s", strings.TrimPrefix(err.Error(), "json: "))
}

// decodeError describes an error of json.Decoder.Decode: a type mismatch by its key and the
// JSON and wanted kinds (no Go type names), an unknown key by its name.
func decodeError(data []byte, off int64, err error) *Error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		want := "another type"
		if te.Type != nil {
			switch te.Type.Kind() {
			case reflect.Float32, reflect.Float64, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
				reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
				want = "a number that fits " + te.Type.Kind().String()
			case reflect.String:
				want = "a string"
			case reflect.Slice, reflect.Array:
				want = "a list"
			case reflect.Struct, reflect.Map, reflect.Pointer:
				want = "an object"
			case reflect.Bool:
				want = "true or false"
			}
		}
		if te.Field == "" {
			return at(data, te.Offset, WrongType, "", "JSON %s, want %s", te.Value, want)
		}
		return at(data, te.Offset, WrongType, te.Field, "%s: JSON %s, want %s", te.Field, te.Value, want)
	}
	// encoding/json has no error type for an unknown field; its message is stable.
	if f, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		if u, err := strconv.Unquote(f); err == nil {
			f = u
		}
		return at(data, off, UnknownKey, f, "unknown key %q", f)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return at(data, off, Syntax, "", "the input ends inside a JSON value")
	}
	return syntaxError(data, off, err)
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// skipSpace returns the offset of the first byte at or after off that is not JSON white space.
func skipSpace(data []byte, off int64) int64 {
	for off < int64(len(data)) && strings.IndexByte(" \t\r\n", data[off]) >= 0 {
		off++
	}
	return off
}

// skipSpaceComma skips white space and the separators a key may follow.
func skipSpaceComma(data []byte, off int64) int64 {
	for off < int64(len(data)) && strings.IndexByte(" \t\r\n,{", data[off]) >= 0 {
		off++
	}
	return off
}

// lineCol converts a byte offset into a 1-based line and column (in bytes).
func lineCol(data []byte, off int64) (int, int) {
	off = max(0, min(off, int64(len(data))))
	before := data[:off]
	line := bytes.Count(before, []byte("\n")) + 1
	col := int(off) - (bytes.LastIndexByte(before, '\n') + 1) + 1
	return line, col
}
