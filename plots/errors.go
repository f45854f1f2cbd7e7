package plots

import (
	"fmt"
	"math"

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
// band marked by dashed lines and the share within it in the panel title. errs[r][c] holds
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
			p := newPlot(fmt.Sprintf("%s, %s: %.0f%% within ±10%%", label(rows[r]), label(cols[c]), 100*float64(within)/float64(n)),
				"ε (%)", "transfers (%)")
			p.Title.TextStyle.Font.Size = vg.Points(7)
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

// PredictedVsMeasured draws each model's predicted against measured times (log–log) with the
// line y = x: one panel per model. A pair of times that a log axis cannot show (zero,
// negative, NaN, infinite, beyond 1e±300) is left out, with a warning.
func PredictedVsMeasured(name string, models []string, measured []float64, predicted [][]float64) (fig *Figure) {
	defer recoverFigure(name, &fig)
	fig = newFigure(name, "Predicted against measured completion times", 0, 0)
	var row []*plot.Plot
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
		for i := 0; i < n; i++ {
			if v, p := measured[i], pred[i]; onLog(v) && onLog(p) {
				pts = append(pts, plotter.XY{X: v, Y: p})
				x.add(v)
				y.add(p)
			}
		}
		if skipped := n - len(pts); skipped > 0 {
			fig.warn("%s: %d of %d transfers have a measured or predicted time that a log axis cannot show (not positive, not finite, or beyond 1e±300) and are left out", label(model), skipped, n)
		}
		if len(pts) == 0 {
			continue
		}
		p := newPlot(model, "measured time (s)", "predicted time (s)")
		s, err := plotter.NewScatter(pts)
		if err != nil {
			panic(err)
		}
		s.GlyphStyle.Color = palette[m%len(palette)]
		s.GlyphStyle.Radius = vg.Points(1.2)
		p.Add(s)
		lo, hi := math.Min(x.lo, y.lo), math.Max(x.hi, y.hi)
		if hi > lo {
			line, err := plotter.NewLine(plotter.XYs{{X: lo, Y: lo}, {X: hi, Y: hi}})
			if err != nil {
				panic(err)
			}
			line.Dashes = []vg.Length{vg.Points(3), vg.Points(2)}
			p.Add(line)
		}
		setLog(&p.X, x)
		setLog(&p.Y, y)
		row = append(row, p)
	}
	fig.resize(vg.Length(max(1, len(row)))*5*vg.Centimeter, 6*vg.Centimeter)
	return fig.grid([][]*plot.Plot{row})
}
