package contention

import "math"

// powNeg is q^c for q > 0, the power α-fair sharing takes of every class's price sum once per
// set of prices tried (c = −1/α), as 2^(c·log₂ q) from tables and short polynomials:
//
//	log₂ q = e + log₂ m₀ + log(1 + t)/ln 2,  q = 2^e·m, m ∈ [1, 2), t = m/m₀ − 1,
//
// m₀ the centre of m's interval of width 2⁻¹⁰ (|t| < 2⁻¹¹, log(1 + t) by its series to t⁵:
// the first term left out is below 10⁻¹⁸), and
//
//	2^y = 2^⌊k/256⌋ · 2^((k mod 256)/256) · exp(r·ln 2),  k = y·256 rounded, r = y − k/256,
//
// (|r| ≤ 2⁻⁹, exp by its series to u⁴: the first term left out is below 4·10⁻¹⁷). Its error
// is that of exp(c·log q) in floating point, the rounding of the exponent: within
// 4·(1 + |c·log₂ q|)·2⁻⁵³ relative (TestPowNeg), a few 10⁻¹⁵ where the rates lie (|c·log₂ q| ≈ 10). It takes
// less than half the time of math.Exp(c·math.Log(q)), which was a third of ackpath-alpha's
// time on the 10⁴-transfer pattern. Outside the tables' range (q not a normal number, or
// |c·log₂ q| ≥ 1020) it is math.Exp2 of math.Log2.
func powNeg(q, c float64) float64 {
	bits := math.Float64bits(q)
	ex := int64(bits>>52) - 1023 // q > 0: no sign bit
	if ex <= -1023 || ex >= 1024 {
		return math.Exp2(c * math.Log2(q))
	}
	le := &logTable[(bits>>42)&uint64(len(logTable)-1)]
	t := math.Float64frombits(bits&(1<<52-1)|1023<<52)*le.inv - 1
	lg := t * (1 + t*(-1.0/2+t*(1.0/3+t*(-1.0/4+t*(1.0/5)))))
	y := c * (float64(ex) + le.log2 + lg*math.Log2E)
	if !(y > -1020 && y < 1020) {
		return math.Exp2(y)
	}
	// k = round(y·256), by the shift that leaves the rounded value in the low bits.
	const shift = 0x1.8p52
	kf := y*256 + shift
	k := int64(math.Float64bits(kf) - math.Float64bits(shift))
	u := (y - (kf-shift)/256) * math.Ln2
	v := expTable[k&int64(len(expTable)-1)] * (1 + u*(1+u*(1.0/2+u*(1.0/6+u*(1.0/24)))))
	return math.Float64frombits(math.Float64bits(v) + uint64(k>>8)<<52)
}

// logTable holds, for each interval of width 2⁻¹⁰ of the mantissa m ∈ [1, 2), 1/m₀ for its
// centre m₀ (rounded) and log₂ of the m₀ that inverse stands for; expTable 2^(i/256).
var (
	logTable [1024]struct{ inv, log2 float64 }
	expTable [256]float64
)

func init() {
	for j := range logTable {
		inv := 1 / (1 + (float64(j)+0.5)/float64(len(logTable)))
		logTable[j].inv, logTable[j].log2 = inv, -math.Log2(inv)
	}
	for i := range expTable {
		expTable[i] = math.Exp2(float64(i) / float64(len(expTable)))
	}
}
