package experiments

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/contention"
	"github.com/commcal/commcal/internal/badinput"
)

func TestWorkload(t *testing.T) {
	cl, err := cluster.LoadNamed("ccpe-testbed")
	if err != nil {
		t.Fatal(err)
	}
	n := len(cl.Nodes())
	pats, err := Workload(cl, "all-to-all:1e6")
	if err != nil || len(pats) != 1 || len(pats[0].Flows) != n*(n-1) || pats[0].Flows[0].Bytes != 1e6 {
		t.Fatalf("all-to-all: %d patterns, %v", len(pats), err)
	}
	pats, err = Workload(cl, "random:nodes=10,d=2,count=3,seed=5,sizes=1e6/2e6")
	if err != nil || len(pats) != 3 {
		t.Fatalf("random: %d patterns, %v", len(pats), err)
	}
	again, _ := Workload(cl, "random:nodes=10,d=2,count=3,seed=5,sizes=1e6/2e6")
	if len(again[2].Flows) != len(pats[2].Flows) || again[2].Flows[0] != pats[2].Flows[0] {
		t.Error("the same seed gave other patterns")
	}
	matrix := filepath.Join(t.TempDir(), "sizes.csv")
	os.WriteFile(matrix, []byte("src,X1,X2,Y1\nX1,0,10,20\nX2,5,0,0\nY1,1,2,3\n"), 0o644)
	pats, err = Workload(cl, "alltoallv:"+matrix)
	if err != nil || len(pats[0].Flows) != 5 || pats[0].Flows[1] != (contention.Flow{Src: "X1", Dst: "Y1", Bytes: 20}) {
		t.Fatalf("alltoallv: %+v, %v", pats, err)
	}
	for name, content := range map[string]string{"repeated destination": "src,X1,X1\nX2,1,2\n", "repeated source": "src,X1,X2\nY1,1,2\nY1,3,4\n"} {
		p := filepath.Join(t.TempDir(), "m.csv")
		os.WriteFile(p, []byte(content), 0o644)
		if _, err := Workload(cl, "alltoallv:"+p); err == nil || !badinput.Is(err) {
			t.Errorf("%s: %v, want bad input", name, err)
		}
	}
	for _, bad := range []string{"all-to-all", "all-to-all:-1", "random:nodes=10", "random:nodes=10,d=2,colour=3", "alltoallv:", "alltoallv:/nonexistent.csv", "bcast:1"} {
		if _, err := Workload(cl, bad); err == nil || !badinput.Is(err) {
			t.Errorf("Workload(%q) = %v, want bad input", bad, err)
		}
	}
}

// A workload spec with a size that cannot be meant (fractional, beyond the ceiling, not a
// number), a key given twice or counts beyond their ceilings is bad input whose message names
// the spec and what was wanted; the transfers are counted before any is made.
func TestWorkloadBounds(t *testing.T) {
	cl, err := cluster.LoadNamed("ccpe-testbed")
	if err != nil {
		t.Fatal(err)
	}
	big, err := cluster.New(cluster.Description{Name: "big", NICRateBps: 1e9, Racks: []cluster.Rack{{Name: "A", NodePrefix: "a", NodeCount: 4000}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		cl         *cluster.Cluster
		spec, want string
	}{
		{cl, "all-to-all:0.5", `--workload "all-to-all:0.5": want all-to-all:BYTES: "0.5" is not a whole number of bytes`},
		{cl, "all-to-all:1e308", `--workload "all-to-all:1e308": want all-to-all:BYTES: "1e308" is outside 1 to 1125899906842624 bytes`},
		{cl, "all-to-all:NaN", `"NaN" is not a number of bytes`},
		{cl, "all-to-all:0", `"0" is outside 1 to 1125899906842624 bytes`},
		{big, "all-to-all:1e6", "4000 nodes make 15996000 transfers, want at most 10000000"},
		{cl, "random:nodes=10,d=2,nodes=20", `key "nodes" given twice`},
		{cl, "random:nodes=10,d=2,seed=1,seed=2", `key "seed" given twice`},
		{cl, "random:nodes=10,d=2,count=100000000", "want nodes ≥ 2, d from 1 to 64 and count from 1 to 10000"},
		{cl, "random:nodes=10,d=1000,count=1", "want nodes ≥ 2, d from 1 to 64 and count from 1 to 10000"},
		{cl, "random:nodes=10,d=-1", "want nodes ≥ 2, d from 1 to 64"},
		{big, "random:nodes=4000,d=64,count=10000", "up to 2.56e+09 transfers (count × nodes × d), want at most 10000000"},
		{cl, "random:nodes=10,d=2,sizes=1e6/0.5", `size "0.5" is not a whole number of bytes`},
		{cl, "random:nodes=10,d=2,sizes=" + strings.Repeat("1/", 300) + "1", "301 sizes, want at most 256"},
		{cl, "all-to-all:" + strings.Repeat("9", 10000), `"… (10000 bytes) is outside 1 to 1125899906842624 bytes`},
	} {
		_, err := Workload(tc.cl, tc.spec)
		if err == nil || !badinput.Is(err) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%.40s: %v, want bad input saying %q", tc.spec, err, tc.want)
			continue
		}
		if len(err.Error()) > 400 {
			t.Errorf("%.40s: a message of %d bytes", tc.spec, len(err.Error()))
		}
	}
}

// FuzzWorkload feeds arbitrary --workload specs (random and all-to-all; alltoallv reads a file,
// fuzzed in contention): each gives patterns of whole, bounded sizes or bad input, never a
// panic, an error of another kind or more transfers than the ceiling.
func FuzzWorkload(f *testing.F) {
	cl, err := cluster.LoadNamed("ccpe-testbed")
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{"all-to-all:1e6", "all-to-all:0.5", "random:nodes=10,d=2,count=3,seed=5,sizes=1e6/2e6",
		"random:nodes=10,nodes=2", "random:", "bcast:1", "random:nodes=4,d=1,count=-1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		if strings.HasPrefix(spec, "alltoallv") {
			return
		}
		pats, err := Workload(cl, spec)
		if err != nil {
			if !badinput.Is(err) {
				t.Fatalf("%q: an error that is not bad input: %v", spec, err)
			}
			return
		}
		n := 0
		for _, p := range pats {
			n += len(p.Flows)
			for _, fl := range p.Flows {
				if fl.Bytes < 1 || fl.Bytes > contention.MaxTransferBytes || fl.Bytes != float64(int64(fl.Bytes)) {
					t.Fatalf("%q: a transfer of %g bytes", spec, fl.Bytes)
				}
			}
		}
		if n == 0 || n > contention.MaxPatternTransfers {
			t.Fatalf("%q: %d transfers", spec, n)
		}
	})
}
