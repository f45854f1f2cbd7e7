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

	"github.com/commcal/commcal/internal/strictjson"
)

// utf8BOM is the byte-order mark that Windows tools put at the start of UTF-8 text.
var utf8BOM = []byte("\ufeff")

// decodeJSON decodes one JSON document strictly into v (internal/strictjson): an unknown
// key, a key given twice in one object and anything after the document (a second document
// appended to the file) are errors, as is an empty input. name is the file named in errors,
// which are *InputError.
func decodeJSON(name string, data []byte, v any) error {
	err := strictjson.Decode(data, v)
	if err == nil {
		return nil
	}
	var se *strictjson.Error
	if !errors.As(err, &se) {
		return inputErr(Location{File: name}, "", ErrCorrupt, "invalid JSON: %v", err)
	}
	kind := map[strictjson.Kind]ErrKind{strictjson.Syntax: ErrCorrupt, strictjson.Empty: ErrEmptyFile,
		strictjson.DuplicateKey: ErrDuplicateField, strictjson.Trailing: ErrTrailingData,
		strictjson.UnknownKey: ErrUnknownField, strictjson.WrongType: ErrWrongType}[se.Kind]
	// The column names the key; the message need not repeat it.
	return inputErr(Location{File: name, Line: int64(se.Line)}, se.Key, kind, "%s", strings.TrimPrefix(se.Msg, se.Key+": "))
}

// ReadJSONFile decodes a JSON file strictly (see decodeJSON). Every problem with the file,
// including its absence, is an *InputError naming it.
func ReadJSONFile(path string, v any) error {
	_, err := ReadJSONFileData(path, v)
	return err
}

// ReadJSONFileData is ReadJSONFile returning the file's bytes too, for a reader that checks
// more of them than decoding does (a null that would decode as 0), without reading it twice.
func ReadJSONFileData(path string, v any) ([]byte, error) {
	data, err := readInputFile(path)
	if err != nil {
		return nil, err
	}
	return data, decodeJSON(path, data, v)
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
		return inputErr(Location{File: name}, f, ErrUnknownField, "unknown key %s", quote(f))
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

// lineAt returns the 1-based line of byte offset off.
func lineAt(data []byte, off int64) int64 {
	off = min(max(off, 0), int64(len(data)))
	return int64(bytes.Count(data[:off], []byte("\n"))) + 1
}
