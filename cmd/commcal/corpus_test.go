package main

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// copyTree copies the directory src to dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// snapshot is every entry under dir (links and directories included) with its content.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	s := map[string]string{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			s[rel] = "link:" + target
		case d.IsDir():
			s[rel] = "dir"
		default:
			b, _ := os.ReadFile(p)
			s[rel] = string(b)
		}
		return nil
	})
	return s
}

const goodParams = `{"efficiency": 0.94, "contra_factor": 1}`

// TestBadInputCorpus runs malformed inputs of every surface but the measurement logs (which
// TestIngestRejectsBadInput covers): output paths, cluster files, pattern files, parameters,
// calibrations, dataset and run directories, flags. Each must exit with its status, print one
// line on stderr naming the culprit, print nothing on stdout, and change nothing on disk:
// every earlier output stays byte for byte.
func TestBadInputCorpus(t *testing.T) {
	base := t.TempDir()
	sim := simulated(t, base, "--reps", "3")
	run := filepath.Join(base, "run")
	if code, _, stderr := runCLI(t, "run", "--out", run, sim); code != 0 {
		t.Fatal(stderr)
	}
	withSim := func(t *testing.T, d string) { copyTree(t, sim, filepath.Join(d, "sim")) }
	withRun := func(t *testing.T, d string) { copyTree(t, run, filepath.Join(d, "run")) }
	withPattern := func(t *testing.T, d string) {
		write(t, filepath.Join(d, "p.csv"), "src,dst,bytes\nX1,Y2,10e6\nX1,X2,20e6\n")
	}
	cases := []struct {
		name  string
		setup func(t *testing.T, d string)
		args  []string // "{d}" is the case's directory
		code  int
		want  string // in the one-line message: the culprit's name
	}{
		// Output paths.
		{"run over a user's directory", func(t *testing.T, d string) { write(t, filepath.Join(d, "thesis", "thesis.tex"), "\\begin{document}") },
			[]string{"run", "--out", "{d}/thesis"}, exitBadInput, "not written by commcal"},
		{"run over a regular file", func(t *testing.T, d string) { write(t, filepath.Join(d, "notes.txt"), "mine") },
			[]string{"run", "--out", "{d}/notes.txt"}, exitBadInput, "notes.txt"},
		{"estimate over a user's directory", func(t *testing.T, d string) {
			withSim(t, d)
			write(t, filepath.Join(d, "thesis", "thesis.tex"), "x")
		}, []string{"estimate", "--out", "{d}/thesis", "{d}/sim"}, exitBadInput, "not written by commcal"},
		{"run over its input through a symlink", func(t *testing.T, d string) {
			withSim(t, d)
			os.Symlink(filepath.Join(d, "sim"), filepath.Join(d, "sim-link"))
		}, []string{"run", "--force", "--out", "{d}/sim", "{d}/sim-link"}, exitBadInput, "never replaces its input"},
		{"run into its input", withSim, []string{"run", "--force", "--out", "{d}/sim/run", "{d}/sim"}, exitBadInput, "inside the input"},
		{"run over a symlink", func(t *testing.T, d string) {
			withRun(t, d)
			os.Symlink(filepath.Join(d, "run"), filepath.Join(d, "run-link"))
		}, []string{"run", "--out", "{d}/run-link"}, exitBadInput, "symbolic link"},
		{"predict --parquet over its pattern", withPattern,
			[]string{"predict", "--cluster", "ccpe-testbed", "--force", "--parquet", "{d}/p.csv", "{d}/p.csv"}, exitBadInput, "never replaces its input"},
		{"predict --parquet over a file", func(t *testing.T, d string) { withPattern(t, d); write(t, filepath.Join(d, "x.parquet"), "x") },
			[]string{"predict", "--cluster", "ccpe-testbed", "--parquet", "{d}/x.parquet", "{d}/p.csv"}, exitBadInput, "--force"},
		{"ingest over a dataset", withSim, []string{"ingest", "--cluster", "ccpe-testbed", "--out", "{d}/sim", filepath.Join(sim, "transfers.parquet")}, exitBadInput, "--force"},
		{"simulate over a dataset", withSim, []string{"simulate", "--cluster", "ccpe-testbed", "--out", "{d}/sim"}, exitBadInput, "--force"},
		{"validate over its dataset", withSim, []string{"validate", "--force", "--out", "{d}/sim", "{d}/sim"}, exitBadInput, "never replaces its input"},
		{"compare over one of its runs", withRun, []string{"compare", "--out", "{d}/run", "{d}/run", "{d}/run"}, exitBadInput, "never replaces its input"},
		{"plot into a user's directory", func(t *testing.T, d string) { write(t, filepath.Join(d, "mine", "a.txt"), "x") },
			[]string{"plot", "{d}/mine"}, exitBadInput, "not written by commcal"},
		{"no --out", nil, []string{"estimate", "--out", "", filepath.Join(sim)}, exitBadInput, "--out"},

		// Cluster descriptions.
		{"missing cluster file", withPattern, []string{"predict", "--cluster", "{d}/nope.toml", "{d}/p.csv"}, exitBadInput, "nope.toml"},
		{"cluster TOML syntax", func(t *testing.T, d string) {
			withPattern(t, d)
			write(t, filepath.Join(d, "c.toml"), "name = \n[[racks]\n")
		},
			[]string{"predict", "--cluster", "{d}/c.toml", "{d}/p.csv"}, exitBadInput, "c.toml"},
		{"cluster of 16 million nodes", func(t *testing.T, d string) {
			withPattern(t, d)
			var b strings.Builder
			b.WriteString("name = \"huge\"\nnic_rate_bps = 1e9\nbackbone_rate_bps = 1e10\n")
			for r := range 16 {
				b.WriteString("[[racks]]\nname = \"r" + string(rune('a'+r)) + "\"\nnodes = \"n" + string(rune('a'+r)) + "[1-1048576]\"\n")
			}
			write(t, filepath.Join(d, "huge.toml"), b.String())
		}, []string{"predict", "--cluster", "{d}/huge.toml", "{d}/p.csv"}, exitBadInput, "huge.toml"},
		{"cluster JSON with a trailing document", func(t *testing.T, d string) {
			withPattern(t, d)
			write(t, filepath.Join(d, "c.json"), `{"name": "x", "racks": []} {"name": "y"}`)
		}, []string{"predict", "--cluster", "{d}/c.json", "{d}/p.csv"}, exitBadInput, "c.json"},

		// Pattern files.
		{"pattern with an unknown node", func(t *testing.T, d string) { write(t, filepath.Join(d, "p.csv"), "src,dst,bytes\nX1,Q9,10\n") },
			[]string{"predict", "--cluster", "ccpe-testbed", "{d}/p.csv"}, exitBadInput, "p.csv"},
		{"pattern with zero bytes", func(t *testing.T, d string) { write(t, filepath.Join(d, "p.csv"), "src,dst,bytes\nX1,Y1,0\n") },
			[]string{"predict", "--cluster", "ccpe-testbed", "{d}/p.csv"}, exitBadInput, "p.csv"},
		{"pattern from a node to itself", func(t *testing.T, d string) { write(t, filepath.Join(d, "p.csv"), "src,dst,bytes\nX1,X1,10\n") },
			[]string{"predict", "--cluster", "ccpe-testbed", "{d}/p.csv"}, exitBadInput, "p.csv"},
		{"empty pattern", func(t *testing.T, d string) { write(t, filepath.Join(d, "p.csv"), "src,dst,bytes\n") },
			[]string{"predict", "--cluster", "ccpe-testbed", "{d}/p.csv"}, exitBadInput, "p.csv"},
		{"pattern JSON with a duplicate key", func(t *testing.T, d string) {
			write(t, filepath.Join(d, "p.json"), `{"flows": [{"src": "X1", "dst": "Y1", "bytes": 10, "bytes": 20}]}`)
		}, []string{"predict", "--cluster", "ccpe-testbed", "{d}/p.json"}, exitBadInput, "p.json"},
		{"missing pattern", nil, []string{"predict", "--cluster", "ccpe-testbed", "{d}/none.csv"}, exitBadInput, "none.csv"},

		// Parameters.
		{"params not JSON", func(t *testing.T, d string) {
			withPattern(t, d)
			write(t, filepath.Join(d, "params.json"), "efficiency=1")
		},
			[]string{"predict", "--cluster", "ccpe-testbed", "--params", "{d}/params.json", "{d}/p.csv"}, exitBadInput, "params.json"},
		{"params with an unknown key", func(t *testing.T, d string) {
			withPattern(t, d)
			write(t, filepath.Join(d, "params.json"), `{"eficiency": 0.9}`)
		},
			[]string{"predict", "--cluster", "ccpe-testbed", "--params", "{d}/params.json", "{d}/p.csv"}, exitBadInput, "params.json"},
		{"params with a negative latency", func(t *testing.T, d string) {
			withPattern(t, d)
			write(t, filepath.Join(d, "params.json"), `{"efficiency": 0.94, "contra_factor": 1, "latency_s": {"inter-rack": -7.98}}`)
		}, []string{"predict", "--cluster", "ccpe-testbed", "--params", "{d}/params.json", "{d}/p.csv"}, exitBadInput, "params.json"},
		{"params with a negative inverse bandwidth", func(t *testing.T, d string) {
			withPattern(t, d)
			write(t, filepath.Join(d, "params.json"), `{"efficiency": 0.94, "contra_factor": 1, "inverse_bandwidth_s_per_byte": {"intra-rack": -1e-8}}`)
		}, []string{"predict", "--cluster", "ccpe-testbed", "--params", "{d}/params.json", "{d}/p.csv"}, exitBadInput, "params.json"},
		{"params with a null capacity, which would read as the default", func(t *testing.T, d string) {
			withPattern(t, d)
			write(t, filepath.Join(d, "params.json"), `{"nic_bps": null}`)
		}, []string{"predict", "--cluster", "ccpe-testbed", "--params", "{d}/params.json", "{d}/p.csv"}, exitBadInput, `key "nic_bps": null`},
		{"params with a misspelled path class", func(t *testing.T, d string) {
			withPattern(t, d)
			write(t, filepath.Join(d, "params.json"), `{"efficiency": 0.94, "contra_factor": 1, "latency_s": {"inter_rack": 1e-4}}`)
		}, []string{"predict", "--cluster", "ccpe-testbed", "--params", "{d}/params.json", "{d}/p.csv"}, exitBadInput, "params.json"},
		{"params with a duplicate key", func(t *testing.T, d string) {
			withPattern(t, d)
			write(t, filepath.Join(d, "params.json"), `{"efficiency": 0.94, "efficiency": 0.5}`)
		}, []string{"predict", "--cluster", "ccpe-testbed", "--params", "{d}/params.json", "{d}/p.csv"}, exitBadInput, "params.json"},
		{"params with a trailing document", func(t *testing.T, d string) {
			withPattern(t, d)
			write(t, filepath.Join(d, "params.json"), goodParams+"\n"+goodParams)
		}, []string{"predict", "--cluster", "ccpe-testbed", "--params", "{d}/params.json", "{d}/p.csv"}, exitBadInput, "params.json"},
		{"contra factor out of range", withPattern, []string{"predict", "--cluster", "ccpe-testbed", "--contra-factor", "1.5", "{d}/p.csv"}, exitBadInput, "contra"},
		{"efficiency out of range", withPattern, []string{"predict", "--cluster", "ccpe-testbed", "--efficiency", "2", "{d}/p.csv"}, exitBadInput, "efficiency"},

		// Calibrations.
		{"calibration not JSON", func(t *testing.T, d string) { withSim(t, d); write(t, filepath.Join(d, "cal.json"), "{") },
			[]string{"validate", "--calibration", "{d}/cal.json", "--out", "{d}/val", "{d}/sim"}, exitBadInput, "cal.json"},
		{"calibration of another format", func(t *testing.T, d string) {
			withSim(t, d)
			write(t, filepath.Join(d, "cal.json"), `{"format": "x/1"}`)
		},
			[]string{"validate", "--calibration", "{d}/cal.json", "--out", "{d}/val", "{d}/sim"}, exitBadInput, "cal.json"},
		{"calibration missing", withSim, []string{"validate", "--calibration", "{d}/cal.json", "--out", "{d}/val", "{d}/sim"}, exitBadInput, "cal.json"},
		{"calibration with a negative latency", func(t *testing.T, d string) {
			withSim(t, d)
			b, _ := os.ReadFile(filepath.Join(run, "calibration.json"))
			var cal map[string]any
			if err := json.Unmarshal(b, &cal); err != nil {
				t.Fatal(err)
			}
			cal["params"].(map[string]any)["latency_s"] = map[string]float64{"inter-rack": -1}
			b, _ = json.Marshal(cal)
			write(t, filepath.Join(d, "cal.json"), string(b))
		}, []string{"validate", "--calibration", "{d}/cal.json", "--out", "{d}/val", "{d}/sim"}, exitBadInput, "cal.json"},
		{"calibration with a trailing document", func(t *testing.T, d string) {
			withSim(t, d)
			b, _ := os.ReadFile(filepath.Join(run, "calibration.json"))
			write(t, filepath.Join(d, "cal.json"), string(b)+"{}")
		}, []string{"validate", "--calibration", "{d}/cal.json", "--out", "{d}/val", "{d}/sim"}, exitBadInput, "cal.json"},

		// Run directories.
		{"compare a run with a corrupt accuracy.json", func(t *testing.T, d string) {
			withRun(t, d)
			write(t, filepath.Join(d, "run", "accuracy.json"), "{\"format\":")
		},
			[]string{"compare", "--out", "{d}/cmp", "{d}/run", filepath.Join(run)}, exitBadInput, "accuracy.json"},
		{"compare a run with a corrupt predictions.parquet", func(t *testing.T, d string) {
			withRun(t, d)
			write(t, filepath.Join(d, "run", "predictions.parquet"), "PAR1xxxxPAR1")
		},
			[]string{"compare", "--out", "{d}/cmp", "{d}/run", run}, exitBadInput, "predictions.parquet"},
		{"compare a run without accuracy.json but with predictions", func(t *testing.T, d string) { withRun(t, d); os.Remove(filepath.Join(d, "run", "accuracy.json")) },
			[]string{"compare", "--out", "{d}/cmp", "{d}/run", run}, exitBadInput, "run"},
		{"compare a directory that is no run", func(t *testing.T, d string) { write(t, filepath.Join(d, "x", "a"), "") },
			[]string{"compare", "--out", "{d}/cmp", "{d}/x", run}, exitBadInput, "calibration.json"},
		{"plot a run with a corrupt calibration", func(t *testing.T, d string) {
			withRun(t, d)
			write(t, filepath.Join(d, "run", "calibration.json"), "[]")
		},
			[]string{"plot", "{d}/run"}, exitBadInput, "calibration.json"},
		{"plot a run without its dataset", func(t *testing.T, d string) { withRun(t, d); os.RemoveAll(filepath.Join(d, "run", "dataset")) },
			[]string{"plot", "{d}/run"}, exitBadInput, "run"},
		{"run --previous that is no run", func(t *testing.T, d string) { write(t, filepath.Join(d, "x", "a"), "") },
			[]string{"run", "--previous", "{d}/x", "--out", "{d}/new"}, exitBadInput, "x"},

		// Dataset directories.
		{"estimate on a directory that is no dataset", func(t *testing.T, d string) { write(t, filepath.Join(d, "x", "a"), "") },
			[]string{"estimate", "--out", "{d}/cal", "{d}/x"}, exitBadInput, "x"},
		{"estimate on a dataset with a corrupt manifest", func(t *testing.T, d string) { withSim(t, d); write(t, filepath.Join(d, "sim", "manifest.json"), "{}") },
			[]string{"estimate", "--out", "{d}/cal", "{d}/sim"}, exitBadInput, "manifest.json"},
		{"estimate on a dataset whose table was swapped", func(t *testing.T, d string) {
			withSim(t, d)
			b, _ := os.ReadFile(filepath.Join(d, "sim", "roundtrips.parquet"))
			write(t, filepath.Join(d, "sim", "transfers.parquet"), string(b))
		}, []string{"estimate", "--out", "{d}/cal", "{d}/sim"}, exitBadInput, "transfers.parquet"},
		{"run on a dataset with a truncated table", func(t *testing.T, d string) {
			withSim(t, d)
			p := filepath.Join(d, "sim", "transfers.parquet")
			b, _ := os.ReadFile(p)
			write(t, p, string(b[:len(b)/2]))
		}, []string{"run", "--out", "{d}/r", "{d}/sim"}, exitBadInput, "transfers.parquet"},

		// Flags.
		{"held-out calibration experiment", withSim, []string{"validate", "--held-out", "static_sync", "--out", "{d}/val", "{d}/sim"}, exitBadInput, "static_sync"},
		{"held-out unknown experiment", withSim, []string{"run", "--held-out", "randm", "--out", "{d}/r", "{d}/sim"}, exitBadInput, "randm"},
		{"malformed alarm threshold", withSim, []string{"validate", "--fail-below", "asymmetric", "--out", "{d}/val", "{d}/sim"}, exitBadInput, "--fail-below"},
		{"drift alarm without a previous run", withSim, []string{"run", "--fail-on-drift", "--out", "{d}/r", "{d}/sim"}, exitBadInput, "--previous"},
		{"bad SOURCE_DATE_EPOCH", withSim, []string{"estimate", "--out", "{d}/cal", "{d}/sim"}, exitBadInput, "SOURCE_DATE_EPOCH"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := t.TempDir()
			if tc.setup != nil {
				tc.setup(t, d)
			}
			if tc.name == "bad SOURCE_DATE_EPOCH" {
				t.Setenv("SOURCE_DATE_EPOCH", "yesterday")
			}
			before := snapshot(t, d)
			args := make([]string, len(tc.args))
			for i, a := range tc.args {
				args[i] = strings.ReplaceAll(a, "{d}", d)
			}
			code, stdout, stderr := runCLI(t, args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d: %s", code, tc.code, stderr)
			}
			if !strings.Contains(stderr, tc.want) {
				t.Errorf("message %q does not name %q", stderr, tc.want)
			}
			if strings.Count(strings.TrimSpace(stderr), "\n") != 0 || !strings.HasPrefix(stderr, "commcal: ") {
				t.Errorf("want one line of error, got %q", stderr)
			}
			if stdout != "" {
				t.Errorf("stdout on error: %q", stdout)
			}
			after := snapshot(t, d)
			for p, v := range before {
				if after[p] != v {
					t.Errorf("%s changed", p)
				}
			}
			for p := range after {
				if _, ok := before[p]; !ok {
					t.Errorf("%s written", p)
				}
			}
		})
	}
	if len(cases) < 45 {
		t.Errorf("%d cases", len(cases))
	}
}

// TestUnusualInputAccepted: valid inputs that look odd are read, and the run completes. A
// point-to-point sweep of 1e-100 s transfers (accepted by ingest: positive, finite), written
// by Excel ("CSV UTF-8": a BOM, quoted header, CRLF), used to be refused for its BOM and, read,
// to panic in the log-scale Hockney figure.
func TestUnusualInputAccepted(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("\ufeff" + `"cluster","experiment","pattern_id","rep","flow_id","src_node","dst_node","bytes","t_start_s","t_end_s"` + "\r\n")
	for i, size := range []int{1000, 2000, 4000, 8000, 16000, 32000} {
		for rep := range 3 {
			fmt.Fprintf(&b, "ccpe-testbed,p2p_sweep,s%d,%d,0,X1,Y1,%d,0,1e-100\r\n", i, rep, size)
			fmt.Fprintf(&b, "ccpe-testbed,p2p_sweep,t%d,%d,0,X1,X2,%d,0,1e-100\r\n", i, rep, size)
		}
	}
	write(t, filepath.Join(dir, "excel.csv"), b.String())
	write(t, filepath.Join(dir, "p.csv"), "\ufeff\"dst\",\"src\",\"bytes\"\r\nY2,X1,10e6\r\n")
	code, stdout, stderr := runCLI(t, "run", "--cluster", "ccpe-testbed", "--out", filepath.Join(dir, "run"), filepath.Join(dir, "excel.csv"))
	if code != exitOK {
		t.Fatalf("run on 1e-100 s transfers: exit %d\n%s", code, stderr)
	}
	if !strings.Contains(stdout, "hockney intra-rack β") || !fileExists(filepath.Join(dir, "run", "report.html")) {
		t.Errorf("the run on 1e-100 s transfers is incomplete:\n%s", stdout)
	}
	if code, stdout, stderr := runCLI(t, "predict", "--cluster", "ccpe-testbed", filepath.Join(dir, "p.csv")); code != exitOK || !strings.Contains(stdout, "X1") {
		t.Errorf("predict on a pattern with a BOM and quoted header: exit %d\n%s%s", code, stdout, stderr)
	}
}

// TestClusterFromSlurm writes a description from a topology.conf and uses it at once.
func TestClusterFromSlurm(t *testing.T) {
	dir := t.TempDir()
	topo := filepath.Join(dir, "topology.conf")
	write(t, topo, "SwitchName=s0 Nodes=dev[0-5]\nSwitchName=s1 Nodes=dev[6-11]\nSwitchName=s2 Switches=s[0-1]\n")
	desc := filepath.Join(dir, "dev.toml")
	if code, _, stderr := runCLI(t, "cluster", "from-slurm", "--nic-rate", "1e9", "--uplink-rate", "1e10", "--out", desc, topo); code != 0 {
		t.Fatalf("from-slurm: exit %d: %s", code, stderr)
	}
	write(t, filepath.Join(dir, "p.csv"), "src,dst,bytes\ndev0,dev7,1e7\ndev1,dev7,1e7\n")
	code, stdout, stderr := runCLI(t, "predict", "--cluster", desc, "--models", "maxmin", filepath.Join(dir, "p.csv"))
	if code != 0 || !strings.Contains(stdout, "dev7") {
		t.Fatalf("predict on the written cluster: exit %d: %s", code, stderr)
	}
	for _, args := range [][]string{
		{"cluster", "from-slurm", "--uplink-rate", "1e10", topo},                       // no NIC rate
		{"cluster", "from-slurm", "--nic-rate", "1e9", topo},                           // two switches, no uplink rate
		{"cluster", "from-slurm", "--nic-rate", "1e9", "--out", desc, topo},            // existing output
		{"cluster", "from-slurm", "--nic-rate", "1e9", "--out", topo, "--force", topo}, // output is the input
		{"cluster", "from-hosts", "--nic-rate", "1e9", filepath.Join(dir, "none")},
	} {
		if code, _, _ := runCLI(t, args...); code != exitBadInput {
			t.Errorf("%v: exit %d, want %d", args, code, exitBadInput)
		}
	}
}

// TestHockneyBreaksFlag: the breaks of Hockney's segments from a SimGrid breakpoints file
// or a list give the same calibration; a bad list is a usage error.
func TestHockneyBreaksFlag(t *testing.T) {
	dir := t.TempDir()
	bp := filepath.Join(dir, "breakpoints_eth")
	write(t, bp, "Limit, Name\n1420, Small\n32768, Medium\n65536, Asynchronous\n270000, Detached\n")
	pp := "../../datasets/testdata/graphene_eth/graphene_eth_PingPong.csv"
	var outs []string
	for i, breaks := range []string{bp, "1420,32768,65536,270000"} {
		out := filepath.Join(dir, fmt.Sprint("run", i))
		code, stdout, stderr := runCLI(t, "run", "--cluster", "graphene", "--src", "graphene-1", "--dst", "graphene-2", "--hockney-breaks", breaks, "--out", out, pp)
		if code != 0 || !strings.Contains(stdout, "hockney intra-rack 272991–989921 B β") {
			t.Fatalf("run --hockney-breaks %s: exit %d: %s", breaks, code, stderr)
		}
		b, _ := os.ReadFile(filepath.Join(out, "calibration.json"))
		outs = append(outs, string(b[strings.Index(string(b), `"hockney_segments"`):]))
	}
	if outs[0] != outs[1] {
		t.Error("the file and the list gave different segments")
	}
	if code, _, _ := runCLI(t, "estimate", "--hockney-breaks", "65536,1420", "--out", filepath.Join(dir, "e"), filepath.Join(dir, "run0", "dataset")); code != exitBadInput {
		t.Errorf("decreasing breaks: exit %d", code)
	}
}
