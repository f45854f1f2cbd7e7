package plots

import (
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// TrendPoint is one run's estimate of a parameter with its 95% interval; Missing when the run
// has none, Drift when the comparison flagged it in that run.
type TrendPoint struct {
	Value, Low, High float64
	Missing, Drift   bool
}

// TrendSeries is one parameter over the runs, in a display unit.
type TrendSeries struct {
	Name, Unit string
	Points     []TrendPoint
}

// MaxTrendPanels bounds the panels of a parameter trend figure: a family with more parameters
// (an LMO fit's links) is drawn as the relative change of each from the first run, all on one
// panel.
const MaxTrendPanels = 24

// trendColumns is the number of panels per row of a trend figure.
const trendColumns = 3

// drifted is the colour of what the comparison flagged.
var drifted = color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}

// runAxis labels an axis with the runs (their names, or their numbers when the names are
// long or repeat) and marks the runs flagged as drift by a dashed red line.
func runAxis(p *plot.Plot, runs []string, flagged []bool, lo, hi float64) {
	names := map[string]bool{}
	short := true
	for _, r := range runs {
		short = short && len([]rune(r)) <= 12 && !names[r]
		names[r] = true
	}
	var ticks []plot.Tick
	for k, r := range runs {
		t := plot.Tick{Value: float64(k + 1), Label: fmt.Sprint(k + 1)}
		if short {
			t.Label = label(r)
		}
		ticks = append(ticks, t)
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	p.X.Tick.Label.Font.Size = vg.Points(7)
	p.X.Min, p.X.Max = 0.5, float64(len(runs))+0.5
	for k, f := range flagged {
		if f && hi > lo {
			p.Add(lineOf(plotter.XYs{{X: float64(k + 1), Y: lo}, {X: float64(k + 1), Y: hi}}, drifted, dashed))
		}
	}
}

// ParamTrends draws parameters over runs (nightly calibrations), one panel each, three to a
// row: each run's estimate with its 95% interval, red where the comparison flagged the
// parameter, and a dashed red line at every run flagged as drift. A family of more than
// MaxTrendPanels parameters is drawn on one panel as each parameter's change from the first
// run, in percent. Values that are not finite are left out, and so are interval bounds that
// are infinite, with a warning.
func ParamTrends(name, title string, runs []string, flagged []bool, series []TrendSeries) (fig *Figure) {
	defer recoverFigure(name, &fig)
	fig = newFigure(name, title, 0, 0)
	if len(series) > MaxTrendPanels {
		return relativeTrends(fig, runs, flagged, series)
	}
	var panels []*plot.Plot
	noBar := 0
	for _, s := range series {
		yl := "value"
		if s.Unit != "" {
			yl = s.Unit
		}
		p := newPlot(s.Name, "run", yl)
		var ok, bad plotter.XYs
		var okErr, badErr plotter.YErrors
		var y span
		for k, pt := range s.Points {
			if pt.Missing || !onLin(pt.Value) {
				continue
			}
			lo, hi := pt.Value-pt.Low, pt.High-pt.Value
			if !(lo >= 0) || !onLin(pt.Value-lo) {
				lo = 0
				noBar++
			}
			if !(hi >= 0) || !onLin(pt.Value+hi) {
				hi = 0
				noBar++
			}
			xy, e := plotter.XY{X: float64(k + 1), Y: pt.Value}, struct{ Low, High float64 }{lo, hi}
			if pt.Drift {
				bad, badErr = append(bad, xy), append(badErr, e)
			} else {
				ok, okErr = append(ok, xy), append(okErr, e)
			}
			y.add(pt.Value-lo, pt.Value+hi)
		}
		if !y.ok {
			fig.warn("%s: no finite value in any run", label(s.Name))
			continue
		}
		setLin(&p.Y, y)
		p.Y.Tick.Marker = distinctTicks{}
		pad := 0.08 * (p.Y.Max - p.Y.Min)
		p.Y.Min, p.Y.Max = p.Y.Min-pad, p.Y.Max+pad
		runAxis(p, runs, flagged, p.Y.Min, p.Y.Max)
		for _, g := range []struct {
			xy  plotter.XYs
			err plotter.YErrors
			c   color.Color
		}{{ok, okErr, palette[0]}, {bad, badErr, drifted}} {
			if len(g.xy) == 0 {
				continue
			}
			sc := scatter(g.xy, g.c, vg.Points(2.2))
			sc.GlyphStyle.Shape = draw.CircleGlyph{}
			bars, err := plotter.NewYErrorBars(struct {
				plotter.XYs
				plotter.YErrors
			}{g.xy, g.err})
			if err != nil {
				panic(err)
			}
			bars.Color = g.c
			p.Add(bars, sc)
		}
		panels = append(panels, p)
	}
	if noBar > 0 {
		fig.warn("%d interval bounds are infinite, NaN or on the wrong side of their value and are not drawn", noBar)
	}
	if len(panels) == 0 {
		return fig.nothing()
	}
	var rows [][]*plot.Plot
	for i := 0; i < len(panels); i += trendColumns {
		rows = append(rows, panels[i:min(i+trendColumns, len(panels))])
	}
	fig.resize(vg.Length(min(len(panels), trendColumns))*6.5*vg.Centimeter, vg.Length(len(rows))*5.5*vg.Centimeter)
	return fig.grid(rows)
}

// relativeTrends draws many parameters on one panel as their change from the first run (%),
// grey lines with the flagged points red.
func relativeTrends(fig *Figure, runs []string, flagged []bool, series []TrendSeries) *Figure {
	p := newPlot(fmt.Sprintf("%d parameters: change from run 1", len(series)), "run", "change from run 1 (%)")
	var y span
	var bad plotter.XYs
	for _, s := range series {
		if len(s.Points) == 0 || s.Points[0].Missing || !(math.Abs(s.Points[0].Value) > 0) || !onLin(s.Points[0].Value) {
			continue
		}
		base := s.Points[0].Value
		var line plotter.XYs
		for k, pt := range s.Points {
			v := 100 * (pt.Value - base) / math.Abs(base)
			if pt.Missing || !onLin(v) {
				continue
			}
			xy := plotter.XY{X: float64(k + 1), Y: v}
			line = append(line, xy)
			if pt.Drift {
				bad = append(bad, xy)
			}
			y.add(v)
		}
		if len(line) > 1 {
			p.Add(lineOf(line, color.Gray{Y: 0xa0}, nil))
		}
	}
	if !y.ok {
		return fig.nothing()
	}
	if len(bad) > 0 {
		p.Add(scatter(bad, drifted, vg.Points(2.2)))
	}
	y.add(0)
	setLin(&p.Y, y)
	runAxis(p, runs, flagged, p.Y.Min, p.Y.Max)
	fig.resize(14*vg.Centimeter, 8*vg.Centimeter)
	return fig.single(p)
}

// AccuracyTrends draws each model's held-out accuracy over runs: mean |ε| and the share within
// ±10%, in percent, one line per model (a run that scored nothing with a model is a gap), a
// dashed red line at every run flagged as drift, the legend beside the panels.
func AccuracyTrends(name string, runs []string, flagged []bool, models []string, meanAbs, within [][]*float64) (fig *Figure) {
	defer recoverFigure(name, &fig)
	fig = newFigure(name, "Held-out accuracy per model over the runs", 0, 0)
	panel := func(title, unit string, vals [][]*float64) *plot.Plot {
		p := newPlot(title, "run", unit)
		var y span
		var lines []*plotter.Line
		var scatters []*plotter.Scatter
		for m := range models {
			var pts plotter.XYs
			if m < len(vals) {
				for k, v := range vals[m] {
					if v != nil && onLin(100**v) {
						pts = append(pts, plotter.XY{X: float64(k + 1), Y: 100 * *v})
						y.add(100 * *v)
					}
				}
			}
			c := palette[m%len(palette)]
			var dashes []vg.Length
			if m%2 == 1 {
				dashes = []vg.Length{vg.Points(4), vg.Points(2)}
			}
			var l *plotter.Line
			if len(pts) > 1 {
				l = lineOf(pts, c, dashes)
			}
			lines, scatters = append(lines, l), append(scatters, scatterOrNil(pts, c))
		}
		if !y.ok {
			return nil
		}
		y.add(0)
		setLin(&p.Y, y)
		p.Y.Max *= 1.05
		runAxis(p, runs, flagged, p.Y.Min, p.Y.Max)
		for m, model := range models {
			var th []plot.Thumbnailer
			if lines[m] != nil {
				p.Add(lines[m])
				th = append(th, lines[m])
			}
			if scatters[m] != nil {
				p.Add(scatters[m])
				th = append(th, scatters[m])
			}
			if len(th) > 0 {
				p.Legend.Add(label(model), th...)
			}
		}
		return p
	}
	a := panel("mean |ε|", "mean |ε| (%)", meanAbs)
	b := panel("share within ±10%", "|ε| ≤ 10% (%)", within)
	if a == nil && b == nil {
		return fig.nothing()
	}
	first := a
	if first == nil {
		first = b
	}
	fig.legendBeside(first.Legend, a, b)
	fig.resize(2*9*vg.Centimeter, 7*vg.Centimeter)
	return fig.grid([][]*plot.Plot{{a, b}})
}

// scatterOrNil is a scatter of the points, or nil when there are none.
func scatterOrNil(pts plotter.XYs, c color.Color) *plotter.Scatter {
	if len(pts) == 0 {
		return nil
	}
	return scatter(pts, c, vg.Points(2))
}
