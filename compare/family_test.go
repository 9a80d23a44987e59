package compare

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sbench/sbench/results"
	"github.com/sbench/sbench/store"
)

// toolsVsNative is the experiment of issue 13: OpenMPI's osu_latency and
// osu_bw against sbench-runner's latency and bw kernels, intra- and
// inter-node, 4 runs each (enough to test a row); the native runs
// labelled impl=native, the OSU runs impl=openmpi-tcp.
func toolsVsNative() (native, osu Side) {
	native, osu = Side{Name: "impl=native"}, Side{Name: "impl=openmpi-tcp"}
	var id int64
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	add := func(s *Side, r store.Run, placement string, lat float64) {
		for rep := range 4 {
			id++
			r := r
			r.ID, r.Variant, r.Status, r.Start, r.Tasks = id, placement, results.StatusOK, t0.Add(time.Duration(id)*time.Minute), 2
			s.Runs = append(s.Runs, r)
			for _, size := range []float64{1, 1024, 1 << 20} {
				jitter := 1 + 0.01*float64(rep)
				metric, unit, v := "latency", "us", (lat+size/10000)*jitter
				if strings.Contains(r.Benchmark, "bw") {
					metric, unit, v = "bandwidth", "MB/s", size/(lat+size/10000)*jitter
				}
				smp := results.Sample{Metric: metric, Unit: unit, X: results.F(size), XUnit: results.UnitBytes, Value: v}
				if r.Kind == "native" {
					smp.Pair = []int{0, 1} // the kernels say which ranks; OSU does not
				}
				s.Samples = append(s.Samples, store.Sample{RunID: id, Sample: smp})
			}
		}
	}
	kernel := func(name string) store.Run {
		return store.Run{Benchmark: name, Kind: "native", Kernel: name, RunnerVersion: "0.9.0",
			Labels: map[string]string{"impl": "native"}, Params: map[string]string{"sizes": "1-1048576"}}
	}
	tool := func(name string) store.Run {
		return store.Run{Benchmark: name, Kind: "tool", Kernel: "osu", Tool: "osu-micro-benchmarks", ToolVer: "7.4",
			Labels: map[string]string{"impl": "openmpi-tcp"}}
	}
	for _, p := range []struct {
		name     string
		nat, mpi float64
	}{{"intra", 0.3, 0.4}, {"inter", 20, 25}} {
		add(&native, kernel("latency"), p.name, p.nat)
		add(&native, kernel("bw"), p.name, p.nat)
		add(&osu, tool("osu_latency"), p.name, p.mpi)
		add(&osu, tool("osu_bw"), p.name, p.mpi)
	}
	return native, osu
}

func TestBuildFamilies(t *testing.T) {
	native, osu := toolsVsNative()
	// By benchmark, the sides have nothing in common: say how to compare them.
	_, err := Build(native, osu, DefaultOptions())
	if !errors.Is(err, ErrNoData) || !strings.Contains(err.Error(), "impl=native ran bw, latency, impl=openmpi-tcp ran osu_bw, osu_latency") ||
		!strings.Contains(err.Error(), "match rows by metric family") {
		t.Errorf("by benchmark: %v", err)
	}
	o := DefaultOptions()
	o.Families = true
	res, err := Build(native, osu, o)
	if err != nil {
		t.Fatal(err)
	}
	var headings []string
	for _, tb := range res.Tables {
		headings = append(headings, tb.Heading())
		if len(tb.Rows) != 3 {
			t.Errorf("%s: %d rows, want the 3 sizes", tb.Heading(), len(tb.Rows))
		}
		for _, r := range tb.Rows {
			if r.Old == nil || r.New == nil || r.Old.N != 4 || r.New.N != 4 || !r.Tested {
				t.Errorf("%s: row %+v: want 4 runs on each side, tested", tb.Heading(), r)
			}
		}
	}
	want := []string{
		"point-to-point · bandwidth (MB/s, higher is better) · variant=inter · sbench-runner 0.9.0 bw vs osu-micro-benchmarks 7.4 (osu_bw)",
		"point-to-point · bandwidth (MB/s, higher is better) · variant=intra · sbench-runner 0.9.0 bw vs osu-micro-benchmarks 7.4 (osu_bw)",
		"point-to-point · latency (us, lower is better) · variant=inter · sbench-runner 0.9.0 latency vs osu-micro-benchmarks 7.4 (osu_latency)",
		"point-to-point · latency (us, lower is better) · variant=intra · sbench-runner 0.9.0 latency vs osu-micro-benchmarks 7.4 (osu_latency)",
	}
	if strings.Join(headings, "\n") != strings.Join(want, "\n") {
		t.Errorf("tables:\n%s\nwant:\n%s", strings.Join(headings, "\n"), strings.Join(want, "\n"))
	}
	// OSU's latency is higher than the kernel's by design of the fixture.
	if res.Regressions() == 0 || len(res.Warnings) != 0 {
		t.Errorf("regressions %d, warnings %q: want OSU's higher latency found, and no warning", res.Regressions(), res.Warnings)
	}
	// A side that pools two tools in one table is warned about: here the
	// new side has the kernel's intra-node latency runs again (as runs of
	// their own) besides OSU's, and nothing in their configuration tells
	// them apart.
	bare := func(runs []store.Run, shift int64) []store.Run {
		out := make([]store.Run, len(runs))
		for i, r := range runs {
			r.ID += shift
			r.Labels, r.Params = nil, nil
			out[i] = r
		}
		return out
	}
	shifted := func(ss []store.Sample, shift int64) []store.Sample {
		out := append([]store.Sample(nil), ss...)
		for i := range out {
			out[i].RunID += shift
		}
		return out
	}
	old := Side{Name: "x", Runs: bare(native.Runs[:4], 0), Samples: native.Samples[:12]}
	pooled := Side{Name: "all", Runs: append(bare(native.Runs[:4], 100), bare(osu.Runs[:4], 0)...),
		Samples: append(shifted(native.Samples[:12], 100), osu.Samples[:12]...)}
	res, err = Build(old, pooled, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Warnings) == 0 || !strings.Contains(res.Warnings[0], "all pools the values of 2 tools (osu-micro-benchmarks 7.4 (osu_latency); sbench-runner 0.9.0 latency)") {
		t.Errorf("warnings %q: want one about the new side pooling two tools", res.Warnings)
	}
}

func TestToolLabelAndFamily(t *testing.T) {
	for _, c := range []struct {
		run         store.Run
		label, fam  string
		metric, xun string
	}{
		{store.Run{Benchmark: "latency", Kind: "native", Kernel: "latency", RunnerVersion: "0.9.0"}, "sbench-runner 0.9.0 latency", PointToPoint, "latency", "bytes"},
		{store.Run{Benchmark: "lat-tcp", Kind: "native", Kernel: "latency"}, "sbench-runner latency (lat-tcp)", PointToPoint, "latency", "bytes"},
		{store.Run{Benchmark: "osu-lat", Kind: "tool", Tool: "osu_latency", ToolVer: "7.4"}, "osu_latency 7.4 (osu-lat)", PointToPoint, "latency", "bytes"},
		{store.Run{Benchmark: "osu_allreduce", Kind: "tool", Tool: "osu-micro-benchmarks", ToolVer: "7.4"}, "osu-micro-benchmarks 7.4 (osu_allreduce)", "allreduce", "latency", "bytes"},
		{store.Run{Benchmark: "IMB-MPI1 Allreduce", Kind: "tool", Tool: "IMB-MPI1", ToolVer: "2021.7"}, "IMB-MPI1 2021.7 (IMB-MPI1 Allreduce)", "allreduce", "t_avg_latency", "bytes"},
		{store.Run{Benchmark: "hpl", Kind: "native", Kernel: "hpl"}, "sbench-runner hpl", "", "gflops", ""},
		{store.Run{Benchmark: "iperf", Kind: "tool", Tool: "iperf3"}, "iperf3", "", "bandwidth", "s"},
	} {
		if got := ToolLabel(&c.run); got != c.label {
			t.Errorf("ToolLabel(%+v) = %q, want %q", c.run, got, c.label)
		}
		if got := MetricFamily(&c.run, c.metric, c.xun); got != c.fam {
			t.Errorf("MetricFamily(%s, %s, %s) = %q, want %q", c.run.Benchmark, c.metric, c.xun, got, c.fam)
		}
	}
}

// A family is declared by name (parsers.BenchmarkFamily, kernels'
// Family), not read from what a name contains: nccl-tests' names, which no
// parser reads, have none, where a substring rule read all_reduce_perf as
// a reduce, all_gather_perf as a gather and broadcast_perf as
// point-to-point; and a metric is a latency or a bandwidth when the table
// says so (results.MetricOf), not when its name holds the word.
func TestFamilyIsDeclared(t *testing.T) {
	for _, c := range []struct {
		run    store.Run
		metric string
		fam    string
	}{
		{store.Run{Benchmark: "ar", Kind: "tool", Kernel: "exec", Tool: "nccl-tests", ToolBenchmark: "all_reduce_perf"}, "latency", ""},
		{store.Run{Benchmark: "ag", Kind: "tool", Kernel: "exec", Tool: "nccl-tests", ToolBenchmark: "all_gather_perf"}, "latency", ""},
		{store.Run{Benchmark: "bc", Kind: "tool", Kernel: "exec", Tool: "nccl-tests", ToolBenchmark: "broadcast_perf"}, "latency", ""},
		{store.Run{Benchmark: "allreduce", Kind: "native", Kernel: "allreduce"}, "latency", "allreduce"},
		{store.Run{Benchmark: "b", Kind: "native", Kernel: "bcast"}, "latency", "bcast"},
		{store.Run{Benchmark: "pairs", Kind: "native", Kernel: "pairs"}, "aggregate_bandwidth", PointToPoint},
		{store.Run{Benchmark: "osu_bw", Kind: "tool", Tool: "osu-micro-benchmarks", ToolBenchmark: "osu_bw"}, "bandwidth_latency_ratio", ""},
	} {
		if got := MetricFamily(&c.run, c.metric, "bytes"); got != c.fam {
			t.Errorf("MetricFamily(%s, %s) = %q, want %q", c.run.ToolBenchmark+c.run.Kernel, c.metric, got, c.fam)
		}
	}
	for metric, kind := range map[string]string{"latency": KindLatency, "aggregate_bandwidth": KindBandwidth,
		"matrix_latency": KindLatency, "message_rate": "", "latency_tolerance": "", "rtt": ""} {
		if got := MetricKind(metric); got != kind {
			t.Errorf("MetricKind(%s) = %q, want %q", metric, got, kind)
		}
	}
}
