package compare

import (
	"slices"
	"strings"

	"github.com/sbench/sbench/kernels"
	"github.com/sbench/sbench/parsers"
	"github.com/sbench/sbench/results"
	"github.com/sbench/sbench/store"
)

// Metric families: the same measurement made by different benchmarks.
//
// OSU's osu_latency and sbench-runner's latency kernel both time a
// ping-pong between two ranks and report "latency" in µs against the
// message size; osu_bw and the bw kernel both report "bandwidth" in MB/s.
// Compared by benchmark, they never meet. Compared by family, the
// benchmark is what differs — the tool and its version — and rows match on
// metric, unit and size.

// PointToPoint is the family of the latency and bandwidth of
// point-to-point benchmarks (ping-pong, streaming, bidirectional).
const PointToPoint = results.FamilyPointToPoint

// Kinds of metrics a family groups, as MetricKind names them.
const (
	KindBandwidth = string(results.KindBandwidth)
	KindLatency   = string(results.KindLatency)
)

// MetricKind says whether a metric is a bandwidth or a latency, as the
// metric table declares it (results.KindOf); "" for any other, and for a
// metric the table does not declare.
func MetricKind(metric string) string { return string(results.KindOf(metric)) }

// BenchmarkFamily is the family the benchmark of run r is declared in:
// its native kernel's (kernels.Kernel.Family), or that of the benchmark
// its tool ran (parsers.BenchmarkFamily) — the tool's benchmark says it
// first, whatever a campaign calls the benchmark wrapping it; "" when
// none of its names is declared.
func BenchmarkFamily(r *store.Run) string {
	if native(r) {
		k, _ := kernels.Lookup(r.Kernel)
		return k.Family
	}
	names := []string{r.ToolBenchmark}
	if r.ToolBenchmark == "" {
		// Bundles before ToolBenchmark: the tool's benchmark is the run's
		// name or its Tool.
		names = []string{r.Benchmark, r.Tool}
	}
	for _, n := range names {
		if fam, ok := parsers.BenchmarkFamily(n); ok {
			return fam
		}
	}
	return ""
}

// Collective reports whether run r times a collective operation, whose
// latency depends on the process count.
func Collective(r *store.Run) bool {
	fam := BenchmarkFamily(r)
	return fam != "" && fam != PointToPoint
}

// MetricFamily is the family of a metric of run r, for a sample with an
// x in xunit: its benchmark's (BenchmarkFamily), for a latency or
// bandwidth against message size; "" for any other metric, which has no
// family beyond its benchmark.
func MetricFamily(r *store.Run, metric, xunit string) string {
	if MetricKind(metric) == "" || !SizeAxis(xunit) {
		return ""
	}
	return BenchmarkFamily(r)
}

// native reports whether r ran a native kernel (runs before Kind was
// written say it by a kernel without a tool).
func native(r *store.Run) bool {
	return r.Kind == "native" || r.Tool == "" && r.Kind != "tool" && r.Kernel != ""
}

// SizeAxis reports whether a sample's x, in xunit, is a message size.
func SizeAxis(xunit string) bool {
	switch strings.ToLower(xunit) {
	case "", "bytes", "byte", "b":
		return true
	}
	return false
}

// ToolLabel names what measured a run, for legends and headings of a
// family: the tool and its version ("osu-micro-benchmarks 7.4"), or for a
// native kernel "sbench-runner VERSION KERNEL"; followed by the benchmark
// the tool ran and the run's benchmark, in parentheses, when the label
// does not name them already ("osu-micro-benchmarks 7.4 (osu_latency)",
// "IMB-MPI1 2021.3 (IMB-MPI1 PingPong, imb)"), so that two programs of
// one suite, and two benchmarks of one command, stay apart.
func ToolLabel(r *store.Run) string {
	var parts []string
	switch {
	case native(r):
		parts = []string{"sbench-runner", r.RunnerVersion, r.Kernel}
	case r.Tool != "":
		parts = []string{r.Tool, r.ToolVer}
	}
	label := strings.Join(slices.DeleteFunc(parts, func(p string) bool { return p == "" }), " ")
	if label == "" {
		return r.Benchmark
	}
	var names []string
	for _, n := range []string{r.ToolBenchmark, r.Benchmark} {
		if n != "" && !strings.Contains(label, n) && !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	if len(names) > 0 {
		label += " (" + strings.Join(names, ", ") + ")"
	}
	return label
}
