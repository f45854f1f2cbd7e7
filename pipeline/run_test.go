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

func runSample(t *testing.T, out string) *Summary {
	t.Helper()
	cl, srcs, err := Sample()
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), RunOptions{Cluster: cl, Sources: srcs, Out: out, Rule: estimate.DefaultStoppingRule,
		Created: time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC), Defaults: contention.DefaultParams()})
	if err != nil {
		t.Fatal(err)
	}
	return res.Summary
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
	// The sample's real part: 6,620 graphene round trips over 490 sizes (README of the data).
	var pingpong *ExperimentSummary
	rows := map[string]int64{}
	for i, e := range s.Experiments {
		rows[e.Table] += int64(e.Rows)
		if e.Table == "roundtrips" && e.Experiment == "pingpong" {
			pingpong = &s.Experiments[i]
		}
	}
	if pingpong == nil || pingpong.Measurements != 490 || pingpong.Rows != 6620 || pingpong.MinBytes != 1 || pingpong.MaxBytes != 989921 {
		t.Errorf("graphene ping-pong summary %+v", pingpong)
	}
	for _, ti := range s.Tables {
		if rows[ti.Name] != ti.Rows {
			t.Errorf("table %s: %d rows in the manifest, %d summarised", ti.Name, ti.Rows, rows[ti.Name])
		}
	}
	// Synthetic part: 1% noise and 10 repetitions give a CI about 2·2.262·0.01/√10 = 1.43%
	// of the mean wide, so most synthetic measurements meet the 2% rule.
	for _, e := range s.Experiments {
		if e.Experiment == "pingpong" {
			continue
		}
		if e.Converged < e.Measurements*3/4 || e.MedianRelWidth < 0.01 || e.MedianRelWidth > 0.02 {
			t.Errorf("%s/%s: %d of %d converged, median CI width %.4f", e.Table, e.Experiment, e.Converged, e.Measurements, e.MedianRelWidth)
		}
	}
	var text bytes.Buffer
	s.WriteText(&text)
	saved, _ := os.ReadFile(filepath.Join(out, RunSummaryText))
	if !bytes.Equal(text.Bytes(), saved) || !strings.Contains(text.String(), "graphene_eth_PingPong.csv") {
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
