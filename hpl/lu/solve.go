package lu

import (
	"fmt"
	"math"
)

// Eps is the relative machine precision HPL divides the residual by,
// 2^-53 (HPL prints it as 1.110223e-16).
const Eps = 0x1p-53

// Threshold is HPL's default bound on the scaled residual: a solution
// whose residual reaches it is wrong.
const Threshold = 16.0

// Solve solves A·x = b for square A given its factorization, in place: b
// becomes x.
func (f *Factorization) Solve(b []float64) error {
	lu := f.LU
	n := lu.Rows
	if lu.Cols != n {
		return fmt.Errorf("solve: the factored matrix is %d×%d, not square", lu.Rows, lu.Cols)
	}
	if len(b) != n {
		return fmt.Errorf("solve: %d right-hand side values for %d equations", len(b), n)
	}
	a, lda := lu.Data, lu.Stride
	for i, p := range f.Pivots {
		b[i], b[p] = b[p], b[i]
	}
	// L·y = P·b, column by column: every column of L is read once, in
	// order.
	for j := 0; j < n; j++ {
		if y := b[j]; y != 0 {
			axpy(-y, a[j+1+j*lda:n+j*lda], b[j+1:n])
		}
	}
	return backSolve(n, a, lda, b, DefaultNB, 1)
}

// backSolve solves U·x = y for the upper triangle U of a (n×n, stride
// lda), in place in x, nb columns of U at a time from the last: each
// block's triangle by substitution, then the rows above it updated with
// x -= U(:, block)·x(block), those rows split across threads goroutines.
func backSolve(n int, a []float64, lda int, x []float64, nb, threads int) error {
	for j1 := n; j1 > 0; {
		j0 := (j1 - 1) / nb * nb
		for j := j1 - 1; j >= j0; j-- {
			d := a[j+j*lda]
			if d == 0 {
				return fmt.Errorf("solve: %w", &SingularError{Column: j})
			}
			x[j] /= d
			if xj := x[j]; xj != 0 {
				axpy(-xj, a[j0+j*lda:j+j*lda], x[j0:j])
			}
		}
		above := func(r0, r1 int) {
			for c := j0; c < j1; c++ {
				if xc := x[c]; xc != 0 {
					axpy(-xc, a[r0+c*lda:r1+c*lda], x[r0:r1])
				}
			}
		}
		if t := min(threads, j0/256); t > 1 {
			// Row ranges of whole cache lines, so that no two goroutines
			// write the same line of x.
			rows := roundUp((j0+t-1)/t, 8)
			parallel(t, func(i int) {
				if r0 := i * rows; r0 < j0 {
					above(r0, min(r0+rows, j0))
				}
			})
		} else {
			above(0, j0)
		}
		j1 = j0
	}
	return nil
}

// axpy is y += alpha·x.
func axpy(alpha float64, x, y []float64) {
	y = y[:len(x)]
	i := 0
	for ; i+4 <= len(x); i += 4 {
		xs, ys := x[i:i+4:i+4], y[i:i+4:i+4]
		ys[0] += alpha * xs[0]
		ys[1] += alpha * xs[1]
		ys[2] += alpha * xs[2]
		ys[3] += alpha * xs[3]
	}
	for ; i < len(x); i++ {
		y[i] += alpha * x[i]
	}
}

// Residual is HPL's scaled residual of the solution x of A·x = b:
// ‖A·x-b‖∞ / (eps·(‖A‖∞·‖x‖∞ + ‖b‖∞)·n), which must stay below
// Threshold. a is the original matrix, not its factors.
func Residual(a *Matrix, x, b []float64) float64 {
	n := a.Rows
	r := make([]float64, n)
	sums := make([]float64, n)
	for j := 0; j < a.Cols; j++ {
		col := a.Data[j*a.Stride : j*a.Stride+n]
		for i, v := range col {
			r[i] += v * x[j]
			sums[i] += math.Abs(v)
		}
	}
	for i := range r {
		r[i] -= b[i]
	}
	return scaledResidual(normInf(r), normInf(sums), normInf(x), normInf(b), n)
}

func scaledResidual(normR, normA, normX, normB float64, n int) float64 {
	return normR / (Eps * (normA*normX + normB) * float64(n))
}
