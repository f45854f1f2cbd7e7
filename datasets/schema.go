package datasets

import (
	"fmt"
	"reflect"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/commcal/commcal/experiments"
)

// Transfer is one transfer of a concurrent pattern, in one repetition. All transfers of a
// pattern's repetition start together; a point-to-point sweep is a pattern of one transfer.
type Transfer struct {
	Cluster    string  `col:"cluster" check:"cluster" doc:"cluster name, as in the description"`
	Experiment string  `col:"experiment" check:"experiment" doc:"experiment kind (closed set, see Experiments)"`
	PatternID  string  `col:"pattern_id" check:"nonempty" doc:"pattern identifier, unique within the experiment"`
	Rep        int64   `col:"rep" unit:"1" check:"nonneg" doc:"repetition number, from 0"`
	FlowID     int64   `col:"flow_id" unit:"1" check:"nonneg" doc:"transfer number within the pattern, from 0"`
	Src        string  `col:"src_node" check:"node" doc:"sending node"`
	Dst        string  `col:"dst_node" check:"node" doc:"receiving node"`
	Bytes      int64   `col:"bytes" unit:"B" check:"positive" doc:"message size"`
	TStart     float64 `col:"t_start_s" unit:"s" check:"finite" doc:"common start of the repetition"`
	TEnd       float64 `col:"t_end_s" unit:"s" check:"finite" doc:"arrival of the transfer's last byte"`
}

// Seconds is the transfer's completion time.
func (t Transfer) Seconds() float64 { return t.TEnd - t.TStart }

// RoundTrip is one round trip i→j→i: BytesOut from i to j, then BytesBack from j to i.
type RoundTrip struct {
	Cluster   string  `col:"cluster" check:"cluster" doc:"cluster name"`
	I         string  `col:"i" check:"node" doc:"node that starts and ends the round trip"`
	J         string  `col:"j" check:"node" doc:"node that replies"`
	BytesOut  int64   `col:"bytes_out" unit:"B" check:"nonneg" doc:"message size i to j"`
	BytesBack int64   `col:"bytes_back" unit:"B" check:"nonneg" doc:"reply size j to i"`
	Rep       int64   `col:"rep" unit:"1" check:"nonneg" doc:"repetition number, from 0"`
	Seconds   float64 `col:"seconds" unit:"s" check:"positive" doc:"round-trip time seen by i"`
}

// OneToTwo is one one-to-two experiment of the LMO estimation (Lastovetsky et al.): the root
// sends Bytes to J and to K and receives an empty reply from each.
type OneToTwo struct {
	Cluster string  `col:"cluster" check:"cluster" doc:"cluster name"`
	Root    string  `col:"root" check:"node" doc:"sending node"`
	J       string  `col:"j" check:"node" doc:"first receiver"`
	K       string  `col:"k" check:"node" doc:"second receiver"`
	Bytes   int64   `col:"bytes" unit:"B" check:"nonneg" doc:"message size sent to each receiver"`
	Rep     int64   `col:"rep" unit:"1" check:"nonneg" doc:"repetition number, from 0"`
	Seconds float64 `col:"seconds" unit:"s" check:"positive" doc:"time until both replies arrived"`
}

// Collective is one measurement of a collective operation: a point of a scatter or gather
// sweep, or one run of an all-to-all, all-gather or broadcast. Root is the root's node, and
// for the operations without a root (alltoall, allgather) the node of rank 0.
type Collective struct {
	Cluster string  `col:"cluster" check:"cluster" doc:"cluster name"`
	Op      string  `col:"op" check:"op" doc:"collective: scatter, gather, alltoall, allgather or bcast"`
	Root    string  `col:"root" check:"node" doc:"root node"`
	Procs   int64   `col:"procs" unit:"1" check:"atleast2" doc:"processes taking part, root included"`
	Bytes   int64   `col:"bytes" unit:"B" check:"nonneg" doc:"message size per process and peer (the block each process sends to or receives from each other; bcast: the whole message)"`
	Rep     int64   `col:"rep" unit:"1" check:"nonneg" doc:"repetition number, from 0"`
	Seconds float64 `col:"seconds" unit:"s" check:"positive" doc:"execution time"`
}

// PingPongPairs is one measurement of the L-parameter benchmark: Pairs concurrent ping-pong
// pairs across the bisection, with the decomposition of the round trip of the L micro-benchmark (thesis appendix §A.5)
// (L = RTT/2 − Os − Or − Ur).
type PingPongPairs struct {
	Cluster string  `col:"cluster" check:"cluster" doc:"cluster name"`
	Pairs   int64   `col:"pairs" unit:"1" check:"positive" doc:"concurrent ping-pong pairs"`
	Bytes   int64   `col:"bytes" unit:"B" check:"nonneg" doc:"message size"`
	Rep     int64   `col:"rep" unit:"1" check:"nonneg" doc:"repetition number, from 0"`
	RTT     float64 `col:"rtt_s" unit:"s" check:"positive" doc:"round-trip time"`
	Os      float64 `col:"os_s" unit:"s" check:"nonneg" doc:"send overhead"`
	Or      float64 `col:"or_s" unit:"s" check:"nonneg" doc:"receive overhead"`
	Ur      float64 `col:"ur_s" unit:"s" check:"nonneg" doc:"receive-side unpacking time"`
}

// Schedule is one run of a collective measured as the rounds of a named algorithm (package
// schedule), as the benchmark engine runs one: each rank a process on its own node, rank i on
// the i-th node from Root in the cluster description's order (rank 0, the root, on Root),
// posting each round's sends and receives once its previous round's have ended. Seconds runs from the common start
// to the last rank's last receive.
type Schedule struct {
	Cluster   string  `col:"cluster" check:"cluster" doc:"cluster name"`
	Op        string  `col:"op" check:"scheduleop" doc:"collective: alltoall, allgather or bcast (see the collectives table)"`
	Algorithm string  `col:"algorithm" check:"nonempty" doc:"the algorithm whose rounds ran (docs/models.md, Collectives)"`
	Root      string  `col:"root" check:"node" doc:"node of rank 0, the root; rank i runs on the i-th node from it in the cluster description's order"`
	Procs     int64   `col:"procs" unit:"1" check:"atleast2" doc:"processes taking part, one per node"`
	Bytes     int64   `col:"bytes" unit:"B" check:"positive" doc:"message size, as the collectives table's"`
	Rep       int64   `col:"rep" unit:"1" check:"nonneg" doc:"repetition number, from 0"`
	Seconds   float64 `col:"seconds" unit:"s" check:"positive" doc:"execution time: the last rank's last byte after the common start"`
}

// Experiments is the closed set of values of the transfers table's experiment column: the
// experiments package's names.
var Experiments = experiments.All()

// CollectiveOps is the closed set of values of the collectives table's op column.
var CollectiveOps = []string{"scatter", "gather", "alltoall", "allgather", "bcast"}

// ColType is a column's logical type.
type ColType uint8

// Column types; on disk they are Arrow utf8, int64, float64 and boolean (Parquet BYTE_ARRAY
// with the STRING logical type, INT64, DOUBLE and BOOLEAN).
const (
	String ColType = iota
	Int
	Float
	Bool
)

// Numeric says whether values of the type are numbers, which carry a unit.
func (t ColType) Numeric() bool { return t == Int || t == Float }

// String names the type as the tables' documentation does.
func (t ColType) String() string {
	switch t {
	case String:
		return "string"
	case Int:
		return "int64"
	case Float:
		return "float64"
	case Bool:
		return "bool"
	}
	return fmt.Sprintf("ColType(%d)", uint8(t))
}

// Column describes one column of a table.
type Column struct {
	Name  string
	Type  ColType
	Unit  string // "s", "B", "bit/s", "s/B", "1" (a count or a ratio); empty for strings and booleans
	Doc   string
	Check string // see check.go
	field []int  // index path of the struct field (reflect.Value.FieldByIndex)
}

// Table is one of the six tables: its columns (in on-disk order), its key and its row type.
type Table struct {
	Name    string
	Columns []Column
	Key     []string
	schema  *arrow.Schema
	rowType reflect.Type
	colIdx  map[string]int
	keyIdx  []int
}

// Schema is the table's Arrow schema; each field's metadata holds its unit and description.
func (t *Table) Schema() *arrow.Schema { return t.schema }

// ColumnIndex returns the position of a column, or -1.
func (t *Table) ColumnIndex(name string) int {
	if i, ok := t.colIdx[name]; ok {
		return i
	}
	return -1
}

// File is the table's file name inside a dataset directory.
func (t *Table) File() string { return t.Name + ".parquet" }

// The tables, in canonical order.
var (
	TransfersTable     = DefineTable[Transfer]("transfers", "cluster", "experiment", "pattern_id", "rep", "flow_id")
	RoundTripsTable    = DefineTable[RoundTrip]("roundtrips", "cluster", "i", "j", "bytes_out", "bytes_back", "rep")
	OneToTwoTable      = DefineTable[OneToTwo]("one_to_two", "cluster", "root", "j", "k", "bytes", "rep")
	CollectivesTable   = DefineTable[Collective]("collectives", "cluster", "op", "root", "procs", "bytes", "rep")
	PingPongPairsTable = DefineTable[PingPongPairs]("pingpong_pairs", "cluster", "pairs", "bytes", "rep")
	SchedulesTable     = DefineTable[Schedule]("schedules", "cluster", "op", "algorithm", "root", "procs", "bytes", "rep")
	Tables             = []*Table{TransfersTable, RoundTripsTable, OneToTwoTable, CollectivesTable, PingPongPairsTable, SchedulesTable}
)

// TableByName finds a table; ok is false for an unknown name.
func TableByName(name string) (*Table, bool) {
	for _, t := range Tables {
		if t.Name == name {
			return t, true
		}
	}
	return nil, false
}

// TableNames lists the table names in canonical order.
func TableNames() []string {
	names := make([]string, len(Tables))
	for i, t := range Tables {
		names[i] = t.Name
	}
	return names
}

// DefineTable derives a table from its row struct's tags: col (name), unit, doc, and check
// (input tables only; see check.go). Other packages use it for their output tables. Row
// structs have string, int64, float64 and bool fields only; an embedded struct's fields are
// columns in their place, so that two tables can share a set of columns. Every numeric column has a unit
// ("1" for counts, indices and ratios); TestEveryNumericColumnHasAUnit in cmd/commcal checks
// every table of the program. The table is added to DefinedTables.
func DefineTable[R any](name string, key ...string) *Table {
	rt := reflect.TypeFor[R]()
	t := &Table{Name: name, Key: key, rowType: rt, colIdx: map[string]int{}}
	defer func() {
		definedMu.Lock()
		defined = append(defined, t)
		definedMu.Unlock()
	}()
	var fields []arrow.Field
	for _, f := range reflect.VisibleFields(rt) {
		if f.Anonymous && f.Type.Kind() == reflect.Struct {
			continue // an embedded struct: its fields follow it, columns in their own right
		}
		c := Column{Name: f.Tag.Get("col"), Unit: f.Tag.Get("unit"), Doc: f.Tag.Get("doc"), Check: f.Tag.Get("check"), field: f.Index}
		var at arrow.DataType
		switch f.Type.Kind() {
		case reflect.String:
			c.Type, at = String, arrow.BinaryTypes.String
		case reflect.Int64:
			c.Type, at = Int, arrow.PrimitiveTypes.Int64
		case reflect.Float64:
			c.Type, at = Float, arrow.PrimitiveTypes.Float64
		case reflect.Bool:
			c.Type, at = Bool, arrow.FixedWidthTypes.Boolean
		default:
			panic(fmt.Sprintf("datasets: %s.%s: unsupported field type %s", rt.Name(), f.Name, f.Type))
		}
		if c.Name == "" {
			panic(fmt.Sprintf("datasets: %s.%s: missing col tag", rt.Name(), f.Name))
		}
		t.colIdx[c.Name] = len(t.Columns)
		t.Columns = append(t.Columns, c)
		fields = append(fields, arrow.Field{Name: c.Name, Type: at, Nullable: false,
			Metadata: arrow.NewMetadata([]string{"unit", "doc"}, []string{c.Unit, c.Doc})})
	}
	for _, k := range key {
		i, ok := t.colIdx[k]
		if !ok {
			panic("datasets: key column " + k + " not in table " + name)
		}
		t.keyIdx = append(t.keyIdx, i)
	}
	md := arrow.NewMetadata([]string{TableKey}, []string{name})
	t.schema = arrow.NewSchema(fields, &md)
	return t
}

var (
	definedMu sync.Mutex
	defined   []*Table
)

// DefinedTables lists every table DefineTable has made so far, in the order they were
// defined: the five input tables and the output tables of the packages the program links.
func DefinedTables() []*Table {
	definedMu.Lock()
	defer definedMu.Unlock()
	return append([]*Table(nil), defined...)
}
