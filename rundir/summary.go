package rundir

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/commcal/commcal/datasets"
	"github.com/commcal/commcal/estimate"
	"github.com/commcal/commcal/internal/badinput"
)

// MeasurementRow is one measured quantity of a dataset summarised over its repetitions: a
// transfer of a pattern, a round trip, a one-to-two experiment, a sweep point.
type MeasurementRow struct {
	Table      string  `col:"table" doc:"table the measurement comes from"`
	Experiment string  `col:"experiment" doc:"experiment (transfers), op (collectives), round-trip kind, or the table name"`
	Label      string  `col:"label" doc:"what was measured, e.g. X1>Y1:1024 or pattern/flow"`
	Bytes      int64   `col:"bytes" unit:"B" doc:"message size"`
	N          int64   `col:"n" unit:"1" doc:"repetitions"`
	Mean       float64 `col:"mean_s" unit:"s" doc:"mean time"`
	SD         float64 `col:"sd_s" unit:"s" doc:"standard deviation of the repetitions"`
	CILow      float64 `col:"ci_low_s" unit:"s" doc:"95% CI of the mean, lower bound"`
	CIHigh     float64 `col:"ci_high_s" unit:"s" doc:"95% CI of the mean, upper bound"`
	RelWidth   float64 `col:"ci_rel_width" unit:"1" doc:"full CI width over the mean"`
	Status     string  `col:"status" doc:"converged, capped or unconverged"`
}

// MeasurementsTable is the schema of measurements.parquet.
var MeasurementsTable = datasets.DefineTable[MeasurementRow]("measurements")

// SummaryFormat is the format tag of summary.json.
const SummaryFormat = "commcal-summary/1"

// ExperimentSummary aggregates the measurements of one experiment.
type ExperimentSummary struct {
	Table          string  `json:"table"`
	Experiment     string  `json:"experiment"`
	Measurements   int     `json:"measurements"`
	Rows           int     `json:"rows"`
	RepsMin        int     `json:"reps_min"`
	RepsMax        int     `json:"reps_max"`
	MinBytes       int64   `json:"min_bytes"`
	MaxBytes       int64   `json:"max_bytes"`
	ShortestMean   float64 `json:"shortest_mean_s"`
	LongestMean    float64 `json:"longest_mean_s"`
	Converged      int     `json:"converged"`
	Capped         int     `json:"capped"`
	Unconverged    int     `json:"unconverged"`
	MedianRelWidth float64 `json:"median_ci_rel_width"`
	MaxRelWidth    float64 `json:"max_ci_rel_width"`
}

// Summary describes a dataset: its tables and, per experiment, how well measured it is.
type Summary struct {
	Format      string                `json:"format"`
	Cluster     string                `json:"cluster"`
	Racks       int                   `json:"racks"`
	Nodes       int                   `json:"nodes"`
	Tables      []datasets.TableInfo  `json:"tables"`
	Sources     []datasets.SourceInfo `json:"sources"`
	Rule        estimate.StoppingRule `json:"stopping_rule"`
	Experiments []ExperimentSummary   `json:"experiments"`
	Warnings    []string              `json:"warnings,omitempty"`
	rows        []MeasurementRow
}

// group collects the repetitions of one measurement.
type group struct {
	table, experiment, label string
	bytes                    int64
	vals                     []float64
}

type grouper map[[4]string]*group

func (g grouper) add(table, experiment, label string, bytes int64, v float64) {
	k := [4]string{table, experiment, label, fmt.Sprint(bytes)}
	gr, ok := g[k]
	if !ok {
		gr = &group{table: table, experiment: experiment, label: label, bytes: bytes}
		g[k] = gr
	}
	gr.vals = append(gr.vals, v)
}

// Summarize summarises each measurement of a dataset's tables over its repetitions under the
// stopping rule.
func Summarize(ds *datasets.Dataset, in estimate.Inputs, rule estimate.StoppingRule) (*Summary, error) {
	s := &Summary{Format: SummaryFormat, Cluster: ds.Cluster.Name(), Racks: len(ds.Cluster.Racks()), Nodes: len(ds.Cluster.Nodes()),
		Tables: ds.Manifest.Tables, Sources: ds.Manifest.Sources, Rule: rule}
	g := grouper{}
	for _, r := range in.Transfers {
		g.add("transfers", r.Experiment, fmt.Sprintf("%s/%d %s>%s", r.PatternID, r.FlowID, r.Src, r.Dst), r.Bytes, r.Seconds())
	}
	for _, r := range in.RoundTrips {
		g.add("roundtrips", roundTripKind(r), fmt.Sprintf("%s<>%s:%d/%d", r.I, r.J, r.BytesOut, r.BytesBack), r.BytesOut, r.Seconds)
	}
	for _, r := range in.OneToTwo {
		g.add("one_to_two", "one_to_two", fmt.Sprintf("%s>%s,%s:%d", r.Root, r.J, r.K, r.Bytes), r.Bytes, r.Seconds)
	}
	for _, r := range in.Collectives {
		g.add("collectives", r.Op, fmt.Sprintf("%s@%s/%d:%d", r.Op, r.Root, r.Procs, r.Bytes), r.Bytes, r.Seconds)
	}
	for _, r := range in.PingPongPairs {
		g.add("pingpong_pairs", "pingpong_pairs", fmt.Sprintf("%dpairs:%d", r.Pairs, r.Bytes), r.Bytes, r.RTT)
	}

	groups := make([]*group, 0, len(g))
	for _, gr := range g {
		groups = append(groups, gr)
	}
	tableOrder := func(name string) int { return slices.Index(datasets.TableNames(), name) }
	slices.SortFunc(groups, func(a, b *group) int {
		return cmp.Or(cmp.Compare(tableOrder(a.table), tableOrder(b.table)), cmp.Compare(a.experiment, b.experiment),
			cmp.Compare(a.bytes, b.bytes), cmp.Compare(a.label, b.label))
	})
	var cur *ExperimentSummary
	var widths []float64
	finish := func() {
		if cur == nil {
			return
		}
		slices.Sort(widths)
		cur.MedianRelWidth = median(widths)
		cur.MaxRelWidth = widths[len(widths)-1]
		s.Experiments = append(s.Experiments, *cur)
		if cur.Unconverged > 0 {
			s.Warnings = append(s.Warnings, fmt.Sprintf("%s/%s: %d of %d measurements unconverged (95%% CI wider than %g%% of the mean)",
				cur.Table, cur.Experiment, cur.Unconverged, cur.Measurements, 100*rule.MaxRelWidth))
		}
	}
	for _, gr := range groups {
		m, err := estimate.Summarize(gr.vals, rule)
		if err != nil {
			return nil, fmt.Errorf("rundir: %s %s: %w", gr.table, gr.label, err)
		}
		s.rows = append(s.rows, MeasurementRow{Table: gr.table, Experiment: gr.experiment, Label: gr.label, Bytes: gr.bytes,
			N: int64(m.N), Mean: m.Mean, SD: m.SD, CILow: m.CILow, CIHigh: m.CIHigh, RelWidth: m.RelWidth, Status: m.Status})
		if cur == nil || cur.Table != gr.table || cur.Experiment != gr.experiment {
			finish()
			cur = &ExperimentSummary{Table: gr.table, Experiment: gr.experiment, RepsMin: m.N, RepsMax: m.N,
				MinBytes: gr.bytes, MaxBytes: gr.bytes, ShortestMean: m.Mean, LongestMean: m.Mean}
			widths = widths[:0]
		}
		cur.Measurements++
		cur.Rows += m.N
		cur.RepsMin, cur.RepsMax = min(cur.RepsMin, m.N), max(cur.RepsMax, m.N)
		cur.MinBytes, cur.MaxBytes = min(cur.MinBytes, gr.bytes), max(cur.MaxBytes, gr.bytes)
		cur.ShortestMean, cur.LongestMean = min(cur.ShortestMean, m.Mean), max(cur.LongestMean, m.Mean)
		switch m.Status {
		case estimate.Converged:
			cur.Converged++
		case estimate.Capped:
			cur.Capped++
		default:
			cur.Unconverged++
		}
		widths = append(widths, m.RelWidth)
	}
	finish()
	return s, nil
}

// ReadSummary reads a run's summary.json strictly, or, in a directory without one, summarises
// the dataset under the default stopping rule.
func ReadSummary(dir string, ds *datasets.Dataset, in estimate.Inputs) (*Summary, error) {
	path := filepath.Join(dir, SummaryJSON)
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return Summarize(ds, in, estimate.DefaultStoppingRule)
	} else if err != nil {
		return nil, fmt.Errorf("rundir: %w", err)
	}
	s := &Summary{}
	if err := datasets.ReadJSONFile(path, s); err != nil {
		return nil, badinput.Wrap(path, err)
	}
	if err := CheckFormat(path, s.Format, SummaryFormat); err != nil {
		return nil, err
	}
	return s, nil
}

// roundTripKind tells the round-trip experiments apart: LMO's empty round trips and messages
// with empty replies, and symmetric ping-pongs such as MPI calibration sweeps.
func roundTripKind(r datasets.RoundTrip) string {
	switch {
	case r.BytesOut == 0 && r.BytesBack == 0:
		return "empty"
	case r.BytesBack == 0 || r.BytesOut == 0:
		return "one_way"
	case r.BytesOut == r.BytesBack:
		return "pingpong"
	}
	return "asymmetric"
}

// Measurements returns one row per summarised measurement, in summary order.
func (s *Summary) Measurements() []MeasurementRow { return s.rows }

func median(sorted []float64) float64 {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

// WriteText renders the summary as aligned tables.
func (s *Summary) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "cluster %s: %d racks, %d nodes\n\n", s.Cluster, s.Racks, s.Nodes)
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "table\trows")
	for _, t := range s.Tables {
		fmt.Fprintf(tw, "%s\t%d\n", t.Name, t.Rows)
	}
	tw.Flush()
	b.WriteString("\nsources\n")
	for i, src := range s.Sources {
		fmt.Fprintf(&b, "  %s (%s → %s, %d rows)\n", src.Path, src.Format, src.Table, src.Rows)
		// A provenance shared by the next source is printed once, after the last of them.
		if src.Provenance != "" && (i+1 == len(s.Sources) || s.Sources[i+1].Provenance != src.Provenance) {
			fmt.Fprintf(&b, "    %s\n", src.Provenance)
		}
	}
	fmt.Fprintf(&b, "\nper experiment (stopping rule: 95%% CI of the mean at most %g%% of the mean wide", 100*s.Rule.MaxRelWidth)
	if s.Rule.Cap > 0 {
		fmt.Fprintf(&b, ", or %d repetitions", s.Rule.Cap)
	}
	b.WriteString(")\n")
	tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "table\texperiment\tmeasured\treps\tsizes (B)\tmean time (s)\tconverged\tcapped\tunconverged\tmedian CI/mean\tworst CI/mean")
	for _, e := range s.Experiments {
		reps := fmt.Sprint(e.RepsMin)
		if e.RepsMax != e.RepsMin {
			reps = fmt.Sprintf("%d–%d", e.RepsMin, e.RepsMax)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%d–%d\t%.3g–%.3g\t%d\t%d\t%d\t%.2f%%\t%.2f%%\n",
			e.Table, e.Experiment, e.Measurements, reps, e.MinBytes, e.MaxBytes, e.ShortestMean, e.LongestMean,
			e.Converged, e.Capped, e.Unconverged, 100*e.MedianRelWidth, 100*e.MaxRelWidth)
	}
	tw.Flush()
	if len(s.Warnings) > 0 {
		b.WriteString("\nwarnings\n")
		for _, w := range s.Warnings {
			fmt.Fprintf(&b, "  %s\n", w)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
