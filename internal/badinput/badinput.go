// Package badinput marks errors caused by outside input — a file, a flag value, a
// description — so that the command line maps them to exit status 2 wherever they arise,
// without the packages that find them knowing about exit codes.
package badinput

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Marker is implemented by every error type that means "the input is wrong": this
// package's Error, datasets.InputError and the usage errors of cmd/commcal.
type Marker interface {
	error
	BadInput()
}

// Error is bad input found in File (empty when the input is not a file, such as a flag).
type Error struct {
	File string
	Err  error
}

// BadInput marks Error as bad input.
func (*Error) BadInput() {}

func (e *Error) Error() string {
	if e.File == "" {
		return e.Err.Error()
	}
	return e.File + ": " + e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

// Errorf returns bad input found in file, described by the format (which may wrap with %w).
func Errorf(file, format string, a ...any) error {
	return &Error{File: file, Err: fmt.Errorf(format, a...)}
}

// Wrap marks err as bad input found in file; a nil err stays nil, and a message that
// already names the file (or an empty file) is not prefixed again.
func Wrap(file string, err error) error {
	if err == nil {
		return nil
	}
	if file == "" || strings.Contains(err.Error(), file) {
		if Is(err) {
			return err
		}
		file = ""
	}
	return &Error{File: file, Err: err}
}

// Is reports whether err is, or wraps, bad input.
func Is(err error) bool {
	var m Marker
	return errors.As(err, &m)
}

// MaxQuote is the most of an outside value that a message quotes, in bytes: enough to
// recognise a number, a node name or the start of a line, and short enough that a message
// stays one readable line whatever the input holds (a 10 MB number, a 100 MB line).
const MaxQuote = 64

// Quote is s as %q quotes it, cut to its first MaxQuote bytes (at a character boundary) with
// "…" and the length of the whole when it is longer.
func Quote(s string) string {
	if len(s) <= MaxQuote {
		return strconv.Quote(s)
	}
	cut := MaxQuote
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… (%d bytes)", strconv.Quote(s[:cut]), len(s))
}

// MaxMessage bounds a whole error message as the command line prints it, in bytes.
const MaxMessage = 1000

// Cut cuts a message to MaxMessage bytes (at a character boundary), marking the cut, so that no
// input makes an error line longer than that.
func Cut(msg string) string {
	if len(msg) <= MaxMessage {
		return msg
	}
	cut := MaxMessage - 40
	for cut > 0 && !utf8.RuneStart(msg[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… (message cut, %d bytes)", msg[:cut], len(msg))
}
