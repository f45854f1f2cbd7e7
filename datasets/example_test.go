package datasets_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/datasets"
)

// osuLatency is what osu_latency prints: a title, comments, the header and one line per size.
const osuLatency = `# OSU MPI Latency Test v7.4
# Datatype: MPI_CHAR.
# Size       Avg Latency(us)
0                       1.20
1                       1.25
1024                    3.50
`

// tempFile writes content to a file name in a new temporary directory, which the caller
// removes.
func tempFile(name, content string) (dir, path string) {
	dir, err := os.MkdirTemp("", "commcal-example-")
	if err != nil {
		log.Fatal(err)
	}
	path = filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		log.Fatal(err)
	}
	return dir, path
}

// Ingest reads outside files (here an OSU osu_latency output, told by its content), checks
// every row against the schemas and the cluster, and writes a dataset directory; Open and
// ReadAll read its tables back. Each size above 0 bytes becomes a p2p_sweep transfer from
// --src (rank 0) to --dst taking OSU's one-way latency, and the manifest's notes say so.
func ExampleIngest() {
	dir, in := tempFile("latency.txt", osuLatency)
	defer os.RemoveAll(dir)
	cl, err := cluster.LoadNamed("ccpe-testbed")
	if err != nil {
		log.Fatal(err)
	}
	out := filepath.Join(dir, "dataset")
	m, err := datasets.Ingest(context.Background(), datasets.IngestOptions{Cluster: cl, Out: out,
		Sources: []datasets.Source{{Path: in, Src: "X1", Dst: "Y1"}},
		Created: time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		log.Fatal(err)
	}
	src := m.Sources[0]
	fmt.Println(src.Format, src.Table, src.Rows, "rows")
	for _, n := range src.Notes {
		fmt.Println("note:", n)
	}
	ds, err := datasets.Open(out)
	if err != nil {
		log.Fatal(err)
	}
	rows, err := datasets.ReadAll[datasets.Transfer](context.Background(), ds, datasets.TransfersTable)
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range rows {
		fmt.Printf("%s %s %s→%s rep %d: %d B in %.3g s\n", r.Experiment, r.PatternID, r.Src, r.Dst, r.Rep, r.Bytes, r.Seconds())
	}
	// Output:
	// osu transfers 2 rows
	// note: OSU osu_latency v7.4: each row is OSU's average one-way latency (half the round trip; X1 sends first), the file does not say over how many iterations (-i); µs read as 10⁻⁶ s
	// note: OSU osu_latency v7.4: the 0-byte row is left out (a transfer moves at least one byte)
	// p2p_sweep osu_latency/X1>Y1:1 X1→Y1 rep 0: 1 B in 1.25e-06 s
	// p2p_sweep osu_latency/X1>Y1:1024 X1→Y1 rep 0: 1024 B in 3.5e-06 s
}

// A file the adapters cannot read is refused with an *InputError that names the line, the
// column and what is wrong, and nothing is written.
func ExampleIngest_badInput() {
	dir, in := tempFile("latency.txt", "# OSU MPI Latency Test v7.4\n# Size       Avg Latency(us)\n1   fast\n")
	defer os.RemoveAll(dir)
	cl, err := cluster.LoadNamed("ccpe-testbed")
	if err != nil {
		log.Fatal(err)
	}
	out := filepath.Join(dir, "dataset")
	_, err = datasets.Ingest(context.Background(), datasets.IngestOptions{Cluster: cl, Out: out,
		Sources: []datasets.Source{{Path: in, Src: "X1", Dst: "Y1"}}})
	if ie, ok := datasets.IsInputError(err); ok {
		fmt.Printf("line %d, column %q: %s: %s\n", ie.Loc.Line, ie.Column, ie.Kind, ie.Detail)
	}
	if _, err := os.Stat(out); os.IsNotExist(err) {
		fmt.Println("nothing written")
	}
	// Output:
	// line 3, column "Avg Latency(us)": wrong-type: "fast" is not a number
	// nothing written
}

// latencyRow is a row of an output table: the col tags name the columns, unit gives each
// numeric column's unit and doc its description, which go into the Arrow schema.
type latencyRow struct {
	Class   string  `col:"class" doc:"path class"`
	Bytes   int64   `col:"bytes" unit:"B" doc:"message size"`
	Seconds float64 `col:"seconds" unit:"s" doc:"one-way time"`
}

var latencyTable = datasets.DefineTable[latencyRow]("example_latency", "class", "bytes")

// DefineTable derives a table from a row struct's tags; its Arrow schema carries each
// column's unit and description in the field's metadata.
func ExampleDefineTable() {
	for _, c := range latencyTable.Columns {
		fmt.Printf("%s %s unit %q: %s\n", c.Name, c.Type, c.Unit, c.Doc)
	}
	unit, _ := latencyTable.Schema().Field(2).Metadata.GetValue("unit")
	fmt.Println("key", latencyTable.Key, "file", latencyTable.File(), "seconds unit in the schema", unit)
	// Output:
	// class string unit "": path class
	// bytes int64 unit "B": message size
	// seconds float64 unit "s": one-way time
	// key [class bytes] file example_latency.parquet seconds unit in the schema s
}

// WriteParquetFile writes an output table's rows as one Parquet file, atomically, and
// ReadParquetFile reads them back into row structs.
func ExampleReadParquetFile() {
	dir, err := os.MkdirTemp("", "commcal-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, latencyTable.File())
	rows := []latencyRow{{"intra-rack", 1024, 5.1e-5}, {"inter-rack", 1024, 8.2e-5}}
	if err := datasets.WriteParquetFile(path, latencyTable, rows); err != nil {
		log.Fatal(err)
	}
	got, err := datasets.ReadParquetFile[latencyRow](path, latencyTable)
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range got {
		fmt.Printf("%+v\n", r)
	}
	// Output:
	// {Class:intra-rack Bytes:1024 Seconds:5.1e-05}
	// {Class:inter-rack Bytes:1024 Seconds:8.2e-05}
}
