package rundir

import (
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/commcal/commcal/contention"
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
