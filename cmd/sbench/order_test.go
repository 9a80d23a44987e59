package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/sbench/sbench/jobs"
	"github.com/sbench/sbench/results"
)

// TestRunIDsFollowStepOrder: the bundles of a job's twelve steps are
// archived in step order, so that run ids 1-6 are its first six steps
// (a plain sort put step 10 before step 2), whether the job's folder is
// ingested or the job itself.
func TestRunIDsFollowStepOrder(t *testing.T) {
	dir := t.TempDir()
	for step := range 12 {
		b := results.New()
		b.Campaign, b.Variant = "order", "default"
		b.Job = results.Job{ID: "77", Step: fmt.Sprint(step), Nodes: []string{"n1"}, Tasks: 1}
		b.Benchmark = results.Benchmark{Name: "latency", Kind: "native", Kernel: "latency"}
		b.Samples = []results.Sample{{Metric: "latency", Unit: "us", X: results.F(8), XUnit: "bytes", Value: float64(step)}}
		if err := results.WriteFile(filepath.Join(dir, fmt.Sprintf("77.%d.latency.json", step)), b); err != nil {
			t.Fatal(err)
		}
	}
	files, err := jobs.Bundles(dir, "77")
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range files {
		if want := fmt.Sprintf("77.%d.latency.json", i); filepath.Base(f) != want {
			t.Errorf("jobs.Bundles[%d] = %s, want %s", i, filepath.Base(f), want)
		}
	}
	db := filepath.Join(t.TempDir(), "a.db")
	mustSbench(t, 0, "ingest", "--db", db, dir)
	out, _ := mustSbench(t, 0, "runs", "--db", db, "--json")
	var runs []struct {
		ID   int64  `json:"id"`
		Step string `json:"step"`
	}
	if err := json.Unmarshal([]byte(out), &runs); err != nil {
		t.Fatalf("runs --json: %v\n%s", err, out)
	}
	var steps []string
	for _, r := range runs {
		steps = append(steps, r.Step)
	}
	want := []string{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11"}
	if !slices.Equal(steps, want) {
		t.Errorf("steps in run id order: %v, want %v", steps, want)
	}
}
