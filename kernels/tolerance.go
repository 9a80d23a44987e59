package kernels

import (
	"fmt"
	"math"
	"slices"
)

// Tolerance is when a node pair's link is suspect, as NVIDIA ClusterKit
// (HPC-X) judges its pairwise tests: a latency above LatencyFactor times
// the lowest latency of the pairs measured together, or a bandwidth below
// BandwidthFraction of the highest. The matrix kernel re-tests the pairs
// it flags by this rule, and sbench screen flags archived pairs by it, so
// both say the same of the same numbers.
type Tolerance struct {
	// LatencyFactor: a latency above this many times the minimum is
	// suspect. ClusterKit's default is 2.1.
	LatencyFactor float64
	// BandwidthFraction: a bandwidth below this share of the maximum is
	// suspect. ClusterKit's default is 0.93.
	BandwidthFraction float64
}

// ClusterKit's default tolerances.
const (
	DefaultLatencyFactor     = 2.1
	DefaultBandwidthFraction = 0.93
)

// DefaultTolerance is ClusterKit's: 2.1× the minimum latency, 93% of the
// maximum bandwidth.
func DefaultTolerance() Tolerance {
	return Tolerance{LatencyFactor: DefaultLatencyFactor, BandwidthFraction: DefaultBandwidthFraction}
}

// Check says what is wrong with t, if anything.
func (t Tolerance) Check() error {
	if !(t.LatencyFactor > 1) || math.IsInf(t.LatencyFactor, 0) {
		return fmt.Errorf("latency tolerance %v: want a factor above 1 (ClusterKit's is %v)", t.LatencyFactor, DefaultLatencyFactor)
	}
	if !(t.BandwidthFraction > 0 && t.BandwidthFraction < 1) {
		return fmt.Errorf("bandwidth tolerance %v: want a fraction between 0 and 1 (ClusterKit's is %v)", t.BandwidthFraction, DefaultBandwidthFraction)
	}
	return nil
}

// LinkMeasure is one directed link's measurement: its latency (any time
// unit, the same for all) and bandwidth (any rate unit, the same for all).
// A value that is NaN or not positive was not measured and is never
// suspect, nor a reference.
type LinkMeasure struct {
	Latency, Bandwidth float64
}

// Verdict is the tolerance rule applied to one set of links measured
// together.
type Verdict struct {
	// MinLatency and MaxBandwidth are the references (NaN when no link
	// had the value).
	MinLatency, MaxBandwidth float64
	// LatencyLimit and BandwidthLimit are the bounds a link must keep:
	// latency ≤ LatencyLimit, bandwidth ≥ BandwidthLimit.
	LatencyLimit, BandwidthLimit float64
	// SlowLatency and LowBandwidth are the indices of the links outside
	// tolerance, in input order.
	SlowLatency, LowBandwidth []int
}

// Suspect reports whether link i is outside tolerance in either value.
func (v Verdict) Suspect(i int) bool {
	return slices.Contains(v.SlowLatency, i) || slices.Contains(v.LowBandwidth, i)
}

// Suspects are the links outside tolerance in either value, in input order.
func (v Verdict) Suspects() []int {
	out := append(slices.Clone(v.SlowLatency), v.LowBandwidth...)
	slices.Sort(out)
	return slices.Compact(out)
}

// Judge applies t to links measured together, against their own minimum
// latency and maximum bandwidth.
func (t Tolerance) Judge(links []LinkMeasure) Verdict {
	v := Verdict{MinLatency: math.NaN(), MaxBandwidth: math.NaN()}
	for _, l := range links {
		if measured(l.Latency) && !(l.Latency >= v.MinLatency) {
			v.MinLatency = l.Latency
		}
		if measured(l.Bandwidth) && !(l.Bandwidth <= v.MaxBandwidth) {
			v.MaxBandwidth = l.Bandwidth
		}
	}
	return t.JudgeAgainst(links, v.MinLatency, v.MaxBandwidth)
}

// JudgeAgainst applies t to links against given references — a re-test's
// links against the first pass's minimum and maximum, so that a re-test
// of only bad links does not make the worst of them the new standard.
func (t Tolerance) JudgeAgainst(links []LinkMeasure, minLatency, maxBandwidth float64) Verdict {
	v := Verdict{MinLatency: minLatency, MaxBandwidth: maxBandwidth,
		LatencyLimit: minLatency * t.LatencyFactor, BandwidthLimit: maxBandwidth * t.BandwidthFraction}
	for i, l := range links {
		if measured(l.Latency) && l.Latency > v.LatencyLimit {
			v.SlowLatency = append(v.SlowLatency, i)
		}
		if measured(l.Bandwidth) && l.Bandwidth < v.BandwidthLimit {
			v.LowBandwidth = append(v.LowBandwidth, i)
		}
	}
	return v
}

func measured(x float64) bool { return x > 0 && !math.IsInf(x, 0) }
