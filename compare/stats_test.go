package compare

import (
	"math"
	"math/rand/v2"
	"testing"
)

// bruteForceP enumerates every way to pick len(x) of the pooled values as
// "x" and returns the share whose rank sum lies at least as far from its
// mean as the observed one: the definition of the exact two-sided p-value,
// computed the slow way, independently of the counting in exactP.
func bruteForceP(x, y []float64) float64 {
	ranks2, _ := midRanks2(x, y)
	n, N := len(x), len(x)+len(y)
	var obs int64
	for _, r := range ranks2[:n] {
		obs += r
	}
	mean2 := int64(n) * int64(N+1)
	dist := abs64(obs - mean2)
	extreme, all := 0, 0
	for mask := 0; mask < 1<<N; mask++ {
		if bitsSet(mask) != n {
			continue
		}
		var s int64
		for i := 0; i < N; i++ {
			if mask&(1<<i) != 0 {
				s += ranks2[i]
			}
		}
		all++
		if abs64(s-mean2) >= dist {
			extreme++
		}
	}
	return float64(extreme) / float64(all)
}

func bitsSet(v int) int {
	n := 0
	for ; v != 0; v &= v - 1 {
		n++
	}
	return n
}

func TestMannWhitneyExactMatchesEnumeration(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 300 {
		n, m := 1+rng.IntN(7), 1+rng.IntN(7)
		x, y := make([]float64, n), make([]float64, m)
		// Coarse values make ties common; a shift makes p small sometimes.
		shift := float64(rng.IntN(3))
		for i := range x {
			x[i] = math.Round(rng.NormFloat64()*2) + shift
		}
		for i := range y {
			y[i] = math.Round(rng.NormFloat64() * 2)
		}
		u, err := MannWhitney(x, y)
		if err != nil {
			t.Fatal(err)
		}
		want := bruteForceP(x, y)
		if math.Abs(u.P-want) > 1e-12 {
			t.Fatalf("trial %d: x=%v y=%v: p=%v, enumeration gives %v", trial, x, y, u.P, want)
		}
		// U counts the pairs with x > y, ties ½.
		var pairs float64
		for _, a := range x {
			for _, b := range y {
				switch {
				case a > b:
					pairs++
				case a == b:
					pairs += 0.5
				}
			}
		}
		if u.U != pairs {
			t.Fatalf("trial %d: U=%v, pair count %v", trial, u.U, pairs)
		}
	}
}

// R: wilcox.test(x, y, alternative = "g") gives W = 35, p-value = 0.1272
// for the example in its manual; two-sided is twice that.
func TestMannWhitneyMatchesR(t *testing.T) {
	x := []float64{0.80, 0.83, 1.89, 1.04, 1.45, 1.38, 1.91, 1.64, 0.73, 1.46}
	y := []float64{1.15, 0.88, 0.90, 0.74, 1.21}
	u, err := MannWhitney(x, y)
	if err != nil {
		t.Fatal(err)
	}
	if u.U != 35 || !u.Exact || math.Abs(u.P-0.2544) > 0.0001 {
		t.Errorf("got %+v, want U=35, exact p=0.2544", u)
	}
}

func TestMannWhitneyNormalApproximation(t *testing.T) {
	// Just past the exact limit the approximation must agree with the
	// exact count to within a few thousandths across the range of p.
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := range 40 {
		n, m := 20, 20
		x, y := make([]float64, n), make([]float64, m)
		shift := rng.Float64()
		for i := range x {
			x[i] = math.Round(10*(rng.NormFloat64()+shift)) / 10
		}
		for i := range y {
			y[i] = math.Round(10*rng.NormFloat64()) / 10
		}
		exact, _ := MannWhitney(x, y)
		if !exact.Exact {
			t.Fatal("n+m = 40 should be exact")
		}
		// One more value on each side takes the sample past the exact
		// limit; the approximation is then checked against the exact
		// count on those same 21+21 values.
		xa, ya := append(append([]float64{}, x...), -100), append(append([]float64{}, y...), 100)
		approx, _ := MannWhitney(xa, ya)
		if approx.Exact {
			t.Fatal("n+m = 42 should use the normal approximation")
		}
		exactA := bruteForceCountP(xa, ya)
		if d := math.Abs(approx.P - exactA); d > 0.006 {
			t.Errorf("trial %d: normal approximation p=%.4f, exact %.4f", trial, approx.P, exactA)
		}
	}
}

// bruteForceCountP is exactP without the size limit.
func bruteForceCountP(x, y []float64) float64 {
	ranks2, _ := midRanks2(x, y)
	var w2 int64
	for _, r := range ranks2[:len(x)] {
		w2 += r
	}
	return exactP(ranks2, len(x), w2)
}

func TestMannWhitneyEdgeCases(t *testing.T) {
	if _, err := MannWhitney(nil, []float64{1}); err != ErrSampleSize {
		t.Errorf("empty sample: err %v", err)
	}
	u, _ := MannWhitney([]float64{3, 3, 3}, []float64{3, 3})
	if u.P != 1 {
		t.Errorf("all equal: p=%v, want 1", u.P)
	}
	// Complete separation of 4 and 4: the smallest p there is, 2/70.
	u, _ = MannWhitney([]float64{10, 11, 12, 13}, []float64{1, 2, 3, 4})
	if math.Abs(u.P-2.0/70) > 1e-12 || u.U != 16 {
		t.Errorf("separated 4+4: %+v, want U=16 p=2/70", u)
	}
	// Large separated samples: tiny p from the approximation.
	var big1, big2 []float64
	for i := range 50 {
		big1 = append(big1, float64(i))
		big2 = append(big2, float64(100+i))
	}
	if u, _ := MannWhitney(big1, big2); u.Exact || u.P > 1e-10 {
		t.Errorf("separated 50+50: %+v", u)
	}
}

func TestMinP(t *testing.T) {
	for _, c := range []struct {
		n, m int
		want float64
	}{{1, 1, 1}, {1, 20, 2.0 / 21}, {3, 3, 0.1}, {4, 4, 2.0 / 70}, {3, 5, 2.0 / 56}, {0, 4, 1}} {
		if got := MinP(c.n, c.m); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("MinP(%d, %d) = %v, want %v", c.n, c.m, got, c.want)
		}
	}
	// The rule compare relies on: at 0.05, 3+4 cannot reach it, 4+4 can.
	if MinP(3, 4) <= 0.05 || MinP(4, 4) > 0.05 {
		t.Error("MinP does not separate 3+4 from 4+4 at 0.05")
	}
}

func TestMedianAndGeometricMean(t *testing.T) {
	if m := Median([]float64{3, 1, 2}); m != 2 {
		t.Errorf("median of 3 = %v", m)
	}
	if m := Median([]float64{4, 1, 3, 2}); m != 2.5 {
		t.Errorf("median of 4 = %v", m)
	}
	if !math.IsNaN(Median(nil)) {
		t.Error("median of nothing is not NaN")
	}
	if g := GeometricMean([]float64{1, 4, 16}); math.Abs(g-4) > 1e-12 {
		t.Errorf("geomean = %v, want 4", g)
	}
	if !math.IsNaN(GeometricMean([]float64{1, 0})) || !math.IsNaN(GeometricMean(nil)) {
		t.Error("geomean of a zero or of nothing is not NaN")
	}
}

func TestRunsNeeded(t *testing.T) {
	for _, c := range []struct {
		alpha float64
		want  int
	}{{0.05, 4}, {0.1, 3}, {0.01, 5}, {0.001, 7}} {
		if got := RunsNeeded(c.alpha); got != c.want {
			t.Errorf("RunsNeeded(%v) = %d, want %d", c.alpha, got, c.want)
		}
	}
}

// TestBenjaminiHochberg checks the adjustment against values worked by
// hand (and by R's p.adjust(p, "BH")): q of the i-th smallest of m is the
// smallest m·p(j)/j for j ≥ i, in the input's order, ties and all.
func TestBenjaminiHochberg(t *testing.T) {
	for _, c := range []struct{ p, want []float64 }{
		{nil, []float64{}},
		{[]float64{0.03}, []float64{0.03}},
		{[]float64{0.01, 0.04, 0.03, 0.005}, []float64{0.02, 0.04, 0.04, 0.02}},
		{[]float64{0.5, 0.0079, 0.0079, 1}, []float64{2.0 / 3, 0.0158, 0.0158, 1}},
		{[]float64{0.9, 0.8}, []float64{0.9, 0.9}},
	} {
		got := BenjaminiHochberg(c.p)
		if len(got) != len(c.want) {
			t.Fatalf("BH(%v) = %v, want %v", c.p, got, c.want)
		}
		for i := range got {
			if math.Abs(got[i]-c.want[i]) > 1e-12 {
				t.Errorf("BH(%v) = %v, want %v", c.p, got, c.want)
				break
			}
		}
	}
}
