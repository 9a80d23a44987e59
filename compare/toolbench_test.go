package compare

import (
	"bytes"
	"strings"
	"testing"

	"github.com/sbench/sbench/store"
)

// imbSides are two submissions of a campaign whose benchmark "imb" wraps
// "IMB-MPI1 PingPong Allreduce" on 2 ranks: each gives a PingPong run
// (196 µs at 0 and 4 bytes) and an Allreduce run (0.08 µs at 0 bytes, 202 µs
// at 4), as the runner archives them.
func imbSides() (a, b *sideBuilder) {
	a, b = newSides("campaign:imb@2", "campaign:imb@1")
	for i, s := range []*sideBuilder{a, b} {
		for _, tb := range []string{"IMB-MPI1 PingPong", "IMB-MPI1 Allreduce"} {
			run := s.run("imb", "n2", nil)
			r := &s.Runs[len(s.Runs)-1]
			r.Campaign, r.Kind, r.Kernel, r.Tool, r.ToolBenchmark, r.ToolVer = "imb", "tool", "exec", "IMB-MPI1", tb, "2021.3"
			r.Params = map[string]string{"processes": "2", "date": s.Name}
			if tb == "IMB-MPI1 PingPong" {
				s.sample(run, "latency", "us", 0, 196.14+float64(i))
				s.sample(run, "latency", "us", 4, 197.31+float64(i))
			} else {
				s.sample(run, "latency", "us", 0, 0.08)
				s.sample(run, "latency", "us", 4, 202.3+float64(i))
			}
		}
	}
	return a, b
}

// The two benchmarks one command ran are two tables, each comparing one
// run with one, named by the benchmark the tool ran: never one table
// pooling PingPong's 196 µs with Allreduce's 0.08 µs (n=2+2). Both sides
// ran both, so the key splits; IMB's parser calls both tables' figure
// "latency", so only the configuration keeps them apart.
func TestBuildKeepsToolBenchmarksApart(t *testing.T) {
	a, b := imbSides()
	res := mustBuild(t, a.Side, b.Side)
	var configs []string
	for _, tb := range res.Tables {
		configs = append(configs, tb.Metric+" "+strings.Join(tb.Config, " "))
		for _, r := range tb.Rows {
			if r.Old == nil || r.New == nil || r.Old.N != 1 || r.New.N != 1 {
				t.Errorf("%s: row %+v, want n=1+1", tb.title(), r)
			}
		}
	}
	want := []string{"latency tool_benchmark=IMB-MPI1 Allreduce", "latency tool_benchmark=IMB-MPI1 PingPong"}
	if strings.Join(configs, "|") != strings.Join(want, "|") {
		t.Errorf("tables %q, want %q", configs, want)
	}
	var buf bytes.Buffer
	res.WriteText(&buf)
	for _, w := range []string{"imb · latency (us, lower is better) · tool_benchmark=IMB-MPI1 PingPong", "imb · latency (us, lower is better) · tool_benchmark=IMB-MPI1 Allreduce"} {
		if !strings.Contains(buf.String(), w) {
			t.Errorf("text lacks %q:\n%s", w, buf.String())
		}
	}
}

// Matched by metric family, a wrapped run's family is that of the
// benchmark its tool ran, whatever the campaign calls it.
func TestFamilyOfAWrappedTool(t *testing.T) {
	for _, c := range []struct {
		run        store.Run
		label, fam string
	}{
		{store.Run{Benchmark: "imb", Kind: "tool", Kernel: "exec", Tool: "IMB-MPI1", ToolBenchmark: "IMB-MPI1 Allreduce", ToolVer: "2021.3"},
			"IMB-MPI1 2021.3 (IMB-MPI1 Allreduce, imb)", "allreduce"},
		{store.Run{Benchmark: "imb", Kind: "tool", Kernel: "exec", Tool: "IMB-MPI1", ToolBenchmark: "IMB-MPI1 PingPong", ToolVer: "2021.3"},
			"IMB-MPI1 2021.3 (IMB-MPI1 PingPong, imb)", PointToPoint},
		{store.Run{Benchmark: "allreduce-suite", Kind: "tool", Kernel: "exec", Tool: "IMB-MPI1", ToolBenchmark: "IMB-MPI1 PingPong"},
			"IMB-MPI1 (IMB-MPI1 PingPong, allreduce-suite)", PointToPoint},
		{store.Run{Benchmark: "osu_latency", Kind: "tool", Kernel: "exec", Tool: "osu-micro-benchmarks", ToolBenchmark: "osu_latency", ToolVer: "7.4"},
			"osu-micro-benchmarks 7.4 (osu_latency)", PointToPoint},
		{store.Run{Benchmark: "IMB-MPI1 Allreduce", Kind: "tool", Kernel: "imb", Tool: "IMB-MPI1", ToolBenchmark: "IMB-MPI1 Allreduce", ToolVer: "2021.7"},
			"IMB-MPI1 2021.7 (IMB-MPI1 Allreduce)", "allreduce"},
	} {
		if got := ToolLabel(&c.run); got != c.label {
			t.Errorf("ToolLabel(%s, %s) = %q, want %q", c.run.Benchmark, c.run.ToolBenchmark, got, c.label)
		}
		if got := MetricFamily(&c.run, "latency", "bytes"); got != c.fam {
			t.Errorf("MetricFamily(%s, %s) = %q, want %q", c.run.Benchmark, c.run.ToolBenchmark, got, c.fam)
		}
	}
}

// Matched by metric family, the wrapped PingPong is a point-to-point
// latency and the wrapped Allreduce an allreduce, each named by its tool.
func TestBuildFamiliesOfAWrappedTool(t *testing.T) {
	a, b := imbSides()
	o := DefaultOptions()
	o.Families = true
	res, err := Build(a.Side, b.Side, o)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tb := range res.Tables {
		got = append(got, tb.Benchmark+": "+strings.Join(tb.OldTools, "; "))
	}
	want := "allreduce: IMB-MPI1 2021.3 (IMB-MPI1 Allreduce, imb)|point-to-point: IMB-MPI1 2021.3 (IMB-MPI1 PingPong, imb)"
	if strings.Join(got, "|") != want {
		t.Errorf("families %q, want %q", got, want)
	}
}
