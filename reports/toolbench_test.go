package reports

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/sbench/sbench/store"
)

// wrappedIMB is what the archive holds after a campaign whose benchmark
// "imb" wraps "IMB-MPI1 PingPong Allreduce" on 2 ranks ran twice: for each
// submission, a PingPong and an Allreduce run (IMB 4.1's real output), as
// the runner archives them.
func wrappedIMB(t *testing.T) Data {
	t.Helper()
	d := Data{Generated: time.Date(2026, 12, 3, 0, 0, 0, 0, time.UTC), Version: "test"}
	id := int64(0)
	for sub := range 2 {
		for _, b := range parseFile(t, filepath.Join("..", "parsers", "testdata", "imb-4.1-mpi1-juno-internode.txt")) {
			if tb := b.Benchmark.ToolBenchmark; tb != "IMB-MPI1 PingPong" && tb != "IMB-MPI1 Allreduce" {
				continue
			}
			id++
			b.Campaign, b.Variant, b.Job.Tasks = "imb", "n2", 2
			b.Benchmark.Name, b.Benchmark.Kernel = "imb", "exec"
			run := runOf(id, "", b)
			run.Start = d.Generated.Add(time.Duration(sub) * time.Hour)
			d.Runs = append(d.Runs, run)
			for _, s := range b.Samples {
				d.Samples = append(d.Samples, store.Sample{RunID: id, Sample: s})
			}
		}
	}
	if len(d.Runs) != 4 {
		t.Fatalf("%d runs, want PingPong and Allreduce twice", len(d.Runs))
	}
	return d
}

// The report keeps the benchmarks one command ran apart: a section each,
// named by the campaign's benchmark and the tool's (Allreduce's a
// collective), each line pooling its own two runs, never PingPong's
// latency with Allreduce's.
func TestReportKeepsToolBenchmarksApart(t *testing.T) {
	d := wrappedIMB(t)
	toolBench := map[int64]string{}
	for _, r := range d.Runs {
		toolBench[r.ID] = r.ToolBenchmark
	}
	r, err := New(d)
	if err != nil {
		t.Fatal(err)
	}
	fams := map[string]bool{}
	for _, f := range r.families {
		fams[f.name] = f.collective
	}
	if len(fams) != 2 || fams["imb (IMB-MPI1 PingPong)"] || !fams["imb (IMB-MPI1 Allreduce)"] {
		t.Errorf("families (collective?) %v, want imb (IMB-MPI1 PingPong) and the collective imb (IMB-MPI1 Allreduce)", fams)
	}
	latency := 0
	for _, f := range r.Figures() {
		if f.Metric != "latency" || f.Kind != KindLatency {
			continue
		}
		latency++
		for _, s := range f.Series {
			if len(s.Runs) != 2 || toolBench[s.Runs[0]] != toolBench[s.Runs[1]] {
				t.Errorf("%s: line %q pools runs %v", f.Name, s.Label(), s.Runs)
			}
			if want := "imb (" + toolBench[s.Runs[0]] + ")"; f.Family != want {
				t.Errorf("%s: family %q draws a line of %s", f.Name, f.Family, want)
			}
		}
	}
	if latency != 2 {
		t.Errorf("%d latency figures, want one per tool benchmark", latency)
	}
}
