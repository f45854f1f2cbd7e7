package report_test

import (
	"bytes"
	"context"
	"fmt"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/commcal/commcal/pipeline/pipelinetest"
	"github.com/commcal/commcal/rundir"
)

// browser is headless Chromium, 1280 × 900, with what its pages logged as errors.
type browser struct {
	ctx    context.Context
	mu     sync.Mutex
	errors []string
}

// openBrowser starts headless Chromium for a test, or skips the test naming what is missing.
func openBrowser(t *testing.T) *browser {
	t.Helper()
	bin, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium is not installed (Debian package chromium; .ci/run installs it)")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(bin), chromedp.NoSandbox,
		chromedp.Flag("disable-gpu", true), chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true), chromedp.UserDataDir(t.TempDir()),
		// Chromium puts its singleton socket in a directory of its own under TMPDIR, which it
		// does not remove when it is killed at the end of the test.
		chromedp.Env("TMPDIR="+t.TempDir()),
		chromedp.WindowSize(1280, 900))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(actx)
	ctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(func() { cancel(); cancelCtx(); cancelAlloc() })
	b := &browser{ctx: ctx}
	if err := chromedp.Listen(ctx, func(ev any) {
		b.mu.Lock()
		defer b.mu.Unlock()
		switch e := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.ConsoleAPICalledTypeError {
				b.errors = append(b.errors, "console.error")
			}
		case *runtime.EventExceptionThrown:
			b.errors = append(b.errors, e.ExceptionDetails.Text)
		}
	}); err != nil {
		t.Fatal(err)
	}
	return b
}

// consoleErrors returns what the pages logged as errors so far.
func (b *browser) consoleErrors() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.errors...)
}

// layout is what a page's layout says, measured in the browser.
type layout struct {
	ClientWidth int `json:"clientWidth"`
	ScrollWidth int `json:"scrollWidth"`
	// Wide lists elements that reach beyond the page's width (tag#id left–right).
	Wide    []string `json:"wide"`
	Tables  int      `json:"tables"`
	Figures int      `json:"figures"`
	// Hidden lists tables and figures laid out without a size or not displayed.
	Hidden []string `json:"hidden"`
	// Health is the height of the health panel (0: there is none).
	Health float64 `json:"health"`
	TOC    bool    `json:"toc"` // the table of contents is displayed
	// Scrolled lists the tables that do not fit their scrolling box (wide tables of many runs).
	Scrolled []string `json:"scrolled"`
}

// measureLayout is the script that measures a page's layout.
const measureLayout = `(() => {
  const vw = document.documentElement.clientWidth, wide = [], hidden = [];
  for (const el of document.body.querySelectorAll('*')) {
    if (el.closest('svg') && el.tagName.toLowerCase() !== 'svg') continue; // an SVG's drawing, measured as the SVG
    if (el.parentElement && el.parentElement.closest('div.scroll')) continue; // scrolls in its box, measured as the box
    const r = el.getBoundingClientRect();
    if (r.width === 0 && r.height === 0) continue;
    if (r.right > vw + 0.5 || r.left < -0.5) wide.push(el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') + ' ' + Math.round(r.left) + '-' + Math.round(r.right));
  }
  const shown = el => { const r = el.getBoundingClientRect(), s = getComputedStyle(el); return r.width >= 50 && r.height >= 20 && s.visibility !== 'hidden' && s.display !== 'none'; };
  const tables = document.querySelectorAll('table'), figures = document.querySelectorAll('figure svg');
  tables.forEach((e, i) => { if (!shown(e)) hidden.push('table ' + (e.id || i)); });
  figures.forEach(e => { if (!shown(e)) hidden.push('figure ' + e.closest('figure').id); });
  const scrolled = Array.from(document.querySelectorAll('div.scroll')).filter(d => d.scrollWidth > d.clientWidth + 0.5).map(d => d.firstElementChild.id);
  const health = document.getElementById('health'), toc = document.querySelector('nav.toc');
  return { clientWidth: vw, scrollWidth: document.documentElement.scrollWidth, wide: wide.slice(0, 20), tables: tables.length,
    figures: figures.length, hidden: hidden, health: health ? health.getBoundingClientRect().height : 0,
    toc: !!toc && getComputedStyle(toc).display !== 'none', scrolled: scrolled };
})()`

// open loads a page and measures its layout on screen and in print.
func (b *browser) open(t *testing.T, path string) (screen, print layout) {
	t.Helper()
	if err := chromedp.Do(b.ctx, chromedp.Navigate("file://"+path), chromedp.WaitReady("body")); err != nil {
		t.Fatal(err)
	}
	screen, err := chromedp.Run(b.ctx, chromedp.Evaluate[layout](measureLayout))
	if err != nil {
		t.Fatal(err)
	}
	media := func(m string) chromedp.Action[chromedp.Void] {
		return func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
			_, err := cdp.Call(ctx, tg, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{Media: m})
			return chromedp.Void{}, err
		}
	}
	if err := chromedp.Do(b.ctx, media("print")); err != nil {
		t.Fatal(err)
	}
	if print, err = chromedp.Run(b.ctx, chromedp.Evaluate[layout](measureLayout)); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(b.ctx, media("")); err != nil {
		t.Fatal(err)
	}
	return screen, print
}

// checkLayout fails the test for what a page must never do: be wider than the window, hide a
// table or a figure, show fewer than it should.
func checkLayout(t *testing.T, what string, l layout, tables, figures int) {
	t.Helper()
	if len(l.Wide) > 0 || l.ScrollWidth > l.ClientWidth {
		t.Errorf("%s: wider than the page (%d px of %d): %v", what, l.ScrollWidth, l.ClientWidth, l.Wide)
	}
	if len(l.Hidden) > 0 {
		t.Errorf("%s: not visible: %v", what, l.Hidden)
	}
	if len(l.Scrolled) > 0 {
		t.Errorf("%s: tables that need scrolling: %v", what, l.Scrolled)
	}
	if l.Tables < tables || l.Figures != figures {
		t.Errorf("%s: %d tables and %d figures, want at least %d and %d", what, l.Tables, l.Figures, tables, figures)
	}
}

// screenshot saves a PNG of the viewport (sel "") or of one element into dir as name,
// checking that it decodes to a picture at least w pixels wide.
func (b *browser) screenshot(t *testing.T, sel, dir, name string, w int) {
	t.Helper()
	var shot []byte
	var err error
	if sel == "" {
		shot, err = chromedp.Run(b.ctx, chromedp.CaptureScreenshot())
	} else {
		shot, err = chromedp.Run(b.ctx, elementShot(sel))
	}
	if err != nil {
		t.Fatalf("screenshot of %q: %v", sel, err)
	}
	if img, err := png.Decode(bytes.NewReader(shot)); err != nil || img.Bounds().Dx() < w {
		t.Fatalf("screenshot of %q: %v", sel, err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), shot, 0o644); err != nil {
		t.Fatal(err)
	}
}

// elementShot captures one element (a CSS selector) where it lies in the page, scrolled or
// not: its rectangle in page coordinates is the clip.
func elementShot(sel string) chromedp.Action[[]byte] {
	return func(ctx context.Context, tg *chromedp.Target) ([]byte, error) {
		r, err := chromedp.Evaluate[[]float64](fmt.Sprintf(`(() => { const e = document.querySelector(%q).getBoundingClientRect();
  return [e.left + window.scrollX, e.top + window.scrollY, e.width, e.height]; })()`, sel))(ctx, tg)
		if err != nil || len(r) != 4 {
			return nil, fmt.Errorf("%s: no such element (%v)", sel, err)
		}
		beyond := true
		res, err := cdp.Call(ctx, tg, page.CaptureScreenshot, page.CaptureScreenshotParams{Format: page.CaptureScreenshotFormatPng,
			CaptureBeyondViewport: &beyond, Clip: &page.Viewport{X: r[0], Y: r[1], Width: r[2], Height: r[3], Scale: 1}})
		if err != nil {
			return nil, err
		}
		return res.Data, nil
	}
}

// artifactsDir is where the browser tests copy their screenshots and pages, so that they
// outlive the test's temporary directories: $COMMCAL_ARTIFACTS, else (a failed test's)
// commcal-report under the system's temporary directory.
func artifactsDir(t *testing.T) string {
	dir := os.Getenv("COMMCAL_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "commcal-report")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// keep copies files into the artifacts directory when the test ends and logs where they are:
// always when $COMMCAL_ARTIFACTS names one, else only when the test failed (a passing run leaves
// nothing behind). It runs as a cleanup, so a test stopped by t.Fatal keeps what it had made;
// files it never wrote are skipped.
func keep(t *testing.T, files ...string) {
	t.Helper()
	t.Cleanup(func() {
		if os.Getenv("COMMCAL_ARTIFACTS") == "" && !t.Failed() {
			return
		}
		dir := artifactsDir(t)
		for _, f := range files {
			data, err := os.ReadFile(f)
			if os.IsNotExist(err) {
				continue
			}
			if err != nil {
				t.Error(err)
				continue
			}
			dst := filepath.Join(dir, filepath.Base(f))
			if err := os.WriteFile(dst, data, 0o644); err != nil {
				t.Error(err)
				continue
			}
			t.Logf("kept %s", dst)
		}
	})
}

// TestReportInChromium opens the embedded sample's report, run with accuracy thresholds and a
// previous run as a nightly job runs, in headless Chromium as a reader would: no console
// errors; the health panel there, with every verdict; every table and figure laid out with a
// size; no element wider than the page, on screen and in print (where the contents are
// hidden); the accuracy table sorts by a click. Screenshots of the top of the report, the
// health panel and one figure are saved in the run directory (report-*.png).
func TestReportInChromium(t *testing.T) {
	b := openBrowser(t)
	dir := t.TempDir()
	prev := filepath.Join(dir, "last-night")
	pipelinetest.Sample(t, prev)
	prd, err := rundir.Read(prev)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "run")
	keep(t, filepath.Join(out, "report-top.png"), filepath.Join(out, "report-health.png"), filepath.Join(out, "report-figure.png"),
		filepath.Join(out, rundir.ReportFile))
	res := runSampleTonight(t, out, prd)
	screen, print := b.open(t, filepath.Join(out, rundir.ReportFile))
	// Tables: the health panel's thresholds, skipped, implausible and stopping rule; the
	// calibration, accuracy, measurements and sources.
	checkLayout(t, "report", screen, 8, len(res.Figures))
	checkLayout(t, "report in print", print, 8, len(res.Figures))
	if screen.Health < 200 || !screen.TOC || print.TOC {
		t.Errorf("health panel %g px high; contents shown %v on screen, %v in print", screen.Health, screen.TOC, print.TOC)
	}
	verdicts, err := chromedp.Run(b.ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll('#health ul.verdicts .badge')).map(e => e.textContent)`))
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprint([]string{"ALARM", "STEADY", "ALL RAN", "IMPLAUSIBLE", "NOISY", "SKEW"}); fmt.Sprint(verdicts) != want {
		t.Errorf("health verdicts %v, want %s", verdicts, want)
	}
	b.screenshot(t, "", out, "report-top.png", 1000)
	b.screenshot(t, "#health", out, "report-health.png", 800)
	b.screenshot(t, "#errors_cdf", out, "report-figure.png", 400)
	// Sorting: a click on "mean |ε| (%)" puts the lowest first (ackpath-alpha, 2.90% on N10-d1,
	// ahead of ackpath's, equal to the digits shown), a second click the highest
	// (hockney, 54.46% on N10-d3).
	sorted := func() (string, error) {
		return chromedp.Run(b.ctx, chromedp.Evaluate[string](`(() => { const h = Array.from(document.querySelectorAll('#accuracy-table th')).findIndex(th => th.textContent.startsWith('mean |ε|'));
  const r = document.querySelector('#accuracy-table tbody tr'); return r.cells[2].textContent.trim() + ' ' + r.cells[h].textContent; })()`))
	}
	if err := chromedp.Do(b.ctx, chromedp.Click(`#accuracy-table th:nth-child(6)`)); err != nil {
		t.Fatal(err)
	}
	first, _ := sorted()
	if err := chromedp.Do(b.ctx, chromedp.Click(`#accuracy-table th:nth-child(6)`)); err != nil {
		t.Fatal(err)
	}
	last, _ := sorted()
	if first != "ackpath-alpha ★ 2.90" || last != "hockney 54.46" {
		t.Errorf("sorted by mean |ε|: first %q, then reversed %q", first, last)
	}
	if errs := b.consoleErrors(); len(errs) > 0 {
		t.Errorf("console errors: %v", errs)
	}
}

// TestEveryFigureInChromium opens the report of a simulated run, which has the data of every
// figure, in Chromium: all ten figures laid out with a size, nothing wider than the page, no
// console errors.
func TestEveryFigureInChromium(t *testing.T) {
	b := openBrowser(t)
	out := simulatedRun(t, mustCluster(t, "ccpe-testbed"), t.TempDir())
	screen, _ := b.open(t, filepath.Join(out, rundir.ReportFile))
	checkLayout(t, "report", screen, 5, 10)
	if errs := b.consoleErrors(); len(errs) > 0 {
		t.Errorf("console errors: %v", errs)
	}
}
