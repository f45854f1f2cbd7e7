package pipeline_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/commcal/commcal/datasets"
	"github.com/commcal/commcal/pipeline/pipelinetest"
	"github.com/commcal/commcal/rundir"
)

func TestRunSample(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "run")
	s := pipelinetest.Sample(t, out).Summary
	for _, f := range []string{rundir.SummaryJSON, rundir.SummaryText, rundir.MeasurementsFile, filepath.Join(rundir.DatasetDir, datasets.ManifestFile)} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
	// The sample is measured TCP: every experiment of the catalogue, the summary's rows adding
	// up to the manifest's.
	exps := map[string]int{}
	rows := map[string]int64{}
	for _, e := range s.Experiments {
		exps[e.Experiment] += e.Measurements
		rows[e.Table] += int64(e.Rows)
	}
	for _, e := range []string{"p2p_sweep", "fair_intra", "fair_inter", "bidir_nic", "bidir_backbone", "static_sync", "random"} {
		if exps[e] == 0 {
			t.Errorf("the sample has no %s measurements", e)
		}
	}
	for _, ti := range s.Tables {
		if rows[ti.Name] != ti.Rows {
			t.Errorf("table %s: %d rows in the manifest, %d summarised", ti.Name, ti.Rows, rows[ti.Name])
		}
	}
	var text bytes.Buffer
	s.WriteText(&text)
	saved, _ := os.ReadFile(filepath.Join(out, rundir.SummaryText))
	if !bytes.Equal(text.Bytes(), saved) || !strings.Contains(text.String(), "embedded:sample/measured") {
		t.Error("summary.txt differs from the printed summary")
	}
	// A second run into the same directory replaces it with identical bytes.
	before := readTree(t, out)
	pipelinetest.Sample(t, out)
	if after := readTree(t, out); len(after) != len(before) {
		t.Errorf("second run wrote %d files, first %d", len(after), len(before))
	} else {
		for name, data := range before {
			if !bytes.Equal(after[name], data) {
				t.Errorf("%s differs between two runs on the same input", name)
			}
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("files left beside the run directory: %v", entries)
	}
}

func readTree(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			data, _ := os.ReadFile(p)
			rel, _ := filepath.Rel(dir, p)
			files[rel] = data
		}
		return err
	})
	return files
}
