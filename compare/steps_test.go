package compare

import (
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
)

// series returns n values around level with relative Gaussian noise sd,
// multiplied by factor from index step on (step < 0: no step).
func series(rng *rand.Rand, n int, level, sd float64, step int, factor float64) []float64 {
	v := make([]float64, n)
	for i := range v {
		l := level
		if step >= 0 && i >= step {
			l *= factor
		}
		v[i] = l * (1 + sd*rng.NormFloat64())
	}
	return v
}

func TestStepFoundAtTheRightRun(t *testing.T) {
	const trials = 50
	exact, extra := 0, 0
	for seed := range uint64(trials) {
		rng := rand.New(rand.NewPCG(seed, 7))
		// 40 runs of a 10 GB/s link with 2% noise; from run 25 on, 15%
		// less (a port that trained at a lower rate).
		v := series(rng, 40, 10000, 0.02, 25, 0.85)
		steps := Steps(v, StepOptions{Seed: seed})
		if len(steps) == 0 {
			t.Fatalf("seed %d: no step found in %v", seed, v)
		}
		found := false
		for _, s := range steps {
			if s.Index == 25 {
				found = true
				if s.P > 0.01 || s.After/s.Before > 0.9 || s.After/s.Before < 0.8 {
					t.Errorf("seed %d: step %+v: want p ≤ 0.01 and a level ratio near 0.85", seed, s)
				}
			} else {
				extra++
			}
		}
		if found {
			exact++
		}
	}
	t.Logf("step located exactly in %d/%d trials; %d spurious extra steps", exact, trials, extra)
	if exact < trials-1 {
		t.Errorf("step at run 25 located exactly in %d/%d trials, want ≥ %d", exact, trials, trials-1)
	}
	// Each half is searched again at alpha: a few extra steps are
	// expected, about 2·alpha per trial, not more.
	if extra > trials/4 {
		t.Errorf("%d spurious steps in %d trials", extra, trials)
	}
}

// noiseTrials counts, over seeded series of pure noise, those where Steps
// finds any step and those where a step is a regression beyond threshold
// for a higher-is-better metric.
func noiseTrials(trials int, noise func(*rand.Rand) float64, threshold float64) (anyStep, regressions int) {
	for seed := range uint64(trials) {
		rng := rand.New(rand.NewPCG(seed, 99))
		v := make([]float64, 30)
		for i := range v {
			v[i] = 1000 * (1 + noise(rng))
		}
		steps := Steps(v, StepOptions{Seed: seed})
		if len(steps) > 0 {
			anyStep++
		}
		for _, s := range steps {
			if s.After/s.Before-1 < -threshold {
				regressions++
				break
			}
		}
	}
	return anyStep, regressions
}

func TestNoiseOnlyGivesNoRegression(t *testing.T) {
	const trials = 400
	for _, c := range []struct {
		name  string
		noise func(*rand.Rand) float64
	}{
		{"gaussian", func(r *rand.Rand) float64 { return 0.02 * r.NormFloat64() }},
		// Benchmark noise is skewed with outliers: mostly 1%, sometimes a
		// stall of 30%.
		{"outliers", func(r *rand.Rand) float64 {
			if r.IntN(20) == 0 {
				return -0.3 * r.Float64()
			}
			return 0.01 * r.NormFloat64()
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			// Threshold 0: only the test's significance stands between
			// noise and a reported regression.
			anyStep, regressions := noiseTrials(trials, c.noise, 0)
			t.Logf("%s noise, %d series of 30 runs: a step in %d (%.1f%%), a regression in %d (%.1f%%)",
				c.name, trials, anyStep, 100*float64(anyStep)/trials, regressions, 100*float64(regressions)/trials)
			// At alpha 0.05 the permutation test fires on 5% of noise
			// series; 8% is 2.7 standard errors above that.
			if anyStep > trials*8/100 {
				t.Errorf("a step in %d of %d noise-only series, want about 5%%", anyStep, trials)
			}
			if regressions > trials*5/100 {
				t.Errorf("a regression in %d of %d noise-only series, want ≤ 5%%", regressions, trials)
			}
		})
	}
}

func TestStepsDeterministicAndDegenerate(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	v := series(rng, 30, 100, 0.05, 15, 1.3)
	a, b := Steps(v, StepOptions{}), Steps(v, StepOptions{})
	if !reflect.DeepEqual(a, b) || len(a) == 0 {
		t.Errorf("same series, different steps: %+v vs %+v", a, b)
	}
	for _, v := range [][]float64{nil, {1}, {1, 2, 3}, {5, 5, 5, 5, 5, 5, 5, 5}} {
		if s := Steps(v, StepOptions{}); len(s) != 0 {
			t.Errorf("Steps(%v) = %+v, want none", v, s)
		}
	}
	// Two runs at a new level are enough (MinSegment 2) when the change
	// is clear against a quiet history.
	quiet := []float64{100, 101, 99, 100, 100.5, 99.5, 100, 101, 99, 100, 100.2, 99.8, 100, 80, 80.5}
	s := Steps(quiet, StepOptions{})
	if len(s) != 1 || s[0].Index != 13 || s[0].Before != 100 || s[0].After != 80.25 {
		t.Errorf("Steps(quiet then two low) = %+v, want one at 13 from 100 to 80.25", s)
	}
}

func TestControlBands(t *testing.T) {
	v := []float64{10, 12, 11, 13, 30, 12, 50, 52, 51, 49, 50}
	bands, outside := ControlBands(v, 3, []int{6})
	for i := range 3 {
		if bands[i] != nil || outside[i] {
			t.Errorf("point %d has a band from %d earlier points", i, i)
		}
	}
	// Point 3: mean 11, sd 1 of {10, 12, 11}.
	if b := bands[3]; b == nil || b.Mean != 11 || b.SD != 1 || b.Lo != 8 || b.Hi != 14 || b.N != 3 || outside[3] {
		t.Errorf("band of point 3 = %+v", b)
	}
	// Point 4 (30): the window slides to {12, 11, 13}; 30 is outside.
	if b := bands[4]; b == nil || b.Mean != 12 || b.N != 3 || !outside[4] {
		t.Errorf("band of point 4 = %+v, outside %v", b, outside[4])
	}
	// Point 5 is judged without the outlier: {11, 13} and 12 before it.
	if b := bands[5]; b == nil || b.Mean != 12 || b.SD != 1 || outside[5] {
		t.Errorf("band of point 5 = %+v: the outlier widened it", b)
	}
	// A new level starts at 6: no band until three points of it.
	for i := 6; i < 9; i++ {
		if bands[i] != nil || outside[i] {
			t.Errorf("point %d has a band across the step: %+v", i, bands[i])
		}
	}
	if b := bands[9]; b == nil || b.Mean != 51 || b.N != 3 || outside[9] {
		t.Errorf("band of point 9 = %+v, want the new level's", b)
	}
	// Without the reset, the new level is judged against the old.
	if _, out := ControlBands(v, 3, nil); !out[6] {
		t.Error("point 6 without reset is inside the old level's band")
	}
	if b := bands[10]; b == nil || math.Abs(b.SD-1.5275) > 1e-3 {
		t.Errorf("band of point 10 = %+v", b)
	}
}

// TestShortSeriesHaveNoStep: seven runs cannot show a step at 0.05 — the
// permutation test's smallest p-value is 2/35 — so none is claimed, even
// when the shuffles, by chance, would have put p under 0.05; eight can.
func TestShortSeriesHaveNoStep(t *testing.T) {
	if Testable(7, 0.05) || !Testable(8, 0.05) || Testable(1, 0.05) {
		t.Errorf("Testable(7), (8), (1) at 0.05 = %v, %v, %v; want false, true, false", Testable(7, 0.05), Testable(8, 0.05), Testable(1, 0.05))
	}
	for seed := range uint64(100) {
		rng := rand.New(rand.NewPCG(seed, 3))
		short := series(rng, 7, 1000, 0.001, 3, 0.5)
		if s := Steps(short, StepOptions{Seed: seed, Permutations: 999, Extremes: 1000}); len(s) != 0 {
			t.Fatalf("seed %d: Steps(%v) = %+v: 7 runs cannot reach 0.05", seed, short, s)
		}
		if _, ok := NewStepSearch(short, StepOptions{}).First(); ok {
			t.Fatalf("seed %d: the first test of 7 runs says they were tested", seed)
		}
	}
	rng := rand.New(rand.NewPCG(1, 3))
	long := series(rng, 8, 1000, 0.001, 4, 0.5)
	s := Steps(long, StepOptions{})
	p, ok := NewStepSearch(long, StepOptions{}).First()
	if len(s) != 1 || s[0].Index != 4 || !ok || p != s[0].P || math.Abs(p-2.0/70) > 0.01 {
		t.Errorf("8 runs, half at half the level: steps %+v, first p %v (%v): want the step at 4, p near 2/70, the same p", s, p, ok)
	}
}

// TestStepFamily: the first tests of a family of series are controlled by
// Benjamini–Hochberg; the selected series' further steps are sought at
// alpha·R/m, the others at 0.
func TestStepFamily(t *testing.T) {
	ps := []float64{0.00005, 0.5, 0.004, 0.03, 0.001, 0.9}
	tested := []bool{true, true, true, true, false, true}
	// Tested: 0.00005, 0.5, 0.004, 0.03, 0.9 (m = 5); q: 0.00025, 0.625,
	// 0.01, 0.05, 0.9 → three selected, at 0.05·3/5.
	got := StepFamily(ps, tested, 0.05)
	want := []float64{0.03, 0, 0.03, 0.03, 0, 0}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-12 {
			t.Fatalf("StepFamily = %v, want %v", got, want)
		}
	}
	for _, c := range []struct{ m, want int }{{1, 999}, {20, 999}, {80, 3199}, {500, 19999}} {
		if got := FamilyPermutations(c.m, 0.05); got != c.want {
			t.Errorf("FamilyPermutations(%d) = %d, want %d", c.m, got, c.want)
		}
	}
	if l := StepFamily([]float64{0.01}, []bool{true}, 0.05); l[0] != 0.05 {
		t.Errorf("a family of one: level %v, want alpha", l[0])
	}
	// A search gives the same steps at a level however often asked, and
	// at the series' own alpha what Steps gives.
	rng := rand.New(rand.NewPCG(2, 2))
	v := series(rng, 60, 100, 0.02, 30, 0.8)
	v = append(v, series(rng, 30, 80, 0.02, 10, 1.2)...)
	search := NewStepSearch(v, StepOptions{Seed: 4})
	a, b := search.Steps(0.01), search.Steps(0.01)
	if !reflect.DeepEqual(a, b) || len(a) != 2 || !reflect.DeepEqual(search.Steps(0.05), Steps(v, StepOptions{Seed: 4})) {
		t.Errorf("steps at 0.01: %+v then %+v; want the same two", a, b)
	}
}
