package compare

import (
	"math"
	"math/rand/v2"
	"slices"
)

// StepOptions tune Steps. The zero value gives the defaults.
type StepOptions struct {
	// Alpha is the significance level of each split (default 0.05).
	Alpha float64
	// MinSegment is the fewest points on either side of a step (default
	// 2): one point off the level is an outlier, which the control band
	// shows; two in a row are a new level.
	MinSegment int
	// Permutations is the most shuffles behind each p-value (default 999,
	// so that p is resolved to 0.001; a family of series needs finer,
	// FamilyPermutations).
	Permutations int
	// Extremes stops the shuffling once this many shuffles were at least
	// as extreme as the series (default 20), p being then Extremes over
	// the shuffles made (Besag and Clifford's sequential test, as valid as
	// the full one): a series with no step costs a few dozen shuffles,
	// only one with a clear step all of them.
	Extremes int
	// Seed makes the permutations, and so the p-values, reproducible.
	Seed uint64
}

func (o StepOptions) withDefaults() StepOptions {
	if o.Alpha <= 0 {
		o.Alpha = 0.05
	}
	if o.MinSegment < 1 {
		o.MinSegment = 2
	}
	if o.Permutations <= 0 {
		o.Permutations = 999
	}
	if o.Extremes <= 0 {
		o.Extremes = 20
	}
	return o
}

// Testable reports whether a permutation test of a segment of n points
// can reach alpha at all: its smallest p-value, when the two halves are as
// far apart as can be, is 2/C(n, n/2) (the order and its reverse, and
// every order within each half, split alike), MinP(n/2, n − n/2). Eight
// points can reach 0.05, seven cannot (2/35 = 0.057); Steps leaves a
// shorter segment alone, as chance alone would otherwise find its steps.
func Testable(n int, alpha float64) bool {
	return n >= 2 && MinP(n/2, n-n/2) <= alpha
}

// MinStepRuns is the fewest points a series needs to be Testable at
// alpha: 8 at 0.05.
func MinStepRuns(alpha float64) int {
	n := 2
	for !Testable(n, alpha) && n < 1000 {
		n++
	}
	return n
}

// Step is a change of level found in a series.
type Step struct {
	// Index is the first point of the new level.
	Index int
	// P is the permutation p-value of the split that found the step.
	P float64
	// Before and After are the medians of the segments on either side,
	// once the whole series is segmented.
	Before, After float64
}

// Steps finds the changes of level in values by binary segmentation: find
// the one split that best separates the series into a before and an after,
// keep it if a permutation test says such a separation is unlikely in a
// series with no change, and look again in each half.
//
// The best split is the least-squares one: the k that maximises
// k(n−k)/n · (mean before − mean after)², the reduction in squared error
// from fitting two levels instead of one. It is computed on the values
// winsorised at the median ± 5 robust standard deviations (1.4826·MAD), so
// that a stalled iteration or a noisy neighbour cannot pose as a level, while
// a real step keeps its size (a new level far away is clipped, but stays
// far). The p-value is that of the maximum over all splits, from seeded
// permutations of the segment: the null distribution is exact for any noise
// distribution, and the many splits tried are accounted for. Under no
// change, the first test fires with probability Alpha: a series of pure
// noise shows a step in about Alpha of cases, and no more.
//
// Compared with PELT or a penalised fit (asv), this needs no penalty tuned
// to the noise and states a p-value per step, which a report can quote.
// Ranks would be as robust, but cannot place a step within a few runs nor
// see a clear two-run step at the end of a quiet history. The cost is
// Permutations·n per split, a few milliseconds for hundreds of runs.
func Steps(values []float64, o StepOptions) []Step {
	o = o.withDefaults()
	return NewStepSearch(values, o).Steps(o.Alpha)
}

// StepSearch is Steps in two stages, for a family of series (StepFamily):
// NewStepSearch makes the first test, whether the series changed level at
// all, and Steps finds the steps at a level chosen once every series'
// first test is known. Steps(values, o) is NewStepSearch(values,
// o).Steps(o.Alpha).
type StepSearch struct {
	o         StepOptions
	values, w []float64
	// pcg is the state of the draws after the first test, which each
	// call of Steps continues from.
	pcg    rand.PCG
	k      int
	p      float64
	tested bool
}

// NewStepSearch makes the first test of values: the best split of the
// whole series and its p-value. A series too short to reach o.Alpha
// (Testable) is not tested.
func NewStepSearch(values []float64, o StepOptions) *StepSearch {
	o = o.withDefaults()
	s := &StepSearch{o: o, values: values, w: winsorize(values), k: -1, p: 1}
	pcg := rand.NewPCG(o.Seed, uint64(len(values)))
	if len(values) >= 2*o.MinSegment && Testable(len(values), o.Alpha) {
		s.k, s.p = bestSplit(s.w, o, rand.New(pcg))
		s.tested = true
	}
	s.pcg = *pcg
	return s
}

// First is the first test's p-value, the evidence for any step of the
// series; tested is false when the series was too short to be tested
// (p is then 1).
func (s *StepSearch) First() (p float64, tested bool) { return min(s.p, 1), s.tested }

// Steps returns the steps of the series at significance level: none
// unless the first test's p is at most level; then the first step and,
// each segment on either side searched again at level, the others.
func (s *StepSearch) Steps(level float64) []Step {
	if !s.tested || s.k < 0 || s.p > level {
		return nil
	}
	o := s.o
	o.Alpha = level
	pcg := s.pcg
	rng := rand.New(&pcg)
	found := []Step{{Index: s.k, P: s.p}}
	var split func(lo, hi int)
	split = func(lo, hi int) {
		if hi-lo < 2*o.MinSegment || !Testable(hi-lo, o.Alpha) {
			return
		}
		k, p := bestSplit(s.w[lo:hi], o, rng)
		if k < 0 || p > o.Alpha {
			return
		}
		found = append(found, Step{Index: lo + k, P: p})
		split(lo, lo+k)
		split(lo+k, hi)
	}
	split(0, s.k)
	split(s.k, len(s.values))
	slices.SortFunc(found, func(a, b Step) int { return a.Index - b.Index })
	for i := range found {
		lo, hi := 0, len(s.values)
		if i > 0 {
			lo = found[i-1].Index
		}
		if i+1 < len(found) {
			hi = found[i+1].Index
		}
		found[i].Before = Median(s.values[lo:found[i].Index])
		found[i].After = Median(s.values[found[i].Index:hi])
	}
	return found
}

// winsorize clips v to its median ± 5 robust standard deviations.
func winsorize(v []float64) []float64 {
	out := slices.Clone(v)
	if len(v) < 3 {
		return out
	}
	med := Median(v)
	dev := make([]float64, len(v))
	for i, x := range v {
		dev[i] = math.Abs(x - med)
	}
	sd := 1.4826 * Median(dev)
	if sd == 0 {
		return out
	}
	lo, hi := med-5*sd, med+5*sd
	for i, x := range out {
		out[i] = min(max(x, lo), hi)
	}
	return out
}

// bestSplit returns the least-squares split of v and its permutation
// p-value, or k = -1 if every value is the same.
func bestSplit(v []float64, o StepOptions, rng *rand.Rand) (k int, p float64) {
	k, stat := maxSplitStat(v, o.MinSegment)
	if k < 0 || stat <= 0 {
		return -1, 1
	}
	// p = (1 + shuffles at least as extreme) / (1 + shuffles): the
	// observed order counts as one of the orders, so p is never 0; or,
	// stopped at the Extremes-th extreme shuffle, Extremes / shuffles.
	perm := slices.Clone(v)
	extreme := 0
	for n := 1; n <= o.Permutations; n++ {
		rng.Shuffle(len(perm), func(i, j int) { perm[i], perm[j] = perm[j], perm[i] })
		if _, s := maxSplitStat(perm, o.MinSegment); s >= stat*(1-1e-9) {
			extreme++
			if extreme == o.Extremes {
				return k, float64(extreme) / float64(n)
			}
		}
	}
	return k, float64(1+extreme) / float64(1+o.Permutations)
}

// FamilyPermutations is how many shuffles the tests of a family of m
// series need: for a step in one of them to stand out of the family
// (Benjamini–Hochberg asks p ≤ alpha/m of it alone), p must resolve to
// half of alpha/m — 3199 for 80 series at 0.05, 19999 for 500 — and never
// coarser than the 999 of a series alone. Only a series with a clear
// step uses them all (Extremes).
func FamilyPermutations(m int, alpha float64) int {
	if alpha <= 0 || alpha >= 1 {
		alpha = 0.05
	}
	return max(999, int(math.Ceil(2*float64(m)/alpha))-1)
}

// StepFamily gives the level at which the steps of each of several series
// are to be sought, when the series are shown together (an overview, a
// page of histories) and so are one family: the first tests of the
// series that can be tested (StepSearch.First: ps[i], tested[i]) are controlled
// by Benjamini–Hochberg at alpha, so that among hundreds of series noise
// does not pass for steps; in the R of m series selected, the further
// steps are sought at alpha·R/m (Benjamini and Bogomolov's rule for
// testing within selected families), which still finds each selected
// series' first step. A series not selected gets level 0: no step.
func StepFamily(ps []float64, tested []bool, alpha float64) []float64 {
	var idx []int
	var family []float64
	for i := range ps {
		if tested[i] {
			idx = append(idx, i)
			family = append(family, ps[i])
		}
	}
	levels := make([]float64, len(ps))
	if len(family) == 0 {
		return levels
	}
	qs := BenjaminiHochberg(family)
	selected := 0
	for _, q := range qs {
		if q <= alpha {
			selected++
		}
	}
	for j, i := range idx {
		if qs[j] <= alpha {
			levels[i] = alpha * float64(selected) / float64(len(family))
		}
	}
	return levels
}

// maxSplitStat returns the split k (minSeg ≤ k ≤ n−minSeg) maximising
// k(n−k)/n · (mean of v[:k] − mean of v[k:])², and that maximum.
func maxSplitStat(v []float64, minSeg int) (best int, stat float64) {
	n := len(v)
	var total float64
	for _, x := range v {
		total += x
	}
	best, stat = -1, 0
	var left float64
	for k := 1; k < n; k++ {
		left += v[k-1]
		if k < minSeg || n-k < minSeg {
			continue
		}
		d := left/float64(k) - (total-left)/float64(n-k)
		s := float64(k) * float64(n-k) / float64(n) * d * d
		if s > stat*(1+1e-12) {
			best, stat = k, s
		}
	}
	return best, stat
}

// Band is the control band of one point: the mean ± 3 standard deviations
// of the points before it.
type Band struct {
	Mean float64 `json:"mean"`
	SD   float64 `json:"sd"`
	Lo   float64 `json:"lo"`
	Hi   float64 `json:"hi"`
	N    int     `json:"n"` // points the band was computed from
}

// MinBandPoints is the fewest earlier points a control band is computed
// from: with fewer, the standard deviation means little.
const MinBandPoints = 3

// ControlBands returns the control band of every point of values (nil where
// there are too few points before it) and whether the point lies outside
// it. A point's band is the mean ± 3σ of the up to window points before it
// within its segment that were themselves inside their band: as in a
// control chart, a point out of control does not widen the limits the next
// ones are judged by, so one stalled run does not hide the next.
//
// starts are the indexes where a new level begins (the steps): a band never
// spans one, so after a firmware change the new level builds a band of its
// own, as XDMoD's application kernels re-establish their control region,
// instead of every later point being flagged against the old level.
func ControlBands(values []float64, window int, starts []int) (bands []*Band, outside []bool) {
	bands = make([]*Band, len(values))
	outside = make([]bool, len(values))
	seg := 0
	var in []float64
	for i, v := range values {
		for _, s := range starts {
			if s <= i && s > seg {
				seg = s
			}
		}
		in = in[:0]
		for j := i - 1; j >= seg && len(in) < window; j-- {
			if !outside[j] {
				in = append(in, values[j])
			}
		}
		if len(in) < MinBandPoints {
			continue
		}
		mean, sd := meanSD(in)
		b := &Band{Mean: mean, SD: sd, Lo: mean - 3*sd, Hi: mean + 3*sd, N: len(in)}
		bands[i] = b
		outside[i] = v < b.Lo || v > b.Hi
	}
	return bands, outside
}
