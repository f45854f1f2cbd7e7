package estimate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// Param is one estimated parameter with its 95% confidence interval and the number of
// observations behind it.
type Param struct {
	Value  float64 `json:"value"`
	CILow  float64 `json:"ci_low"`
	CIHigh float64 `json:"ci_high"`
	N      int     `json:"n"`
}

// Covers says whether the interval contains v.
func (p Param) Covers(v float64) bool { return p.CILow <= v && v <= p.CIHigh }

// Param's JSON form. JSON numbers cannot hold infinities or NaN, and a string inside a number
// field makes strict readers (JSON Schema validators, typed decoders) refuse the file, so a
// value or bound that is not finite is written as null and named in the object's "nonfinite"
// flag, which says what it is:
//
//	{"value": 9.4e+08, "ci_low": 9.1e+08, "ci_high": null, "n": 4, "nonfinite": {"ci_high": "+inf"}}
//
// The flag is left out when all three are finite. Each of its keys (value, ci_low, ci_high)
// is "+inf", "-inf" or "nan" and goes with a null; a null without its flag, or a flag over a
// number, is an error. A bound that does not exist (a regime measured at one point, a
// capacity never reached) is the infinite one. Calibrations of format commcal-calibration/1
// wrote the strings "inf", "-inf" and "nan" in the number fields instead; they are still
// read.
type paramJSON struct {
	Value     *float64       `json:"value"`
	CILow     *float64       `json:"ci_low"`
	CIHigh    *float64       `json:"ci_high"`
	N         int            `json:"n"`
	Nonfinite *nonfiniteJSON `json:"nonfinite,omitempty"`
}

// nonfiniteJSON names the fields of a Param that are null because they are not finite.
type nonfiniteJSON struct {
	Value  string `json:"value,omitempty"`
	CILow  string `json:"ci_low,omitempty"`
	CIHigh string `json:"ci_high,omitempty"`
}

// Values of the nonfinite flag.
const (
	PlusInf  = "+inf"
	MinusInf = "-inf"
	NotANum  = "nan"
)

// splitFinite returns v as a JSON number (nil when not finite) and its flag ("" when finite).
func splitFinite(v float64) (*float64, string) {
	switch {
	case math.IsInf(v, 1):
		return nil, PlusInf
	case math.IsInf(v, -1):
		return nil, MinusInf
	case math.IsNaN(v):
		return nil, NotANum
	}
	return &v, ""
}

// joinFinite is splitFinite's inverse; name is the field, for errors.
func joinFinite(name string, v *float64, flag string) (float64, error) {
	switch {
	case v != nil && flag != "":
		return 0, fmt.Errorf("estimate: %s is a number and flagged nonfinite %q", name, flag)
	case v != nil:
		return *v, nil
	}
	switch flag {
	case PlusInf:
		return math.Inf(1), nil
	case MinusInf:
		return math.Inf(-1), nil
	case NotANum:
		return math.NaN(), nil
	case "":
		return 0, fmt.Errorf("estimate: %s is null without a nonfinite flag saying what it is", name)
	}
	return 0, fmt.Errorf("estimate: nonfinite %s is %q, want %q, %q or %q", name, flag, PlusInf, MinusInf, NotANum)
}

// MarshalJSON implements json.Marshaler.
func (p Param) MarshalJSON() ([]byte, error) {
	var j paramJSON
	var nf nonfiniteJSON
	j.Value, nf.Value = splitFinite(p.Value)
	j.CILow, nf.CILow = splitFinite(p.CILow)
	j.CIHigh, nf.CIHigh = splitFinite(p.CIHigh)
	j.N = p.N
	if nf != (nonfiniteJSON{}) {
		j.Nonfinite = &nf
	}
	return json.Marshal(j)
}

// legacyParamJSON is the form of commcal-calibration/1: "inf", "-inf" or "nan" as strings.
type legacyParamJSON struct {
	Value  any `json:"value"`
	CILow  any `json:"ci_low"`
	CIHigh any `json:"ci_high"`
	N      int `json:"n"`
}

func fromLegacyNumber(name string, v any) (float64, error) {
	switch x := v.(type) {
	case float64:
		return x, nil
	case string:
		switch x {
		case "inf":
			return math.Inf(1), nil
		case "-inf":
			return math.Inf(-1), nil
		case "nan":
			return math.NaN(), nil
		}
	}
	return 0, fmt.Errorf("estimate: %s is %v, not a number", name, v)
}

// UnmarshalJSON implements json.Unmarshaler: the form above, or the legacy one. Unknown keys
// are errors.
func (p *Param) UnmarshalJSON(data []byte) error {
	var j paramJSON
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&j); err != nil {
		if legacy, lerr := decodeLegacyParam(data); lerr == nil {
			*p = legacy
			return nil
		}
		return err
	}
	var nf nonfiniteJSON
	if j.Nonfinite != nil {
		nf = *j.Nonfinite
	}
	var q Param
	var err error
	if q.Value, err = joinFinite("value", j.Value, nf.Value); err != nil {
		return err
	}
	if q.CILow, err = joinFinite("ci_low", j.CILow, nf.CILow); err != nil {
		return err
	}
	if q.CIHigh, err = joinFinite("ci_high", j.CIHigh, nf.CIHigh); err != nil {
		return err
	}
	q.N = j.N
	*p = q
	return nil
}

func decodeLegacyParam(data []byte) (Param, error) {
	var j legacyParamJSON
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&j); err != nil {
		return Param{}, err
	}
	var p Param
	var err error
	if p.Value, err = fromLegacyNumber("value", j.Value); err != nil {
		return Param{}, err
	}
	if p.CILow, err = fromLegacyNumber("ci_low", j.CILow); err != nil {
		return Param{}, err
	}
	if p.CIHigh, err = fromLegacyNumber("ci_high", j.CIHigh); err != nil {
		return Param{}, err
	}
	p.N = j.N
	return p, nil
}

// meanParam is the mean with its Student-t interval.
func meanParam(x []float64) Param {
	n := len(x)
	if n == 0 {
		return Param{}
	}
	m := stat.Mean(x, nil)
	p := Param{Value: m, CILow: math.Inf(-1), CIHigh: math.Inf(1), N: n}
	if n > 1 {
		ss := 0.0
		for _, v := range x {
			ss += (v - m) * (v - m)
		}
		se := math.Sqrt(ss / float64(n-1) / float64(n))
		t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(n - 1)}.Quantile(0.975)
		p.CILow, p.CIHigh = m-t*se, m+t*se
	}
	return p
}

// throughOrigin fits y = b·x by least squares, with its Student-t interval.
func throughOrigin(x, y []float64) Param {
	var sxy, sxx float64
	for i := range x {
		sxy += x[i] * y[i]
		sxx += x[i] * x[i]
	}
	b := sxy / sxx
	n := len(x)
	p := Param{Value: b, CILow: math.Inf(-1), CIHigh: math.Inf(1), N: n}
	if n > 1 {
		sse := 0.0
		for i := range x {
			r := y[i] - b*x[i]
			sse += r * r
		}
		se := math.Sqrt(sse / float64(n-1) / sxx)
		t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(n - 1)}.Quantile(0.975)
		p.CILow, p.CIHigh = b-t*se, b+t*se
	}
	return p
}

// ratioParam is a/b with a delta-method interval from the two intervals (taken as
// independent, half-widths as 1.96 standard errors).
func ratioParam(a, b Param) Param {
	r := a.Value / b.Value
	p := Param{Value: r, N: min(a.N, b.N), CILow: math.Inf(-1), CIHigh: math.Inf(1)}
	if math.IsInf(a.Value, 0) || math.IsInf(a.CIHigh-a.CILow, 0) || math.IsInf(b.CIHigh-b.CILow, 0) {
		if !math.IsInf(a.CILow, 0) && b.Value > 0 {
			p.CILow = a.CILow / b.Value
		}
		return p
	}
	sa, sb := (a.CIHigh-a.CILow)/(2*1.96), (b.CIHigh-b.CILow)/(2*1.96)
	se := r * math.Sqrt((sa/a.Value)*(sa/a.Value)+(sb/b.Value)*(sb/b.Value))
	p.CILow, p.CIHigh = r-1.96*se, r+1.96*se
	return p
}
