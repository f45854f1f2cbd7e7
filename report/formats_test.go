package report_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/commcal/commcal/estimate"
	"github.com/commcal/commcal/internal/badinput"
	"github.com/commcal/commcal/report"
	"github.com/commcal/commcal/rundir"
)

// summary.json and health.json carry their format tags; another tag is refused, none is read.
func TestRunFileFormats(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		file, want string
		read       func(path string) error
	}{
		{rundir.SummaryJSON, rundir.SummaryFormat, func(path string) error {
			_, err := rundir.ReadSummary(filepath.Dir(path), nil, estimate.Inputs{})
			return err
		}},
		{rundir.HealthFile, report.HealthFormat, func(path string) error { _, err := report.ReadHealth(path); return err }},
	} {
		path := filepath.Join(dir, c.file)
		write := func(format string) {
			doc := `{"format": "` + format + `"}`
			if format == "" {
				doc = `{}`
			}
			if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		write(c.want)
		if err := c.read(path); err != nil {
			t.Errorf("%s with format %s: %v", c.file, c.want, err)
		}
		write("")
		if err := c.read(path); err != nil {
			t.Errorf("%s without a format: %v", c.file, err)
		}
		write("commcal-calibration/2")
		if err := c.read(path); err == nil || !badinput.Is(err) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s of another format: %v", c.file, err)
		}
	}
}
