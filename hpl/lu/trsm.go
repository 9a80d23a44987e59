package lu

// Triangular solves with the unit lower triangle L of a factored block,
// B := L⁻¹·B, done as GEMMs: the diagonal blocks of L (invBlock rows each)
// are inverted once, and the solve recurses on halves of L so that
// almost all of its flops are large GEMMs. Inverting only small blocks,
// rather than all of L, keeps the rounding errors close to a
// substitution's: with partial pivoting |L(i,j)| ≤ 1, and the inverse of a
// 32-row block stays small in practice.

// invBlock is the size of the diagonal blocks of L that are inverted.
const invBlock = 32

// diagInverses holds, for each invBlock-row diagonal block of a k×k unit
// lower triangle, the block's inverse minus the identity (strictly lower,
// column-major, stride invBlock): B + (L⁻¹-I)·B is L⁻¹·B as one GEMM that
// accumulates into B.
type diagInverses struct {
	k   int
	inv []float64
}

// invertDiag computes the diagonal blocks' inverses of the unit lower
// triangle of l (k×k, stride ldl) into d, reusing its storage.
func (d *diagInverses) invertDiag(k int, l []float64, ldl int) {
	d.k = k
	nblk := (k + invBlock - 1) / invBlock
	d.inv = grow(d.inv, nblk*invBlock*invBlock)
	for b := 0; b < nblk; b++ {
		p := b * invBlock
		n := min(invBlock, k-p)
		x := d.inv[b*invBlock*invBlock : (b+1)*invBlock*invBlock]
		clear(x)
		// Column j of X = L⁻¹ solves L·x = e_j by forward substitution:
		// x(i) = -Σ_{j≤q<i} L(i,q)·x(q), with x(j) = 1 kept implicit.
		for j := 0; j < n; j++ {
			xj := x[j*invBlock : j*invBlock+n]
			for q := j; q < n; q++ {
				xq := 1.0
				if q > j {
					xq = xj[q]
				}
				if xq == 0 {
					continue
				}
				lq := l[p+(p+q)*ldl : p+(p+q)*ldl+n]
				for i := q + 1; i < n; i++ {
					xj[i] -= lq[i] * xq
				}
			}
		}
	}
}

// block returns the inverse-minus-identity of diagonal block b.
func (d *diagInverses) block(b int) []float64 {
	return d.inv[b*invBlock*invBlock : (b+1)*invBlock*invBlock]
}

// trsm computes B := L⁻¹·B, L being the unit lower triangle of l (k×k,
// stride ldl) whose diagonal inverses are d, B k×n of stride ldb; scratch
// holds a copy of one block of B's rows.
func trsm(k, n int, l []float64, ldl int, d *diagInverses, b []float64, ldb int, scratch *[]float64) {
	trsmFrom(0, k, n, l, ldl, d, b, ldb, scratch)
}

// trsmFrom solves rows p … p+k-1 of the whole triangle.
func trsmFrom(p, k, n int, l []float64, ldl int, d *diagInverses, b []float64, ldb int, scratch *[]float64) {
	if k == 0 || n == 0 {
		return
	}
	if k <= invBlock {
		// B(p:p+k) += (L⁻¹-I)·B(p:p+k), from a copy of B's rows.
		*scratch = grow(*scratch, k*n)
		t := *scratch
		for j := 0; j < n; j++ {
			copy(t[j*k:j*k+k], b[p+j*ldb:p+j*ldb+k])
		}
		gemm(k, n, k, 1, d.block(p/invBlock), invBlock, t, k, b[p:], ldb)
		return
	}
	// Split on a block boundary, the first half a whole number of blocks.
	k1 := roundUp((k+1)/2, invBlock)
	trsmFrom(p, k1, n, l, ldl, d, b, ldb, scratch)
	gemm(k-k1, n, k1, -1, l[p+k1+p*ldl:], ldl, b[p:], ldb, b[p+k1:], ldb)
	trsmFrom(p+k1, k-k1, n, l, ldl, d, b, ldb, scratch)
}
