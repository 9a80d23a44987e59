package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sbench/sbench/results"
	"github.com/sbench/sbench/store"
)

// runs shows a requeued job's attempts apart (8.3 and 8.3 r1), gives the
// attempt in --json, and --job selects one attempt (8.3r1), one step of
// every attempt (8.3) or every step of one attempt (8r1).
func TestRunsShowAndSelectAttempts(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "a.db")
	for i, c := range []struct {
		step    string
		restart int
		status  results.Status
	}{{"3", 0, results.StatusFailed}, {"3", 1, results.StatusOK}, {"4", 1, results.StatusOK}} {
		b := results.New()
		b.Campaign, b.Variant, b.Status = "c", "default", c.status
		if c.status == results.StatusFailed {
			b.Error = "no result: the launcher exited 1; Slurm ended attempt 0: NODE_FAIL"
		}
		b.Job = results.Job{ID: "8", Step: c.step, Restart: c.restart, Nodes: []string{"n1"}, Tasks: 1}
		b.Benchmark = results.Benchmark{Name: "lat", Kind: "native", Kernel: "latency"}
		b.Start = time.Date(2026, 12, 4, 8, i, 0, 0, time.UTC)
		if c.status == results.StatusOK {
			b.Samples = []results.Sample{{Metric: "latency", Unit: "us", X: results.F(1), XUnit: "bytes", Value: 1.5}}
		}
		if err := results.WriteFile(filepath.Join(dir, fmt.Sprintf("b%d.json", i)), b); err != nil {
			t.Fatal(err)
		}
		mustSbench(t, 0, "ingest", "--db", db, filepath.Join(dir, fmt.Sprintf("b%d.json", i)))
	}
	table, _ := mustSbench(t, 0, "runs", "--db", db)
	for _, w := range []string{" 8.3 ", " 8.3 r1 ", " 8.4 r1 "} {
		if !strings.Contains(table, w) {
			t.Errorf("runs does not show %q:\n%s", w, table)
		}
	}
	selected := func(job string) string {
		out, _ := mustSbench(t, 0, "runs", "--db", db, "--json", "--job", job)
		var runs []runJSON
		if err := json.Unmarshal([]byte(out), &runs); err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, r := range runs {
			names = append(names, store.LaunchName(r.Job, "", r.Step, r.Restart))
		}
		return strings.Join(names, ",")
	}
	for job, want := range map[string]string{"8.3r1": "8.3 r1", "8.3": "8.3,8.3 r1", "8r1": "8.3 r1,8.4 r1", "8.3r0": "8.3", "8": "8.3,8.3 r1,8.4 r1"} {
		if got := selected(job); got != want {
			t.Errorf("--job %s selects %q, want %q", job, got, want)
		}
	}
	if _, errs := mustSbench(t, 2, "runs", "--db", db, "--job", "8.3.1"); !strings.Contains(errs, "step") {
		t.Errorf("--job 8.3.1: %s", errs)
	}
	// Several, comma-separated, as every --job takes them.
	if out, errs := mustSbench(t, 0, "runs", "--db", db, "--json", "--job", "8.3r1,8.4r1"); strings.Count(out, `"restart": 1`) != 2 {
		t.Errorf("--job 8.3r1,8.4r1:\n%s%s", out, errs)
	}
}
