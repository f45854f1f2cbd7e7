package pipeline

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/commcal/commcal/contention"
	"github.com/commcal/commcal/datasets"
	"github.com/commcal/commcal/estimate"
)

// runSample runs the embedded sample into out, dated 2026-11-21, with the measurement's notes.
func runSample(t *testing.T, out string) *Summary {
	t.Helper()
	return sampleRun(t, out, RunOptions{Created: time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)}).Summary
}

// sampleRun runs the embedded sample into out with the measurement's notes, the default
// stopping rule and parameters, and the creation time, thresholds and previous run of opts.
func sampleRun(t *testing.T, out string, opts RunOptions) *RunResult {
	t.Helper()
	cl, srcs, err := Sample()
	if err != nil {
		t.Fatal(err)
	}
	notes, err := SampleNotes()
	if err != nil {
		t.Fatal(err)
	}
	opts.Cluster, opts.Sources, opts.Out, opts.Rule, opts.Defaults, opts.Notes = cl, srcs, out, estimate.DefaultStoppingRule, contention.DefaultParams(), notes
	res, err := Run(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestRunSample(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "run")
	s := runSample(t, out)
	for _, f := range []string{RunSummaryJSON, RunSummaryText, RunMeasurementsFile, filepath.Join(RunDatasetDir, datasets.ManifestFile)} {
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
	saved, _ := os.ReadFile(filepath.Join(out, RunSummaryText))
	if !bytes.Equal(text.Bytes(), saved) || !strings.Contains(text.String(), "embedded:sample/measured") {
		t.Error("summary.txt differs from the printed summary")
	}
	// A second run into the same directory replaces it with identical bytes.
	before := readTree(t, out)
	runSample(t, out)
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

func TestCreatedHonoursSourceDateEpoch(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "1795219200")
	got, err := Created()
	if err != nil || !got.Equal(time.Unix(1795219200, 0)) {
		t.Errorf("Created() = %v, %v", got, err)
	}
	t.Setenv("SOURCE_DATE_EPOCH", "yesterday")
	if _, err := Created(); err == nil {
		t.Error("a non-numeric SOURCE_DATE_EPOCH was accepted")
	}
}
