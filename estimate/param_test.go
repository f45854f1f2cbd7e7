package estimate

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// sameFloat is equality that counts NaN equal to NaN.
func sameFloat(a, b float64) bool { return a == b || (math.IsNaN(a) && math.IsNaN(b)) }

func TestParamJSON(t *testing.T) {
	inf := math.Inf(1)
	cases := []struct {
		name string
		p    Param
		want string
	}{
		{"finite", Param{Value: 9.4e8, CILow: 9.1e8, CIHigh: 9.7e8, N: 4},
			`{"value":940000000,"ci_low":910000000,"ci_high":970000000,"n":4}`},
		{"one-sided interval", Param{Value: 9.4e8, CILow: 9.1e8, CIHigh: inf, N: 1},
			`{"value":940000000,"ci_low":910000000,"ci_high":null,"n":1,"nonfinite":{"ci_high":"+inf"}}`},
		{"no interval", Param{Value: 2e-5, CILow: -inf, CIHigh: inf, N: 1},
			`{"value":0.00002,"ci_low":null,"ci_high":null,"n":1,"nonfinite":{"ci_low":"-inf","ci_high":"+inf"}}`},
		{"capacity never reached", Param{Value: inf, CILow: inf, CIHigh: inf},
			`{"value":null,"ci_low":null,"ci_high":null,"n":0,"nonfinite":{"value":"+inf","ci_low":"+inf","ci_high":"+inf"}}`},
		{"not a number", Param{Value: math.NaN(), CILow: 1, CIHigh: 2, N: 3},
			`{"value":null,"ci_low":1,"ci_high":2,"n":3,"nonfinite":{"value":"nan"}}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			data, err := json.Marshal(c.p)
			if err != nil {
				t.Fatal(err)
			}
			if string(data) != c.want {
				t.Errorf("got  %s\nwant %s", data, c.want)
			}
			// No number field holds a string, whatever the values.
			var raw map[string]any
			if err := json.Unmarshal(data, &raw); err != nil {
				t.Fatal(err)
			}
			for _, k := range []string{"value", "ci_low", "ci_high", "n"} {
				if _, isString := raw[k].(string); isString {
					t.Errorf("%s is a string: %s", k, data)
				}
			}
			var back Param
			if err := json.Unmarshal(data, &back); err != nil {
				t.Fatal(err)
			}
			if !sameFloat(back.Value, c.p.Value) || !sameFloat(back.CILow, c.p.CILow) || !sameFloat(back.CIHigh, c.p.CIHigh) || back.N != c.p.N {
				t.Errorf("round trip: %+v, want %+v", back, c.p)
			}
		})
	}
}

// Calibrations of format commcal-calibration/1 wrote infinities as strings; they still read.
func TestParamJSONLegacy(t *testing.T) {
	var p Param
	if err := json.Unmarshal([]byte(`{"value":"inf","ci_low":"-inf","ci_high":"inf","n":2}`), &p); err != nil {
		t.Fatal(err)
	}
	if !math.IsInf(p.Value, 1) || !math.IsInf(p.CILow, -1) || !math.IsInf(p.CIHigh, 1) || p.N != 2 {
		t.Errorf("got %+v", p)
	}
	if err := json.Unmarshal([]byte(`{"value":"nan","ci_low":1,"ci_high":2,"n":2}`), &p); err != nil || !math.IsNaN(p.Value) || p.CILow != 1 {
		t.Errorf("got %+v, %v", p, err)
	}
}

func TestParamJSONErrors(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"value":null,"ci_low":1,"ci_high":2,"n":1}`, "value is null without a nonfinite flag"},
		{`{"value":1,"ci_low":1,"ci_high":2,"n":1,"nonfinite":{"value":"+inf"}}`, "value is a number and flagged nonfinite"},
		{`{"value":1,"ci_low":1,"ci_high":null,"n":1,"nonfinite":{"ci_high":"infinity"}}`, `nonfinite ci_high is "infinity"`},
		{`{"value":1,"ci_low":1,"ci_high":2,"n":1,"unit":"s"}`, `unknown field "unit"`},
		{`{"value":"big","ci_low":1,"ci_high":2,"n":1}`, "cannot unmarshal string"},
		{`{"value":1,"ci_low":1,"ci_high":2,"n":-4}`, "n is -4, want a count of observations ≥ 0"},
	} {
		var p Param
		err := json.Unmarshal([]byte(c.in), &p)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error containing %q", c.in, err, c.want)
		}
	}
}

// UnflaggedNull finds the nulls that decoding reads as a zero without a word (numbers,
// strings, structs, and any field left out when empty), at their key and line, and leaves
// alone those commcal writes: a nil list or pointer that is not left out, and an estimate's
// value or bound that its nonfinite flag names.
func TestUnflaggedNull(t *testing.T) {
	type inner struct {
		Rate  float64            `json:"rate_bps,omitempty"`
		Lat   map[string]float64 `json:"latency_s,omitempty"`
		Rates []float64          `json:"rates"`
		Next  *inner             `json:"next"`
	}
	type doc struct {
		Name   string  `json:"name"`
		Est    Param   `json:"est"`
		Inner  inner   `json:"inner"`
		List   []inner `json:"list"`
		Counts []int   `json:"counts"`
	}
	for _, c := range []struct {
		in, key string
		line    int
	}{
		{`{"name": "a", "inner": {"rate_bps": 5, "rates": null, "next": null}, "list": null}`, "", 0},
		{`{"est": {"value": 1, "ci_low": null, "ci_high": 2, "n": 1, "nonfinite": {"ci_low": "-inf"}}}`, "", 0},
		{`{"name": null}`, "name", 1},
		{"{\n\"inner\": {\"rate_bps\":\n null}}", "inner.rate_bps", 3},
		{`{"inner": {"latency_s": null}}`, "inner.latency_s", 1},
		{`{"inner": {"latency_s": {"intra-rack": null}}}`, "inner.latency_s.intra-rack", 1},
		{`{"inner": {"next": {"next": {"RATE_BPS": null}}}}`, "inner.next.next.RATE_BPS", 1},
		{`{"list": [{}, {"rates": [1, null]}]}`, "list[1].rates[1]", 1},
		{`{"counts": [null]}`, "counts[0]", 1},
		{`{"inner": null}`, "inner", 1},
		{`null`, "the document", 1},
	} {
		var d doc
		if err := json.Unmarshal([]byte(c.in), &d); err != nil {
			t.Fatalf("%s: %v", c.in, err)
		}
		if key, line := UnflaggedNull([]byte(c.in), &d); key != c.key || line != c.line {
			t.Errorf("%s: %q on line %d, want %q on line %d", c.in, key, line, c.key, c.line)
		}
	}
}
