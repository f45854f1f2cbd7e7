package contention

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/commcal/commcal/cluster"
)

// twoRacks is a cluster of two racks of n nodes (x1…, y1…), NICs of nic bit/s joined by a
// cable of backbone bit/s.
func twoRacks(t *testing.T, name string, n int, nic, backbone float64) *cluster.Cluster {
	t.Helper()
	cl, err := cluster.New(cluster.Description{Name: name, NICRateBps: nic,
		Backbone: &cluster.Backbone{Topology: cluster.TopologyCable, Kind: cluster.KindOptical, RateBps: backbone},
		Racks:    []cluster.Rack{{Name: "X", NodePrefix: "x", NodeFirst: 1, NodeCount: n}, {Name: "Y", NodePrefix: "y", NodeFirst: 1, NodeCount: n}}})
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

func mustCluster(t *testing.T, d cluster.Description) *cluster.Cluster {
	t.Helper()
	cl, err := cluster.New(d)
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

func TestNominalOf(t *testing.T) {
	core := treeDescription(3, 4)
	core.Racks[2].UplinkRateBps = 40e9
	hetero := treeDescription(2, 2)
	hetero.Node = []cluster.NodeSettings{{Name: "r1n0", NICRateBps: 10e9}}
	cases := []struct {
		name string
		cl   *cluster.Cluster
		want Nominal
	}{
		{"cable", twoRacks(t, "c", 5, 1e9, 10e9), Nominal{NICBps: []float64{1e9}, InterRack: ClassBackbone, InterRackBps: []float64{10e9}}},
		{"core with one faster uplink", mustCluster(t, core), Nominal{NICBps: []float64{1e9}, InterRack: ClassUplink, InterRackBps: []float64{10e9, 40e9}}},
		{"one NIC faster", mustCluster(t, hetero), Nominal{NICBps: []float64{1e9, 10e9}, InterRack: ClassUplink, InterRackBps: []float64{10e9}}},
		{"one rack under a core", mustCluster(t, treeDescription(1, 4)), Nominal{NICBps: []float64{1e9}}},
	}
	for _, c := range cases {
		got := NominalOf(c.cl)
		if !got.Equal(&c.want) {
			t.Errorf("%s: %+v, want %+v", c.name, *got, c.want)
		}
		if err := (Params{Nominal: got}).Validate(); err != nil {
			t.Errorf("%s: the cluster's own nominal rates are refused: %v", c.name, err)
		}
	}
}

func TestNominalValidate(t *testing.T) {
	cases := []struct {
		name string
		n    Nominal
		want string
	}{
		{"no NIC rate", Nominal{}, "nominal.nic_bps: empty"},
		{"negative NIC rate", Nominal{NICBps: []float64{-1e9}}, "nominal.nic_bps[0]: -1e+09, want a positive finite rate"},
		{"rates out of order", Nominal{NICBps: []float64{10e9, 1e9}}, "nominal.nic_bps[1]: 1e+09 after 1e+10"},
		{"rate twice", Nominal{NICBps: []float64{1e9, 1e9}}, "want each rate once"},
		{"unknown class", Nominal{NICBps: []float64{1e9}, InterRack: "cable", InterRackBps: []float64{1e10}}, `nominal.inter_rack: "cable", want "backbone", "uplink"`},
		{"rates without their class", Nominal{NICBps: []float64{1e9}, InterRackBps: []float64{1e10}}, "nominal.inter_rack_bps: given without its class"},
		{"class without its rates", Nominal{NICBps: []float64{1e9}, InterRack: ClassBackbone}, "nominal.inter_rack_bps: given without its class inter_rack, or inter_rack without its rates"},
	}
	for _, c := range cases {
		p := DefaultParams()
		p.Nominal = &c.n
		checkBadInput(t, c.name, p.Validate(), c.want)
	}
}

// fittedParams are parameters of every class, as a calibration of a cluster of 1 Gbit/s
// NICs and a 10 Gbit/s backbone holds them (the sizes of the committed two-rack-1g
// calibration, but for the backbone, which saturates here).
func fittedParams() Params {
	lone := 0.12
	return Params{Efficiency: 0.94, CeilingBps: 9.3e8, NICBps: 9.2e8, BackboneBps: 9.1e9, ContraFactor: 0.72,
		LatencyS:         map[cluster.PathClass]float64{cluster.IntraRack: 5e-5, cluster.InterRack: 8e-5},
		InverseBandwidth: map[cluster.PathClass]float64{cluster.IntraRack: 8.6e-9, cluster.InterRack: 8.7e-9},
		PenaltyAlpha:     8.5e-9,
		Learned: map[string]*LearnedParams{
			"ackpath-alpha": {CeilingBps: 9.35e8, NICBps: 9.25e8, BackboneBps: 9.2e9, AckIn: 0.51, AckOut: 0.28, AckFull: 0.22, AckLone: &lone,
				AckRamp: 0.0094, AckRampMax: 4, Alpha: 0.58},
			"duplex": {Coupling: 0.19},
		},
		Nominal: &Nominal{NICBps: []float64{1e9}, InterRack: ClassBackbone, InterRackBps: []float64{10e9}}}
}

// outcomes is each class's outcome, "class:outcome" in order.
func outcomes(classes []CarriedClass) string {
	s := make([]string, len(classes))
	for i, c := range classes {
		s[i] = c.Class + ":" + c.Outcome
	}
	return strings.Join(s, " ")
}

// TestCarry carries parameters of every class to clusters that differ in one class each,
// and checks the outcome of each class, the parameters that reach the models and the
// capacities of the network built from them: a carried capacity as fitted, a fallen-back
// one the nominal rate × 0.94.
func TestCarry(t *testing.T) {
	p := fittedParams()
	oneRack := treeDescription(1, 8)
	oneRack.Backbone = nil
	heteroNICs := twoRacks(t, "mixed", 4, 1e9, 10e9).Description()
	heteroNICs.Node = []cluster.NodeSettings{{Name: "x1", NICRateBps: 10e9}}
	cases := []struct {
		name     string
		to       *cluster.Cluster
		outcomes string
		// nic and inter are the capacities of a NIC and of a resource between racks the
		// network gets; hockney the path classes whose α and β are kept.
		nic, inter float64
		hockney    []cluster.PathClass
		learnedNIC bool // the learned model keeps its NIC capacity, ceiling and ramp-up cost
	}{
		{"64 nodes, the same classes", twoRacks(t, "big", 32, 1e9, 10e9),
			"nic:carried backbone:carried intra-rack:carried inter-rack:carried factors:carried", 9.2e8, 9.1e9,
			[]cluster.PathClass{cluster.IntraRack, cluster.InterRack}, true},
		{"a 25 Gbit/s backbone", twoRacks(t, "fast-backbone", 5, 1e9, 25e9),
			"nic:carried backbone:fallback intra-rack:carried inter-rack:fallback factors:carried", 9.2e8, 0.94 * 25e9,
			[]cluster.PathClass{cluster.IntraRack}, true},
		{"10 Gbit/s NICs", twoRacks(t, "fast-nics", 5, 10e9, 10e9),
			"nic:fallback backbone:carried intra-rack:fallback inter-rack:fallback factors:carried", 0.94 * 10e9, 9.1e9, nil, false},
		{"uplinks to a core router", mustCluster(t, treeDescription(3, 4)),
			"nic:carried uplink:fallback intra-rack:carried inter-rack:fallback factors:carried", 9.2e8, 0.94 * 10e9,
			[]cluster.PathClass{cluster.IntraRack}, true},
		{"one rack", mustCluster(t, oneRack),
			"nic:carried backbone:dropped intra-rack:carried inter-rack:dropped factors:carried", 9.2e8, 0,
			[]cluster.PathClass{cluster.IntraRack}, true},
		{"NICs of two rates", mustCluster(t, heteroNICs),
			"nic:fallback backbone:carried intra-rack:fallback inter-rack:fallback factors:carried", 0.94 * 1e9, 9.1e9, nil, false},
	}
	for _, c := range cases {
		out, classes := p.Carry(p.Nominal, c.to)
		if got := outcomes(classes); got != c.outcomes {
			t.Errorf("%s: outcomes\n%s, want\n%s", c.name, got, c.outcomes)
		}
		if !out.Nominal.Equal(NominalOf(c.to)) {
			t.Errorf("%s: the carried parameters' nominal rates are %+v, not the cluster's", c.name, *out.Nominal)
		}
		net, err := out.Network(c.to)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		for _, r := range c.to.Resources() {
			want := c.inter
			if r.Kind == cluster.NICOut || r.Kind == cluster.NICIn {
				want = c.nic
				if r.Owner == "x1" && c.name == "NICs of two rates" {
					want = 0.94 * 10e9
				}
			}
			if want > 0 && net.Capacity[r.ID] != want {
				t.Errorf("%s: %s has capacity %g, want %g", c.name, r.Name(), net.Capacity[r.ID], want)
			}
		}
		var kept []cluster.PathClass
		for _, class := range cluster.PathClasses() {
			_, alpha := out.LatencyS[class]
			_, beta := out.InverseBandwidth[class]
			if alpha != beta {
				t.Errorf("%s: %s keeps α %v and β %v: a path class is carried whole", c.name, class, alpha, beta)
			}
			if alpha {
				kept = append(kept, class)
				if out.LatencyS[class] != p.LatencyS[class] || out.InverseBandwidth[class] != p.InverseBandwidth[class] {
					t.Errorf("%s: %s carried as α %g, β %g", c.name, class, out.LatencyS[class], out.InverseBandwidth[class])
				}
			}
		}
		if !slices.Equal(kept, c.hockney) {
			t.Errorf("%s: Hockney classes kept %v, want %v", c.name, kept, c.hockney)
		}
		lp, want := out.Learned["ackpath-alpha"], p.Learned["ackpath-alpha"]
		if got := lp.NICBps == want.NICBps && lp.CeilingBps == want.CeilingBps && lp.AckRamp == want.AckRamp && lp.AckRampMax == want.AckRampMax; got != c.learnedNIC {
			t.Errorf("%s: learned NIC parameters kept: %v, want %v (%+v)", c.name, got, c.learnedNIC, *lp)
		}
		if !c.learnedNIC && (lp.NICBps != 0 || lp.CeilingBps != 0 || lp.AckRamp != 0 || lp.AckRampMax != 0 || out.PenaltyAlpha != 0 || out.CeilingBps != 0) {
			t.Errorf("%s: NIC parameters not fallen back: %+v, penalty α %g, ceiling %g", c.name, *lp, out.PenaltyAlpha, out.CeilingBps)
		}
		// The factors are carried whatever the rates.
		if lp.AckIn != 0.51 || lp.Alpha != 0.58 || lp.LoneAck() != 0.12 || out.Learned["duplex"].Coupling != 0.19 || out.ContraFactor != 0.72 || out.Efficiency != 0.94 {
			t.Errorf("%s: factors changed: %+v, φ %g", c.name, *lp, out.ContraFactor)
		}
		if !CarriesAny(classes) {
			t.Errorf("%s: carries nothing", c.name)
		}
	}
	// The calibration's parameters are not changed by carrying them.
	if q := fittedParams(); p.Learned["ackpath-alpha"].NICBps != q.Learned["ackpath-alpha"].NICBps || p.BackboneBps != q.BackboneBps || len(p.LatencyS) != 2 {
		t.Errorf("carrying changed the parameters it carried: %+v", p)
	}
}

// TestCarryNotes checks what the notes say: the rates on both clusters and what is used
// instead, and the parameters of each class by their JSON keys.
func TestCarryNotes(t *testing.T) {
	p := fittedParams()
	_, classes := p.Carry(p.Nominal, twoRacks(t, "fast-backbone", 5, 1e9, 25e9))
	want := map[string]struct {
		keys []string
		note string
	}{
		"nic": {[]string{"ceiling_bps", "nic_bps", "penalty_alpha_s_per_byte", "learned.ackpath-alpha.ceiling_bps", "learned.ackpath-alpha.nic_bps",
			"learned.ackpath-alpha.ack_ramp_s", "learned.ackpath-alpha.ack_ramp_max"}, "fitted for NICs of 1 Gbit/s; the cluster has NICs of 1 Gbit/s"},
		"backbone": {[]string{"backbone_bps", "learned.ackpath-alpha.backbone_bps"},
			"fitted for a backbone of 10 Gbit/s; the cluster has a backbone of 25 Gbit/s: 0.94 × nominal (25 Gbit/s)"},
		"inter-rack": {[]string{"latency_s.inter-rack", "inverse_bandwidth_s_per_byte.inter-rack"},
			"fitted on paths through NICs of 1 Gbit/s and a backbone of 10 Gbit/s; the cluster has NICs of 1 Gbit/s and a backbone of 25 Gbit/s: no latency added; hockney's β 8/ceiling"},
		"factors": {[]string{"efficiency", "contra_factor", "learned.ackpath-alpha.ack_in", "learned.ackpath-alpha.ack_out", "learned.ackpath-alpha.ack_full",
			"learned.ackpath-alpha.ack_lone", "learned.ackpath-alpha.alpha", "learned.duplex.coupling"}, "fractions and factors without a rate apply as they are"},
	}
	for _, c := range classes {
		w, ok := want[c.Class]
		if !ok {
			continue
		}
		if !slices.Equal(c.Parameters, w.keys) || c.Note != w.note {
			t.Errorf("%s: %v %q\nwant %v %q", c.Class, c.Parameters, c.Note, w.keys, w.note)
		}
	}
	// A calibration that fits nothing between racks says so, with the nominal rate used.
	q := DefaultParams()
	q.Nominal = p.Nominal
	_, classes = q.Carry(q.Nominal, twoRacks(t, "plain", 2, 1e9, 25e9))
	if got := outcomes(classes); got != "nic:fallback backbone:fallback factors:carried" || CarriesAny(classes) {
		t.Fatalf("default parameters: %s", got)
	}
	if n := classes[1].Note; n != "nothing fitted between racks (the cluster has a backbone of 25 Gbit/s): 0.94 × nominal (25 Gbit/s)" {
		t.Errorf("nothing fitted: %q", n)
	}
}

// TestBenchClusterFile checks that bench/two-rack-64.toml describes the benchmarks' cluster
// (benchTwoRack): the same nodes in the same racks and order, the same resources.
func TestBenchClusterFile(t *testing.T) {
	file, err := cluster.Load("../bench/two-rack-64.toml")
	if err != nil {
		t.Fatal(err)
	}
	bench := benchTwoRack()
	if !slices.Equal(file.Nodes(), bench.Nodes()) || !slices.Equal(file.Racks(), bench.Racks()) || !slices.Equal(file.Resources(), bench.Resources()) {
		t.Errorf("bench/two-rack-64.toml is not benchTwoRack:\n%+v\n%+v", file.Nodes(), bench.Nodes())
	}
}

// benchPatternSHA256 is the SHA-256 of the benchmarks' 10⁴-transfer pattern as a CSV file
// (the pattern.csv of `make simgrid-inputs`), which cmd/commcal's tests write again.
const benchPatternSHA256 = "daaa68dcf98293b8fbd40a867a6f42e9bfd47c8d90c12eedaca143524b0429b1"

// TestBenchPatternDigest pins the benchmarks' pattern to benchPatternSHA256, so that the
// pattern cmd/commcal's tests predict is this one.
func TestBenchPatternDigest(t *testing.T) {
	_, flows := benchPattern()
	h := sha256.New()
	fmt.Fprintln(h, "src,dst,bytes")
	for _, f := range flows {
		fmt.Fprintf(h, "%s,%s,%s\n", f.Src, f.Dst, strconv.FormatFloat(f.Bytes, 'f', -1, 64))
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != benchPatternSHA256 {
		t.Errorf("the benchmarks' pattern has SHA-256 %s, want %s", got, benchPatternSHA256)
	}
}
