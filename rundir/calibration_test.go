package rundir

import (
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/contention"
	"github.com/commcal/commcal/datasets"
	"github.com/commcal/commcal/estimate"
	"github.com/commcal/commcal/internal/badinput"
)

// A calibration written with infinite bounds reads back with them, through null and the
// nonfinite flag; one of format commcal-calibration/1, with the strings it wrote, still reads;
// other formats are refused.
func TestCalibrationNonfiniteRoundTrip(t *testing.T) {
	dir := t.TempDir()
	inf := math.Inf(1)
	cal := &estimate.Calibration{Format: estimate.CalibrationFormat, Cluster: "ccpe-testbed", Params: contention.DefaultParams(),
		Fairness: []*estimate.FairnessFit{{Experiment: "fair_inter",
			Ceiling:  estimate.Param{Value: 9.4e8, CILow: 9.3e8, CIHigh: inf, N: 1},
			Capacity: estimate.Param{Value: inf, CILow: inf, CIHigh: inf}}}}
	if err := WriteCalibration(dir, cal); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, CalibrationFile)
	data, _ := os.ReadFile(path)
	if strings.Contains(string(data), `"inf"`) || !strings.Contains(string(data), `"ci_high": null`) ||
		!strings.Contains(string(data), `"format": "commcal-calibration/2"`) {
		t.Fatalf("calibration.json:\n%s", data)
	}
	back, err := ReadCalibration(path)
	if err != nil {
		t.Fatal(err)
	}
	f := back.Fairness[0]
	if f.Ceiling.CIHigh != inf || f.Ceiling.CILow != 9.3e8 || f.Capacity.Value != inf || f.Capacity.CILow != inf {
		t.Errorf("read back %+v %+v", f.Ceiling, f.Capacity)
	}

	legacy := strings.Replace(string(data), "commcal-calibration/2", "commcal-calibration/1", 1)
	legacy = regexp.MustCompile(`"ci_high": null,(\s*)"n": 1,\s*"nonfinite": \{\s*"ci_high": "\+inf"\s*\}`).
		ReplaceAllString(legacy, `"ci_high": "inf",$1"n": 1`)
	if legacy == strings.Replace(string(data), "commcal-calibration/2", "commcal-calibration/1", 1) {
		t.Fatalf("the legacy form was not made:\n%s", data)
	}
	os.WriteFile(path, []byte(legacy), 0o644)
	if back, err := ReadCalibration(path); err != nil || back.Fairness[0].Ceiling.CIHigh != inf {
		t.Errorf("legacy calibration: %v", err)
	}

	// A calibration of format 2's first layout, with each model's spread, opens, and keeps
	// nothing of it.
	modelSpreads := strings.Replace(string(data), `"params":`, `"prediction_spread": [{"model": "maxmin", "transfers": 40, "ratios": [0.9, 1.1]}], "params":`, 1)
	os.WriteFile(path, []byte(modelSpreads), 0o644)
	if back, err := ReadCalibration(path); err != nil || back.ModelSpreads != nil {
		t.Errorf("a calibration with prediction_spread: %+v, %v", back, err)
	}

	other := strings.Replace(string(data), "commcal-calibration/2", "commcal-calibration/3", 1)
	os.WriteFile(path, []byte(other), 0o644)
	if _, err := ReadCalibration(path); err == nil || !badinput.Is(err) || !strings.Contains(err.Error(), "commcal-calibration/3") {
		t.Errorf("format commcal-calibration/3: %v", err)
	}
	unflagged := regexp.MustCompile(`"nonfinite": \{\s*"ci_high": "\+inf"\s*\}`).ReplaceAllString(string(data), `"nonfinite": {}`)
	os.WriteFile(path, []byte(unflagged), 0o644)
	if _, err := ReadCalibration(path); err == nil || !badinput.Is(err) || !strings.Contains(err.Error(), "null without a nonfinite flag") {
		t.Errorf("a null without its flag: %v", err)
	}
}

// A calibration is refused, naming the file and the key, when a null stands where no
// nonfinite flag accounts for it (JSON decoding would read it as 0), when another tool or
// format wrote it, when a count is negative, or when a surface cell is given twice.
func TestCalibrationRefused(t *testing.T) {
	cal := &estimate.Calibration{Format: estimate.CalibrationFormat, Tool: "commcal", Cluster: "ccpe-testbed", Params: contention.DefaultParams(),
		Hockney: []estimate.HockneyFit{{Class: "intra-rack", Alpha: estimate.Param{Value: 1e-5, CILow: 0, CIHigh: math.Inf(1), N: 3}, R2: 0.99}}}
	cal.Params.NICBps = 9.4e8
	cal.Params.LatencyS = map[cluster.PathClass]float64{cluster.IntraRack: 5e-5}
	cal.Params.Learned = map[string]*contention.LearnedParams{"surface": {Surface: []contention.SurfaceCell{{Kind: "core", With: 1, Contra: 1, Factor: 0.9}}}}
	dir := t.TempDir()
	if err := WriteCalibration(dir, cal); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, CalibrationFile)
	good, _ := os.ReadFile(path)
	if _, err := ReadCalibration(path); err != nil {
		t.Fatalf("the calibration itself: %v", err)
	}
	for _, tc := range []struct{ name, old, new, want string }{
		{"null nic_bps", `"nic_bps": 940000000`, `"nic_bps": null`, `line 36, key "params.nic_bps": null, want a value or the key left out`},
		{"null latency_s", `"latency_s": {
      "intra-rack": 0.00005
    }`, `"latency_s": null`, `key "params.latency_s": null`},
		{"null latency of a class", `"intra-rack": 0.00005`, `"intra-rack": null`, `key "params.latency_s.intra-rack": null`},
		{"null r2", `"r2": 0.99`, `"r2": null`, `key "hockney[0].r2": null`},
		{"another tool", `"tool": "commcal"`, `"tool": "simgrid"`, `tool "simgrid", want "commcal": the calibration of another tool`},
		{"another format", `"format": "commcal-calibration/2"`, `"format": "commcal-accuracy/1"`, `format "commcal-accuracy/1", want "commcal-calibration/2"`},
		{"negative n", `"n": 3`, `"n": -3`, "n is -3, want a count of observations ≥ 0"},
		{"surface cell twice", `"factor": 0.9
          }`, `"factor": 0.9
          }, {"kind": "core", "with": 1, "contra": 1, "factor": 0.5}`, "surface[1]: the cell core with 1 and contra 1 is surface[0] again (factors 0.9 and 0.5)"},
	} {
		bad := strings.Replace(string(good), tc.old, tc.new, 1)
		if bad == string(good) {
			t.Errorf("%s: %q is not in the calibration:\n%s", tc.name, tc.old, good)
			continue
		}
		os.WriteFile(path, []byte(bad), 0o644)
		_, err := ReadCalibration(path)
		if err == nil || !badinput.Is(err) || !strings.HasPrefix(err.Error(), path+": ") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want bad input naming the file and saying %q", tc.name, err, tc.want)
		}
	}
	// A null that a nonfinite flag names is read: the Hockney α's upper bound.
	os.WriteFile(path, good, 0o644)
	if back, err := ReadCalibration(path); err != nil || !math.IsInf(back.Hockney[0].Alpha.CIHigh, 1) {
		t.Errorf("flagged null: %v", err)
	}
}

// lmo_links.parquet holds a row per pair and no infinite rate: a link whose rate the
// calibration does not identify has its rate columns at 0 and the reason in not_identified,
// beside the fitted 1/β the LMO model computes with.
func TestLMOLinksNotIdentified(t *testing.T) {
	inf := math.Inf(1)
	cal := &estimate.Calibration{Format: estimate.CalibrationFormat, Cluster: "ccpe-testbed", Params: contention.DefaultParams(),
		LMO: &estimate.LMOFit{Nodes: []estimate.LMONodeFit{{Name: "X1"}, {Name: "X2"}, {Name: "X3"}},
			Links: []estimate.LMOLinkFit{
				{I: "X1", J: "X2", RateBps: estimate.Param{Value: 8e8, CILow: 7.9e8, CIHigh: 8.1e8, N: 1},
					InverseRate: estimate.Param{Value: 1e-8, CILow: 0.99e-8, CIHigh: 1.01e-8, N: 1}},
				{I: "X1", J: "X3", RateBps: estimate.Param{Value: inf, CILow: inf, CIHigh: inf, N: 1}, NICBound: true,
					InverseRate: estimate.Param{Value: -3e-8, CILow: -3.5e-8, CIHigh: -2.5e-8, N: 1}}}},
		NotIdentified: []estimate.Unidentified{{Parameter: "lmo/link/X1-X3/rate_bps", Reason: "1/β = -30 ns/B is not positive"}}}
	dir := t.TempDir()
	if err := WriteCalibration(dir, cal); err != nil {
		t.Fatal(err)
	}
	rows, err := datasets.ReadParquetFile[LMOLinkRow](filepath.Join(dir, LMOLinksFile), lmoLinksTable)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 {
		t.Fatalf("%d rows, want 2", len(rows))
	}
	if r := rows[0]; r.Rate != 8e8 || r.High != 8.1e8 || r.InverseRate != 1e-8 || r.NotIdentified != "" {
		t.Errorf("identified link: %+v", r)
	}
	if r := rows[1]; r.Rate != 0 || r.Low != 0 || r.High != 0 || r.InverseRate != -3e-8 || r.InverseHigh != -2.5e-8 ||
		!strings.Contains(r.NotIdentified, "not positive") {
		t.Errorf("link not identified: %+v", r)
	}
}
