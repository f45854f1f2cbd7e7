package report_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/contention"
	"github.com/commcal/commcal/pipeline/pipelinetest"
	"github.com/commcal/commcal/report"
)

// simulatedRun simulates a cluster (seed 1, 1% noise, 10 repetitions) and runs the pipeline on
// it into dir/run.
func simulatedRun(t *testing.T, cl *cluster.Cluster, dir string) string {
	t.Helper()
	return pipelinetest.Simulated(t, cl, dir, "run")
}

// TestCompareFlagsNICChange compares two simulated clusters whose true NIC rates differ by 10%
// (same seed, so the same noise draws): the NIC's capacity is flagged, and every flagged
// parameter is one that the NIC rate changes in the truth.
func TestCompareFlagsNICChange(t *testing.T) {
	base, _ := cluster.LoadNamed("ccpe-testbed")
	d := base.Description()
	d.NICRateBps *= 1.1
	faster, err := cluster.New(d)
	if err != nil {
		t.Fatal(err)
	}
	a := simulatedRun(t, base, filepath.Join(t.TempDir(), "a"))
	b := simulatedRun(t, faster, filepath.Join(t.TempDir(), "b"))
	cmp, err := report.Compare(context.Background(), []string{a, b}, filepath.Join(t.TempDir(), "cmp"))
	if err != nil {
		t.Fatal(err)
	}
	// What a NIC rate changes in the generator's truth: Hockney β (0.94 of the NIC rate), the
	// per-flow ceiling and the NIC capacity (the learned models' nic_bps too), the saturation
	// point of the backbone (capacity over ceiling), and the LMO link rates (drawn as a share of
	// the NIC rate).
	changes := func(name string) bool {
		return strings.HasSuffix(name, "beta_s_per_byte") || strings.HasSuffix(name, "ceiling_bps") || strings.HasSuffix(name, "/nic_bps") ||
			name == "fairness/fair_intra/capacity_bps" || name == "fairness/fair_inter/saturation_k" ||
			strings.HasPrefix(name, "lmo/link/")
	}
	if !slices.Contains(cmp.Drifted, "fairness/fair_intra/capacity_bps") {
		t.Errorf("the NIC capacity was not flagged; drifted: %v", cmp.Drifted)
	}
	for _, name := range cmp.Drifted {
		if !changes(name) {
			t.Errorf("%s flagged, but the truth did not change it", name)
		}
	}
	for _, p := range cmp.Params {
		if p.Name == "fairness/fair_intra/capacity_bps" && (p.RelChange[1] < 0.09 || p.RelChange[1] > 0.11) {
			t.Errorf("NIC capacity changed by %.3f, truth 0.10", p.RelChange[1])
		}
	}
	if len(cmp.Params) < 50 || len(cmp.Accuracy) != len(contention.Models()) {
		t.Errorf("%d parameters, %d models compared", len(cmp.Params), len(cmp.Accuracy))
	}
	t.Logf("drifted: %v", cmp.Drifted)
}

// TestCompareFiveNights is a nightly trend: five simulated nights of the CCPE testbed (1%
// noise), the NICs 10% slower on the fourth night only. The nights share their noise draws, so
// that the NIC is all that changes: with draws of their own (seeds 1 to 5), one of some 80
// parameters' intervals misses the first night's on night 2 (LMO C of Y1), the expected rate
// of false alarms of a per-parameter 95% rule over many parameters. Compared with the first
// night, the fourth is flagged as drift and no other; its NIC capacity is the parameter that
// drifted; the page marks the fourth night and draws a trend figure per estimator and one of
// the accuracy, which mark it too (a dashed red line at run 4).
func TestCompareFiveNights(t *testing.T) {
	base := mustCluster(t, "ccpe-testbed")
	d := base.Description()
	d.NICRateBps *= 0.9
	slow, err := cluster.New(d)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var runs []string
	for night := 1; night <= 5; night++ {
		cl := base
		if night == 4 {
			cl = slow
		}
		runs = append(runs, pipelinetest.Simulated(t, cl, dir, fmt.Sprintf("night-%d", night)))
	}
	out := filepath.Join(dir, "history")
	cmp, err := report.Compare(context.Background(), runs, out)
	if err != nil {
		t.Fatal(err)
	}
	if want := []bool{false, false, false, true, false}; !slices.Equal(cmp.RunDrift, want) {
		t.Errorf("nights flagged %v, want %v; alarms %v", cmp.RunDrift, want, cmp.Alarms())
	}
	for _, p := range cmp.Params {
		if p.Name == "fairness/fair_intra/capacity_bps" && (!p.Drift[3] || p.RelChange[3] > -0.09 || p.RelChange[3] < -0.11) {
			t.Errorf("NIC capacity on night 4: drift %v, change %.3f, truth -0.10", p.Drift[3], p.RelChange[3])
		}
	}
	page, err := os.ReadFile(filepath.Join(out, report.CompareHTML))
	if err != nil {
		t.Fatal(err)
	}
	// The runs table: night 4 is the one row marked DRIFT.
	rows := regexp.MustCompile(`<tr( class="drifted")?><td class="num">(\d)</td><td class="wrap"><code>[^<]*night-\d</code></td><td>ccpe-testbed</td><td>(.*?)</td><td class="num">\d+</td></tr>`).
		FindAllStringSubmatch(string(page), -1)
	if len(rows) != 5 {
		t.Fatalf("%d runs in the page's table, want 5", len(rows))
	}
	for _, r := range rows {
		marked := r[1] != "" && strings.Contains(r[3], "DRIFT")
		if marked != (r[2] == "4") {
			t.Errorf("run %s: marked as drift %v", r[2], marked)
		}
	}
	for _, name := range []string{"trend_hockney", "trend_fairness", "trend_contra", "trend_lmo_nodes", "trend_lmo_links", "trend_thresholds", "trend_l", "trend_learned", "trend_accuracy"} {
		svg, err := os.ReadFile(filepath.Join(out, name+".svg"))
		if err != nil {
			t.Error(err)
			continue
		}
		if !strings.Contains(string(page), `<figure id="`+name+`">`) {
			t.Errorf("the page does not show %s", name)
		}
		// The flagged night's dashed red line: x of run 4 in every panel.
		if !strings.Contains(string(svg), "stroke:#D62728;stroke-dasharray:3,2") {
			t.Errorf("%s does not mark the drifted night", name)
		}
	}
	// The page in Chromium: every table and figure (9 trends, 10 overlaid error
	// distributions: one per model) visible, nothing wider than the page, no console errors.
	b := openBrowser(t)
	keep(t, filepath.Join(out, "compare-trend.png"), filepath.Join(out, report.CompareHTML))
	screen, _ := b.open(t, filepath.Join(out, report.CompareHTML))
	checkLayout(t, "compare.html", screen, 3, 9+len(contention.Models()))
	b.screenshot(t, "#trend_fairness", out, "compare-trend.png", 600)
	if errs := b.consoleErrors(); len(errs) > 0 {
		t.Errorf("console errors: %v", errs)
	}
}
