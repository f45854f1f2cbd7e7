package report

import (
	"bytes"
	"context"
	"embed"
	"encoding/base64"
	"errors"
	"fmt"
	"html/template"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"codeberg.org/go-fonts/liberation/liberationserifregular"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/contention"
	"github.com/commcal/commcal/datasets"
	"github.com/commcal/commcal/estimate"
	"github.com/commcal/commcal/experiments"
	"github.com/commcal/commcal/internal/atomicio"
	"github.com/commcal/commcal/internal/badinput"
	"github.com/commcal/commcal/internal/provenance"
	"github.com/commcal/commcal/plots"
	"github.com/commcal/commcal/rundir"
	"github.com/commcal/commcal/validate"
)

//go:embed templates
var templateFiles embed.FS

// pages are the HTML pages commcal writes (report.html.tmpl, compare.html.tmpl) with the
// pieces they share (common.tmpl).
var pages = template.Must(template.New("pages").Funcs(pageFuncs).ParseFS(templateFiles, "templates/*.tmpl"))

// figureFont is the font gonum/plot draws text with (Liberation Serif), as a CSS rule that
// the pages carry once: inline SVG figures then lay their text out as the figures were drawn
// on any machine, not in a wider fallback font that cuts titles and pushes legends over data.
var figureFont = template.CSS(`@font-face { font-family: "Liberation Serif"; src: url(data:font/ttf;base64,` +
	base64.StdEncoding.EncodeToString(liberationserifregular.TTF) + `) format("truetype"); }`)

// pageFuncs format numbers the same way on every page.
var pageFuncs = template.FuncMap{
	"figureFont": func() template.CSS { return figureFont },
	"num":        num,
	"pct":        func(v float64) string { return fmt.Sprintf("%.2f%%", 100*v) },
	"pct1":       func(v float64) string { return fmt.Sprintf("%.1f%%", 100*v) },
	// pctn is a share in percent without the sign, for table columns whose header says (%).
	"pctn":  func(v float64) string { return fmt.Sprintf("%.2f", 100*v) },
	"deref": func(v *float64) float64 { return *v },
	"dv":    dataValue,
	"scale": func(v, k float64) float64 { return v * k },
	"add":   func(a, b int) int { return a + b },
	// breakable lets a long parameter name break after its slashes.
	"breakable": func(s string) template.HTML {
		return template.HTML(strings.ReplaceAll(template.HTMLEscapeString(s), "/", "/<wbr>"))
	},
	"sci": func(v float64) string { return fmt.Sprintf("%.3g", v) },
	"ms":  func(s float64) string { return num(s*1e3) + " ms" },
	// pctOf prints a value that may be missing (a model that scored nothing) as n/a.
	"pctOf": func(v *float64) string {
		if v == nil {
			return "n/a"
		}
		return fmt.Sprintf("%.2f%%", 100**v)
	},
	"measure": func(m string) string {
		if m == MeasureWithin10 {
			return "share within ±10% at least"
		}
		return "mean |ε| at most"
	},
}

// reportFigure is one figure as the report shows it.
type reportFigure struct {
	Name, Title string
	SVG         template.HTML // produced by gonum's SVG backend, which escapes text
	Warnings    []string      // data the figure could not draw (extreme or non-finite values)
	Width       float64       // in points, to share a row with the figure beside it
}

// figureRow is the figures a page shows side by side: one, or a figure and its companion.
type figureRow []reportFigure

// besides names the figures a report shows to the right of another.
var besides = map[string]string{"bandwidth_vs_degree": "bandwidth_heatmap"}

// figureRows lays figures out in rows: each alone, but for the companions of besides.
func figureRows(figs []reportFigure) []figureRow {
	var rows []figureRow
	for i := 0; i < len(figs); i++ {
		if i+1 < len(figs) && besides[figs[i].Name] == figs[i+1].Name {
			rows = append(rows, figureRow{figs[i], figs[i+1]})
			i++
			continue
		}
		rows = append(rows, figureRow{figs[i]})
	}
	return rows
}

// PlotOptions configures Plot.
type PlotOptions struct {
	// DPI is the resolution of the PNG figures (0: plots.DefaultDPI).
	DPI float64
}

// Plot draws every figure whose data the run directory holds into <dir>/figures (PNG, SVG and
// PDF) and writes <dir>/report.html, a single file with the run's health, the calibration,
// the accuracy and measurement tables, every figure inline as SVG and the dataset's
// provenance. The thresholds and the comparison with a previous run that the run recorded in
// health.json are shown again. It returns the figures' names.
func Plot(ctx context.Context, dir string, opts PlotOptions) ([]string, error) {
	ds, err := datasets.Open(filepath.Join(dir, rundir.DatasetDir))
	if err != nil {
		return nil, badinput.Wrap(dir, err)
	}
	rd, err := rundir.Read(dir)
	if err != nil {
		return nil, err
	}
	in, err := rundir.LoadTables(ctx, ds)
	if err != nil {
		return nil, err
	}
	s, err := rundir.ReadSummary(dir, ds, in)
	if err != nil {
		return nil, err
	}
	c := &Contents{Dataset: ds, Inputs: in, Summary: s, Calibration: rd.Calibration, Accuracy: rd.Accuracy, Predictions: rd.Predictions, DPI: opts.DPI}
	if prev, err := readHealth(filepath.Join(dir, rundir.HealthFile)); err != nil {
		return nil, err
	} else if prev != nil {
		c.Thresholds, c.Previous = prev.Thresholds, prev.Previous
	}
	_, names, err := Write(ctx, dir, c)
	return names, err
}

// readHealth reads a run's health.json strictly; an absent file is nil.
func readHealth(path string) (*Health, error) {
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	h := &Health{}
	if err := datasets.ReadJSONFile(path, h); err != nil {
		return nil, badinput.Wrap(path, err)
	}
	if err := rundir.CheckFormat(path, h.Format, HealthFormat); err != nil {
		return nil, err
	}
	return h, nil
}

// Contents is what the report of a run shows: its dataset and tables, their summary, and its
// calibration, accuracy and predictions (nil when the run has not made them), with what its
// health is checked against beside them: the accuracy thresholds the run was given and what
// changed since the previous run (nil: no previous run).
type Contents struct {
	Dataset     *datasets.Dataset
	Inputs      estimate.Inputs
	Summary     *rundir.Summary
	Calibration *estimate.Calibration
	Accuracy    *validate.Accuracy
	Predictions []validate.Row
	Thresholds  []ThresholdSpec
	Previous    *PreviousRun
	// DPI is the resolution of the PNG figures (0: plots.DefaultDPI).
	DPI float64
}

// Write checks a run's health and writes it to <dir>/health.json, draws the figures into
// <dir>/figures (PNG, SVG and PDF) and writes <dir>/report.html; it returns the health and the
// figures' names.
func Write(ctx context.Context, dir string, c *Contents) (*Health, []string, error) {
	h := checkHealth(c)
	if err := datasets.WriteJSONFile(filepath.Join(dir, rundir.HealthFile), h); err != nil {
		return nil, nil, err
	}
	names, err := c.write(ctx, dir, h)
	if err != nil {
		return nil, nil, err
	}
	return h, names, nil
}

// write draws the figures into <dir>/figures and writes <dir>/report.html with the run's
// health, and returns the figures' names.
func (c *Contents) write(ctx context.Context, dir string, health *Health) ([]string, error) {
	figs := figures(c.Dataset.Cluster, c.Inputs, c.Calibration, c.Predictions)
	figDir := filepath.Join(dir, rundir.FiguresDir)
	if err := os.MkdirAll(figDir, 0o755); err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	shown, err := writeFigures(ctx, figDir, figs, c.DPI)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, f := range figs {
		names = append(names, f.Name)
	}
	data := map[string]any{"Cluster": c.Dataset.Cluster.Name(), "Manifest": c.Dataset.Manifest, "Figures": figureRows(shown), "Version": provenance.Version,
		"Health": health, "Summary": c.Summary}
	if c.Calibration != nil {
		data["Calibration"] = c.Calibration
		data["CalRows"] = markImplausible(calibrationRows(c.Calibration), health.Implausible)
	}
	if c.Accuracy != nil {
		data["Accuracy"] = c.Accuracy
		data["AccRows"] = accuracyRows(c.Accuracy)
		data["GroupTables"] = c.Accuracy.GroupTables()
	}
	err = writePage(filepath.Join(dir, rundir.ReportFile), "report.html.tmpl", data)
	if err != nil {
		return nil, err
	}
	return names, nil
}

// writeFigures writes every figure into dir as PNG, SVG and PDF and returns them as a page shows
// them.
func writeFigures(ctx context.Context, dir string, figs []*plots.Figure, dpi float64) ([]reportFigure, error) {
	shown := make([]reportFigure, 0, len(figs))
	for _, f := range figs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		svg, err := f.Write(dir, dpi)
		if err != nil {
			return nil, err
		}
		shown = append(shown, reportFigure{Name: f.Name, Title: f.Title, SVG: template.HTML(inlineSVG(svg)), Warnings: f.Warnings,
			Width: f.Width.Points()})
	}
	return shown, nil
}

// writePage renders one of the pages into path.
func writePage(path, page string, data map[string]any) error {
	var b bytes.Buffer
	if err := pages.ExecuteTemplate(&b, page, data); err != nil {
		return fmt.Errorf("report: %s: %w", page, err)
	}
	if err := atomicio.WriteFile(path, b.Bytes()); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return nil
}

// inlineSVG drops the XML prologue so that the SVG can sit inside HTML.
func inlineSVG(svg []byte) string {
	s := string(svg)
	if i := strings.Index(s, "<svg"); i >= 0 {
		s = s[i:]
	}
	return s
}

// errorFigures are the figures of the held-out predictions: error histograms by setting (the
// default model, then the paper's models), every model's error CDF, and predicted against
// measured.
func errorFigures(preds []validate.Row) []*plots.Figure {
	models := contention.Names()
	settings := map[string]bool{}
	for _, r := range preds {
		settings[r.Setting] = true
	}
	cols := slices.SortedFunc(maps.Keys(settings), validate.CompareSettings)
	rows := []string{contention.DefaultModel} // the default first, then the paper's models, once each
	for _, m := range []string{"asymmetric", "fair"} {
		if m != contention.DefaultModel {
			rows = append(rows, m)
		}
	}
	errs := make([][][]float64, len(rows))
	for r, m := range rows {
		errs[r] = make([][]float64, len(cols))
		for c, s := range cols {
			errs[r][c] = validate.Errors(preds, m, func(p validate.Row) bool { return p.Setting == s })
		}
	}
	figs := []*plots.Figure{plots.ErrorHistograms("errors_by_setting", rows, cols, errs)}
	all := make([][]float64, len(models))
	for m, name := range models {
		all[m] = validate.Errors(preds, name, nil)
	}
	// validate does not estimate the noise limit yet: no curve for it.
	figs = append(figs, plots.ErrorCDF("errors_cdf", models, all, nil))
	var measured []float64
	predicted := make([][]float64, len(models))
	for m, name := range models {
		for _, p := range validate.ModelRows(preds, name) {
			if m == 0 {
				measured = append(measured, p.Measured)
			}
			predicted[m] = append(predicted[m], p.Measured*(1+p.Err))
		}
	}
	return append(figs, plots.PredictedVsMeasured("predicted_vs_measured", models, measured, predicted))
}

// figures builds every figure the data allow: the predictions' first, then the calibration's.
func figures(cl *cluster.Cluster, in estimate.Inputs, cal *estimate.Calibration, preds []validate.Row) []*plots.Figure {
	var figs []*plots.Figure
	if len(preds) > 0 {
		figs = errorFigures(preds)
	}
	if cal == nil {
		return figs
	}
	if series := hockneySeries(cl, in, cal); len(series) > 0 {
		figs = append(figs, plots.HockneyFit("hockney", series))
	}
	if c := cal.Contra; c != nil {
		type key struct {
			exp     string
			in, out int
		}
		agg := map[key]*plots.DegreePoint{}
		n := map[key]float64{}
		for _, r := range c.Residuals {
			k := key{r.Experiment, r.In, r.Out}
			p := agg[k]
			if p == nil {
				p = &plots.DegreePoint{Experiment: r.Experiment, In: r.In, Out: r.Out}
				agg[k] = p
			}
			p.Measured += r.Measured
			p.Fair += r.Fair
			p.Asym += r.Asymmetric
			n[k]++
		}
		var pts []plots.DegreePoint
		for k, p := range agg {
			p.Measured, p.Fair, p.Asym = p.Measured/n[k], p.Fair/n[k], p.Asym/n[k]
			pts = append(pts, *p)
		}
		sort.Slice(pts, func(i, j int) bool {
			a, b := pts[i], pts[j]
			return a.Experiment < b.Experiment || a.Experiment == b.Experiment && (a.In < b.In || a.In == b.In && a.Out < b.Out)
		})
		figs = append(figs, plots.BandwidthVsDegree("bandwidth_vs_degree", pts), plots.BandwidthHeatmap("bandwidth_heatmap", pts))
	}
	if rates := rateShares(cl, cal); len(rates) > 0 {
		figs = append(figs, plots.RatesVsNominal("rates_vs_nominal", rates))
	}
	if th := cal.Thresholds; th != nil {
		_, _, ss, st := estimate.Sweep(in.Collectives, "scatter")
		_, _, gs, gt := estimate.Sweep(in.Collectives, "gather")
		// A threshold the sweeps did not give (0) has no mark.
		marks := func(kv ...any) map[string]float64 {
			m := map[string]float64{}
			for i := 0; i < len(kv); i += 2 {
				if v := kv[i+1].(int64); v != 0 {
					m[kv[i].(string)] = float64(v)
				}
			}
			return m
		}
		figs = append(figs, plots.CollectiveSweeps("collectives", []plots.Sweep{
			{Op: "scatter", Sizes: ss, Times: st, Marks: marks("S", th.S)},
			{Op: "gather", Sizes: gs, Times: gt, Marks: marks("M1", th.M1, "M2", th.M2)},
		}))
	}
	if l := cal.L; l != nil {
		byP := map[int64]*plots.LSeries{}
		var ps []int64
		for _, pt := range l.Points {
			s := byP[pt.Pairs]
			if s == nil {
				s = &plots.LSeries{Pairs: pt.Pairs, A: l.A.Value, B: l.B.Value, C: l.C.Value, D: l.D.Value}
				byP[pt.Pairs] = s
				ps = append(ps, pt.Pairs)
			}
			s.Sizes, s.L = append(s.Sizes, float64(pt.Bytes)), append(s.L, pt.L.Value)
		}
		var series []plots.LSeries
		for _, p := range ps {
			series = append(series, *byP[p])
		}
		figs = append(figs, plots.LLines("l_parameter", series))
	}
	if lm := cal.LMO; lm != nil {
		var c, t []plots.NodeParam
		for _, nd := range lm.Nodes {
			c = append(c, plots.NodeParam{Node: nd.Name, Value: nd.C.Value, Low: nd.C.CILow, High: nd.C.CIHigh})
			t = append(t, plots.NodeParam{Node: nd.Name, Value: nd.T.Value, Low: nd.T.CILow, High: nd.T.CIHigh})
		}
		figs = append(figs, plots.LMONodes("lmo_nodes", c, t))
	}
	return figs
}

// rateShares are the calibrated rates beside the nominal rates of the hardware that carries
// them: the per-flow ceilings and the NIC capacity against the slowest NIC, the backbone's
// capacity against the slowest backbone or uplink, Hockney's 8/β per class against the
// slowest NIC, and the LMO link rates (median, with their range) against it.
func rateShares(cl *cluster.Cluster, cal *estimate.Calibration) []plots.RateShare {
	nic, core := nominalRates(cl)
	var out []plots.RateShare
	add := func(name string, p estimate.Param, nominal float64) {
		out = append(out, plots.RateShare{Name: name, Value: p.Value, Low: p.CILow, High: p.CIHigh, Nominal: nominal})
	}
	for _, f := range cal.Fairness {
		add(f.Experiment+" per-flow ceiling", f.Ceiling, nic)
		if f.Experiment == experiments.FairInter {
			if core > 0 {
				add("fair_inter backbone capacity", f.Capacity, core)
			}
		} else {
			add(f.Experiment+" NIC capacity", f.Capacity, nic)
		}
	}
	for _, h := range cal.Hockney {
		// A rate of 8/β bit/s; the interval's bounds swap (a β bound at or below 0 has no rate).
		inv := func(b float64) float64 {
			if b > 0 {
				return 8 / b
			}
			return math.Inf(1)
		}
		add("hockney "+string(h.Class)+" 8/β", estimate.Param{Value: inv(h.Beta.Value), CILow: inv(h.Beta.CIHigh), CIHigh: inv(h.Beta.CILow)}, nic)
	}
	if l := cal.LMO; l != nil && len(l.Links) > 0 {
		rates := make([]float64, len(l.Links))
		for i, ln := range l.Links {
			rates[i] = ln.RateBps.Value
		}
		sort.Float64s(rates)
		median := (rates[(len(rates)-1)/2] + rates[len(rates)/2]) / 2 // the middle rate, or the mean of the two middle ones
		add("lmo link rates (median, min–max)", estimate.Param{Value: median, CILow: rates[0], CIHigh: rates[len(rates)-1]}, nic)
	}
	return out
}

// hockneySeries is what the Hockney figure draws per path class: the one-way times and the
// fit, piecewise where the calibration found several protocol regimes. Classes measured only
// by ping-pong round trips (SimGrid's calibration, MPI benchmarks) are drawn from half their
// round trips with their segments.
func hockneySeries(cl *cluster.Cluster, in estimate.Inputs, cal *estimate.Calibration) []plots.HockneySeries {
	pieces := func(sh estimate.SegmentedHockney) []plots.HockneyPiece {
		var out []plots.HockneyPiece
		for _, seg := range sh.Segments {
			out = append(out, plots.HockneyPiece{FromBytes: seg.FromBytes, Alpha: seg.Alpha.Value, Beta: seg.Beta.Value})
		}
		return out
	}
	var series []plots.HockneySeries
	done := map[cluster.PathClass]bool{}
	for _, h := range cal.Hockney {
		s := plots.HockneySeries{Class: string(h.Class), Alpha: h.Alpha.Value, Beta: h.Beta.Value}
		for _, r := range in.Transfers {
			if c, _ := cl.Class(r.Src, r.Dst); r.Experiment == experiments.P2PSweep && c == h.Class {
				s.Sizes, s.Times = append(s.Sizes, float64(r.Bytes)), append(s.Times, r.Seconds())
			}
		}
		for _, sh := range cal.HockneySegments {
			if sh.Class == h.Class && sh.Source == experiments.P2PSweep {
				s.Segments = pieces(sh)
			}
		}
		series, done[h.Class] = append(series, s), true
	}
	for _, sh := range cal.HockneySegments {
		if done[sh.Class] || sh.Source == experiments.P2PSweep || len(sh.Segments) == 0 {
			continue
		}
		first := sh.Segments[0]
		s := plots.HockneySeries{Class: string(sh.Class) + " (round trips / 2)", Alpha: first.Alpha.Value, Beta: first.Beta.Value, Segments: pieces(sh)}
		for _, r := range in.RoundTrips {
			if c, _ := cl.Class(r.I, r.J); c == sh.Class && r.BytesOut == r.BytesBack && r.BytesOut > 0 {
				s.Sizes, s.Times = append(s.Sizes, float64(r.BytesOut)), append(s.Times, r.Seconds/2)
			}
		}
		series = append(series, s)
	}
	return series
}
