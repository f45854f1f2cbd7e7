package schedule

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/contention"
	"github.com/commcal/commcal/internal/badinput"
	"gonum.org/v1/gonum/floats/scalar"
)

// twoRacks is two racks of two nodes (X1, X2 | Y1, Y2) with 1 Gbit/s NICs joined by a
// 1 Gbit/s cable, at nominal rates: a 10⁶-byte transfer alone takes 8 ms.
func twoRacks(t testing.TB) *contention.Network {
	t.Helper()
	cl, err := cluster.New(cluster.Description{Name: "two-racks", NICRateBps: 1e9,
		Backbone: &cluster.Backbone{Topology: cluster.TopologyCable, Kind: cluster.KindElectrical, RateBps: 1e9},
		Racks:    []cluster.Rack{{Name: "X", NodePrefix: "X", NodeFirst: 1, NodeCount: 2}, {Name: "Y", NodePrefix: "Y", NodeFirst: 1, NodeCount: 2}}})
	if err != nil {
		t.Fatal(err)
	}
	return contention.NewNetwork(cl, 1)
}

// bigCluster is 20 racks of 50 nodes under a core router: 1 Gbit/s NICs, 10 Gbit/s uplinks.
func bigCluster(t testing.TB) (*contention.Network, []string) {
	t.Helper()
	d := cluster.Description{Name: "big", NICRateBps: 1e9, Backbone: &cluster.Backbone{Topology: cluster.TopologyCore, Kind: cluster.KindOptical, RateBps: 10e9}}
	for r := range 20 {
		d.Racks = append(d.Racks, cluster.Rack{Name: fmt.Sprintf("r%d", r), NodePrefix: fmt.Sprintf("r%dn", r), NodeCount: 50})
	}
	cl, err := cluster.New(d)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, nd := range cl.Nodes() {
		names = append(names, nd.Name)
	}
	return contention.NewNetwork(cl, contention.DefaultEfficiency), names
}

var fourNodes = []string{"X1", "X2", "Y1", "Y2"}

// Max-min by hand on the two racks. Pairwise, first round (s = 1): X1→X2, X2→Y1, Y1→Y2,
// Y2→X1, one transfer per NIC and per direction of the cable: 8 ms. Second (s = 2): X1→Y1 and
// X2→Y2 share the cable's X→Y direction, Y1→X1 and Y2→X2 the other: 16 ms. The third is the
// first reversed: 8 ms. Linear: the cable carries four transfers each way (250 Mbit/s each, 32 ms); the
// intra-rack ones get what their NICs have left (500 Mbit/s) and end first.
func TestPredictMaxMinByHand(t *testing.T) {
	net := twoRacks(t)
	c := Collective{Op: Alltoall, Ranks: fourNodes, Bytes: 1e6}
	s, err := New(c, "pairwise")
	if err != nil {
		t.Fatal(err)
	}
	// With a spread of 0.8 and 1.2, each of a round's four transfers takes 0.8 or 1.2 of its
	// predicted time with equal odds: the round takes 1.2 of it unless all four take 0.8
	// (probability 1/16), 1.175 times its predicted time in expectation.
	for _, c := range []struct {
		spread Spread
		factor float64
	}{{nil, 1}, {Spread{0.8, 1.2}, 1.175}} {
		res, err := Predict(t.Context(), net, contention.MaxMin{}, s, c.spread)
		if err != nil {
			t.Fatal(err)
		}
		want := []float64{0.008 * c.factor, 0.016 * c.factor, 0.008 * c.factor}
		for r, w := range want {
			if !scalar.EqualWithinAbsOrRel(res.Rounds[r], w, 0, 1e-9) {
				t.Errorf("spread %v: round %d takes %g s, want %g", c.spread, r+1, res.Rounds[r], w)
			}
		}
		if !scalar.EqualWithinAbsOrRel(res.Seconds, 0.032*c.factor, 0, 1e-9) || res.Algorithm != "pairwise" || res.Rule != "named by the user" {
			t.Errorf("spread %v: %+v", c.spread, res)
		}
	}
	s, _ = New(c, "linear")
	res, err := Predict(t.Context(), net, contention.MaxMin{}, s, nil)
	if err != nil || len(res.Rounds) != 1 || !scalar.EqualWithinAbsOrRel(res.Seconds, 0.032, 0, 1e-9) {
		t.Errorf("linear: %+v, %v", res, err)
	}
}

// Predict is the sum over rounds of the slowest transfer, under hockney computed here in
// closed form (α + β·m of the transfer's path class), and under max-min from the model's
// own predictions of each round, for every algorithm of every collective on the two racks.
func TestPredictIsSumOfRoundMaxima(t *testing.T) {
	net := twoRacks(t)
	net.Latency = map[cluster.PathClass]float64{cluster.IntraRack: 20e-6, cluster.InterRack: 50e-6}
	net.InverseBandwidth = map[cluster.PathClass]float64{cluster.IntraRack: 8.5e-9, cluster.InterRack: 9e-9}
	rack := func(node string) byte { return node[0] }
	for _, op := range Ops() {
		for _, alg := range Algorithms(op) {
			c := Collective{Op: op, Ranks: fourNodes, Bytes: 1e6}
			if op == Alltoallv {
				c.Bytes, c.Sizes = 0, [][]float64{{0, 1e6, 2e6, 0}, {3e6, 0, 1e6, 1e6}, {0, 0, 0, 5e5}, {1e6, 1e6, 1e6, 0}}
			}
			if op.rooted() {
				c.Root = 2
			}
			s, err := New(c, alg)
			if err != nil {
				continue // non-overlapping
			}
			res, err := Predict(t.Context(), net, contention.Hockney{}, s, nil)
			if err != nil {
				t.Fatal(err)
			}
			want := 0.0
			for _, round := range s.Rounds {
				slowest := 0.0
				for _, tr := range round {
					a, b := s.Ranks[tr.Src], s.Ranks[tr.Dst]
					class := cluster.InterRack
					if rack(a) == rack(b) {
						class = cluster.IntraRack
					}
					slowest = math.Max(slowest, net.Latency[class]+net.InverseBandwidth[class]*tr.Bytes)
				}
				want += slowest
			}
			if !scalar.EqualWithinAbsOrRel(res.Seconds, want, 0, 1e-12) {
				t.Errorf("hockney, %s %s: %g s, want %g", op, alg, res.Seconds, want)
			}
			res, err = Predict(t.Context(), net, contention.MaxMin{}, s, nil)
			if err != nil {
				t.Fatal(err)
			}
			want = 0
			for _, round := range s.Rounds {
				var flows []contention.Flow
				for _, tr := range round {
					flows = append(flows, contention.Flow{Src: s.Ranks[tr.Src], Dst: s.Ranks[tr.Dst], Bytes: tr.Bytes})
				}
				p, err := contention.MaxMin{}.Predict(t.Context(), net, flows)
				if err != nil {
					t.Fatal(err)
				}
				slowest := 0.0
				for _, x := range p.Times {
					slowest = math.Max(slowest, x)
				}
				want += slowest
			}
			if !scalar.EqualWithinAbsOrRel(res.Seconds, want, 0, 1e-12) {
				t.Errorf("maxmin, %s %s: %g s, want %g", op, alg, res.Seconds, want)
			}
		}
	}
}

// Transfers between ranks of one node are left out: a ring allgather of two ranks on X1 and
// two on X2 sends X1→X2 and X2→X1 in each of its 3 rounds (8 ms each under max-min), and a
// round with nothing on the network takes no time.
func TestPredictLeavesOutSharedMemory(t *testing.T) {
	net := twoRacks(t)
	s, err := New(Collective{Op: Allgather, Ranks: []string{"X1", "X1", "X2", "X2"}, Bytes: 1e6}, "ring")
	if err != nil {
		t.Fatal(err)
	}
	res, err := Predict(t.Context(), net, contention.MaxMin{}, s, nil)
	if err != nil || len(res.Rounds) != 3 || !scalar.EqualWithinAbsOrRel(res.Seconds, 0.024, 0, 1e-9) {
		t.Errorf("two ranks per node: %+v, %v", res, err)
	}
	s, _ = New(Collective{Op: Alltoall, Ranks: []string{"Y2", "Y2"}, Bytes: 1e6}, "pairwise")
	res, err = Predict(t.Context(), net, contention.MaxMin{}, s, Spread{0.9, 1.1})
	if err != nil || res.Seconds != 0 {
		t.Errorf("one node: %+v, %v", res, err)
	}
}

func TestPredictRefuses(t *testing.T) {
	net := twoRacks(t)
	s, _ := New(Collective{Op: Alltoall, Ranks: fourNodes, Bytes: 1e6}, "pairwise")
	for _, sp := range []Spread{{-1e-6}, {math.NaN()}, {1, math.Inf(1)}, {1.1, 0.9}, {0}} {
		if _, err := Predict(t.Context(), net, contention.MaxMin{}, s, sp); err == nil || !badinput.Is(err) {
			t.Errorf("spread %v: %v, want bad input", sp, err)
		}
	}
	s, _ = New(Collective{Op: Alltoall, Ranks: []string{"X1", "Z9"}, Bytes: 1e6}, "pairwise")
	_, err := Predict(t.Context(), net, contention.MaxMin{}, s, nil)
	if err == nil || !strings.Contains(err.Error(), "alltoall pairwise, round #1 of 1") || !strings.Contains(err.Error(), "Z9") {
		t.Errorf("a rank on no node of the cluster: %v", err)
	}
}

// Predict returns the context's error when it is done, and stops within a second of a
// cancellation in the middle of a long prediction: a pairwise all-to-all of 4 MB among 1,000
// ranks, 999 rounds under max-min.
func TestPredictStopsWhenCancelled(t *testing.T) {
	net, names := bigCluster(t)
	s, err := New(Collective{Op: Alltoall, Ranks: names, Bytes: 4e6}, "pairwise")
	if err != nil {
		t.Fatal(err)
	}
	done, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := Predict(done, net, contention.MaxMin{}, s, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("a done context: %v", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var at atomic.Int64
	timer := time.AfterFunc(20*time.Millisecond, func() { at.Store(time.Now().UnixNano()); cancel() })
	defer timer.Stop()
	_, err = Predict(ctx, net, contention.MaxMin{}, s, nil)
	end := time.Now()
	if at.Load() == 0 {
		t.Fatalf("finished before the cancellation (%v)", err)
	}
	if !errors.Is(err, context.Canceled) {
		t.Errorf("error %v, want context.Canceled", err)
	}
	if lag := end.Sub(time.Unix(0, at.Load())); lag > time.Second {
		t.Errorf("stopped %v after the cancellation", lag)
	}
}
