package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/commcal/commcal/contention"
	"github.com/commcal/commcal/datasets"
	"github.com/commcal/commcal/rundir"
	"github.com/commcal/commcal/validate"
)

// readCSV reads a whole CSV file: its header and rows.
func readCSV(t *testing.T, path string) ([]string, [][]string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil || len(recs) == 0 {
		t.Fatalf("%s: %v (%d records)", path, err, len(recs))
	}
	return recs[0], recs[1:]
}

// readAllTables reads every table of a dataset into row structs.
func readAllTables(t *testing.T, dir string) []any {
	t.Helper()
	ds, err := datasets.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	tr, err1 := datasets.ReadAll[datasets.Transfer](ctx, ds, datasets.TransfersTable)
	rt, err2 := datasets.ReadAll[datasets.RoundTrip](ctx, ds, datasets.RoundTripsTable)
	ot, err3 := datasets.ReadAll[datasets.OneToTwo](ctx, ds, datasets.OneToTwoTable)
	co, err4 := datasets.ReadAll[datasets.Collective](ctx, ds, datasets.CollectivesTable)
	pp, err5 := datasets.ReadAll[datasets.PingPongPairs](ctx, ds, datasets.PingPongPairsTable)
	sc, err6 := datasets.ReadAll[datasets.Schedule](ctx, ds, datasets.SchedulesTable)
	for _, err := range []error{err1, err2, err3, err4, err5, err6} {
		if err != nil {
			t.Fatal(err)
		}
	}
	return []any{tr, rt, ot, co, pp, sc}
}

// TestExportCSVDataset exports every table of a simulated dataset as CSV, checks the files
// (header, rows, floats exact), ingests the CSV directory back and gets the same rows, and
// exports twice to the same bytes.
func TestExportCSVDataset(t *testing.T) {
	dir := t.TempDir()
	sim := simulated(t, dir, "--reps", "2")
	out := filepath.Join(dir, "csv")
	code, stdout, stderr := runCLI(t, "export", "csv", "--out", out, sim)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	m, err := datasets.ReadManifest(sim)
	if err != nil {
		t.Fatal(err)
	}
	for _, tab := range datasets.Tables {
		path := filepath.Join(out, tab.Name+".csv")
		if tab == datasets.SchedulesTable && m.Rows(tab.Name) == 0 { // the simulator measures no schedules
			if _, err := os.Stat(path); !os.IsNotExist(err) {
				t.Errorf("%s: a CSV file for a table the dataset does not hold (%v)", tab.Name, err)
			}
			continue
		}
		header, rows := readCSV(t, path)
		var want []string
		for _, c := range tab.Columns {
			want = append(want, c.Name)
		}
		if !slices.Equal(header, want) {
			t.Errorf("%s: header %v, want %v", tab.Name, header, want)
		}
		if int64(len(rows)) != m.Rows(tab.Name) || len(rows) == 0 {
			t.Errorf("%s: %d rows, the manifest says %d", tab.Name, len(rows), m.Rows(tab.Name))
		}
		if !strings.Contains(stdout, path) {
			t.Errorf("stdout does not list %s:\n%s", path, stdout)
		}
	}
	// Floats are written in their shortest exact form: the first transfer's end time reads
	// back to the Parquet value bit for bit (it was drawn with noise, so it has many digits).
	orig := readAllTables(t, sim)
	_, rows := readCSV(t, filepath.Join(out, "transfers.csv"))
	first := orig[0].([]datasets.Transfer)[0]
	if v, err := strconv.ParseFloat(rows[0][datasets.TransfersTable.ColumnIndex("t_end_s")], 64); err != nil || v != first.TEnd || len(rows[0][9]) < 10 {
		t.Errorf("t_end_s %q, want %v exactly", rows[0][9], first.TEnd)
	}

	// The CSV directory ingests back into the same rows.
	back := filepath.Join(dir, "back")
	if code, _, stderr := runCLI(t, "ingest", "--cluster", "ccpe-testbed", "--out", back, out); code != 0 {
		t.Fatalf("ingest of the CSV: exit %d: %s", code, stderr)
	}
	got := readAllTables(t, back)
	for i, tab := range datasets.Tables {
		if !reflect.DeepEqual(got[i], orig[i]) {
			t.Errorf("%s: the rows ingested from CSV differ from the dataset's", tab.Name)
		}
	}

	// The same input gives the same bytes; --table chooses tables.
	out2 := filepath.Join(dir, "csv2")
	if code, _, stderr := runCLI(t, "export", "csv", "--table", "roundtrips,transfers", "--out", out2, sim); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	entries, _ := os.ReadDir(out2)
	var names []string
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), ".") {
			names = append(names, e.Name())
		}
	}
	if !slices.Equal(names, []string{"roundtrips.csv", "transfers.csv"}) {
		t.Errorf("--table roundtrips,transfers wrote %v", names)
	}
	for _, f := range names {
		a, _ := os.ReadFile(filepath.Join(out, f))
		b, _ := os.ReadFile(filepath.Join(out2, f))
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs between two exports", f)
		}
	}
}

// TestExportCSVRunAndFile exports a run directory (its dataset's tables and its own) and a
// predict --parquet file, and checks what is refused.
func TestExportCSVRunAndFile(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "1795219200")
	dir := t.TempDir()
	run := filepath.Join(dir, "run")
	if code, _, stderr := runCLI(t, "run", "--out", run); code != 0 {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	out := filepath.Join(dir, "csv")
	if code, _, stderr := runCLI(t, "export", "csv", "--out", out, run); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	preds, err := datasets.ReadParquetFile[validate.Row](filepath.Join(run, rundir.PredictionsFile), validate.PredictionsTable)
	if err != nil {
		t.Fatal(err)
	}
	header, rows := readCSV(t, filepath.Join(out, "predictions.csv"))
	col := slices.Index(header, "asymmetric_pattern")
	if len(rows) != len(preds) || col < 0 {
		t.Fatalf("predictions.csv: %d rows (want %d), header %v", len(rows), len(preds), header)
	}
	asym := 0
	for i, r := range rows {
		if r[col] != strconv.FormatBool(preds[i].Asymmetric) {
			t.Fatalf("row %d: asymmetric_pattern %q, the Parquet file says %t", i+1, r[col], preds[i].Asymmetric)
		}
		if preds[i].Asymmetric {
			asym++
		}
	}
	if asym == 0 || asym == len(rows) {
		t.Errorf("%d of %d transfers in asymmetric patterns: the boolean is not exercised both ways", asym, len(rows))
	}
	for _, f := range []string{"transfers.csv", "measurements.csv"} {
		if _, rows := readCSV(t, filepath.Join(out, f)); len(rows) == 0 {
			t.Errorf("%s: no rows", f)
		}
	}

	pq := filepath.Join(dir, "p.parquet")
	if code, _, stderr := runCLI(t, "predict", "--cluster", "testdata/table1.toml", "--parquet", pq, "testdata/table1.csv"); code != 0 {
		t.Fatalf("predict: exit %d: %s", code, stderr)
	}
	pout := filepath.Join(dir, "pcsv")
	if code, _, stderr := runCLI(t, "export", "csv", "--out", pout, pq); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if header, rows := readCSV(t, filepath.Join(pout, "prediction.csv")); len(rows) != 5*len(contention.Models()) || header[0] != "pattern_id" {
		t.Errorf("prediction.csv: %d rows, header %v", len(rows), header)
	}

	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"unknown table", []string{"--table", "nope", "--out", filepath.Join(dir, "x1"), run}, "has no such table"},
		{"not a dataset", []string{"--out", filepath.Join(dir, "x2"), "testdata"}, "neither a dataset directory"},
		{"not a commcal Parquet file", []string{"--out", filepath.Join(dir, "x3"), writeForeignParquet(t, dir)}, "not a table commcal wrote"},
		{"missing input", []string{"--out", filepath.Join(dir, "x4"), filepath.Join(dir, "absent")}, "no such file"},
	} {
		code, _, stderr := runCLI(t, append([]string{"export", "csv"}, c.args...)...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%s: exit %d, %q; want 2 and %q", c.name, code, stderr, c.want)
		}
		if _, err := os.Stat(c.args[len(c.args)-2]); err == nil {
			t.Errorf("%s: --out was written", c.name)
		}
	}
}

// writeForeignParquet writes a Parquet file that another program could have written: valid,
// but without commcal's table name in its metadata.
func writeForeignParquet(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "foreign.parquet")
	writeParquet(t, path, []arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int64}}, func(b *array.RecordBuilder) {
		b.Field(0).(*array.Int64Builder).AppendValues([]int64{1, 2}, nil)
	})
	return path
}
