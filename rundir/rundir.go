package rundir

import (
	"errors"
	"os"
	"path/filepath"

	"github.com/commcal/commcal/datasets"
	"github.com/commcal/commcal/estimate"
	"github.com/commcal/commcal/internal/badinput"
	"github.com/commcal/commcal/validate"
)

// Run is what a run directory holds beside its dataset, read strictly: calibration.json,
// and accuracy.json with predictions.parquet when the run validated. A file that is present
// but unreadable, of another format, or inconsistent is an error naming it, never a silent
// gap; a file that is absent is nil.
type Run struct {
	Dir         string
	Calibration *estimate.Calibration
	Accuracy    *validate.Accuracy
	Predictions []validate.Row
}

// Read reads a run directory.
func Read(dir string) (*Run, error) {
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return nil, badinput.Errorf(dir, "not a run directory")
	}
	r := &Run{Dir: dir}
	var err error
	if _, err := os.Stat(filepath.Join(dir, CalibrationFile)); err == nil {
		if r.Calibration, err = ReadCalibration(filepath.Join(dir, CalibrationFile)); err != nil {
			return nil, err
		}
	}
	if r.Accuracy, err = ReadAccuracy(filepath.Join(dir, AccuracyFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	preds := filepath.Join(dir, PredictionsFile)
	if _, err := os.Stat(preds); err == nil {
		if r.Predictions, err = validate.ReadPredictions(preds); err != nil {
			return nil, badinput.Wrap(preds, err)
		}
	}
	if (r.Accuracy == nil) != (r.Predictions == nil) && (r.Accuracy == nil || r.Accuracy.Overall.Patterns > 0) {
		return nil, badinput.Errorf(dir, "holds one of %s and %s without the other", AccuracyFile, PredictionsFile)
	}
	return r, nil
}

// ReadCalibrated reads a run directory that must hold a calibration (what compare and
// run --previous read).
func ReadCalibrated(dir string) (*Run, error) {
	rd, err := Read(dir)
	if err == nil && rd.Calibration == nil {
		err = badinput.Errorf(dir, "not a run directory (one that commcal run writes): no %s", CalibrationFile)
	}
	return rd, err
}

// ReadAccuracy reads accuracy.json strictly; an absent file gives an error wrapping
// os.ErrNotExist.
func ReadAccuracy(path string) (*validate.Accuracy, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, err
	}
	acc := &validate.Accuracy{}
	if err := datasets.ReadJSONFile(path, acc); err != nil {
		return nil, badinput.Wrap(path, err)
	}
	if acc.Format != validate.AccuracyFormat {
		return nil, badinput.Errorf(path, "format %q, want %q", acc.Format, validate.AccuracyFormat)
	}
	return acc, nil
}

// CheckFormat checks the format tag of a run file that commcal writes and reads back. A file
// without a tag has the tagged layout and is read; another tag is another kind of file, or
// another version of it, and bad input.
func CheckFormat(path, got, want string) error {
	if got != "" && got != want {
		return badinput.Errorf(path, "format %q, want %q", got, want)
	}
	return nil
}
