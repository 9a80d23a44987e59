package reports

import (
	"fmt"
	"image/color"
	"slices"
	"strconv"
	"strings"

	"github.com/sbench/sbench/compare"
	"github.com/sbench/sbench/results"
	"github.com/sbench/sbench/store"
)

// Series is one line of a figure: one configuration's values of one metric
// by message size (or rank count), repeats and runs of the configuration
// combined.
type Series struct {
	// Config names the configuration, as the legend does.
	Config string
	// Ranks is the process count of the runs, when known and when it is
	// what tells this series from another of the same configuration.
	Ranks int
	Color color.RGBA
	// Points are sorted by x. They include points a log axis cannot show
	// (size 0, as osu_latency starts with), which the summary uses.
	Points []Point
	// Runs are the ids of the runs the points come from, sorted.
	Runs []int64
	// LinkRate is the theoretical rate of the runs' link in Gb/s, 0 when
	// unknown or when none applies.
	LinkRate float64
	// Local says why no link rate applies: the runs' traffic stayed on
	// one machine (judge.LocalLoopback, judge.LocalOneMachine); "" otherwise.
	Local string
}

// Label is the series' legend entry.
func (s Series) Label() string {
	if s.Ranks > 0 {
		return s.Config + ", " + strconv.Itoa(s.Ranks) + " ranks"
	}
	return s.Config
}

// Point is one position of a series.
type Point struct {
	X float64 // message size in bytes, or rank count
	Y float64 // median of the combined samples, in the figure's unit
	// Min and Max are the smallest and largest of the combined samples:
	// the band drawn around the median when repeats disagree.
	Min, Max float64
	N        int // number of samples combined
	// Runs are the runs the samples come from, sorted: what a reader of
	// the HTML report is pointed to from the point.
	Runs []int64
	// RunValues are each run's own value at X, in Runs' order: the median
	// of its samples there (one, but for repeats within a run). RunP50 are
	// the same of the samples' own medians (a latency kernel's p50 over
	// its iterations), nil unless every sample at X has one. The verdict
	// compares configurations by them.
	RunValues, RunP50 []float64
}

// Kinds of figures.
const (
	KindBandwidth   = "bandwidth"
	KindLatency     = "latency"
	KindLatencyZoom = "latency-zoom" // latency at small sizes, linear axis
	KindMatrix      = "matrix"       // node-pair heatmap
	KindScaling     = "scaling"      // a key figure against rank count
)

// unitFactor converts a sample's unit to the figure's: MB/s (10^6 bytes/s,
// as OSU prints it) for bandwidth, microseconds for latency.
func unitFactor(kind, unit string) (float64, bool) {
	u := strings.ToLower(strings.TrimSpace(unit))
	switch kind {
	case KindBandwidth:
		switch u {
		case "mb/s", "mbytes/s", "mbyte/s", "mbytes/sec":
			return 1, true
		case "gb/s", "gbytes/s":
			return 1e3, true
		case "kb/s":
			return 1e-3, true
		case "b/s", "bytes/s":
			return 1e-6, true
		case "mib/s":
			return 1 << 20 / 1e6, true
		case "gib/s":
			return 1 << 30 / 1e6, true
		case "gbps", "gbit/s", "gbits/s", "gb/sec":
			return 125, true
		case "mbps", "mbit/s", "mbits/s":
			return 0.125, true
		}
	case KindLatency:
		switch u {
		case "us", "usec", "µs", "μs", "microseconds":
			return 1, true
		case "ns", "nsec":
			return 1e-3, true
		case "ms", "msec":
			return 1e3, true
		case "s", "sec", "seconds":
			return 1e6, true
		}
	}
	return 0, false
}

func figureUnit(kind string) string {
	if kind == KindBandwidth {
		return results.UnitMBps
	}
	return results.UnitMicroseconds
}

// isRanksAxis reports whether a sample's x is a process count.
func isRanksAxis(xunit string) bool {
	switch strings.ToLower(xunit) {
	case "ranks", "processes", "procs", "np", "tasks":
		return true
	}
	return false
}

// family names the benchmark a run belongs to: runs of one family are
// comparable point by point, runs of two are not (osu_latency and
// osu_allreduce both measure "latency" against size). NetPIPE's modules
// (NPtcp, NPmpi, NPib) all time the same ping-pong, so they are one family.
// A campaign's benchmark wrapping a tool that ran several benchmarks is a
// family per benchmark the tool ran: "imb (IMB-MPI1 PingPong)" and "imb
// (IMB-MPI1 Allreduce)", the latter a collective.
func family(run *store.Run) string {
	if strings.EqualFold(run.Kernel, "netpipe") {
		return "netpipe"
	}
	for _, s := range []string{run.Benchmark, run.Kernel, run.Tool} {
		if s == "" {
			continue
		}
		if tb := run.ToolBenchmark; tb != "" && tb != s {
			return s + " (" + tb + ")"
		}
		return s
	}
	return "unnamed benchmark"
}

// isCollective reports whether a metric family (compare.MetricFamily) is a
// collective operation's, whose latency depends on the process count; a
// benchmark's family (family) is collective when its runs are
// (compare.Collective).
func isCollective(fam string) bool { return slices.Contains(results.Collectives, fam) }

// maxIDList is the longest list of run ids a sentence of the report
// prints; a figure pooling a year of runs names their range instead.
const maxIDList = 160

// runIDs writes run ids as store.FormatRunIDs does ("1-4,13"), or, when
// that is longer than a sentence can carry, their count and range.
func runIDs(ids []int64) string {
	s := store.FormatRunIDs(ids)
	if len(s) <= maxIDList {
		return s
	}
	lo, hi := slices.Min(ids), slices.Max(ids)
	return fmt.Sprintf("%d of the runs %d to %d; sbench runs lists them", len(slices.Compact(slices.Sorted(slices.Values(ids)))), lo, hi)
}

// median is robust to the one slow repetition a busy node produces, which a
// mean would smear over the whole curve.
func median(vs []float64) float64 {
	if len(vs) == 0 {
		return 0
	}
	return compare.Median(vs)
}

// point combines the samples at one x.
func point(x float64, vs []float64) Point {
	return Point{X: x, Y: median(vs), Min: slices.Min(vs), Max: slices.Max(vs), N: len(vs)}
}

// addToSet adds v to the set m holds at k, made on first use.
func addToSet[K, V comparable](m map[K]map[V]bool, k K, v V) {
	if m[k] == nil {
		m[k] = map[V]bool{}
	}
	m[k][v] = true
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}
