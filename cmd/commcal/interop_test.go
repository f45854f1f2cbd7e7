package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/arrow-go/v18/parquet/schema"

	"github.com/commcal/commcal/datasets"
)

// units are the units a numeric column may carry ("1": a count, an index or a ratio).
var units = []string{"s", "B", "bit/s", "s/B", "1"}

// TestEveryNumericColumnHasAUnit walks every table the program defines (the dataset tables
// and every package's output tables) and fails on a numeric column without a unit in its
// Arrow field metadata, or with a unit outside the documented set.
func TestEveryNumericColumnHasAUnit(t *testing.T) {
	var names []string
	for _, tab := range datasets.DefinedTables() {
		names = append(names, tab.Name)
		for _, f := range tab.Schema().Fields() {
			unit, _ := f.Metadata.GetValue("unit")
			switch f.Type.ID() {
			case arrow.INT64, arrow.FLOAT64:
				if !slices.Contains(units, unit) {
					t.Errorf("table %s, column %s (%s): unit %q, want one of %v", tab.Name, f.Name, f.Type, unit, units)
				}
			case arrow.STRING, arrow.BOOL:
				if unit != "" {
					t.Errorf("table %s, column %s (%s): unit %q on a column that is not a number", tab.Name, f.Name, f.Type, unit)
				}
			default:
				t.Errorf("table %s, column %s: type %s", tab.Name, f.Name, f.Type)
			}
		}
	}
	// The walk sees the output tables of every package, not only the dataset's.
	for _, want := range []string{"transfers", "roundtrips", "one_to_two", "collectives", "pingpong_pairs",
		"lmo_nodes", "lmo_links", "measurements", "predictions", "prediction"} {
		if !slices.Contains(names, want) {
			t.Errorf("table %s not among the defined tables %v", want, names)
		}
	}
}

// interopOutputs writes every kind of Parquet file commcal writes: a simulated dataset
// (the generator's writer), a run over it (the ingested dataset, measurements, LMO nodes and
// links, predictions) and predict --parquet. It returns the files.
func interopOutputs(t *testing.T, dir string) []string {
	t.Helper()
	t.Setenv("SOURCE_DATE_EPOCH", "1795219200")
	sim := simulated(t, dir, "--reps", "2")
	run := filepath.Join(dir, "run")
	if code, _, stderr := runCLI(t, "run", "--out", run, sim); code != 0 {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	pq := filepath.Join(dir, "predict.parquet")
	if code, _, stderr := runCLI(t, "predict", "--cluster", "testdata/table1.toml", "--parquet", pq, "testdata/table1.csv"); code != 0 {
		t.Fatalf("predict: exit %d: %s", code, stderr)
	}
	var files []string
	for _, g := range []string{filepath.Join(sim, "*.parquet"), filepath.Join(run, "dataset", "*.parquet"), filepath.Join(run, "*.parquet")} {
		m, _ := filepath.Glob(g)
		files = append(files, m...)
	}
	files = append(files, pq)
	if len(files) != 15 {
		t.Fatalf("%d Parquet files, want 15 (5 + 5 dataset tables, 4 run tables, 1 prediction): %v", len(files), files)
	}
	return files
}

// duckType is the DuckDB type of a column type.
func duckType(c datasets.ColType) string {
	return map[datasets.ColType]string{datasets.String: "VARCHAR", datasets.Int: "BIGINT", datasets.Float: "DOUBLE", datasets.Bool: "BOOLEAN"}[c]
}

// physicalType is the Parquet physical type of a column type.
func physicalType(c datasets.ColType) parquet.Type {
	return map[datasets.ColType]parquet.Type{datasets.String: parquet.Types.ByteArray, datasets.Int: parquet.Types.Int64,
		datasets.Float: parquet.Types.Double, datasets.Bool: parquet.Types.Boolean}[c]
}

// checkSelfDescribing checks what another reader sees in a Parquet file's footer: a REQUIRED
// root (strict readers refuse a REPEATED one), each column's physical type (booleans as
// BOOLEAN), and the stored Arrow schema's unit of every numeric column.
func checkSelfDescribing(t *testing.T, path string, tab *datasets.Table) {
	t.Helper()
	rdr, err := file.OpenParquetFile(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Close()
	sch := rdr.MetaData().Schema
	if rep := sch.Root().RepetitionType(); rep != parquet.Repetitions.Required {
		t.Errorf("%s: root repetition %s, want REQUIRED", path, rep)
	}
	if sch.NumColumns() != len(tab.Columns) {
		t.Fatalf("%s: %d columns, table %s has %d", path, sch.NumColumns(), tab.Name, len(tab.Columns))
	}
	for j, c := range tab.Columns {
		col := sch.Column(j)
		if col.Name() != c.Name || col.PhysicalType() != physicalType(c.Type) {
			t.Errorf("%s: column %d is %s %s, want %s %s", path, j, col.Name(), col.PhysicalType(), c.Name, physicalType(c.Type))
		}
		if c.Type == datasets.String && (col.LogicalType() == nil || !col.LogicalType().Equals(schema.StringLogicalType{})) {
			t.Errorf("%s: column %s has logical type %v, want String", path, c.Name, col.LogicalType())
		}
	}
	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	stored, err := fr.Schema()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range tab.Columns {
		idx := stored.FieldIndices(c.Name)
		if len(idx) != 1 {
			t.Fatalf("%s: stored schema has %d fields %s", path, len(idx), c.Name)
		}
		unit, _ := stored.Field(idx[0]).Metadata.GetValue("unit")
		if unit != c.Unit || (c.Type.Numeric() && unit == "") {
			t.Errorf("%s: column %s has unit %q in the file, the table says %q", path, c.Name, unit, c.Unit)
		}
	}
}

// specFile is what check.cjs compares DuckDB's reading of a file with.
type specFile struct {
	File    string       `json:"file"`
	Table   string       `json:"table"`
	Columns []specColumn `json:"columns"`
	Rows    [][]string   `json:"rows"`
}

type specColumn struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

// spec reads a file with commcal's own reader into a specFile: every value as text.
func spec(t *testing.T, path string, tab *datasets.Table) specFile {
	t.Helper()
	sf := specFile{File: path, Table: tab.Name, Rows: [][]string{}}
	for _, c := range tab.Columns {
		sf.Columns = append(sf.Columns, specColumn{c.Name, duckType(c.Type)})
	}
	err := datasets.ScanParquetFile(context.Background(), path, tab, nil, func(rec arrow.Record) error {
		for r := 0; r < int(rec.NumRows()); r++ {
			row := make([]string, rec.NumCols())
			for j, col := range rec.Columns() {
				switch a := col.(type) {
				case *array.String:
					row[j] = a.Value(r)
				case *array.Int64:
					row[j] = strconv.FormatInt(a.Value(r), 10)
				case *array.Float64:
					row[j] = strconv.FormatFloat(a.Value(r), 'g', -1, 64)
				case *array.Boolean:
					row[j] = strconv.FormatBool(a.Value(r))
				default:
					t.Fatalf("%s: column of type %s", path, col.DataType())
				}
			}
			sf.Rows = append(sf.Rows, row)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(sf.Rows) == 0 {
		t.Fatalf("%s: no rows", path)
	}
	return sf
}

// duckDBModules finds the node_modules directory holding @duckdb/node-api: $COMMCAL_DUCKDB_MODULES,
// else $HOME/.cache/commcal-npm/node_modules (where .ci/run installs it). It returns why not.
func duckDBModules() (node, modules, missing string) {
	node, err := exec.LookPath("node")
	if err != nil {
		return "", "", "node (Node.js) is not installed"
	}
	modules = os.Getenv("COMMCAL_DUCKDB_MODULES")
	if modules == "" {
		home, _ := os.UserHomeDir()
		modules = filepath.Join(home, ".cache", "commcal-npm", "node_modules")
	}
	if _, err := os.Stat(filepath.Join(modules, "@duckdb", "node-api", "package.json")); err != nil {
		return "", "", "DuckDB for Node is not installed in " + modules +
			" (npm install --prefix " + filepath.Dir(modules) + " @duckdb/node-api, or set COMMCAL_DUCKDB_MODULES; .ci/run does it)"
	}
	return node, modules, ""
}

// TestParquetOutputsInterop reads every Parquet file commcal writes with a second,
// independent reader, DuckDB (through Node), and checks each column's type (BOOLEAN,
// BIGINT, DOUBLE, VARCHAR) and every value against what commcal wrote; and, in Go, what any
// reader sees in the footers (root repetition, physical types, units). Without Node or
// DuckDB's npm package the DuckDB part is skipped, naming what is missing, except under CI,
// where it fails.
func TestParquetOutputsInterop(t *testing.T) {
	dir := t.TempDir()
	files := interopOutputs(t, dir)
	var specs []specFile
	tables := map[string]bool{}
	for _, f := range files {
		tab, err := datasets.ParquetTable(f)
		if err != nil {
			t.Fatal(err)
		}
		tables[tab.Name] = true
		checkSelfDescribing(t, f, tab)
		specs = append(specs, spec(t, f, tab))
	}
	if len(tables) != 10 {
		t.Errorf("the outputs hold %d distinct tables, want 10: %v", len(tables), tables)
	}
	// The boolean column is exercised both ways.
	for _, sf := range specs {
		if sf.Table != "predictions" {
			continue
		}
		j := slices.IndexFunc(sf.Columns, func(c specColumn) bool { return c.Name == "asymmetric_pattern" })
		seen := map[string]bool{}
		for _, r := range sf.Rows {
			seen[r[j]] = true
		}
		if !seen["true"] || !seen["false"] {
			t.Errorf("%s: asymmetric_pattern takes only %v", sf.File, seen)
		}
	}

	node, modules, missing := duckDBModules()
	if missing != "" {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI is set and %s", missing)
		}
		t.Skipf("skipping the DuckDB check: %s", missing)
	}
	specPath := filepath.Join(dir, "spec.json")
	data, err := json.Marshal(specs)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(specPath, data, 0o644); err != nil {
		t.Fatal(err)
	}
	script, _ := filepath.Abs(filepath.Join("testdata", "duckdb", "check.cjs"))
	cmd := exec.Command(node, script, specPath, modules)
	out, err := cmd.CombinedOutput()
	t.Logf("DuckDB:\n%s", out)
	if err != nil {
		t.Fatalf("DuckDB disagrees with commcal (%v)", err)
	}
	n := 0
	for _, line := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(line, "ok ") {
			n++
		}
	}
	if n != len(files) {
		t.Errorf("DuckDB checked %d files, want %d", n, len(files))
	}
}
