package plots

import (
	"math"
	"strconv"

	"gonum.org/v1/plot"
)

// Every figure chooses its axes from the data it draws, never from gonum/plot's defaults,
// which panic on a log axis whose range reaches 0 (a single value v widens to [v−1, v+1]) and
// on a linear axis of one value beyond 2⁵³ (v−1 = v+1). Values are drawn only when the
// plotting arithmetic cannot overflow or underflow on them:
//
//   - on a log axis, finite values in [logMin, logMax] (1e-300 to 1e300: ticks are powers of
//     ten, and 10³⁰⁹ is +Inf);
//   - on a linear axis, finite values of magnitude at most linMax (1e300: the difference of
//     two such values is finite).
//
// The figures skip other values and say so in their warnings.
const (
	logMin = 1e-300
	logMax = 1e300
	linMax = 1e300
)

// onLog reports whether v can be drawn on a log axis.
func onLog(v float64) bool { return v >= logMin && v <= logMax }

// onLin reports whether v can be drawn on a linear axis.
func onLin(v float64) bool { return math.Abs(v) <= linMax }

// span is the range of the values an axis shows.
type span struct {
	lo, hi float64
	ok     bool
}

func (s *span) add(vs ...float64) {
	for _, v := range vs {
		if math.IsNaN(v) {
			continue
		}
		if !s.ok {
			s.lo, s.hi, s.ok = v, v, true
			continue
		}
		s.lo, s.hi = math.Min(s.lo, v), math.Max(s.hi, v)
	}
}

// narrow reports whether a range is too narrow to be drawn as it is: one value, or values
// that differ in their last few digits only.
func narrow(lo, hi float64) bool {
	return !(hi-lo > 1e-9*math.Max(math.Abs(lo), math.Abs(hi)))
}

// setLog sets a log axis to a span of values accepted by onLog, widened by a factor of ten
// each side when it holds one value; with no values it shows 1 to 10. Its ticks are
// logTicks.
func setLog(a *plot.Axis, s span) {
	lo, hi := 1.0, 10.0
	if s.ok {
		lo, hi = s.lo, s.hi
	}
	if hi/lo < 1+1e-9 {
		lo, hi = lo/10, hi*10
	}
	a.Scale, a.Tick.Marker = plot.LogScale{}, logTicks{}
	a.Min, a.Max = lo, hi
}

// setLin sets a linear axis to a span of values accepted by onLin, widened by 10% of the
// value each side (or by 1 either side of 0) when it is too narrow to draw; with no values it shows
// 0 to 1.
func setLin(a *plot.Axis, s span) {
	lo, hi := 0.0, 1.0
	if s.ok {
		lo, hi = s.lo, s.hi
	}
	if narrow(lo, hi) {
		w := 0.1 * math.Max(math.Abs(lo), math.Abs(hi))
		if w == 0 || math.IsNaN(w) {
			w = 1
		}
		lo, hi = lo-w, hi+w
	}
	a.Min, a.Max = lo, hi
}

// logTicks marks powers of ten: every decade with minor ticks at 2…9 when the axis spans
// at most 12 decades, else about 8 labelled decades without minor ticks (an axis from 1e-100
// to 1e300 would otherwise carry 3,600 ticks). It never panics: a range that is not positive
// gets no ticks.
type logTicks struct{}

func (logTicks) Ticks(min, max float64) []plot.Tick {
	if !(min > 0) || !(max >= min) || math.IsInf(max, 0) {
		return nil
	}
	lo, hi := math.Floor(math.Log10(min)), math.Ceil(math.Log10(max))
	step := math.Max(1, math.Ceil((hi-lo)/8))
	var ticks []plot.Tick
	for e := lo; e <= hi; e += step {
		// Parsed rather than computed: math.Pow10(-100) is 9.999999999999999e-101.
		v, err := strconv.ParseFloat("1e"+strconv.Itoa(int(e)), 64)
		if err != nil || v == 0 || math.IsInf(v, 0) {
			continue
		}
		ticks = append(ticks, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'g', -1, 64)})
		if hi-lo <= 12 && e < hi {
			for i := 2; i < 10; i++ {
				ticks = append(ticks, plot.Tick{Value: v * float64(i)})
			}
		}
	}
	return ticks
}

// distinctTicks are gonum's default ticks with labels printed to as many digits as it takes
// to tell them apart (the default prints 26.99, 27 and 27.01 as "27" three times): decimals
// for values from 0.001 to a million, else significant digits.
type distinctTicks struct{}

func (distinctTicks) Ticks(min, max float64) []plot.Tick {
	ticks := plot.DefaultTicks{}.Ticks(min, max)
	big := math.Max(math.Abs(min), math.Abs(max))
	format := func(v float64, digits int) string { return strconv.FormatFloat(v, 'g', digits+1, 64) }
	if big >= 1e-3 && big < 1e6 {
		format = func(v float64, digits int) string { return strconv.FormatFloat(v, 'f', digits-2, 64) }
	}
	for digits := 2; digits <= 12; digits++ {
		seen := map[string]bool{}
		clash := false
		for i, t := range ticks {
			if t.Label == "" {
				continue
			}
			l := format(t.Value, digits)
			clash = clash || seen[l]
			seen[l] = true
			ticks[i].Label = l
		}
		if !clash {
			break
		}
	}
	return ticks
}
