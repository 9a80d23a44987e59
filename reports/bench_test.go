package reports

import (
	"bytes"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/jung-kurt/gofpdf"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg/draw"

	"github.com/sbench/sbench/results"
	"github.com/sbench/sbench/store"

	"github.com/sbench/sbench/reports/typeset"
)

func benchPlot(b *testing.B) *plot.Plot {
	r, err := New(testData())
	if err != nil {
		b.Fatal(err)
	}
	return r.Figures()[1].Plot // latency: log-log, the most ticks
}

// BenchmarkFigurePDF draws one figure through Canvas into a one-page PDF;
// BenchmarkFigurePNG renders the same figure to PNG as SaveFigures does.
func BenchmarkFigurePDF(b *testing.B) {
	p := benchPlot(b)
	var size int
	for b.Loop() {
		size = len(drawPDF(b, gofpdf.New("P", "pt", "A4", ""), p, typeset.Margin, typeset.Margin, figureWidth.Points(), figureHeight.Points()))
	}
	b.ReportMetric(float64(size), "file-bytes")
}

func BenchmarkFigurePNG(b *testing.B) {
	p := benchPlot(b)
	var size int
	for b.Loop() {
		c, err := draw.NewFormattedCanvas(figureWidth, figureHeight, "png")
		if err != nil {
			b.Fatal(err)
		}
		p.Draw(draw.New(c))
		var buf bytes.Buffer
		if _, err := c.WriteTo(&buf); err != nil {
			b.Fatal(err)
		}
		size = buf.Len()
	}
	b.ReportMetric(float64(size), "file-bytes")
}

// manyFigures is a campaign of a 100-figure report, made like the archive
// bench/report-100.sh builds: 20 point-to-point benchmarks of 4
// configurations, 3 repeats each (bandwidth, latency and its small-message
// zoom: 60 figures), 10 allreduce benchmarks at 8 and 16 ranks (latency,
// zoom and scaling: 30) and 5 matrices of 8 nodes (bandwidth and latency
// heatmaps: 10).
func manyFigures() Data {
	d := Data{Generated: time.Date(2025, 3, 2, 0, 0, 0, 0, time.UTC), Version: "bench"}
	nodes := []string{"n01", "n02", "n03", "n04", "n05", "n06", "n07", "n08"}
	hosts := hostsOf(nodes...)
	id := int64(0)
	run := func(bench, kernel, variant string, tasks int) int64 {
		id++
		d.Runs = append(d.Runs, store.Run{ID: id, Campaign: "bench", Variant: variant, Benchmark: bench, Kernel: kernel,
			Status: results.StatusOK, JobID: fmt.Sprint(1000 + id), Nodes: nodes[:2], Tasks: tasks, Hosts: hosts[:2]})
		return id
	}
	sample := func(r int64, metric, unit string, x, v float64, rep int) {
		d.Samples = append(d.Samples, store.Sample{RunID: r, Sample: results.Sample{Metric: metric, Unit: unit, X: results.F(x), XUnit: "bytes", Value: v, Repeat: rep}})
	}
	for f := 0; f < 20; f++ {
		for v := 0; v < 4; v++ {
			m := model{lat0: 1 + float64(v), bw: 1000 * float64(v+1)}
			for rep := 0; rep < 3; rep++ {
				r := run(fmt.Sprintf("bench-%02d", f), "pingpong", fmt.Sprintf("variant-%d", v), 2)
				jitter := 1 + 0.02*float64(rep-1)
				for _, s := range testSizes {
					sample(r, "latency", "us", s, m.latency(s)*jitter, rep)
					sample(r, "bandwidth", "MB/s", s, m.bandwidth(s)/jitter, rep)
				}
			}
		}
	}
	for f := 0; f < 10; f++ {
		for _, n := range []int{8, 16} {
			r := run(fmt.Sprintf("allreduce-%02d", f), "allreduce", "ppn=auto", n)
			for _, s := range testSizes[3:17] {
				sample(r, "latency", "us", s, float64(n)*0.4+s/3000, 0)
			}
		}
	}
	for f := 0; f < 5; f++ {
		r := run(fmt.Sprintf("matrix-%d", f), "matrix", "ppn=1", 8)
		for a, from := range nodes {
			for b, to := range nodes {
				if a == b {
					continue
				}
				tags := map[string]string{"from": from, "to": to}
				d.Samples = append(d.Samples,
					store.Sample{RunID: r, Sample: results.Sample{Metric: "matrix_bandwidth", Unit: "MB/s", Value: 12000 - float64(37*a+11*b), Tags: tags}},
					store.Sample{RunID: r, Sample: results.Sample{Metric: "matrix_latency", Unit: "us", Value: 1.5 + 0.01*float64(a*b), Tags: tags}})
			}
		}
	}
	return d
}

func BenchmarkReport100Figures(b *testing.B) {
	d := manyFigures()
	if r, err := New(d); err != nil || len(r.Figures()) != 100 {
		b.Fatalf("want 100 figures, got %d (%v)", len(r.Figures()), err)
	}
	var size int64
	for b.Loop() {
		r, err := New(d)
		if err != nil {
			b.Fatal(err)
		}
		if size, err = r.WriteTo(io.Discard); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(size), "file-bytes")
}
