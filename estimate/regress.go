package estimate

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat/distuv"
)

// Regression is a least-squares fit y ≈ X·b, with the statistics a calibration reports.
type Regression struct {
	Coef   []float64 `json:"coef"`
	SE     []float64 `json:"se"`      // standard errors
	CILow  []float64 `json:"ci_low"`  // 95% Student-t intervals
	CIHigh []float64 `json:"ci_high"` //
	// RSE is the residual standard error √(SSE/(n − p)), weighted residuals under WLS.
	RSE float64 `json:"rse"`
	// R2 is 1 − SSE/SST with SST about the (weighted) mean of y.
	R2        float64   `json:"r2"`
	N         int       `json:"n"`
	DF        int       `json:"df"`
	Residuals []float64 `json:"-"` // y − X·b, unweighted
}

// maxCond bounds the condition number of the column-scaled design; above it the fit is
// refused as singular (float64 keeps about 16 digits, so a fit would keep fewer than 4).
const maxCond = 1e12

// LeastSquares fits y ≈ X·b by Householder QR (gonum mat.QR), weighted when w is not nil
// (minimising Σ w_i·r_i²: rows are scaled by √w_i). The covariance of b is s²·(R⁻¹)(R⁻¹)ᵀ
// with s² = SSE/(n − p); the intervals use the Student t quantile with n − p degrees of
// freedom. A design with fewer rows than columns plus one, or whose column-scaled condition
// number exceeds 1e12, is an error.
func LeastSquares(x *mat.Dense, y, w []float64) (*Regression, error) {
	n, p := x.Dims()
	if len(y) != n || (w != nil && len(w) != n) {
		panic("estimate: LeastSquares: mismatched lengths")
	}
	if n <= p {
		return nil, fmt.Errorf("estimate: %d observations for %d parameters, need at least %d", n, p, p+1)
	}
	xw, yw, scale, err := scaledDesign(x, y, w)
	if err != nil {
		return nil, err
	}
	var qr mat.QR
	qr.Factorize(xw)
	if c := qr.Cond(); c > maxCond || math.IsInf(c, 0) || math.IsNaN(c) {
		return nil, fmt.Errorf("estimate: singular design (condition number %.3g): the predictors do not vary independently", c)
	}
	var b mat.Dense
	if err := qr.SolveTo(&b, false, mat.NewDense(n, 1, yw)); err != nil {
		return nil, fmt.Errorf("estimate: %w", err)
	}
	r := &Regression{Coef: make([]float64, p), SE: make([]float64, p), CILow: make([]float64, p), CIHigh: make([]float64, p),
		N: n, DF: n - p, Residuals: make([]float64, n)}
	for j := 0; j < p; j++ {
		r.Coef[j] = b.At(j, 0) / scale[j]
	}
	var sse, swy, sw float64
	for i := 0; i < n; i++ {
		pred := 0.0
		for j := 0; j < p; j++ {
			pred += x.At(i, j) * r.Coef[j]
		}
		r.Residuals[i] = y[i] - pred
		wi := 1.0
		if w != nil {
			wi = w[i]
		}
		sse += wi * r.Residuals[i] * r.Residuals[i]
		swy += wi * y[i]
		sw += wi
	}
	mean := swy / sw
	var sst float64
	for i := 0; i < n; i++ {
		wi := 1.0
		if w != nil {
			wi = w[i]
		}
		sst += wi * (y[i] - mean) * (y[i] - mean)
	}
	s2 := sse / float64(r.DF)
	r.RSE = math.Sqrt(s2)
	if sst > 0 {
		r.R2 = 1 - sse/sst
	}
	var full mat.Dense
	qr.RTo(&full)
	rt := mat.NewTriDense(p, mat.Upper, nil)
	for i := 0; i < p; i++ {
		for j := i; j < p; j++ {
			rt.SetTri(i, j, full.At(i, j))
		}
	}
	var rinv mat.TriDense
	if err := rinv.InverseTri(rt); err != nil {
		return nil, fmt.Errorf("estimate: singular design: %w", err)
	}
	tq := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(r.DF)}.Quantile(0.975)
	for j := 0; j < p; j++ {
		var v float64
		for k := j; k < p; k++ {
			v += rinv.At(j, k) * rinv.At(j, k)
		}
		r.SE[j] = math.Sqrt(s2*v) / scale[j]
		r.CILow[j], r.CIHigh[j] = r.Coef[j]-tq*r.SE[j], r.Coef[j]+tq*r.SE[j]
	}
	return r, nil
}

// scaledDesign is LeastSquares' design and observations with every row scaled by √w_i (w not
// nil), then every column of the design scaled to unit norm (scale holds the norms).
func scaledDesign(x *mat.Dense, y, w []float64) (xw *mat.Dense, yw, scale []float64, err error) {
	n, p := x.Dims()
	xw = mat.DenseCopyOf(x)
	yw = make([]float64, n)
	copy(yw, y)
	if w != nil {
		for i := 0; i < n; i++ {
			if !(w[i] > 0) || math.IsInf(w[i], 0) {
				return nil, nil, nil, fmt.Errorf("estimate: weight %d is %g, want a positive number", i, w[i])
			}
			s := math.Sqrt(w[i])
			for j := 0; j < p; j++ {
				xw.Set(i, j, xw.At(i, j)*s)
			}
			yw[i] *= s
		}
	}
	// Equilibrate: scale every column to unit norm, so that the condition number measures
	// collinearity, not units (bytes against 1), and the QR works on comparable columns.
	scale = make([]float64, p)
	for j := 0; j < p; j++ {
		scale[j] = mat.Norm(xw.ColView(j), 2)
		if scale[j] == 0 {
			return nil, nil, nil, fmt.Errorf("estimate: singular design: predictor %d is zero everywhere", j)
		}
		for i := 0; i < n; i++ {
			xw.Set(i, j, xw.At(i, j)/scale[j])
		}
	}
	return xw, yw, scale, nil
}
