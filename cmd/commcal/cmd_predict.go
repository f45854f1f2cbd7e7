package main

import (
	"fmt"
	"path/filepath"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/commcal/commcal/contention"
	"github.com/commcal/commcal/datasets"
	"github.com/commcal/commcal/internal/atomicio"
	"github.com/commcal/commcal/internal/badinput"
)

// predictionRow is one transfer under one model, as printed with --json and written with
// --parquet.
type predictionRow struct {
	FlowID    int64   `col:"flow_id" json:"flow_id" doc:"transfer, in file order from 0"`
	Src       string  `col:"src_node" json:"src" doc:"sending node"`
	Dst       string  `col:"dst_node" json:"dst" doc:"receiving node"`
	Bytes     float64 `col:"bytes" unit:"B" json:"bytes" doc:"message size"`
	Model     string  `col:"model" json:"model" doc:"model"`
	Seconds   float64 `col:"seconds" unit:"s" json:"seconds" doc:"predicted completion time"`
	FirstRate float64 `col:"first_rate_bps" json:"first_rate_bps" doc:"rate during the first step, bit/s"`
	Steps     int64   `col:"steps" json:"steps" doc:"Algorithm-2 steps of the pattern under this model"`
}

var predictionTable = datasets.DefineTable[predictionRow]("prediction")

func predictCommand() *cli.Command {
	return withUsageErrors(&cli.Command{
		Name:      "predict",
		Usage:     "predict each transfer's completion time under each model",
		ArgsUsage: "PATTERN",
		Description: `Reads one pattern — transfers that all start together — and prints every transfer's
predicted completion time under every model. The pattern is a CSV file with a header naming
src, dst and bytes, or JSON: {"flows": [{"src": "X1", "dst": "Y2", "bytes": 1e7}, ...]}.

EXAMPLES:
   commcal predict --cluster ccpe-testbed pattern.csv
   commcal predict --cluster lab.toml --params params.json --parquet times.parquet pattern.json
   commcal predict --cluster ccpe-testbed --json pattern.csv | jq '.[] | select(.model == "asymmetric")'`,
		Flags: append(paramsFlags(),
			clusterFlag(""),
			&cli.BoolFlag{Name: "json", Usage: "print one JSON object per transfer and model instead of the table"},
			&cli.StringFlag{Name: "parquet", Usage: "also write the predictions to this Parquet file (never an input; an existing file needs --force)"},
			&cli.BoolFlag{Name: "force", Usage: "replace an existing --parquet file"},
		),
		Action: func(c *cli.Context) error {
			args, err := positional(c, 1, 1, "PATTERN")
			if err != nil {
				return err
			}
			if p := c.String("parquet"); p != "" {
				inputs := append([]string{args[0]}, c.String("cluster"), c.String("params"))
				out, err := atomicio.Claim(c.Context, atomicio.Target{Path: p, File: true, Inputs: inputs, Force: c.Bool("force")})
				if err != nil {
					return err
				}
				defer out.Release()
			}
			cl, err := loadCluster(c)
			if err != nil {
				return err
			}
			params, err := paramsFromFlags(c)
			if err != nil {
				return err
			}
			net, err := params.Network(cl)
			if err != nil {
				return badinput.Wrap(c.String("params"), err)
			}
			flows, err := contention.ReadPatternFile(args[0])
			if err != nil {
				return badinput.Wrap(args[0], err)
			}
			models := contention.Models()
			preds := make([]*contention.Prediction, len(models))
			var rows []predictionRow
			for i, m := range models {
				if preds[i], err = m.Predict(net, flows); err != nil {
					return badinput.Wrap(args[0], err)
				}
				for f, fl := range flows {
					rows = append(rows, predictionRow{FlowID: int64(f), Src: fl.Src, Dst: fl.Dst, Bytes: fl.Bytes, Model: m.Name(),
						Seconds: preds[i].Times[f], FirstRate: preds[i].FirstRates[f], Steps: int64(preds[i].Steps)})
				}
			}
			if p := c.String("parquet"); p != "" {
				if err := datasets.WriteParquetFile(filepath.Clean(p), predictionTable, rows); err != nil {
					return err
				}
			}
			if c.Bool("json") {
				return printJSON(c, rows)
			}
			tw := tabwriter.NewWriter(c.App.Writer, 0, 0, 2, ' ', 0)
			fmt.Fprint(tw, "transfer\tsrc\tdst\tbytes")
			for _, m := range models {
				fmt.Fprintf(tw, "\t%s (s)", m.Name())
			}
			fmt.Fprintln(tw)
			for f, fl := range flows {
				fmt.Fprintf(tw, "%d\t%s\t%s\t%.0f", f, fl.Src, fl.Dst, fl.Bytes)
				for i := range models {
					fmt.Fprintf(tw, "\t%.6g", preds[i].Times[f])
				}
				fmt.Fprintln(tw)
			}
			fmt.Fprint(tw, "steps\t\t\t")
			for i := range models {
				fmt.Fprintf(tw, "\t%d", preds[i].Steps)
			}
			fmt.Fprintln(tw)
			return tw.Flush()
		},
	})
}
