package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sbench/sbench/results"
)

// sweepArchive is a campaign of a sweep as sbench-runner records it: the
// bw kernel at two buffer sizes (param.buf, a run parameter and the
// variant's name) and the latency kernel at two ntasks_per_node (a Slurm
// key: only the variant's name says it), four runs each.
func sweepArchive(t *testing.T) string {
	t.Helper()
	path, db := newArchive(t, "sweep.db")
	t0 := time.Date(2024, 6, 1, 9, 0, 0, 0, time.UTC)
	i := 0
	for _, c := range []struct {
		benchmark, variant, metric, unit string
		params                           map[string]string
		value                            float64
	}{
		{"bw", "param.buf=16384", "bandwidth", "MB/s", map[string]string{"buf": "16384"}, 1000},
		{"bw", "param.buf=262144", "bandwidth", "MB/s", map[string]string{"buf": "262144"}, 800},
		{"latency", "ntasks_per_node=1", "latency", "us", nil, 20},
		{"latency", "ntasks_per_node=2", "latency", "us", nil, 0.5},
	} {
		for range 4 {
			i++
			b := results.New()
			b.Campaign, b.Variant, b.Params = "quick", c.variant, c.params
			b.Start = t0.Add(time.Duration(i) * time.Hour)
			b.End = b.Start.Add(time.Minute)
			b.Job = results.Job{ID: fmt.Sprint(100 + i), Step: "0", Nodes: []string{"n1", "n2"}, Tasks: 2}
			b.Benchmark = results.Benchmark{Name: c.benchmark, Kind: "native", Kernel: c.benchmark}
			for _, x := range []float64{8, 1 << 20} {
				b.Samples = append(b.Samples, results.Sample{Metric: c.metric, Unit: c.unit, X: results.F(x), XUnit: results.UnitBytes,
					Value: c.value * (1 + float64(i%4)/1000)})
			}
			mustIngest(t, db, fmt.Sprintf("run%d.json", i), b)
		}
	}
	db.Close()
	return path
}

// TestSweptValuesSelect: a swept value selects runs by its name wherever a
// label does — compare's selectors, --label of history, export, runs,
// report and site — and history needs no --variant when that leaves one
// configuration.
func TestSweptValuesSelect(t *testing.T) {
	db := sweepArchive(t)
	for _, sel := range [][2]string{{"buf=16384", "buf=262144"}, {"param.buf=16384", "param.buf=262144"}} {
		out, _ := mustSbench(t, 1, "compare", "--db", db, sel[0], sel[1])
		if !strings.Contains(out, "old: "+sel[0]+" (runs 1-4)") || !strings.Contains(out, "REGRESSION: 2 of 2 row(s)") {
			t.Errorf("compare %s %s:\n%s", sel[0], sel[1], out)
		}
	}
	out, _ := mustSbench(t, 0, "compare", "--db", db, "ntasks_per_node=1", "ntasks_per_node=2")
	if !strings.Contains(out, "old: ntasks_per_node=1 (runs 9-12)") || !strings.Contains(out, "2 better") {
		t.Errorf("compare ntasks_per_node=1 ntasks_per_node=2:\n%s", out)
	}
	_, stderr := mustSbench(t, 2, "compare", "--db", db, "buf=1638", "buf=262144")
	if !strings.Contains(stderr, "parameters in the archive: buf=16384, buf=262144 (did you mean buf=16384?)") {
		t.Errorf("compare buf=1638: %q", stderr)
	}

	for _, args := range [][]string{
		{"--benchmark", "bw", "--label", "buf=16384"},
		{"--benchmark", "bw", "--config", "buf=16384"},
		{"--benchmark", "latency", "--label", "ntasks_per_node=2"},
		{"--benchmark", "latency", "--config", "ntasks_per_node=2"},
	} {
		a := append([]string{"history", "--db", db, "--x", "1M"}, args...)
		out, _ := mustSbench(t, 0, a...)
		if !strings.Contains(out, "4 run(s)") {
			t.Errorf("sbench %s:\n%s", strings.Join(a, " "), out)
		}
	}

	out, _ = mustSbench(t, 0, "export", "--db", db, "--format", "csv", "--label", "buf=262144")
	if n := strings.Count(out, "\n"); n != 1+4*2 || strings.Contains(out, "16384") && !strings.Contains(out, "262144") {
		t.Errorf("export --label buf=262144: %d lines, want a header and 8 samples:\n%s", n, out)
	}
	out, _ = mustSbench(t, 0, "runs", "--db", db, "--label", "ntasks_per_node=2")
	if n := strings.Count(out, "ntasks_per_node=2"); n != 4 || strings.Contains(out, "ntasks_per_node=1") {
		t.Errorf("runs --label ntasks_per_node=2:\n%s", out)
	}
	dir := t.TempDir()
	out, _ = mustSbench(t, 0, "report", "--db", db, "--label", "buf=16384", "-o", filepath.Join(dir, "r.html"))
	if !strings.Contains(out, "(4 runs,") {
		t.Errorf("report --label buf=16384: %s", out)
	}
	out, _ = mustSbench(t, 0, "site", "--db", db, "--label", "ntasks_per_node=1", "-o", filepath.Join(dir, "site"))
	if !strings.HasPrefix(out, "site "+filepath.Join(dir, "site")+": 4 runs,") {
		t.Errorf("site --label ntasks_per_node=1: %s", out)
	}
}
