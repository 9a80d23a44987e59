package lu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// naiveGemm is the reference: C += alpha·A·B by the definition.
func naiveGemm(m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, c []float64, ldc int) {
	for j := 0; j < n; j++ {
		for i := 0; i < m; i++ {
			var s float64
			for p := 0; p < k; p++ {
				s += a[i+p*lda] * b[p+j*ldb]
			}
			c[i+j*ldc] += alpha * s
		}
	}
}

func randSlice(r *rand.Rand, n int) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = r.Float64() - 0.5
	}
	return s
}

// withKernel runs f with each micro-kernel this machine has.
func withKernel(t testing.TB, f func(mk microKernel)) {
	saved := kernel
	defer func() { kernel = saved }()
	for _, mk := range kernels() {
		kernel = mk
		f(mk)
	}
}

// checkGemm compares gemm with naiveGemm on one shape; strides exceed the
// rows so that a kernel writing past a column shows.
func checkGemm(t testing.TB, r *rand.Rand, m, n, k int, alpha float64) {
	lda, ldb, ldc := m+3, k+1, m+5
	a := randSlice(r, lda*max(k, 1))
	b := randSlice(r, ldb*max(n, 1))
	c := randSlice(r, ldc*max(n, 1))
	want := append([]float64(nil), c...)
	gemm(m, n, k, alpha, a, lda, b, ldb, c, ldc)
	naiveGemm(m, n, k, alpha, a, lda, b, ldb, want, ldc)
	for j := 0; j < max(n, 1); j++ {
		for i := 0; i < ldc; i++ {
			got, w := c[i+j*ldc], want[i+j*ldc]
			if i >= m || j >= n {
				if got != w {
					t.Fatalf("%s m=%d n=%d k=%d: element (%d,%d) outside C changed: %v, was %v", kernel.name, m, n, k, i, j, got, w)
				}
				continue
			}
			if math.Abs(got-w) > 1e-12*float64(k+1) {
				t.Fatalf("%s m=%d n=%d k=%d alpha=%v: C(%d,%d) = %v, want %v", kernel.name, m, n, k, alpha, i, j, got, w)
			}
		}
	}
}

func TestGemm(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	shapes := [][3]int{
		{1, 1, 1}, {24, 8, 1}, {24, 8, 300}, {25, 9, 7}, {7, 5, 3}, {100, 100, 100},
		{145, 33, 257}, {300, 2100, 20}, {8, 6, 513}, {0, 5, 5}, {5, 0, 5}, {5, 5, 0},
	}
	withKernel(t, func(mk microKernel) {
		for _, s := range shapes {
			checkGemm(t, r, s[0], s[1], s[2], -1)
			checkGemm(t, r, s[0], s[1], s[2], 0.5)
		}
	})
}

func benchGemm(b *testing.B, n int) {
	r := rand.New(rand.NewPCG(1, 2))
	x, y, z := randSlice(r, n*n), randSlice(r, n*n), randSlice(r, n*n)
	b.ResetTimer()
	for range b.N {
		gemm(n, n, n, -1, x, n, y, n, z, n)
	}
	b.ReportMetric(2*float64(n)*float64(n)*float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "Gflops")
}

func BenchmarkGemm(b *testing.B) {
	for _, mk := range kernels() {
		for _, n := range []int{256, 512, 1024} {
			b.Run(fmt.Sprintf("%s/%d", mk.name, n), func(b *testing.B) {
				saved := kernel
				kernel = mk
				defer func() { kernel = saved }()
				benchGemm(b, n)
			})
		}
	}
}

// FuzzGemm compares every micro-kernel this machine has, through gemm's
// packing and edge tiles, with the pure-Go reference on random shapes,
// strides and data: go test -fuzz FuzzGemm ./hpl/lu.
func FuzzGemm(f *testing.F) {
	f.Add(uint16(24), uint16(8), uint16(1), uint8(0), uint8(0), uint8(0), uint64(1), -1.0)
	f.Add(uint16(25), uint16(9), uint16(300), uint8(3), uint8(1), uint8(7), uint64(2), 0.5)
	f.Add(uint16(145), uint16(70), uint16(257), uint8(0), uint8(0), uint8(0), uint64(3), -1.0)
	f.Add(uint16(1), uint16(1), uint16(1), uint8(0), uint8(0), uint8(0), uint64(4), 2.0)
	f.Fuzz(func(t *testing.T, m16, n16, k16 uint16, padA, padB, padC uint8, seed uint64, alpha float64) {
		// m and k cross the mc (144) and kc (256) block edges; n only needs
		// a few nr slivers, and a small n keeps an exec well under the
		// fuzz engine's per-input patience (a slow input at the end of
		// -fuzztime reads as "context deadline exceeded").
		m, n, k := int(m16%300), int(n16%64), int(k16%600)
		if math.IsNaN(alpha) || math.IsInf(alpha, 0) || math.Abs(alpha) > 1e6 {
			t.Skip()
		}
		r := rand.New(rand.NewPCG(seed, 99))
		lda, ldb, ldc := max(m, 1)+int(padA%9), max(k, 1)+int(padB%9), max(m, 1)+int(padC%9)
		a := randSlice(r, lda*max(k, 1))
		b := randSlice(r, ldb*max(n, 1))
		c0 := randSlice(r, ldc*max(n, 1))
		want := append([]float64(nil), c0...)
		naiveGemm(m, n, k, alpha, a, lda, b, ldb, want, ldc)
		withKernel(t, func(mk microKernel) {
			c := append([]float64(nil), c0...)
			gemm(m, n, k, alpha, a, lda, b, ldb, c, ldc)
			for j := 0; j < max(n, 1); j++ {
				for i := 0; i < ldc; i++ {
					got, w := c[i+j*ldc], want[i+j*ldc]
					if i >= m || j >= n {
						if got != c0[i+j*ldc] {
							t.Fatalf("%s m=%d n=%d k=%d: C(%d,%d) outside the product changed", mk.name, m, n, k, i, j)
						}
						continue
					}
					// |terms| < 1/4: k·2^-52·k/4 bounds the rounding of both sums.
					if tol := 1e-15 * float64(k+1) * float64(k+1) * max(1, math.Abs(alpha)); math.Abs(got-w) > tol {
						t.Fatalf("%s m=%d n=%d k=%d alpha=%v: C(%d,%d) = %v, reference %v", mk.name, m, n, k, alpha, i, j, got, w)
					}
				}
			}
		})
	})
}

// TestMicroKernels calls each micro-kernel directly, on k = 0 and on a
// tile inside a larger C, and checks it touches its tile only.
func TestMicroKernels(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for _, mk := range kernels() {
		for _, k := range []int{0, 1, 3, 4, 5, 17, 256} {
			pa, pb := randSlice(r, mk.mr*max(k, 1)), randSlice(r, mk.nr*max(k, 1))
			ldc := mk.mr + 5
			c := randSlice(r, ldc*(mk.nr+1))
			want := append([]float64(nil), c...)
			for j := 0; j < mk.nr; j++ {
				for i := 0; i < mk.mr; i++ {
					var s float64
					for p := 0; p < k; p++ {
						s += pa[p*mk.mr+i] * pb[p*mk.nr+j]
					}
					want[1+i+j*ldc] += -0.75 * s
				}
			}
			if k == 0 {
				pa, pb = append(pa, 0), append(pb, 0) // non-nil pointers
			}
			mk.fn(k, &pa[0], &pb[0], &c[1], ldc, -0.75)
			for i := range c {
				if math.Abs(c[i]-want[i]) > 1e-14*float64(k+1) {
					t.Fatalf("%s k=%d: C element %d (row %d, column %d) is %v, want %v", mk.name, k, i, i%ldc, i/ldc, c[i], want[i])
				}
			}
		}
	}
}
