package reports

import (
	"bytes"
	"image"
	"image/png"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sbench/sbench/internal/testenv"
	"github.com/sbench/sbench/results"
	"github.com/sbench/sbench/store"
)

// run runs a poppler tool; anything it says on stderr ("Syntax Error …")
// means the PDF is damaged, even when the tool copes.
func run(t testing.TB, name string, args ...string) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(testenv.LookPath(t, name, "poppler-utils"), args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, stderr.Bytes())
	}
	if stderr.Len() > 0 {
		t.Errorf("%s %s complains:\n%s", name, strings.Join(args, " "), stderr.Bytes())
	}
	return stdout.String()
}

// pdfText extracts a PDF's text the way a reader copying from it would.
func pdfText(t testing.TB, pdf []byte) string {
	t.Helper()
	return pdfFileText(t, savePDF(t, t.TempDir(), "doc.pdf", pdf))
}

// pdfFileText is pdfText of the PDF file at path.
func pdfFileText(t testing.TB, path string) string {
	t.Helper()
	return run(t, "pdftotext", "-enc", "UTF-8", path, "-")
}

// savePDF writes pdf to dir/name, for the poppler tools, and returns its
// path.
func savePDF(t testing.TB, dir, name string, pdf []byte) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, pdf, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// keepDir is the directory given with -keep, made if need be, so that a
// test's report can be looked at; without -keep, a temporary one.
func keepDir(t testing.TB) string {
	t.Helper()
	if *keep == "" {
		return t.TempDir()
	}
	if err := os.MkdirAll(*keep, 0o755); err != nil {
		t.Fatal(err)
	}
	return *keep
}

var pagesRE = regexp.MustCompile(`(?m)^Pages:\s+(\d+)`)

func pageCount(t testing.TB, path string) int {
	t.Helper()
	m := pagesRE.FindStringSubmatch(run(t, "pdfinfo", path))
	if m == nil {
		t.Fatalf("pdfinfo gives no page count for %s", path)
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// renderPages renders every page at 60 dpi, next to the PDF, and checks
// each has ink: a blank or unrenderable page is a broken report.
func renderPages(t *testing.T, path string, pages int) {
	t.Helper()
	dir := filepath.Dir(path)
	run(t, "pdftoppm", "-png", "-r", "60", path, filepath.Join(dir, "page"))
	pngs, _ := filepath.Glob(filepath.Join(dir, "page-*.png"))
	if len(pngs) != pages {
		t.Fatalf("pdftoppm rendered %d pages, pdfinfo says %d", len(pngs), pages)
	}
	for _, p := range pngs {
		if f := inkFraction(t, p); f < 0.005 {
			t.Errorf("%s is blank (%.4f of its pixels have ink)", filepath.Base(p), f)
		}
	}
}

// inkFraction is the share of a PNG's pixels that are not near-white.
func inkFraction(t testing.TB, path string) float64 {
	t.Helper()
	return ink(decodePNG(t, path))
}

// decodePNG reads a PNG file.
func decodePNG(t testing.TB, path string) image.Image {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("decode %s: %v", path, err)
	}
	return img
}

func ink(img image.Image) float64 { return inkBelow(img, 0xE000) }

// inkBelow is the share of pixels with a colour channel darker than level.
func inkBelow(img image.Image, level uint32) float64 {
	b := img.Bounds()
	n := 0
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if r < level || g < level || bl < level {
				n++
			}
		}
	}
	return float64(n) / float64(b.Dx()*b.Dy())
}

// Test campaign: the same ping-pong over InfiniBand HDR100 and over gigabit
// Ethernet, 23 sizes from 1 B to 4 MiB, plus a run that died.
const (
	ibVariant  = "ib-hdr100"
	gbeVariant = "tcp-gbe"
)

var testSizes = func() []float64 {
	s := make([]float64, 23)
	for i := range s {
		s[i] = math.Ldexp(1, i)
	}
	return s
}()

// model is a link with a start-up latency (µs) and an asymptotic bandwidth
// (MB/s = bytes/µs): the shape every ping-pong curve has.
type model struct{ lat0, bw float64 }

func (m model) latency(size float64) float64   { return m.lat0 + size/m.bw }
func (m model) bandwidth(size float64) float64 { return size / m.latency(size) }

var (
	ibModel  = model{lat0: 1.1, bw: 12100}
	gbeModel = model{lat0: 28, bw: 117}
)

func hostsOf(names ...string) []results.Host {
	hs := make([]results.Host, len(names))
	for i, n := range names {
		hs[i] = results.Host{
			Hostname: n + ".cluster", NodeName: n, Ranks: []int{i},
			CPUModel: "Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz", Sockets: 2, Cores: 64, Threads: 128,
			MemoryBytes: 256 << 30, NUMANodes: 2, OS: "Rocky Linux 9.3", Kernel: "5.14.0-362.8.1.el9_3.x86_64",
			MPI: "Open MPI 4.1.5",
			IB:  []results.IBPort{{Device: "mlx5_0", Port: 1, State: "ACTIVE", Rate: "100 Gb/sec (2X HDR)", LinkLayer: "InfiniBand"}},
			Net: []results.NetIf{{Name: "eno1", SpeedMbps: 1000, MTU: 1500}},
		}
	}
	return hs
}

func testData() Data {
	t0 := time.Date(2025, 3, 1, 10, 0, 0, 0, time.UTC)
	runs := []store.Run{
		{ID: 1, Campaign: "fabric", Variant: ibVariant, Benchmark: "pingpong", Kind: "native", Kernel: "pingpong",
			Status: results.StatusOK, JobID: "1001", Step: "0", Nodes: []string{"n01", "n02"}, Tasks: 2,
			Hosts: hostsOf("n01", "n02"), Start: t0, End: t0.Add(2 * time.Minute)},
		{ID: 2, Campaign: "fabric", Variant: gbeVariant, Benchmark: "pingpong", Kind: "native", Kernel: "pingpong",
			Status: results.StatusOK, JobID: "1002", Step: "0", Nodes: []string{"n01", "n02"}, Tasks: 2,
			Hosts: hostsOf("n01", "n02"), Start: t0.Add(5 * time.Minute), End: t0.Add(9 * time.Minute)},
		{ID: 3, Campaign: "fabric", Variant: ibVariant, Benchmark: "pingpong", Kind: "native", Kernel: "pingpong",
			Status: results.StatusFailed, Error: "rank 1 on n04: connection refused (errno 111)\nrendezvous aborted after 30 s",
			JobID: "1003", Step: "0", Nodes: []string{"n03", "n04"}, Tasks: 2,
			Start: t0.Add(10 * time.Minute), End: t0.Add(11 * time.Minute)},
	}
	var samples []store.Sample
	add := func(run int64, m model) {
		for _, s := range testSizes {
			x := s
			samples = append(samples,
				store.Sample{RunID: run, Sample: results.Sample{Metric: "latency", Unit: "us", X: &x, XUnit: "bytes", Value: m.latency(s)}},
				store.Sample{RunID: run, Sample: results.Sample{Metric: "bandwidth", Unit: "MB/s", X: &x, XUnit: "bytes", Value: m.bandwidth(s)}},
			)
		}
	}
	add(1, ibModel)
	add(2, gbeModel)
	// What the failed run measured before it died must not show anywhere.
	x := 1024.0
	samples = append(samples, store.Sample{RunID: 3, Sample: results.Sample{Metric: "bandwidth", Unit: "MB/s", X: &x, XUnit: "bytes", Value: 99999}})
	return Data{
		Runs:    runs,
		Samples: samples,
		Jobs: []store.Job{
			{ID: 1, SlurmID: "1001", Campaign: "fabric", State: "COMPLETED"},
			{ID: 2, SlurmID: "1002", Campaign: "fabric", State: "COMPLETED"},
			{ID: 3, SlurmID: "1003", Campaign: "fabric", State: "FAILED", ExitCode: "1:0"},
		},
		Generated: time.Date(2025, 3, 2, 8, 30, 0, 0, time.UTC),
		Version:   "v0.1.0-test",
	}
}

func writeReport(t testing.TB, d Data, opts ...Option) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, d, opts...); err != nil {
		t.Fatalf("Write: %v", err)
	}
	return buf.Bytes()
}
