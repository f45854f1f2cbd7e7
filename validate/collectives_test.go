package validate

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/contention"
	"github.com/commcal/commcal/datasets"
	"github.com/commcal/commcal/internal/badinput"
)

// Measured all-to-alls are predicted as their schedules' rounds: the algorithm the rules
// pick, its round count, the model's time and the error against the mean of the runs; scatter
// sweeps (calibration data) are not scored.
func TestScoreCollectives(t *testing.T) {
	cl, err := cluster.LoadNamed("ccpe-testbed")
	if err != nil {
		t.Fatal(err)
	}
	net, err := contention.DefaultParams().Network(cl)
	if err != nil {
		t.Fatal(err)
	}
	root := cl.Nodes()[0].Name
	rows := []datasets.Collective{
		{Cluster: cl.Name(), Op: "alltoall", Root: root, Procs: 4, Bytes: 4e6, Rep: 0, Seconds: 0.10},
		{Cluster: cl.Name(), Op: "alltoall", Root: root, Procs: 4, Bytes: 4e6, Rep: 1, Seconds: 0.12},
		{Cluster: cl.Name(), Op: "scatter", Root: root, Procs: 4, Bytes: 1e3, Rep: 0, Seconds: 1e-4},
	}
	maxmin, _ := contention.ModelByName("maxmin")
	got, err := ScoreCollectives(context.Background(), cl, rows, net, []contention.Model{maxmin}, "auto:mpich")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 {
		t.Fatalf("%d collectives scored, want the all-to-all alone: %+v", len(got), got)
	}
	c := got[0]
	if c.Op != "alltoall" || c.Runs != 2 || math.Abs(c.Measured-0.11) > 1e-12 || c.Rounds != 3 || !strings.Contains(c.Rule, "MPICH") {
		t.Errorf("scored %+v; want 2 runs of mean 0.11 s, MPICH's pairwise in 3 rounds", c)
	}
	// Four nodes of rack X, 940 Mbit/s NICs (1 Gbit/s × 0.94): each of MPICH's three
	// exclusive-or rounds is one 4 MB exchange per node, 32e6 bit / 0.94e9 bit/s.
	want := 3 * 32e6 / 0.94e9
	if p := c.Models[0]; p.Model != "maxmin" || math.Abs(p.Predicted-want) > 1e-12*want || math.Abs(p.Err-(want-0.11)/0.11) > 1e-9 {
		t.Errorf("prediction %+v, want %g s", p, want)
	}
	lin, err := ScoreCollectives(context.Background(), cl, rows, net, []contention.Model{maxmin}, "linear")
	if err != nil {
		t.Fatal(err)
	}
	if lin[0].Algorithm != "linear" || lin[0].Rounds != 1 || !(lin[0].Models[0].Predicted > 0) {
		t.Errorf("named linear: %+v", lin[0])
	}
	for _, bad := range []string{"auto:lam", "no-such-algorithm", ""} {
		if _, err := ScoreCollectives(context.Background(), cl, rows, net, nil, bad); err == nil {
			t.Errorf("choice %q accepted", bad)
		}
	}
	big := []datasets.Collective{{Cluster: cl.Name(), Op: "alltoall", Root: root, Procs: int64(len(cl.Nodes()) + 1), Bytes: 10, Seconds: 1}}
	if _, err := ScoreCollectives(context.Background(), cl, big, net, []contention.Model{maxmin}, "auto:openmpi"); err == nil ||
		!strings.Contains(err.Error(), "one per node") || !badinput.Is(err) {
		t.Errorf("more processes than nodes: %v, want bad input", err)
	}
}
