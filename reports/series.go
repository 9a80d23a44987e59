package reports

import (
	"fmt"
	"image/color"
	"sort"
	"strings"

	"github.com/sbench/sbench/results"
	"github.com/sbench/sbench/store"
)

// Series is one line of a figure: one configuration's values of one metric
// by message size, repeats and runs of the configuration combined.
type Series struct {
	// Config names the configuration, as the legend does.
	Config string
	Color  color.RGBA
	// Points are sorted by size. They include points a log axis cannot
	// show (size 0, as osu_latency starts with), which the summary uses.
	Points []Point
	// Runs are the ids of the runs the points come from, sorted.
	Runs []int64
}

// Point is one position of a series.
type Point struct {
	X float64 // message size, bytes
	Y float64 // median of the combined samples, in the figure's unit
	N int     // number of samples combined
}

// Kinds of figures by message size.
const (
	KindBandwidth = "bandwidth"
	KindLatency   = "latency"
)

// metricKind says which figure a metric belongs in, from its name, as
// OSU, IMB and NetPIPE all name them.
func metricKind(metric string) string {
	m := strings.ToLower(metric)
	switch {
	case strings.Contains(m, "bandwidth"):
		return KindBandwidth
	case strings.Contains(m, "latency"):
		return KindLatency
	}
	return ""
}

// unitFactor converts a sample's unit to the figure's: MB/s (10^6 bytes/s,
// as OSU prints it) for bandwidth, microseconds for latency.
func unitFactor(kind, unit string) (float64, bool) {
	u := strings.ToLower(strings.TrimSpace(unit))
	switch kind {
	case KindBandwidth:
		switch u {
		case "mb/s", "mbytes/s", "mbyte/s":
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

// isSizeAxis reports whether a sample's x is a message size.
func isSizeAxis(xunit string) bool {
	switch strings.ToLower(xunit) {
	case "", "bytes", "byte", "b":
		return true
	}
	return false
}

// family names the benchmark a run belongs to: runs of one family are
// comparable point by point, runs of two are not (osu_latency and
// osu_allreduce both measure "latency" against size).
func family(run *store.Run) string {
	for _, s := range []string{run.Benchmark, run.Kernel, run.Tool} {
		if s != "" {
			return s
		}
	}
	return "unnamed benchmark"
}

// sizeGroup collects one figure's samples before they become series.
type sizeGroup struct {
	family, metric, kind string
	byConfig             map[string]map[float64][]float64
	runs                 map[string]map[int64]bool
}

// collectSizeSamples sorts the bandwidth and latency samples of good runs
// into groups, one per (family, metric), and notes everything it leaves out.
func (r *Report) collectSizeSamples() []*sizeGroup {
	groups := map[[2]string]*sizeGroup{}
	unknownRun := map[int64]int{}
	notShown := map[string]int{} // family/metric (reason) -> samples
	badRuns := map[int64]bool{}
	for _, s := range r.data.Samples {
		run := r.byID[s.RunID]
		if run == nil {
			unknownRun[s.RunID]++
			continue
		}
		if run.Status == results.StatusFailed || run.Status == results.StatusInvalid {
			// A failed or invalid run's numbers must never become a curve or
			// a peak figure; the failed-runs section lists them instead.
			badRuns[run.ID] = true
			continue
		}
		fam := family(run)
		kind := metricKind(s.Metric)
		switch {
		case kind == "":
			notShown[fmt.Sprintf("%s: %s (no figure for this metric yet)", fam, s.Metric)]++
			continue
		case s.X == nil || !isSizeAxis(s.XUnit):
			notShown[fmt.Sprintf("%s: %s against %s (only message size is plotted yet)", fam, s.Metric, orDash(s.XUnit))]++
			continue
		}
		factor, ok := unitFactor(kind, s.Unit)
		if !ok {
			notShown[fmt.Sprintf("%s: %s in unknown unit %q", fam, s.Metric, s.Unit)]++
			continue
		}
		k := [2]string{fam, s.Metric}
		g := groups[k]
		if g == nil {
			g = &sizeGroup{family: fam, metric: s.Metric, kind: kind,
				byConfig: map[string]map[float64][]float64{}, runs: map[string]map[int64]bool{}}
			groups[k] = g
		}
		cfg := r.configs.ofRun[run.ID]
		if g.byConfig[cfg] == nil {
			g.byConfig[cfg] = map[float64][]float64{}
			g.runs[cfg] = map[int64]bool{}
		}
		g.byConfig[cfg][*s.X] = append(g.byConfig[cfg][*s.X], s.Value*factor)
		g.runs[cfg][run.ID] = true
	}
	for _, id := range sortedKeys(unknownRun) {
		r.notef("%d samples belong to run %d, which is not in the report's runs", unknownRun[id], id)
	}
	if n := len(r.data.Scalars); n > 0 {
		r.notef("%d scalars (such as HPL's N, NB and Gflops) are not shown yet", n)
	}
	if len(badRuns) > 0 {
		r.notef("samples of %d failed or invalid runs are not plotted", len(badRuns))
	}
	for _, what := range sortedKeys(notShown) {
		r.notef("not plotted: %s, %d samples", what, notShown[what])
	}
	out := make([]*sizeGroup, 0, len(groups))
	for _, g := range groups {
		out = append(out, g)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.family != b.family {
			return a.family < b.family
		}
		if a.kind != b.kind {
			return a.kind == KindBandwidth // bandwidth first, as the articles do
		}
		return a.metric < b.metric
	})
	return out
}

// series turns a group into one series per configuration, in the report's
// configuration order.
func (r *Report) series(g *sizeGroup) []Series {
	names := make([]string, 0, len(g.byConfig))
	for name := range g.byConfig {
		names = append(names, name)
	}
	sort.Slice(names, func(i, j int) bool { return r.configs.index[names[i]] < r.configs.index[names[j]] })
	out := make([]Series, 0, len(names))
	for _, name := range names {
		byX := g.byConfig[name]
		xs := make([]float64, 0, len(byX))
		for x := range byX {
			xs = append(xs, x)
		}
		sort.Float64s(xs)
		s := Series{Config: name, Color: r.configs.style(name).Color}
		for _, x := range xs {
			vs := byX[x]
			s.Points = append(s.Points, Point{X: x, Y: median(vs), N: len(vs)})
		}
		for id := range g.runs[name] {
			s.Runs = append(s.Runs, id)
		}
		sort.Slice(s.Runs, func(i, j int) bool { return s.Runs[i] < s.Runs[j] })
		out = append(out, s)
	}
	return out
}

// median is robust to the one slow repetition a busy node produces, which a
// mean would smear over the whole curve.
func median(vs []float64) float64 {
	s := append([]float64(nil), vs...)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func sortedKeys[K int64 | string, V any](m map[K]V) []K {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	return keys
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}
