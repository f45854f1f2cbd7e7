package contention

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

// This file is the same in packages cluster and contention (cluster/jsonstrict.go): keep them
// identical until the checks move into one internal package.

// checkJSONDocument walks the tokens of data with encoding/json's Decoder and reports what
// json.Unmarshal lets through: an object that repeats a key (Unmarshal keeps the last one
// silently; keys are matched to fields regardless of case, so "name" and "Name" repeat each
// other too) and anything after the first value (Decode stops there). Syntax errors are
// reported with their line and column. It does not check types or field names; decoding
// with DisallowUnknownFields does that afterwards.
func checkJSONDocument(data []byte) error {
	type frame struct {
		object  bool
		wantKey bool
		keys    map[string]string // folded key → key as written
		path    string            // where this object or array is, e.g. rack[1]
		key     string            // the key whose value is being read (objects)
		index   int               // the index of the next element (arrays)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var stack []*frame
	// child is the path of the value about to be read.
	child := func() string {
		if len(stack) == 0 {
			return ""
		}
		top := stack[len(stack)-1]
		if top.object {
			if top.path == "" {
				return top.key
			}
			return top.path + "." + top.key
		}
		return top.path + "[" + strconv.Itoa(top.index) + "]"
	}
	// done records that a value was read completely.
	done := func() {
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
				return errors.New("no JSON value")
			}
			return jsonPosError(data, off, errors.New("unexpected end of JSON input"))
		}
		if err != nil {
			return jsonPosError(data, off, err)
		}
		started = true
		if n := len(stack); n > 0 && stack[n-1].object && stack[n-1].wantKey {
			top := stack[n-1]
			if d, ok := tok.(json.Delim); ok && d == '}' {
				stack = stack[:n-1]
				done()
			} else {
				k, _ := tok.(string)
				if prev, ok := top.keys[strings.ToLower(k)]; ok {
					where := "the top-level object"
					if top.path != "" {
						where = top.path
					}
					if prev == k {
						return jsonPosError(data, off, fmt.Errorf("key %q appears twice in %s", k, where))
					}
					return jsonPosError(data, off, fmt.Errorf("key %q repeats %q in %s (keys are matched regardless of case)", k, prev, where))
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
	off := dec.InputOffset()
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return jsonPosError(data, skipSpace(data, off), errors.New("a second JSON value follows the first; a file holds one document"))
	}
	return nil
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

// jsonPosError prefixes err with the line and column of a byte offset into data; a
// json.SyntaxError's own offset wins.
func jsonPosError(data []byte, off int64, err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		off = se.Offset
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		off = te.Offset
	}
	line, col := lineCol(data, off)
	return fmt.Errorf("line %d, column %d: %w", line, col, err)
}

// jsonDecodeError describes an error of json.Decoder.Decode at a byte offset: a type
// mismatch is told by its key and the JSON and Go kinds, with no Go type names.
func jsonDecodeError(data []byte, off int64, err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" && te.Type != nil {
		want := te.Type.Kind().String()
		switch te.Type.Kind() {
		case reflect.Float32, reflect.Float64, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			want = "a number that fits " + want
		case reflect.String:
			want = "a string"
		case reflect.Slice, reflect.Array:
			want = "a list"
		case reflect.Struct, reflect.Map, reflect.Pointer:
			want = "an object"
		case reflect.Bool:
			want = "true or false"
		}
		line, col := lineCol(data, te.Offset)
		return fmt.Errorf("line %d, column %d: %s: JSON %s, want %s", line, col, te.Field, te.Value, want)
	}
	return jsonPosError(data, off, err)
}

// lineCol converts a byte offset into a 1-based line and column (in bytes).
func lineCol(data []byte, off int64) (int, int) {
	off = max(0, min(off, int64(len(data))))
	before := data[:off]
	line := bytes.Count(before, []byte("\n")) + 1
	col := int(off) - (bytes.LastIndexByte(before, '\n') + 1) + 1
	return line, col
}
