package compare

import (
	"slices"
	"strings"

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
const PointToPoint = "point-to-point"

// Kinds of metrics a family groups, as MetricKind names them.
const (
	KindBandwidth = "bandwidth"
	KindLatency   = "latency"
)

// MetricKind says whether a metric is a bandwidth or a latency, from its
// name as OSU, IMB, NetPIPE and the runner's kernels all name them
// ("bandwidth", "bidirectional_bandwidth", "latency", "t_avg_latency"); ""
// for any other.
func MetricKind(metric string) string {
	m := strings.ToLower(metric)
	switch {
	case strings.Contains(m, "bandwidth"):
		return KindBandwidth
	case strings.Contains(m, "latency"):
		return KindLatency
	}
	return ""
}

// collectiveNames are what collective benchmarks are called, by OSU, IMB
// and the runner's kernels; "allreduce" before "reduce", as the first that
// a name contains is its operation.
var collectiveNames = []string{"allreduce", "alltoall", "allgather", "bcast", "barrier", "reduce_scatter", "reduce", "gather", "scatter", "collective"}

// CollectiveOp is the collective operation a benchmark's name says it
// times ("allreduce" of osu_allreduce or "IMB-MPI1 Allreduce"), "" for a
// point-to-point one. Collectives' latency depends on the operation and
// the process count; their family is the operation.
func CollectiveOp(name string) string {
	n := strings.ToLower(name)
	for _, c := range collectiveNames {
		if strings.Contains(n, c) {
			return c
		}
	}
	return ""
}

// MetricFamily is the family of a metric of run r, for a sample with an
// x in xunit: the collective operation r times, or PointToPoint, for a
// latency or bandwidth against message size; "" for any other metric,
// which has no family beyond its benchmark. The benchmark the tool ran
// says it first, whatever a campaign calls the benchmark wrapping it.
func MetricFamily(r *store.Run, metric, xunit string) string {
	if MetricKind(metric) == "" || !sizeAxis(xunit) {
		return ""
	}
	if r.ToolBenchmark != "" {
		if op := CollectiveOp(r.ToolBenchmark); op != "" {
			return op
		}
		return PointToPoint
	}
	for _, s := range []string{r.Benchmark, r.Kernel, r.Tool} {
		if op := CollectiveOp(s); op != "" {
			return op
		}
	}
	return PointToPoint
}

func sizeAxis(xunit string) bool {
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
	case r.Kind == "native" || r.Tool == "" && r.Kind != "tool" && r.Kernel != "":
		parts = append(parts, "sbench-runner")
		if r.RunnerVersion != "" {
			parts = append(parts, r.RunnerVersion)
		}
		if r.Kernel != "" {
			parts = append(parts, r.Kernel)
		}
	case r.Tool != "":
		parts = append(parts, r.Tool)
		if r.ToolVer != "" {
			parts = append(parts, r.ToolVer)
		}
	}
	label := strings.Join(parts, " ")
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
