package report_test

import (
	"bytes"
	"context"
	"encoding/xml"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/pipeline/pipelinetest"
	"github.com/commcal/commcal/report"
	"github.com/commcal/commcal/rundir"
)

// svgShapes counts the drawing elements of an SVG document, checking that it parses.
func svgShapes(t *testing.T, data []byte) int {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(data))
	n := 0
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return n
		}
		if err != nil {
			t.Fatalf("SVG does not parse: %v", err)
		}
		if se, ok := tok.(xml.StartElement); ok && (se.Name.Local == "path" || se.Name.Local == "circle") {
			n++
		}
	}
}

// TestFiguresAndReport renders every figure of a run on simulated data and checks that each PNG
// decodes to the figure's size and each SVG parses with drawn data in it.
func TestFiguresAndReport(t *testing.T) {
	out := simulatedRun(t, mustCluster(t, "ccpe-testbed"), t.TempDir())
	want := []string{"errors_by_setting", "errors_cdf", "predicted_vs_measured", "hockney", "bandwidth_vs_degree", "bandwidth_heatmap",
		"rates_vs_nominal", "collectives", "l_parameter", "lmo_nodes"}
	for _, name := range want {
		pngData, err := os.ReadFile(filepath.Join(out, rundir.FiguresDir, name+".png"))
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(bytes.NewReader(pngData))
		if err != nil || img.Bounds().Dx() < 300 || img.Bounds().Dy() < 200 {
			t.Errorf("%s.png: %v, %v", name, err, img.Bounds())
		}
		svg, err := os.ReadFile(filepath.Join(out, rundir.FiguresDir, name+".svg"))
		if err != nil {
			t.Fatal(err)
		}
		// Axes and ticks alone draw a few dozen paths; data series many more (a CDF is one path
		// per model, a rate a point and an interval).
		least := map[string]int{"errors_cdf": 35, "rates_vs_nominal": 45}[name]
		if least == 0 {
			least = 60
		}
		if n := svgShapes(t, svg); n < least {
			t.Errorf("%s.svg draws only %d shapes", name, n)
		}
		pdf, err := os.ReadFile(filepath.Join(out, rundir.FiguresDir, name+".pdf"))
		if err != nil || !bytes.HasPrefix(pdf, []byte("%PDF-")) {
			t.Errorf("%s.pdf: %v", name, err)
		}
	}
	page, err := os.ReadFile(filepath.Join(out, rundir.ReportFile))
	if err != nil {
		t.Fatal(err)
	}
	if c := strings.Count(string(page), "<svg"); c != len(want) {
		t.Errorf("report inlines %d SVGs, want %d", c, len(want))
	}
}

func TestReportEscapesInputText(t *testing.T) {
	// Source paths and provenance come from the command line and input files.
	out := filepath.Join(t.TempDir(), "run")
	pipelinetest.Sample(t, out)
	ds := filepath.Join(out, rundir.DatasetDir)
	m, err := os.ReadFile(filepath.Join(ds, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	evil := strings.Replace(string(m), "embedded:sample/measured/transfers.parquet", `<script>alert(1)</script>`, 1)
	os.WriteFile(filepath.Join(ds, "manifest.json"), []byte(evil), 0o644)
	if _, err := report.Plot(context.Background(), out, report.PlotOptions{}); err != nil {
		t.Fatal(err)
	}
	page, _ := os.ReadFile(filepath.Join(out, rundir.ReportFile))
	if strings.Contains(string(page), "<script>alert(1)</script>") || !strings.Contains(string(page), "&lt;script&gt;") {
		t.Error("input text reached the report unescaped")
	}
}

func mustCluster(t *testing.T, name string) *cluster.Cluster {
	t.Helper()
	cl, err := cluster.LoadNamed(name)
	if err != nil {
		t.Fatal(err)
	}
	return cl
}
