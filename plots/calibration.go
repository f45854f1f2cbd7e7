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

// fitPoints is the number of points that draw a fitted curve on a log axis.
const fitPoints = 64

// logSpaced returns n values from lo to hi (both positive) evenly spaced on a log scale.
func logSpaced(lo, hi float64, n int) []float64 {
	out := make([]float64, n)
	a, b := math.Log(lo), math.Log(hi)
	for i := range out {
		out[i] = math.Exp(a + (b-a)*float64(i)/float64(n-1))
	}
	out[0], out[n-1] = lo, hi
	return out
}

// HockneyFit draws each class's measured times against message size (log–log) with the fitted
// line α + β·m, and below it the relative residuals (T − T̂)/T̂ in percent. Points a log axis
// cannot show (a size or time that is zero, negative, NaN, infinite or beyond 1e±300), the
// part of the fitted line that is not positive (a negative α) and residuals where the fit is
// not positive are left out, with a warning.
func HockneyFit(name string, series []HockneySeries) (fig *Figure) {
	defer recoverFigure(name, &fig)
	fig = newFigure(name, "Hockney fit with residuals", 16*vg.Centimeter, 16*vg.Centimeter)
	top := newPlot("Hockney fit", "message size (B)", "time (s)")
	bottom := newPlot("residuals", "message size (B)", "(T − T̂)/T̂ (%)")
	top.Legend.Top = false
	var xs, ys, rs span
	drawn := 0
	for k, s := range series {
		class := label(s.Class)
		n := min(len(s.Sizes), len(s.Times))
		if len(s.Sizes) != len(s.Times) {
			fig.warn("%s: %d sizes but %d times; the extra ones are left out", class, len(s.Sizes), len(s.Times))
		}
		var pts, res plotter.XYs
		var x span
		noRes := 0
		for i := 0; i < n; i++ {
			m, t := s.Sizes[i], s.Times[i]
			if !onLog(m) || !onLog(t) {
				continue
			}
			pts = append(pts, plotter.XY{X: m, Y: t})
			x.add(m)
			ys.add(t)
			pred := s.Alpha + s.Beta*m
			if r := 100 * (t - pred) / pred; pred > 0 && onLin(r) {
				res = append(res, plotter.XY{X: m, Y: r})
				rs.add(r)
			} else {
				noRes++
			}
		}
		if skipped := n - len(pts); skipped > 0 {
			fig.warn("%s: %d of %d points have a size or time that a log axis cannot show (not positive, not finite, or beyond 1e±300) and are left out", class, skipped, n)
		}
		if noRes > 0 {
			fig.warn("%s: %d residuals are left out: the fit α + β·m is not positive there, or the residual is not finite", class, noRes)
		}
		if len(pts) == 0 {
			fig.warn("%s: no point to draw; the class is left out", class)
			continue
		}
		drawn++
		xs.add(x.lo, x.hi)
		c := palette[k%len(palette)]
		sc, err := plotter.NewScatter(pts)
		if err != nil {
			panic(err)
		}
		sc.GlyphStyle.Color, sc.GlyphStyle.Radius = c, vg.Points(1.5)
		top.Add(sc)
		if len(res) > 0 {
			rsc, err := plotter.NewScatter(res)
			if err != nil {
				panic(err)
			}
			rsc.GlyphStyle.Color, rsc.GlyphStyle.Radius = c, vg.Points(1.5)
			bottom.Add(rsc)
		}
		// The fitted line, where it is positive (a negative α makes it so at small sizes; the
		// log axis cannot show that part).
		var fit plotter.XYs
		if x.hi > x.lo {
			for _, m := range logSpaced(x.lo, x.hi, fitPoints) {
				if y := s.Alpha + s.Beta*m; onLog(y) {
					fit = append(fit, plotter.XY{X: m, Y: y})
					ys.add(y)
				}
			}
		}
		legend := fmt.Sprintf("%s: α = %.3g s, β = %.3g s/B", class, s.Alpha, s.Beta)
		if len(fit) > 1 {
			line, err := plotter.NewLine(fit)
			if err != nil {
				panic(err)
			}
			line.Color = c
			top.Add(line)
			top.Legend.Add(legend, sc, line)
		} else {
			top.Legend.Add(legend, sc)
		}
	}
	if drawn == 0 {
		return fig.nothing()
	}
	setLog(&top.X, xs)
	setLog(&top.Y, ys)
	setLog(&bottom.X, xs)
	setLin(&bottom.Y, rs)
	return fig.grid([][]*plot.Plot{{top}, {bottom}})
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
// the asymmetric max(in, out) predictions over them. NaN, infinite and out-of-range rates are
// left out, with a warning.
func BandwidthVsDegree(name string, points []DegreePoint) (fig *Figure) {
	defer recoverFigure(name, &fig)
	fig = newFigure(name, "Per-flow bandwidth against contention degree", 0, 0)
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
		sort.SliceStable(pts, func(i, j int) bool {
			if pts[i].In != pts[j].In {
				return pts[i].In < pts[j].In
			}
			return pts[i].Out < pts[j].Out
		})
		p := newPlot(e, "pattern (incoming/outgoing transfers)", "per-flow bandwidth (Mbit/s)")
		var meas, fair, asym plotter.XYs
		var ticks []plot.Tick
		var y span
		skipped := 0
		add := func(xy *plotter.XYs, x, bps float64) {
			if v := bps / 1e6; onLin(v) {
				*xy = append(*xy, plotter.XY{X: x, Y: v})
				y.add(v)
			} else {
				skipped++
			}
		}
		every := max(1, (len(pts)+59)/60) // at most 60 labelled patterns
		for i, d := range pts {
			x := float64(i)
			add(&meas, x, d.Measured)
			add(&fair, x, d.Fair)
			add(&asym, x, d.Asym)
			t := plot.Tick{Value: x}
			if i%every == 0 {
				t.Label = fmt.Sprintf("%d/%d", d.In, d.Out)
			}
			ticks = append(ticks, t)
		}
		if skipped > 0 {
			fig.warn("%s: %d rates are NaN, infinite or beyond ±1e300 and are left out", label(e), skipped)
		}
		if !y.ok {
			fig.warn("%s: no rate to draw; the experiment is left out", label(e))
			continue
		}
		p.X.Tick.Marker = plot.ConstantTicks(ticks)
		p.X.Tick.Label.Font.Size = vg.Points(6)
		if len(meas) > 0 {
			ms, err := plotter.NewScatter(meas)
			if err != nil {
				panic(err)
			}
			ms.GlyphStyle.Radius = vg.Points(2)
			p.Add(ms)
			p.Legend.Add("measured", ms)
		}
		for _, l := range []struct {
			xy     plotter.XYs
			name   string
			colour int
			dashed bool
		}{{fair, "fair sharing", 2, true}, {asym, "max(in, out) rule", 1, false}} {
			if len(l.xy) == 0 {
				continue
			}
			line, err := plotter.NewLine(l.xy)
			if err != nil {
				panic(err)
			}
			line.Color = palette[l.colour]
			if l.dashed {
				line.Dashes = []vg.Length{vg.Points(3), vg.Points(2)}
			}
			p.Add(line)
			p.Legend.Add(l.name, line)
		}
		p.Legend.Top = true // rates fall with the degree: the top right is free
		p.X.Min, p.X.Max = -0.5, float64(len(pts))-0.5
		setLin(&p.Y, y)
		row = append(row, p)
	}
	fig.resize(vg.Length(max(1, len(row)))*14*vg.Centimeter, 9*vg.Centimeter)
	return fig.grid([][]*plot.Plot{row})
}

// Sweep is one collective's mean time per message size, with marked sizes.
type Sweep struct {
	Op           string
	Sizes, Times []float64
	Marks        map[string]float64 // label → size (S, M1, M2)
}

// CollectiveSweeps draws scatter and gather time against message size with the detected
// thresholds as vertical lines (Lastovetsky et al. Fig. 1). NaN, infinite and out-of-range
// points and marks are left out, with a warning.
func CollectiveSweeps(name string, sweeps []Sweep) (fig *Figure) {
	defer recoverFigure(name, &fig)
	fig = newFigure(name, "Scatter and gather against message size", 0, 0)
	var row []*plot.Plot
	for k, s := range sweeps {
		op := label(s.Op)
		n := min(len(s.Sizes), len(s.Times))
		if len(s.Sizes) != len(s.Times) {
			fig.warn("%s: %d sizes but %d times; the extra ones are left out", op, len(s.Sizes), len(s.Times))
		}
		var pts plotter.XYs
		var x, y span
		for i := 0; i < n; i++ {
			if m, t := s.Sizes[i], s.Times[i]; onLin(m) && onLin(t) {
				pts = append(pts, plotter.XY{X: m, Y: t})
				x.add(m)
				y.add(t)
			}
		}
		if skipped := n - len(pts); skipped > 0 {
			fig.warn("%s: %d of %d points are NaN, infinite or beyond ±1e300 and are left out", op, skipped, n)
		}
		if len(pts) == 0 {
			fig.warn("%s: no point to draw; the sweep is left out", op)
			continue
		}
		p := newPlot(s.Op, "message size (B)", "time (s)")
		l, sc, err := plotter.NewLinePoints(pts)
		if err != nil {
			panic(err)
		}
		l.Color, sc.GlyphStyle.Radius, sc.GlyphStyle.Color = palette[k%len(palette)], vg.Points(1.2), palette[k%len(palette)]
		p.Add(l, sc)
		labels := make([]string, 0, len(s.Marks))
		for lab := range s.Marks {
			labels = append(labels, lab)
		}
		sort.Strings(labels)
		y.add(0) // the marks rise from 0
		for j, lab := range labels {
			mx := s.Marks[lab]
			if !onLin(mx) {
				fig.warn("%s: mark %s at %g B cannot be drawn and is left out", op, label(lab), mx)
				continue
			}
			x.add(mx)
			v, err := plotter.NewLine(plotter.XYs{{X: mx, Y: 0}, {X: mx, Y: y.hi}})
			if err != nil {
				panic(err)
			}
			v.Dashes, v.Color = []vg.Length{vg.Points(3), vg.Points(2)}, palette[(j+3)%len(palette)]
			p.Add(v)
			p.Legend.Add(fmt.Sprintf("%s = %.0f B", label(lab), mx), v)
		}
		p.Legend.Top, p.Legend.Left = true, true
		setLin(&p.X, x)
		setLin(&p.Y, y)
		row = append(row, p)
	}
	fig.resize(vg.Length(max(1, len(row)))*12*vg.Centimeter, 9*vg.Centimeter)
	return fig.grid([][]*plot.Plot{row})
}

// LSeries is L(m) measured for one pair count, with the fitted surface's line for it.
type LSeries struct {
	Pairs      int64
	Sizes, L   []float64
	A, B, C, D float64 // the fitted surface
}

// LLines draws L(m) per pair count (points) with the fitted bilinear surface
// a + b·m + c·P + d·m·P (lines). Points a log axis cannot show are left out, with a warning;
// so is the part of a fitted line that is not positive.
func LLines(name string, series []LSeries) (fig *Figure) {
	defer recoverFigure(name, &fig)
	fig = newFigure(name, "L(m) per pair count with the fitted surface", 16*vg.Centimeter, 11*vg.Centimeter)
	p := newPlot("L(m, P)", "message size (B)", "L (s)")
	p.Legend.Top, p.Legend.Left = true, true
	var xs, ys span
	drawn := 0
	for k, s := range series {
		n := min(len(s.Sizes), len(s.L))
		if len(s.Sizes) != len(s.L) {
			fig.warn("P = %d: %d sizes but %d values of L; the extra ones are left out", s.Pairs, len(s.Sizes), len(s.L))
		}
		var pts, fit plotter.XYs
		for i := 0; i < n; i++ {
			m, l := s.Sizes[i], s.L[i]
			if !onLog(m) || !onLog(l) {
				continue
			}
			pts = append(pts, plotter.XY{X: m, Y: l})
			xs.add(m)
			ys.add(l)
			P := float64(s.Pairs)
			if v := s.A + s.B*m + s.C*P + s.D*m*P; onLog(v) {
				fit = append(fit, plotter.XY{X: m, Y: v})
				ys.add(v)
			}
		}
		if skipped := n - len(pts); skipped > 0 {
			fig.warn("P = %d: %d of %d points have a size or L that a log axis cannot show (not positive, not finite, or beyond 1e±300) and are left out", s.Pairs, skipped, n)
		}
		if len(pts) == 0 {
			continue
		}
		drawn++
		c := palette[k%len(palette)]
		sc, err := plotter.NewScatter(pts)
		if err != nil {
			panic(err)
		}
		sc.GlyphStyle.Color = c
		p.Add(sc)
		if len(fit) > 1 {
			l, err := plotter.NewLine(fit)
			if err != nil {
				panic(err)
			}
			l.Color = c
			p.Add(l)
			p.Legend.Add(fmt.Sprintf("P = %d", s.Pairs), sc, l)
		} else {
			p.Legend.Add(fmt.Sprintf("P = %d", s.Pairs), sc)
		}
	}
	if drawn == 0 {
		return fig.nothing()
	}
	setLog(&p.X, xs)
	setLog(&p.Y, ys)
	return fig.single(p)
}

// NodeParam is one node's estimate with its interval.
type NodeParam struct {
	Node             string
	Value, Low, High float64
}

// LMONodes draws each node's C_i (µs) and t_i (ns/B) with their 95% intervals. A value that
// is NaN, infinite or beyond ±1e300 is left out, and so is an interval bound that is
// infinite or on the wrong side of its value, with a warning.
func LMONodes(name string, c, t []NodeParam) (fig *Figure) {
	defer recoverFigure(name, &fig)
	fig = newFigure(name, "LMO per-node parameters with 95% intervals",
		max(12*vg.Centimeter, vg.Length(max(len(c), len(t)))*vg.Centimeter), 14*vg.Centimeter)
	panel := func(title, unit string, vals []NodeParam, scale float64) *plot.Plot {
		var pts plotter.XYs
		var errs plotter.YErrors
		var ticks []plot.Tick
		var y span
		skipped, noBar := 0, 0
		every := max(1, (len(vals)+99)/100) // at most 100 labelled nodes
		for i, v := range vals {
			t := plot.Tick{Value: float64(i)}
			if i%every == 0 {
				t.Label = label(v.Node)
			}
			ticks = append(ticks, t)
			val := v.Value * scale
			if !onLin(val) {
				skipped++
				continue
			}
			lo, hi := (v.Value-v.Low)*scale, (v.High-v.Value)*scale
			if !(lo >= 0) || !onLin(val-lo) {
				lo = 0
				noBar++
			}
			if !(hi >= 0) || !onLin(val+hi) {
				hi = 0
				noBar++
			}
			pts = append(pts, plotter.XY{X: float64(i), Y: val})
			errs = append(errs, struct{ Low, High float64 }{lo, hi})
			y.add(val-lo, val+hi)
		}
		if skipped > 0 {
			fig.warn("%s: %d of %d nodes have a value that is NaN, infinite or beyond ±1e300 and are left out", title, skipped, len(vals))
		}
		if noBar > 0 {
			fig.warn("%s: %d interval bounds are infinite, NaN or on the wrong side of their value and are not drawn", title, noBar)
		}
		if len(pts) == 0 {
			fig.warn("%s: no node to draw", title)
			return emptyPlot(title, "no value that can be drawn")
		}
		p := newPlot(title, "node", unit)
		sc, err := plotter.NewScatter(pts)
		if err != nil {
			panic(err)
		}
		eb, err := plotter.NewYErrorBars(struct {
			plotter.XYs
			plotter.YErrors
		}{pts, errs})
		if err != nil {
			panic(err)
		}
		p.Add(sc, eb)
		p.X.Tick.Marker = plot.ConstantTicks(ticks)
		p.X.Tick.Label.Font.Size = vg.Points(6)
		p.X.Min, p.X.Max = -0.5, float64(len(vals))-0.5
		setLin(&p.Y, y)
		return p
	}
	if len(c) == 0 && len(t) == 0 {
		return fig.nothing()
	}
	return fig.grid([][]*plot.Plot{
		{panel("fixed delay C", "C (µs)", c, 1e6)}, {panel("per-byte delay t", "t (ns/B)", t, 1e9)}})
}

// OverlaidHistograms draws the error distributions of several runs for one model on one
// panel, as step outlines, for comparisons. NaN and infinite errors are left out, with a
// warning.
func OverlaidHistograms(name, model string, runs []string, errs [][]float64) (fig *Figure) {
	defer recoverFigure(name, &fig)
	fig = newFigure(name, label(model)+": error distributions of the runs compared", 14*vg.Centimeter, 9*vg.Centimeter)
	p := newPlot(model+": errors by run", "ε (%)", "transfers (%)")
	ymax, drawn := 0.0, 0
	for k, e := range errs {
		run := fmt.Sprintf("run %d", k+1)
		if k < len(runs) {
			run = label(runs[k])
		}
		counts := make([]float64, 2*histRange/HistBinPct)
		n := 0
		for _, v := range e {
			if i, ok := histBin(v); ok {
				counts[i]++
				n++
			}
		}
		if n < len(e) {
			fig.warn("%s: %d of %d errors are NaN or infinite and are left out", run, len(e)-n, len(e))
		}
		if n == 0 {
			continue
		}
		drawn++
		var pts plotter.XYs
		for i, c := range counts {
			c *= 100 / float64(n)
			ymax = math.Max(ymax, c)
			x := float64(-histRange + i*HistBinPct)
			pts = append(pts, plotter.XY{X: x, Y: c}, plotter.XY{X: x + HistBinPct, Y: c})
		}
		l, err := plotter.NewLine(pts)
		if err != nil {
			panic(err)
		}
		l.Color, l.Width = palette[k%len(palette)], vg.Points(1.5)
		p.Add(l)
		p.Legend.Add(run, l)
	}
	if drawn == 0 {
		return fig.nothing()
	}
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = -histRange, histRange, 0, ymax*1.05
	return fig.single(p)
}
