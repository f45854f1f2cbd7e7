package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/urfave/cli/v2"

	"github.com/commcal/commcal/datasets"
	"github.com/commcal/commcal/export"
	"github.com/commcal/commcal/internal/badinput"
	"github.com/commcal/commcal/rundir"
)

func exportCSVCommand() *cli.Command {
	return withUsageErrors(&cli.Command{
		Name:      "csv",
		Usage:     "every table of a dataset, a run directory or a Parquet file as CSV, for readers without Parquet",
		ArgsUsage: "DATASET_OR_RUN_DIR_OR_PARQUET_FILE",
		Description: `Writes to --out one CSV file per table, named after the table (transfers.csv, ...):
   a dataset directory   its tables (checked against the manifest's SHA-256 first)
   a run directory       its dataset's tables and the run's own: measurements, lmo_nodes,
                         lmo_links, predictions (those it holds)
   a Parquet file        the one commcal table it holds (predict --parquet, a run's file)

Each file is RFC 4180 CSV: a header row of the column names in the table's order, then a
row per row; integers in decimal, floats in the shortest form that reads back as the same
number, booleans as true and false. The units are those in the Parquet files' field
metadata (listed in docs/formats.md). The CSV files of a dataset's tables are what
commcal ingest reads: "commcal ingest --cluster C --out ds2 DIR" gives the same rows back.

EXAMPLES:
   commcal export csv --out csv runs/latest
   commcal export csv --table transfers --table roundtrips --out csv sim
   commcal export csv --out pred-csv a2a.parquet`,
		Flags: append([]cli.Flag{
			&cli.StringSliceFlag{Name: "table", Usage: "export only this table (repeatable, or comma-separated); default: every table"},
		}, outFlags("COMMCAL_EXPORT_OUT", "", "directory to write")...),
		Action: act(1, 1, "DATASET_OR_RUN_DIR_OR_PARQUET_FILE", func(c *cli.Context, e env, args []string) error {
			return runExportCSV(c.Context, e, exportCSVOptions{Input: args[0], Tables: c.StringSlice("table"), Output: outputFrom(c)})
		}),
	})
}

// exportCSVOptions are export csv's argument and flags.
type exportCSVOptions struct {
	Input  string   // a dataset directory, a run directory or a Parquet file
	Tables []string // the tables to write; empty: all
	Output outputOptions
}

// runExportCSV writes the tables of a dataset, a run directory or a Parquet file as CSV.
func runExportCSV(ctx context.Context, e env, o exportCSVOptions) error {
	out, err := o.Output.claim(ctx, replaceOutput, o.Input)
	if err != nil {
		return err
	}
	defer out.Release()
	tables, err := csvTables(o.Input)
	if err != nil {
		return err
	}
	if len(o.Tables) > 0 {
		var names []string
		for _, t := range tables {
			names = append(names, t.Table.Name)
		}
		var chosen []export.CSVTable
		for _, want := range o.Tables {
			i := slices.Index(names, strings.TrimSpace(want))
			if i < 0 {
				return usagef("export csv: --table %s: %s has no such table (it has %s)", want, o.Input, strings.Join(names, ", "))
			}
			if !slices.ContainsFunc(chosen, func(c export.CSVTable) bool { return c.Table == tables[i].Table }) {
				chosen = append(chosen, tables[i])
			}
		}
		tables = chosen
	}
	var rows []int64
	err = o.Output.build(func(tmp string) error {
		var err error
		rows, err = export.WriteCSVDir(ctx, tmp, tables)
		return err
	})
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "file\trows\n")
	for i, t := range tables {
		fmt.Fprintf(tw, "%s\t%d\n", filepath.Join(o.Output.Out, export.CSVFile(t.Table)), rows[i])
	}
	return tw.Flush()
}

// csvTables lists the tables an input holds, each with the function that streams it.
func csvTables(input string) ([]export.CSVTable, error) {
	st, err := os.Stat(input)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, badinput.Errorf(input, "no such file or directory")
	} else if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		t, err := datasets.ParquetTable(input)
		if err != nil {
			return nil, err // an *InputError naming the file, or the environment's
		}
		return []export.CSVTable{fileTable(input, t)}, nil
	}
	dsDir, run := input, false
	if _, err := os.Stat(filepath.Join(input, datasets.ManifestFile)); err != nil {
		dsDir, run = filepath.Join(input, rundir.DatasetDir), true
		if _, err := os.Stat(filepath.Join(dsDir, datasets.ManifestFile)); err != nil {
			return nil, badinput.Errorf(input, "neither a dataset directory (no %s) nor a run directory (no %s)",
				datasets.ManifestFile, filepath.Join(rundir.DatasetDir, datasets.ManifestFile))
		}
	}
	ds, err := datasets.Open(dsDir)
	if err != nil {
		return nil, err
	}
	var tables []export.CSVTable
	for _, t := range datasets.Tables {
		if ds.Manifest.Rows(t.Name) == 0 {
			continue
		}
		tables = append(tables, export.CSVTable{Table: t, Scan: func(ctx context.Context, fn func(arrow.Record) error) error {
			return ds.Scan(ctx, t, nil, fn)
		}})
	}
	if run {
		for _, rt := range rundir.Tables() {
			path := filepath.Join(input, rt.File)
			if _, err := os.Stat(path); err == nil {
				tables = append(tables, fileTable(path, rt.Table))
			}
		}
	}
	if len(tables) == 0 {
		return nil, badinput.Errorf(input, "holds no table")
	}
	return tables, nil
}

// fileTable streams a Parquet file of table t.
func fileTable(path string, t *datasets.Table) export.CSVTable {
	return export.CSVTable{Table: t, Scan: func(ctx context.Context, fn func(arrow.Record) error) error {
		return datasets.ScanParquetFile(ctx, path, t, nil, fn)
	}}
}
