package plots

import (
	"fmt"
	"image/color"
	"math"
	"sort"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// HistBinPct is the width of the error histograms' bins, in percent.
const HistBinPct = 5

// histRange bounds the histograms: errors beyond ±50% fall in the outer bins.
const histRange = 50

// histBin returns the bin of an error ε (a fraction) in bins of HistBinPct percent over
// ±histRange, the outer bins taking everything beyond; ok is false for NaN and ±Inf.
func histBin(v float64) (int, bool) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, false
	}
	pct := math.Max(-histRange, math.Min(histRange-1e-9, 100*v))
	return int(math.Floor((pct + histRange) / HistBinPct)), true
}

// ErrorHistograms draws the papers' error histograms (CCPE 2014 Fig. 6 and 7): one panel per
// model (rows) and setting (columns) of the signed errors ε in percent, bins of 5%, the ±10%
// band marked by dashed lines and the share within it in the panel title (two lines). errs[r][c] holds
// the errors (fractions) of model rows[r] on setting cols[c]; an empty panel is left blank.
// NaN and infinite errors are left out, with a warning.
func ErrorHistograms(name string, rows, cols []string, errs [][][]float64) (fig *Figure) {
	defer recoverFigure(name, &fig)
	w := vg.Length(len(cols)) * 5 * vg.Centimeter
	h := vg.Length(len(rows)) * 4 * vg.Centimeter
	fig = newFigure(name, "Prediction errors per setting and model", max(w, 10*vg.Centimeter), max(h, 6*vg.Centimeter))
	if len(errs) != len(rows) {
		fig.warn("errors for %d models, %d models named; the missing panels are blank", len(errs), len(rows))
	}
	plots := make([][]*plot.Plot, len(rows))
	ymax := 0.0
	for r := range rows {
		plots[r] = make([]*plot.Plot, len(cols))
		for c := range cols {
			var e []float64
			if r < len(errs) && c < len(errs[r]) {
				e = errs[r][c]
			}
			bins := make([]plotter.HistogramBin, 2*histRange/HistBinPct)
			for i := range bins {
				bins[i].Min = float64(-histRange + i*HistBinPct)
				bins[i].Max = bins[i].Min + HistBinPct
			}
			n, within := 0, 0
			for _, v := range e {
				i, ok := histBin(v)
				if !ok {
					continue
				}
				n++
				bins[i].Weight++
				if math.Abs(100*v) <= 10 {
					within++
				}
			}
			if n < len(e) {
				fig.warn("%s, %s: %d of %d errors are NaN or infinite and are left out", label(rows[r]), label(cols[c]), len(e)-n, len(e))
			}
			if n == 0 {
				continue
			}
			for i := range bins {
				bins[i].Weight *= 100 / float64(n) // percent of the transfers
				ymax = math.Max(ymax, bins[i].Weight)
			}
			// Two short lines, so that a panel's title is never cut.
			p := newPlot(fmt.Sprintf("%s · %s\n%.0f%% within ±10%%", label(rows[r]), label(cols[c]), 100*float64(within)/float64(n)),
				"ε (%)", "transfers (%)")
			p.Title.TextStyle.Font.Size = vg.Points(8)
			hist, err := plotter.NewHist(plotter.Values{0}, 1)
			if err != nil {
				panic(err)
			}
			hist.Bins, hist.Width = bins, HistBinPct
			hist.FillColor = palette[r%len(palette)]
			p.Add(hist)
			plots[r][c] = p
		}
	}
	for r := range plots {
		for _, p := range plots[r] {
			if p == nil {
				continue
			}
			for _, x := range []float64{-10, 10} {
				l, err := plotter.NewLine(plotter.XYs{{X: x, Y: 0}, {X: x, Y: ymax * 1.05}})
				if err != nil {
					panic(err)
				}
				l.Dashes = []vg.Length{vg.Points(3), vg.Points(2)}
				p.Add(l)
			}
			p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = -histRange, histRange, 0, ymax*1.05
		}
	}
	return fig.grid(plots)
}

// pvmColumns is the number of panels per row of the predicted-against-measured figure.
const pvmColumns = 4

// PredictedVsMeasured draws each model's predicted against measured times (log–log) with the
// line y = x and the ±10% band around it (dotted): one panel per model, four to a row. A pair
// of times that a log axis cannot show (zero, negative, NaN, infinite, beyond 1e±300) is left
// out, with a warning.
func PredictedVsMeasured(name string, models []string, measured []float64, predicted [][]float64) (fig *Figure) {
	defer recoverFigure(name, &fig)
	fig = newFigure(name, "Predicted against measured completion times (±10% band dotted)", 0, 0)
	var panels []*plot.Plot
	for m, model := range models {
		if m >= len(predicted) {
			fig.warn("%s: no predictions given; left out", label(model))
			continue
		}
		pred := predicted[m]
		n := min(len(measured), len(pred))
		if len(pred) != len(measured) {
			fig.warn("%s: %d predictions for %d measured times; the extra ones are left out", label(model), len(pred), len(measured))
		}
		var pts plotter.XYs
		var x, y span
		within := 0
		for i := 0; i < n; i++ {
			if v, p := measured[i], pred[i]; onLog(v) && onLog(p) {
				pts = append(pts, plotter.XY{X: v, Y: p})
				x.add(v)
				y.add(p)
				if math.Abs(p-v) <= 0.1*v {
					within++
				}
			}
		}
		if skipped := n - len(pts); skipped > 0 {
			fig.warn("%s: %d of %d transfers have a measured or predicted time that a log axis cannot show (not positive, not finite, or beyond 1e±300) and are left out", label(model), skipped, n)
		}
		if len(pts) == 0 {
			continue
		}
		p := newPlot(fmt.Sprintf("%s: %.0f%% within ±10%%", model, 100*float64(within)/float64(len(pts))), "measured time (s)", "predicted time (s)")
		p.Add(scatter(pts, palette[m%len(palette)], vg.Points(1.2)))
		lo, hi := math.Min(x.lo, y.lo), math.Max(x.hi, y.hi)
		if hi > lo {
			grey := color.Gray{Y: 0x80}
			p.Add(lineOf(plotter.XYs{{X: lo, Y: lo}, {X: hi, Y: hi}}, grey, dashed))
			for _, f := range []float64{0.9, 1.1} {
				p.Add(lineOf(plotter.XYs{{X: lo, Y: f * lo}, {X: hi, Y: f * hi}}, grey, []vg.Length{vg.Points(1), vg.Points(2)}))
			}
		}
		both := x // one range on both axes: y = x is the diagonal
		both.add(y.lo, y.hi)
		setLog(&p.X, both)
		setLog(&p.Y, both)
		panels = append(panels, p)
	}
	var rows [][]*plot.Plot
	for i := 0; i < len(panels); i += pvmColumns {
		rows = append(rows, panels[i:min(i+pvmColumns, len(panels))])
	}
	cols := min(max(1, len(panels)), pvmColumns)
	fig.resize(vg.Length(cols)*6*vg.Centimeter, vg.Length(max(1, len(rows)))*6*vg.Centimeter)
	return fig.grid(rows)
}

// CDFMaxPct bounds the error CDF's axis: |ε| beyond it is off the right edge.
const CDFMaxPct = 100

// ErrorCDF draws the distribution of |ε| of every model on one panel, as cumulative shares:
// at x, the share of transfers predicted within x%. A vertical line marks ±10% (the papers'
// band); the legend gives each model's share within it. noise, when given, is the |ε| a
// perfect predictor of each transfer's expected time would make given the repetitions'
// spread (the noise limit), drawn as a black dotted curve; nil draws none. The |ε| axis runs
// to the largest 90th percentile of the models (20% at least, CDFMaxPct at most). NaN and
// infinite errors are left out, with a warning.
func ErrorCDF(name string, models []string, errs [][]float64, noise []float64) (fig *Figure) {
	defer recoverFigure(name, &fig)
	fig = newFigure(name, "Cumulative distribution of |ε| per model", 15*vg.Centimeter, 10*vg.Centimeter)
	p := newPlot("share of transfers predicted within |ε|", "|ε| (%)", "transfers (%)")
	curve := func(e []float64, what string) (plotter.XYs, float64, float64) {
		var abs []float64
		for _, v := range e {
			if a := 100 * math.Abs(v); onLin(a) {
				abs = append(abs, a)
			}
		}
		if len(abs) < len(e) {
			fig.warn("%s: %d of %d errors are NaN, infinite or beyond ±1e298 and are left out", what, len(e)-len(abs), len(e))
		}
		if len(abs) == 0 {
			return nil, 0, 0
		}
		sort.Float64s(abs)
		pts := plotter.XYs{{X: 0, Y: 0}}
		within := 0
		for i, a := range abs {
			y := 100 * float64(i+1) / float64(len(abs))
			pts = append(pts, plotter.XY{X: a, Y: 100 * float64(i) / float64(len(abs))}, plotter.XY{X: a, Y: y})
			if a <= 100*validWithin {
				within++
			}
		}
		p90 := abs[min(len(abs)-1, int(math.Ceil(0.9*float64(len(abs))))-1)]
		return pts, p90, 100 * float64(within) / float64(len(abs))
	}
	xmax, drawn := 20.0, 0
	type drawnCurve struct {
		pts    plotter.XYs
		name   string
		within float64
		k      int
	}
	var curves []drawnCurve
	for k, model := range models {
		var e []float64
		if k < len(errs) {
			e = errs[k]
		}
		pts, p90, within := curve(e, label(model))
		if pts == nil {
			continue
		}
		xmax = math.Max(xmax, p90)
		curves = append(curves, drawnCurve{pts, label(model), within, k})
		drawn++
	}
	if drawn == 0 {
		return fig.nothing()
	}
	xmax = math.Min(CDFMaxPct, 10*math.Ceil(xmax/10))
	for _, c := range curves {
		var dashes []vg.Length
		if c.k%2 == 1 { // every other model dashed: curves that coincide stay visible
			dashes = []vg.Length{vg.Points(4), vg.Points(2)}
		}
		l := lineOf(c.pts, palette[c.k%len(palette)], dashes)
		l.Width = vg.Points(1.3)
		p.Add(l)
		p.Legend.Add(fmt.Sprintf("%s: %.0f%% within ±10%%", c.name, c.within), l)
	}
	if pts, _, within := curve(noise, "noise limit"); pts != nil {
		l := lineOf(pts, color.Black, []vg.Length{vg.Points(1), vg.Points(1.5)})
		p.Add(l)
		p.Legend.Add(fmt.Sprintf("noise limit: %.0f%% within ±10%%", within), l)
	}
	band := lineOf(plotter.XYs{{X: 10, Y: 0}, {X: 10, Y: 100}}, color.Gray{Y: 0x60}, dashed)
	p.Add(band)
	p.Legend.Add("|ε| = 10%", band)
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = 0, xmax, 0, 100
	fig.legendBeside(p.Legend, p)
	return fig.single(p)
}

// validWithin is the accuracy band, ±10% (validate.Within; plots does not import validate).
const validWithin = 0.10
