package pipeline

import (
	"bytes"
	"context"
	"encoding/xml"
	"image/png"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/commcal/commcal/cluster"
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
		pngData, err := os.ReadFile(filepath.Join(out, FiguresDir, name+".png"))
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(bytes.NewReader(pngData))
		if err != nil || img.Bounds().Dx() < 300 || img.Bounds().Dy() < 200 {
			t.Errorf("%s.png: %v, %v", name, err, img.Bounds())
		}
		svg, err := os.ReadFile(filepath.Join(out, FiguresDir, name+".svg"))
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
		pdf, err := os.ReadFile(filepath.Join(out, FiguresDir, name+".pdf"))
		if err != nil || !bytes.HasPrefix(pdf, []byte("%PDF-")) {
			t.Errorf("%s.pdf: %v", name, err)
		}
	}
	page, err := os.ReadFile(filepath.Join(out, ReportFile))
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
	runSample(t, out)
	ds := filepath.Join(out, RunDatasetDir)
	m, err := os.ReadFile(filepath.Join(ds, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	evil := strings.Replace(string(m), "embedded:sample/measured/transfers.parquet", `<script>alert(1)</script>`, 1)
	os.WriteFile(filepath.Join(ds, "manifest.json"), []byte(evil), 0o644)
	if _, err := Plot(context.Background(), out, PlotOptions{}); err != nil {
		t.Fatal(err)
	}
	page, _ := os.ReadFile(filepath.Join(out, ReportFile))
	if strings.Contains(string(page), "<script>alert(1)</script>") || !strings.Contains(string(page), "&lt;script&gt;") {
		t.Error("input text reached the report unescaped")
	}
}

// TestReportInChromium opens the report in headless Chromium: no console errors, every figure
// laid out with a size, and a screenshot of the first screen saved beside the report.
func TestReportInChromium(t *testing.T) {
	bin, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium is not installed (Debian package chromium; .ci/run installs it)")
	}
	out := simulatedRun(t, mustCluster(t, "ccpe-testbed"), t.TempDir())
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(bin), chromedp.NoSandbox,
		chromedp.Flag("disable-gpu", true), chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true), chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancel()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancel = context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	var mu sync.Mutex
	var consoleErrors []string
	if err := chromedp.Listen(ctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch e := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.ConsoleAPICalledTypeError {
				consoleErrors = append(consoleErrors, "console.error")
			}
		case *runtime.EventExceptionThrown:
			consoleErrors = append(consoleErrors, e.ExceptionDetails.Text)
		}
	}); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate("file://"+filepath.Join(out, ReportFile)), chromedp.WaitReady("body")); err != nil {
		t.Fatal(err)
	}
	visible, err := chromedp.Run(ctx, chromedp.Evaluate[int](`Array.from(document.querySelectorAll('figure svg')).filter(s => {
		const r = s.getBoundingClientRect(); return r.width > 100 && r.height > 100 }).length`))
	if err != nil {
		t.Fatal(err)
	}
	shot, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	if visible != 10 {
		t.Errorf("%d figures laid out with a size, want 10", visible)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(consoleErrors) > 0 {
		t.Errorf("console errors: %v", consoleErrors)
	}
	if img, err := png.Decode(bytes.NewReader(shot)); err != nil || img.Bounds().Dx() < 1000 {
		t.Fatalf("screenshot: %v", err)
	}
	// The artifact: the report's first screen, in the run directory.
	if err := os.WriteFile(filepath.Join(out, "report-screenshot.png"), shot, 0o644); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(os.TempDir(), "commcal-report-screenshot.png"), shot, 0o644)
}

func mustCluster(t *testing.T, name string) *cluster.Cluster {
	t.Helper()
	cl, err := cluster.LoadNamed(name)
	if err != nil {
		t.Fatal(err)
	}
	return cl
}
