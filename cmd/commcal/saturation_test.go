package main

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/commcal/commcal/datasets"
	"github.com/commcal/commcal/rundir"
	"github.com/commcal/commcal/validate"
)

// saturationDir holds the two clusters' saturation logs and their descriptions.
var saturationDir = filepath.Join("..", "..", "data", "saturation")

// TestIngestSaturationClusters runs the ingest command that data/saturation/README.md gives
// for each cluster and checks what the dataset holds: the patterns of each experiment and
// their k, 10 runs of each, the all-to-all rows, and no flow faster than the 10 Gbit/s NIC
// the cluster descriptions assume, and the MPI library it names (MPICH, as the README says),
// which validation then expands the all-to-alls by.
func TestIngestSaturationClusters(t *testing.T) {
	cases := []struct {
		cluster, dir string
		// ks lists, by experiment, the k of its patterns; procs the all-to-all sizes.
		ks    map[string][]int
		procs []int64
	}{
		{"miriel", "miriel_2016-06-27", map[string][]int{
			"fair_inter":           {1, 2, 3, 4, 5, 6, 7, 8},
			"exchange_calibration": {1},
			"exchange":             {2, 3, 4, 5, 6, 7, 8},
			"cycle_calibration":    {2},
			"cycle":                {4, 6, 8},
		}, []int64{2, 4, 6, 8, 10, 12, 14, 16}},
		{"plafrim", "plafrim_2016-06-15", map[string][]int{
			"fair_inter":           {1, 2},
			"exchange_calibration": {1},
			"exchange":             {2},
			"cycle_calibration":    {2},
		}, []int64{2, 4}},
	}
	for _, c := range cases {
		t.Run(c.cluster, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "ds")
			args := []string{"ingest", "--cluster", filepath.Join(saturationDir, c.cluster+".toml"),
				"--ranks", "@" + filepath.Join(saturationDir, c.cluster+".ranks"), "--format", "saturation", "--mpi-library", "mpich", "--out", out}
			for _, f := range []string{"load_alltoall.csv", "load_send.csv", "load_sendrecv_diff.csv", "load_sendrecv_same.csv"} {
				args = append(args, filepath.Join(saturationDir, c.dir, f))
			}
			code, stdout, stderr := runCLI(t, args...)
			if code != 0 {
				t.Fatalf("ingest: status %d: %s", code, stderr)
			}
			if !strings.Contains(stdout, "collectives run by mpich") {
				t.Errorf("ingest's table does not name the library:\n%s", stdout)
			}
			ds, err := datasets.Open(out)
			if err != nil {
				t.Fatal(err)
			}
			if ds.Manifest.MPILibrary != "mpich" {
				t.Errorf("MPI library %q, want mpich", ds.Manifest.MPILibrary)
			}
			tr, err := datasets.ReadAll[datasets.Transfer](context.Background(), ds, datasets.TransfersTable)
			if err != nil {
				t.Fatal(err)
			}
			co, err := datasets.ReadAll[datasets.Collective](context.Background(), ds, datasets.CollectivesTable)
			if err != nil {
				t.Fatal(err)
			}
			type pattern struct {
				exp, test string
				k         int
			}
			flows, reps := map[pattern]int{}, map[pattern]int{}
			for _, r := range tr {
				rest, ok := strings.CutPrefix(r.PatternID, "saturation/")
				test, kText, ok2 := strings.Cut(rest, "/k=")
				k, err := strconv.Atoi(kText)
				if !ok || !ok2 || err != nil {
					t.Fatalf("pattern ID %q", r.PatternID)
				}
				p := pattern{r.Experiment, test, k}
				flows[p] = max(flows[p], int(r.FlowID)+1)
				reps[p] = max(reps[p], int(r.Rep)+1)
				if rate := float64(r.Bytes) * 8 / (r.TEnd - r.TStart); rate > 10e9 {
					t.Errorf("%+v: %.3g bit/s, above the 10 Gbit/s NIC", r, rate)
				}
			}
			got := map[string][]int{}
			for p := range flows {
				got[p.exp] = append(got[p.exp], p.k)
				wantFlows := map[string]int{"send": p.k, "sendrecv_same": 2 * p.k, "sendrecv_diff": 2 * p.k}[p.test]
				wantTest := map[string]string{"fair_inter": "send", "exchange_calibration": "sendrecv_same", "exchange": "sendrecv_same",
					"cycle_calibration": "sendrecv_diff", "cycle": "sendrecv_diff"}[p.exp]
				if flows[p] != wantFlows || reps[p] != 10 || p.test != wantTest {
					t.Errorf("%+v: %d flows, %d repetitions; want %d flows, 10 repetitions, test %s", p, flows[p], reps[p], wantFlows, wantTest)
				}
			}
			for e := range got {
				slices.Sort(got[e])
			}
			if fmt.Sprint(got) != fmt.Sprint(c.ks) {
				t.Errorf("k by experiment %v, want %v", got, c.ks)
			}
			var procs []int64
			for _, r := range co {
				if r.Op != "alltoall" || r.Root != c.cluster+"1" || r.Bytes != 4000000 {
					t.Errorf("collectives row %+v", r)
				}
				if r.Rep == 0 {
					procs = append(procs, r.Procs)
				}
			}
			if len(co) != 3*len(c.procs) || !slices.Equal(procs, c.procs) {
				t.Errorf("%d all-to-all rows of %v processes, want 3 runs of each of %v", len(co), procs, c.procs)
			}
			val := filepath.Join(t.TempDir(), "val")
			if code, _, stderr := runCLI(t, "validate", "--out", val, out); code != 0 {
				t.Fatalf("validate: status %d: %s", code, stderr)
			}
			var acc validate.Accuracy
			if err := datasets.ReadJSONFile(filepath.Join(val, rundir.AccuracyFile), &acc); err != nil {
				t.Fatal(err)
			}
			if len(acc.Collectives) != len(c.procs) {
				t.Fatalf("%d collectives validated, want %d", len(acc.Collectives), len(c.procs))
			}
			if acc.CollectiveAlgorithms != "auto:mpich" || !strings.HasPrefix(acc.Collectives[0].Rule, "MPICH") ||
				slices.ContainsFunc(acc.Warnings, func(w string) bool { return strings.Contains(w, "MPI library") }) {
				t.Errorf("validated by %q (first rule %q), warnings %q; want auto:mpich from the manifest",
					acc.CollectiveAlgorithms, acc.Collectives[0].Rule, acc.Warnings)
			}
		})
	}
}
