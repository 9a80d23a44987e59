package trend

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sbench/sbench/compare"
	"github.com/sbench/sbench/internal/testenv"
	"github.com/sbench/sbench/results"
	"github.com/sbench/sbench/store"
	"github.com/sbench/sbench/svgplot"
	"gonum.org/v1/plot/vg"
)

// upgrade is a history of 24 runs with a 20% drop at run 17 after a kernel
// change, an outlier at run 6 and three repeats per run.
func upgrade(t *testing.T) *compare.History {
	t.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	var runs []store.Run
	var samples []store.Sample
	for i := int64(1); i <= 24; i++ {
		kernel, level := "5.14.0-70", 11800.0
		if i >= 17 {
			kernel, level = "5.14.0-162", 9440
		}
		runs = append(runs, store.Run{ID: i, Benchmark: "osu_bw", Status: results.StatusOK, JobID: strconv.Itoa(int(1000 + i)),
			Start: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, int(i)), Hosts: []results.Host{{Hostname: "n1", Kernel: kernel}}})
		for rep := range 3 {
			v := level * (1 + 0.01*rng.NormFloat64())
			if i == 6 {
				v *= 0.75
			}
			samples = append(samples, store.Sample{RunID: i, Sample: results.Sample{Metric: "bandwidth", Unit: "MB/s",
				X: results.F(1 << 20), XUnit: results.UnitBytes, Value: v, Repeat: rep}})
		}
	}
	h, err := compare.BuildHistory(runs, samples, compare.HistoryQuery{Benchmark: "osu_bw", Threshold: 0.05})
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Changes) != 1 || h.Changes[0].Run != 17 || !h.Points[5].Outside {
		t.Fatalf("fixture: changes %+v, point 6 outside %v: want one step at run 17 and run 6 outside", h.Changes, h.Points[5].Outside)
	}
	return h
}

// countNear counts the pixels of img within a small distance of c.
func countNear(img image.Image, c color.RGBA) int {
	n := 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if absDiff(r>>8, uint32(c.R)) < 24 && absDiff(g>>8, uint32(c.G)) < 24 && absDiff(bl>>8, uint32(c.B)) < 24 {
				n++
			}
		}
	}
	return n
}

func absDiff(a, b uint32) uint32 {
	if a > b {
		return a - b
	}
	return b - a
}

func TestPNGShowsBandOutlierAndStep(t *testing.T) {
	h := upgrade(t)
	data, err := Render("trend.png", h)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	// 9 × 4.5 in at 144 dpi.
	if b := img.Bounds(); b.Dx() != 1296 || b.Dy() != 648 {
		t.Errorf("image is %v, want 1296×648", b)
	}
	for _, c := range []struct {
		name string
		col  color.RGBA
		min  int
	}{
		{"series", seriesColor, 500},
		{"control band", bandColor, 5000},
		{"outside ring", outsideColor, 100},
		{"step", stepColor, 300},
	} {
		if n := countNear(img, c.col); n < c.min {
			t.Errorf("%s: %d pixels of its colour, want ≥ %d", c.name, n, c.min)
		}
	}
	// Without the outlier and the step, their colours are gone: the
	// counts above come from what they mark.
	quiet := *h
	quiet.Changes = nil
	quiet.Points = append([]compare.Point{}, h.Points...)
	for i := range quiet.Points {
		quiet.Points[i].Outside = false
	}
	data, _ = Render("q.png", &quiet)
	img, _ = png.Decode(bytes.NewReader(data))
	if n := countNear(img, outsideColor); n > 20 {
		t.Errorf("%d red pixels with no point outside", n)
	}
	if n := countNear(img, stepColor); n > 20 {
		t.Errorf("%d orange pixels with no step", n)
	}
	if os.Getenv("TREND_SAVE") != "" {
		os.WriteFile(os.Getenv("TREND_SAVE"), mustRender(t, "x.png", h), 0o644)
	}
}

func mustRender(t *testing.T, name string, h *compare.History) []byte {
	t.Helper()
	data, err := Render(name, h)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestPNGIsDeterministic(t *testing.T) {
	h := upgrade(t)
	if !bytes.Equal(mustRender(t, "a.png", h), mustRender(t, "b.png", h)) {
		t.Error("two renderings of one history differ")
	}
}

func TestPDFAndSVG(t *testing.T) {
	h := upgrade(t)
	svg := mustRender(t, "t.svg", h)
	if !bytes.HasPrefix(bytes.TrimSpace(svg), []byte("<?xml")) || !bytes.Contains(svg, []byte("run 17 (job 1017)")) {
		t.Errorf("svg does not hold the step's label:\n%.300s", svg)
	}
	pdf := mustRender(t, "t.pdf", h)
	if !bytes.HasPrefix(pdf, []byte("%PDF-")) {
		t.Fatalf("pdf starts %q", pdf[:8])
	}
	testenv.LookPath(t, "pdftotext", "poppler-utils")
	path := filepath.Join(t.TempDir(), "t.pdf")
	os.WriteFile(path, pdf, 0o644)
	text, err := exec.Command("pdftotext", path, "-").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"osu_bw: bandwidth at 1 MiB", "bandwidth (MB/s)", "run 17 (job 1017) -19.9%", "outside control band"} {
		if !strings.Contains(string(text), want) {
			t.Errorf("pdf text lacks %q:\n%s", want, text)
		}
	}
}

func TestWriteRefuses(t *testing.T) {
	h := upgrade(t)
	if _, err := Render("t.gif", h); err == nil || !strings.Contains(err.Error(), "t.gif") {
		t.Errorf("gif: %v", err)
	}
	if _, err := Render("t.png", &compare.History{Benchmark: "x"}); err == nil {
		t.Error("an empty history drew")
	}
}

// The time axis says the year: once, in the axis label, when every run is
// of one year; at every labelled run when they span several.
func TestTimeAxisYear(t *testing.T) {
	h := upgrade(t) // 2024-01-02 to 2024-01-25
	svg := string(mustRender(t, "t.svg", h))
	if !strings.Contains(svg, "run, oldest first (2024)") || !strings.Contains(svg, ">01-02<") {
		t.Errorf("one year: want the year in the axis label and month-day ticks")
	}
	// The same history a year and more later for its last half.
	later := *h
	later.Points = append([]compare.Point(nil), h.Points...)
	for i := 12; i < len(later.Points); i++ {
		later.Points[i].When = later.Points[i].When.AddDate(1, 0, 0)
	}
	svg = string(mustRender(t, "t.svg", &later))
	for _, want := range []string{">2024-01-02<", ">2025-01-", "run, oldest first<"} {
		if !strings.Contains(svg, want) {
			t.Errorf("runs of 2024 and 2025: the svg lacks %q", want)
		}
	}
}

// Drawn for a page, the figure's points are hover targets that say when,
// which run and its band, and link where WithRunLink says; the parts of
// the figure are groups a page can hide.
func TestPlotForPage(t *testing.T) {
	h := upgrade(t)
	p, err := Plot(h, WithRunLink(func(run int64) string { return "../runs/" + strconv.FormatInt(run, 10) + ".html" }))
	if err != nil {
		t.Fatal(err)
	}
	svg, err := svgplot.Render(p, 9*vg.Inch, 4.5*vg.Inch, "history")
	if err != nil {
		t.Fatal(err)
	}
	s := string(svg)
	if n := strings.Count(s, "<circle "); n != len(h.Points) {
		t.Errorf("%d hover targets for %d runs", n, len(h.Points))
	}
	for _, want := range []string{`data-href="../runs/17.html"`, "2024-01-18 00:00 · run 17 (job 1017)",
		"\nOUTSIDE the control band\" data-href=\"../runs/6.html\"",
		`<g class="sb-s" data-s="1">`, `<g class="sb-s" data-s="3">`, `<g class="sb-s" data-s="4">`} {
		if !strings.Contains(s, want) {
			t.Errorf("svg lacks %q", want)
		}
	}
}

// An expectation's limit is a labelled horizontal line, and the y axis
// reaches it even when every run lies far from it.
func TestBoundLine(t *testing.T) {
	h := upgrade(t)
	p, err := Plot(h, WithBound(24000, "osu_bw bandwidth@1MiB >= 24 GB/s"))
	if err != nil {
		t.Fatal(err)
	}
	if p.Y.Max < 24000 {
		t.Errorf("y axis ends at %v, below the bound", p.Y.Max)
	}
	if plain, _ := Plot(h); plain.Y.Max >= 24000 {
		t.Fatalf("without the bound the axis reaches %v already: the test shows nothing", plain.Y.Max)
	}
	var svg bytes.Buffer
	if err := Write(&svg, h, "svg", WithBound(24000, "osu_bw bandwidth@1MiB >= 24 GB/s")); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(svg.String(), "osu_bw bandwidth@1MiB &gt;= 24 GB/s"); n != 2 {
		t.Errorf("the bound's label is there %d times, want 2 (on the line, in the legend)", n)
	}
}
