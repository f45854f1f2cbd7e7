package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/contention"
	"github.com/commcal/commcal/estimate"
	"github.com/commcal/commcal/export"
	"github.com/commcal/commcal/rundir"
)

// TestExportSimGrid exports a calibration given as a file with its cluster, twice into two
// directories (the same bytes), and checks the outputs and the refusals: an --out that
// commcal did not write, a calibration of another cluster, a run directory without its
// dataset, contradictory arguments.
func TestExportSimGrid(t *testing.T) {
	dir := t.TempDir()
	p := contention.DefaultParams()
	p.LatencyS = map[cluster.PathClass]float64{cluster.IntraRack: 5e-5, cluster.InterRack: 7e-5}
	cal := &estimate.Calibration{Format: estimate.CalibrationFormat, Cluster: "table1", Params: p}
	calDir := filepath.Join(dir, "calib")
	if err := os.MkdirAll(calDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := rundir.WriteCalibration(calDir, cal); err != nil {
		t.Fatal(err)
	}
	calFile := filepath.Join(calDir, rundir.CalibrationFile)
	var first []byte
	for _, out := range []string{"sg1", "sg2"} {
		code, stdout, stderr := runCLI(t, "export", "simgrid", "--cluster", "testdata/table1.toml", "--calibration", calFile, "--out", filepath.Join(dir, out))
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		if !strings.Contains(stdout, "SimGrid platform of cluster table1 written to") || !strings.Contains(stdout, "omitted smpi/os") {
			t.Errorf("stdout:\n%s", stdout)
		}
		for _, f := range []string{export.PlatformFile, export.HostFile, export.MaxMinFile, export.SMPIFile, export.SummaryFile} {
			data, err := os.ReadFile(filepath.Join(dir, out, f))
			if err != nil || len(data) == 0 {
				t.Fatalf("%s: %v (%d bytes)", f, err, len(data))
			}
		}
		platform, _ := os.ReadFile(filepath.Join(dir, out, export.PlatformFile))
		if first == nil {
			first = platform
		} else if !bytes.Equal(first, platform) {
			t.Error("two exports of the same calibration differ")
		}
	}
	// The platform carries the calibration's latencies: NICs α_intra/2, the cable the rest
	// (7e-5 − 5e-5 in floating point), at 0.94 × 940 Mbit/s.
	if !bytes.Contains(first, []byte(`<link id="nic-X1" bandwidth="1.1045e+08Bps" latency="2.5e-05s" sharing_policy="SPLITDUPLEX">`)) ||
		!bytes.Contains(first, []byte(`<link id="backbone" bandwidth="1.1045e+08Bps" latency="1.999999999999999e-05s" sharing_policy="SPLITDUPLEX">`)) {
		t.Errorf("platform.xml:\n%s", first)
	}

	mine := filepath.Join(dir, "mine")
	write(t, filepath.Join(mine, "notes.txt"), "keep me")
	mismatch := filepath.Join(dir, "other.toml")
	b, _ := os.ReadFile("testdata/table1.toml")
	write(t, mismatch, strings.Replace(string(b), `name = "table1"`, `name = "other"`, 1))
	for _, c := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"out not ours", []string{"--cluster", "testdata/table1.toml", "--calibration", calFile, "--out", mine}, 2, "mine"},
		{"other cluster", []string{"--cluster", mismatch, "--calibration", calFile, "--out", filepath.Join(dir, "x")}, 2, "a calibration of cluster table1"},
		{"run dir without dataset", []string{"--out", filepath.Join(dir, "y"), calDir}, 2, "give --cluster"},
		{"both", []string{"--calibration", calFile, "--out", filepath.Join(dir, "z"), calDir}, 2, "choose one"},
		{"calibration without cluster", []string{"--calibration", calFile, "--out", filepath.Join(dir, "z")}, 2, "needs --cluster"},
		{"latency mode", []string{"--cluster", "testdata/table1.toml", "--calibration", calFile, "--latency", "half", "--out", filepath.Join(dir, "z")}, 2, `latency "half"`},
	} {
		code, _, stderr := runCLI(t, append([]string{"export", "simgrid"}, c.args...)...)
		if code != c.code || !strings.Contains(stderr, c.want) {
			t.Errorf("%s: exit %d, stderr %q; want %d naming %q", c.name, code, stderr, c.code, c.want)
		}
	}
	if got, _ := os.ReadFile(filepath.Join(mine, "notes.txt")); string(got) != "keep me" {
		t.Errorf("the refused --out was changed: %q", got)
	}
	for _, d := range []string{"x", "y", "z"} {
		if _, err := os.Stat(filepath.Join(dir, d)); err == nil {
			t.Errorf("a refused export left %s behind", d)
		}
	}
	// A run directory with its dataset gives the cluster itself.
	code, _, stderr := runCLI(t, "run", "--out", filepath.Join(dir, "run"))
	if code != 0 {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	code, stdout, stderr := runCLI(t, "export", "simgrid", "--latency", "none", "--out", filepath.Join(dir, "fromrun"), filepath.Join(dir, "run"))
	if code != 0 || !strings.Contains(stdout, "cluster lab") || !strings.Contains(stdout, "latency: none") {
		t.Fatalf("export from a run: exit %d\n%s\n%s", code, stdout, stderr)
	}
}
