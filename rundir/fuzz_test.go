package rundir

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/commcal/commcal/contention"
	"github.com/commcal/commcal/estimate"
	"github.com/commcal/commcal/internal/badinput"
	"github.com/commcal/commcal/validate"
)

// seedJSON encodes v for a fuzz seed.
func seedJSON(f *testing.F, v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		f.Fatal(err)
	}
	return b
}

// FuzzRead feeds arbitrary calibration.json and accuracy.json contents to the strict
// run-directory reader (what compare and plot read): it must return the run or bad input
// naming a file, never panic and never an error of another kind.
func FuzzRead(f *testing.F) {
	cal := seedJSON(f, estimate.Calibration{Format: estimate.CalibrationFormat, Cluster: "ccpe-testbed", Params: contention.DefaultParams()})
	acc := seedJSON(f, validate.Accuracy{Format: validate.AccuracyFormat, HeldOut: []string{"random"}, Params: contention.DefaultParams()})
	f.Add(cal, acc)
	f.Add(cal, []byte(`{"format": "commcal-accuracy/1"} {}`))
	f.Add([]byte(`{"format": "commcal-calibration/1", "cluster": "x", "params": {"latency_s": {"inter-rack": -1}}}`), acc)
	f.Add([]byte(`{"format": "commcal-calibration/1", "format": "x"}`), []byte(`null`))
	f.Fuzz(func(t *testing.T, calData, accData []byte) {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, CalibrationFile), calData, 0o644)
		if len(accData) > 0 {
			os.WriteFile(filepath.Join(dir, AccuracyFile), accData, 0o644)
		}
		rd, err := Read(dir)
		if err != nil {
			if !badinput.Is(err) {
				t.Fatalf("error that is not bad input: %v", err)
			}
			return
		}
		if rd.Calibration == nil {
			t.Fatal("a run directory with a calibration.json read without it")
		}
		if err := rd.Calibration.Params.Validate(); err != nil {
			t.Fatalf("accepted invalid parameters: %v", err)
		}
	})
}
