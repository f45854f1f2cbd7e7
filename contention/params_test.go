package contention

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/internal/badinput"
)

// checkBadInput asserts that err is bad input on one line that contains every want.
func checkBadInput(t *testing.T, what string, err error, want ...string) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: no error", what)
		return
	}
	msg := err.Error()
	if !badinput.Is(err) {
		t.Errorf("%s: %q is not marked as bad input", what, msg)
	}
	if strings.ContainsAny(msg, "\r\n") {
		t.Errorf("%s: message spans several lines: %q", what, msg)
	}
	for _, w := range want {
		if !strings.Contains(msg, w) {
			t.Errorf("%s: message %q does not mention %q", what, msg, w)
		}
	}
}

func TestParamsValidate(t *testing.T) {
	inter, intra := cluster.InterRack, cluster.IntraRack
	cases := []struct {
		name string
		set  func(p *Params)
		want string
	}{
		{"negative latency", func(p *Params) { p.LatencyS = map[cluster.PathClass]float64{inter: -0.1} }, "latency_s.inter-rack: -0.1 is negative"},
		{"NaN latency", func(p *Params) { p.LatencyS = map[cluster.PathClass]float64{intra: math.NaN()} }, "latency_s.intra-rack: NaN is not a finite number"},
		{"infinite latency", func(p *Params) { p.LatencyS = map[cluster.PathClass]float64{intra: math.Inf(1)} }, "latency_s.intra-rack: +Inf is not a finite number"},
		{"negative inverse bandwidth", func(p *Params) { p.InverseBandwidth = map[cluster.PathClass]float64{inter: -8e-9} }, "inverse_bandwidth_s_per_byte.inter-rack: -8e-09 is not positive"},
		{"zero inverse bandwidth", func(p *Params) { p.InverseBandwidth = map[cluster.PathClass]float64{intra: 0} }, "inverse_bandwidth_s_per_byte.intra-rack: 0 is not positive"},
		{"infinite inverse bandwidth", func(p *Params) { p.InverseBandwidth = map[cluster.PathClass]float64{intra: math.Inf(1)} }, "inverse_bandwidth_s_per_byte.intra-rack: +Inf is not a finite number"},
		{"misspelled class in latency_s", func(p *Params) { p.LatencyS = map[cluster.PathClass]float64{"inter_rack": 1e-4} }, `latency_s.inter_rack: unknown path class "inter_rack", want intra-rack or inter-rack`},
		{"misspelled class in inverse bandwidth", func(p *Params) { p.InverseBandwidth = map[cluster.PathClass]float64{"intra": 8e-9} }, `inverse_bandwidth_s_per_byte.intra: unknown path class`},
		{"efficiency above 1", func(p *Params) { p.Efficiency = 1.5 }, "efficiency: 1.5 outside (0, 1]"},
		{"negative efficiency", func(p *Params) { p.Efficiency = -0.2 }, "efficiency: -0.2 outside (0, 1]"},
		{"NaN efficiency", func(p *Params) { p.Efficiency = math.NaN() }, "efficiency: NaN is not a finite number"},
		{"contra factor above 1", func(p *Params) { p.ContraFactor = 1.2 }, "contra_factor: 1.2 outside [0, 1]"},
		{"negative contra factor", func(p *Params) { p.ContraFactor = -0.5 }, "contra_factor: -0.5 outside [0, 1]"},
		{"NaN contra factor", func(p *Params) { p.ContraFactor = math.NaN() }, "contra_factor: NaN is not a finite number"},
		{"negative ceiling", func(p *Params) { p.CeilingBps = -1 }, "ceiling_bps: -1 is negative"},
		{"infinite ceiling", func(p *Params) { p.CeilingBps = math.Inf(1) }, "ceiling_bps: +Inf is not a finite number"},
		{"NaN NIC rate", func(p *Params) { p.NICBps = math.NaN() }, "nic_bps: NaN is not a finite number"},
		{"negative backbone rate", func(p *Params) { p.BackboneBps = -10e9 }, "backbone_bps: -1e+10 is negative"},
		{"negative penalty alpha", func(p *Params) { p.PenaltyAlpha = -5e-10 }, "penalty_alpha_s_per_byte: -5e-10 is negative"},
		{"learned ramp count of 1e9", func(p *Params) { p.Learned = map[string]*LearnedParams{"ackpath": {AckRampMax: 1e9}} }, "learned.ackpath: ack_ramp_max: 1000000000, want a count from 0 (not held) to 10000000"},
		{"surface cell twice", func(p *Params) {
			p.Learned = map[string]*LearnedParams{"surface": {Surface: []SurfaceCell{{"core", 1, 1, 0.9}, {"nic-in", 1, 1, 1}, {"core", 1, 1, 0.5}}}}
		}, "learned.surface: surface[2]: the cell core with 1 and contra 1 is surface[0] again (factors 0.9 and 0.5); give each cell once"},
	}
	cl, err := cluster.LoadNamed("ccpe-testbed")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range cases {
		p := DefaultParams()
		tc.set(&p)
		checkBadInput(t, tc.name, p.Validate(), "contention: "+tc.want)
		net, err := p.Network(cl)
		checkBadInput(t, tc.name+" (Network)", err, tc.want)
		if net != nil {
			t.Errorf("%s: Network built a network", tc.name)
		}
	}
	// Every problem is reported, on one line, in a stable order.
	p := Params{Efficiency: 2, ContraFactor: -1, LatencyS: map[cluster.PathClass]float64{inter: -1, intra: -2}}
	err = p.Validate()
	checkBadInput(t, "several", err)
	if want := "contention: efficiency: 2 outside (0, 1] (0 means the default 0.94); contra_factor: -1 outside [0, 1]; latency_s.inter-rack: -1 is negative; latency_s.intra-rack: -2 is negative"; err.Error() != want {
		t.Errorf("several problems: %q\nwant %q", err, want)
	}
	// A caller names the file it read the parameters from.
	err = badinput.Errorf("params.json", "%w", p.Validate())
	if !badinput.Is(err) || !strings.HasPrefix(err.Error(), "params.json: contention: efficiency: 2") {
		t.Errorf("wrapped: %v", err)
	}

	// Valid parameters: the defaults, the zero value (every default), a full calibration.
	full := Params{Efficiency: 1, CeilingBps: 940e6, NICBps: 941e6, BackboneBps: 9.4e9, ContraFactor: 0,
		LatencyS:         map[cluster.PathClass]float64{intra: 0, inter: 5e-5},
		InverseBandwidth: map[cluster.PathClass]float64{intra: 8.5e-9, inter: 8.6e-9}, PenaltyAlpha: 5.105e-10}
	for _, p := range []Params{DefaultParams(), {}, full} {
		if err := p.Validate(); err != nil {
			t.Errorf("%+v: %v", p, err)
		}
		if _, err := p.Network(cl); err != nil {
			t.Errorf("%+v: Network: %v", p, err)
		}
	}
}

// TestNegativeParamsNeverPredict is the report of predictions of −7.98 s from a --params file
// with a negative latency and inverse bandwidth: such parameters are refused, read from JSON
// as the command line reads them, and the misspelled class is not ignored.
func TestNegativeParamsNeverPredict(t *testing.T) {
	cl, err := cluster.LoadNamed("ccpe-testbed")
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range []struct{ json, want string }{
		{`{"efficiency":0.94,"contra_factor":1,"latency_s":{"inter-rack":-0.1},"inverse_bandwidth_s_per_byte":{"inter-rack":-8e-7}}`,
			"latency_s.inter-rack: -0.1 is negative; inverse_bandwidth_s_per_byte.inter-rack: -8e-07 is not positive"},
		{`{"efficiency":0.94,"contra_factor":1,"latency_s":{"inter_rack":0.001}}`, "latency_s.inter_rack: unknown path class"},
		{`{"efficiency":0.94,"contra_factor":1.5}`, "contra_factor: 1.5 outside [0, 1]"},
	} {
		var p Params
		dec := json.NewDecoder(bytes.NewReader([]byte(doc.json)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		net, err := p.Network(cl)
		checkBadInput(t, doc.json, err, doc.want)
		if net != nil {
			for _, m := range Models() {
				pr, err := m.Predict(context.Background(), net, []Flow{{"X1", "Y1", 1e7}})
				if err == nil && pr.Times[0] < 0 {
					t.Errorf("%s predicts %g s", m.Name(), pr.Times[0])
				}
			}
		}
	}
}

// TestBadFlowsAreBadInput: every model refuses a transfer the cluster cannot carry, as bad
// input naming the transfer's index, source and destination.
func TestBadFlowsAreBadInput(t *testing.T) {
	net := tableICluster(t)
	ok := Flow{"X1", "Y2", 1e6}
	cases := []struct {
		name string
		bad  Flow
		want string
	}{
		{"unknown source", Flow{"Q9", "Y2", 1e6}, `transfer 1 ("Q9" → "Y2"): source "Q9" is not a node of cluster table1`},
		{"unknown destination", Flow{"X1", "Z\n", 1e6}, `transfer 1 ("X1" → "Z\n"): destination "Z\n" is not a node of cluster table1`},
		{"same node", Flow{"X2", "X2", 1e6}, `transfer 1 ("X2" → "X2"): source and destination are the same node`},
		{"zero bytes", Flow{"X2", "Y1", 0}, `transfer 1 ("X2" → "Y1"): size 0 bytes, want a positive finite number of bytes`},
		{"negative bytes", Flow{"X2", "Y1", -5}, `transfer 1 ("X2" → "Y1"): size -5 bytes`},
		{"NaN bytes", Flow{"X2", "Y1", math.NaN()}, `transfer 1 ("X2" → "Y1"): size NaN bytes`},
		{"infinite bytes", Flow{"X2", "Y1", math.Inf(1)}, `transfer 1 ("X2" → "Y1"): size +Inf bytes`},
	}
	for _, m := range Models() {
		for _, tc := range cases {
			_, err := m.Predict(context.Background(), net, []Flow{ok, tc.bad, ok})
			checkBadInput(t, m.Name()+": "+tc.name, err, "contention: "+tc.want)
		}
	}
}

func TestPenaltyTableValidate(t *testing.T) {
	good := NewPenaltyTable()
	good.Entries["k"] = map[string]float64{"a": 1, "b": 2.66}
	if err := good.Validate(); err != nil {
		t.Error(err)
	}
	var none *PenaltyTable
	if err := none.Validate(); err != nil {
		t.Error(err)
	}
	bad := NewPenaltyTable()
	bad.Entries["k2"] = map[string]float64{"a": 0.5, "b": math.NaN()}
	bad.Entries["k1"] = map[string]float64{"a": math.Inf(1)}
	checkBadInput(t, "bad table", bad.Validate(), `contention: penalty table: entries["k1"]["a"]: penalty +Inf, want a finite number of at least 1; entries["k2"]["a"]: penalty 0.5`, `entries["k2"]["b"]: penalty NaN`)
}
