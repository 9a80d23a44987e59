package lu

import "math"

// panelBase is the width below which a panel is factored column by
// column; above it the panel recurses on halves (Toledo, Gustavson), so
// that most of its flops are GEMMs too.
const panelBase = 8

// safeMin is the smallest pivot whose reciprocal is finite (LAPACK's
// sfmin, 2^-1022): below it, the column is divided rather than scaled.
const safeMin = 0x1p-1022

// panel factors the m×n panel a (stride lda, m ≥ n not required) with
// partial pivoting, in place: on return its unit lower L and upper U are
// those of P·a, and piv[i] (i < min(m, n)) is the row, relative to the
// panel's top, that was swapped with row i. Row swaps are applied to the
// panel's columns only. It returns the first column whose pivot is
// exactly zero, or -1.
func panel(m, n int, a []float64, lda int, piv []int, scratch *[]float64) int {
	k := min(m, n)
	if k == 0 {
		return -1
	}
	if n <= panelBase {
		return panelColumns(m, n, a, lda, piv)
	}
	n1 := roundUp(k/2, 4)
	if n1 >= k {
		n1 = k / 2
	}
	zero := panel(m, n1, a, lda, piv, scratch)
	n2 := n - n1
	right := a[n1*lda:]
	swapRows(n2, right, lda, piv[:n1], 0)
	var d diagInverses
	d.invertDiag(n1, a, lda)
	trsm(n1, n2, a, lda, &d, right, lda, scratch)
	gemm(m-n1, n2, n1, -1, a[n1:], lda, right, lda, right[n1:], lda)
	z2 := panel(m-n1, n2, right[n1:], lda, piv[n1:], scratch)
	for i := n1; i < k; i++ {
		piv[i] += n1
	}
	swapRows(n1, a, lda, piv[n1:k], n1)
	if zero < 0 && z2 >= 0 {
		zero = z2 + n1
	}
	return zero
}

// panelColumns is the unblocked factorization (LAPACK's dgetf2): for each
// column, pick the largest entry as pivot, swap, scale the column below,
// update the rest of the panel.
func panelColumns(m, n int, a []float64, lda int, piv []int) int {
	zero := -1
	for j := 0; j < min(m, n); j++ {
		col := a[j*lda : j*lda+m]
		p, best := j, math.Abs(col[j])
		for i := j + 1; i < m; i++ {
			if v := math.Abs(col[i]); v > best {
				p, best = i, v
			}
		}
		piv[j] = p
		if col[p] == 0 {
			if zero < 0 {
				zero = j
			}
			continue
		}
		if p != j {
			for c := 0; c < n; c++ {
				a[j+c*lda], a[p+c*lda] = a[p+c*lda], a[j+c*lda]
			}
		}
		below := col[j+1:]
		if pv := col[j]; math.Abs(pv) >= safeMin {
			r := 1 / pv
			for i := range below {
				below[i] *= r
			}
		} else {
			for i := range below {
				below[i] /= pv
			}
		}
		for c := j + 1; c < n; c++ {
			cc := a[c*lda : c*lda+m]
			u := cc[j]
			if u == 0 {
				continue
			}
			rest := cc[j+1 : j+1+len(below)]
			for i, l := range below {
				rest[i] -= l * u
			}
		}
	}
	return zero
}

// swapRows applies the swaps piv (row off+i with row piv[i], in order) to
// the n columns of a (stride lda).
func swapRows(n int, a []float64, lda int, piv []int, off int) {
	for c := 0; c < n; c++ {
		col := a[c*lda:]
		for i, p := range piv {
			if r := off + i; p != r {
				col[r], col[p] = col[p], col[r]
			}
		}
	}
}
