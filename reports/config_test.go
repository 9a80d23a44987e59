package reports

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sbench/sbench/parsers"
	"github.com/sbench/sbench/results"
	"github.com/sbench/sbench/store"
)

// parseFile reads a tool's output file as sbench ingest does, its format
// sniffed.
func parseFile(t testing.TB, path string) []*results.Bundle {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	bundles, err := parsers.Parse(path, "auto", raw)
	if err != nil {
		t.Fatalf("parse %s: %v", path, err)
	}
	return bundles
}

// fixtureData parses a tool's output into a report's data, each run given
// tasks processes, as a job step of that size would record it.
func fixtureData(t *testing.T, path string, tasks int) Data {
	t.Helper()
	bundles := parseFile(t, path)
	d := Data{Generated: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Version: "test"}
	for i, b := range bundles {
		id := int64(i + 1)
		b.Job.Tasks = tasks
		b.Variant = "imb"
		d.Runs = append(d.Runs, runOf(id, filepath.Base(path), b))
		for _, s := range b.Samples {
			d.Samples = append(d.Samples, store.Sample{RunID: id, Sample: s})
		}
	}
	return d
}

// TestReportKeepsProcessCountsApart: IMB measures each benchmark at 2, then
// 4 processes in one 4-rank step. Those are two configurations: two lines,
// each with the numbers IMB printed, never their mean.
func TestReportKeepsProcessCountsApart(t *testing.T) {
	d := fixtureData(t, filepath.Join("..", "parsers", "testdata", "imb-2021.2-alltoall-np2-np4-oci-indented.txt"), 4)
	printed := map[int]map[float64]float64{}
	for _, run := range d.Runs {
		np, _ := strconv.Atoi(run.Params["processes"])
		printed[np] = map[float64]float64{}
		for _, s := range d.Samples {
			if s.RunID == run.ID && s.Metric == "latency" && s.X != nil {
				printed[np][*s.X] = s.Value
			}
		}
	}
	if len(printed) != 2 || printed[2] == nil || printed[4] == nil {
		t.Fatalf("fixture has process counts %v, want 2 and 4", printed)
	}
	r, err := New(d)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, f := range r.Figures() {
		if f.Kind != KindLatency || f.Metric != "latency" {
			continue
		}
		found = true
		if len(f.Series) != 2 {
			t.Fatalf("figure %s has %d lines, want one per process count", f.Name, len(f.Series))
		}
		for _, s := range f.Series {
			want := printed[s.Ranks]
			if want == nil {
				t.Fatalf("line %q has %d ranks", s.Label(), s.Ranks)
			}
			for _, p := range s.Points {
				if v, ok := want[p.X]; !ok || v != p.Y || p.N != 1 {
					t.Errorf("%s at %g B: %v (n=%d), IMB printed %v", s.Label(), p.X, p.Y, p.N, v)
				}
			}
		}
	}
	if !found {
		t.Fatal("no latency figure")
	}
}

// TestReportPoolsRepeats: a campaign's repeats differ only in their repeat
// index; they are one configuration, one line, every repeat in its points.
// Its intra- and inter-node placements are two, never one band.
func TestReportPoolsRepeats(t *testing.T) {
	var d Data
	id := int64(0)
	for _, placement := range []string{"intra-node", "inter-node"} {
		for k := range 5 {
			id++
			d.Runs = append(d.Runs, store.Run{ID: id, Campaign: "c", Variant: "v", Benchmark: "latency", Kernel: "latency",
				Status: results.StatusOK, Tasks: 2, Params: map[string]string{"repeat": strconv.Itoa(k)},
				Labels: map[string]string{"placement": placement, "pair": "n1->n1"}})
			v := 2.0
			if placement == "inter-node" {
				v = 20
			}
			for _, x := range []float64{8, 64, 512} {
				d.Samples = append(d.Samples, store.Sample{RunID: id, Sample: results.Sample{Metric: "latency", Unit: "us",
					X: results.F(x), XUnit: "bytes", Value: v + x/100 + float64(k)/10}})
			}
		}
	}
	r, err := New(d)
	if err != nil {
		t.Fatal(err)
	}
	figs := r.Figures()
	if len(figs) == 0 {
		t.Fatal("no figure")
	}
	f := figs[0]
	if len(f.Series) != 2 {
		t.Fatalf("%d lines, want one per placement: %+v", len(f.Series), f.Series)
	}
	for _, s := range f.Series {
		if s.Config != "intra-node" && s.Config != "inter-node" || len(s.Points) != 3 || s.Points[0].N != 5 || len(s.Runs) != 5 {
			t.Errorf("line %q: %+v runs %v, want a placement with 5 pooled repeats", s.Config, s.Points, s.Runs)
		}
	}
}

// TestReportOneFigurePerQuantity: IMB PingPong prints its bandwidth once;
// the archive keeps it normalised (bandwidth, MB/s) and in IMB's own unit
// (bandwidth_imb). That is one measured quantity: one figure, one verdict
// line.
func TestReportOneFigurePerQuantity(t *testing.T) {
	d := fixtureData(t, filepath.Join("..", "parsers", "testdata", "imb-2019u5-pingpong-excalibur.txt"), 2)
	hasCopy := false
	for _, s := range d.Samples {
		hasCopy = hasCopy || s.Metric == "bandwidth_imb"
	}
	if !hasCopy {
		t.Fatal("the fixture's runs have no bandwidth_imb samples to leave out")
	}
	r, err := New(d)
	if err != nil {
		t.Fatal(err)
	}
	bw := 0
	for _, f := range r.Figures() {
		if f.Kind == KindBandwidth {
			bw++
			if f.Metric != "bandwidth" {
				t.Errorf("figure %s draws %s", f.Name, f.Metric)
			}
		}
	}
	lines := 0
	for _, v := range r.Verdict() {
		if strings.Contains(v, "MB/s") {
			lines++
		}
	}
	if bw != 1 || lines > 1 {
		t.Errorf("%d bandwidth figures and %d bandwidth verdict lines, want one of each: %q", bw, lines, r.Verdict())
	}
}
