package results

import (
	"bytes"
	"strings"
	"testing"
)

// A bundle without a tool benchmark says nothing of it, as bundles did
// before the field existed: v1 readers and writers agree both ways.
func TestToolBenchmarkIsOptional(t *testing.T) {
	b := sampleBundle()
	data, err := Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), "tool_benchmark") {
		t.Errorf("a native run writes a tool benchmark:\n%s", data)
	}
	b.Benchmark = Benchmark{Name: "imb", Kind: "tool", Kernel: "exec", Tool: "IMB-MPI1", ToolBenchmark: "IMB-MPI1 PingPong"}
	data, _ = Marshal(b)
	got, err := Decode(bytes.NewReader(data))
	if err != nil || got.Benchmark.ToolBenchmark != "IMB-MPI1 PingPong" || !strings.Contains(string(data), `"tool_benchmark": "IMB-MPI1 PingPong"`) {
		t.Fatalf("%v, benchmark %+v:\n%s", err, got.Benchmark, data)
	}
}

// Normalized reads the bundles of every sbench as this one writes them:
// an old runner put the tool's benchmark in Tool, an ingested output has
// it as its Name.
func TestNormalized(t *testing.T) {
	for _, tt := range []struct {
		what     string
		in       Benchmark
		tool, tb string
	}{
		{"new wrapped run", Benchmark{Name: "imb", Kind: "tool", Kernel: "exec", Tool: "IMB-MPI1", ToolBenchmark: "IMB-MPI1 Allreduce"}, "IMB-MPI1", "IMB-MPI1 Allreduce"},
		{"old wrapped IMB", Benchmark{Name: "imb", Kind: "tool", Kernel: "exec", Tool: "IMB-MPI1 Allreduce"}, "IMB-MPI1", "IMB-MPI1 Allreduce"},
		{"old wrapped IMB-NBC", Benchmark{Name: "nbc", Kind: "tool", Kernel: "exec", Tool: "IMB-NBC Ibcast"}, "IMB-NBC", "IMB-NBC Ibcast"},
		{"old wrapped OSU", Benchmark{Name: "lat", Kind: "tool", Kernel: "exec", Tool: "osu_latency"}, "osu-micro-benchmarks", "osu_latency"},
		{"old wrapped OSU of an unknown title", Benchmark{Name: "x", Kind: "tool", Kernel: "exec", Tool: "OSU MPI Foo Test"}, "osu-micro-benchmarks", "OSU MPI Foo Test"},
		{"old wrapped HPCC's HPL", Benchmark{Name: "hpcc", Kind: "tool", Kernel: "exec", Tool: "hpcc-hpl"}, "hpcc", "hpcc-hpl"},
		{"old wrapped HPCC", Benchmark{Name: "hpcc", Kind: "tool", Kernel: "exec", Tool: "hpcc"}, "hpcc", "hpcc"},
		{"old wrapped HPL", Benchmark{Name: "hpl", Kind: "tool", Kernel: "exec", Tool: "hpl"}, "xhpl", "hpl"},
		{"old wrapped sockperf", Benchmark{Name: "sp", Kind: "tool", Kernel: "exec", Tool: "sockperf throughput"}, "sockperf", "sockperf throughput"},
		{"old wrapped NetPIPE", Benchmark{Name: "np", Kind: "tool", Kernel: "exec", Tool: "NPtcp"}, "NetPIPE", "NPtcp"},
		{"old wrapped perf_main", Benchmark{Name: "pm", Kind: "tool", Kernel: "exec", Tool: "perf_main RC BW"}, "perf_main", "perf_main RC BW"},
		{"old wrapped perftest", Benchmark{Name: "wb", Kind: "tool", Kernel: "exec", Tool: "ib_write_bw"}, "ib_write_bw", "ib_write_bw"},
		{"old wrapped iperf3", Benchmark{Name: "ip", Kind: "tool", Kernel: "exec", Tool: "iperf3"}, "iperf3", "iperf3"},
		{"failed wrapped run", Benchmark{Name: "imb", Kind: "tool", Kernel: "exec"}, "", ""},
		{"ingested output", Benchmark{Name: "IMB-MPI1 PingPong", Kind: "tool", Kernel: "imb", Tool: "IMB-MPI1"}, "IMB-MPI1", "IMB-MPI1 PingPong"},
		{"native kernel", Benchmark{Name: "latency", Kind: "native", Kernel: "latency"}, "", ""},
	} {
		got := tt.in.Normalized()
		if got.Tool != tt.tool || got.ToolBenchmark != tt.tb || got.Name != tt.in.Name || got.Kernel != tt.in.Kernel {
			t.Errorf("%s: %+v.Normalized() = %+v, want tool %q, tool benchmark %q", tt.what, tt.in, got, tt.tool, tt.tb)
		}
	}
}

// An output ingested before parsers named its tool benchmark and the same
// output ingested after are one run: the archive must skip the second.
// A tool benchmark that says more than the bundle without it does count.
func TestHashIgnoresARedundantToolBenchmark(t *testing.T) {
	old := sampleBundle()
	old.Benchmark = Benchmark{Name: "osu_latency", Kind: "tool", Kernel: "osu", Tool: "osu-micro-benchmarks", ToolVersion: "7.4"}
	now := sampleBundle()
	now.Benchmark = old.Benchmark
	now.Benchmark.ToolBenchmark = "osu_latency"
	ho, _ := Hash(old)
	hn, _ := Hash(now)
	if ho != hn {
		t.Error("an ingested output hashes differently once its tool benchmark is named")
	}
	if now.Benchmark.ToolBenchmark != "osu_latency" {
		t.Error("Hash changed its argument")
	}
	other := sampleBundle()
	other.Benchmark = now.Benchmark
	other.Benchmark.ToolBenchmark = "osu_bw"
	if h, _ := Hash(other); h == ho {
		t.Error("two tool benchmarks hash the same")
	}
	// A wrapped run's tool benchmark is never what its bundle would say
	// without it: the tool would be read from it.
	wrapped := sampleBundle()
	wrapped.Benchmark = Benchmark{Name: "osu_latency", Kind: "tool", Kernel: "exec", Tool: "osu-micro-benchmarks", ToolBenchmark: "osu_latency"}
	bare := sampleBundle()
	bare.Benchmark = wrapped.Benchmark
	bare.Benchmark.ToolBenchmark = ""
	hw, _ := Hash(wrapped)
	hb, _ := Hash(bare)
	if hw == hb {
		t.Error("a wrapped run hashes as if it had no tool benchmark")
	}
}
