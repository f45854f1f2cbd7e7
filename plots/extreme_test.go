package plots

import (
	"bytes"
	"fmt"
	"image/png"
	"math"
	"os"
	"strings"
	"testing"

	"gonum.org/v1/plot/vg/draw"
)

// extremes are the value sets every figure must draw without panicking: values a log axis
// cannot show, values at the edges of float64, one point, equal values, nothing.
var extremes = []struct {
	name string
	vals []float64
}{
	{"1e-100 (the report)", []float64{1e-100, 1e-100, 1e-100}},
	{"1e300", []float64{1e300, 1e300}},
	{"1e-100 to 1e300", []float64{1e-100, 1, 1e300}},
	{"zeros", []float64{0, 0, 0}},
	{"negatives", []float64{-1, -2e-3, -3e5}},
	{"NaN", []float64{math.NaN(), math.NaN()}},
	{"±Inf", []float64{math.Inf(1), math.Inf(-1)}},
	{"mixed", []float64{1, math.NaN(), 0, -1, math.Inf(1), 2}},
	{"single point", []float64{3e-6}},
	{"all equal", []float64{5, 5, 5, 5}},
	{"empty", nil},
	{"subnormal", []float64{5e-324, 1e-310}},
	{"largest floats", []float64{math.MaxFloat64, -math.MaxFloat64, math.MaxFloat64}},
	{"±1e300", []float64{-1e300, 1e300}},
	{"nearly equal", []float64{1, math.Nextafter(1, 2), 1}},
}

// extremeFigures builds every exported figure from one value set, used for every number the
// figure takes (sizes, times, errors, rates, parameters, bounds).
func extremeFigures(v []float64) []*Figure {
	at := func(i int) float64 {
		if len(v) == 0 {
			return math.NaN()
		}
		return v[i%len(v)]
	}
	rev := make([]float64, len(v))
	for i := range v {
		rev[i] = v[len(v)-1-i]
	}
	sizes := make([]float64, len(v))
	for i := range sizes {
		sizes[i] = math.Pow(4, float64(i+5))
	}
	var degree []DegreePoint
	var nodes []NodeParam
	for i, x := range v {
		degree = append(degree, DegreePoint{Experiment: "bidir_nic", In: i + 1, Out: 1, Measured: x, Fair: at(i + 1), Asym: 2 * x})
		nodes = append(nodes, NodeParam{Node: fmt.Sprintf("n%d", i), Value: x, Low: at(i + 1), High: x * 2})
	}
	return []*Figure{
		HockneyFit("hockney", []HockneySeries{
			{Class: "intra-rack", Sizes: sizes, Times: v, Alpha: at(0), Beta: 0},
			{Class: "inter-rack", Sizes: v, Times: rev, Alpha: at(1), Beta: at(2)},
		}),
		ErrorHistograms("errors", []string{"asymmetric", "fair"}, []string{"N8-d1", "all"}, [][][]float64{{v, rev}, {nil, v}}),
		PredictedVsMeasured("pvm", []string{"asymmetric", "hockney"}, v, [][]float64{rev, v}),
		BandwidthVsDegree("degree", degree),
		CollectiveSweeps("sweeps", []Sweep{{Op: "scatter", Sizes: v, Times: rev, Marks: map[string]float64{"S": at(0), "M1": at(1)}}, {Op: "gather", Sizes: sizes, Times: v}}),
		LLines("l", []LSeries{{Pairs: 2, Sizes: v, L: rev, A: at(0), B: at(1), C: at(2), D: 0}, {Pairs: 4, Sizes: sizes, L: v, A: 1e-5, B: 1e-9}}),
		LMONodes("lmo", nodes, nodes),
		OverlaidHistograms("overlaid", "asymmetric", []string{"run-a", "run-b"}, [][]float64{v, rev}),
		ErrorCDF("cdf", []string{"asymmetric", "fair"}, [][]float64{v, rev}, v),
		BandwidthHeatmap("heatmap", degree),
		ParamTrends("trend", "trend", []string{"a", "b", "c"}, []bool{false, true, false}, trendSeries(v)),
		AccuracyTrends("accuracy", []string{"a", "b"}, []bool{false, true}, []string{"fair", "hockney"}, ptrs(v), ptrs(rev)),
		RatesVsNominal("rates", []RateShare{{Name: "nic", Value: at(0), Low: at(1), High: at(2), Nominal: at(1)}, {Name: "backbone", Value: 1e9, Low: at(0), High: at(2), Nominal: 1e10}}),
	}
}

// TestFiguresNeverPanicOnExtremes: every exported figure, on every value set, renders as PNG
// and SVG without error; what it cannot draw is in its warnings.
func TestFiguresNeverPanicOnExtremes(t *testing.T) {
	for _, ex := range extremes {
		for _, f := range extremeFigures(ex.vals) {
			what := f.Name + " on " + ex.name
			svg, err := f.SVG()
			if err != nil {
				t.Errorf("%s: SVG: %v", what, err)
				continue
			}
			if !bytes.Contains(svg, []byte("<svg")) {
				t.Errorf("%s: no SVG", what)
			}
			pngData, err := f.PNG()
			if err != nil {
				t.Errorf("%s: PNG: %v", what, err)
				continue
			}
			cfg, err := png.DecodeConfig(bytes.NewReader(pngData))
			if err != nil || cfg.Width < 100 || cfg.Height < 100 || cfg.Width > 4000 || cfg.Height > 4000 {
				t.Errorf("%s: PNG %dx%d, %v", what, cfg.Width, cfg.Height, err)
			}
			for _, w := range f.Warnings {
				if !strings.HasPrefix(w, "plots: "+f.Name+": ") || strings.ContainsAny(w, "\r\n") {
					t.Errorf("%s: warning %q", what, w)
				}
			}
		}
	}
}

// TestHockneyOfTinyTimes is the report: `commcal run` on accepted point-to-point times of
// 1e-100 s panicked in the log-scale Hockney figure. The points are drawn, on axes chosen
// from them, with nothing left out.
func TestHockneyOfTinyTimes(t *testing.T) {
	f := HockneyFit("hockney", []HockneySeries{
		{Class: "intra-rack", Sizes: []float64{1, 1024, 1 << 20}, Times: []float64{1e-100, 1e-100, 1e-100}, Alpha: 1e-100, Beta: 0},
		{Class: "inter-rack", Sizes: []float64{1, 1024, 1 << 20}, Times: []float64{1e-100, 2e-100, 3e-100}, Alpha: 1e-100, Beta: 2e-106},
	})
	if len(f.Warnings) != 0 {
		t.Errorf("warnings %q", f.Warnings)
	}
	svg, err := f.SVG()
	if err != nil {
		t.Fatal(err)
	}
	// The time axis is labelled for the data, not for the value 1.
	if !bytes.Contains(svg, []byte(">1e-100<")) {
		t.Error("the time axis has no 1e-100 tick")
	}
	if _, err := f.PNG(); err != nil {
		t.Fatal(err)
	}
}

// TestWarnings: what a figure leaves out is said, per series, and a figure with nothing to
// draw says so instead of failing.
func TestWarnings(t *testing.T) {
	mixed := []float64{1, math.NaN(), 0, -1, math.Inf(1), 2}
	cases := []struct {
		f    *Figure
		want []string
	}{
		{HockneyFit("h", []HockneySeries{{Class: "intra-rack", Sizes: []float64{1, 2, 3, 4, 5, 6}, Times: mixed, Alpha: 1e-6, Beta: 1e-9}}),
			[]string{"plots: h: intra-rack: 4 of 6 points have a size or time that a log axis cannot show"}},
		{HockneyFit("h", []HockneySeries{{Class: "intra-rack", Sizes: []float64{1, 2}, Times: []float64{1}}}),
			[]string{"plots: h: intra-rack: 2 sizes but 1 times", "plots: h: intra-rack: 1 residuals are left out"}},
		{HockneyFit("h", []HockneySeries{{Class: "x", Sizes: []float64{1}, Times: []float64{-1}}}),
			[]string{"plots: h: x: no point to draw", "plots: h: nothing to draw"}},
		{HockneyFit("h", nil), []string{"plots: h: nothing to draw"}},
		{PredictedVsMeasured("p", []string{"asymmetric", "fair"}, mixed, [][]float64{{1, 1, 1, 1, 1, 1}}),
			[]string{"plots: p: asymmetric: 4 of 6 transfers", "plots: p: fair: no predictions given"}},
		{ErrorHistograms("e", []string{"m"}, []string{"s"}, [][][]float64{{{0.1, math.NaN(), math.Inf(-1)}}}),
			[]string{"plots: e: m, s: 2 of 3 errors are NaN or infinite"}},
		{ErrorHistograms("e", []string{"m", "n"}, []string{"s"}, [][][]float64{{{math.NaN()}}}),
			[]string{"errors for 1 models, 2 models named", "plots: e: nothing to draw"}},
		{OverlaidHistograms("o", "m", []string{"a"}, [][]float64{{0.1}, {math.NaN()}}),
			[]string{"plots: o: run 2: 1 of 1 errors are NaN or infinite"}},
		{BandwidthVsDegree("b", []DegreePoint{{Experiment: "bidir_nic", In: 1, Out: 1, Measured: math.NaN(), Fair: 1e9, Asym: math.Inf(1)}}),
			[]string{"plots: b: bidir_nic: 2 rates are NaN, infinite"}},
		{CollectiveSweeps("c", []Sweep{{Op: "scatter", Sizes: []float64{1, 2}, Times: []float64{1e-3, math.NaN()}, Marks: map[string]float64{"S": math.Inf(1)}}}),
			[]string{"plots: c: scatter: 1 of 2 points", "plots: c: scatter: mark S at +Inf B cannot be drawn"}},
		{LLines("l", []LSeries{{Pairs: 3, Sizes: []float64{1, 2}, L: []float64{0, 1}}}),
			[]string{"plots: l: P = 3: 1 of 2 points"}},
		{LMONodes("n", []NodeParam{{Node: "a", Value: math.NaN()}, {Node: "b", Value: 1e-5, Low: math.Inf(-1), High: 2e-5}}, nil),
			[]string{"plots: n: fixed delay C: 1 of 2 nodes", "plots: n: fixed delay C: 1 interval bounds", "plots: n: per-byte delay t: no node to draw"}},
		{LMONodes("n", nil, nil), []string{"plots: n: nothing to draw"}},
	}
	for _, tc := range cases {
		got := strings.Join(tc.f.Warnings, "\n")
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: warnings %q do not say %q", tc.f.Name, tc.f.Warnings, w)
			}
		}
		if _, err := tc.f.SVG(); err != nil {
			t.Errorf("%s: %v", tc.f.Name, err)
		}
	}
}

// TestPanicsBecomeErrors: a panic while a figure is built or drawn is an error naming the
// figure, and Write writes nothing.
func TestPanicsBecomeErrors(t *testing.T) {
	drawing := &Figure{Name: "broken", Width: 100, Height: 100, draw: func(draw.Canvas) { panic("bad range") }}
	for _, render := range []func() ([]byte, error){drawing.PNG, drawing.SVG} {
		if _, err := render(); err == nil || !strings.Contains(err.Error(), "plots: figure broken cannot be drawn: bad range") {
			t.Errorf("render: %v", err)
		}
	}
	built := func() (f *Figure) {
		defer recoverFigure("unbuilt", &f)
		panic("index out of range")
	}()
	dir := t.TempDir()
	if _, err := built.Write(dir, 0); err == nil || !strings.Contains(err.Error(), "plots: figure unbuilt cannot be built: index out of range") {
		t.Errorf("Write: %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("Write left %d files", len(entries))
	}
}

// TestBoundedSize: thousands of nodes or panels do not ask for a picture of gigabytes, and
// names from input files are drawn without their control characters.
func TestBoundedSize(t *testing.T) {
	nodes := make([]NodeParam, 5000)
	for i := range nodes {
		nodes[i] = NodeParam{Node: fmt.Sprintf("n%d\x00\n", i), Value: 1e-5, Low: 0.9e-5, High: 1.1e-5}
	}
	f := LMONodes("lmo", nodes, nodes)
	data, err := f.PNG()
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := png.DecodeConfig(bytes.NewReader(data))
	if err != nil || cfg.Width > 3800 || cfg.Height > 3800 {
		t.Errorf("PNG %dx%d (%v)", cfg.Width, cfg.Height, err)
	}
	svg, err := f.SVG()
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(svg, []byte("n0\x00")) || !bytes.Contains(svg, []byte("n0\uFFFD\uFFFD")) {
		t.Error("a node name's control characters reached the SVG")
	}
}

// trendSeries makes parameter trends of a value set: each value a run, its neighbours the
// interval; a family of 30 parameters too, drawn as changes from the first run.
func trendSeries(v []float64) []TrendSeries {
	s := TrendSeries{Name: "x", Unit: "µs"}
	for i, x := range v {
		s.Points = append(s.Points, TrendPoint{Value: x, Low: x - 1, High: v[(i+1)%len(v)], Drift: i == 1})
	}
	return []TrendSeries{s}
}

// ptrs is a value set as the accuracy of two models over runs (nil for the NaN ones).
func ptrs(v []float64) [][]*float64 {
	var out []*float64
	for i := range v {
		if !math.IsNaN(v[i]) {
			out = append(out, &v[i])
		} else {
			out = append(out, nil)
		}
	}
	return [][]*float64{out, out}
}
