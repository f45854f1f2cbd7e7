package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
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
			e, err := envFrom(c)
			if err != nil {
				return err
			}
			return runPredict(c.Context, e, predictOptions{Pattern: args[0], Cluster: c.String("cluster"), Params: paramsFrom(c),
				Parquet: c.String("parquet"), Force: c.Bool("force"), JSON: c.Bool("json")})
		},
	})
}

// predictOptions are predict's argument and flags.
type predictOptions struct {
	Pattern string
	Cluster string
	Params  paramsOptions
	Parquet string // also write the predictions here
	Force   bool   // replace an existing Parquet file
	JSON    bool
}

// runPredict predicts every transfer of a pattern under every model.
func runPredict(ctx context.Context, e env, o predictOptions) error {
	if o.Parquet != "" {
		out, err := atomicio.Claim(ctx, atomicio.Target{Path: o.Parquet, File: true, Force: o.Force,
			Inputs: slices.DeleteFunc([]string{o.Pattern, o.Cluster, o.Params.File}, func(p string) bool { _, err := os.Stat(p); return err != nil })})
		if err != nil {
			return err
		}
		defer out.Release()
	}
	cl, err := loadCluster(o.Cluster)
	if err != nil {
		return err
	}
	params, err := o.Params.load()
	if err != nil {
		return err
	}
	net, err := params.Network(cl)
	if err != nil {
		return badinput.Wrap(o.Params.File, err)
	}
	flows, err := contention.ReadPatternFile(o.Pattern)
	if err != nil {
		return badinput.Wrap(o.Pattern, err)
	}
	models := contention.Models()
	preds := make([]*contention.Prediction, len(models))
	var rows []predictionRow
	for i, m := range models {
		if preds[i], err = m.Predict(net, flows); err != nil {
			return badinput.Wrap(o.Pattern, err)
		}
		for f, fl := range flows {
			rows = append(rows, predictionRow{FlowID: int64(f), Src: fl.Src, Dst: fl.Dst, Bytes: fl.Bytes, Model: m.Name(),
				Seconds: preds[i].Times[f], FirstRate: preds[i].FirstRates[f], Steps: int64(preds[i].Steps)})
		}
	}
	if o.Parquet != "" {
		if err := datasets.WriteParquetFile(filepath.Clean(o.Parquet), predictionTable, rows); err != nil {
			return err
		}
	}
	if o.JSON {
		return e.printJSON(rows)
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
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
}
