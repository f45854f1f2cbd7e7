package export

import (
	"bufio"
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/commcal/commcal/datasets"
)

// CSVTable is one table to write as CSV: its definition and a function that streams its
// records (for example a dataset's Scan, or datasets.ScanParquetFile on a run's output).
type CSVTable struct {
	Table *datasets.Table
	Scan  func(ctx context.Context, fn func(arrow.Record) error) error
}

// CSVFile is the name of a table's CSV file.
func CSVFile(t *datasets.Table) string { return t.Name + ".csv" }

// WriteCSVDir writes each table as dir/<name>.csv (WriteCSV) and returns the rows of each.
// dir exists; the files are written in it directly (the caller builds dir atomically).
func WriteCSVDir(ctx context.Context, dir string, tables []CSVTable) ([]int64, error) {
	rows := make([]int64, len(tables))
	for i, ct := range tables {
		var err error
		if rows[i], err = writeCSVFile(ctx, filepath.Join(dir, CSVFile(ct.Table)), ct); err != nil {
			return nil, err
		}
	}
	return rows, nil
}

func writeCSVFile(ctx context.Context, path string, ct CSVTable) (int64, error) {
	f, err := os.Create(path)
	if err != nil {
		return 0, fmt.Errorf("export: %w", err)
	}
	bw := bufio.NewWriterSize(f, 1<<16)
	rows, err := WriteCSV(ctx, bw, ct)
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("export: %w", cerr)
	}
	return rows, err
}

// WriteCSV writes a table as RFC 4180 CSV (encoding/csv: fields quoted where they must be,
// LF line ends): a header row of the column names in the table's order, then a row per
// record row. Integers are written in decimal, floats in their shortest form that parses
// back to the same float64 (strconv 'g', -1; ±Inf and NaN as +Inf, -Inf, NaN), booleans as
// true and false, strings as they are. The CSV of one of the five dataset tables is what
// commcal ingest reads back into the same rows. It returns the rows written (the header not
// counted).
func WriteCSV(ctx context.Context, w io.Writer, ct CSVTable) (int64, error) {
	t := ct.Table
	cw := csv.NewWriter(w)
	header := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		header[i] = c.Name
	}
	if err := cw.Write(header); err != nil {
		return 0, fmt.Errorf("export: %w", err)
	}
	var rows int64
	row := make([]string, len(t.Columns))
	var buf []byte // the formatted fields of one row, which row's strings share
	err := ct.Scan(ctx, func(rec arrow.Record) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if int(rec.NumCols()) != len(t.Columns) {
			panic(fmt.Sprintf("export: a record of %d columns for table %s of %d", rec.NumCols(), t.Name, len(t.Columns)))
		}
		n := int(rec.NumRows())
		for r := 0; r < n; r++ {
			buf = buf[:0]
			ends := make([]int, len(t.Columns))
			for i := range t.Columns {
				buf = appendField(buf, rec.Column(i), r)
				ends[i] = len(buf)
			}
			s, start := string(buf), 0
			for i, end := range ends {
				row[i] = s[start:end]
				start = end
			}
			if err := cw.Write(row); err != nil {
				return fmt.Errorf("export: %w", err)
			}
		}
		rows += int64(n)
		return nil
	})
	if err != nil {
		return 0, err
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return 0, fmt.Errorf("export: %w", err)
	}
	return rows, nil
}

// appendField appends the text of row r of a column; a null is an empty field.
func appendField(buf []byte, col arrow.Array, r int) []byte {
	if col.IsNull(r) {
		return buf
	}
	switch a := col.(type) {
	case *array.String:
		return append(buf, a.Value(r)...)
	case *array.Int64:
		return strconv.AppendInt(buf, a.Value(r), 10)
	case *array.Float64:
		return strconv.AppendFloat(buf, a.Value(r), 'g', -1, 64)
	case *array.Boolean:
		return strconv.AppendBool(buf, a.Value(r))
	}
	panic("export: no CSV form for a column of type " + col.DataType().String())
}
