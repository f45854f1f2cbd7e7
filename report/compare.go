package report

import (
	"context"
	"fmt"
	"io"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"text/tabwriter"

	"github.com/commcal/commcal/contention"
	"github.com/commcal/commcal/datasets"
	"github.com/commcal/commcal/estimate"
	"github.com/commcal/commcal/internal/atomicio"
	"github.com/commcal/commcal/internal/provenance"
	"github.com/commcal/commcal/plots"
	"github.com/commcal/commcal/rundir"
	"github.com/commcal/commcal/validate"
)

// Files of the compare command.
const (
	CompareJSON = "compare.json"
	CompareHTML = "compare.html"
)

// ComparedParam is one parameter across runs.
type ComparedParam struct {
	Name   string           `json:"name"`
	Values []estimate.Param `json:"values"`
	// Missing[k] says that run k has no such parameter (its value is then zero).
	Missing []bool `json:"missing"`
	// RelChange[k] is (value_k − value_0)/|value_0| for every run k (0 where either is missing).
	RelChange []float64 `json:"rel_change"`
	// Drift[k] says that run k's interval does not overlap run 0's, or that the parameter
	// vanished in run k.
	Drift []bool `json:"drift"`
}

// ComparedModel is one model's overall accuracy across runs (null for a run that scored no
// transfer with it).
type ComparedModel struct {
	Model      string     `json:"model"`
	MeanAbsErr []*float64 `json:"mean_abs_err"`
	Within10   []*float64 `json:"within_10pct"`
}

// CompareFormat is the format tag of compare.json.
const CompareFormat = "commcal-compare/1"

// Comparison is the content of compare.json.
type Comparison struct {
	Format   string          `json:"format"`
	Runs     []string        `json:"runs"`
	Clusters []string        `json:"clusters"`
	Params   []ComparedParam `json:"params"`
	Accuracy []ComparedModel `json:"accuracy"`
	// Drifted names the parameters whose interval in a later run does not overlap the
	// first run's.
	Drifted []string `json:"drifted"`
	// Vanished, NewlySkipped and AccuracyLost are what a later run lacks that the first
	// run had: a parameter, an estimator that ran, a model's held-out accuracy. Each is
	// drift: a nightly alarm must not be silenced by missing data.
	Vanished     []string `json:"vanished"`
	NewlySkipped []string `json:"newly_skipped"`
	AccuracyLost []string `json:"accuracy_lost"`
	// RunDrift[k] says that run k is flagged as drift: a parameter drifted or vanished there,
	// an estimator was newly skipped, or a model lost its accuracy (never the first run).
	RunDrift []bool `json:"run_drift"`
}

// Alarms lists every drift of the comparison, one line each.
func (c *Comparison) Alarms() []string {
	var out []string
	for _, d := range c.Drifted {
		out = append(out, "drifted: "+d)
	}
	for _, v := range c.Vanished {
		out = append(out, "vanished: "+v)
	}
	for _, s := range c.NewlySkipped {
		out = append(out, "newly skipped: "+s)
	}
	for _, a := range c.AccuracyLost {
		out = append(out, "accuracy lost: "+a)
	}
	return out
}

// flatten lists a calibration's parameters by name.
func flatten(c *estimate.Calibration) map[string]estimate.Param {
	m := map[string]estimate.Param{}
	for _, h := range c.Hockney {
		m["hockney/"+string(h.Class)+"/alpha_s"] = h.Alpha
		m["hockney/"+string(h.Class)+"/beta_s_per_byte"] = h.Beta
	}
	for _, f := range c.Fairness {
		m["fairness/"+f.Experiment+"/ceiling_bps"] = f.Ceiling
		m["fairness/"+f.Experiment+"/capacity_bps"] = f.Capacity
		m["fairness/"+f.Experiment+"/saturation_k"] = f.Saturation
	}
	if c.Contra != nil {
		m["contra/phi"] = estimate.Param{Value: c.Contra.Phi, CILow: c.Contra.CILow, CIHigh: c.Contra.CIHigh, N: c.Contra.Transfers}
	}
	for _, f := range c.Learned {
		for _, e := range f.Estimates() {
			m["learned/"+f.Model+"/"+e.Name] = e.Param
		}
	}
	if c.LMO != nil {
		for _, n := range c.LMO.Nodes {
			m["lmo/node/"+n.Name+"/c_s"] = n.C
			m["lmo/node/"+n.Name+"/t_s_per_byte"] = n.T
		}
		for _, l := range c.LMO.Links {
			m["lmo/link/"+l.I+"-"+l.J+"/rate_bps"] = l.RateBps
		}
	}
	if t := c.Thresholds; t != nil {
		if t.Kappa1 != nil {
			m["thresholds/kappa1_s_per_byte"] = *t.Kappa1
		}
		if t.Kappa2 != nil {
			m["thresholds/kappa2_s_per_byte"] = *t.Kappa2
		}
		for name, v := range map[string]int64{"s_bytes": t.S, "m1_bytes": t.M1, "m2_bytes": t.M2} {
			if v != 0 {
				m["thresholds/"+name] = estimate.Param{Value: float64(v), CILow: float64(v), CIHigh: float64(v), N: 1}
			}
		}
	}
	if l := c.L; l != nil {
		m["l/a_s"], m["l/b_s_per_byte"], m["l/c_s_per_pair"], m["l/d_s_per_byte_pair"] = l.A, l.B, l.C, l.D
	}
	// A parameter the calibration does not use is not compared: one that a later run leaves
	// out vanishes there, which is drift.
	for _, u := range c.NotIdentified {
		delete(m, u.Parameter)
	}
	return m
}

// overlap says whether two intervals share a point; an interval with an infinite bound on a
// side overlaps on that side (it says nothing there). Threshold sizes (zero-width
// intervals) drift when they differ.
func overlap(a, b estimate.Param) bool {
	return !(a.CIHigh < b.CILow || b.CIHigh < a.CILow)
}

// Compare puts the calibrations and accuracies of run directories side by side, flags every
// parameter whose 95% interval in a run does not overlap the first run's, and everything the
// first run had that a later one lacks (a parameter, an estimator, a model's accuracy), draws
// the error distributions of the runs overlaid per model, and writes compare.json,
// compare.html and the figures into out. Every file of every run is read strictly: one that
// cannot be read is an error naming it.
func Compare(ctx context.Context, runs []string, out string) (*Comparison, error) {
	var rds []*rundir.Run
	for _, r := range runs {
		rd, err := rundir.ReadCalibrated(r)
		if err != nil {
			return nil, err
		}
		rds = append(rds, rd)
	}
	return CompareRuns(ctx, rds, out)
}

// CompareRuns is Compare on runs already read (rundir.ReadCalibrated).
func CompareRuns(ctx context.Context, rds []*rundir.Run, out string) (*Comparison, error) {
	runs := make([]string, len(rds))
	for i, rd := range rds {
		runs[i] = rd.Dir
	}
	cmp := Contrast(rds)
	figs := trendFigures(cmp)
	for _, m := range contention.Models() {
		var errs [][]float64
		for _, rd := range rds {
			errs = append(errs, validate.Errors(rd.Predictions, m.Name(), nil))
		}
		figs = append(figs, plots.OverlaidHistograms("errors_"+m.Name(), m.Name(), runs, errs))
	}
	if err := writeComparison(ctx, cmp, figs, out); err != nil {
		return nil, err
	}
	return cmp, nil
}

// Contrast compares runs already read (each with a calibration), the first being the
// reference: the work of Compare without the files.
func Contrast(rds []*rundir.Run) *Comparison {
	cmp := &Comparison{Format: CompareFormat, Drifted: []string{}, Vanished: []string{}, NewlySkipped: []string{}, AccuracyLost: []string{},
		RunDrift: make([]bool, len(rds))}
	var flat []map[string]estimate.Param
	for _, rd := range rds {
		cmp.Runs = append(cmp.Runs, rd.Dir)
		cmp.Clusters = append(cmp.Clusters, rd.Calibration.Cluster)
		flat = append(flat, flatten(rd.Calibration))
	}
	names := map[string]bool{}
	for _, f := range flat {
		for name := range f {
			names[name] = true
		}
	}
	for _, name := range slices.Sorted(maps.Keys(names)) {
		cp := ComparedParam{Name: name}
		base, inBase := flat[0][name]
		drifted := false
		for k, f := range flat {
			v, ok := f[name]
			cp.Values, cp.Missing = append(cp.Values, v), append(cp.Missing, !ok)
			rel := 0.0
			if ok && inBase && base.Value != 0 && !math.IsInf(base.Value, 0) && !math.IsInf(v.Value, 0) {
				rel = (v.Value - base.Value) / math.Abs(base.Value)
			}
			cp.RelChange = append(cp.RelChange, rel)
			vanished := k > 0 && inBase && !ok
			if vanished {
				cmp.Vanished = append(cmp.Vanished, fmt.Sprintf("%s (run %d)", name, k+1))
			}
			d := k > 0 && (vanished || (inBase && ok && !overlap(base, v)))
			cp.Drift = append(cp.Drift, d)
			cmp.RunDrift[k] = cmp.RunDrift[k] || d
			drifted = drifted || (d && !vanished)
		}
		if drifted {
			cmp.Drifted = append(cmp.Drifted, name)
		}
		cmp.Params = append(cmp.Params, cp)
	}
	ran := func(cal *estimate.Calibration, estimator string) bool {
		return !slices.ContainsFunc(cal.Skipped, func(s estimate.Skipped) bool { return s.Estimator == estimator })
	}
	for k, rd := range rds[1:] {
		for _, s := range rd.Calibration.Skipped {
			if ran(rds[0].Calibration, s.Estimator) {
				cmp.RunDrift[k+1] = true
				cmp.NewlySkipped = append(cmp.NewlySkipped, fmt.Sprintf("%s (run %d: %s)", s.Estimator, k+2, s.Reason))
			}
		}
	}
	for _, m := range contention.Models() {
		cm := ComparedModel{Model: m.Name()}
		for k, rd := range rds {
			var mae, w *float64
			if rd.Accuracy != nil {
				for _, ma := range rd.Accuracy.Overall.Models {
					if ma.Model == m.Name() && ma.Transfers > 0 {
						mae, w = &ma.MeanAbsErr, &ma.Within10
					}
				}
			}
			if k > 0 && mae == nil && cm.MeanAbsErr[0] != nil {
				cmp.RunDrift[k] = true
				cmp.AccuracyLost = append(cmp.AccuracyLost, fmt.Sprintf("%s (run %d scored no held-out transfer)", m.Name(), k+1))
			}
			cm.MeanAbsErr, cm.Within10 = append(cm.MeanAbsErr, mae), append(cm.Within10, w)
		}
		cmp.Accuracy = append(cmp.Accuracy, cm)
	}
	return cmp
}

func writeComparison(ctx context.Context, cmp *Comparison, figs []*plots.Figure, out string) error {
	return atomicio.BuildDir(out, func(tmp string) error {
		if err := datasets.WriteJSONFile(filepath.Join(tmp, CompareJSON), cmp); err != nil {
			return err
		}
		shown, err := writeFigures(ctx, tmp, figs, 0)
		if err != nil {
			return err
		}
		return writePage(filepath.Join(tmp, CompareHTML), "compare.html.tmpl", map[string]any{"Comparison": cmp,
			"Figures": figureRows(shown), "Alarms": cmp.Alarms(), "Version": provenance.Version, "Cells": paramCells(cmp),
			"AccCells": accuracyTable(cmp), "RunRows": runTable(cmp)})
	})
}

// WriteText prints the comparison as aligned tables: parameters, then accuracy.
func (c *Comparison) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprint(tw, "parameter")
	for k := range c.Runs {
		fmt.Fprintf(tw, "\trun %d [95%% CI]", k+1)
		if k > 0 {
			fmt.Fprintf(tw, "\tchange")
		}
	}
	fmt.Fprintln(tw, "\t")
	for _, p := range c.Params {
		fmt.Fprint(tw, p.Name)
		for k, v := range p.Values {
			if p.Missing[k] {
				fmt.Fprint(tw, "\tn/a")
			} else {
				fmt.Fprintf(tw, "\t%s [%s, %s]", num(v.Value), num(v.CILow), num(v.CIHigh))
			}
			if k > 0 {
				mark := ""
				switch {
				case p.Drift[k] && p.Missing[k]:
					mark = "VANISHED"
				case p.Drift[k]:
					mark = fmt.Sprintf("%+.2f%%  DRIFT", 100*p.RelChange[k])
				case p.Missing[k] || p.Missing[0]:
					mark = "n/a"
				default:
					mark = fmt.Sprintf("%+.2f%%", 100*p.RelChange[k])
				}
				fmt.Fprintf(tw, "\t%s", mark)
			}
		}
		fmt.Fprintln(tw, "\t")
	}
	fmt.Fprintln(tw)
	fmt.Fprint(tw, "model")
	for k := range c.Runs {
		fmt.Fprintf(tw, "\trun %d mean |ε|\twithin 10%%", k+1)
	}
	fmt.Fprintln(tw, "\t")
	for _, m := range c.Accuracy {
		fmt.Fprint(tw, m.Model)
		for k := range m.MeanAbsErr {
			if m.MeanAbsErr[k] == nil {
				fmt.Fprint(tw, "\tn/a\tn/a")
				continue
			}
			fmt.Fprintf(tw, "\t%.2f%%\t%.1f%%", 100**m.MeanAbsErr[k], 100**m.Within10[k])
		}
		fmt.Fprintln(tw, "\t")
	}
	return tw.Flush()
}
