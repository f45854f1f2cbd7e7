package contention

import "math"

// cholesky factorises in place the n×n symmetric positive definite matrix A whose upper
// triangle a holds, row-major: on return that triangle is U, upper triangular with A = UᵀU.
// It says false, leaving a spoiled, where a pivot is not positive (A not positive definite
// to rounding). Right-looking by rows: row k of U is row k of what is left scaled by its
// pivot's square root, and every later row i loses U[k][i] times it, so that every inner loop
// runs along a row. For the few dozen rows α-fair sharing factorises it takes half the time of
// LAPACK's dpotrf through gonum, whose blocking and calls cost more than they save there.
func cholesky(a []float64, n int) bool {
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
