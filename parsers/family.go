package parsers

import (
	"cmp"
	"slices"
	"strings"
	"sync"

	"github.com/sbench/sbench/results"
)

// The families of the benchmarks the parsers name (results.Benchmark's
// ToolBenchmark): the collective operation a benchmark times, or
// results.FamilyPointToPoint. Metrics of two benchmarks of one family
// (osu_allreduce and IMB-MPI1 Allreduce, osu_latency and NPtcp) are the
// same measurement made by two tools. Each name is declared here, never
// guessed from what it contains: a parser that names a new benchmark
// declares its family here (OSU's programs, in osuTitles).

// imbCollectives are IMB's collective benchmarks (IMB-MPI1's, IMB-NBC's
// non-blocking and _pure ones; "Multi-" runs of them too), by operation;
// every other benchmark of an IMB suite is point-to-point.
var imbCollectives = families(map[string]string{
	"allgather":      "Allgather Allgatherv Iallgather Iallgatherv Iallgather_pure Iallgatherv_pure",
	"allreduce":      "Allreduce Iallreduce Iallreduce_pure",
	"alltoall":       "Alltoall Alltoallv Ialltoall Ialltoallv Ialltoall_pure Ialltoallv_pure",
	"barrier":        "Barrier Ibarrier Ibarrier_pure",
	"bcast":          "Bcast Ibcast Ibcast_pure",
	"gather":         "Gather Gatherv Igather Igatherv Igather_pure Igatherv_pure",
	"reduce":         "Reduce Reduce_local Ireduce Ireduce_pure",
	"reduce_scatter": "Reduce_scatter Reduce_scatter_block Ireduce_scatter Ireduce_scatter_block Ireduce_scatter_pure Ireduce_scatter_block_pure",
	"scatter":        "Scatter Scatterv Iscatter Iscatterv Iscatter_pure Iscatterv_pure",
})

// pointToPoint are the other parsers' benchmarks: all point-to-point.
var pointToPoint = strings.Fields("NPtcp NPmpi NPib netpipe perf_main iperf3 sockperf " +
	"ib_send_bw ib_write_bw ib_read_bw ib_atomic_bw ib_send_lat ib_write_lat ib_read_lat ib_atomic_lat raw_ethernet_bw raw_ethernet_lat")

func families(ops map[string]string) map[string]string {
	t := map[string]string{}
	for op, names := range ops {
		for _, n := range strings.Fields(names) {
			t[n] = op
		}
	}
	return t
}

// osuFamilies are OSU's programs' families (osuTitles), by name.
var osuFamilies = sync.OnceValue(func() map[string]string {
	fams := map[string]string{}
	for _, row := range osuTitles {
		fams[row[1]] = cmp.Or(row[0], results.FamilyPointToPoint)
	}
	return fams
})

// BenchmarkFamily is the family of a benchmark a parser names: its
// collective operation ("allreduce"), or results.FamilyPointToPoint; false
// for a name no parser declares. perf_main and sockperf name a benchmark
// by the tool and the test ("perf_main RC BW", "sockperf latency").
func BenchmarkFamily(name string) (string, bool) {
	if fam, ok := osuFamilies()[name]; ok {
		return fam, true
	}
	if suite, bench, ok := strings.Cut(name, " "); ok && strings.HasPrefix(suite, "IMB-") {
		if op, ok := imbCollectives[strings.TrimPrefix(bench, "Multi-")]; ok {
			return op, true
		}
		return results.FamilyPointToPoint, true
	}
	if tool, _, _ := strings.Cut(name, " "); slices.Contains(pointToPoint, tool) {
		return results.FamilyPointToPoint, true
	}
	return "", false
}
