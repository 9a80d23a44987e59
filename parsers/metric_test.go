package parsers_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	_ "github.com/sbench/sbench/hpl" // HPL's and HPCC's formats
	"github.com/sbench/sbench/parsers"
	"github.com/sbench/sbench/results"
)

// Every metric a parser writes from the real outputs of testdata (the
// parsers', HPL's and the articles') has a row of the metric table, in the
// unit the row gives its direction by; every benchmark whose samples go in
// the bandwidth or latency figure has a family.
func TestEveryParsedMetricHasARow(t *testing.T) {
	var files []string
	for _, dir := range []string{"testdata", "../hpl/testdata", "../examples/articles/testdata"} {
		fs, err := filepath.Glob(filepath.Join(dir, "*"))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, fs...)
	}
	seen := map[string]bool{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue // a directory
		}
		bundles, err := parsers.Parse(f, "auto", data)
		if err != nil {
			continue // the fixtures of errors
		}
		for _, b := range bundles {
			for _, s := range b.Samples {
				seen[s.Metric] = true
				m, ok := results.MetricOf(s.Metric)
				if !ok {
					t.Errorf("%s: %s writes metric %q, which the metric table (results/metric.go) lacks", f, b.Benchmark.ToolBenchmark, s.Metric)
					continue
				}
				if got := results.BetterFor(s.Unit); got != m.Better() {
					t.Errorf("%s: %s in %q improves %v, its row's unit %q %v", f, s.Metric, s.Unit, got, m.Unit, m.Better())
				}
				if m.Kind == "" || s.X == nil || s.XUnit != results.UnitBytes {
					continue
				}
				if _, ok := parsers.BenchmarkFamily(b.Benchmark.ToolBenchmark); !ok {
					t.Errorf("%s: benchmark %q has no family (parsers/family.go)", f, b.Benchmark.ToolBenchmark)
				}
			}
		}
	}
	// The fixtures cover the metrics of every format.
	for _, m := range []string{"latency", "bandwidth", "bidirectional_bandwidth", "bandwidth_imb", "bandwidth_mbps",
		"bandwidth_avg", "message_rate", "rtt", "interval_bandwidth", "overlap"} {
		if !seen[m] {
			t.Errorf("no fixture writes %s", m)
		}
	}
}

// Families are declared by name: a collective's is its operation, whatever
// else its name holds.
func TestBenchmarkFamily(t *testing.T) {
	for name, want := range map[string]string{
		"osu_latency":             results.FamilyPointToPoint,
		"osu_bibw":                results.FamilyPointToPoint,
		"osu_allreduce":           "allreduce",
		"osu_iallgatherv":         "allgather",
		"osu_reduce_scatter":      "reduce_scatter",
		"osu_scatterv":            "scatter",
		"IMB-MPI1 PingPong":       results.FamilyPointToPoint,
		"IMB-MPI1 Allreduce":      "allreduce",
		"IMB-MPI1 Multi-Bcast":    "bcast",
		"IMB-NBC Ireduce_scatter": "reduce_scatter",
		"IMB-RMA All_put_all":     results.FamilyPointToPoint,
		"NPtcp":                   results.FamilyPointToPoint,
		"ib_write_bw":             results.FamilyPointToPoint,
		"perf_main RC BW":         results.FamilyPointToPoint,
		"sockperf latency":        results.FamilyPointToPoint,
		// nccl-tests' names: no parser reads them, so no family; a
		// substring rule read all_reduce_perf as "reduce", all_gather_perf
		// as "gather" and broadcast_perf as point-to-point.
		"all_reduce_perf": "",
		"all_gather_perf": "",
		"broadcast_perf":  "",
	} {
		got, ok := parsers.BenchmarkFamily(name)
		if got != want || ok != (want != "") {
			t.Errorf("BenchmarkFamily(%q) = %q, %v; want %q", name, got, ok, want)
		}
		if ok && got != results.FamilyPointToPoint && !slices.Contains(results.Collectives, got) {
			t.Errorf("BenchmarkFamily(%q) = %q: not in results.Collectives", name, got)
		}
	}
}
