package contention

import (
	"context"
	"fmt"
	"math"
	"testing"

	"gonum.org/v1/gonum/floats/scalar"

	"github.com/commcal/commcal/cluster"
)

// truncate cuts v to d decimals, as the CCPE paper prints its rates and times.
func truncate(v float64, d int) float64 {
	p := math.Pow(10, float64(d))
	return math.Floor(v*p+1e-9) / p
}

// tableICluster is the setting of Table I of Zhu et al. (CCPE 2014, §6.3): two racks, 940 Mbit/s
// NICs and an electrical backbone cable of 940 Mbit/s, per-flow ceiling 940 Mbit/s.
func tableICluster(t *testing.T) *Network {
	t.Helper()
	cl, err := cluster.New(cluster.Description{Name: "table1", NICRateBps: 940e6,
		Backbone: &cluster.Backbone{Topology: cluster.TopologyCable, Kind: cluster.KindElectrical, RateBps: 940e6},
		Racks:    []cluster.Rack{{Name: "X", NodePrefix: "X", NodeFirst: 1, NodeCount: 3}, {Name: "Y", NodePrefix: "Y", NodeFirst: 1, NodeCount: 3}}})
	if err != nil {
		t.Fatal(err)
	}
	return NewNetwork(cl, 1)
}

// The application of Fig. 1 / Table I, in a placement that agrees with the paper's text:
// e1 X1→Y2, e2 X1→X2, e3 X2→Y3, e4 X3→Y1, e5 Y1→Y3; sizes 10, 20, 20, 20, 20 MB, MB = 10⁶ B.
var tableIFlows = []Flow{{"X1", "Y2", 10e6}, {"X1", "X2", 20e6}, {"X2", "Y3", 20e6}, {"X3", "Y1", 20e6}, {"Y1", "Y3", 20e6}}

func TestTableI(t *testing.T) {
	p, err := Asymmetric{}.Predict(context.Background(), tableICluster(t), tableIFlows)
	if err != nil {
		t.Fatal(err)
	}
	// Step 1 rates in Mbit/s (the paper truncates 626.67 to 626.6), completion times in s
	// (0.4255 printed 0.425: truncated too).
	wantRates := []float64{313.3, 626.6, 313.3, 313.3, 626.6}
	wantTimes := []float64{0.255, 0.255, 0.425, 0.425, 0.255}
	for i := range tableIFlows {
		if got := truncate(p.FirstRates[i]/1e6, 1); got != wantRates[i] {
			t.Errorf("e%d: step-1 rate %.4f Mbit/s, paper %.1f", i+1, p.FirstRates[i]/1e6, wantRates[i])
		}
		if got := truncate(p.Times[i], 3); got != wantTimes[i] {
			t.Errorf("e%d: time %.6f s, paper %.3f", i+1, p.Times[i], wantTimes[i])
		}
	}
	if p.Steps != 2 {
		t.Errorf("%d steps, paper 2", p.Steps)
	}
	// Exact values behind the printed ones: 940/3 and 2·940/3 Mbit/s; 80 Mbit at 313.3 Mbit/s,
	// then 80 Mbit at 470 Mbit/s.
	t1 := 80e6 / (940e6 / 3)
	for i, want := range []float64{t1, t1, t1 + (160e6-t1*940e6/3)/470e6, t1 + (160e6-t1*940e6/3)/470e6, t1} {
		if !scalar.EqualWithinRel(p.Times[i], want, 1e-12) {
			t.Errorf("e%d: %.15g s, want %.15g", i+1, p.Times[i], want)
		}
	}
}

func TestAsymmetricPropertyOnOneNIC(t *testing.T) {
	// CCPE 2014 §5.2: on a 940 Mbit/s NIC with 2 transfers in and 1 out, all three get
	// 470 Mbit/s; with 12 in and 1 out, all get 940/12 Mbit/s. Fair sharing gives the lone
	// outgoing transfer the full 940.
	cl, err := cluster.New(cluster.Description{Name: "nic", NICRateBps: 940e6,
		Racks: []cluster.Rack{{Name: "R", NodePrefix: "n", NodeFirst: 0, NodeCount: 14}}})
	if err != nil {
		t.Fatal(err)
	}
	net := NewNetwork(cl, 1)
	for _, in := range []int{2, 12} {
		var flows []Flow
		for i := 1; i <= in; i++ {
			flows = append(flows, Flow{Src: nodeName(i), Dst: "n0", Bytes: 1e6})
		}
		flows = append(flows, Flow{Src: "n0", Dst: "n13", Bytes: 1e6})
		p, err := Asymmetric{}.Predict(context.Background(), net, flows)
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range p.FirstRates {
			if !scalar.EqualWithinRel(r, 940e6/float64(in), 1e-12) {
				t.Errorf("%d in, 1 out: transfer %d at %g bit/s, want %g", in, i, r, 940e6/float64(in))
			}
		}
		pf, _ := Fair{}.Predict(context.Background(), net, flows)
		if out := pf.FirstRates[in]; out != 940e6 {
			t.Errorf("fair: the outgoing transfer gets %g, want 940e6", out)
		}
		// asymmetric-fitted sits between: φ = 0.5 gives the midpoint.
		net.ContraFactor = 0.5
		pa, _ := AsymmetricFitted{}.Predict(context.Background(), net, flows)
		net.ContraFactor = 1
		if want := 940e6 - 0.5*(940e6-940e6/float64(in)); !scalar.EqualWithinRel(pa.FirstRates[in], want, 1e-12) {
			t.Errorf("asymmetric-fitted φ=0.5: %g, want %g", pa.FirstRates[in], want)
		}
	}
}

func nodeName(i int) string { return fmt.Sprintf("n%d", i) }

func TestClosedFormPenaltiesFig2(t *testing.T) {
	// Euro-Par 2011, Fig. 2 and its text: the penalties of three of the four graphs.
	cases := []struct {
		name  string
		edges []Edge
		want  []float64
	}{
		{"one source to three", []Edge{{"a", "b"}, {"a", "c"}, {"a", "d"}}, []float64{3, 3, 3}},
		{"two sources sharing destinations", []Edge{{"a", "b"}, {"a", "c"}, {"a", "d"}, {"d", "b"}, {"d", "c"}},
			[]float64{4, 4, 4, 8.0 / 3, 8.0 / 3}},
		{"rules (b) and (c)", []Edge{{"a", "b"}, {"a", "c"}, {"d", "b"}, {"e", "c"}}, []float64{4, 4, 4.0 / 3, 4.0 / 3}},
	}
	for _, tc := range cases {
		got := ClosedFormPenalties(tc.edges)
		for i := range got {
			// The paper prints 2.66 and 1.33, truncating 8/3 and 4/3.
			if !scalar.EqualWithinRel(got[i], tc.want[i], 1e-12) || truncate(got[i], 2) != truncate(tc.want[i], 2) {
				t.Errorf("%s: edge %v penalty %g, want %g", tc.name, tc.edges[i], got[i], tc.want[i])
			}
		}
	}
	// An incast of single senders shares the receiver fairly.
	if got := ClosedFormPenalties([]Edge{{"a", "w"}, {"b", "w"}, {"c", "w"}}); got[0] != 3 || got[1] != 3 || got[2] != 3 {
		t.Errorf("incast of three: %v", got)
	}
}

func TestSequenceOfLinearModelsFig3(t *testing.T) {
	// Euro-Par 2011, Fig. 3: six communications of 20 MB (MB = 2²⁰ B) start together;
	// α = 5.105e-10 s/B; the step penalties are those of the figure: a, b, c 3.5 then 3.5
	// then 3; d, e 3.33 then 2.33; f 1.5. The printed times end the steps at 0.016059,
	// 0.0297984 and 0.0363749 s, with 11983700 and 4294170 bytes left for a, b, c after
	// steps 1 and 2 and 11534300 for d, e after step 1.
	cl, _ := cluster.New(cluster.Description{Name: "ib", NICRateBps: 1, Racks: []cluster.Rack{{Name: "s", NodePrefix: "v", NodeFirst: 0, NodeCount: 12}}})
	net := NewNetwork(cl, 1)
	flows := []Flow{{"v0", "v1", 20 << 20}, {"v0", "v2", 20 << 20}, {"v0", "v3", 20 << 20}, {"v4", "v5", 20 << 20}, {"v4", "v6", 20 << 20}, {"v7", "v8", 20 << 20}}
	step := map[int][]float64{6: {3.5, 3.5, 3.5, 10.0 / 3, 10.0 / 3, 1.5}, 5: {3.5, 3.5, 3.5, 7.0 / 3, 7.0 / 3}, 3: {3, 3, 3}}
	predict := func(alpha float64) *Prediction {
		net.Penalty.Alpha = alpha
		p, err := PredictWithPenalties(context.Background(), net, flows, func(e []Edge) []float64 { return step[len(e)] })
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	want := []float64{0.0363749, 0.0363749, 0.0363749, 0.0297984, 0.0297984, 0.016059}
	// With the printed α = 5.105e-10 the times agree with the figure to 5e-6 relative (the
	// rounding of α plus that of the printed digit): the figure's own α had more digits. α = 5.10502e-10,
	// which prints as 5.105e-10, gives every printed digit.
	p := predict(5.105e-10)
	for i, w := range want {
		if !scalar.EqualWithinRel(p.Times[i], w, 5e-6) {
			t.Errorf("α = 5.105e-10: communication %c: %.7f s, paper %g", 'a'+i, p.Times[i], w)
		}
	}
	if p.Steps != 3 {
		t.Errorf("%d steps, paper 3", p.Steps)
	}
	digits := []int{7, 7, 7, 7, 7, 6} // decimals printed
	for i, ti := range predict(5.10502e-10).Times {
		if got := math.Round(ti*math.Pow(10, float64(digits[i]))) / math.Pow(10, float64(digits[i])); got != want[i] {
			t.Errorf("α = 5.10502e-10: communication %c: %.8f s rounds to %g, paper %g", 'a'+i, ti, got, want[i])
		}
	}
	// Bytes left for a after step 1: m − t₁/(α·3.5).
	if left := float64(20<<20) - 0.016059/(5.105e-10*3.5); math.Abs(left-11983700) > 100 {
		t.Errorf("bytes left after step 1: %.0f, paper 11983700", left)
	}
}
