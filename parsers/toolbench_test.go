package parsers_test

import (
	"path/filepath"
	"reflect"
	"testing"

	"github.com/sbench/sbench/parsers"
	"github.com/sbench/sbench/results"
)

// Every run of every real output names its tool and the benchmark the tool
// ran, and a runner that wrapped the same output before ToolBenchmark
// existed (the parser's name in Tool) is read back as the same tool and
// tool benchmark (results.Benchmark.Normalized): an archive's old runs and
// its new ones of one output are one configuration.
func TestToolBenchmarkOfEveryRun(t *testing.T) {
	runs := 0
	for _, f := range realOutputs(t) {
		bundles, _ := parsers.Parse(f, "auto", parsers.MustRead(t, f)) // refused inputs are other tests' business
		for i, b := range bundles {
			runs++
			bm := b.Benchmark
			if bm.Tool == "" || bm.ToolBenchmark == "" || bm.ToolBenchmark != bm.Name {
				t.Errorf("%s run %d: tool %q, tool benchmark %q, name %q: want a tool, and the tool benchmark as the name", filepath.Base(f), i+1, bm.Tool, bm.ToolBenchmark, bm.Name)
			}
			old := results.Benchmark{Name: "campaign-bench", Kind: "tool", Kernel: "exec", Tool: bm.Name}.Normalized()
			if old.Tool != bm.Tool || old.ToolBenchmark != bm.ToolBenchmark {
				t.Errorf("%s run %d: an old runner's bundle of it reads as tool %q, tool benchmark %q; the parser says %q, %q", filepath.Base(f), i+1, old.Tool, old.ToolBenchmark, bm.Tool, bm.ToolBenchmark)
			}
			if again := bm.Normalized(); again.Tool != bm.Tool || again.ToolBenchmark != bm.ToolBenchmark {
				t.Errorf("%s run %d: Normalized changes a new bundle: %+v", filepath.Base(f), i+1, again)
			}
		}
	}
	if runs < 100 {
		t.Errorf("checked %d runs, want the fixtures' hundreds", runs)
	}
}

// Outputs holding several benchmarks give each run its own tool
// benchmark: IMB's "# Benchmarking X" tables, an OSU suite's log, a job
// log's marked sections, HPCC's HPL and summary, NetPIPE's modules and
// perftest's programs one after another.
func TestToolBenchmarksOfOneOutput(t *testing.T) {
	for file, want := range map[string][]string{
		"testdata/imb-4.1-mpi1-juno-internode.txt": {"IMB-MPI1 PingPong", "IMB-MPI1 PingPing", "IMB-MPI1 Sendrecv", "IMB-MPI1 Exchange",
			"IMB-MPI1 Allreduce", "IMB-MPI1 Reduce", "IMB-MPI1 Reduce_scatter", "IMB-MPI1 Allgather", "IMB-MPI1 Allgatherv",
			"IMB-MPI1 Gather", "IMB-MPI1 Gatherv", "IMB-MPI1 Scatter", "IMB-MPI1 Scatterv", "IMB-MPI1 Alltoall",
			"IMB-MPI1 Alltoallv", "IMB-MPI1 Bcast", "IMB-MPI1 Barrier"},
		"testdata/imb-2019u6-multi-barrier-pkb.txt":                 {"IMB-MPI1 Multi-Barrier", "IMB-MPI1 Barrier"},
		"testdata/osu-3.3-qib-mlx4-ompi-users.txt":                  {"osu_latency", "osu_bw", "osu_bibw", "osu_latency", "osu_bw", "osu_bibw"},
		"testdata/004-erdma-vs-tcp-job11.out":                       {"osu_latency", "osu_latency", "osu_bw", "osu_bw"},
		"testdata/np-article000-three-runs.txt":                     {"NPmpi", "NPtcp", "NPib"},
		"testdata/perftest-server-send-lat-client-read-bw-tabs.txt": {"ib_send_lat", "ib_read_bw"},
		"../hpl/testdata/hpccoutf-srun-pmix-N1n2.txt":               {"hpcc-hpl", "hpcc"},
	} {
		runs, err := parsers.Parse(file, "auto", parsers.MustRead(t, file))
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		var got []string
		for _, b := range runs {
			got = append(got, b.Benchmark.ToolBenchmark)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: tool benchmarks %q, want %q", file, got, want)
		}
	}
}

// A job log's sections keep each run's tool benchmark beside the section
// that names the transport.
func TestSectionsKeepTheToolBenchmark(t *testing.T) {
	runs, err := parsers.Parse("job11.out", "auto", parsers.MustRead(t, "testdata/004-erdma-vs-tcp-job11.out"))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, b := range runs {
		got[b.Labels["section"]] = b.Benchmark.ToolBenchmark
	}
	want := map[string]string{"use erdma for osu_lat": "osu_latency", "use tcp for osu_lat": "osu_latency",
		"use erdma for osu_bw": "osu_bw", "use tcp for osu_bw": "osu_bw"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("tool benchmark by section %q, want %q", got, want)
	}
}
