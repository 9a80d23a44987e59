package store

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sbench/sbench/parsers"
	"github.com/sbench/sbench/results"
)

// imbRuns are the runs of IMB-MPI1 4.1's real output of 17 benchmarks on
// 2 processes, as its parser reads it, PingPong and Allreduce only.
func imbRuns(t testing.TB) []*results.Bundle {
	t.Helper()
	data, err := os.ReadFile("../parsers/testdata/imb-4.1-mpi1-juno-internode.txt")
	if err != nil {
		t.Fatal(err)
	}
	runs, err := parsers.Parse("imb.txt", "auto", data)
	if err != nil {
		t.Fatal(err)
	}
	var out []*results.Bundle
	for _, b := range runs {
		if b.Benchmark.ToolBenchmark == "IMB-MPI1 PingPong" || b.Benchmark.ToolBenchmark == "IMB-MPI1 Allreduce" {
			out = append(out, b)
		}
	}
	if len(out) != 2 {
		t.Fatalf("%d runs of PingPong and Allreduce, want 2", len(out))
	}
	return out
}

// wrapped is run as the runner writes it when a campaign's benchmark
// "imb" wraps the tool, in job: with this runner's Tool and ToolBenchmark,
// or (old) an earlier runner's, which put the tool's benchmark in Tool.
func wrapped(run *results.Bundle, job string, old bool) *results.Bundle {
	b := *run
	b.Campaign, b.Variant = "imb-camp", "n2"
	b.Job = results.Job{ID: job, Step: "0", Nodes: []string{"n1", "n2"}, Tasks: 2}
	b.Start = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC).Add(time.Hour * time.Duration(len(job)))
	b.RunnerVersion = "v0.9.0"
	b.Source, b.Labels = "", nil
	// The output's head: a bundle small enough to be stored as JSON text,
	// which undoV6 reads.
	b.Raw = b.Raw[:512]
	b.Benchmark = results.Benchmark{Name: "imb", Kind: "tool", Kernel: "exec", Command: []string{"IMB-MPI1", "PingPong", "Allreduce"},
		Launcher: "srun", Tool: run.Benchmark.Tool, ToolBenchmark: run.Benchmark.ToolBenchmark, ToolVersion: run.Benchmark.ToolVersion}
	if old {
		b.Benchmark.Tool, b.Benchmark.ToolBenchmark = run.Benchmark.ToolBenchmark, ""
	}
	return &b
}

// ingestedBefore is run as an sbench before ToolBenchmark read it from a
// file: the same, without the field.
func ingestedBefore(run *results.Bundle) *results.Bundle {
	b := *run
	b.Benchmark.ToolBenchmark = ""
	return &b
}

type toolKey struct{ tool, toolBenchmark, config string }

func toolKeys(runs []Run) []toolKey {
	var out []toolKey
	for i := range runs {
		out = append(out, toolKey{runs[i].Tool, runs[i].ToolBenchmark, ConfigOf(&runs[i]).String()})
	}
	return out
}

// A campaign benchmark wrapping "IMB-MPI1 PingPong Allreduce" gives two
// configurations, named by the benchmark the tool ran, whether the runner
// wrote the bundles now or before ToolBenchmark existed. An output
// ingested from a file is named after its tool benchmark already, and
// its configuration does not say it twice.
func TestToolBenchmarkIsAConfiguration(t *testing.T) {
	ctx := context.Background()
	db := openTemp(t)
	imb := imbRuns(t)
	ingest(t, db, "1.json", wrapped(imb[0], "1", false), wrapped(imb[1], "1", false))
	ingest(t, db, "2.json", wrapped(imb[0], "22", true), wrapped(imb[1], "22", true))
	ingest(t, db, "imb.txt", imb...)
	runs, err := db.Runs(ctx, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(runs, func(a, b Run) int { return int(a.ID - b.ID) })
	const imbParams = "datatype=MPI_BYTE,reduction_datatype=MPI_FLOAT,reduction_op=MPI_SUM,processes=2"
	pp := toolKey{"IMB-MPI1", "IMB-MPI1 PingPong", "campaign=imb-camp,variant=n2,tool_benchmark=IMB-MPI1 PingPong," + imbParams}
	ar := toolKey{"IMB-MPI1", "IMB-MPI1 Allreduce", "campaign=imb-camp,variant=n2,tool_benchmark=IMB-MPI1 Allreduce," + imbParams}
	want := []toolKey{pp, ar, pp, ar, {"IMB-MPI1", "IMB-MPI1 PingPong", imbParams}, {"IMB-MPI1", "IMB-MPI1 Allreduce", imbParams}}
	if got := toolKeys(runs); !slices.Equal(got, want) {
		t.Errorf("runs as tool, tool benchmark, configuration:\n got %q\nwant %q", got, want)
	}
	keys := map[string]bool{}
	for i := range runs[:4] {
		keys[ConfigOf(&runs[i]).Key()] = true
	}
	if len(keys) != 2 {
		t.Errorf("the wrapped runs make %d configurations, want 2 (PingPong and Allreduce)", len(keys))
	}
	if v, ok := ConfigOf(&runs[1]).Lookup("tool_benchmark"); !ok || v != "IMB-MPI1 Allreduce" {
		t.Errorf(`Lookup("tool_benchmark") = %q, %v`, v, ok)
	}
	b, err := db.Bundle(ctx, runs[2].ID)
	if err != nil || b.Benchmark.Tool != "IMB-MPI1 PingPong" || b.Benchmark.ToolBenchmark != "" {
		t.Errorf("the old bundle is not kept as it was ingested: %+v, %v", b.Benchmark, err)
	}
}

// The same output ingested before parsers named its tool benchmark and
// again after is one run: the second ingest skips it.
func TestReingestAfterToolBenchmarks(t *testing.T) {
	db := openTemp(t)
	imb := imbRuns(t)
	first := ingest(t, db, "imb.txt", ingestedBefore(imb[0]), ingestedBefore(imb[1]))
	again := ingest(t, db, "imb.txt", imb...)
	if len(again.Added) != 0 || !slices.Equal(again.Skipped, first.Added) {
		t.Errorf("second ingest %+v, first %+v: want every run skipped", again, first)
	}
}

// Every export tells the two benchmarks of one wrapped command apart: CSV
// and JSON by the tool_benchmark column and the configuration, benchfmt
// (which benchstat groups by) by a tool_benchmark line.
func TestExportKeepsToolBenchmarksApart(t *testing.T) {
	ctx := context.Background()
	db := openTemp(t)
	imb := imbRuns(t)
	ingest(t, db, "1.json", wrapped(imb[0], "1", false), wrapped(imb[1], "1", false))

	var csvOut bytes.Buffer
	if err := db.ExportCSV(ctx, &csvOut, Filter{}); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&csvOut).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	seen := map[string]string{}
	for _, r := range rows[1:] {
		if r[col["benchmark"]] != "imb" {
			t.Fatalf("row %q: benchmark %q", r, r[col["benchmark"]])
		}
		seen[r[col["tool_benchmark"]]] = r[col["config"]]
	}
	want := map[string]string{
		"IMB-MPI1 PingPong":  "variant=n2,tool_benchmark=IMB-MPI1 PingPong,datatype=MPI_BYTE,reduction_datatype=MPI_FLOAT,reduction_op=MPI_SUM,processes=2",
		"IMB-MPI1 Allreduce": "variant=n2,tool_benchmark=IMB-MPI1 Allreduce,datatype=MPI_BYTE,reduction_datatype=MPI_FLOAT,reduction_op=MPI_SUM,processes=2",
	}
	if !maps.Equal(seen, want) {
		t.Errorf("CSV tool benchmarks and configurations %q, want %q", seen, want)
	}

	var jsonOut bytes.Buffer
	if err := db.ExportJSON(ctx, &jsonOut, Filter{}); err != nil {
		t.Fatal(err)
	}
	var objs []map[string]any
	if err := json.Unmarshal(jsonOut.Bytes(), &objs); err != nil {
		t.Fatal(err)
	}
	n := map[any]int{}
	for _, o := range objs {
		n[o["tool_benchmark"]]++
	}
	if len(n) != 2 || n["IMB-MPI1 PingPong"] == 0 || n["IMB-MPI1 Allreduce"] == 0 {
		t.Errorf("JSON rows by tool_benchmark %v", n)
	}

	var bf bytes.Buffer
	if err := db.ExportBenchfmt(ctx, &bf, Filter{}); err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"tool_benchmark: IMB-MPI1 PingPong\n", "tool_benchmark: IMB-MPI1 Allreduce\n"} {
		if !strings.Contains(bf.String(), line) {
			t.Errorf("benchfmt lacks %q:\n%s", line, firstLines(bf.String(), 12))
		}
	}
}

func firstLines(s string, n int) string {
	lines := strings.SplitAfter(s, "\n")
	return strings.Join(lines[:min(n, len(lines))], "")
}
