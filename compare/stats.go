package compare

import (
	"errors"
	"math"
	"slices"
)

// ErrSampleSize is returned by MannWhitney when a sample is empty.
var ErrSampleSize = errors.New("mann-whitney: a sample is empty")

// exactMaxN is the largest n+m for which MannWhitney computes the exact null
// distribution. The count of subsets needs n·m·(n+m) steps; at 40 that is a
// few million, well under a millisecond, and C(40,20) ≈ 1.4e11 is still an
// exact float64. Beyond it the normal approximation is good to the third
// decimal of p.
const exactMaxN = 40

// UTest is the outcome of a Mann-Whitney U test.
type UTest struct {
	U     float64 // U of the first sample: pairs (x, y) with x > y, ties counting ½
	P     float64 // two-sided p-value
	Exact bool    // P from the exact null distribution (else the normal approximation)
}

// MannWhitney tests whether x and y come from the same distribution against
// the alternative that one tends to be larger, two-sided. It makes no
// assumption about the shape of the distribution, which is why benchmark
// tools use it: timings are skewed and have outliers.
//
// Ties get mid-ranks. For n+m ≤ 40 the p-value is exact even with ties: the
// null distribution of the rank sum is counted over all C(n+m, n) ways to
// split the pooled mid-ranks. Larger samples use the normal approximation
// with the tie-corrected variance and a continuity correction. When every
// value is the same, P is 1.
func MannWhitney(x, y []float64) (UTest, error) {
	n, m := len(x), len(y)
	if n == 0 || m == 0 {
		return UTest{}, ErrSampleSize
	}
	ranks2, ties := midRanks2(x, y)
	// The rank sum of x, doubled so that mid-ranks are integers.
	var w2 int64
	for _, r := range ranks2[:n] {
		w2 += r
	}
	u := float64(w2)/2 - float64(n*(n+1))/2
	N := n + m
	if ties == int64(N)*int64(N)*int64(N)-int64(N) {
		return UTest{U: u, P: 1, Exact: true}, nil // all values equal
	}
	if N <= exactMaxN {
		return UTest{U: u, P: exactP(ranks2, n, w2), Exact: true}, nil
	}
	mean := float64(n*m) / 2
	variance := float64(n*m) / 12 * (float64(N+1) - float64(ties)/float64(N*(N-1)))
	z := math.Max(0, math.Abs(u-mean)-0.5) / math.Sqrt(variance)
	return UTest{U: u, P: math.Min(1, math.Erfc(z/math.Sqrt2))}, nil
}

// midRanks2 returns twice the mid-rank of every value of x then y (in that
// order), and Σ(t³−t) over the groups of t tied values.
func midRanks2(x, y []float64) (ranks2 []int64, ties int64) {
	type item struct {
		v float64
		i int
	}
	all := make([]item, 0, len(x)+len(y))
	for i, v := range x {
		all = append(all, item{v, i})
	}
	for i, v := range y {
		all = append(all, item{v, len(x) + i})
	}
	slices.SortFunc(all, func(a, b item) int {
		switch {
		case a.v < b.v:
			return -1
		case a.v > b.v:
			return 1
		}
		return 0
	})
	ranks2 = make([]int64, len(all))
	for i := 0; i < len(all); {
		j := i + 1
		for j < len(all) && all[j].v == all[i].v {
			j++
		}
		// Ranks i+1 … j share their mean, (i+1+j)/2; doubled, i+1+j.
		for k := i; k < j; k++ {
			ranks2[all[k].i] = int64(i + 1 + j)
		}
		t := int64(j - i)
		ties += t*t*t - t
		i = j
	}
	return ranks2, ties
}

// exactP is the two-sided p-value of the doubled rank sum w2 of the first n
// of ranks2: the share of all n-subsets of the pooled ranks whose sum lies at
// least as far from its mean as w2 does.
func exactP(ranks2 []int64, n int, w2 int64) float64 {
	var total int64
	for _, r := range ranks2 {
		total += r
	}
	// count[j][s]: subsets of j ranks seen so far with doubled sum s.
	count := make([][]float64, n+1)
	for j := range count {
		count[j] = make([]float64, total+1)
	}
	count[0][0] = 1
	// Sums above seen (the ranks so far) cannot have been reached yet.
	var seen int64
	for i, r := range ranks2 {
		for j := min(i+1, n); j >= 1; j-- {
			prev, cur := count[j-1], count[j]
			for s := seen; s >= 0; s-- {
				if prev[s] != 0 {
					cur[s+r] += prev[s]
				}
			}
		}
		seen += r
	}
	N := int64(len(ranks2))
	mean2 := int64(n) * (N + 1) // E[doubled rank sum]
	obs := abs64(w2 - mean2)
	var extreme, all float64
	for s, c := range count[n] {
		if c == 0 {
			continue
		}
		all += c
		if abs64(int64(s)-mean2) >= obs {
			extreme += c
		}
	}
	return math.Min(1, extreme/all)
}

func abs64(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

// MinP is the smallest two-sided p-value a Mann-Whitney test of samples of
// n and m values can give (with no ties): 2 / C(n+m, n). A comparison whose
// MinP is above alpha cannot find anything significant, however large the
// change, so compare does not rely on the test for it (see Options).
func MinP(n, m int) float64 {
	if n == 0 || m == 0 {
		return 1
	}
	// C(n+m, n) as a float: exact enough far beyond any alpha of interest.
	c := 1.0
	for i := 1; i <= n; i++ {
		c = c * float64(m+i) / float64(i)
	}
	return math.Min(1, 2/c)
}

// RunsNeeded is the fewest runs a side needs, the same on both sides, for
// a Mann-Whitney test to be able to reach alpha at all: the smallest n
// with MinP(n, n) ≤ alpha (4 at 0.05, 5 at 0.01).
func RunsNeeded(alpha float64) int {
	n := 1
	for MinP(n, n) > alpha {
		n++
	}
	return n
}

// BenjaminiHochberg returns the adjusted p-values (q-values) of a family
// of tests whose p-values are p, in p's order: q of the i-th smallest of m
// is the smallest m·p(j)/j over j ≥ i, at most 1. Rejecting every test
// whose q is at most alpha controls the false discovery rate at alpha —
// and, when no effect is real, the chance of any rejection at all — for
// independent or positively dependent tests, which the rows of one
// comparison are (one run's conditions move all its sizes together).
func BenjaminiHochberg(p []float64) []float64 {
	m := len(p)
	order := make([]int, m)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		switch {
		case p[a] < p[b]:
			return -1
		case p[a] > p[b]:
			return 1
		}
		return 0
	})
	q := make([]float64, m)
	low := 1.0
	for k := m - 1; k >= 0; k-- {
		i := order[k]
		low = math.Min(low, p[i]*float64(m)/float64(k+1))
		q[i] = low
	}
	return q
}

// Median returns the median of v (the mean of the middle two for an even
// count), or NaN for no values.
func Median(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := slices.Clone(v)
	slices.Sort(s)
	h := len(s) / 2
	if len(s)%2 == 1 {
		return s[h]
	}
	return (s[h-1] + s[h]) / 2
}

// GeometricMean returns the geometric mean of v, or NaN if v is empty or holds a
// value that is not positive.
func GeometricMean(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	var sum float64
	for _, x := range v {
		if !(x > 0) {
			return math.NaN()
		}
		sum += math.Log(x)
	}
	return math.Exp(sum / float64(len(v)))
}

// meanSD returns the mean and the sample standard deviation of v.
func meanSD(v []float64) (mean, sd float64) {
	if len(v) == 0 {
		return math.NaN(), math.NaN()
	}
	for _, x := range v {
		mean += x
	}
	mean /= float64(len(v))
	if len(v) < 2 {
		return mean, 0
	}
	var ss float64
	for _, x := range v {
		ss += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(ss / float64(len(v)-1))
}
