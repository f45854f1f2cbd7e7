package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/contention"
	"github.com/commcal/commcal/datasets"
	"github.com/commcal/commcal/estimate"
	"github.com/commcal/commcal/experiments"
	"github.com/commcal/commcal/internal/atomicio"
	"github.com/commcal/commcal/internal/badinput"
	"github.com/commcal/commcal/rundir"
	"github.com/commcal/commcal/schedule"
)

// predictionRow is one transfer under one model, as printed with --json and written with
// --parquet.
type predictionRow struct {
	Pattern   string  `col:"pattern_id" json:"pattern" doc:"pattern: the file's name, its pattern column, or the workload's"`
	FlowID    int64   `col:"flow_id" unit:"1" json:"flow_id" doc:"transfer, in the pattern's order from 0"`
	Src       string  `col:"src_node" json:"src" doc:"sending node"`
	Dst       string  `col:"dst_node" json:"dst" doc:"receiving node"`
	Bytes     float64 `col:"bytes" unit:"B" json:"bytes" doc:"message size"`
	Model     string  `col:"model" json:"model" doc:"model"`
	Seconds   float64 `col:"seconds" unit:"s" json:"seconds" doc:"predicted completion time"`
	FirstRate float64 `col:"first_rate_bps" unit:"bit/s" json:"first_rate_bps" doc:"rate during the first step"`
	Steps     int64   `col:"steps" unit:"1" json:"steps" doc:"Algorithm-2 steps of the pattern under this model"`
}

var predictionTable = datasets.DefineTable[predictionRow]("prediction")

// predictFormat is the format tag of what predict --json prints.
const predictFormat = "commcal-predict/1"

// predictJSON is what predict --json prints: what became of the calibration's parameters
// when it was fitted on another cluster, and every transfer under every model.
type predictJSON struct {
	Format      string          `json:"format"`
	Carry       *estimate.Carry `json:"carry,omitempty"`
	Transfers   []predictionRow `json:"transfers"`
	Collectives []collectiveRow `json:"collectives,omitempty"`
}

// collectiveRow is one --collective under one model: the schedule (its algorithm, the rule
// that chose it, its rounds) and the predicted time of the whole collective and of each round.
type collectiveRow struct {
	Spec      string    `json:"spec"`
	Op        string    `json:"op"`
	Ranks     int       `json:"ranks"`
	Bytes     float64   `json:"bytes"`
	Algorithm string    `json:"algorithm"`
	Rule      string    `json:"rule"`
	Model     string    `json:"model"`
	Seconds   float64   `json:"seconds"`
	Rounds    []float64 `json:"rounds_s"`
	// ExpectedMax says whether each round ended with its expected slowest transfer under
	// the calibration's transfer spread, rather than its slowest predicted one.
	ExpectedMax bool `json:"expected_max,omitempty"`
}

// maxTableRows is the most transfers predict prints one line each; beyond, a line per
// pattern and model (--json and --parquet always hold every transfer).
const maxTableRows = 1000

func predictCommand() *cli.Command {
	return withUsageErrors(&cli.Command{
		Name:      "predict",
		Usage:     "predict each transfer's completion time under each model",
		ArgsUsage: "[PATTERN_FILE_OR_DIR...]",
		Description: `Predicts the completion time of every transfer of one or many patterns — sets of transfers
that start together — under every model (or those of --models), using the parameters of
--calibration (a calibration.json of "commcal estimate" or "commcal run", penalty table
included) or --params, with --efficiency and --contra-factor over either.

A calibration of another cluster than --cluster (what if the cluster had 64 nodes, or a
25 GbE backbone?) is applied resource class by resource class: a capacity, ceiling or
Hockney fit is carried where --cluster has the class (NICs, backbone, rack uplinks,
intra- and inter-rack paths) at the nominal rate it was fitted for, and falls back to the
nominal rate times the efficiency where the rate differs; fractions and the learned
models' factors are carried as they are; LMO's per-node parameters are dropped. A note on
stderr (and "carry" in --json) lists what was carried and what fell back; a calibration
of which nothing applies is refused.

Patterns come from files, directories of files, and generated workloads:
   CSV      a header naming src, dst and bytes, and optionally pattern: rows with the same
            pattern value form one pattern (a file without the column is one pattern)
   JSON     {"flows": [{"src": "X1", "dst": "Y2", "bytes": 1e7}, ...]}, the bare list, or
            {"patterns": [{"id": "a", "flows": [...]}, ...]}
   a directory: every .csv and .json file in it, in name order
   --workload (repeatable):
` + indent(experiments.WorkloadHelp, "            ") + `

A collective (--collective, repeatable) is predicted as the rounds of an algorithm, each
round's transfers started together and the next round started when the slowest ends (with
--calibration, when the slowest is expected to end, given how the calibration's transfers
scatter from one repetition to the next: calibration.json's transfer_spread); the
output names the algorithm and the rule that chose it:
   ` + schedule.SpecHelp + `

Patterns are predicted on all cores; the output's order is the input's. Up to 1000
transfers are printed a line each; beyond, a line per pattern (transfers, makespan, mean
time, steps per model) — --json and --parquet always hold every transfer.

EXAMPLES:
   commcal predict --cluster ccpe-testbed pattern.csv
   commcal predict --cluster lab.toml --calibration runs/latest/calibration.json --models asymmetric,maxmin patterns/
   commcal predict --cluster bigger.toml --calibration runs/latest/calibration.json --summary pattern.csv
   commcal predict --cluster lab.toml --workload all-to-all:4e6 --parquet a2a.parquet
   commcal predict --cluster lab.toml --collective alltoall:4e6:alg=auto:mpich --collective bcast:1e6:alg=binomial
   commcal predict --cluster ccpe-testbed --workload random:nodes=20,d=2,count=50,seed=7 --json | jq '.transfers[] | select(.model == "maxmin")'`,
		Flags: append(paramsFlags(),
			clusterFlag(""),
			&cli.StringFlag{Name: "calibration", EnvVars: []string{"COMMCAL_CALIBRATION"},
				Usage: "calibration.json to predict with (parameters and penalty table), of --cluster or carried to it class by class; --params is then not used"},
			&cli.StringFlag{Name: "models", Usage: "comma-separated models (default: all): " + strings.Join(contention.Names(), ", ")},
			&cli.GenericFlag{Name: "workload", Value: &repeated{}, Usage: "a generated workload (repeatable): all-to-all:BYTES, alltoallv:FILE, random:nodes=N,d=D,..."},
			&cli.GenericFlag{Name: "collective", Value: &repeated{}, Usage: "an MPI collective predicted as the rounds of its algorithm (repeatable): OP:BYTES[:ranks=N][:ppn=K][:root=R]:alg=NAME|auto:openmpi|auto:mpich"},
			&cli.BoolFlag{Name: "summary", Usage: "one line per pattern and model, however few transfers"},
			&cli.BoolFlag{Name: "json", Usage: "print one JSON object per transfer and model instead of the table"},
			&cli.StringFlag{Name: "parquet", Usage: "also write the predictions to this Parquet file (never an input; an existing file needs --force)"},
			&cli.BoolFlag{Name: "force", Usage: "replace an existing --parquet file"},
		),
		Action: act(0, -1, "PATTERN_FILE_OR_DIR", func(c *cli.Context, e env, args []string) error {
			workloads := c.Generic("workload").(*repeated).values
			collectives := c.Generic("collective").(*repeated).values
			if len(args) == 0 && len(workloads) == 0 && len(collectives) == 0 {
				return usagef("predict: no pattern: give pattern files or directories, --workload or --collective")
			}
			if len(collectives) > 0 && c.String("parquet") != "" {
				return usagef("predict: --parquet holds transfers, and --collective predicts whole collectives; print them (--json) instead")
			}
			models, err := chooseModels(c.String("models"))
			if err != nil {
				return err
			}
			if c.String("calibration") != "" && c.String("params") != "" {
				return usagef("predict: --calibration and --params both give the parameters; choose one")
			}
			return runPredict(c.Context, e, predictOptions{Patterns: args, Workloads: workloads, Collectives: collectives, Cluster: c.String("cluster"),
				Params: paramsFrom(c), Calibration: c.String("calibration"), Models: models, Parquet: c.String("parquet"),
				Force: c.Bool("force"), JSON: c.Bool("json"), Summary: c.Bool("summary")})
		}),
	})
}

// predictOptions are predict's arguments and flags.
type predictOptions struct {
	Patterns    []string // files or directories
	Workloads   []string // generated workload specs
	Collectives []string // collective specs (schedule.SpecHelp)
	Cluster     string
	Params      paramsOptions
	Calibration string
	Models      []contention.Model
	Parquet     string // also write the predictions here
	Force       bool   // replace an existing Parquet file
	JSON        bool
	Summary     bool
}

// repeated is a flag that may be given several times and whose values hold commas (a
// StringSliceFlag would split them).
type repeated struct{ values []string }

func (r *repeated) Set(v string) error { r.values = append(r.values, v); return nil }
func (r *repeated) String() string     { return strings.Join(r.values, " ") }

// chooseModels reads --models.
func chooseModels(list string) ([]contention.Model, error) {
	if strings.TrimSpace(list) == "" {
		return contention.Models(), nil
	}
	var out []contention.Model
	for _, name := range strings.Split(list, ",") {
		m, ok := contention.ModelByName(strings.TrimSpace(name))
		if !ok {
			return nil, usagef("--models: unknown model %q (models: %s)", name, strings.Join(contention.Names(), ", "))
		}
		if !slices.ContainsFunc(out, func(o contention.Model) bool { return o.Name() == m.Name() }) {
			out = append(out, m)
		}
	}
	return out, nil
}

// wrapWords breaks s into lines of at most width characters (a longer word alone on its
// line), each starting with prefix, for help texts.
func wrapWords(prefix, s string, width int) string {
	var lines []string
	line := prefix
	for _, w := range strings.Fields(s) {
		if line != prefix && len(line)+1+len(w) > width {
			lines, line = append(lines, line), prefix
		}
		if line != prefix {
			line += " "
		}
		line += w
	}
	return strings.Join(append(lines, line), "\n")
}

func indent(s, prefix string) string {
	return prefix + strings.ReplaceAll(s, "\n", "\n"+prefix)
}

// patternFiles expands the arguments: a directory gives its .csv and .json files in name
// order.
func patternFiles(args []string) ([]string, error) {
	var files []string
	for _, a := range args {
		st, err := os.Stat(a)
		if err != nil || !st.IsDir() {
			files = append(files, a) // the reader reports a missing file
			continue
		}
		entries, err := os.ReadDir(a)
		if err != nil {
			return nil, badinput.Wrap(a, err)
		}
		n := len(files)
		for _, de := range entries {
			if ext := strings.ToLower(filepath.Ext(de.Name())); !de.IsDir() && (ext == ".csv" || ext == ".json") {
				files = append(files, filepath.Join(a, de.Name()))
			}
		}
		if len(files) == n {
			return nil, badinput.Errorf(a, "no .csv or .json pattern file in the directory")
		}
	}
	return files, nil
}

// patternSource is one pattern and where it came from, for messages.
type patternSource struct {
	from string
	contention.Pattern
}

// runPredict predicts every transfer of every pattern under the chosen models.
func runPredict(ctx context.Context, e env, o predictOptions) error {
	files, err := patternFiles(o.Patterns)
	if err != nil {
		return err
	}
	if o.Parquet != "" {
		inputs := append(append(slices.Clone(files), o.Patterns...), o.Cluster, o.Params.File, o.Calibration)
		out, err := atomicio.Claim(ctx, atomicio.Target{Path: o.Parquet, File: true, Force: o.Force, Inputs: inputs})
		if err != nil {
			return err
		}
		defer out.Release()
	}
	net, carry, spread, err := predictNetwork(o)
	if err != nil {
		return err
	}
	if carry != nil {
		printCarry(e.stderr, carry)
	}
	pats, err := readPatterns(net.Cluster, files, o.Workloads)
	if err != nil {
		return err
	}
	colls, err := predictCollectives(ctx, net, o.Collectives, o.Models, spread.Spread())
	if err != nil {
		return err
	}
	// preds[p][m] is pattern p under model m; patterns are independent, so they run on all
	// cores, each writing its own slot.
	flows := make([][]contention.Flow, len(pats))
	for i, p := range pats {
		flows[i] = p.Flows
	}
	preds, err := contention.PredictAll(ctx, net, flows, o.Models, func(i, _ int, err error) error {
		return badinput.Errorf(pats[i].from, "pattern %s: %w", pats[i].ID, err)
	})
	if err != nil {
		return err
	}
	total := 0
	for _, p := range pats {
		total += len(p.Flows)
	}
	if o.Parquet != "" || o.JSON {
		rows := predictionRows(pats, o.Models, preds, total)
		if o.Parquet != "" {
			if err := datasets.WriteParquetFile(filepath.Clean(o.Parquet), predictionTable, rows); err != nil {
				return err
			}
		}
		if o.JSON {
			return e.printJSON(predictJSON{Format: predictFormat, Carry: carry, Transfers: rows, Collectives: colls})
		}
	}
	if len(pats) > 0 {
		if o.Summary || total > maxTableRows {
			err = printPredictionSummary(e.stdout, pats, o.Models, preds)
		} else {
			err = printPredictions(e.stdout, pats, o.Models, preds)
		}
		if err != nil || len(colls) == 0 {
			return err
		}
		fmt.Fprintln(e.stdout)
	}
	return printCollectives(e.stdout, colls)
}

// predictCollectives expands every collective spec into its schedule on the cluster's nodes
// (in the description's order) and predicts it round by round under each model: a round ends
// with its expected slowest transfer under spread (a calibration's), or without one with its
// slowest predicted transfer.
func predictCollectives(ctx context.Context, net *contention.Network, specs []string, models []contention.Model, spread schedule.Spread) ([]collectiveRow, error) {
	if len(specs) == 0 {
		return nil, nil
	}
	nodes := net.Cluster.NodeNames()
	var rows []collectiveRow
	for _, spec := range specs {
		s, err := schedule.Parse(spec, nodes)
		if err != nil {
			return nil, badinput.Wrap("--collective", err)
		}
		for _, m := range models {
			res, err := schedule.Predict(ctx, net, m, s, spread)
			if err != nil {
				return nil, fmt.Errorf("predict: --collective %s, model %s: %w", spec, m.Name(), err)
			}
			rows = append(rows, collectiveRow{Spec: spec, Op: string(s.Op), Ranks: len(s.Ranks), Bytes: s.Bytes, Algorithm: res.Algorithm,
				Rule: res.Rule, Model: m.Name(), Seconds: res.Seconds, Rounds: res.Rounds, ExpectedMax: len(spread) > 0})
		}
	}
	return rows, nil
}

// printCollectives writes a line per collective and model: its algorithm, rounds and
// predicted time; then the rule that chose each collective's algorithm.
func printCollectives(w io.Writer, rows []collectiveRow) error {
	if len(rows) == 0 {
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "collective\top\tranks\tbytes\talgorithm\trounds\tmodel\tpredicted (s)")
	for i, r := range rows {
		spec := r.Spec
		if i > 0 && rows[i-1].Spec == r.Spec {
			spec = ""
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%.6g\t%s\t%d\t%s\t%.6g\n", spec, r.Op, r.Ranks, r.Bytes, r.Algorithm, len(r.Rounds), r.Model, r.Seconds)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for i, r := range rows {
		if i == 0 || rows[i-1].Spec != r.Spec {
			fmt.Fprintf(w, "%s: %s\n", r.Spec, r.Rule)
		}
	}
	if slices.ContainsFunc(rows, func(r collectiveRow) bool { return r.ExpectedMax }) {
		fmt.Fprintln(w, "rounds end with their expected slowest transfer, given how the calibration's transfers scatter from one repetition to the next (its transfer_spread)")
	}
	return nil
}

// predictNetwork is the models' view of --cluster under the parameters: --calibration's
// (with the --params overrides) or --params. A calibration fitted on another cluster — by
// name, or by the nominal rates it records — is carried to --cluster class by class, and
// the carry is returned for the note; the same cluster's is used as it is (carry nil). The
// calibration's transfer spread (when a collective's round is expected to end) comes with it,
// as it is: ratios of times to their means, which no cluster's rates change.
func predictNetwork(o predictOptions) (*contention.Network, *estimate.Carry, *estimate.SpreadFit, error) {
	cl, err := loadCluster(o.Cluster)
	if err != nil {
		return nil, nil, nil, err
	}
	params, err := o.Params.load()
	if err != nil {
		return nil, nil, nil, err
	}
	paramsFile := o.Params.File
	var table *contention.PenaltyTable
	var carry *estimate.Carry
	var spread *estimate.SpreadFit
	if o.Calibration != "" {
		cal, err := rundir.ReadCalibration(o.Calibration)
		if err != nil {
			return nil, nil, nil, err
		}
		// The command line's values first, so that the note's fallbacks are those used.
		o.Params.override(&cal.Params)
		params, table, paramsFile, spread = cal.Params, cal.PenaltyTable(), o.Calibration, cal.Spread
		if nom := cal.Params.Nominal; cal.Cluster != cl.Name() || nom != nil && !nom.Equal(contention.NominalOf(cl)) {
			if carry, err = cal.CarryTo(cl); err != nil {
				return nil, nil, nil, badinput.Wrap(o.Calibration, err)
			}
			params, table = carry.Params, carry.PenaltyTable
		}
	}
	net, err := params.Network(cl)
	if err != nil {
		return nil, nil, nil, badinput.Wrap(paramsFile, err)
	}
	net.PenaltyTable = table
	return net, carry, spread, nil
}

// printCarry writes the note of a calibration carried to another cluster: a line per class,
// its outcome, its parameters and the nominal rates on both clusters.
func printCarry(w io.Writer, c *estimate.Carry) {
	fmt.Fprintf(w, "commcal: predict: the calibration of cluster %s applied to cluster %s, resource class by resource class:\n", c.From, c.To)
	for _, cc := range c.Classes {
		what := compactKeys(cc.Parameters)
		if what != "" {
			what += ": "
		}
		fmt.Fprintf(w, "commcal:   %-8s  %-10s  %s%s\n", cc.Outcome, cc.Class, what, cc.Note)
	}
}

// compactKeys lists parameter keys for people: the learned models' fields grouped by the
// models that have them ("learned ack_in, ack_out (ackpath, ackpath-alpha)").
func compactKeys(keys []string) string {
	var out []string
	models := map[string][]string{} // field → models
	var fields []string
	for _, k := range keys {
		rest, ok := strings.CutPrefix(k, "learned.")
		model, field, ok2 := strings.Cut(rest, ".")
		if !ok || !ok2 {
			out = append(out, k)
			continue
		}
		if _, seen := models[field]; !seen {
			fields = append(fields, field)
		}
		models[field] = append(models[field], model)
	}
	var groups []string
	byGroup := map[string][]string{} // models → fields
	for _, f := range fields {
		g := strings.Join(models[f], ", ")
		if _, seen := byGroup[g]; !seen {
			groups = append(groups, g)
		}
		byGroup[g] = append(byGroup[g], f)
	}
	for _, g := range groups {
		out = append(out, fmt.Sprintf("learned %s (%s)", strings.Join(byGroup[g], ", "), g))
	}
	return strings.Join(out, ", ")
}

// readPatterns reads the pattern files, then generates the --workload patterns, in order.
func readPatterns(cl *cluster.Cluster, files, workloads []string) ([]patternSource, error) {
	var pats []patternSource
	for _, f := range files {
		ps, err := contention.ReadPatterns(f)
		if err != nil {
			return nil, err
		}
		for _, p := range ps {
			pats = append(pats, patternSource{from: f, Pattern: p})
		}
	}
	for _, w := range workloads {
		ps, err := experiments.Workload(cl, w)
		if err != nil {
			return nil, err
		}
		for _, p := range ps {
			pats = append(pats, patternSource{from: "--workload " + w, Pattern: p})
		}
	}
	return pats, nil
}

// predictionRows are the predictions as rows of --parquet and --json: per pattern, model and
// transfer.
func predictionRows(pats []patternSource, models []contention.Model, preds [][]*contention.Prediction, total int) []predictionRow {
	rows := make([]predictionRow, 0, total*len(models))
	for i, p := range pats {
		for j, m := range models {
			pr := preds[i][j]
			for f, fl := range p.Flows {
				rows = append(rows, predictionRow{Pattern: p.ID, FlowID: int64(f), Src: fl.Src, Dst: fl.Dst, Bytes: fl.Bytes, Model: m.Name(),
					Seconds: pr.Times[f], FirstRate: pr.FirstRates[f], Steps: int64(pr.Steps)})
			}
		}
	}
	return rows
}

// printPredictions prints a line per transfer, a column per model, and each pattern's steps.
func printPredictions(w io.Writer, pats []patternSource, models []contention.Model, preds [][]*contention.Prediction) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	many := len(pats) > 1
	if many {
		fmt.Fprint(tw, "pattern\t")
	}
	fmt.Fprint(tw, "transfer\tsrc\tdst\tbytes")
	for _, m := range models {
		fmt.Fprintf(tw, "\t%s (s)", m.Name())
	}
	fmt.Fprintln(tw)
	for i, p := range pats {
		for f, fl := range p.Flows {
			if many {
				fmt.Fprintf(tw, "%s\t", p.ID)
			}
			fmt.Fprintf(tw, "%d\t%s\t%s\t%.0f", f, fl.Src, fl.Dst, fl.Bytes)
			for j := range models {
				fmt.Fprintf(tw, "\t%.6g", preds[i][j].Times[f])
			}
			fmt.Fprintln(tw)
		}
		if many {
			fmt.Fprintf(tw, "%s\t", p.ID)
		}
		fmt.Fprint(tw, "steps\t\t\t")
		for j := range models {
			fmt.Fprintf(tw, "\t%d", preds[i][j].Steps)
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}

// printPredictionSummary prints a line per pattern and model: transfers, makespan, mean time,
// steps.
func printPredictionSummary(w io.Writer, pats []patternSource, models []contention.Model, preds [][]*contention.Prediction) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "pattern\ttransfers\tmodel\tmakespan (s)\tmean time (s)\tsteps")
	for i, p := range pats {
		for j, m := range models {
			pr := preds[i][j]
			sum, longest := 0.0, 0.0
			for _, t := range pr.Times {
				sum += t
				longest = max(longest, t)
			}
			fmt.Fprintf(tw, "%s\t%d\t%s\t%.6g\t%.6g\t%d\n", p.ID, len(p.Flows), m.Name(), longest, sum/float64(len(pr.Times)), pr.Steps)
		}
	}
	return tw.Flush()
}
