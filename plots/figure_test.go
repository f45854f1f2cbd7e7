package plots

import (
	"math"
	"strings"
	"testing"
)

// TestFiguresSurviveAwkwardData renders figures from data a real run can produce: a negative
// Hockney α (the fitted line is negative at small sizes, which a log axis cannot show), empty
// panels, infinite interval bounds.
func TestFiguresSurviveAwkwardData(t *testing.T) {
	figs := []*Figure{
		HockneyFit("h", []HockneySeries{{Class: "intra-rack", Sizes: []float64{1024, 65536, 1 << 20}, Times: []float64{1e-4, 6e-3, 8e-2}, Alpha: -2e-3, Beta: 8e-8}}),
		ErrorHistograms("e", []string{"a"}, []string{"x", "y"}, [][][]float64{{{0.01, -0.2, 0.7}, nil}}),
		LMONodes("l", []NodeParam{{Node: "<n1>", Value: 1e-5, Low: -1, High: 2}}, []NodeParam{{Node: "n1", Value: 1e-9, Low: 0, High: math.Inf(1)}}),
		PredictedVsMeasured("p", []string{"m"}, []float64{1, 2, -1}, [][]float64{{1.1, 0, 3}}),
	}
	for _, f := range figs {
		if _, err := f.PNG(); err != nil {
			t.Error(err)
		}
		svg, err := f.SVG()
		if err != nil {
			t.Error(err)
		}
		if f.Name == "l" && !containsEscaped(svg) {
			t.Error("a node name with < > reached the SVG unescaped")
		}
	}
}

func containsEscaped(svg []byte) bool {
	s := string(svg)
	return !strings.Contains(s, "<n1>") && strings.Contains(s, "&lt;n1&gt;")
}
