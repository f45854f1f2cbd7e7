package experiments

import (
	"os"
	"path/filepath"
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
