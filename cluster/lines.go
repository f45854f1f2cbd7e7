package cluster

import (
	"bufio"
	"errors"
	"fmt"
	"io"

	"github.com/commcal/commcal/internal/badinput"
)

// lineReader reads a scheduler's or an MPI launcher's text file line by line, numbering the
// lines for messages. It bounds each line and the whole input, so that a line without an end
// or an endless input is refused at the line where it passes the bound instead of being held
// in memory (bufio.Scanner would stop with "token too long" and no line number).
type lineReader struct {
	r       *bufio.Reader
	maxLine int   // bytes of one line, its end excluded
	line    int   // number of the line last returned, from 1
	read    int64 // bytes read so far
	buf     []byte
}

func newLineReader(r io.Reader, maxLine int) *lineReader {
	return &lineReader{r: bufio.NewReader(r), maxLine: maxLine}
}

// next returns the next line without its end ("\n" or "\r\n"); ok is false at the end of the
// input. A line longer than maxLine, or an input longer than maxFileBytes, is bad input naming
// the line; a read error is returned as it is.
func (l *lineReader) next() (text string, ok bool, err error) {
	l.buf = l.buf[:0]
	for {
		chunk, err := l.r.ReadSlice('\n')
		l.read += int64(len(chunk))
		l.buf = append(l.buf, chunk...)
		if l.read > maxFileBytes {
			return "", false, badinput.Errorf("", "line %d: the input passes %d MiB, more than any host list or topology of %d nodes takes", l.line+1, maxFileBytes>>20, maxNodes)
		}
		if len(trimEnd(l.buf)) > l.maxLine {
			return "", false, l.errorf(l.line+1, "longer than %d bytes", l.maxLine)
		}
		switch {
		case err == nil:
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			if len(l.buf) == 0 {
				return "", false, nil
			}
		default:
			return "", false, fmt.Errorf("reading line %d: %w", l.line+1, err)
		}
		l.line++
		return string(trimEnd(l.buf)), true, nil
	}
}

// errorf returns bad input found on line n.
func (l *lineReader) errorf(n int, format string, a ...any) error {
	return badinput.Errorf("", "line %d: %s", n, fmt.Sprintf(format, a...))
}

// trimEnd cuts a line's end: "\n", and the "\r" before it that a file written on Windows has.
func trimEnd(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\n' {
		b = b[:n-1]
	}
	if n := len(b); n > 0 && b[n-1] == '\r' {
		b = b[:n-1]
	}
	return b
}
