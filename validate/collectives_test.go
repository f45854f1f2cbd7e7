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
	"github.com/commcal/commcal/schedule"
)

// testbed is the CCPE 2014 test bed under the default parameters (1 Gbit/s NICs at 94%).
func testbed(t *testing.T) (*cluster.Cluster, *contention.Network) {
	t.Helper()
	cl, err := cluster.LoadNamed("ccpe-testbed")
	if err != nil {
		t.Fatal(err)
	}
	net, err := contention.DefaultParams().Network(cl)
	if err != nil {
		t.Fatal(err)
	}
	return cl, net
}

// Measured all-to-alls are predicted as their schedules' rounds: the algorithm the rules
// pick, its round count, the model's time and the error against the mean of the runs; scatter
// sweeps (calibration data) are not scored.
func TestScoreCollectives(t *testing.T) {
	cl, net := testbed(t)
	root := cl.Nodes()[0].Name
	rows := []datasets.Collective{
		{Cluster: cl.Name(), Op: "alltoall", Root: root, Procs: 4, Bytes: 4e6, Rep: 0, Seconds: 0.10},
		{Cluster: cl.Name(), Op: "alltoall", Root: root, Procs: 4, Bytes: 4e6, Rep: 1, Seconds: 0.12},
		{Cluster: cl.Name(), Op: "scatter", Root: root, Procs: 4, Bytes: 1e3, Rep: 0, Seconds: 1e-4},
	}
	maxmin, _ := contention.ModelByName("maxmin")
	got, err := ScoreCollectives(context.Background(), cl, rows, nil, net, []contention.Model{maxmin}, nil, "auto:mpich")
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
	lin, err := ScoreCollectives(context.Background(), cl, rows, nil, net, []contention.Model{maxmin}, nil, "linear")
	if err != nil {
		t.Fatal(err)
	}
	if lin[0].Algorithm != "linear" || lin[0].Rounds != 1 || !(lin[0].Models[0].Predicted > 0) {
		t.Errorf("named linear: %+v", lin[0])
	}
	for _, bad := range []string{"auto:lam", "no-such-algorithm", ""} {
		if _, err := ScoreCollectives(context.Background(), cl, rows, nil, net, nil, nil, bad); err == nil {
			t.Errorf("choice %q accepted", bad)
		}
	}
	big := []datasets.Collective{{Cluster: cl.Name(), Op: "alltoall", Root: root, Procs: int64(len(cl.Nodes()) + 1), Bytes: 10, Seconds: 1}}
	if _, err := ScoreCollectives(context.Background(), cl, big, nil, net, []contention.Model{maxmin}, nil, "auto:openmpi"); err == nil ||
		!strings.Contains(err.Error(), "one per node") || !badinput.Is(err) {
		t.Errorf("more processes than nodes: %v, want bad input", err)
	}
}

// Collectives of the schedules table are predicted as the algorithm they ran, whatever the
// choice for the collectives table, beside that table's rows of the same collective; an
// algorithm the operation does not have is bad input.
func TestScoreScheduledCollectives(t *testing.T) {
	cl, net := testbed(t)
	root := cl.Nodes()[0].Name
	rows := []datasets.Collective{{Cluster: cl.Name(), Op: "alltoall", Root: root, Procs: 4, Bytes: 4e6, Seconds: 0.2}}
	sched := []datasets.Schedule{
		{Cluster: cl.Name(), Op: "alltoall", Algorithm: "linear", Root: root, Procs: 4, Bytes: 4e6, Rep: 0, Seconds: 0.09},
		{Cluster: cl.Name(), Op: "alltoall", Algorithm: "linear", Root: root, Procs: 4, Bytes: 4e6, Rep: 1, Seconds: 0.11},
	}
	maxmin, _ := contention.ModelByName("maxmin")
	got, err := ScoreCollectives(context.Background(), cl, rows, sched, net, []contention.Model{maxmin}, nil, "auto:mpich")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("%d collectives scored, want the table's and the scheduled one: %+v", len(got), got)
	}
	// Sorted by algorithm within an operation: "" (the table's, expanded as MPICH's) first.
	tab, sc := got[0], got[1]
	if tab.Algorithm != "pairwise-xor" && tab.Algorithm != "pairwise" || tab.Runs != 1 {
		t.Errorf("the collectives table's row: %+v, want MPICH's pairwise exchange", tab)
	}
	if sc.Algorithm != "linear" || sc.Runs != 2 || math.Abs(sc.Measured-0.1) > 1e-12 || sc.Rounds != 1 || !strings.Contains(sc.Rule, "schedules table") {
		t.Errorf("the scheduled all-to-all: %+v, want linear in one round, 2 runs of mean 0.1 s", sc)
	}
	// Linear: every node sends 3 blocks of 4 MB and receives 3 at once, 96e6 bit through a
	// 940 Mbit/s NIC each way.
	if want := 96e6 / 0.94e9; math.Abs(sc.Models[0].Predicted-want) > 1e-9*want {
		t.Errorf("linear all-to-all predicted %g s, want %g s", sc.Models[0].Predicted, want)
	}
	// With a spread of 0.5 and 1.5, the linear all-to-all's one round (twelve transfers
	// predicted alike) ends at 1.5 times its predicted time unless all twelve are early
	// (1/4096): 1.5 − 1/4096 times.
	spread, err := ScoreCollectives(context.Background(), cl, nil, sched, net, []contention.Model{maxmin},
		schedule.Spread{0.5, 1.5}, "auto:mpich")
	if err != nil {
		t.Fatal(err)
	}
	if p, want := spread[0].Models[0], 96e6/0.94e9*(1.5-1.0/4096); !p.ExpectedMax || math.Abs(p.Predicted-want) > 1e-9*want {
		t.Errorf("with a spread: %+v, want %g s", p, want)
	}
	bad := []datasets.Schedule{{Cluster: cl.Name(), Op: "bcast", Algorithm: "pairwise", Root: root, Procs: 4, Bytes: 10, Seconds: 1}}
	if _, err := ScoreCollectives(context.Background(), cl, nil, bad, net, []contention.Model{maxmin}, nil, "auto:mpich"); err == nil ||
		!badinput.Is(err) || !strings.Contains(err.Error(), "no algorithm") {
		t.Errorf("a broadcast run as pairwise: %v, want bad input", err)
	}
	other := []datasets.Schedule{{Cluster: cl.Name(), Op: "scatter", Algorithm: "linear", Root: root, Procs: 4, Bytes: 10, Rep: 3, Seconds: 1}}
	if _, err := ScoreCollectives(context.Background(), cl, nil, other, net, []contention.Model{maxmin}, nil, "auto:mpich"); err == nil ||
		!badinput.Is(err) || !strings.Contains(err.Error(), "among 4 processes, 10 B, repetition 3") {
		t.Errorf("a scheduled scatter: %v, want bad input naming the row", err)
	}
}
