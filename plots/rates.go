package plots

import (
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// RateShare is a calibrated rate with its 95% interval and the nominal rate of the hardware
// that carries it (bits per second).
type RateShare struct {
	Name             string
	Value, Low, High float64
	Nominal          float64
}

// RatesVsNominal draws every calibrated rate as a share of its nominal rate (percent), one
// line each with its interval, and a dashed line at 100%: how much of the hardware the
// transfers get. A rate without a positive nominal or a finite value is left out, and an
// interval bound that is infinite or on the wrong side of its value is not drawn, with a
// warning.
func RatesVsNominal(name string, rates []RateShare) (fig *Figure) {
	defer recoverFigure(name, &fig)
	fig = newFigure(name, "Calibrated rates as a share of nominal", 16*vg.Centimeter, 0)
	p := newPlot("calibrated rate / nominal rate", "share of nominal (%)", "")
	var pts plotter.XYs
	var errs plotter.XErrors
	var ticks []plot.Tick
	var x span
	noBar := 0
	for _, r := range rates {
		v := 100 * r.Value / r.Nominal
		if !(r.Nominal > 0) || !onLin(v) {
			fig.warn("%s: no finite share of a positive nominal rate; left out", label(r.Name))
			continue
		}
		lo, hi := v-100*r.Low/r.Nominal, 100*r.High/r.Nominal-v
		if !(lo >= 0) || !onLin(lo) {
			lo = 0
			noBar++
		}
		if !(hi >= 0) || !onLin(hi) {
			hi = 0
			noBar++
		}
		y := -float64(len(pts)) // the first rate at the top
		pts = append(pts, plotter.XY{X: v, Y: y})
		errs = append(errs, struct{ Low, High float64 }{lo, hi})
		ticks = append(ticks, plot.Tick{Value: y, Label: fmt.Sprintf("%s (%.3g%%)", label(r.Name), v)})
		x.add(v-lo, v+hi)
	}
	if noBar > 0 {
		fig.warn("%d interval bounds are infinite or on the wrong side of their value and are not drawn", noBar)
	}
	if len(pts) == 0 {
		return fig.nothing()
	}
	p.Add(scatter(pts, palette[0], vg.Points(2.5)))
	bars, err := plotter.NewXErrorBars(struct {
		plotter.XYs
		plotter.XErrors
	}{pts, errs})
	if err != nil {
		panic(err)
	}
	bars.Color = palette[0]
	p.Add(bars)
	n := float64(len(pts))
	p.Add(lineOf(plotter.XYs{{X: 100, Y: 0.5}, {X: 100, Y: -n + 0.5}}, color.Gray{Y: 0x60}, dashed))
	x.add(0, 105)
	setLin(&p.X, x)
	p.X.Max = math.Max(p.X.Max, 110)
	p.Y.Min, p.Y.Max = -n+0.5, 0.5
	p.Y.Tick.Marker = plot.ConstantTicks(ticks)
	p.Y.Tick.Label.Font.Size = vg.Points(8)
	fig.resize(16*vg.Centimeter, vg.Length(3+len(pts))*8*vg.Millimeter)
	return fig.single(p)
}
