package datasets

import (
	"encoding/binary"
	"fmt"
	"math"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/experiments"
)

// Column checks, named by the check tag of the row structs (every string column is first
// checked for control characters and bytes that are not UTF-8, see badText):
//
//	cluster     equals the cluster description's name
//	node        names a node of the cluster
//	experiment  one of Experiments
//	op          one of CollectiveOps
//	scheduleop  one of experiments.ScheduleOps (the collectives a schedule design measures)
//	nonempty    a non-empty string
//	nonneg      ≥ 0 (and finite, for floats)
//	positive    > 0 (and finite, for floats)
//	atleast2    ≥ 2
//	finite      not NaN, not ±Inf
//
// Row checks, across columns: a transfer ends after it starts, at a finite duration (both
// times finite can still be infinitely apart: −1e308 to 1e308), and goes between two
// different nodes; a round trip joins two different nodes; a one-to-two experiment has three.

// batchLoc maps a record's row index back to the input file.
type batchLoc struct {
	file     string
	firstRow int64   // 1-based data row of the record's row 0
	lines    []int64 // line of each row in a text file; nil when lines mean nothing
}

func (b batchLoc) at(i int) Location {
	loc := Location{File: b.file, Row: b.firstRow + int64(i)}
	if b.lines != nil {
		loc.Line = b.lines[i]
	}
	return loc
}

// checker validates records of the canonical schemas against one cluster.
type checker struct {
	cl          *cluster.Cluster
	experiments map[string]bool
	ops         map[string]bool
	scheduleOps map[string]bool
}

func newChecker(cl *cluster.Cluster) *checker {
	set := func(vals []string) map[string]bool {
		m := map[string]bool{}
		for _, v := range vals {
			m[v] = true
		}
		return m
	}
	return &checker{cl: cl, experiments: set(Experiments), ops: set(CollectiveOps), scheduleOps: set(experiments.ScheduleOps)}
}

// firstErr keeps the error of the earliest row (then the leftmost column) among the checks.
type firstErr struct {
	row int
	err *InputError
}

func (f *firstErr) offer(row int, mk func() *InputError) {
	if f.err == nil || row < f.row {
		f.row, f.err = row, mk()
	}
}

// check returns the first problem in rec (a record of t's schema), or nil. dicts, when not
// nil, holds by column the same strings as rec's as dictionary arrays (nil for other columns),
// whose distinct values are checked once each rather than row by row.
func (ck *checker) check(t *Table, rec arrow.Record, dicts []*array.Dictionary, loc batchLoc) error {
	var first firstErr
	n := int(rec.NumRows())
	for ci, c := range t.Columns {
		col := rec.Column(ci)
		if col.NullN() > 0 {
			for r := 0; r < n; r++ {
				if col.IsNull(r) {
					first.offer(r, func() *InputError {
						return inputErr(loc.at(r), c.Name, ErrMissingValue, "no value")
					})
					break
				}
			}
			continue
		}
		switch c.Type {
		case String:
			if dicts != nil && dicts[ci] != nil {
				ck.checkDictStrings(c, dicts[ci], loc, &first)
			} else {
				ck.checkStrings(c, col.(*array.String), loc, &first)
			}
		case Int:
			checkInts(c, col.(*array.Int64), loc, &first)
		case Float:
			checkFloats(c, col.(*array.Float64), loc, &first)
		}
	}
	if first.err == nil {
		ck.checkRows(t, rec, loc, &first)
	}
	if first.err != nil {
		return first.err
	}
	return nil
}

// checkStrings checks a string column. Two things keep it cheap on large batches: one scan
// of the column's bytes shows whether any value could hold a control character or a byte
// beyond ASCII (almost never: then badText need not look at each value), and a value equal to
// the one in the row before has passed the same checks already (names come in runs: one
// cluster, an experiment at a time, a pattern's transfers together).
func (ck *checker) checkStrings(c Column, a *array.String, loc batchLoc, first *firstErr) {
	plain := plainText(a.ValueBytes())
	prev, checked := "", false
	for r := 0; r < a.Len(); r++ {
		if first.err != nil && r >= first.row {
			return
		}
		v := a.Value(r)
		if checked && v == prev {
			continue
		}
		if kind, detail := ck.checkString(c, v, plain); kind != "" {
			first.offer(r, func() *InputError { return inputErr(loc.at(r), c.Name, kind, "%s", detail) })
			return
		}
		prev, checked = v, true
	}
}

// checkDictStrings checks a string column given as a dictionary array (int32 indices inside
// the dictionary, no nulls): each dictionary value that a row uses is checked once, and a bad
// one is reported at the first row that uses it.
func (ck *checker) checkDictStrings(c Column, d *array.Dictionary, loc batchLoc, first *firstErr) {
	values := d.Dictionary().(*array.String)
	firstUse := make([]int, values.Len()) // 1 + the first row using each value; 0: none
	for r, i := range d.Indices().(*array.Int32).Int32Values() {
		if firstUse[i] == 0 {
			firstUse[i] = r + 1
		}
	}
	plain := plainText(values.ValueBytes())
	for i, use := range firstUse {
		if use == 0 {
			continue
		}
		if kind, detail := ck.checkString(c, values.Value(i), plain); kind != "" {
			r := use - 1
			first.offer(r, func() *InputError { return inputErr(loc.at(r), c.Name, kind, "%s", detail) })
		}
	}
}

// checkString checks one value of string column c; plain says that plainText holds for it.
// It returns the kind of problem and its description, or "".
func (ck *checker) checkString(c Column, v string, plain bool) (ErrKind, string) {
	switch {
	case v == "":
		return ErrMissingValue, "empty string"
	case !plain && badText(v) != "":
		return ErrControlChar, quote(v) + " " + badText(v)
	case c.Check == "cluster" && v != ck.cl.Name():
		return ErrUnknownCluster, "cluster " + quote(v) + " is not the described cluster " + quote(ck.cl.Name())
	case c.Check == "node" && !ck.isNode(v):
		return ErrUnknownNode, "node " + quote(v) + " is not in cluster " + quote(ck.cl.Name())
	case c.Check == "experiment" && !ck.experiments[v]:
		return ErrUnknownExperiment, "experiment " + quote(v) + " is not one of " + list(Experiments)
	case c.Check == "op" && !ck.ops[v]:
		return ErrUnknownOp, "op " + quote(v) + " is not one of " + list(CollectiveOps)
	case c.Check == "scheduleop" && !ck.scheduleOps[v]:
		return ErrUnknownOp, "op " + quote(v) + " is not one of " + list(experiments.ScheduleOps) + ", the collectives a schedule design measures"
	}
	return "", ""
}

func (ck *checker) isNode(name string) bool {
	_, ok := ck.cl.Node(name)
	return ok
}

// plainText says whether b holds printable ASCII only (no control character, no byte of a
// multi-byte character), in which case badText finds nothing in any value made of it. It
// looks at eight bytes at a time: in a word w of bytes below 0x80, w − 0x20…20 sets the high
// bit of some byte exactly when a byte is below 0x20, and for x = w ^ 0x7f…7f, (x − 0x01…01)
// &^ x sets one exactly when a byte is DEL (a zero byte of x).
func plainText(b []byte) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	for ; len(b) >= 8; b = b[8:] {
		w := binary.LittleEndian.Uint64(b)
		x := w ^ 0x7f*ones
		if (w|(w-0x20*ones)|(x-ones)&^x)&highs != 0 {
			return false
		}
	}
	for _, c := range b {
		if c < 0x20 || c >= 0x7f {
			return false
		}
	}
	return true
}

// badText says what is wrong with a string value that no name should hold: a control
// character (NUL, tab, newline, DEL, …), a line or paragraph separator, or bytes that are not
// UTF-8. Such a value breaks one-line messages, CSV and terminal output, and is never a node,
// cluster or pattern name. It returns "" for a good value.
func badText(v string) string {
	for i := 0; i < len(v); i++ {
		if b := v[i]; b < 0x20 || b == 0x7f {
			return fmt.Sprintf("holds control character U+%04X at byte %d", b, i)
		} else if b >= utf8.RuneSelf {
			return badRunes(v)
		}
	}
	return ""
}

func badRunes(v string) string {
	for i, r := range v {
		switch {
		case r == utf8.RuneError:
			if _, n := utf8.DecodeRuneInString(v[i:]); n <= 1 {
				return fmt.Sprintf("is not UTF-8 (byte %d)", i)
			}
		}
	}
	if i, r := cluster.BadRune(v); i >= 0 {
		return fmt.Sprintf("holds control character U+%04X at byte %d", r, i)
	}
	return ""
}

func checkInts(c Column, a *array.Int64, loc batchLoc, first *firstErr) {
	vals := a.Int64Values()
	for r, v := range vals {
		var kind ErrKind
		var want string
		switch c.Check {
		case "nonneg":
			if v < 0 {
				kind, want = ErrNegative, "≥ 0"
			}
		case "positive":
			if v <= 0 {
				kind, want = ErrNonPositive, "> 0"
			}
		case "atleast2":
			if v < 2 {
				kind, want = ErrNonPositive, "≥ 2"
			}
		}
		if kind != "" {
			first.offer(r, func() *InputError {
				return inputErr(loc.at(r), c.Name, kind, "got %d, want %s", v, want)
			})
			return
		}
	}
}

func checkFloats(c Column, a *array.Float64, loc batchLoc, first *firstErr) {
	for r, v := range a.Float64Values() {
		var kind ErrKind
		var want string
		switch {
		case math.IsNaN(v):
			kind, want = ErrNaN, "a number"
		case math.IsInf(v, 0):
			kind, want = ErrInfinite, "a finite number"
		case c.Check == "positive" && v <= 0:
			kind, want = ErrNonPositive, "> 0"
		case c.Check == "nonneg" && v < 0:
			kind, want = ErrNegative, "≥ 0"
		}
		if kind != "" {
			first.offer(r, func() *InputError {
				return inputErr(loc.at(r), c.Name, kind, "got %s, want %s", formatFloat(v), want)
			})
			return
		}
	}
}

// checkRows runs the checks that span columns.
func (ck *checker) checkRows(t *Table, rec arrow.Record, loc batchLoc, first *firstErr) {
	str := func(name string) *array.String { return rec.Column(t.ColumnIndex(name)).(*array.String) }
	distinct := func(names ...string) {
		cols := make([]*array.String, len(names))
		for i, n := range names {
			cols[i] = str(n)
		}
		for r := 0; r < int(rec.NumRows()); r++ {
			for a := 0; a < len(cols); a++ {
				for b := a + 1; b < len(cols); b++ {
					if cols[a].Value(r) == cols[b].Value(r) {
						first.offer(r, func() *InputError {
							return inputErr(loc.at(r), names[b], ErrSameNode, "%s and %s are both %q; want different nodes",
								names[a], names[b], cols[a].Value(r))
						})
						return
					}
				}
			}
		}
	}
	switch t {
	case TransfersTable:
		start := rec.Column(t.ColumnIndex("t_start_s")).(*array.Float64).Float64Values()
		end := rec.Column(t.ColumnIndex("t_end_s")).(*array.Float64).Float64Values()
		for r := range start {
			if d := end[r] - start[r]; d > 0 && !math.IsInf(d, 1) {
				continue
			}
			kind, format := ErrEndBeforeStart, "t_end_s %s is not after t_start_s %s"
			switch {
			case end[r] == start[r]:
				kind = ErrZeroDuration
			case end[r] > start[r]:
				kind, format = ErrInfinite, "t_end_s %s minus t_start_s %s overflows: the duration is infinite"
			}
			first.offer(r, func() *InputError {
				return inputErr(loc.at(r), "t_end_s", kind, format, formatFloat(end[r]), formatFloat(start[r]))
			})
			break
		}
		distinct("src_node", "dst_node")
	case RoundTripsTable:
		distinct("i", "j")
	case OneToTwoTable:
		distinct("root", "j", "k")
	}
}
