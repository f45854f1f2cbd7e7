package report

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/commcal/commcal/plots"
)

// paramUnits are the display units of compared parameters, by the suffix of their names
// (longest first): the scale from the stored SI value and the unit's name.
var paramUnits = []struct {
	suffix string
	scale  float64
	unit   string
}{
	{"_s_per_byte_pair", 1e12, "ps/(B·pair)"},
	{"_s_per_byte", 1e9, "ns/B"},
	{"_s_per_pair", 1e6, "µs/pair"},
	{"_bps", 1e-6, "Mbit/s"},
	{"_bytes", 1, "B"},
	{"_s", 1e6, "µs"},
}

// displayUnit is the scale and unit a compared parameter is shown in.
func displayUnit(name string) (float64, string) {
	for _, u := range paramUnits {
		if strings.HasSuffix(name, u.suffix) {
			return u.scale, u.unit
		}
	}
	return 1, ""
}

// paramFamily is the estimator a compared parameter comes from (LMO's nodes and links
// apart), the prefix of its name that says so, and the title of its trend figure.
func paramFamily(name string) (family, prefix, title string) {
	switch {
	case strings.HasPrefix(name, "lmo/node/"):
		return "lmo_nodes", "lmo/node/", "LMO per-node delays over the runs"
	case strings.HasPrefix(name, "lmo/link/"):
		return "lmo_links", "lmo/link/", "LMO link rates over the runs"
	}
	family, _, _ = strings.Cut(name, "/")
	title = map[string]string{"hockney": "Hockney α and β over the runs", "fairness": "Ceilings, capacities and saturation over the runs",
		"contra": "Asymmetry factor φ over the runs", "learned": "The learned models' parameters over the runs", "thresholds": "Scatter and gather thresholds over the runs", "l": "L(m, P) over the runs"}[family]
	if title == "" {
		title = family + " over the runs"
	}
	return family, family + "/", title
}

// runNames are the runs' directory names, for axes.
func runNames(runs []string) []string {
	out := make([]string, len(runs))
	for i, r := range runs {
		out[i] = filepath.Base(r)
	}
	return out
}

// trendFigures draws every compared parameter over the runs with its interval, one figure per
// estimator (trend_<family>), and each model's accuracy over the runs (trend_accuracy), with
// the runs flagged as drift marked.
func trendFigures(cmp *Comparison) []*plots.Figure {
	names := runNames(cmp.Runs)
	var order []string
	families := map[string][]plots.TrendSeries{}
	titles := map[string]string{}
	for _, p := range cmp.Params {
		fam, prefix, title := paramFamily(p.Name)
		if _, ok := families[fam]; !ok {
			order = append(order, fam)
			titles[fam] = title
		}
		scale, unit := displayUnit(p.Name)
		s := plots.TrendSeries{Name: strings.TrimPrefix(p.Name, prefix), Unit: unit}
		for k, v := range p.Values {
			s.Points = append(s.Points, plots.TrendPoint{Value: v.Value * scale, Low: v.CILow * scale, High: v.CIHigh * scale,
				Missing: p.Missing[k], Drift: p.Drift[k]})
		}
		families[fam] = append(families[fam], s)
	}
	var figs []*plots.Figure
	for _, fam := range order {
		figs = append(figs, plots.ParamTrends("trend_"+fam, titles[fam], names, cmp.RunDrift, families[fam]))
	}
	var models []string
	var mae, within [][]*float64
	for _, m := range cmp.Accuracy {
		models, mae, within = append(models, m.Model), append(mae, m.MeanAbsErr), append(within, m.Within10)
	}
	return append(figs, plots.AccuracyTrends("trend_accuracy", names, cmp.RunDrift, models, mae, within))
}

// paramCell is one run's value of a parameter as the comparison page shows it.
type paramCell struct {
	Value, Low, High float64 // in the row's unit
	Missing          bool
	// Change is the relative change from the first run, in percent ("" for the first run or
	// when either run lacks the parameter); Mark is DRIFT or VANISHED when flagged.
	Change, Mark string
}

// paramRow is one parameter across the runs.
type paramRow struct {
	Name, Unit string
	Cells      []paramCell
	Drift      bool
}

// paramCells lays the comparison's parameters out for the page, in display units.
func paramCells(cmp *Comparison) []paramRow {
	rows := make([]paramRow, 0, len(cmp.Params))
	for _, p := range cmp.Params {
		scale, unit := displayUnit(p.Name)
		r := paramRow{Name: p.Name, Unit: unit}
		for k, v := range p.Values {
			c := paramCell{Value: v.Value * scale, Low: v.CILow * scale, High: v.CIHigh * scale, Missing: p.Missing[k]}
			if k > 0 && !p.Missing[k] && !p.Missing[0] {
				c.Change = fmt.Sprintf("%+.2f%%", 100*p.RelChange[k])
			}
			switch {
			case p.Drift[k] && p.Missing[k]:
				c.Mark = "VANISHED"
			case p.Drift[k]:
				c.Mark = "DRIFT"
			}
			r.Drift = r.Drift || p.Drift[k]
			r.Cells = append(r.Cells, c)
		}
		rows = append(rows, r)
	}
	return rows
}

// accuracyCells is one model's accuracy across the runs as the comparison page shows it: mean
// |ε| and the share within ±10% of each run in turn (nil: the run scored nothing with it).
type accuracyCells struct {
	Model string
	Cells []*float64
}

// accuracyTable lays the comparison's accuracy out for the page.
func accuracyTable(cmp *Comparison) []accuracyCells {
	rows := make([]accuracyCells, 0, len(cmp.Accuracy))
	for _, m := range cmp.Accuracy {
		r := accuracyCells{Model: m.Model}
		for k := range m.MeanAbsErr {
			r.Cells = append(r.Cells, m.MeanAbsErr[k], m.Within10[k])
		}
		rows = append(rows, r)
	}
	return rows
}

// runRow is one run as the comparison page lists it.
type runRow struct {
	Dir, Cluster string
	Reference    bool // the first run, which the others are compared with
	Drift        bool
	// Params counts the parameters flagged in the run (drifted or vanished).
	Params int
}

// runTable lists the compared runs with what was flagged in each.
func runTable(cmp *Comparison) []runRow {
	rows := make([]runRow, len(cmp.Runs))
	for k, r := range cmp.Runs {
		rows[k] = runRow{Dir: r, Cluster: cmp.Clusters[k], Reference: k == 0, Drift: cmp.RunDrift[k]}
	}
	for _, p := range cmp.Params {
		for k, d := range p.Drift {
			if d {
				rows[k].Params++
			}
		}
	}
	return rows
}
