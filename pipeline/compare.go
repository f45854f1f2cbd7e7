package pipeline

import (
	"fmt"
	"io"
	"math"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/commcal/commcal/contention"
	"github.com/commcal/commcal/datasets"
	"github.com/commcal/commcal/estimate"
	"github.com/commcal/commcal/internal/atomicio"
	"github.com/commcal/commcal/plots"
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
	// RelChange[k] is (value_k − value_0)/|value_0| for every run k.
	RelChange []float64 `json:"rel_change"`
	// Drift[k] says that run k's interval does not overlap run 0's.
	Drift []bool `json:"drift"`
}

// ComparedModel is one model's overall accuracy across runs (−1 for a run without
// validation).
type ComparedModel struct {
	Model      string    `json:"model"`
	MeanAbsErr []float64 `json:"mean_abs_err"`
	Within10   []float64 `json:"within_10pct"`
}

// Comparison is the content of compare.json.
type Comparison struct {
	Runs     []string        `json:"runs"`
	Clusters []string        `json:"clusters"`
	Params   []ComparedParam `json:"params"`
	Accuracy []ComparedModel `json:"accuracy"`
	Drifted  []string        `json:"drifted"`
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
		m["thresholds/kappa1_s_per_byte"] = t.Kappa1
		m["thresholds/kappa2_s_per_byte"] = t.Kappa2
		for name, v := range map[string]int64{"s_bytes": t.S, "m1_bytes": t.M1, "m2_bytes": t.M2} {
			m["thresholds/"+name] = estimate.Param{Value: float64(v), CILow: float64(v), CIHigh: float64(v), N: 1}
		}
	}
	if l := c.L; l != nil {
		m["l/a_s"], m["l/b_s_per_byte"], m["l/c_s_per_pair"], m["l/d_s_per_byte_pair"] = l.A, l.B, l.C, l.D
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
// parameter whose 95% interval in a run does not overlap the first run's, draws the error
// distributions of the runs overlaid per model, and writes compare.json, compare.html and
// the figures into out.
func Compare(runs []string, out string) (*Comparison, error) {
	cmp := &Comparison{Runs: runs}
	var flat []map[string]estimate.Param
	var accs []*validate.Accuracy
	var preds [][]validate.Row
	for _, r := range runs {
		cal, err := ReadCalibration(filepath.Join(r, CalibrationFile))
		if err != nil {
			return nil, fmt.Errorf("pipeline: %s is not a run directory with a calibration: %w", r, err)
		}
		cmp.Clusters = append(cmp.Clusters, cal.Cluster)
		flat = append(flat, flatten(cal))
		acc := &validate.Accuracy{}
		if err := datasets.ReadJSONFile(filepath.Join(r, AccuracyFile), acc); err != nil {
			acc = nil
		}
		accs = append(accs, acc)
		p, _ := datasets.ReadParquetFile[validate.Row](filepath.Join(r, PredictionsFile), validate.PredictionsTable)
		preds = append(preds, p)
	}
	var names []string
	for name := range flat[0] {
		inAll := true
		for _, f := range flat[1:] {
			if _, ok := f[name]; !ok {
				inAll = false
			}
		}
		if inAll {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	for _, name := range names {
		cp := ComparedParam{Name: name}
		base := flat[0][name]
		drifted := false
		for k, f := range flat {
			v := f[name]
			cp.Values = append(cp.Values, v)
			rel := 0.0
			if base.Value != 0 && !math.IsInf(base.Value, 0) && !math.IsInf(v.Value, 0) {
				rel = (v.Value - base.Value) / math.Abs(base.Value)
			}
			cp.RelChange = append(cp.RelChange, rel)
			d := k > 0 && !overlap(base, v)
			cp.Drift = append(cp.Drift, d)
			drifted = drifted || d
		}
		if drifted {
			cmp.Drifted = append(cmp.Drifted, name)
		}
		cmp.Params = append(cmp.Params, cp)
	}
	var figs []*plots.Figure
	for _, m := range contention.Models() {
		cm := ComparedModel{Model: m.Name()}
		var errs [][]float64
		for k, acc := range accs {
			mae, w := -1.0, -1.0 // the run has no validation
			if acc != nil {
				for _, ma := range acc.Overall.Models {
					if ma.Model == m.Name() {
						mae, w = ma.MeanAbsErr, ma.Within10
					}
				}
			}
			cm.MeanAbsErr, cm.Within10 = append(cm.MeanAbsErr, mae), append(cm.Within10, w)
			var e []float64
			for _, p := range preds[k] {
				e = append(e, p.Err(m.Name()))
			}
			errs = append(errs, e)
		}
		cmp.Accuracy = append(cmp.Accuracy, cm)
		figs = append(figs, plots.OverlaidHistograms("errors_"+m.Name(), m.Name(), runs, errs))
	}
	if err := writeComparison(cmp, figs, out); err != nil {
		return nil, err
	}
	return cmp, nil
}

func writeComparison(cmp *Comparison, figs []*plots.Figure, out string) error {
	return atomicio.BuildDir(out, func(tmp string) error {
		if err := datasets.WriteJSONFile(filepath.Join(tmp, CompareJSON), cmp); err != nil {
			return err
		}
		shown, err := writeFigures(tmp, figs)
		if err != nil {
			return err
		}
		var table strings.Builder
		cmp.WriteText(&table)
		return writePage(filepath.Join(tmp, CompareHTML), "compare.html.tmpl", map[string]any{"Runs": cmp.Runs,
			"Table": table.String(), "Figures": shown, "Drifted": cmp.Drifted, "Version": Version})
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
			fmt.Fprintf(tw, "\t%s [%s, %s]", num(v.Value), num(v.CILow), num(v.CIHigh))
			if k > 0 {
				mark := ""
				if p.Drift[k] {
					mark = "  DRIFT"
				}
				fmt.Fprintf(tw, "\t%+.2f%%%s", 100*p.RelChange[k], mark)
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
			fmt.Fprintf(tw, "\t%.2f%%\t%.1f%%", 100*m.MeanAbsErr[k], 100*m.Within10[k])
		}
		fmt.Fprintln(tw, "\t")
	}
	return tw.Flush()
}
