package estimate

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// StoppingRule is the benchmark's rule for when a measurement has been repeated enough: the
// full width of the 95% confidence interval of the mean is at most MaxRelWidth of the mean
// (2% in Zhu et al., CCPE 2014, §3.1), or the repetition cap was reached.
type StoppingRule struct {
	MaxRelWidth float64
	// Cap is the benchmark's iteration cap; 0 means the data does not say.
	Cap int
}

// DefaultStoppingRule is the papers' rule: a CI at most 2% of the mean wide.
var DefaultStoppingRule = StoppingRule{MaxRelWidth: 0.02}

// Measurement status under a stopping rule.
const (
	Converged   = "converged"   // the CI rule holds
	Capped      = "capped"      // the rule fails but the iteration cap was reached
	Unconverged = "unconverged" // neither: the measurement needs more repetitions
)

// Measurement summarises repetitions of one measured time.
type Measurement struct {
	N    int     `json:"n"`
	Mean float64 `json:"mean_s"`
	SD   float64 `json:"sd_s"`
	// CILow and CIHigh bound the 95% Student-t interval of the mean; with one repetition
	// there is no interval and both equal the mean.
	CILow  float64 `json:"ci_low_s"`
	CIHigh float64 `json:"ci_high_s"`
	// RelWidth is (CIHigh − CILow) / Mean; 0 with a single repetition.
	RelWidth float64 `json:"ci_rel_width"`
	Status   string  `json:"status"`
}

// Summarize computes the mean of x, its 95% confidence interval
// mean ± t(0.975, n−1) · s/√n, and the stopping-rule status. A single repetition has no
// interval and is unconverged unless the cap is 1.
func Summarize(x []float64, rule StoppingRule) (Measurement, error) {
	n := len(x)
	if n == 0 {
		return Measurement{}, fmt.Errorf("estimate: a measurement with no repetitions")
	}
	for i, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return Measurement{}, fmt.Errorf("estimate: repetition %d is %g", i, v)
		}
	}
	m := Measurement{N: n}
	if n == 1 {
		m.Mean, m.CILow, m.CIHigh = x[0], x[0], x[0]
		m.Status = status(false, n, rule)
		return m, nil
	}
	m.Mean, m.SD = stat.MeanStdDev(x, nil)
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(n - 1)}.Quantile(0.975)
	half := t * m.SD / math.Sqrt(float64(n))
	m.CILow, m.CIHigh = m.Mean-half, m.Mean+half
	if m.Mean > 0 {
		m.RelWidth = 2 * half / m.Mean
	}
	m.Status = status(m.Mean > 0 && m.RelWidth <= rule.MaxRelWidth, n, rule)
	return m, nil
}

func status(ruleHolds bool, n int, rule StoppingRule) string {
	switch {
	case ruleHolds:
		return Converged
	case rule.Cap > 0 && n >= rule.Cap:
		return Capped
	}
	return Unconverged
}
