package plots

import (
	"bytes"
	"fmt"
	"html"
	"image/png"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// svgTexts returns the x of every text element of an SVG, by its content.
func svgTexts(svg []byte) map[string]float64 {
	out := map[string]float64{}
	re := regexp.MustCompile(`(?s)<text x="([-0-9.e]+)"[^>]*>([^<]*)</text>`)
	for _, m := range re.FindAllSubmatch(svg, -1) {
		x, _ := strconv.ParseFloat(string(m[1]), 64)
		out[html.UnescapeString(string(m[2]))] = x
	}
	return out
}

// axesRight is the rightmost x of the black strokes of an SVG: axes and ticks, which end at
// the right edge of the plots' data area.
func axesRight(svg []byte) float64 {
	re := regexp.MustCompile(`<path d="([^"]*)" style="fill:none;stroke:#000000`)
	num := regexp.MustCompile(`[ML]([-0-9.e]+),`)
	right := math.Inf(-1)
	for _, m := range re.FindAllSubmatch(svg, -1) {
		for _, c := range num.FindAllSubmatch(m[1], -1) {
			x, _ := strconv.ParseFloat(string(c[1]), 64)
			right = math.Max(right, x)
		}
	}
	return right
}

// TestLegendsBesideData: every figure with a legend draws it to the right of its plots' data
// area, never over it.
func TestLegendsBesideData(t *testing.T) {
	cases := []struct {
		f      *Figure
		legend string
	}{
		{HockneyFit("h", []HockneySeries{{Class: "intra-rack", Sizes: []float64{1e3, 1e4, 1e5, 1e6}, Times: []float64{6e-5, 1.4e-4, 9e-4, 8.5e-3}, Alpha: 5e-5, Beta: 8.5e-9}}),
			"intra-rack: α = 50 µs, β = 8.5 ns/B"},
		{BandwidthVsDegree("b", []DegreePoint{{Experiment: "bidir_nic", In: 1, Out: 1, Measured: 9.4e8, Fair: 9.4e8, Asym: 9.4e8},
			{Experiment: "bidir_nic", In: 2, Out: 1, Measured: 4.7e8, Fair: 6e8, Asym: 4.7e8}}), "measured"},
		{CollectiveSweeps("c", []Sweep{{Op: "gather", Sizes: []float64{1, 2, 3}, Times: []float64{1, 9, 10}, Marks: map[string]float64{"M1": 2}}}), "gather: M1 = 2 B"},
		{LLines("l", []LSeries{{Pairs: 2, Sizes: []float64{1e3, 1e4}, L: []float64{1e-5, 2e-5}, A: 1e-5, B: 1e-9}}), "P = 2"},
		{ErrorCDF("e", []string{"asymmetric"}, [][]float64{{0.01, 0.05, -0.2}}, nil), "asymmetric: 67% within ±10%"},
		{OverlaidHistograms("o", "fair", []string{"night-1"}, [][]float64{{0.01, 0.3}}), "night-1"},
	}
	for _, tc := range cases {
		svg, err := tc.f.SVG()
		if err != nil {
			t.Fatal(err)
		}
		texts := svgTexts(svg)
		x, ok := texts[tc.legend]
		if !ok {
			t.Errorf("%s: no legend entry %q", tc.f.Name, tc.legend)
			continue
		}
		if right := axesRight(svg); !(x > right) {
			t.Errorf("%s: legend at x = %g, inside the data area (axes end at %g)", tc.f.Name, x, right)
		}
	}
}

// TestHockneyResidualsClipped draws a fit whose negative α makes the relative
// residuals of the small sizes run to thousands of percent. They are drawn at ±50%, counted in
// the panel's title, and the residual axis stays within ±60%.
func TestHockneyResidualsClipped(t *testing.T) {
	f := HockneyFit("hockney", []HockneySeries{{Class: "inter-rack",
		Sizes: []float64{4096, 4096, 16384, 65536, 1 << 20}, Times: []float64{1.5e-3, 1.4e-4, 1.1e-3, 5.3e-3, 8.8e-2},
		Alpha: -3.387e-4, Beta: 8.364e-8}})
	svg, err := f.SVG()
	if err != nil {
		t.Fatal(err)
	}
	texts := svgTexts(svg)
	if _, ok := texts["relative residuals (2 beyond ±50% drawn at the edge as triangles)"]; !ok {
		t.Errorf("the residual panel does not say what it clipped: %v", keys(texts))
	}
	for label := range texts {
		if v, err := strconv.ParseFloat(label, 64); err == nil && math.Abs(v) > 60 && math.Abs(v) < 1000 {
			t.Errorf("a residual tick at %s%%", label)
		}
	}
	// The fitted line starts where the latency takes less than half of β·m: 2|α|/β = 8099 B.
	if _, ok := texts["  (α < 0: line from 8099 B)"]; !ok {
		t.Errorf("the legend does not say where the line starts: %v", keys(texts))
	}
}

func keys(m map[string]float64) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestErrorCDF: one curve per model with its share within ±10% (computed by hand: 2 of 3
// and 1 of 4), a noise-limit curve only when given, and a title per line.
func TestErrorCDF(t *testing.T) {
	errs := [][]float64{{0.01, -0.05, 0.3}, {0.02, 0.5, -0.4, 0.12}}
	without, err := ErrorCDF("cdf", []string{"fair", "hockney"}, errs, nil).SVG()
	if err != nil {
		t.Fatal(err)
	}
	with, err := ErrorCDF("cdf", []string{"fair", "hockney"}, errs, []float64{0.01, 0.02}).SVG()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"fair: 67% within ±10%", "hockney: 25% within ±10%", "|ε| = 10%"} {
		if _, ok := svgTexts(without)[want]; !ok {
			t.Errorf("no %q in the CDF", want)
		}
	}
	if _, ok := svgTexts(without)["noise limit: 100% within ±10%"]; ok {
		t.Error("a noise limit drawn without one given")
	}
	if _, ok := svgTexts(with)["noise limit: 100% within ±10%"]; !ok {
		t.Error("the noise limit given is not drawn")
	}
}

// TestHistogramTitlesWhole: the error histograms' titles are two short lines, not one line
// cut at the panel's edge.
func TestHistogramTitlesWhole(t *testing.T) {
	svg, err := ErrorHistograms("e", []string{"asymmetric-fitted"}, []string{"N30-d3"}, [][][]float64{{{0.01, 0.2}}}).SVG()
	if err != nil {
		t.Fatal(err)
	}
	texts := svgTexts(svg)
	for _, want := range []string{"asymmetric-fitted · N30-d3", "50% within ±10%"} {
		if _, ok := texts[want]; !ok {
			t.Errorf("no title line %q: %v", want, keys(texts))
		}
	}
}

// TestBandwidthHeatmap writes each measured cell's per-flow rate in it (Mbit/s), leaves out
// what cannot be drawn with a warning, and starts the line plot's rate axis at 0.
func TestBandwidthHeatmap(t *testing.T) {
	pts := []DegreePoint{
		{Experiment: "bidir_nic", In: 1, Out: 1, Measured: 9.4e8}, {Experiment: "bidir_nic", In: 2, Out: 1, Measured: 4.7e8},
		{Experiment: "bidir_nic", In: 1, Out: 3, Measured: 3.13e8}, {Experiment: "bidir_nic", In: 2, Out: 2, Measured: math.NaN()},
	}
	f := BandwidthHeatmap("heat", pts)
	svg, err := f.SVG()
	if err != nil {
		t.Fatal(err)
	}
	texts := svgTexts(svg)
	for _, want := range []string{"940", "470", "313", "outgoing transfers", "incoming transfers"} {
		if _, ok := texts[want]; !ok {
			t.Errorf("no %q in the heatmap", want)
		}
	}
	if len(f.Warnings) != 1 || !strings.Contains(f.Warnings[0], "bidir_nic: 1 patterns") {
		t.Errorf("warnings %q", f.Warnings)
	}
	line, err := BandwidthVsDegree("b", pts[:3]).SVG()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := svgTexts(line)["0"]; !ok {
		t.Error("the per-flow bandwidth axis does not start at 0")
	}
}

// TestRatesVsNominal: each rate is labelled with its share of nominal; a rate without a
// nominal is left out and an infinite bound is not drawn, each with a warning.
func TestRatesVsNominal(t *testing.T) {
	f := RatesVsNominal("r", []RateShare{
		{Name: "fair_intra NIC capacity", Value: 9.37e8, Low: 9.3e8, High: 9.44e8, Nominal: 1e9},
		{Name: "fair_inter backbone capacity", Value: 4.886e8, Low: math.Inf(-1), High: math.Inf(1), Nominal: 1e10},
		{Name: "nowhere", Value: 1e9, Nominal: 0},
	})
	svg, err := f.SVG()
	if err != nil {
		t.Fatal(err)
	}
	texts := svgTexts(svg)
	for _, want := range []string{"fair_intra NIC capacity (93.7%)", "fair_inter backbone capacity (4.89%)", "share of nominal (%)"} {
		if _, ok := texts[want]; !ok {
			t.Errorf("no %q: %v", want, keys(texts))
		}
	}
	got := strings.Join(f.Warnings, "\n")
	for _, want := range []string{"nowhere: no finite share", "2 interval bounds are infinite"} {
		if !strings.Contains(got, want) {
			t.Errorf("warnings %q lack %q", f.Warnings, want)
		}
	}
}

// TestResolutionAndPDF: a PNG at 192 dpi has twice the pixels of one at 96 dpi; the PDF is a
// PDF, and the same figure gives the same bytes in every format.
func TestResolutionAndPDF(t *testing.T) {
	f := func() *Figure {
		return ErrorCDF("cdf", []string{"fair"}, [][]float64{{0.01, 0.2, -0.03}}, nil)
	}
	size := func(dpi float64) int {
		data, err := f().PNGAt(dpi)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := png.DecodeConfig(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		return cfg.Width
	}
	if a, b := size(96), size(192); b < 2*a-1 || b > 2*a+1 {
		t.Errorf("%d pixels wide at 96 dpi, %d at 192", a, b)
	}
	if _, err := f().PNGAt(5000); err == nil {
		t.Error("a resolution of 5000 dpi was accepted")
	}
	one, err := f().PDF()
	if err != nil {
		t.Fatal(err)
	}
	two, _ := f().PDF()
	if !bytes.HasPrefix(one, []byte("%PDF-")) || !bytes.Equal(one, two) {
		t.Error("the PDF is not a PDF, or differs between two renderings")
	}
	for _, render := range []func(*Figure) ([]byte, error){(*Figure).PNG, (*Figure).SVG} {
		a, _ := render(f())
		b, _ := render(f())
		if !bytes.Equal(a, b) {
			t.Error("two renderings of one figure differ")
		}
	}
	dir := t.TempDir()
	if _, err := f().Write(dir, 150); err != nil {
		t.Fatal(err)
	}
	for _, ext := range []string{"png", "svg", "pdf"} {
		if !fileExists(fmt.Sprintf("%s/cdf.%s", dir, ext)) {
			t.Errorf("no cdf.%s written", ext)
		}
	}
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// TestParamTrends: one panel per parameter with the runs named on the axis and the flagged
// run marked; a family beyond MaxTrendPanels on one panel of changes from the first run; tick
// labels that differ where the values do.
func TestParamTrends(t *testing.T) {
	runs := []string{"mon", "tue", "wed", "thu"}
	flagged := []bool{false, false, false, true}
	series := []TrendSeries{{Name: "fair_intra/capacity_bps", Unit: "Mbit/s", Points: []TrendPoint{
		{Value: 940, Low: 938, High: 942}, {Value: 941, Low: 939, High: 943}, {Value: 939, Low: 937, High: 941},
		{Value: 846, Low: 844, High: 848, Drift: true}}}}
	svg, err := ParamTrends("t", "trend", runs, flagged, series).SVG()
	if err != nil {
		t.Fatal(err)
	}
	texts := svgTexts(svg)
	for _, want := range []string{"fair_intra/capacity_bps", "Mbit/s", "mon", "thu"} {
		if _, ok := texts[want]; !ok {
			t.Errorf("no %q in the trend: %v", want, keys(texts))
		}
	}
	if !strings.Contains(string(svg), "stroke:#D62728;stroke-dasharray:3,2") || !strings.Contains(string(svg), "fill:#D62728") {
		t.Error("the flagged run is not marked, or the drifted point not red")
	}
	// A parameter steady to four digits: gonum's default labels would print 27 three times.
	narrow := []TrendSeries{{Name: "lmo/node/X4/c_s", Unit: "µs", Points: []TrendPoint{
		{Value: 26.995, Low: 26.99, High: 27.0}, {Value: 27.0, Low: 26.995, High: 27.005}, {Value: 27.005, Low: 27.0, High: 27.01}}}}
	svg, err = ParamTrends("t", "trend", runs[:3], flagged[:3], narrow).SVG()
	if err != nil {
		t.Fatal(err)
	}
	labels := map[string]int{}
	for _, m := range regexp.MustCompile(`>([-0-9.]+)</text>`).FindAllSubmatch(svg, -1) {
		labels[string(m[1])]++
	}
	for l, n := range labels {
		if n > 1 {
			t.Errorf("tick label %s %d times", l, n)
		}
	}
	if len(labels) < 3 {
		t.Errorf("tick labels %v", labels)
	}
	var many []TrendSeries
	for i := 0; i < MaxTrendPanels+1; i++ {
		many = append(many, TrendSeries{Name: fmt.Sprint(i), Points: []TrendPoint{{Value: 1}, {Value: 1.1, Drift: true}}})
	}
	svg, err = ParamTrends("t", "trend", runs[:2], flagged[:2], many).SVG()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := svgTexts(svg)["25 parameters: change from run 1"]; !ok {
		t.Error("a large family is not drawn as changes from the first run")
	}
}

// TestHockneySegmentsDrawn: with segments, the line is drawn per protocol regime and the
// residuals are taken against the segment a size falls in (so two regimes fitted exactly
// leave residuals of 0, which one line could not).
func TestHockneySegmentsDrawn(t *testing.T) {
	var sizes, times []float64
	for m := 64.0; m <= 1<<20; m *= 1.5 {
		v := 20e-6 + m*8/500e6
		if m >= 65536 {
			v = 150e-6 + m*8/900e6
		}
		sizes, times = append(sizes, m), append(times, v)
	}
	s := HockneySeries{Class: "intra-rack", Sizes: sizes, Times: times, Alpha: 20e-6, Beta: 8 / 500e6,
		Segments: []HockneyPiece{{FromBytes: 64, Alpha: 20e-6, Beta: 8 / 500e6}, {FromBytes: 65536, Alpha: 150e-6, Beta: 8 / 900e6}}}
	for _, m := range sizes {
		a, b := s.piece(m)
		want := 20e-6 + m*8/500e6
		if m >= 65536 {
			want = 150e-6 + m*8/900e6
		}
		if math.Abs(a+b*m-want) > 1e-15 {
			t.Fatalf("at %g B the piece gives %g s, want %g", m, a+b*m, want)
		}
	}
	fig := HockneyFit("hockney", []HockneySeries{s})
	svg, err := fig.SVG()
	if err != nil {
		t.Fatal(err)
	}
	texts := svgTexts(svg)
	if _, ok := texts["intra-rack: 2 segments (Hockney per protocol regime)"]; !ok {
		t.Errorf("the legend does not name the segments: %v", keys(texts))
	}
	if len(fig.Warnings) != 0 {
		t.Errorf("warnings: %v", fig.Warnings)
	}
}
