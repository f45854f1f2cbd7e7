package measure

import (
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/contention"
	"github.com/commcal/commcal/datasets"
	"github.com/commcal/commcal/estimate"
)

func needRoot(t *testing.T) {
	t.Helper()
	if err := Available(); err != nil {
		t.Skipf("skipped: %v", err)
	}
}

// twoByTwo is two racks of two nodes, 1 Gbit/s NICs and a 10 Gbit/s cable, emulated at a
// tenth: 100 Mbit/s NICs, a 1 Gbit/s backbone.
func twoByTwo(t *testing.T) *cluster.Cluster {
	cl, err := cluster.New(cluster.Description{Name: "lab2x2", NICRateBps: 1e9,
		Backbone: &cluster.Backbone{Topology: cluster.TopologyCable, Kind: cluster.KindOptical, RateBps: 10e9},
		Racks:    []cluster.Rack{{Name: "A", Nodes: []string{"a1", "a2"}}, {Name: "B", Nodes: []string{"b1", "b2"}}}})
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

func TestEmulatedTwoByTwo(t *testing.T) {
	needRoot(t)
	em, err := Build(context.Background(), twoByTwo(t), DefaultShaping)
	if err != nil {
		t.Fatal(err)
	}
	defer em.Close()
	if got := len(Leftovers()); got != 6 { // 4 nodes and 2 switches
		t.Errorf("%d namespaces, want 6", got)
	}
	o := DefaultBench
	o.Rule.Cap = 5
	const m = 4 << 20
	nic := em.ShapedRate(1e9)
	// One transfer alone reaches the shaped NIC rate (within 10%: TCP/IP and Ethernet headers
	// take about 5%).
	one, err := em.RunPattern(context.Background(), []contention.Flow{{Src: "a1", Dst: "b1", Bytes: m}}, o)
	if err != nil {
		t.Fatal(err)
	}
	rate := m * 8 / mean(one, 0)
	if rate < 0.9*nic || rate > nic {
		t.Errorf("one transfer at %.1f Mbit/s, NIC shaped to %.0f", rate/1e6, nic/1e6)
	}
	// Two transfers out of one NIC get about half each: together they carry what one alone
	// does (the NIC is the bottleneck), and each averages close to half (the first to finish
	// runs alone for its last moments, so it averages a little more: ±25%).
	two, err := em.RunPattern(context.Background(), []contention.Flow{{Src: "a1", Dst: "a2", Bytes: m}, {Src: "a1", Dst: "b2", Bytes: m}}, o)
	if err != nil {
		t.Fatal(err)
	}
	if agg := 2 * m * 8 / math.Max(mean(two, 0), mean(two, 1)); math.Abs(agg-rate)/rate > 0.1 {
		t.Errorf("two transfers together carried %.1f Mbit/s, one alone %.1f", agg/1e6, rate/1e6)
	}
	for f := 0; f < 2; f++ {
		r := m * 8 / mean(two, f)
		if math.Abs(r-rate/2)/(rate/2) > 0.25 {
			t.Errorf("transfer %d of two: %.1f Mbit/s, half of one alone is %.1f", f, r/1e6, rate/2e6)
		}
	}
	t.Logf("alone %.1f Mbit/s; two out of one NIC %.1f and %.1f Mbit/s; skew %.3g ms", rate/1e6,
		m*8/mean(two, 0)/1e6, m*8/mean(two, 1)/1e6, 1e3*two.Reps[0].Skew)
	if err := em.Close(); err != nil {
		t.Fatal(err)
	}
	if left := Leftovers(); len(left) != 0 {
		t.Errorf("left after teardown: %v", left)
	}
}

func mean(r *PatternResult, f int) float64 {
	s := 0.0
	for _, rep := range r.Reps {
		s += rep.Times[f]
	}
	return s / float64(len(r.Reps))
}

// TestMeasureSmallCatalogue measures a few patterns end to end and reads the dataset back.
func TestMeasureSmallCatalogue(t *testing.T) {
	needRoot(t)
	cat := QuickCatalogue
	bench := DefaultBench
	bench.Rule = estimate.StoppingRule{MaxRelWidth: 0.02, Cap: 3}
	out := filepath.Join(t.TempDir(), "ds")
	m, err := Measure(context.Background(), Options{Cluster: twoByTwo(t), Shaping: DefaultShaping, Bench: bench, Catalogue: cat,
		Out: out, Created: time.Unix(0, 0)})
	if err != nil {
		t.Fatal(err)
	}
	ds, err := datasets.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := datasets.ReadAll[datasets.Transfer](context.Background(), ds, datasets.TransfersTable)
	if err != nil || int64(len(rows)) != m.Rows("transfers") || len(rows) == 0 {
		t.Fatalf("%d rows, %v", len(rows), err)
	}
	exps := map[string]bool{}
	for _, r := range rows {
		exps[r.Experiment] = true
		if r.Seconds() <= 0 {
			t.Fatalf("row %+v", r)
		}
	}
	for _, e := range []string{"p2p_sweep", "fair_intra", "fair_inter", "bidir_nic", "bidir_backbone", "random"} {
		if !exps[e] {
			t.Errorf("no %s transfers", e)
		}
	}
	if left := Leftovers(); len(left) != 0 {
		t.Errorf("left after the measurement: %v", left)
	}
}

// TestCancelTearsDown cancels a measurement in the middle of a transfer: it returns at once
// with the context's error and leaves no namespace behind.
func TestCancelTearsDown(t *testing.T) {
	needRoot(t)
	ctx, cancel := context.WithCancel(context.Background())
	cat := QuickCatalogue
	cat.SweepSizes = []int64{64 << 20} // 64 MiB at 100 Mbit/s: about 5 s
	time.AfterFunc(2*time.Second, cancel)
	began := time.Now()
	_, err := Measure(ctx, Options{Cluster: twoByTwo(t), Shaping: DefaultShaping, Bench: DefaultBench, Catalogue: cat,
		Out: filepath.Join(t.TempDir(), "ds"), Created: time.Unix(0, 0)})
	if err == nil {
		t.Fatal("a cancelled measurement succeeded")
	}
	if d := time.Since(began); d > 4*time.Second {
		t.Errorf("cancellation took %v", d)
	}
	if left := Leftovers(); len(left) != 0 {
		t.Errorf("left after cancellation: %v", left)
	}
}

// TestCleanupSparesLiveRuns leaves namespaces as a crashed run (its process gone), a run of
// another live process (pid 1) and an older version (no process in the name) would: Cleanup
// removes the first and the last and keeps the live run's.
func TestCleanupSparesLiveRuns(t *testing.T) {
	needRoot(t)
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	var made []*Emulation
	defer func() {
		for _, em := range made {
			em.Close() // the removed ones' deletion fails; their handles close all the same
		}
	}()
	for _, id := range []string{fmt.Sprintf("%dx0001", dead.Process.Pid), "1x0002", "0a1b2c"} {
		em := &Emulation{ID: id}
		made = append(made, em)
		if _, err := em.newNS("n0"); err != nil {
			t.Fatal(err)
		}
	}
	exists := func(em *Emulation) bool {
		_, err := os.Stat(filepath.Join(netnsDir, em.names[0]))
		return err == nil
	}
	n, err := Cleanup()
	if err != nil {
		t.Fatal(err)
	}
	if n != 2 || exists(made[0]) || !exists(made[1]) || exists(made[2]) {
		t.Errorf("removed %d; left: crashed %v, live %v, older %v", n, exists(made[0]), exists(made[1]), exists(made[2]))
	}
}
