package plots

import (
	"fmt"
	"image/color"
	"math"
	"sort"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// HockneySeries is one path class's sweep and fit.
type HockneySeries struct {
	Class       string
	Sizes       []float64 // bytes
	Times       []float64 // seconds
	Alpha, Beta float64
	// Segments, when set, replace α and β: one line per protocol regime, each from its
	// first size to the next segment's.
	Segments []HockneyPiece
}

// HockneyPiece is T = α + β·m from FromBytes on (until the next piece).
type HockneyPiece struct {
	FromBytes   float64
	Alpha, Beta float64
}

// piece returns the α and β that hold at size m: those of the last segment starting at or
// below m (the first segment also below its start), or the series' own without segments.
func (s HockneySeries) piece(m float64) (alpha, beta float64) {
	if len(s.Segments) == 0 {
		return s.Alpha, s.Beta
	}
	p := s.Segments[0]
	for _, q := range s.Segments[1:] {
		if m >= q.FromBytes {
			p = q
		}
	}
	return p.Alpha, p.Beta
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

// ResidualClip bounds the Hockney figure's residual axis, in percent: residuals beyond it are
// drawn at the edge as triangles and counted in the panel's title. A negative α makes the
// fit tiny at small sizes and the relative residuals huge (thousands of percent), which
// would flatten every other residual to a line at 0.
const ResidualClip = 50

// HockneyFit draws each class's measured times against message size (log–log) with the fitted
// line α + β·m, and below it the relative residuals (T − T̂)/T̂ in percent, clipped to
// ±ResidualClip. The time axis spans the measured times: where the fit leaves it (a negative α
// plunges it at small sizes) the line is cut at the edge. Points a log axis cannot show (a
// size or time that is zero, negative, NaN, infinite or beyond 1e±300), the part of the fitted
// line that is not positive and residuals where the fit is not positive are left out, with a
// warning. The legend is beside the plots.
func HockneyFit(name string, series []HockneySeries) (fig *Figure) {
	defer recoverFigure(name, &fig)
	fig = newFigure(name, "Hockney fit with residuals", 15*vg.Centimeter, 16*vg.Centimeter)
	h := &hockneyFigure{fig: fig, top: newPlot("Hockney fit", "message size (B)", "time (s)")}
	for k, s := range series {
		h.add(k, s)
	}
	if h.drawn == 0 {
		return fig.nothing()
	}
	top, bottom := h.top, h.residualPlot()
	fig.legendBeside(top.Legend, top, bottom)
	setLog(&top.X, h.xs)
	setLog(&top.Y, h.ys)
	setLog(&bottom.X, h.xs)
	h.rs.add(0)
	setLin(&bottom.Y, h.rs)
	if h.nClipped > 0 {
		bottom.Y.Min, bottom.Y.Max = math.Min(bottom.Y.Min, -ResidualClip*1.08), math.Max(bottom.Y.Max, ResidualClip*1.08)
	}
	return fig.grid([][]*plot.Plot{{top}, {bottom}})
}

// hockneyFigure is HockneyFit's figure as it is built class by class: the top panel, the
// spans of its axes and of the residual axis, and each class's residuals for the bottom
// panel.
type hockneyFigure struct {
	fig        *Figure
	top        *plot.Plot
	xs, ys, rs span
	// res and clipped hold, per class, the residuals within ±ResidualClip and those drawn
	// at the edge.
	res, clipped []plotter.XYs
	nClipped     int
	drawn        int // classes with a point to draw
}

// hockneyPoints is what a log axis can show of one class: its points, the span of their
// sizes, its relative residuals (within the clip, and at the edge) and how many residuals
// are left out.
type hockneyPoints struct {
	pts, res, edge plotter.XYs
	x              span
	noRes          int
}

// add draws class k: its points and fitted line in the top panel, with its legend entry,
// and keeps its residuals for the bottom one. What it leaves out is a warning.
func (h *hockneyFigure) add(k int, s HockneySeries) {
	class := label(s.Class)
	n := min(len(s.Sizes), len(s.Times))
	if len(s.Sizes) != len(s.Times) {
		h.fig.warn("%s: %d sizes but %d times; the extra ones are left out", class, len(s.Sizes), len(s.Times))
	}
	p := h.points(s, n)
	if skipped := n - len(p.pts); skipped > 0 {
		h.fig.warn("%s: %d of %d points have a size or time that a log axis cannot show (not positive, not finite, or beyond 1e±300) and are left out", class, skipped, n)
	}
	if p.noRes > 0 {
		h.fig.warn("%s: %d residuals are left out: the fit α + β·m is not positive there, or the residual is not finite", class, p.noRes)
	}
	h.res, h.clipped = append(h.res, p.res), append(h.clipped, p.edge)
	h.nClipped += len(p.edge)
	if len(p.pts) == 0 {
		h.fig.warn("%s: no point to draw; the class is left out", class)
		return
	}
	h.drawn++
	h.xs.add(p.x.lo, p.x.hi)
	c := palette[k%len(palette)]
	sc := scatter(p.pts, c, vg.Points(1.5))
	h.top.Add(sc)
	lines, cutFrom := h.fitLines(s, p.x, c)
	legend := hockneyLegend(class, s, cutFrom)
	if len(lines) > 0 {
		h.top.Legend.Add(legend, sc, lines[0])
	} else {
		h.top.Legend.Add(legend, sc)
	}
}

// points keeps the first n points of s that a log axis can show, with their relative
// residuals (T − T̂)/T̂ in percent, clipped to ±ResidualClip, and widens the time and
// residual spans to them.
func (h *hockneyFigure) points(s HockneySeries, n int) hockneyPoints {
	var p hockneyPoints
	for i := 0; i < n; i++ {
		m, t := s.Sizes[i], s.Times[i]
		if !onLog(m) || !onLog(t) {
			continue
		}
		p.pts = append(p.pts, plotter.XY{X: m, Y: t})
		p.x.add(m)
		h.ys.add(t)
		a, b := s.piece(m)
		pred := a + b*m
		v := 100 * (t - pred) / pred
		switch {
		case !(pred > 0) || !onLin(v):
			p.noRes++
		case math.Abs(v) > ResidualClip:
			p.edge = append(p.edge, plotter.XY{X: m, Y: math.Copysign(ResidualClip, v)})
			h.rs.add(math.Copysign(ResidualClip, v))
		default:
			p.res = append(p.res, plotter.XY{X: m, Y: v})
			h.rs.add(v)
		}
	}
	return p
}

// fitLines draws the fitted line of s over the sizes x spans, one piece per segment, where
// it is positive. A negative α would plunge a piece towards zero at small sizes: it is drawn
// only where the latency takes less than half of β·m, and cutFrom is where the last piece so
// cut starts (0 when none is).
func (h *hockneyFigure) fitLines(s HockneySeries, x span, c color.Color) (lines []*plotter.Line, cutFrom float64) {
	pieces := s.Segments
	if len(pieces) == 0 {
		pieces = []HockneyPiece{{FromBytes: x.lo, Alpha: s.Alpha, Beta: s.Beta}}
	}
	for i, p := range pieces {
		lo, hi := math.Max(x.lo, p.FromBytes), x.hi
		if i == 0 {
			lo = x.lo
		}
		if i+1 < len(pieces) {
			hi = math.Min(hi, pieces[i+1].FromBytes)
		}
		if p.Alpha < 0 && p.Beta > 0 && -2*p.Alpha/p.Beta > lo {
			lo = -2 * p.Alpha / p.Beta
			cutFrom = lo
		}
		if fit := fitCurve(p, lo, hi); len(fit) > 1 {
			line := lineOf(fit, c, nil)
			h.top.Add(line)
			lines = append(lines, line)
		}
	}
	return lines, cutFrom
}

// fitCurve returns the points of α + β·m from lo to hi, log-spaced, that a log axis can show.
func fitCurve(p HockneyPiece, lo, hi float64) plotter.XYs {
	var fit plotter.XYs
	if hi > lo {
		for _, m := range logSpaced(lo, hi, fitPoints) {
			if y := p.Alpha + p.Beta*m; onLog(y) {
				fit = append(fit, plotter.XY{X: m, Y: y})
			}
		}
	}
	return fit
}

// hockneyLegend is a class's legend entry: its α and β, or its number of segments, and
// where a negative α cut its line (cutFrom > 0).
func hockneyLegend(class string, s HockneySeries, cutFrom float64) string {
	legend := fmt.Sprintf("%s: α = %s, β = %s", class, siUnit(s.Alpha, "s"), siUnit(s.Beta, "s/B"))
	if len(s.Segments) > 1 {
		legend = fmt.Sprintf("%s: %d segments (Hockney per protocol regime)", class, len(s.Segments))
	}
	switch {
	case cutFrom > 0 && len(s.Segments) <= 1:
		legend += fmt.Sprintf("\n  (α < 0: line from %.0f B)", cutFrom)
	case cutFrom > 0:
		legend += "\n  (α < 0: a piece is cut where it would plunge)"
	}
	return legend
}

// residualPlot is the bottom panel: each class's residuals in its colour, those beyond the
// clip as triangles at the edge (counted in the title), and a dashed line at 0.
func (h *hockneyFigure) residualPlot() *plot.Plot {
	title := "relative residuals"
	if h.nClipped > 0 {
		title = fmt.Sprintf("relative residuals (%d beyond ±%d%% drawn at the edge as triangles)", h.nClipped, ResidualClip)
	}
	bottom := newPlot(title, "message size (B)", "(T − T̂)/T̂ (%)")
	for k := range h.res {
		c := palette[k%len(palette)]
		if len(h.res[k]) > 0 {
			bottom.Add(scatter(h.res[k], c, vg.Points(1.5)))
		}
		if len(h.clipped[k]) > 0 {
			e := scatter(h.clipped[k], c, vg.Points(2.5))
			e.GlyphStyle.Shape = draw.TriangleGlyph{}
			bottom.Add(e)
		}
	}
	bottom.Add(lineOf(plotter.XYs{{X: h.xs.lo, Y: 0}, {X: h.xs.hi, Y: 0}}, color.Gray{Y: 0x99}, dashed))
	return bottom
}

// siUnit prints a value with an SI prefix on its unit, 4 significant digits: -406.6 µs.
func siUnit(v float64, unit string) string {
	a := math.Abs(v)
	for _, p := range []struct {
		scale  float64
		prefix string
	}{{1, ""}, {1e-3, "m"}, {1e-6, "µ"}, {1e-9, "n"}, {1e-12, "p"}} {
		if a >= p.scale {
			return fmt.Sprintf("%.4g %s%s", v/p.scale, p.prefix, unit)
		}
	}
	return fmt.Sprintf("%.4g %s", v, unit)
}

// dashed is the dash pattern of reference lines.
var dashed = []vg.Length{vg.Points(3), vg.Points(2)}

// scatter is a scatter of points in a colour and size.
func scatter(pts plotter.XYs, c color.Color, radius vg.Length) *plotter.Scatter {
	s, err := plotter.NewScatter(pts)
	if err != nil {
		panic(err)
	}
	s.GlyphStyle.Color, s.GlyphStyle.Radius = c, radius
	return s
}

// lineOf is a line through points in a colour, dashed when dashes are given.
func lineOf(pts plotter.XYs, c color.Color, dashes []vg.Length) *plotter.Line {
	l, err := plotter.NewLine(pts)
	if err != nil {
		panic(err)
	}
	l.Color, l.Dashes = c, dashes
	return l
}

// DegreePoint is the mean per-flow rate measured in one bidirectional pattern, with the rates
// fair sharing and the max(in, out) rule predict (bits per second).
type DegreePoint struct {
	Experiment           string
	In, Out              int
	Measured, Fair, Asym float64
}

// byExperiment groups degree points by experiment (sorted by name), each group ordered by
// (in, out).
func byExperiment(points []DegreePoint) ([]string, map[string][]DegreePoint) {
	groups := map[string][]DegreePoint{}
	var exps []string
	for _, p := range points {
		if _, ok := groups[p.Experiment]; !ok {
			exps = append(exps, p.Experiment)
		}
		groups[p.Experiment] = append(groups[p.Experiment], p)
	}
	sort.Strings(exps)
	for _, e := range exps {
		pts := groups[e]
		sort.SliceStable(pts, func(i, j int) bool {
			if pts[i].In != pts[j].In {
				return pts[i].In < pts[j].In
			}
			return pts[i].Out < pts[j].Out
		})
	}
	return exps, groups
}

// BandwidthVsDegree draws, per experiment (NIC, backbone; one panel each, stacked), the
// per-flow bandwidth against the incoming/outgoing degree (CCPE 2014 Fig. 4): measured points,
// with the fair full-duplex and the asymmetric max(in, out) predictions over them. The rate
// axis starts at 0, so that noise of a few percent looks like a few percent. NaN, infinite and
// out-of-range rates are left out, with a warning. The legend is beside the panels.
func BandwidthVsDegree(name string, points []DegreePoint) (fig *Figure) {
	defer recoverFigure(name, &fig)
	fig = newFigure(name, "Per-flow bandwidth against contention degree", 0, 0)
	exps, groups := byExperiment(points)
	var col [][]*plot.Plot
	var first *plot.Plot
	for _, e := range exps {
		pts := groups[e]
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
			ms := scatter(meas, palette[0], vg.Points(2))
			p.Add(ms)
			p.Legend.Add("measured", ms)
		}
		for _, l := range []struct {
			xy     plotter.XYs
			name   string
			colour int
			dashes []vg.Length
		}{{fair, "fair sharing", 2, dashed}, {asym, "max(in, out) rule", 1, nil}} {
			if len(l.xy) > 0 {
				line := lineOf(l.xy, palette[l.colour], l.dashes)
				p.Add(line)
				p.Legend.Add(l.name, line)
			}
		}
		p.X.Min, p.X.Max = -0.5, float64(len(pts))-0.5
		if y.lo > 0 {
			y.add(0) // rates are compared as ratios: the axis starts at zero
		}
		setLin(&p.Y, y)
		p.Y.Max *= 1.05
		if first == nil {
			first = p
		}
		col = append(col, []*plot.Plot{p})
	}
	if first != nil {
		var clear []*plot.Plot
		for _, r := range col {
			clear = append(clear, r[0])
		}
		fig.legendBeside(first.Legend, clear...)
	}
	fig.resize(14*vg.Centimeter, vg.Length(max(1, len(col)))*8*vg.Centimeter)
	return fig.grid(col)
}

// heatPalette runs from pale yellow to teal, light enough for black labels on every cell.
type heatPalette struct{}

func (heatPalette) Colors() []color.Color {
	lo, hi := color.RGBA{R: 0xff, G: 0xff, B: 0xd9, A: 0xff}, color.RGBA{R: 0x41, G: 0xb6, B: 0xc4, A: 0xff}
	const n = 64
	out := make([]color.Color, n)
	for i := range out {
		f := float64(i) / (n - 1)
		mix := func(a, b uint8) uint8 { return uint8(math.Round(float64(a) + f*(float64(b)-float64(a)))) }
		out[i] = color.RGBA{R: mix(lo.R, hi.R), G: mix(lo.G, hi.G), B: mix(lo.B, hi.B), A: 0xff}
	}
	return out
}

// degreeGrid is the measured rate of each (in, out) cell, Mbit/s; NaN where not measured.
type degreeGrid struct {
	z          [][]float64 // [out-1][in-1]
	cols, rows int
}

func (g degreeGrid) Dims() (c, r int)   { return g.cols, g.rows }
func (g degreeGrid) Z(c, r int) float64 { return g.z[c][r] }
func (g degreeGrid) X(c int) float64    { return float64(c + 1) }
func (g degreeGrid) Y(r int) float64    { return float64(r + 1) }

// maxDegree bounds the heatmap's grid: a pattern with more transfers on a side is left out.
const maxDegree = 64

// BandwidthHeatmap draws, per experiment (one panel each, stacked), the measured per-flow
// bandwidth over (outgoing, incoming) transfers as a heatmap with each cell's rate written in
// it: the asymmetric property reads as cells equal along max(in, out). The colours share one
// scale over the figure. Cells not measured are grey; rates that are NaN, infinite or not
// positive, and degrees beyond 64, are left out with a warning.
func BandwidthHeatmap(name string, points []DegreePoint) (fig *Figure) {
	defer recoverFigure(name, &fig)
	fig = newFigure(name, "Per-flow bandwidth over incoming and outgoing transfers", 0, 0)
	exps, groups := byExperiment(points)
	var z span
	grids := map[string]degreeGrid{}
	for _, e := range exps {
		g := degreeGrid{}
		skipped := 0
		for _, d := range groups[e] {
			if d.In < 1 || d.Out < 1 || d.In > maxDegree || d.Out > maxDegree || !(d.Measured > 0) || !onLin(d.Measured) {
				skipped++
				continue
			}
			g.cols, g.rows = max(g.cols, d.Out), max(g.rows, d.In)
		}
		if skipped > 0 {
			fig.warn("%s: %d patterns have a rate that is not positive or finite, or more than %d transfers on a side, and are left out", label(e), skipped, maxDegree)
		}
		if g.cols == 0 {
			continue
		}
		g.z = make([][]float64, g.cols)
		for c := range g.z {
			g.z[c] = make([]float64, g.rows)
			for r := range g.z[c] {
				g.z[c][r] = math.NaN()
			}
		}
		for _, d := range groups[e] {
			if d.In >= 1 && d.Out >= 1 && d.In <= maxDegree && d.Out <= maxDegree && d.Measured > 0 && onLin(d.Measured) {
				g.z[d.Out-1][d.In-1] = d.Measured / 1e6
				z.add(d.Measured / 1e6)
			}
		}
		grids[e] = g
	}
	var col [][]*plot.Plot
	for _, e := range exps {
		g, ok := grids[e]
		if !ok {
			continue
		}
		p := newPlot(e+": per-flow bandwidth (Mbit/s)", "outgoing transfers", "incoming transfers")
		h := plotter.NewHeatMap(g, heatPalette{})
		h.Min, h.Max = z.lo, z.hi
		if !(z.hi > z.lo) {
			h.Min, h.Max = z.lo*0.99, z.hi*1.01
		}
		h.NaN = color.Gray{Y: 0xdd}
		p.Add(h)
		var xy plotter.XYs
		var text []string
		for c := 0; c < g.cols; c++ {
			for r := 0; r < g.rows; r++ {
				if v := g.z[c][r]; !math.IsNaN(v) {
					xy = append(xy, plotter.XY{X: g.X(c), Y: g.Y(r)})
					text = append(text, fmt.Sprintf("%.3g", v))
				}
			}
		}
		labels, err := plotter.NewLabels(plotter.XYLabels{XYs: xy, Labels: text})
		if err != nil {
			panic(err)
		}
		for i := range labels.TextStyle {
			labels.TextStyle[i].XAlign, labels.TextStyle[i].YAlign = -0.5, -0.5
			labels.TextStyle[i].Font.Size = vg.Points(7)
		}
		p.Add(labels)
		p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = 0.5, float64(g.cols)+0.5, 0.5, float64(g.rows)+0.5
		p.X.Tick.Marker, p.Y.Tick.Marker = intTicks{}, intTicks{}
		col = append(col, []*plot.Plot{p})
	}
	if len(col) == 0 {
		return fig.nothing()
	}
	fig.resize(10*vg.Centimeter, vg.Length(len(col))*8*vg.Centimeter)
	return fig.grid(col)
}

// intTicks labels every integer of an axis (every few when there are more than 16).
type intTicks struct{}

func (intTicks) Ticks(min, max float64) []plot.Tick {
	lo, hi := math.Ceil(min), math.Floor(max)
	if !(hi >= lo) || hi-lo > 1e4 {
		return nil
	}
	step := math.Max(1, math.Ceil((hi-lo+1)/16))
	var ticks []plot.Tick
	for v := lo; v <= hi; v += step {
		ticks = append(ticks, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', -1, 64)})
	}
	return ticks
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
	legend := plot.NewLegend()
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
			legend.Add(fmt.Sprintf("%s: %s = %.0f B", op, label(lab), mx), v)
		}
		setLin(&p.X, x)
		setLin(&p.Y, y)
		row = append(row, p)
	}
	fig.legendBeside(legend)
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
	fig.legendBeside(p.Legend, p)
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
	fig.legendBeside(p.Legend, p)
	return fig.single(p)
}
