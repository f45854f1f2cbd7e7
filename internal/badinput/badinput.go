// Package badinput marks errors caused by outside input — a file, a flag value, a
// description — so that the command line maps them to exit status 2 wherever they arise,
// without the packages that find them knowing about exit codes.
package badinput

import (
	"errors"
	"fmt"
	"strings"
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
