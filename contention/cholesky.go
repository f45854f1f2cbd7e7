package contention

import (
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/lapack64"
)

// cholesky factorises in place the n×n symmetric positive definite matrix A whose upper
// triangle a holds, row-major: on return that triangle is U, upper triangular with A = UᵀU.
// It says false, leaving a spoiled, where a pivot is not positive (A not positive definite
// to rounding). Below choleskyBlocked rows by choleskyRows, from there by LAPACK's dpotrf
// through gonum.
func cholesky(a []float64, n int) bool {
	if n >= choleskyBlocked {
		_, ok := lapack64.Potrf(blas64.Symmetric{Uplo: blas.Upper, N: n, Data: a, Stride: n})
		return ok
	}
	return choleskyRows(a, n)
}

// choleskyBlocked is the number of rows from which cholesky leaves the factorisation to
// dpotrf, whose blocks keep the matrix being updated in the cache: on matrices shaped as
// α-fair sharing's (the senders' rows first, each crossing most receivers'; 2026-11-28)
// choleskyRows took 11 µs at 68 rows against dpotrf's 14–19, 42 against 53 at 112, but 64
// against 48 at 128 and 29 ms against 17 at 1,024 (an all-to-all of 1,000 nodes factorises
// 2,040 rows).
const choleskyBlocked = 128

// choleskyRows is cholesky right-looking by rows: row k of U is row k of what is left scaled
// by its pivot's square root, and every later row i loses U[k][i] times it (nothing where
// U[k][i] is 0: between two senders' rows), so that every inner loop runs along a row.
func choleskyRows(a []float64, n int) bool {
	for k := range n {
		row := a[k*n : k*n+n]
		d := row[k]
		if !(d > 0) { // NaN too
			return false
		}
		d = math.Sqrt(d)
		row[k] = d
		inv := 1 / d
		for j := k + 1; j < n; j++ {
			row[j] *= inv
		}
		for i := k + 1; i < n; i++ {
			u := row[i]
			if u == 0 {
				continue
			}
			dst := a[i*n+i : i*n+n]
			src := row[i:n]
			for j := range dst {
				dst[j] -= u * src[j]
			}
		}
	}
	return true
}

// cholSolve solves UᵀU·x = b in place in b, U the factor cholesky left in u: Uᵀy = b forwards,
// then U·x = y backwards.
func cholSolve(u []float64, n int, b []float64) {
	for i := range n {
		row := u[i*n : i*n+n]
		v := b[i] / row[i]
		b[i] = v
		for j := i + 1; j < n; j++ {
			b[j] -= row[j] * v
		}
	}
	for i := n - 1; i >= 0; i-- {
		row := u[i*n : i*n+n]
		v := b[i]
		for j := i + 1; j < n; j++ {
			v -= row[j] * b[j]
		}
		b[i] = v / row[i]
	}
}
