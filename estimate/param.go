package estimate

import (
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

// paramJSON is Param's JSON form: a bound that is infinite (no interval, or a one-sided one)
// is written as the string "inf" or "-inf", which JSON numbers cannot hold.
type paramJSON struct {
	Value  any `json:"value"`
	CILow  any `json:"ci_low"`
	CIHigh any `json:"ci_high"`
	N      int `json:"n"`
}

func jsonNumber(v float64) any {
	switch {
	case math.IsInf(v, 1):
		return "inf"
	case math.IsInf(v, -1):
		return "-inf"
	case math.IsNaN(v):
		return "nan"
	}
	return v
}

func fromJSONNumber(v any) (float64, error) {
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
	return 0, fmt.Errorf("estimate: %v is not a number, \"inf\", \"-inf\" or \"nan\"", v)
}

// MarshalJSON implements json.Marshaler.
func (p Param) MarshalJSON() ([]byte, error) {
	return json.Marshal(paramJSON{Value: jsonNumber(p.Value), CILow: jsonNumber(p.CILow), CIHigh: jsonNumber(p.CIHigh), N: p.N})
}

// UnmarshalJSON implements json.Unmarshaler.
func (p *Param) UnmarshalJSON(data []byte) error {
	var j paramJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return err
	}
	var err error
	if p.Value, err = fromJSONNumber(j.Value); err != nil {
		return err
	}
	if p.CILow, err = fromJSONNumber(j.CILow); err != nil {
		return err
	}
	if p.CIHigh, err = fromJSONNumber(j.CIHigh); err != nil {
		return err
	}
	p.N = j.N
	return nil
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
