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
		pdf := gofpdf.New("P", "pt", "A4", "")
		pdf.AddPage()
		c := NewCanvas(pdf, margin, margin, figureWidth.Points(), figureHeight.Points())
		p.Draw(draw.New(c))
		if err := c.Close(); err != nil {
			b.Fatal(err)
		}
		var buf bytes.Buffer
		if err := pdf.Output(&buf); err != nil {
			b.Fatal(err)
		}
		size = buf.Len()
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

// manyFigures is 50 benchmarks of 4 configurations each, bandwidth and
// latency at 23 sizes: a report of 100 figures.
func manyFigures() Data {
	d := Data{Generated: time.Date(2025, 3, 2, 0, 0, 0, 0, time.UTC), Version: "bench"}
	id := int64(0)
	for f := 0; f < 50; f++ {
		for v := 0; v < 4; v++ {
			id++
			d.Runs = append(d.Runs, store.Run{ID: id, Campaign: "bench", Variant: fmt.Sprintf("variant-%d", v),
				Benchmark: fmt.Sprintf("bench-%02d", f), Status: results.StatusOK, Nodes: []string{"n1", "n2"}, Tasks: 2})
			m := model{lat0: 1 + float64(v), bw: 1000 * float64(v+1)}
			for _, s := range sizes {
				x := s
				d.Samples = append(d.Samples,
					store.Sample{RunID: id, Sample: results.Sample{Metric: "latency", Unit: "us", X: &x, Value: m.latency(s)}},
					store.Sample{RunID: id, Sample: results.Sample{Metric: "bandwidth", Unit: "MB/s", X: &x, Value: m.bandwidth(s)}})
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
		cw := &countingWriter{w: io.Discard}
		if err := Write(cw, d); err != nil {
			b.Fatal(err)
		}
		size = cw.n
	}
	b.ReportMetric(float64(size), "file-bytes")
}
