package main

import (
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sbench/sbench/internal/golden"
	"github.com/sbench/sbench/results"
)

// weeklyArchive is 16 weekly osu_bw jobs of a campaign on two nodes. From
// job 1013 on, the nodes run a new MOFED whose firmware trains the ports at
// HDR100 instead of HDR, and 1 MiB bandwidth falls from 23 to 11.5 GB/s.
func weeklyArchive(t *testing.T) string {
	t.Helper()
	path, db := newArchive(t, "w.db")
	defer db.Close()
	start := time.Date(2024, 3, 4, 2, 0, 0, 0, time.UTC)
	for i := range 16 {
		fw, rate, level := "20.39.1002", "200 Gb/sec (4X HDR)", 23000.0
		if i >= 12 {
			fw, rate, level = "20.41.1000", "100 Gb/sec (2X HDR)", 11500
		}
		b := results.New()
		b.Campaign = "weekly"
		b.Variant = "pair"
		b.Labels = map[string]string{"fabric": "ib"}
		b.Benchmark = results.Benchmark{Name: "osu_bw", Kind: "tool", Kernel: "osu", Tool: "osu_bw", ToolVersion: "7.4"}
		b.Job = results.Job{ID: fmt.Sprint(1001 + i), Step: "0", Nodes: []string{"gpu01", "gpu02"}, Tasks: 2}
		b.Start = start.AddDate(0, 0, 7*i)
		b.End = b.Start.Add(time.Minute)
		for _, n := range []string{"gpu01", "gpu02"} {
			b.Hosts = append(b.Hosts, results.Host{Hostname: n, Kernel: "5.14.0-362.el9", MPI: "Open MPI 4.1.6",
				IB: []results.IBPort{{Device: "mlx5_0", Port: 1, State: "ACTIVE", Rate: rate, Firmware: fw, LinkLayer: "InfiniBand"}}})
		}
		noise := []float64{0.002, -0.004, 0.001, 0.003, -0.002, 0, -0.001, 0.004, -0.003, 0.002, -0.002, 0.001, 0.003, -0.001, 0.002, -0.003}[i]
		for _, x := range []float64{8, 1 << 20} {
			v := level * (1 + noise)
			if x == 8 {
				v = 40 * (1 + noise)
			}
			b.Samples = append(b.Samples, results.Sample{Metric: "bandwidth", Unit: "MB/s", X: results.F(x), XUnit: "bytes", Value: v})
		}
		mustIngest(t, db, fmt.Sprintf("job%d.json", 1001+i), b)
	}
	return path
}

func TestHistoryNamesTheStepAndWhatChanged(t *testing.T) {
	db := weeklyArchive(t)
	fig := filepath.Join(t.TempDir(), "trend.png")
	out, stderr := mustSbench(t, 0, "history", "--db", db, "--benchmark", "osu_bw", "--metric", "bandwidth", "--x", "1M", "-o", fig)
	golden.Check(t, filepath.Join("testdata", "history-weekly.stdout"), out)
	for _, want := range []string{
		"osu_bw · bandwidth (MB/s, higher is better) at 1 MiB",
		"step at run 13 (2024-05-27 02:00, job 1013.0): 23012 → 11506 (-50.00%, p=0.002) REGRESSION",
		"  firmware: mlx5_0/1 20.39.1002 → mlx5_0/1 20.41.1000",
		"  port rate: mlx5_0/1 200 Gb/sec (4X HDR) → mlx5_0/1 100 Gb/sec (2X HDR)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("history lacks %q:\n%s", want, out)
		}
	}
	if stderr != "wrote "+fig+"\n" {
		t.Errorf("stderr %q", stderr)
	}
	f, err := os.Open(fig)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := png.Decode(f); err != nil {
		t.Errorf("%s is not a PNG: %v", fig, err)
	}
	// The other size has no step.
	out, _ = mustSbench(t, 0, "history", "--db", db, "--benchmark", "osu_bw", "--x", "8")
	if !strings.Contains(out, "no step at alpha 0.05") {
		t.Errorf("8 B history:\n%s", out)
	}
	out, _ = mustSbench(t, 0, "history", "--db", db, "--benchmark", "osu_bw", "--x", "1MiB", "--json")
	if !strings.Contains(out, `"run": 13`) || !strings.Contains(out, `"field": "port rate"`) {
		t.Errorf("--json:\n%.600s", out)
	}
}

func TestHistoryUsage(t *testing.T) {
	db := weeklyArchive(t)
	usageErrors{
		{[]string{}, "--benchmark is required"},
		{[]string{"--benchmark", "osu_bw"}, "2 x values (8, 1048576): choose one with --x"},
		{[]string{"--benchmark", "osu_bw", "--x", "lots"}, `--x "lots"`},
		{[]string{"--benchmark", "nope"}, "history of benchmark nope selects no runs; benchmarks: osu_bw"},
		{[]string{"--benchmark", "osu_bw", "--x", "3"}, "at x = 3"},
		{[]string{"--benchmark", "osu_bw", "--x", "8", "-o", "t.gif"}, "want a .png, .pdf or .svg"},
		{[]string{"--benchmark", "osu_bw", "--x", "8", "--window", "1"}, "--window 1"},
	}.check(t, []string{"history", "--db", db})
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]float64{"8": 8, "4K": 4096, "4KiB": 4096, "1M": 1 << 20, "1mib": 1 << 20, "2G": 2 << 30, "0.5": 0.5, "64B": 64, " 16 ": 16} {
		if got, err := parseSize(in); err != nil || got != want {
			t.Errorf("parseSize(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "K", "x", "NaN", "1T"} {
		if _, err := parseSize(in); err == nil {
			t.Errorf("parseSize(%q) accepted", in)
		}
	}
}
