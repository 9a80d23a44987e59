package compare

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkSteps is a year of daily runs with one step: the cost of
// "sbench history" beyond reading the archive.
func BenchmarkSteps(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	v := series(rng, 365, 10000, 0.02, 200, 0.9)
	for b.Loop() {
		Steps(v, StepOptions{})
	}
}

// BenchmarkMannWhitneyExact is the largest exact test (20+20 values).
func BenchmarkMannWhitneyExact(b *testing.B) {
	rng := rand.New(rand.NewPCG(2, 2))
	x, y := make([]float64, 20), make([]float64, 20)
	for i := range x {
		x[i], y[i] = rng.NormFloat64(), rng.NormFloat64()+0.5
	}
	for b.Loop() {
		MannWhitney(x, y)
	}
}
