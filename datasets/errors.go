package datasets

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"

	"github.com/commcal/commcal/internal/badinput"
)

// ErrKind names what is wrong with an input, so that scripts and tests can tell errors apart.
type ErrKind string

// The kinds of bad input. Each InputError carries exactly one.
const (
	ErrEmptyFile         ErrKind = "empty-file"         // no bytes, or a header and no rows
	ErrNotParquet        ErrKind = "not-parquet"        // no Parquet magic number
	ErrCorrupt           ErrKind = "corrupt"            // truncated or damaged file
	ErrUnknownFormat     ErrKind = "unknown-format"     // the format cannot be told from the name or content
	ErrUnknownTable      ErrKind = "unknown-table"      // the columns fit no table
	ErrMissingColumn     ErrKind = "missing-column"     // a required column is absent
	ErrWrongType         ErrKind = "wrong-type"         // a column or value has the wrong type
	ErrRaggedRow         ErrKind = "ragged-row"         // a CSV row with the wrong number of fields
	ErrMissingValue      ErrKind = "missing-value"      // null or empty field
	ErrNaN               ErrKind = "nan"                // NaN where a number is needed
	ErrInfinite          ErrKind = "infinite"           // ±Inf
	ErrNonPositive       ErrKind = "non-positive"       // zero or negative where only positive makes sense
	ErrNegative          ErrKind = "negative"           // negative count, size or duration
	ErrZeroDuration      ErrKind = "zero-duration"      // a transfer that ends when it starts
	ErrEndBeforeStart    ErrKind = "end-before-start"   // a transfer that ends before it starts
	ErrUnknownCluster    ErrKind = "unknown-cluster"    // cluster column differs from the description
	ErrUnknownNode       ErrKind = "unknown-node"       // a node absent from the cluster description
	ErrSameNode          ErrKind = "same-node"          // a transfer or round trip from a node to itself
	ErrUnknownExperiment ErrKind = "unknown-experiment" // outside the closed set of experiments
	ErrUnknownOp         ErrKind = "unknown-op"         // a collective other than scatter or gather
	ErrDuplicateKey      ErrKind = "duplicate-key"      // two rows with the same key (or a size twice in a benchmark's block)
	ErrUnpaired          ErrKind = "unpaired"           // a SimGrid MPI_Send without its MPI_Recv, or the reverse
	ErrUnsupported       ErrKind = "unsupported"        // valid input that commcal has no table for
	ErrToolFailure       ErrKind = "tool-failure"       // the measuring tool reported an error (iperf3 "error")
	ErrNotIncreasing     ErrKind = "not-increasing"     // a list that must increase does not (breakpoints, a benchmark's sizes)
	ErrDuplicateColumn   ErrKind = "duplicate-column"   // a CSV header or Parquet schema names a column twice
	ErrControlChar       ErrKind = "control-character"  // a string value holds a control character (NUL, newline, ...) or is not UTF-8
	ErrSchemaMismatch    ErrKind = "schema-mismatch"    // a dataset's table file does not have its table's columns
	ErrChecksumMismatch  ErrKind = "checksum-mismatch"  // a dataset file's SHA-256 or size differs from its manifest's
	ErrMissingFile       ErrKind = "missing-file"       // a named input file does not exist (or is a directory)
	ErrTrailingData      ErrKind = "trailing-data"      // more after the end of a JSON document
	ErrDuplicateField    ErrKind = "duplicate-field"    // a JSON object with the same key twice
	ErrUnknownField      ErrKind = "unknown-field"      // a JSON key that the format does not have
	// ErrUnusedFlag is --role or --ranks given for an input they do not apply to (a table,
	// an iperf3 run, a SimGrid file): they place and label benchmarks' text outputs only.
	ErrUnusedFlag ErrKind = "unused-flag"
	// ErrTruncatedTransfer is an iperf3 run whose receiver counted fewer bytes than the sender
	// sent: the transfer did not complete, so it has no completion time to record.
	ErrTruncatedTransfer ErrKind = "truncated-transfer"
)

// Location points at one place in an input file. Row counts data rows from 1 (a CSV header is
// not a row); Line is the 1-based line of a text file, or 0.
type Location struct {
	File string
	Row  int64
	Line int64
}

func (l Location) String() string {
	var b strings.Builder
	b.WriteString(l.File)
	switch {
	case l.Line > 0 && l.Row > 0:
		fmt.Fprintf(&b, ": line %d (row %d)", l.Line, l.Row)
	case l.Line > 0:
		fmt.Fprintf(&b, ": line %d", l.Line)
	case l.Row > 0:
		fmt.Fprintf(&b, ": row %d", l.Row)
	}
	return b.String()
}

// InputError is a problem with outside data: which file, row and column, and what was expected.
type InputError struct {
	Loc    Location
	Column string // empty when the problem is not in one column
	Kind   ErrKind
	Detail string
}

// Error is one line of at most badinput.MaxMessage bytes: control characters that came from
// the input (in a file name, a header field, a key) are escaped, the column is quoted cut to
// badinput.MaxQuote bytes, and a Detail that would make the line longer is cut.
func (e *InputError) Error() string {
	var b strings.Builder
	b.WriteString(e.Loc.String())
	if e.Column != "" {
		fmt.Fprintf(&b, ", column %s", badinput.Quote(e.Column))
	}
	fmt.Fprintf(&b, ": %s: %s", e.Kind, e.Detail)
	return badinput.Cut(oneLine(b.String()))
}

// oneLine escapes control characters and line separators as Go does in quoted strings.
func oneLine(s string) string {
	if strings.IndexFunc(s, isLineBreaking) < 0 {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if isLineBreaking(r) {
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func isLineBreaking(r rune) bool {
	return unicode.IsControl(r) || r == '\u2028' || r == '\u2029'
}

// IsInputError reports whether err is (or wraps) an InputError, and returns it.
func IsInputError(err error) (*InputError, bool) {
	var ie *InputError
	ok := errors.As(err, &ie)
	return ie, ok
}

// inputErr is an InputError whose Detail is cut to badinput.MaxMessage bytes: a value from the
// input that a message quotes is cut already (quote), and this bounds what a reader puts
// there otherwise (another library's error text).
func inputErr(loc Location, column string, kind ErrKind, format string, a ...any) *InputError {
	return &InputError{Loc: loc, Column: column, Kind: kind, Detail: badinput.Cut(fmt.Sprintf(format, a...))}
}

// BadInput marks InputError as bad input (exit status 2), see internal/badinput.
func (*InputError) BadInput() {}
