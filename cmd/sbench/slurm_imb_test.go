package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sbench/sbench/internal/testenv"
	"github.com/sbench/sbench/results"
	"github.com/sbench/sbench/store"
)

// buildIMBStandin compiles testdata/imb-standin — a STAND-IN for the Intel
// MPI Benchmarks' IMB-MPI1, which Debian does not package: PingPong and
// Allreduce over the machine's real Open MPI, printed in IMB-MPI1 2021's
// output format — into a fresh directory and puts it first in PATH. Runs
// of it say "Intel(R) MPI Benchmarks 2021.3" but are not IMB's numbers.
func buildIMBStandin(t *testing.T) string {
	t.Helper()
	mpicc := testenv.LookPath(t, "mpicc", "libopenmpi-dev")
	testenv.LookPath(t, "mpirun", "openmpi-bin")
	src, err := filepath.Abs("testdata/imb-standin/IMB-MPI1.c")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cmd := exec.Command(mpicc, "-O2", "-Wall", "-Werror", "-o", filepath.Join(dir, "IMB-MPI1"), src)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("mpicc IMB-MPI1: %v\n%s", err, out)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return dir
}

// imbTwoCampaign is one benchmark wrapping "IMB-MPI1 PingPong Allreduce"
// on 2 ranks (2 nodes × 1), started by srun --mpi=pmix as the OSU
// stand-in's campaign starts its programs.
const imbTwoCampaign = `[campaign]
name = "imb-two"
description = "IMB-MPI1 PingPong and Allreduce in one benchmark (the IMB stand-in of cmd/sbench/testdata)"

[slurm]
time = "00:03:00"

[[variant]]
name = "n2"
slurm = { nodes = 2, ntasks_per_node = 1 }

[[benchmark]]
name = "imb"
command = ["IMB-MPI1", "PingPong", "Allreduce"]
parser = "imb"
launcher = { type = "srun", mpi = "pmix" }
`

// TestSlurmIMBToolBenchmarks submits a campaign whose one benchmark wraps
// "IMB-MPI1 PingPong Allreduce" (the IMB stand-in, 2 ranks) twice to the
// test cluster. Each submission archives two runs of benchmark "imb", one
// per benchmark IMB ran, named by it; compare of the two submissions shows
// PingPong and Allreduce as two tables, each n=1+1 — never one table
// pooling PingPong's latency with Allreduce's (issue 25: "98.11 ± 100%
// (n=2+2)") — and, one run against one being no evidence, no regression.
func TestSlurmIMBToolBenchmarks(t *testing.T) {
	requireSlurm(t)
	buildIMBStandin(t)
	camp := filepath.Join(t.TempDir(), "imb-two.toml")
	if err := os.WriteFile(camp, []byte(imbTwoCampaign), 0o644); err != nil {
		t.Fatal(err)
	}
	_, db, _, _ := slurmRun(t, camp, "imb-two", 1, 2)
	if _, stderr, code := sbench(t, "submit", camp, "--db", db); code != 0 {
		t.Fatalf("second submit: exit %d: %s", code, stderr)
	}
	if status, stderr, code := slurmWait(t, slurmWaitLimit, db, "--campaign", "imb-two"); code != 0 || !strings.Contains(status, "2 run(s) added") {
		logSlurmState(t)
		t.Fatalf("second status --wait --ingest: exit %d, want 2 run(s) added\n%s\n%s", code, status, stderr)
	}

	runs := storedRuns(t, db, store.Filter{Campaign: "imb-two"})
	perToolBenchmark := map[string]int{}
	jobs := map[string]bool{}
	for _, r := range runs {
		perToolBenchmark[r.ToolBenchmark]++
		jobs[r.JobID] = true
		if r.Status != results.StatusOK || r.Benchmark != "imb" || r.Kernel != "exec" || r.Tool != "IMB-MPI1" || r.ToolVer != "2021.3" ||
			r.Params["processes"] != "2" || len(r.Nodes) != 2 {
			t.Errorf("run %d: %s (%s), benchmark %q kernel %q, tool %q %q, params %v, nodes %v", r.ID, r.Status, r.Error,
				r.Benchmark, r.Kernel, r.Tool, r.ToolVer, r.Params, r.Nodes)
		}
	}
	if want := map[string]int{"IMB-MPI1 PingPong": 2, "IMB-MPI1 Allreduce": 2}; len(runs) != 4 || len(jobs) != 2 ||
		fmt.Sprint(perToolBenchmark) != fmt.Sprint(want) {
		t.Fatalf("%d runs of %d jobs, by tool benchmark %v; want %v from 2 jobs", len(runs), len(jobs), perToolBenchmark, want)
	}

	// Two configurations: the export's rows say which benchmark IMB ran.
	configs := map[string]string{}
	for _, row := range exportRows(t, db) {
		configs[row["tool_benchmark"]] = row["config"]
	}
	for tb, c := range configs {
		if !strings.Contains(c, "tool_benchmark="+tb) {
			t.Errorf("export: tool_benchmark %q in configuration %q", tb, c)
		}
	}
	if len(configs) != 2 {
		t.Errorf("export: configurations by tool benchmark %q, want PingPong's and Allreduce's", configs)
	}

	checkIMBCompare(t, db)
}

// checkIMBCompare compares the campaign's two submissions: a table each
// for PingPong's and Allreduce's latency, every row one run against one.
func checkIMBCompare(t *testing.T, db string) {
	t.Helper()
	sides := []string{"campaign:imb-two@2", "campaign:imb-two@1"}
	out, errs, code := sbench(t, append([]string{"compare", "--db", db, "--json"}, sides...)...)
	if code != 0 && code != exitGate {
		t.Fatalf("compare --json: exit %d\n%s", code, errs)
	}
	var res struct {
		Tables []struct {
			Benchmark, Metric string
			Config            []string
			Rows              []struct {
				X        *float64
				Old, New *struct{ N int }
				Change   string
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("compare --json: %v\n%s", err, out)
	}
	latency := map[string]int{}
	for _, tb := range res.Tables {
		if tb.Benchmark != "imb" {
			t.Errorf("table of benchmark %q", tb.Benchmark)
		}
		if tb.Metric == "latency" {
			latency[strings.Join(tb.Config, " ")] = len(tb.Rows)
		}
		for _, row := range tb.Rows {
			if row.Old == nil || row.New == nil || row.Old.N != 1 || row.New.N != 1 {
				t.Errorf("%s %s: row %+v, want n=1+1", tb.Metric, tb.Config, row)
				break
			}
		}
	}
	// PingPong at 0 and 1 B to 4 MiB (24 sizes), Allreduce at 0 and 4 B to
	// 4 MiB (22).
	if want := map[string]int{"tool_benchmark=IMB-MPI1 PingPong": 24, "tool_benchmark=IMB-MPI1 Allreduce": 22}; fmt.Sprint(latency) != fmt.Sprint(want) {
		t.Errorf("latency tables (configuration: rows) %v, want %v", latency, want)
	}

	text, _, code := sbench(t, append([]string{"compare", "--db", db}, sides...)...)
	var headings []string
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, "imb · ") {
			headings = append(headings, l)
		}
	}
	for _, w := range []string{"imb · latency (us, lower is better) · tool_benchmark=IMB-MPI1 PingPong",
		"imb · latency (us, lower is better) · tool_benchmark=IMB-MPI1 Allreduce"} {
		if !slices.Contains(headings, w) {
			t.Errorf("compare: no table %q; tables:\n%s", w, strings.Join(headings, "\n"))
		}
	}
	if strings.Contains(text, "n=2+2") {
		t.Errorf("compare pools runs of one submission:\n%s", text)
	}
	// One run against one is no evidence of a change: no regression.
	if code != 0 || strings.Contains(text, "REGRESSION") {
		t.Errorf("compare of two single runs per benchmark: exit %d, want 0 and no regression\n%s", code, text)
	}
}
