package plots

import (
	"fmt"
	"math"
	"sort"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// HockneySeries is one path class's sweep and fit.
type HockneySeries struct {
	Class       string
	Sizes       []float64 // bytes
	Times       []float64 // seconds
	Alpha, Beta float64
}

// HockneyFit draws each class's measured times against message size (log–log) with the fitted
// line α + β·m, and below it the relative residuals (T − T̂)/T̂ in percent.
func HockneyFit(name string, series []HockneySeries) *Figure {
	top := newPlot("Hockney fit", "message size (B)", "time (s)")
	top.X.Scale, top.Y.Scale = plot.LogScale{}, plot.LogScale{}
	top.X.Tick.Marker, top.Y.Tick.Marker = plot.LogTicks{Prec: -1}, plot.LogTicks{Prec: -1}
	bottom := newPlot("residuals", "message size (B)", "(T − T̂)/T̂ (%)")
	bottom.X.Scale, bottom.X.Tick.Marker = plot.LogScale{}, plot.LogTicks{Prec: -1}
	top.Legend.Top = false
	for k, s := range series {
		var pts, res plotter.XYs
		lo, hi := math.Inf(1), 0.0
		for i, m := range s.Sizes {
			if m <= 0 || s.Times[i] <= 0 {
				continue
			}
			pred := s.Alpha + s.Beta*m
			pts = append(pts, plotter.XY{X: m, Y: s.Times[i]})
			res = append(res, plotter.XY{X: m, Y: 100 * (s.Times[i] - pred) / pred})
			lo, hi = math.Min(lo, m), math.Max(hi, m)
		}
		if len(pts) == 0 {
			continue
		}
		c := palette[k%len(palette)]
		sc, _ := plotter.NewScatter(pts)
		sc.GlyphStyle.Color, sc.GlyphStyle.Radius = c, vg.Points(1.5)
		// The fitted line, where it is positive (a negative α makes it so at small sizes; the
		// log axis cannot show that part).
		var fit plotter.XYs
		for x := lo; x <= hi*1.0001; x *= 1.25 {
			if y := s.Alpha + s.Beta*x; y > 0 {
				fit = append(fit, plotter.XY{X: x, Y: y})
			}
		}
		rs, _ := plotter.NewScatter(res)
		rs.GlyphStyle.Color, rs.GlyphStyle.Radius = c, vg.Points(1.5)
		top.Add(sc)
		bottom.Add(rs)
		if len(fit) > 1 {
			line, _ := plotter.NewLine(fit)
			line.Color = c
			top.Add(line)
			top.Legend.Add(fmt.Sprintf("%s: α = %.3g s, β = %.3g s/B", s.Class, s.Alpha, s.Beta), sc, line)
		} else {
			top.Legend.Add(fmt.Sprintf("%s: α = %.3g s, β = %.3g s/B", s.Class, s.Alpha, s.Beta), sc)
		}
	}
	return grid(name, "Hockney fit with residuals", [][]*plot.Plot{{top}, {bottom}}, 16*vg.Centimeter, 16*vg.Centimeter)
}

// DegreePoint is the mean per-flow rate measured in one bidirectional pattern, with the rates
// fair sharing and the max(in, out) rule predict (bits per second).
type DegreePoint struct {
	Experiment           string
	In, Out              int
	Measured, Fair, Asym float64
}

// BandwidthVsDegree draws, per experiment (NIC, backbone), the per-flow bandwidth against the
// incoming/outgoing degree (CCPE 2014 Fig. 4): measured points, with the fair full-duplex and
// the asymmetric max(in, out) predictions over them.
func BandwidthVsDegree(name string, points []DegreePoint) *Figure {
	byExp := map[string][]DegreePoint{}
	var exps []string
	for _, p := range points {
		if _, ok := byExp[p.Experiment]; !ok {
			exps = append(exps, p.Experiment)
		}
		byExp[p.Experiment] = append(byExp[p.Experiment], p)
	}
	sort.Strings(exps)
	var row []*plot.Plot
	for _, e := range exps {
		pts := byExp[e]
		sort.Slice(pts, func(i, j int) bool {
			if pts[i].In != pts[j].In {
				return pts[i].In < pts[j].In
			}
			return pts[i].Out < pts[j].Out
		})
		p := newPlot(e, "pattern (incoming/outgoing transfers)", "per-flow bandwidth (Mbit/s)")
		var meas, fair, asym plotter.XYs
		var ticks []plot.Tick
		for i, d := range pts {
			x := float64(i)
			meas = append(meas, plotter.XY{X: x, Y: d.Measured / 1e6})
			fair = append(fair, plotter.XY{X: x, Y: d.Fair / 1e6})
			asym = append(asym, plotter.XY{X: x, Y: d.Asym / 1e6})
			ticks = append(ticks, plot.Tick{Value: x, Label: fmt.Sprintf("%d/%d", d.In, d.Out)})
		}
		p.X.Tick.Marker = plot.ConstantTicks(ticks)
		p.X.Tick.Label.Font.Size = vg.Points(6)
		ms, _ := plotter.NewScatter(meas)
		ms.GlyphStyle.Radius = vg.Points(2)
		fl, _ := plotter.NewLine(fair)
		fl.Color, fl.Dashes = palette[2], []vg.Length{vg.Points(3), vg.Points(2)}
		al, _ := plotter.NewLine(asym)
		al.Color = palette[1]
		p.Add(ms, fl, al)
		p.Legend.Add("measured", ms)
		p.Legend.Add("fair sharing", fl)
		p.Legend.Add("max(in, out) rule", al)
		p.Legend.Top = true // rates fall with the degree: the top right is free
		row = append(row, p)
	}
	return grid(name, "Per-flow bandwidth against contention degree", [][]*plot.Plot{row},
		vg.Length(max(1, len(row)))*14*vg.Centimeter, 9*vg.Centimeter)
}

// Sweep is one collective's mean time per message size, with marked sizes.
type Sweep struct {
	Op           string
	Sizes, Times []float64
	Marks        map[string]float64 // label → size (S, M1, M2)
}

// CollectiveSweeps draws scatter and gather time against message size with the detected
// thresholds as vertical lines (Lastovetsky et al. Fig. 1).
func CollectiveSweeps(name string, sweeps []Sweep) *Figure {
	var row []*plot.Plot
	for k, s := range sweeps {
		p := newPlot(s.Op, "message size (B)", "time (s)")
		var pts plotter.XYs
		ymax := 0.0
		for i, m := range s.Sizes {
			pts = append(pts, plotter.XY{X: m, Y: s.Times[i]})
			ymax = math.Max(ymax, s.Times[i])
		}
		l, sc, _ := plotter.NewLinePoints(pts)
		l.Color, sc.GlyphStyle.Radius, sc.GlyphStyle.Color = palette[k%len(palette)], vg.Points(1.2), palette[k%len(palette)]
		p.Add(l, sc)
		labels := make([]string, 0, len(s.Marks))
		for lab := range s.Marks {
			labels = append(labels, lab)
		}
		sort.Strings(labels)
		for j, lab := range labels {
			x := s.Marks[lab]
			v, _ := plotter.NewLine(plotter.XYs{{X: x, Y: 0}, {X: x, Y: ymax}})
			v.Dashes, v.Color = []vg.Length{vg.Points(3), vg.Points(2)}, palette[(j+3)%len(palette)]
			p.Add(v)
			p.Legend.Add(fmt.Sprintf("%s = %.0f B", lab, x), v)
		}
		p.Legend.Top, p.Legend.Left = true, true
		row = append(row, p)
	}
	return grid(name, "Scatter and gather against message size", [][]*plot.Plot{row},
		vg.Length(max(1, len(row)))*12*vg.Centimeter, 9*vg.Centimeter)
}

// LSeries is L(m) measured for one pair count, with the fitted surface's line for it.
type LSeries struct {
	Pairs      int64
	Sizes, L   []float64
	A, B, C, D float64 // the fitted surface
}

// LLines draws L(m) per pair count (points) with the fitted bilinear surface
// a + b·m + c·P + d·m·P (lines).
func LLines(name string, series []LSeries) *Figure {
	p := newPlot("L(m, P)", "message size (B)", "L (s)")
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.X.Tick.Marker, p.Y.Tick.Marker = plot.LogTicks{Prec: -1}, plot.LogTicks{Prec: -1}
	p.Legend.Top, p.Legend.Left = true, true
	for k, s := range series {
		var pts, fit plotter.XYs
		for i, m := range s.Sizes {
			if m > 0 && s.L[i] > 0 {
				pts = append(pts, plotter.XY{X: m, Y: s.L[i]})
				if v := s.A + s.B*m + s.C*float64(s.Pairs) + s.D*m*float64(s.Pairs); v > 0 {
					fit = append(fit, plotter.XY{X: m, Y: v})
				}
			}
		}
		if len(pts) == 0 {
			continue
		}
		c := palette[k%len(palette)]
		sc, _ := plotter.NewScatter(pts)
		sc.GlyphStyle.Color = c
		p.Add(sc)
		if len(fit) > 1 {
			l, _ := plotter.NewLine(fit)
			l.Color = c
			p.Add(l)
			p.Legend.Add(fmt.Sprintf("P = %d", s.Pairs), sc, l)
		}
	}
	return single(name, "L(m) per pair count with the fitted surface", p, 16*vg.Centimeter, 11*vg.Centimeter)
}

// NodeParam is one node's estimate with its interval.
type NodeParam struct {
	Node             string
	Value, Low, High float64
}

// LMONodes draws each node's C_i (µs) and t_i (ns/B) with their 95% intervals.
func LMONodes(name string, c, t []NodeParam) *Figure {
	panel := func(title, unit string, vals []NodeParam, scale float64) *plot.Plot {
		p := newPlot(title, "node", unit)
		var pts plotter.XYs
		var errs plotter.YErrors
		var ticks []plot.Tick
		for i, v := range vals {
			pts = append(pts, plotter.XY{X: float64(i), Y: v.Value * scale})
			lo, hi := (v.Value-v.Low)*scale, (v.High-v.Value)*scale
			if math.IsInf(lo, 0) || math.IsNaN(lo) {
				lo = 0
			}
			if math.IsInf(hi, 0) || math.IsNaN(hi) {
				hi = 0
			}
			errs = append(errs, struct{ Low, High float64 }{lo, hi})
			ticks = append(ticks, plot.Tick{Value: float64(i), Label: v.Node})
		}
		sc, _ := plotter.NewScatter(pts)
		eb, _ := plotter.NewYErrorBars(struct {
			plotter.XYs
			plotter.YErrors
		}{pts, errs})
		p.Add(sc, eb)
		p.X.Tick.Marker = plot.ConstantTicks(ticks)
		p.X.Tick.Label.Font.Size = vg.Points(6)
		p.X.Min, p.X.Max = -0.5, float64(len(vals))-0.5
		return p
	}
	return grid(name, "LMO per-node parameters with 95% intervals", [][]*plot.Plot{
		{panel("fixed delay C", "C (µs)", c, 1e6)}, {panel("per-byte delay t", "t (ns/B)", t, 1e9)}},
		max(12*vg.Centimeter, vg.Length(len(c))*vg.Centimeter), 14*vg.Centimeter)
}

// OverlaidHistograms draws the error distributions of several runs for one model on one
// panel, as step outlines, for comparisons.
func OverlaidHistograms(name, model string, runs []string, errs [][]float64) *Figure {
	p := newPlot(model+": errors by run", "ε (%)", "transfers (%)")
	for k, e := range errs {
		if len(e) == 0 {
			continue
		}
		counts := make([]float64, 2*histRange/HistBinPct)
		for _, v := range e {
			pct := math.Max(-histRange, math.Min(histRange-1e-9, 100*v))
			counts[int(math.Floor((pct+histRange)/HistBinPct))] += 100 / float64(len(e))
		}
		var pts plotter.XYs
		for i, c := range counts {
			x := float64(-histRange + i*HistBinPct)
			pts = append(pts, plotter.XY{X: x, Y: c}, plotter.XY{X: x + HistBinPct, Y: c})
		}
		l, _ := plotter.NewLine(pts)
		l.Color, l.Width = palette[k%len(palette)], vg.Points(1.5)
		p.Add(l)
		p.Legend.Add(runs[k], l)
	}
	p.X.Min, p.X.Max = -histRange, histRange
	return single(name, model+": error distributions of the runs compared", p, 14*vg.Centimeter, 9*vg.Centimeter)
}
