package validate

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/contention"
	"github.com/commcal/commcal/datasets"
	"github.com/commcal/commcal/experiments"
	"github.com/commcal/commcal/internal/badinput"
	"github.com/commcal/commcal/schedule"
)

// ScoredCollectives are the collectives of the collectives table that validation scores:
// all-to-all, all-gather and broadcast, those a schedule design measures
// (experiments.ScheduleOps). Scatter and gather sweeps are calibration data (the thresholds S,
// M1 and M2 are fitted on them), so scoring them would not be held out.
var ScoredCollectives = experiments.ScheduleOps

// DefaultAlgorithms is how validation chooses the algorithm of a measured collective when
// neither the user nor the dataset (its MPI library) says: Open MPI's default rules.
const DefaultAlgorithms = "auto:openmpi"

// CollectiveAccuracy is one measured collective (an operation among procs processes on a
// message size), the mean of its runs, and each model's prediction of it as the rounds of
// the algorithm the schedule names.
type CollectiveAccuracy struct {
	Op        string  `json:"op"`
	Root      string  `json:"root"`
	Procs     int64   `json:"procs"`
	Bytes     int64   `json:"bytes"`
	Runs      int     `json:"runs"`
	Measured  float64 `json:"measured_s"`
	Algorithm string  `json:"algorithm"`
	Rounds    int     `json:"rounds"`
	Rule      string  `json:"rule"`
	// Scheduled says the collective comes from the schedules table (measured as the rounds of
	// the algorithm it names), not the collectives table (expanded by the algorithm choice).
	Scheduled bool `json:"scheduled,omitempty"`
	// Models holds each model's prediction, in the order of the models given.
	Models []CollectivePrediction `json:"models"`
}

// CollectivePrediction is one model's prediction of a collective and its signed error.
type CollectivePrediction struct {
	Model     string  `json:"model"`
	Predicted float64 `json:"predicted_s"`
	Err       float64 `json:"err"`
	// ExpectedMax says whether each round ended with its expected slowest transfer under the
	// calibration's transfer spread (schedule.Spread), rather than its slowest predicted one.
	ExpectedMax bool `json:"expected_max,omitempty"`
}

// ParseAlgorithms checks a choice of collective algorithms (schedule.CheckChoice):
// "auto:<library>" (the library's default rules, schedule.Libraries) or the name of an
// algorithm that some scored collective has; a dataset's collective without it is refused
// when scored (ScoreCollectives).
func ParseAlgorithms(choice string) error {
	for _, op := range ScoredCollectives {
		if schedule.CheckChoice(schedule.Op(op), choice) == nil {
			return nil
		}
	}
	autos := strings.Join(schedule.AutoChoices(), ", ")
	if strings.HasPrefix(choice, schedule.AutoPrefix) {
		return badinput.Errorf("", "collective algorithms %s: want %s or an algorithm's name", badinput.Quote(choice), autos)
	}
	return badinput.Errorf("", "collective algorithms %s: no scored collective (%s) has that algorithm; want %s or an algorithm's name",
		badinput.Quote(choice), strings.Join(ScoredCollectives, ", "), autos)
}

// ScoreCollectives predicts every measured all-to-all, all-gather and broadcast of rows as
// the rounds of its algorithm (choice: ParseAlgorithms), and every collective of scheduled
// (measured as the rounds of a named algorithm: the schedules table) as the rounds of the
// algorithm it ran, under each model, and compares the prediction with the mean of the
// measured runs. A schedules row of another collective, or of an algorithm its collective
// does not have, is bad input. With a spread (the calibration's: estimate.FitSpread), each
// round ends with its expected slowest transfer, else with its slowest predicted one. The
// collectives table names a collective's root and size but not its other nodes: its procs
// ranks are taken to run one per node on the cluster's nodes in the description's order,
// starting at the root (rank 0 on the root), which is how a launcher places one rank per
// node from a host list in node order; ingest notes a collective whose --ranks placed it
// otherwise. A collective of more processes than the cluster has nodes is bad input.
func ScoreCollectives(ctx context.Context, cl *cluster.Cluster, rows []datasets.Collective, scheduled []datasets.Schedule, net *contention.Network,
	models []contention.Model, spread schedule.Spread, choice string) ([]CollectiveAccuracy, error) {
	if err := ParseAlgorithms(choice); err != nil {
		return nil, err
	}
	// alg is the algorithm a scheduled collective ran, "" for a row of the collectives
	// table, whose algorithm choice decides.
	type key struct {
		op, alg, root string
		procs, bytes  int64
	}
	sums := map[key][]float64{}
	for _, r := range rows {
		if slices.Contains(ScoredCollectives, r.Op) {
			k := key{r.Op, "", r.Root, r.Procs, r.Bytes}
			sums[k] = append(sums[k], r.Seconds)
		}
	}
	for _, r := range scheduled {
		// An algorithm its collective does not have is refused below, by schedule.New.
		if !slices.Contains(ScoredCollectives, r.Op) {
			return nil, badinput.Errorf("", "validate: schedules table: the row of %s %s among %d processes, %d B, repetition %d: "+
				"a schedule design measures %s only; drop the rows of other collectives from the dataset's schedules table", badinput.Quote(r.Op), badinput.Quote(r.Algorithm), r.Procs, r.Bytes, r.Rep, strings.Join(ScoredCollectives, ", "))
		}
		k := key{r.Op, r.Algorithm, r.Root, r.Procs, r.Bytes}
		sums[k] = append(sums[k], r.Seconds)
	}
	keys := make([]key, 0, len(sums))
	for k := range sums {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b key) int {
		return cmp.Or(cmp.Compare(a.op, b.op), cmp.Compare(a.alg, b.alg), cmp.Compare(a.root, b.root), cmp.Compare(a.procs, b.procs), cmp.Compare(a.bytes, b.bytes))
	})
	var out []CollectiveAccuracy
	for _, k := range keys {
		ranks, err := ranksFrom(cl, k.root, k.procs)
		if err != nil {
			return nil, badinput.Errorf("", "validate: %s of %d processes on cluster %s: %v", k.op, k.procs, cl.Name(), err)
		}
		c := schedule.Collective{Op: schedule.Op(k.op), Ranks: ranks, Bytes: float64(k.bytes)}
		var s *schedule.Schedule
		if k.alg != "" { // a schedules row: the algorithm that ran, by name
			if s, err = schedule.New(c, k.alg); err != nil {
				return nil, fmt.Errorf("validate: schedules table: %s of %d processes, %d B: %w", k.op, k.procs, k.bytes, err)
			}
			s.Rule = "the algorithm the schedules table names as the one that ran"
		} else if s, err = schedule.ExpandChoice(c, choice); err != nil {
			return nil, fmt.Errorf("validate: %s of %d processes, %d B: %w", k.op, k.procs, k.bytes, err)
		}
		ca := CollectiveAccuracy{Op: k.op, Root: k.root, Procs: k.procs, Bytes: k.bytes, Runs: len(sums[k]),
			Measured: mean(sums[k]), Algorithm: s.Algorithm, Rounds: len(s.Rounds), Rule: s.Rule, Scheduled: k.alg != ""}
		for _, m := range models {
			res, err := schedule.Predict(ctx, net, m, s, spread)
			if err != nil {
				return nil, fmt.Errorf("validate: %s of %d processes, %d B, model %s: %w", k.op, k.procs, k.bytes, m.Name(), err)
			}
			ca.Models = append(ca.Models, CollectivePrediction{Model: m.Name(), Predicted: res.Seconds, Err: SignedError(res.Seconds, ca.Measured),
				ExpectedMax: len(spread) > 0})
		}
		out = append(out, ca)
	}
	return out, nil
}

// ranksFrom places a measured collective's procs ranks where they ran (cl.PlaceRanks: one
// per node from root), or says why it cannot.
func ranksFrom(cl *cluster.Cluster, root string, procs int64) ([]string, error) {
	if n := len(cl.NodeNames()); procs > int64(n) {
		return nil, fmt.Errorf("%d processes, one per node, and the cluster has %d nodes", procs, n)
	}
	ranks := cl.PlaceRanks(root, int(procs))
	if ranks == nil {
		return nil, fmt.Errorf("root %s is not a node of the cluster", badinput.Quote(root))
	}
	return ranks, nil
}

// writeCollectives writes the collectives table of the text report: each collective, the
// table it comes from, its algorithm and rounds, and every model's signed error.
func (a *Accuracy) writeCollectives(w io.Writer) error {
	if len(a.Collectives) == 0 {
		return nil
	}
	fmt.Fprintf(w, "\nheld-out collectives, each predicted as the rounds of its algorithm (the collectives table's chosen by %s, the schedules table's as it names them); signed error ε = (predicted − measured)/measured\n", a.CollectiveAlgorithms)
	if slices.ContainsFunc(a.Collectives[0].Models, func(m CollectivePrediction) bool { return m.ExpectedMax }) {
		fmt.Fprintln(w, "(a round ends with its expected slowest transfer, from how the calibration's transfers scatter from one repetition to the next)")
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprint(tw, "table\top\tprocs\tbytes\truns\tmeasured\talgorithm\trounds")
	for _, m := range a.Collectives[0].Models {
		name := m.Model
		if name == a.Default {
			name += " *"
		}
		fmt.Fprintf(tw, "\t%s", name)
	}
	fmt.Fprintln(tw)
	for _, c := range a.Collectives {
		table := "collectives"
		if c.Scheduled {
			table = "schedules"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%.4g ms\t%s\t%d", table, c.Op, c.Procs, c.Bytes, c.Runs, 1e3*c.Measured, c.Algorithm, c.Rounds)
		for _, m := range c.Models {
			fmt.Fprintf(tw, "\t%+.1f%%", 100*m.Err)
		}
		fmt.Fprintln(tw)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	var rules []string
	for _, c := range a.Collectives {
		if !slices.Contains(rules, c.Rule) {
			rules = append(rules, c.Rule)
		}
	}
	for _, r := range rules {
		fmt.Fprintf(w, "rule: %s\n", r)
	}
	return nil
}
