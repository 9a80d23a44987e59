package lu

import (
	"fmt"
	"sync"
)

// microKernel computes C[mr×nr] += alpha·A·B over k steps from packed
// panels (see packA and packB); c points to C's top-left element and ldc
// is C's column stride.
type microKernel struct {
	name   string
	mr, nr int
	fn     func(k int, a, b, c *float64, ldc int, alpha float64)
}

// genericKernel is the pure-Go micro-kernel, for machines without the
// assembly ones: a 4×4 tile, sixteen accumulators the compiler keeps in
// registers.
var genericKernel = microKernel{name: "generic", mr: 4, nr: 4, fn: kernGeneric}

func kernGeneric(k int, a, b, c *float64, ldc int, alpha float64) {
	pa := unsafeSlice(a, 4*k)
	pb := unsafeSlice(b, 4*k)
	var c00, c10, c20, c30, c01, c11, c21, c31, c02, c12, c22, c32, c03, c13, c23, c33 float64
	for p := 0; p < k; p++ {
		av, bv := pa[4*p:4*p+4:4*p+4], pb[4*p:4*p+4:4*p+4]
		a0, a1, a2, a3 := av[0], av[1], av[2], av[3]
		b0, b1, b2, b3 := bv[0], bv[1], bv[2], bv[3]
		c00 += a0 * b0
		c10 += a1 * b0
		c20 += a2 * b0
		c30 += a3 * b0
		c01 += a0 * b1
		c11 += a1 * b1
		c21 += a2 * b1
		c31 += a3 * b1
		c02 += a0 * b2
		c12 += a1 * b2
		c22 += a2 * b2
		c32 += a3 * b2
		c03 += a0 * b3
		c13 += a1 * b3
		c23 += a2 * b3
		c33 += a3 * b3
	}
	cs := unsafeSlice(c, 3*ldc+4)
	col := func(j int, x0, x1, x2, x3 float64) {
		v := cs[j*ldc : j*ldc+4 : j*ldc+4]
		v[0] += alpha * x0
		v[1] += alpha * x1
		v[2] += alpha * x2
		v[3] += alpha * x3
	}
	col(0, c00, c10, c20, c30)
	col(1, c01, c11, c21, c31)
	col(2, c02, c12, c22, c32)
	col(3, c03, c13, c23, c33)
}

// Cache blocking, GotoBLAS/BLIS style: a kc×nc panel of B is packed once
// and shared by every mc×kc block of A, each packed to stay in L2 while
// the micro-kernel sweeps B's kc×nr slivers (each in L1) across it.
const (
	blockK = 256  // kc: also the largest NB whose update is one pass
	blockM = 144  // mc: a multiple of every kernel's mr (24, 8, 4); 288 KiB of A at kc=256
	blockN = 2048 // nc: 4 MiB of B at kc=256, for the last-level cache
)

// kernel is the micro-kernel every GEMM here uses: the best this machine
// runs. Tests swap it to compare kernels.
var kernel = kernels()[0]

// gemmBuf is one goroutine's packing space.
type gemmBuf struct {
	a, b []float64
	tile []float64 // an edge tile's C, mr×nr
}

var bufPool = sync.Pool{New: func() any { return new(gemmBuf) }}

func grow(s []float64, n int) []float64 {
	if cap(s) < n {
		return make([]float64, n, n+n/8)
	}
	return s[:n]
}

// checkMatrix panics when a column-major m×n matrix of stride ld does not
// fit in s: a bug in this package, never a user error.
func checkMatrix(what string, s []float64, m, n, ld int) {
	if m == 0 || n == 0 {
		return
	}
	if ld < m || len(s) < (n-1)*ld+m {
		panic(fmt.Sprintf("lu: %s: %d×%d matrix with stride %d in %d elements", what, m, n, ld, len(s)))
	}
}

// gemm computes C += alpha·A·B for column-major A (m×k), B (k×n) and C
// (m×n) on the calling goroutine.
func gemm(m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, c []float64, ldc int) {
	if m == 0 || n == 0 || k == 0 || alpha == 0 {
		return
	}
	checkMatrix("gemm A", a, m, k, lda)
	checkMatrix("gemm B", b, k, n, ldb)
	checkMatrix("gemm C", c, m, n, ldc)
	if m*n*k < 8*8*8 {
		gemmSmall(m, n, k, alpha, a, lda, b, ldb, c, ldc)
		return
	}
	buf := bufPool.Get().(*gemmBuf)
	defer bufPool.Put(buf)
	mk := kernel
	for pc := 0; pc < k; pc += blockK {
		kc := min(blockK, k-pc)
		for jc := 0; jc < n; jc += blockN {
			nc := min(blockN, n-jc)
			buf.b = grow(buf.b, roundUp(nc, mk.nr)*kc)
			packB(mk.nr, kc, nc, b[pc+jc*ldb:], ldb, buf.b)
			for ic := 0; ic < m; ic += blockM {
				mc := min(blockM, m-ic)
				buf.a = grow(buf.a, roundUp(mc, mk.mr)*kc)
				packA(mk.mr, mc, kc, a[ic+pc*lda:], lda, buf.a)
				macro(mk, mc, nc, kc, alpha, buf.a, buf.b, c[ic+jc*ldc:], ldc, buf)
			}
		}
	}
}

// gemmPackedA computes C += alpha·A·B where A (m×k, k ≤ blockK) is
// already packed by packA; B is packed here, blockN columns at a time.
func gemmPackedA(mk microKernel, m, n, k int, alpha float64, pa []float64, b []float64, ldb int, c []float64, ldc int, buf *gemmBuf) {
	for jc := 0; jc < n; jc += blockN {
		nc := min(blockN, n-jc)
		buf.b = grow(buf.b, roundUp(nc, mk.nr)*k)
		packB(mk.nr, k, nc, b[jc*ldb:], ldb, buf.b)
		for ic := 0; ic < m; ic += blockM {
			mc := min(blockM, m-ic)
			macro(mk, mc, nc, k, alpha, pa[ic*k:], buf.b, c[ic+jc*ldc:], ldc, buf)
		}
	}
}

// macro runs the micro-kernel over an mc×nc block of C from packed A
// (mc×k) and B (k×nc): B's slivers outside, so that each stays in L1
// while A's slivers stream from L2. Partial tiles go through a scratch
// tile.
func macro(mk microKernel, mc, nc, k int, alpha float64, pa, pb []float64, c []float64, ldc int, buf *gemmBuf) {
	mr, nr := mk.mr, mk.nr
	for jr := 0; jr < nc; jr += nr {
		nn := min(nr, nc-jr)
		bp := &pb[jr*k]
		for ir := 0; ir < mc; ir += mr {
			mm := min(mr, mc-ir)
			ap := &pa[ir*k]
			if mm == mr && nn == nr {
				// checkMatrix on C at entry covers this tile.
				mk.fn(k, ap, bp, &c[ir+jr*ldc], ldc, alpha)
				continue
			}
			buf.tile = grow(buf.tile, mr*nr)
			clear(buf.tile)
			mk.fn(k, ap, bp, &buf.tile[0], mr, alpha)
			for j := 0; j < nn; j++ {
				dst := c[ir+(jr+j)*ldc : ir+(jr+j)*ldc+mm]
				src := buf.tile[j*mr : j*mr+mm]
				for i := range dst {
					dst[i] += src[i]
				}
			}
		}
	}
}

// packA copies A (m×k, column-major, stride lda) into slivers of mr rows:
// sliver s holds, for each of the k columns, rows s·mr … s·mr+mr-1, the
// rows past m being zero.
func packA(mr, m, k int, a []float64, lda int, dst []float64) {
	for i0 := 0; i0 < m; i0 += mr {
		mm := min(mr, m-i0)
		d := dst[i0*k : i0*k+mr*k]
		if mm == mr {
			for p := 0; p < k; p++ {
				copy(d[p*mr:p*mr+mr], a[i0+p*lda:i0+p*lda+mr])
			}
			continue
		}
		for p := 0; p < k; p++ {
			copy(d[p*mr:p*mr+mm], a[i0+p*lda:i0+p*lda+mm])
			clear(d[p*mr+mm : p*mr+mr])
		}
	}
}

// packB copies B (k×n, column-major, stride ldb) into slivers of nr
// columns: sliver s holds, for each of the k rows, columns s·nr …
// s·nr+nr-1, the columns past n being zero.
func packB(nr, k, n int, b []float64, ldb int, dst []float64) {
	for j0 := 0; j0 < n; j0 += nr {
		nn := min(nr, n-j0)
		d := dst[j0*k : j0*k+nr*k]
		if nn < nr {
			clear(d)
		}
		for j := 0; j < nn; j++ {
			col := b[(j0+j)*ldb : (j0+j)*ldb+k]
			for p, v := range col {
				d[p*nr+j] = v
			}
		}
	}
}

// gemmSmall is C += alpha·A·B by plain loops, for products too small to
// repay packing.
func gemmSmall(m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, c []float64, ldc int) {
	for j := 0; j < n; j++ {
		cj := c[j*ldc : j*ldc+m]
		for p := 0; p < k; p++ {
			s := alpha * b[p+j*ldb]
			if s == 0 {
				continue
			}
			ap := a[p*lda : p*lda+m]
			for i := range cj {
				cj[i] += s * ap[i]
			}
		}
	}
}

func roundUp(x, m int) int { return (x + m - 1) / m * m }
