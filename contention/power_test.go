package contention

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// powNeg against q^c computed in 200-bit arithmetic (exp and log by their series in big.Float),
// on random q spread over forty decades and every finite α's c = −1/α: within
// 4·(1 + |c·log₂ q|)·2⁻⁵³ relative (the error of rounding the exponent, four times over)
// wherever |c·log₂ q| < 100, as math.Exp(c·math.Log(q)) is; and where the tables do not
// reach (q subnormal, huge results), math.Pow's value to 10⁻¹².
func TestPowNeg(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	worst, worstExp := 0.0, 0.0
	for range 3000 {
		alpha := MinAlpha + rng.Float64()*(MaxAlpha-MinAlpha)
		c := -1 / alpha
		q := math.Exp((rng.Float64()*2 - 1) * 46) // 10^±20
		if math.Abs(c*math.Log2(q)) >= 100 {
			continue
		}
		got, want := powNeg(q, c), bigPow(q, c)
		// Both ways round y = c·log₂ q (or c·log q) once at least: an error of |y|·2⁻⁵³ in the
		// exponent, ln 2 times that in the result.
		limit := 4 * (1 + math.Abs(c*math.Log2(q))) * 0x1p-53
		if d := math.Abs(got-want) / want; d > limit {
			t.Errorf("powNeg(%g, %g) = %.17g, want %.17g: relative error %.3g, more than %.3g", q, c, got, want, d, limit)
		}
		worst = max(worst, math.Abs(got-want)/want/limit)
		worstExp = max(worstExp, math.Abs(math.Exp(c*math.Log(q))-want)/want/limit)
	}
	t.Logf("largest relative error %.3g of the limit; of math.Exp(c·math.Log(q)) %.3g", worst, worstExp)
	for _, q := range []float64{5e-324, 1e-310, 1e-300, 1e300, math.MaxFloat64} {
		for _, c := range []float64{-1 / MinAlpha, -1, -1 / MaxAlpha} {
			got, want := powNeg(q, c), math.Pow(q, c)
			if !(got == want || math.Abs(got-want) <= 1e-12*want) {
				t.Errorf("powNeg(%g, %g) = %g, math.Pow %g", q, c, got, want)
			}
		}
	}
}

// bigPow is q^c to about 60 significant digits: exp(c·log q) by series in 200-bit floats.
func bigPow(q, c float64) float64 {
	const prec = 200
	// log q = 2·atanh(s), s = (q − 1)/(q + 1), after taking q to [1/√2, √2] by powers of 2.
	frac, exp := math.Frexp(q)
	if frac < math.Sqrt2/2 {
		frac, exp = frac*2, exp-1
	}
	x := new(big.Float).SetPrec(prec).SetFloat64(frac)
	one := new(big.Float).SetPrec(prec).SetInt64(1)
	s := new(big.Float).SetPrec(prec).Quo(new(big.Float).SetPrec(prec).Sub(x, one), new(big.Float).SetPrec(prec).Add(x, one))
	s2 := new(big.Float).SetPrec(prec).Mul(s, s)
	sum, term := new(big.Float).SetPrec(prec), new(big.Float).SetPrec(prec).Set(s)
	for k := int64(1); k < 400; k += 2 {
		sum.Add(sum, new(big.Float).SetPrec(prec).Quo(term, new(big.Float).SetPrec(prec).SetInt64(k)))
		term.Mul(term, s2)
	}
	ln2 := bigLn2(prec)
	lnq := new(big.Float).SetPrec(prec).Mul(sum, new(big.Float).SetPrec(prec).SetInt64(2))
	lnq.Add(lnq, new(big.Float).SetPrec(prec).Mul(ln2, new(big.Float).SetPrec(prec).SetInt64(int64(exp))))
	y := new(big.Float).SetPrec(prec).Mul(lnq, new(big.Float).SetPrec(prec).SetFloat64(c))
	// exp y = 2^n·exp(z), n = round(y/ln 2), |z| ≤ ln 2/2.
	n, _ := new(big.Float).Quo(y, ln2).Float64()
	n = math.Round(n)
	z := new(big.Float).SetPrec(prec).Sub(y, new(big.Float).SetPrec(prec).Mul(ln2, new(big.Float).SetPrec(prec).SetFloat64(n)))
	e, term := new(big.Float).SetPrec(prec).SetInt64(1), new(big.Float).SetPrec(prec).SetInt64(1)
	for k := int64(1); k < 80; k++ {
		term.Mul(term, z)
		term.Quo(term, new(big.Float).SetPrec(prec).SetInt64(k))
		e.Add(e, term)
	}
	v, _ := e.Float64()
	return math.Ldexp(v, int(n))
}

// bigLn2 is log 2 = 2·atanh(1/3) to prec bits.
func bigLn2(prec uint) *big.Float {
	third := new(big.Float).SetPrec(prec).Quo(new(big.Float).SetPrec(prec).SetInt64(1), new(big.Float).SetPrec(prec).SetInt64(3))
	ninth := new(big.Float).SetPrec(prec).Mul(third, third)
	sum, term := new(big.Float).SetPrec(prec), new(big.Float).SetPrec(prec).Set(third)
	for k := int64(1); k < 300; k += 2 {
		sum.Add(sum, new(big.Float).SetPrec(prec).Quo(term, new(big.Float).SetPrec(prec).SetInt64(k)))
		term.Mul(term, ninth)
	}
	return sum.Mul(sum, new(big.Float).SetPrec(prec).SetInt64(2))
}

func BenchmarkPowNeg(b *testing.B) {
	c, s := -1/0.67, 0.0
	for i := 0; b.Loop(); i++ {
		s += powNeg(1.5+float64(i&1023)*1e-3, c)
	}
	b.ReportMetric(s*0, "zero")
}

func BenchmarkExpLog(b *testing.B) {
	c, s := -1/0.67, 0.0
	for i := 0; b.Loop(); i++ {
		s += math.Exp(c * math.Log(1.5+float64(i&1023)*1e-3))
	}
	b.ReportMetric(s*0, "zero")
}
