package lu

import (
	"context"
	"errors"
	"math"
	"testing"
)

// naiveSolve solves A·x = b by Gaussian elimination on a copy of [A | b]
// with partial pivoting and back substitution: the direct check.
func naiveSolve(a *Matrix, b []float64) []float64 {
	n := a.Rows
	m := a.Clone()
	x := append([]float64(nil), b...)
	for j := 0; j < n; j++ {
		p := j
		for i := j + 1; i < n; i++ {
			if math.Abs(m.At(i, j)) > math.Abs(m.At(p, j)) {
				p = i
			}
		}
		for c := 0; c < n; c++ {
			u, v := m.At(j, c), m.At(p, c)
			m.Set(j, c, v)
			m.Set(p, c, u)
		}
		x[j], x[p] = x[p], x[j]
		for i := j + 1; i < n; i++ {
			l := m.At(i, j) / m.At(j, j)
			for c := j; c < n; c++ {
				m.Set(i, c, m.At(i, c)-l*m.At(j, c))
			}
			x[i] -= l * x[j]
		}
	}
	for j := n - 1; j >= 0; j-- {
		for c := j + 1; c < n; c++ {
			x[j] -= m.At(j, c) * x[c]
		}
		x[j] /= m.At(j, j)
	}
	return x
}

func TestSolve(t *testing.T) {
	for _, n := range []int{1, 2, 9, 64, 193, 400} {
		a, b := RandomSystem(n, uint64(n))
		want := naiveSolve(a, b)
		lu := a.Clone()
		f, err := Factor(context.Background(), lu, Options{NB: 24, Threads: 2})
		if err != nil {
			t.Fatal(err)
		}
		x := append([]float64(nil), b...)
		if err := f.Solve(x); err != nil {
			t.Fatal(err)
		}
		for i := range x {
			if d := math.Abs(x[i] - want[i]); d > 1e-9*max(1, math.Abs(want[i])) {
				t.Fatalf("n=%d: x(%d) = %v, direct elimination gives %v", n, i, x[i], want[i])
			}
		}
		if r := Residual(a, x, b); !(r < Threshold) {
			t.Errorf("n=%d: residual %v", n, r)
		}
	}
}

func TestSolveArguments(t *testing.T) {
	a, _ := RandomSystem(4, 1)
	f, err := Factor(context.Background(), a, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Solve(make([]float64, 3)); err == nil || err.Error() != "solve: 3 right-hand side values for 4 equations" {
		t.Errorf("error %v", err)
	}
	r, err := Factor(context.Background(), NewMatrix(3, 4), Options{})
	if err == nil {
		t.Fatal("zero matrix factored without error")
	}
	if err := r.Solve(make([]float64, 3)); err == nil || err.Error() != "solve: the factored matrix is 3×4, not square" {
		t.Errorf("error %v", err)
	}
}

// TestResidual checks the scaled residual on a system whose every norm is
// known, and that a wrong solution fails the check.
func TestResidual(t *testing.T) {
	// A = [[2, -1], [0, 3]], x = (1, 1), b = (1, 3): exact.
	a := NewMatrix(2, 2)
	a.Set(0, 0, 2)
	a.Set(0, 1, -1)
	a.Set(1, 1, 3)
	if r := Residual(a, []float64{1, 1}, []float64{1, 3}); r != 0 {
		t.Errorf("exact solution: residual %v", r)
	}
	// x off by 1e-12 in x(0): ‖Ax-b‖∞ = 2e-12, ‖A‖∞ = 3, ‖x‖∞ ≈ 1, ‖b‖∞ = 3.
	r := Residual(a, []float64{1 + 1e-12, 1}, []float64{1, 3})
	want := 2e-12 / (Eps * (3*(1+1e-12) + 3) * 2)
	if math.Abs(r-want) > 1e-3*want || r < Threshold {
		t.Errorf("residual %v, want %v (above %v)", r, want, Threshold)
	}

	n := 150
	sys, b := RandomSystem(n, 9)
	x := naiveSolve(sys, b)
	if r := Residual(sys, x, b); !(r < Threshold) {
		t.Fatalf("direct solution: residual %v", r)
	}
	x[17] *= 1 + 1e-9
	if r := Residual(sys, x, b); r < Threshold {
		t.Errorf("perturbed solution passes: residual %v", r)
	}
	normR, normA := systemResidual(context.Background(), 9, n, naiveSolve(sys, b), b, 3)
	if math.Abs(normA-sys.NormInf()) > 1e-13*normA || normR > 1e-10 {
		t.Errorf("regenerated system: ‖A‖∞ = %v (want %v), ‖Ax-b‖∞ = %v", normA, sys.NormInf(), normR)
	}
}

func TestRun(t *testing.T) {
	for _, tc := range []struct{ n, nb, threads int }{
		{1, 0, 0}, {5, 192, 1}, {191, 64, 2}, {500, 0, 2}, {777, 100, 3},
	} {
		res, err := Run(context.Background(), Config{N: tc.n, NB: tc.nb, Seed: 42, Threads: tc.threads})
		if err != nil {
			t.Fatalf("N=%d: %v", tc.n, err)
		}
		if !res.Passed() || !(res.Residual >= 0) {
			t.Errorf("N=%d: residual %v", tc.n, res.Residual)
		}
		if res.N != tc.n || res.Kernel != kernel.name || res.NB < 1 || res.Threads < 1 || res.Seed != 42 {
			t.Errorf("N=%d: result %+v", tc.n, res)
		}
		if res.Residual != scaledResidual(res.NormR, res.NormA, res.NormX, res.NormB, tc.n) {
			t.Errorf("N=%d: residual %v is not that of the norms %+v", tc.n, res.Residual, res)
		}
		if !(res.Gflops > 0) || res.Time <= 0 || res.Time != res.FactorTime+res.SolveTime {
			t.Errorf("N=%d: %v Gflops in %v (%v + %v)", tc.n, res.Gflops, res.Time, res.FactorTime, res.SolveTime)
		}
		if got := Flops(tc.n) / res.Time.Seconds() / 1e9; math.Abs(got-res.Gflops) > 1e-9*got {
			t.Errorf("N=%d: %v Gflops, flops over time give %v", tc.n, res.Gflops, got)
		}
		// The system is RandomSystem's, and the solution the direct one's
		// whatever the blocking (to rounding: sums are in another order).
		a, b := RandomSystem(tc.n, 42)
		x := naiveSolve(a, b)
		if math.Abs(res.NormA-a.NormInf()) > 1e-13*res.NormA || res.NormB != normInf(b) ||
			math.Abs(res.NormX-normInf(x)) > 1e-8*normInf(x) {
			t.Errorf("N=%d: norms A %v B %v X %v, want %v %v %v", tc.n, res.NormA, res.NormB, res.NormX, a.NormInf(), normInf(b), normInf(x))
		}
	}
}

func TestRunErrors(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Run(ctx, Config{N: 400, NB: 64}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{N: 0}, "hpl run: order 0 is not positive"},
		{Config{N: 10, NB: -3}, "hpl run: block size -3 is not positive"},
		{Config{N: 10, Threads: -1}, "hpl run: -1 threads"},
	} {
		if _, err := Run(context.Background(), tc.cfg); err == nil || err.Error() != tc.want {
			t.Errorf("%+v: error %v, want %q", tc.cfg, err, tc.want)
		}
	}
}

func TestFlops(t *testing.T) {
	// HPL's count: 2/3·N³ + 3/2·N².
	if got := Flops(3000); got != 2.0/3*27e9+1.5*9e6 {
		t.Errorf("Flops(3000) = %v", got)
	}
	r := Result{Residual: math.NaN()}
	if r.Passed() {
		t.Error("a NaN residual passes")
	}
}
