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

// ErrorHistograms draws the papers' error histograms (CCPE 2014 Fig. 6 and 7): one panel per
// model (rows) and setting (columns) of the signed errors ε in percent, bins of 5%, the ±10%
// band marked by dashed lines and the share within it in the panel title. errs[r][c] holds
// the errors (fractions) of model rows[r] on setting cols[c]; an empty panel is left blank.
func ErrorHistograms(name string, rows, cols []string, errs [][][]float64) *Figure {
	plots := make([][]*plot.Plot, len(rows))
	ymax := 0.0
	for r := range rows {
		plots[r] = make([]*plot.Plot, len(cols))
		for c := range cols {
			e := errs[r][c]
			if len(e) == 0 {
				continue
			}
			within := 0
			bins := make([]plotter.HistogramBin, 2*histRange/HistBinPct)
			for i := range bins {
				bins[i].Min = float64(-histRange + i*HistBinPct)
				bins[i].Max = bins[i].Min + HistBinPct
			}
			for _, v := range e {
				pct := 100 * v
				if math.Abs(pct) <= 10 {
					within++
				}
				i := int(math.Floor((math.Max(-histRange, math.Min(histRange-1e-9, pct)) + histRange) / HistBinPct))
				bins[i].Weight += 100 / float64(len(e)) // percent of the transfers
			}
			for _, b := range bins {
				ymax = math.Max(ymax, b.Weight)
			}
			p := newPlot(fmt.Sprintf("%s, %s: %.0f%% within ±10%%", rows[r], cols[c], 100*float64(within)/float64(len(e))),
				"ε (%)", "transfers (%)")
			p.Title.TextStyle.Font.Size = vg.Points(7)
			h, _ := plotter.NewHist(plotter.Values{0}, 1)
			h.Bins, h.Width = bins, HistBinPct
			h.FillColor = palette[r%len(palette)]
			p.Add(h)
			plots[r][c] = p
		}
	}
	for r := range plots {
		for _, p := range plots[r] {
			if p == nil {
				continue
			}
			p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = -histRange, histRange, 0, ymax*1.05
			for _, x := range []float64{-10, 10} {
				l, _ := plotter.NewLine(plotter.XYs{{X: x, Y: 0}, {X: x, Y: ymax * 1.05}})
				l.Dashes = []vg.Length{vg.Points(3), vg.Points(2)}
				p.Add(l)
			}
		}
	}
	w := vg.Length(len(cols)) * 5 * vg.Centimeter
	h := vg.Length(len(rows)) * 4 * vg.Centimeter
	return grid(name, "Prediction errors per setting and model", plots, max(w, 10*vg.Centimeter), max(h, 6*vg.Centimeter))
}

// PredictedVsMeasured draws each model's predicted against measured times (log–log) with the
// line y = x: one panel per model.
func PredictedVsMeasured(name string, models []string, measured []float64, predicted [][]float64) *Figure {
	var row []*plot.Plot
	for m, model := range models {
		p := newPlot(model, "measured time (s)", "predicted time (s)")
		p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
		p.X.Tick.Marker, p.Y.Tick.Marker = plot.LogTicks{Prec: -1}, plot.LogTicks{Prec: -1}
		pts := make(plotter.XYs, 0, len(measured))
		lo, hi := math.Inf(1), 0.0
		for i, v := range measured {
			if v > 0 && predicted[m][i] > 0 {
				pts = append(pts, plotter.XY{X: v, Y: predicted[m][i]})
				lo, hi = math.Min(lo, math.Min(v, predicted[m][i])), math.Max(hi, math.Max(v, predicted[m][i]))
			}
		}
		if len(pts) == 0 {
			continue
		}
		s, _ := plotter.NewScatter(pts)
		s.GlyphStyle.Color = palette[m%len(palette)]
		s.GlyphStyle.Radius = vg.Points(1.2)
		line, _ := plotter.NewLine(plotter.XYs{{X: lo, Y: lo}, {X: hi, Y: hi}})
		line.Dashes = []vg.Length{vg.Points(3), vg.Points(2)}
		p.Add(s, line)
		row = append(row, p)
	}
	return grid(name, "Predicted against measured completion times", [][]*plot.Plot{row},
		vg.Length(max(1, len(row)))*5*vg.Centimeter, 6*vg.Centimeter)
}
