package lu

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// naiveLU is the textbook factorization with partial pivoting (LAPACK's
// dgetf2), row swaps over whole rows: the reference.
func naiveLU(a *Matrix) []int {
	m, n := a.Rows, a.Cols
	piv := make([]int, min(m, n))
	for j := 0; j < min(m, n); j++ {
		p := j
		for i := j + 1; i < m; i++ {
			if math.Abs(a.At(i, j)) > math.Abs(a.At(p, j)) {
				p = i
			}
		}
		piv[j] = p
		for c := 0; c < n; c++ {
			x, y := a.At(j, c), a.At(p, c)
			a.Set(j, c, y)
			a.Set(p, c, x)
		}
		if a.At(j, j) == 0 {
			continue
		}
		for i := j + 1; i < m; i++ {
			l := a.At(i, j) / a.At(j, j)
			a.Set(i, j, l)
			for c := j + 1; c < n; c++ {
				a.Set(i, c, a.At(i, c)-l*a.At(j, c))
			}
		}
	}
	return piv
}

func randomMatrix(r *rand.Rand, m, n int) *Matrix {
	a := NewMatrix(m, n)
	for j := 0; j < n; j++ {
		for i := 0; i < m; i++ {
			a.Set(i, j, r.Float64()-0.5)
		}
	}
	return a
}

// reconstruct returns P⁻¹·L·U from a factorization, to compare with A.
func reconstruct(f *Factorization, m, n int) *Matrix {
	out := NewMatrix(m, n)
	k := min(m, n)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			var s float64
			for p := 0; p <= min(i, j, k-1); p++ {
				l := 1.0
				if p < i {
					l = f.LU.At(i, p)
				}
				s += l * f.LU.At(p, j)
			}
			out.Set(i, j, s)
		}
	}
	for i := k - 1; i >= 0; i-- {
		p := f.Pivots[i]
		for j := 0; j < n; j++ {
			x, y := out.At(i, j), out.At(p, j)
			out.Set(i, j, y)
			out.Set(p, j, x)
		}
	}
	return out
}

func TestFactorMatchesNaive(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, tc := range []struct{ m, n, nb, threads int }{
		{1, 1, 4, 1}, {2, 2, 1, 1}, {5, 5, 8, 1}, {17, 17, 4, 2}, {33, 33, 8, 3},
		{100, 100, 16, 2}, {100, 100, 200, 2}, {131, 131, 24, 2}, {64, 64, 64, 1},
		{300, 300, 48, 2}, {301, 301, 300, 4}, {520, 520, 96, 2}, {600, 600, 300, 2},
		// rectangular, both ways
		{50, 20, 8, 2}, {20, 50, 8, 2}, {200, 130, 32, 3}, {130, 200, 32, 3},
	} {
		t.Run(fmt.Sprintf("%dx%d/nb=%d/t=%d", tc.m, tc.n, tc.nb, tc.threads), func(t *testing.T) {
			withKernel(t, func(mk microKernel) {
				a := randomMatrix(r, tc.m, tc.n)
				ref := a.Clone()
				refPiv := naiveLU(ref)
				f, err := Factor(context.Background(), a, Options{NB: tc.nb, Threads: tc.threads})
				if err != nil {
					t.Fatal(err)
				}
				for i, p := range f.Pivots {
					if p != refPiv[i] {
						t.Fatalf("%s: pivot %d is row %d, want %d", mk.name, i, p, refPiv[i])
					}
				}
				for j := 0; j < tc.n; j++ {
					for i := 0; i < tc.m; i++ {
						if d := math.Abs(a.At(i, j) - ref.At(i, j)); d > 1e-9 {
							t.Fatalf("%s: LU(%d,%d) = %v, want %v", mk.name, i, j, a.At(i, j), ref.At(i, j))
						}
					}
				}
			})
		})
	}
}

// TestFactorShapes checks P·L·U = A on the sizes where blocking has edges:
// N not a multiple of NB, N below NB, N = 1, and panels narrower than a
// micro-tile.
func TestFactorShapes(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, tc := range []struct{ m, n, nb int }{
		{1, 1, 192}, {2, 2, 192}, {3, 3, 2}, {7, 7, 3}, {50, 50, 192}, {97, 97, 32},
		{200, 200, 7}, {250, 250, 64}, {1, 5, 4}, {5, 1, 4}, {64, 63, 16},
	} {
		for _, threads := range []int{1, 2, 5} {
			a := randomMatrix(r, tc.m, tc.n)
			orig := a.Clone()
			f, err := Factor(context.Background(), a, Options{NB: tc.nb, Threads: threads})
			if err != nil {
				t.Fatalf("%dx%d nb=%d: %v", tc.m, tc.n, tc.nb, err)
			}
			back := reconstruct(f, tc.m, tc.n)
			for j := 0; j < tc.n; j++ {
				for i := 0; i < tc.m; i++ {
					if d := math.Abs(back.At(i, j) - orig.At(i, j)); d > 1e-12*float64(tc.m) {
						t.Fatalf("%dx%d nb=%d threads=%d: (P·L·U)(%d,%d) = %v, A(%d,%d) = %v", tc.m, tc.n, tc.nb, threads, i, j, back.At(i, j), i, j, orig.At(i, j))
					}
				}
			}
			for i, p := range f.Pivots {
				if p < i || p >= tc.m {
					t.Fatalf("%dx%d: pivot %d is row %d", tc.m, tc.n, i, p)
				}
			}
		}
	}
}

func TestFactorSingular(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, tc := range []struct {
		name   string
		n, nb  int
		zero   func(a *Matrix)
		column int
	}{
		{"zero column 37", 120, 32, func(a *Matrix) { clear(a.Data[37*a.Stride : 37*a.Stride+a.Rows]) }, 37},
		{"zero first column", 40, 8, func(a *Matrix) { clear(a.Data[:a.Rows]) }, 0},
		// A zero row stays zero through every update, and is the last
		// pivot row left.
		{"zero row", 90, 16, func(a *Matrix) {
			for j := 0; j < a.Cols; j++ {
				a.Set(11, j, 0)
			}
		}, 89},
		{"1x1 zero", 1, 4, func(a *Matrix) { a.Set(0, 0, 0) }, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := randomMatrix(r, tc.n, tc.n)
			tc.zero(a)
			f, err := Factor(context.Background(), a, Options{NB: tc.nb, Threads: 2})
			var se *SingularError
			if !errors.As(err, &se) || !errors.Is(err, ErrSingular) || se.Column != tc.column {
				t.Fatalf("error %v, want a singular column %d", err, tc.column)
			}
			if want := fmt.Sprintf("U(%d,%d) is exactly zero", tc.column, tc.column); !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not say %q", err, want)
			}
			if f == nil || len(f.Pivots) != tc.n {
				t.Fatalf("no factors with the error: %+v", f)
			}
			b := make([]float64, tc.n)
			if err := f.Solve(b); !errors.Is(err, ErrSingular) {
				t.Errorf("solve with a singular factor: %v", err)
			}
		})
	}
}

func TestFactorCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	a := randomMatrix(rand.New(rand.NewPCG(1, 1)), 300, 300)
	if _, err := Factor(ctx, a, Options{NB: 32}); !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "stopped at column 0 of 300") {
		t.Fatalf("error %v", err)
	}
}

func TestFactorBadInput(t *testing.T) {
	for _, tc := range []struct {
		a    *Matrix
		opt  Options
		want string
	}{
		{NewMatrix(3, 3), Options{NB: -1}, "factor: block size -1 is not positive"},
		{NewMatrix(3, 3), Options{Threads: -2}, "factor: -2 threads"},
		{&Matrix{Rows: 3, Cols: 3, Stride: 2, Data: make([]float64, 9)}, Options{}, "factor: matrix 3×3 with stride 2"},
		{&Matrix{Rows: 3, Cols: 3, Stride: 3, Data: make([]float64, 8)}, Options{}, "factor: matrix 3×3 with stride 3 holds 8 elements"},
	} {
		if _, err := Factor(context.Background(), tc.a, tc.opt); err == nil || err.Error() != tc.want {
			t.Errorf("error %v, want %q", err, tc.want)
		}
	}
}

func TestNewMatrix(t *testing.T) {
	for _, tc := range []struct{ rows, cols, stride int }{
		{0, 0, 1}, {1, 1, 8}, {9, 2, 16}, {512, 3, 520}, {1024, 1, 1032}, {1000, 2, 1000},
	} {
		m := NewMatrix(tc.rows, tc.cols)
		if m.Rows != tc.rows || m.Cols != tc.cols || m.Stride != tc.stride || len(m.Data) != tc.stride*tc.cols || m.check() != nil {
			t.Errorf("NewMatrix(%d, %d): %d×%d stride %d, %d elements", tc.rows, tc.cols, m.Rows, m.Cols, m.Stride, len(m.Data))
		}
	}
	m := NewMatrix(3, 2)
	m.Set(2, 1, 5)
	if m.At(2, 1) != 5 || m.Data[2+m.Stride] != 5 {
		t.Error("Set(2, 1) is not At(2, 1), element 2+stride")
	}
	defer func() {
		if recover() == nil {
			t.Error("gemm on a C too small did not panic")
		}
	}()
	gemm(4, 4, 4, 1, make([]float64, 16), 4, make([]float64, 16), 4, make([]float64, 15), 4)
}

// FuzzFactor checks P·L·U = A, |L| ≤ 1 and the pivots' range on random
// shapes, block sizes and goroutine counts: go test -fuzz FuzzFactor.
func FuzzFactor(f *testing.F) {
	f.Add(uint8(50), uint8(50), uint8(8), uint8(2), uint64(1))
	f.Add(uint8(1), uint8(1), uint8(1), uint8(1), uint64(2))
	f.Add(uint8(130), uint8(70), uint8(33), uint8(3), uint64(3))
	f.Add(uint8(20), uint8(90), uint8(200), uint8(1), uint64(4))
	f.Fuzz(func(t *testing.T, m8, n8, nb8, threads8 uint8, seed uint64) {
		m, n, nb, threads := int(m8%160)+1, int(n8%160)+1, int(nb8)+1, int(threads8%4)+1
		a := randomMatrix(rand.New(rand.NewPCG(seed, 5)), m, n)
		orig := a.Clone()
		fac, err := Factor(context.Background(), a, Options{NB: nb, Threads: threads})
		if err != nil {
			t.Fatalf("%dx%d nb=%d: %v", m, n, nb, err)
		}
		back := reconstruct(fac, m, n)
		for j := 0; j < n; j++ {
			for i := 0; i < m; i++ {
				if d := math.Abs(back.At(i, j) - orig.At(i, j)); d > 1e-12*float64(m+n) {
					t.Fatalf("%dx%d nb=%d threads=%d: (P·L·U)(%d,%d) = %v, A(%d,%d) = %v", m, n, nb, threads, i, j, back.At(i, j), i, j, orig.At(i, j))
				}
				if i > j && j < min(m, n) && math.Abs(a.At(i, j)) > 1 {
					t.Fatalf("%dx%d nb=%d: |L(%d,%d)| = %v > 1: not partial pivoting", m, n, nb, i, j, a.At(i, j))
				}
			}
		}
		for i, p := range fac.Pivots {
			if p < i || p >= m {
				t.Fatalf("%dx%d: pivot %d is row %d", m, n, i, p)
			}
		}
	})
}
