package lu

import (
	"context"
	"fmt"
	"runtime"
	"testing"
)

// BenchmarkFactor measures Factor alone (the matrix is generated outside
// the timer) for each micro-kernel, at HPL sizes, on one goroutine and on
// all: go test -bench Factor -benchtime 3x ./hpl/lu. Gflops count
// 2/3·N³.
func BenchmarkFactor(b *testing.B) {
	for _, mk := range kernels() {
		for _, n := range []int{2000, 3000} {
			for _, threads := range threadCounts() {
				b.Run(fmt.Sprintf("%s/N=%d/threads=%d", mk.name, n, threads), func(b *testing.B) {
					if mk.name == "generic" && n > 2000 {
						b.Skip("the pure-Go kernel takes minutes here")
					}
					saved := kernel
					kernel = mk
					defer func() { kernel = saved }()
					for range b.N {
						b.StopTimer()
						a, _ := RandomSystem(n, 1)
						b.StartTimer()
						if _, err := Factor(context.Background(), a, Options{Threads: threads}); err != nil {
							b.Fatal(err)
						}
					}
					b.ReportMetric(2.0/3*float64(n)*float64(n)*float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "Gflops")
				})
			}
		}
	}
}

// BenchmarkRun is the HPL figure: Run at N=3000, the best Gflops of the
// iterations as HPL users quote it, and the residual checked.
func BenchmarkRun(b *testing.B) {
	for _, threads := range threadCounts() {
		b.Run(fmt.Sprintf("N=3000/threads=%d", threads), func(b *testing.B) {
			var best float64
			for range b.N {
				res, err := Run(context.Background(), Config{N: 3000, Seed: 1, Threads: threads})
				if err != nil {
					b.Fatal(err)
				}
				if !res.Passed() {
					b.Fatalf("residual %v", res.Residual)
				}
				best = max(best, res.Gflops)
			}
			b.ReportMetric(best, "best-Gflops")
		})
	}
}

func threadCounts() []int {
	if p := runtime.GOMAXPROCS(0); p > 1 {
		return []int{1, p}
	}
	return []int{1}
}
