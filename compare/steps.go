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
	// Permutations is the number of shuffles behind each p-value (default
	// 999, so p is resolved to 0.001).
	Permutations int
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
	return o
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
// to the noise and states a p-value per step, which a report can quote. A
// rank statistic was tried first: it is as robust, but cannot tell where a
// step is within a few runs (the last runs before it being the lowest of
// their level looks the same to ranks) and cannot see a clear two-run step
// at the end of a quiet history. The cost is Permutations·n per split, a
// few milliseconds for a history of hundreds of runs.
func Steps(values []float64, o StepOptions) []Step {
	o = o.withDefaults()
	rng := rand.New(rand.NewPCG(o.Seed, uint64(len(values))))
	w := winsorize(values)
	var found []Step
	var split func(lo, hi int)
	split = func(lo, hi int) {
		if hi-lo < 2*o.MinSegment {
			return
		}
		k, p := bestSplit(w[lo:hi], o, rng)
		if k < 0 || p > o.Alpha {
			return
		}
		found = append(found, Step{Index: lo + k, P: p})
		split(lo, lo+k)
		split(lo+k, hi)
	}
	split(0, len(values))
	slices.SortFunc(found, func(a, b Step) int { return a.Index - b.Index })
	for i := range found {
		lo, hi := 0, len(values)
		if i > 0 {
			lo = found[i-1].Index
		}
		if i+1 < len(found) {
			hi = found[i+1].Index
		}
		found[i].Before = Median(values[lo:found[i].Index])
		found[i].After = Median(values[found[i].Index:hi])
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
	// observed order counts as one of the orders, so p is never 0.
	perm := slices.Clone(v)
	extreme := 0
	for range o.Permutations {
		rng.Shuffle(len(perm), func(i, j int) { perm[i], perm[j] = perm[j], perm[i] })
		if _, s := maxSplitStat(perm, o.MinSegment); s >= stat*(1-1e-9) {
			extreme++
		}
	}
	return k, float64(1+extreme) / float64(1+o.Permutations)
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
