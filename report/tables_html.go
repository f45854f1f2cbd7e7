package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/commcal/commcal/estimate"
	"github.com/commcal/commcal/validate"
)

// calRow is one line of the calibration as the terminal and the report show it: a parameter
// with its interval in a display unit, or a line summarising an estimator (Summary set).
type calRow struct {
	Group string // the estimator: hockney, fairness, asymmetry, lmo, thresholds, l, penalties, spread
	Name  string
	P     estimate.Param // scaled to Unit
	Unit  string
	// Summary holds the three cells of a summary line (estimate, interval, observations).
	Summary []string
	// Implausible marks a value the health panel lists as physically implausible.
	Implausible bool
	// NotIdentified is why the calibration does not use the value (estimate.Unidentified),
	// empty for a value it uses: such a row shows the reason instead of the value.
	NotIdentified string
}

// calibrationRows lists a calibration's parameters in display units, in the order the
// estimators run, with a summary line for the LMO fit, the thresholds and the penalty table.
func calibrationRows(cal *estimate.Calibration) []calRow {
	var rows []calRow
	why := map[string]string{}
	for _, u := range cal.NotIdentified {
		why[u.Parameter] = u.Reason
	}
	// row adds a parameter; key is its name in cal.Estimates and cal.NotIdentified.
	row := func(group, name, key string, p estimate.Param, scale float64, unit string) {
		rows = append(rows, calRow{Group: group, Name: name, Unit: unit, NotIdentified: why[key],
			P: estimate.Param{Value: p.Value * scale, CILow: p.CILow * scale, CIHigh: p.CIHigh * scale, N: p.N}})
	}
	summary := func(group, name string, cells ...string) {
		rows = append(rows, calRow{Group: group, Name: name, Summary: cells})
	}
	for _, h := range cal.Hockney {
		row("hockney", "hockney "+string(h.Class)+" α", "hockney/"+string(h.Class)+"/alpha_s", h.Alpha, 1e6, "µs")
		row("hockney", "hockney "+string(h.Class)+" β", "hockney/"+string(h.Class)+"/beta_s_per_byte", h.Beta, 1e9, "ns/B")
	}
	for _, sh := range cal.HockneySegments {
		for _, seg := range sh.Segments {
			name := fmt.Sprintf("hockney %s %.0f–%.0f B", sh.Class, seg.FromBytes, seg.ToBytes)
			row("hockney", name+" α", estimate.SegmentName(sh.Class, seg)+"/alpha_s", seg.Alpha, 1e6, "µs")
			row("hockney", name+" β", estimate.SegmentName(sh.Class, seg)+"/beta_s_per_byte", seg.Beta, 1e9, "ns/B")
		}
	}
	for _, f := range cal.Fairness {
		row("fairness", f.Experiment+" ceiling", "fairness/"+f.Experiment+"/ceiling_bps", f.Ceiling, 1e-6, "Mbit/s")
		row("fairness", f.Experiment+" capacity", "fairness/"+f.Experiment+"/capacity_bps", f.Capacity, 1e-6, "Mbit/s")
		row("fairness", f.Experiment+" saturation k", "fairness/"+f.Experiment+"/saturation_k", f.Saturation, 1, "")
	}
	if c := cal.Contra; c != nil {
		row("asymmetry", "asymmetric-fitted φ", "contra/phi", estimate.Param{Value: c.Phi, CILow: c.CILow, CIHigh: c.CIHigh, N: c.Transfers}, 1, "")
	}
	for _, f := range cal.Learned {
		for _, e := range f.Estimates() {
			name, scale, unit, key := e.Name, 1.0, "", "learned/"+f.Model+"/"+e.Name
			switch {
			case strings.HasSuffix(name, "_bps"):
				name, scale, unit = strings.TrimSuffix(name, "_bps"), 1e-6, "Mbit/s"
			case strings.HasSuffix(name, "_s"):
				name, scale, unit = strings.TrimSuffix(name, "_s"), 1e3, "ms"
			}
			row("learned", f.Model+" "+name, key, e.Param, scale, unit)
		}
	}
	if l := cal.LMO; l != nil {
		var cs, ts float64
		for _, n := range l.Nodes {
			cs += n.C.Value
			ts += n.T.Value
		}
		summary("lmo", "lmo", fmt.Sprintf("%d nodes, %d links", len(l.Nodes), len(l.Links)),
			fmt.Sprintf("mean C %s µs, mean t %s ns/B", num(cs/float64(len(l.Nodes))*1e6), num(ts/float64(len(l.Nodes))*1e9)),
			fmt.Sprintf("%d reps", l.MinReps))
	}
	if th := cal.Thresholds; th != nil {
		size := func(name string, v int64) string {
			if v == 0 {
				return name + " not identified"
			}
			return fmt.Sprintf("%s %d B", name, v)
		}
		summary("thresholds", "thresholds", size("S", th.S)+", "+size("M1", th.M1)+", "+size("M2", th.M2), "", "")
		if th.Kappa1 != nil {
			row("thresholds", "gather κ1", "thresholds/kappa1_s_per_byte", *th.Kappa1, 1e9, "ns/B")
		}
		if th.Kappa2 != nil {
			row("thresholds", "gather κ2", "thresholds/kappa2_s_per_byte", *th.Kappa2, 1e9, "ns/B")
		}
	}
	if l := cal.L; l != nil {
		row("l", "L a", "l/a_s", l.A, 1e6, "µs")
		row("l", "L b", "l/b_s_per_byte", l.B, 1e9, "ns/B")
		row("l", "L c", "l/c_s_per_pair", l.C, 1e6, "µs/pair")
		row("l", "L d", "l/d_s_per_byte_pair", l.D, 1e12, "ps/(B·pair)")
	}
	if p := cal.Penalties; p != nil {
		summary("penalties", "penalty table", fmt.Sprintf("%d shapes from %d graphs", len(p.Table.Entries), len(p.Solved)),
			fmt.Sprintf("α %s ns/B", num(p.Alpha*1e9)), fmt.Sprintf("%d unsolved", len(p.Unsolved)))
	}
	// How far a transfer's time falls from its mean from one repetition to the next, which
	// sets when a collective's round is expected to end.
	if s := cal.Spread; s != nil && len(s.Ratios) > 0 {
		at := func(q float64) float64 { return s.Ratios[int(q*float64(len(s.Ratios)-1)+0.5)] }
		summary("spread", "transfer spread", fmt.Sprintf("time/its mean median %s", num(at(0.5))),
			fmt.Sprintf("10th–90th percentile %s–%s", num(at(0.1)), num(at(0.9))), fmt.Sprintf("%d reps", s.Transfers))
	}
	return rows
}

// markImplausible marks the rows the health panel lists.
func markImplausible(rows []calRow, findings []Finding) []calRow {
	bad := map[string]bool{}
	for _, f := range findings {
		bad[f.Parameter] = true
	}
	for i := range rows {
		rows[i].Implausible = bad[rows[i].Name]
	}
	return rows
}

// accRow is one line of the accuracy table: one model on one setting. Columns that have no
// transfers behind them are nil and show as n/a.
type accRow struct {
	Setting  string
	Patterns int
	First    bool // the setting's first line
	validate.ModelAccuracy
	// Best marks the model with the lowest mean |ε| on the setting (every one of them on a tie).
	Best bool
}

// accuracyRows lists the accuracy per setting and model, the overall lines last, marking each
// setting's best models.
func accuracyRows(acc *validate.Accuracy) []accRow {
	var rows []accRow
	for _, s := range validate.WithOverall(acc.Settings, acc.Overall) {
		best := math.Inf(1)
		for _, m := range s.Models {
			if m.Transfers > 0 {
				best = math.Min(best, m.MeanAbsErr)
			}
		}
		for i, m := range s.Models {
			rows = append(rows, accRow{Setting: s.Setting, Patterns: s.Patterns, First: i == 0, ModelAccuracy: m,
				Best: m.Transfers > 0 && m.MeanAbsErr <= best*(1+1e-12)})
		}
	}
	return rows
}

// dataValue is a number as a table cell's data-v attribute, which the sorting script reads
// with parseFloat: shortest round-trip form, infinities as JavaScript spells them.
func dataValue(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "Infinity"
	case math.IsInf(v, -1):
		return "-Infinity"
	case math.IsNaN(v):
		return "NaN"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}
