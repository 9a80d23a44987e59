package reports

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sbench/sbench/results"
	"github.com/sbench/sbench/store"
)

// toolsVsNative is the experiment of issue 13: OpenMPI's osu_latency and
// osu_bw against sbench-runner's latency and bw kernels, intra- and
// inter-node (the campaign's variants), 3 repeats each.
func toolsVsNative() Data {
	var d Data
	var id int64
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	add := func(r store.Run, placement string, m model) {
		for rep := range 3 {
			id++
			r := r
			r.ID, r.Campaign, r.Variant, r.Status, r.Tasks = id, "tools-vs-native", placement, results.StatusOK, 2
			r.Start, r.JobID, r.Step = t0.Add(time.Duration(id)*time.Minute), "4242", "0"
			d.Runs = append(d.Runs, r)
			for _, size := range testSizes {
				x := size
				jitter := 1 + 0.01*float64(rep)
				smp := results.Sample{Metric: "latency", Unit: "us", X: &x, XUnit: "bytes", Value: m.latency(size) * jitter}
				if strings.Contains(r.Benchmark, "bw") {
					smp.Metric, smp.Unit, smp.Value = "bandwidth", "MB/s", m.bandwidth(size)/jitter
				}
				if r.Kind == "native" {
					smp.Pair = []int{0, 1}
				}
				d.Samples = append(d.Samples, store.Sample{RunID: id, Sample: smp})
			}
		}
	}
	kernel := func(name string) store.Run {
		return store.Run{Benchmark: name, Kind: "native", Kernel: name, RunnerVersion: "0.9.0",
			Labels: map[string]string{"impl": "native"}, Params: map[string]string{"sizes": "1-4194304"}}
	}
	tool := func(name string) store.Run {
		return store.Run{Benchmark: name, Kind: "tool", Kernel: "osu", Tool: "osu-micro-benchmarks", ToolVer: "7.4",
			Labels: map[string]string{"impl": "openmpi-tcp"}}
	}
	for _, p := range []struct {
		name     string
		nat, mpi model
	}{
		{"intra", model{lat0: 0.3, bw: 9000}, model{lat0: 0.4, bw: 11000}},
		{"inter", model{lat0: 25, bw: 117}, model{lat0: 30, bw: 112}},
	} {
		add(kernel("latency"), p.name, p.nat)
		add(kernel("bw"), p.name, p.nat)
		add(tool("osu_latency"), p.name, p.mpi)
		add(tool("osu_bw"), p.name, p.mpi)
	}
	d.Generated = t0.Add(time.Hour)
	d.Version = "v0.1.0-test"
	return d
}

func TestReportFamilies(t *testing.T) {
	d := toolsVsNative()
	// By benchmark, latency and osu_latency never share a figure.
	r, err := New(d)
	if err != nil {
		t.Fatal(err)
	}
	fams := map[string]bool{}
	for _, f := range r.Figures() {
		fams[f.Family] = true
	}
	if !fams["latency"] || !fams["osu_latency"] || fams["point-to-point"] {
		t.Errorf("by benchmark, the figures are of %v: want latency and osu_latency apart", fams)
	}
	for _, opt := range []Option{WithFamilies(), WithGroupBy("family")} {
		r, err := New(d, opt)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, f := range r.Figures() {
			if f.Kind == KindLatencyZoom {
				continue
			}
			got = append(got, f.Title+": "+strings.Join(f.LegendEntries(), " | "))
		}
		want := []string{
			"point-to-point: bandwidth vs message size, variant=inter: sbench-runner 0.9.0 bw | osu-micro-benchmarks 7.4 (osu_bw) | theoretical link rate",
			"point-to-point: bandwidth vs message size, variant=intra: sbench-runner 0.9.0 bw | osu-micro-benchmarks 7.4 (osu_bw)",
			"point-to-point: latency vs message size, variant=inter: sbench-runner 0.9.0 latency | osu-micro-benchmarks 7.4 (osu_latency)",
			"point-to-point: latency vs message size, variant=intra: sbench-runner 0.9.0 latency | osu-micro-benchmarks 7.4 (osu_latency)",
		}
		// The link rate line depends on provenance the fixture has none of.
		for i := range got {
			got[i] = strings.TrimSuffix(got[i], " | theoretical link rate")
		}
		want[0] = strings.TrimSuffix(want[0], " | theoretical link rate")
		if !slices.Equal(got, want) {
			t.Errorf("figures:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		// One colour per tool in every figure.
		figs := r.Figures()
		if figs[0].Series[0].Color != figs[len(figs)-1].Series[0].Color && figs[0].Series[0].Config == figs[len(figs)-1].Series[0].Config {
			t.Errorf("one tool, two colours")
		}
		var sum Summary
		for _, s := range r.Summaries() {
			if s.Benchmark == "point-to-point" {
				sum = s
			}
		}
		if l := sum.Latency["latency (variant=intra)"]; len(l) != 2 || l[0].Config != "sbench-runner 0.9.0 latency" || l[0].Ratio != 1 || l[1].Ratio <= 1 {
			t.Errorf("intra-node latency summary %+v: want the kernel best, OSU slower", l)
		}
	}

	text := pdfFileText(t, savePDF(t, keepDir(t), "families.pdf", writeReport(t, d, WithFamilies())))
	for _, want := range []string{
		"Metric family: point-to-point (bw, latency, osu_bw, osu_latency)",
		"Tool",
		"point-to-point (variant=intra): at 1 B, sbench-runner 0.9.0 latency has",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the family view's PDF lacks %q", want)
		}
	}
	if strings.Contains(text, "Benchmark: osu_latency") {
		t.Errorf("osu_latency has a section of its own in the family view")
	}
}
