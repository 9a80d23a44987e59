package lu

import (
	"context"
	"fmt"
	"math"
	"time"
)

// Config is one HPL-style run: solve the random system of Seed, of order
// N, with block size NB on Threads goroutines (0: the defaults of
// Options).
type Config struct {
	N, NB   int
	Seed    uint64
	Threads int
}

// Result is what Run measured, in HPL's terms.
type Result struct {
	N, NB, Threads int
	Seed           uint64
	// Kernel names the GEMM micro-kernel used: avx512, avx2 or generic.
	Kernel string
	// Time is the factorization's and the solve's, as HPL times
	// HPL_pdgesv; Gflops counts Flops(N) over it.
	Time, FactorTime, SolveTime time.Duration
	Gflops                      float64
	// Residual is HPL's scaled residual ‖Ax-b‖∞/(eps·(‖A‖∞·‖x‖∞+‖b‖∞)·N),
	// from the norms below.
	Residual                   float64
	NormR, NormA, NormX, NormB float64
}

// Passed reports whether the residual is below Threshold (a NaN is not).
func (r Result) Passed() bool { return r.Residual < Threshold }

// Flops is HPL's operation count for a system of order n: 2/3·n³ + 3/2·n².
func Flops(n int) float64 {
	x := float64(n)
	return 2.0/3.0*x*x*x + 1.5*x*x
}

// Run generates the system of cfg.Seed, factors and solves it, then checks
// the solution against a regenerated A with HPL's scaled residual. A
// residual at or above Threshold is not an error: the Result says so
// (Passed), and the caller decides. A singular matrix is an error that
// wraps ErrSingular.
func Run(ctx context.Context, cfg Config) (Result, error) {
	opt, err := Options{NB: cfg.NB, Threads: cfg.Threads}.withDefaults()
	if err != nil {
		return Result{}, fmt.Errorf("hpl run: %w", err)
	}
	if cfg.N < 1 {
		return Result{}, fmt.Errorf("hpl run: order %d is not positive", cfg.N)
	}
	res := Result{N: cfg.N, NB: opt.NB, Threads: opt.Threads, Seed: cfg.Seed, Kernel: kernel.name}
	n := cfg.N
	// [A | b]: as HPL does, b is factored along as A's last column, which
	// leaves L⁻¹·P·b there, and only U·x = L⁻¹·P·b remains to solve.
	a := NewMatrix(n, n+1)
	parallelColumns(opt.Threads, n+1, func(c0, c1 int) {
		for j := c0; j < c1; j++ {
			randomColumn(cfg.Seed, n, j, a.Data[j*a.Stride:])
		}
	})
	b := append([]float64(nil), a.Data[n*a.Stride:n*a.Stride+n]...)

	start := time.Now()
	_, err = factor(ctx, a, opt, false)
	res.FactorTime = time.Since(start)
	if err != nil {
		return res, fmt.Errorf("hpl run: N=%d seed %d: %w", n, cfg.Seed, err)
	}
	x := a.Data[n*a.Stride : n*a.Stride+n]
	if err := backSolve(n, a.Data, a.Stride, x, opt.NB, opt.Threads); err != nil {
		return res, fmt.Errorf("hpl run: %w", err)
	}
	res.Time = time.Since(start)
	res.SolveTime = res.Time - res.FactorTime
	res.Gflops = Flops(n) / max(res.Time.Seconds(), 1e-9) / 1e9

	res.NormR, res.NormA = systemResidual(ctx, cfg.Seed, n, x, b, opt.Threads)
	res.NormX, res.NormB = normInf(x), normInf(b)
	res.Residual = scaledResidual(res.NormR, res.NormA, res.NormX, res.NormB, n)
	if err := ctx.Err(); err != nil {
		return res, fmt.Errorf("hpl run: residual check: %w", err)
	}
	return res, nil
}

// systemResidual returns ‖A·x-b‖∞ and ‖A‖∞ for the system of seed,
// regenerating A a column at a time: each goroutine sums its columns'
// contributions, and the partial sums are added at the end.
func systemResidual(ctx context.Context, seed uint64, n int, x, b []float64, threads int) (normR, normA float64) {
	threads = max(min(threads, n), 1)
	r := make([][]float64, threads)
	sums := make([][]float64, threads)
	width := (n + threads - 1) / threads
	parallel(threads, func(t int) {
		r[t], sums[t] = make([]float64, n), make([]float64, n)
		col := make([]float64, n)
		for j := t * width; j < min((t+1)*width, n); j++ {
			if j%64 == 0 && ctx.Err() != nil {
				return
			}
			randomColumn(seed, n, j, col)
			xj := x[j]
			for i, v := range col {
				r[t][i] += v * xj
				sums[t][i] += math.Abs(v)
			}
		}
	})
	for i := 0; i < n; i++ {
		ri, si := -b[i], 0.0
		for t := range r {
			ri += r[t][i]
			si += sums[t][i]
		}
		normR = max(normR, math.Abs(ri))
		normA = max(normA, si)
	}
	return normR, normA
}

// parallelColumns splits columns 0 … n-1 in threads ranges and runs f on
// each at once.
func parallelColumns(threads, n int, f func(c0, c1 int)) {
	threads = max(min(threads, n), 1)
	width := (n + threads - 1) / threads
	parallel(threads, func(t int) {
		if c0 := t * width; c0 < n {
			f(c0, min(c0+width, n))
		}
	})
}
