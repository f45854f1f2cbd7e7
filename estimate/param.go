package estimate

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"

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
	if j.N < 0 {
		return fmt.Errorf("estimate: n is %d, want a count of observations ≥ 0", j.N)
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
	if j.N < 0 {
		return Param{}, fmt.Errorf("estimate: n is %d, want a count of observations ≥ 0", j.N)
	}
	p.N = j.N
	return p, nil
}

// UnflaggedNull finds the first null of a JSON document that decoding into v (a pointer to
// the value the document decoded into without error) would read as a zero or as absent
// without a word: a null where v holds a number, a string, a bool or a struct, and a null for
// any field that is left out when empty (omitempty: commcal never writes a null there). A null
// for a pointer, a slice or a map written even when empty is left alone (encoding/json writes
// none so), and so is everything inside a value that decodes itself, as Param does (its nulls
// must come with a nonfinite flag). It returns the key's path ("params.nic_bps",
// "hockney[0].r2") and its line, or line 0.
func UnflaggedNull(data []byte, v any) (key string, line int) {
	dec := json.NewDecoder(bytes.NewReader(data))
	var stack []*nullFrame
	for {
		off := dec.InputOffset()
		tok, err := dec.Token()
		if err != nil {
			return "", 0
		}
		here, t, omitted := "", reflect.TypeOf(v).Elem(), false
		if n := len(stack); n > 0 {
			top := stack[n-1]
			if k, ok := tok.(string); ok && top.object && top.wantKey {
				top.key, top.wantKey = k, false
				continue
			}
			if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
				if stack = stack[:n-1]; len(stack) == 0 {
					return "", 0
				}
				stack[len(stack)-1].next()
				continue
			}
			here, t, omitted = top.child()
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			stack = append(stack, &nullFrame{t: lookInto(t), object: tok == json.Delim('{'), wantKey: true, path: here})
			continue
		case nil:
			if omitted || nullHides(t) {
				for off < int64(len(data)) && strings.IndexByte(" \t\r\n:,", data[off]) >= 0 {
					off++ // to the null itself
				}
				return cmp.Or(here, "the document"), 1 + bytes.Count(data[:off], []byte("\n"))
			}
		}
		if len(stack) == 0 {
			return "", 0
		}
		stack[len(stack)-1].next()
	}
}

// nullFrame is an object or a list UnflaggedNull is inside.
type nullFrame struct {
	t               reflect.Type // its Go type: a struct, map, slice or array; nil: not looked into
	object, wantKey bool
	path, key       string // where it is; the key of the value it reads next (objects)
	index           int    // the index of the value it reads next (lists)
}

// child is the path and the Go type (nil: unknown) of the value the frame reads next, and
// whether it is a struct field left out when empty.
func (f *nullFrame) child() (string, reflect.Type, bool) {
	if f.object {
		path := f.key
		if f.path != "" {
			path = f.path + "." + f.key
		}
		t, omitempty := fieldType(f.t, f.key)
		return path, t, omitempty
	}
	var t reflect.Type
	if f.t != nil && (f.t.Kind() == reflect.Slice || f.t.Kind() == reflect.Array) {
		t = f.t.Elem()
	}
	return fmt.Sprintf("%s[%d]", f.path, f.index), t, false
}

// next moves the frame past the value it read.
func (f *nullFrame) next() {
	if f.object {
		f.wantKey = true
	} else {
		f.index++
	}
}

// fieldType is the Go type of an object's key — a map's element, or the struct field that
// encoding/json would fill (its JSON name, matched regardless of case, embedded structs
// included); nil when there is none — and whether the field is left out when empty.
func fieldType(t reflect.Type, key string) (reflect.Type, bool) {
	switch {
	case t == nil:
		return nil, false
	case t.Kind() == reflect.Map:
		return t.Elem(), false
	case t.Kind() != reflect.Struct:
		return nil, false
	}
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case name == "-" || !f.IsExported() && !f.Anonymous:
			continue
		case name == "" && f.Anonymous:
			if ft, omit := fieldType(lookInto(f.Type), key); ft != nil {
				return ft, omit
			}
			continue
		case name == "":
			name = f.Name
		}
		if strings.EqualFold(name, key) {
			return f.Type, slices.Contains(strings.Split(opts, ","), "omitempty")
		}
	}
	return nil, false
}

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

// decodesItself says whether values of t decode themselves from JSON (as Param does).
func decodesItself(t reflect.Type) bool {
	return t.Implements(unmarshalerType) || reflect.PointerTo(t).Implements(unmarshalerType)
}

// lookInto is the type whose keys or elements UnflaggedNull follows for a value of type t:
// t without pointers, or nil for an unknown type or one that decodes itself.
func lookInto(t reflect.Type) reflect.Type {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || decodesItself(t) {
		return nil
	}
	return t
}

// nullHides says whether a null decoded into a value of type t would leave a zero that reads
// as a value: a number, string, bool, struct or array not decoding itself.
func nullHides(t reflect.Type) bool {
	if t == nil || decodesItself(t) {
		return false
	}
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Map, reflect.Interface:
		return false
	}
	return true
}

// stdErr is a parameter's standard error from its 95% interval (half-width over 1.96).
func stdErr(p Param) float64 { return (p.CIHigh - p.CILow) / (2 * 1.96) }

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
	sa, sb := stdErr(a), stdErr(b)
	se := r * math.Sqrt((sa/a.Value)*(sa/a.Value)+(sb/b.Value)*(sb/b.Value))
	p.CILow, p.CIHigh = r-1.96*se, r+1.96*se
	return p
}
