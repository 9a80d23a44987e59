package main

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sbench/sbench/internal/golden"
	"github.com/sbench/sbench/results"
)

// goldenBW is an osu_bw run of campaign acc: value MB/s at 4 MiB, half of
// it at 1 MiB, over a link_rate-labelled fabric.
func goldenBW(i int, ppn string, value float64) *results.Bundle {
	b := results.New()
	b.Campaign, b.Variant = "acc", "ppn"+ppn
	b.Params = map[string]string{"ntasks_per_node": ppn, "repeat": fmt.Sprint(i)}
	b.Labels = map[string]string{"link_rate": "200Gbps"}
	b.Job = results.Job{ID: fmt.Sprint(100 + i), Step: "0", Nodes: []string{"n1", "n2"}, Tasks: 2}
	b.Start = time.Date(2026, 12, 4, 8, i, 0, 0, time.UTC)
	b.End = b.Start.Add(time.Minute)
	b.Benchmark = results.Benchmark{Name: "osu_bw", Kind: "tool", Kernel: "osu"}
	b.Samples = []results.Sample{
		{Metric: "bandwidth", Unit: "MB/s", X: results.F(1 << 20), XUnit: "bytes", Value: value / 2},
		{Metric: "bandwidth", Unit: "MB/s", X: results.F(4 << 20), XUnit: "bytes", Value: value},
	}
	return b
}

const goldenCampaign = `[campaign]
name = "acc"

[slurm]
nodes = 2
ntasks_per_node = 1

[[benchmark]]
name = "osu_bw"
command = ["osu_bw"]

[[expect]]
benchmark = "osu_bw"
metric = "bandwidth"
at = "4MiB"
bound = ">= 24 GB/s"

[[expect]]
name = "link"
benchmark = "osu_bw"
metric = "bandwidth"
at = "best"
bound = ">= 0.9 * link_rate"
where = "ntasks_per_node=1"

[[expect]]
benchmark = "osu_bw"
metric = "bandwidth"
at = "4MiB"
bound = ">= baseline:pre - 5%"
where = "ntasks_per_node=1"

[[expect]]
benchmark = "osu_bw"
metric = "latency"
at = "8"
bound = "<= 3 us"
`

// TestCheckGolden: sbench check's table and JSON on a fixed archive —
// a bound met per configuration and missed in another (one run of it,
// n=1 said), a link rate from the runs' label, a baseline's median with
// its margin, and NO DATA — against golden files.
func TestCheckGolden(t *testing.T) {
	wd, _ := os.Getwd()
	dir := t.TempDir()
	t.Chdir(dir)
	db := filepath.Join(dir, "a.db")
	var files []string
	for i, r := range []struct {
		ppn   string
		value float64
	}{{"1", 24500}, {"1", 24600}, {"1", 900}, {"1", 24400}, {"1", 24700}, {"2", 21000}} {
		data, err := results.Marshal(goldenBW(i, r.ppn, r.value))
		if err != nil {
			t.Fatal(err)
		}
		name := fmt.Sprintf("run%d.json", i)
		os.WriteFile(name, data, 0o644)
		files = append(files, name)
	}
	if _, errOut, code := sbench(t, append([]string{"ingest", "--db", db}, files...)...); code != 0 {
		t.Fatalf("ingest: exit %d\n%s", code, errOut)
	}
	if _, errOut, code := sbench(t, "baseline", "set", "pre", "run:1-3", "--db", db); code != 0 {
		t.Fatalf("baseline: exit %d\n%s", code, errOut)
	}
	os.WriteFile("acc.toml", []byte(goldenCampaign), 0o644)
	out, errOut, code := sbench(t, "check", "--campaign", "acc.toml", "--db", db)
	if code != exitGate || errOut != "sbench: check: 1 expectation(s) failed: osu_bw bandwidth@4MiB\n" {
		t.Errorf("check: exit %d\n%s", code, errOut)
	}
	golden.Check(t, filepath.Join(wd, "testdata/golden/check.txt"), []byte(out))
	js, _, code := sbench(t, "check", "--campaign", "acc.toml", "--json", "--db", db)
	if code != exitGate {
		t.Errorf("check --json: exit %d", code)
	}
	golden.Check(t, filepath.Join(wd, "testdata/golden/check.json"), []byte(js))
}
