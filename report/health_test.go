package report_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/commcal/commcal/contention"
	"github.com/commcal/commcal/estimate"
	"github.com/commcal/commcal/pipeline"
	"github.com/commcal/commcal/pipeline/pipelinetest"
	"github.com/commcal/commcal/report"
	"github.com/commcal/commcal/rundir"
	"github.com/commcal/commcal/validate"
)

// TestHealthOfTheSample runs the embedded sample with thresholds and a previous run whose NIC
// capacity was twice tonight's, and checks the health panel against what the sample is known
// to hold (its summary.txt in cmd/commcal/testdata/run.golden): 112 of 141 held-out
// measurements unconverged, negative Hockney α in both classes, no estimator skipped (the
// sample has every experiment), a largest start skew of 63.9 ms in the measurement's notes; the thresholds checked per
// model; the drift listed. Re-plotting the run directory gives the same report byte for byte.
func TestHealthOfTheSample(t *testing.T) {
	dir := t.TempDir()
	first := filepath.Join(dir, "first")
	pipelinetest.Sample(t, first)
	prev, err := rundir.Read(first)
	if err != nil {
		t.Fatal(err)
	}
	f := prev.Calibration.Fairness[0] // fair_intra
	f.Capacity.Value, f.Capacity.CILow, f.Capacity.CIHigh = 2*f.Capacity.Value, 2*f.Capacity.CILow, 2*f.Capacity.CIHigh

	out := filepath.Join(dir, "tonight")
	h := runSampleTonight(t, out, prev).Health
	if h.HeldOutMeasurements != 141 || h.HeldOutUnconverged != 112 {
		t.Errorf("held-out: %d of %d unconverged, want 112 of 141", h.HeldOutUnconverged, h.HeldOutMeasurements)
	}
	// One check per model for "all", one for asymmetric alone; asymmetric's share within
	// ±10% fails 80%, and the mean |ε| of penalty, penalty-table and hockney fail 25%.
	var failed []string
	for _, c := range h.Checks {
		if !c.Pass {
			failed = append(failed, c.Model+" "+c.Measure)
		}
	}
	if len(h.Checks) != len(contention.Models())+1 || !slices.Equal(failed, []string{"asymmetric " + report.MeasureWithin10, "penalty " + report.MeasureMeanAbsErr,
		"penalty-table " + report.MeasureMeanAbsErr, "hockney " + report.MeasureMeanAbsErr}) {
		t.Errorf("%d checks, failed %v", len(h.Checks), failed)
	}
	var skipped []string
	for _, s := range h.Skipped {
		skipped = append(skipped, s.Estimator)
	}
	if len(skipped) != 0 {
		t.Errorf("skipped %v", skipped)
	}
	var params []string
	for _, f := range h.Implausible {
		params = append(params, f.Parameter)
	}
	if !slices.Equal(params, []string{"hockney intra-rack α", "hockney inter-rack α"}) {
		t.Errorf("implausible %v", params)
	}
	if h.StartSkew == nil || h.StartSkew.Seconds != 0.0639 || h.StartSkew.Experiment != "random" {
		t.Errorf("start skew %+v", h.StartSkew)
	}
	for _, st := range h.Stopping {
		if want := map[string]string{"random": "unconverged"}[st.Experiment]; want != "" && st.Status != want {
			t.Errorf("%s: %s, want %s", st.Experiment, st.Status, want)
		}
	}
	if h.Previous == nil || h.Previous.Dir != first || !slices.Contains(h.Previous.Alarms, "drifted: fairness/fair_intra/capacity_bps") {
		t.Errorf("previous %+v", h.Previous)
	}
	page, err := os.ReadFile(filepath.Join(out, rundir.ReportFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`id="health"`, fmt.Sprintf("4 of %d checks failed", len(contention.Models())+1), "112 of 141 held-out measurements", "drifted: fairness/fair_intra/capacity_bps",
		"largest start skew 63.9 ms", "a latency cannot be negative"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("the report does not say %q", want)
		}
	}
	if _, err := report.Plot(context.Background(), out, report.PlotOptions{}); err != nil {
		t.Fatal(err)
	}
	again, _ := os.ReadFile(filepath.Join(out, rundir.ReportFile))
	if string(again) != string(page) {
		t.Error("plot on the run directory gives another report than the run wrote")
	}
}

// TestHealthFindsImplausibleRates: rates above the hardware's nominal rate and delays below
// zero are found, and estimates without a finite value are not judged.
func TestHealthFindsImplausibleRates(t *testing.T) {
	cl := mustCluster(t, "ccpe-testbed") // 1 Gb/s NICs, a 10 Gb/s backbone
	inf := estimate.Param{Value: math.Inf(1)}
	cal := &estimate.Calibration{
		Hockney: []estimate.HockneyFit{{Class: "intra-rack", Alpha: estimate.Param{Value: 5e-5}, Beta: estimate.Param{Value: 4e-9}}}, // 8/β = 2 Gbit/s
		Fairness: []*estimate.FairnessFit{
			{Experiment: "fair_intra", Ceiling: estimate.Param{Value: 9.4e8}, Capacity: estimate.Param{Value: 1.2e9}, Saturation: inf},
			{Experiment: "fair_inter", Ceiling: estimate.Param{Value: 9.4e8}, Capacity: estimate.Param{Value: 9.4e9}, Saturation: estimate.Param{Value: 0.5}},
		},
		LMO: &estimate.LMOFit{Nodes: []estimate.LMONodeFit{{Name: "X1", C: estimate.Param{Value: -1e-6}, T: estimate.Param{Value: 1e-9}}}},
	}
	var got []string
	for _, f := range report.Implausible(cl, cal) {
		got = append(got, f.Parameter)
	}
	want := []string{"hockney intra-rack 8/β", "fair_intra capacity", "fair_inter saturation k", "lmo X1 C"}
	if !slices.Equal(got, want) {
		t.Errorf("implausible %v, want %v", got, want)
	}
}

// runSampleTonight runs the embedded sample into out as a nightly job does, dated 2026-11-22:
// with the accuracy thresholds asymmetric:0.8 (--fail-below) and all:25% (--fail-above-error)
// and the previous run prev.
func runSampleTonight(t *testing.T, out string, prev *rundir.Run) *pipeline.RunResult {
	t.Helper()
	return pipelinetest.SampleWith(t, out, pipeline.RunOptions{Created: time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC), Previous: prev,
		Thresholds: []validate.Threshold{mustThreshold(t, "asymmetric:0.8", true), mustThreshold(t, "all:25%", false)}})
}

func mustThreshold(t *testing.T, spec string, below bool) validate.Threshold {
	t.Helper()
	th, err := validate.ParseThreshold(spec, below)
	if err != nil {
		t.Fatal(err)
	}
	return th
}

// TestReportTables reads the tables of the sample's report: the calibration, accuracy and
// measurement tables are HTML tables with units in their headers; the best model of each
// setting is starred (ackpath and ackpath-alpha, tied, on N4-d1 at 3.75% against asymmetric's
// 4.13%, and on N10-d1 at 3.07% against penalty-table's 3.44%; as run.golden shows); a setting
// without asymmetric transfers shows n/a, never 0.00%; the page loads nothing from outside and
// has a table of contents.
func TestReportTables(t *testing.T) {
	out := filepath.Join(t.TempDir(), "run")
	pipelinetest.Sample(t, out)
	data, err := os.ReadFile(filepath.Join(out, rundir.ReportFile))
	if err != nil {
		t.Fatal(err)
	}
	page := string(data)
	for _, want := range []string{`<table class="sortable" id="calibration-table">`, `<table class="sortable" id="accuracy-table">`,
		`<table class="sortable" id="measurements-table">`, `<th class="num">mean |ε| (%)</th>`, `<th class="num">shortest mean (s)</th>`,
		`<table class="sortable" id="situations-table">`, `<table class="sortable" id="sizes-table">`, `<td class="nowrap">[1 MiB, 2 MiB)</td>`,
		`<th class="num">ackpath-alpha median |error| (ms)</th>`,
		`<nav class="toc"`, `<a href="#health">`, `<a href="#accuracy">`, `@media print`} {
		if !strings.Contains(page, want) {
			t.Errorf("the report lacks %s", want)
		}
	}
	if strings.Contains(page, "<pre>") {
		t.Error("the report still shows a table as preformatted text")
	}
	starred := map[string][]string{}
	rows := regexp.MustCompile(`<tr class="[^"]*\bbest\b[^"]*"><td class="nowrap">([^<]+)</td><td class="num">\d+</td><td class="nowrap">([^<]+) <span class="star"`)
	for _, m := range rows.FindAllStringSubmatch(page, -1) {
		starred[m[1]] = append(starred[m[1]], m[2])
	}
	for _, setting := range []string{"N4-d1", "N10-d1"} {
		if got := starred[setting]; !slices.Equal(got, []string{"ackpath", "ackpath-alpha"}) {
			t.Errorf("%s best %v, want ackpath and ackpath-alpha", setting, got)
		}
	}
	// N10-d1 has no asymmetric transfers: its asym. mean |ε| is n/a on every model.
	n10 := regexp.MustCompile(`<td class="nowrap">N10-d1</td>.*<td class="num">0</td>(<td[^>]*>[^<]*</td>)</tr>`)
	cells := n10.FindAllStringSubmatch(page, -1)
	if len(cells) != len(contention.Models()) {
		t.Errorf("%d N10-d1 rows with no asymmetric transfers, want %d", len(cells), len(contention.Models()))
	}
	for _, c := range cells {
		if c[1] != `<td class="na">n/a</td>` {
			t.Errorf("N10-d1 asym. mean |ε| shown as %s", c[1])
		}
	}
	if regexp.MustCompile(`(src|href)="(https?:)?//`).MatchString(page) || strings.Contains(page, "<link") || strings.Contains(page, "<script src") {
		t.Error("the report loads something from outside itself")
	}
}
