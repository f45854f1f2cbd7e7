package contention

import (
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/floats/scalar"
	"gonum.org/v1/gonum/lapack/lapack64"
)

// randomSPD is an n×n symmetric positive definite matrix, row-major: BᵀB plus a small
// diagonal, B random and sparse like the matrices α-fair sharing factorises (a resource
// shares classes with a few others).
func randomSPD(rng *rand.Rand, n int) []float64 {
	b := make([]float64, n*n)
	for i := range b {
		if rng.IntN(4) == 0 {
			b[i] = rng.Float64()
		}
	}
	a := make([]float64, n*n)
	for i := range n {
		for j := range n {
			for k := range n {
				a[i*n+j] += b[k*n+i] * b[k*n+j]
			}
		}
		a[i*n+i] += 1e-3
	}
	return a
}

// cholesky and cholSolve against LAPACK's dpotrf and BLAS's dtrsv through gonum, on random
// matrices of 1 to 130 rows: the factors and solutions agree to 1e-10 relative (rounding in
// another order); a matrix that is not positive definite is refused by both.
func TestCholesky(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	for _, n := range []int{1, 2, 3, 7, 34, 68, 130} {
		a := randomSPD(rng, n)
		got := slices.Clone(a)
		if !cholesky(got, n) {
			t.Fatalf("n = %d: refused a positive definite matrix", n)
		}
		want := slices.Clone(a)
		chol, ok := lapack64.Potrf(blas64.Symmetric{Uplo: blas.Upper, N: n, Data: want, Stride: n})
		if !ok {
			t.Fatalf("n = %d: dpotrf refused", n)
		}
		for i := range n {
			for j := i; j < n; j++ {
				if !scalar.EqualWithinAbsOrRel(got[i*n+j], want[i*n+j], 1e-12, 1e-10) {
					t.Fatalf("n = %d: U[%d][%d] = %g, dpotrf %g", n, i, j, got[i*n+j], want[i*n+j])
				}
			}
		}
		b := make([]float64, n)
		for i := range b {
			b[i] = rng.NormFloat64()
		}
		x, y := slices.Clone(b), slices.Clone(b)
		cholSolve(got, n, x)
		v := blas64.Vector{N: n, Data: y, Inc: 1}
		blas64.Trsv(blas.Trans, chol, v)
		blas64.Trsv(blas.NoTrans, chol, v)
		for i := range n {
			if !scalar.EqualWithinAbsOrRel(x[i], y[i], 1e-12, 1e-10) {
				t.Fatalf("n = %d: x[%d] = %g, dtrsv %g", n, i, x[i], y[i])
			}
		}
	}
	// Positive semidefinite and singular: the last pivot is zero, or rounding below it.
	a := []float64{1, 1, 0, 1}
	if cholesky(a, 2) && a[3] > 1e-12 {
		t.Errorf("accepted [[1 1] [1 1]] with a pivot %g", a[3])
	}
	if cholesky([]float64{-1}, 1) {
		t.Error("accepted [[-1]]")
	}
}

func BenchmarkCholesky68(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 5))
	a := randomSPD(rng, 68)
	w := make([]float64, len(a))
	for b.Loop() {
		copy(w, a)
		cholesky(w, 68)
	}
}

func BenchmarkPotrf68(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 5))
	a := randomSPD(rng, 68)
	w := make([]float64, len(a))
	for b.Loop() {
		copy(w, a)
		lapack64.Potrf(blas64.Symmetric{Uplo: blas.Upper, N: 68, Data: w, Stride: 68})
	}
}
