package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sbench/sbench/parsers"
	"github.com/sbench/sbench/results"
)

// wrappedIMBArchive is an archive of what two jobs of a campaign whose
// benchmark "imb" wraps "IMB-MPI1 PingPong Allreduce" (IMB 4.1's real
// output, 2 ranks) wrote: the bundles the runner writes, ingested.
func wrappedIMBArchive(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	data, err := os.ReadFile(fixture(t, "imb-4.1-mpi1-juno-internode.txt"))
	if err != nil {
		t.Fatal(err)
	}
	parsed, err := parsers.Parse("imb.out", "imb", data)
	if err != nil {
		t.Fatal(err)
	}
	for j, job := range []string{"501", "502"} {
		for _, run := range parsed {
			if tb := run.Benchmark.ToolBenchmark; tb != "IMB-MPI1 PingPong" && tb != "IMB-MPI1 Allreduce" {
				continue
			}
			b := *run
			b.Campaign, b.Variant = "imb", "n2"
			b.Job = results.Job{ID: job, Step: "0", Nodes: []string{"n1", "n2"}, Tasks: 2}
			b.Start = time.Date(2026, 12, 3, 10+j, 0, 0, 0, time.UTC)
			b.End = b.Start.Add(time.Minute)
			b.RunnerVersion = "test"
			b.Benchmark = results.Benchmark{Name: "imb", Kind: "tool", Kernel: "exec", Command: []string{"IMB-MPI1", "PingPong", "Allreduce"},
				Launcher: "srun", Tool: run.Benchmark.Tool, ToolBenchmark: run.Benchmark.ToolBenchmark, ToolVersion: run.Benchmark.ToolVersion}
			for i := range b.Samples {
				b.Samples[i].Value *= 1 + 0.001*float64(j) // the second job a hair slower
			}
			name := filepath.Join(dir, job+"."+strings.Fields(run.Benchmark.ToolBenchmark)[1]+".json")
			if err := results.WriteFile(name, &b); err != nil {
				t.Fatal(err)
			}
		}
	}
	db := filepath.Join(dir, "a.db")
	mustSbench(t, 0, "ingest", "--db", db, dir)
	return db
}

// The commands name the benchmark the tool ran and keep the two apart:
// runs says which each run is, compare makes a table of each (one run
// against one), history asks which to follow and follows one by
// --config tool_benchmark=…, export has its column.
func TestWrappedToolBenchmarks(t *testing.T) {
	db := wrappedIMBArchive(t)
	out, _ := mustSbench(t, 0, "runs", "--db", db)
	if strings.Count(out, " imb (IMB-MPI1 PingPong) ") != 2 || strings.Count(out, " imb (IMB-MPI1 Allreduce) ") != 2 {
		t.Errorf("runs does not say which benchmark IMB ran:\n%s", out)
	}
	out, _ = mustSbench(t, 0, "runs", "--db", db, "--json")
	var runs []runJSON
	if err := json.Unmarshal([]byte(out), &runs); err != nil || len(runs) != 4 || runs[0].ToolBenchmark == "" {
		t.Errorf("runs --json: %v %+v", err, runs)
	}

	out, _ = mustSbench(t, 0, "compare", "--db", db, "job:501", "job:502")
	for _, w := range []string{"imb · latency (us, lower is better) · tool_benchmark=IMB-MPI1 PingPong",
		"imb · latency (us, lower is better) · tool_benchmark=IMB-MPI1 Allreduce"} {
		if !strings.Contains(out, w) {
			t.Errorf("compare lacks the table %q:\n%s", w, out)
		}
	}
	if strings.Contains(out, "n=2+2") || !strings.Contains(out, "n=1+1") {
		t.Errorf("compare pools PingPong and Allreduce:\n%s", out)
	}

	_, errs, code := sbench(t, "history", "--db", db, "--benchmark", "imb", "--metric", "latency", "--x", "4")
	if code != exitUsage || !strings.Contains(errs, "tool_benchmark=IMB-MPI1 Allreduce") || !strings.Contains(errs, "tool_benchmark=IMB-MPI1 PingPong") {
		t.Errorf("history of two tool benchmarks: exit %d, want 2 naming both\n%s", code, errs)
	}
	out, _ = mustSbench(t, 0, "history", "--db", db, "--benchmark", "imb", "--metric", "latency", "--x", "4", "--json",
		"--config", "tool_benchmark=IMB-MPI1 PingPong")
	var h struct{ Points []struct{ Value float64 } }
	if err := json.Unmarshal([]byte(out), &h); err != nil || len(h.Points) != 2 || h.Points[0].Value < 100 {
		t.Errorf("history of PingPong at 4 B: %v %+v, want IMB's 152.43 µs twice\n%s", err, h, out)
	}

	seen := map[string]int{}
	for _, row := range exportRows(t, db) {
		seen[row["tool_benchmark"]]++
	}
	if len(seen) != 2 || seen["IMB-MPI1 PingPong"] == 0 || seen["IMB-MPI1 Allreduce"] == 0 {
		t.Errorf("export rows by tool_benchmark %v", seen)
	}
}
