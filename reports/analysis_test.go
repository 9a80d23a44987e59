package reports

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"codeberg.org/go-fonts/liberation/liberationsansregular"

	"github.com/sbench/sbench/internal/golden"
	"github.com/sbench/sbench/results"
	"github.com/sbench/sbench/store"
)

// clusterData is a campaign on four nodes as the runner records it: the
// matrix kernel with one slow cable (n3 → n1 at a third of the others),
// allreduce at 8 and 16 ranks, a bandwidth benchmark repeated three times,
// and HPL at 4 and 8 ranks, one of them invalid.
func clusterData() Data {
	t0 := time.Date(2025, 6, 1, 9, 0, 0, 0, time.UTC)
	nodes := []string{"n1", "n2", "n3", "n4"}
	hosts := hostsOf(nodes...)
	for i := range hosts {
		hosts[i].CPUFlags = []string{"avx2", "fma", "avx512f"}
		hosts[i].IB[0].RateGbps = 100
	}
	id := int64(0)
	var d Data
	newRun := func(bench, kernel, variant string, tasks int, status results.Status) int64 {
		id++
		d.Runs = append(d.Runs, store.Run{ID: id, Campaign: "acceptance", Variant: variant, Benchmark: bench, Kind: "native",
			Kernel: kernel, Status: status, JobID: fmt.Sprint(500 + id), Step: "0", Nodes: nodes, Tasks: tasks,
			Hosts: hosts, Start: t0.Add(time.Duration(id) * time.Minute), End: t0.Add(time.Duration(id)*time.Minute + 30*time.Second),
			Params: map[string]string{"ntasks": fmt.Sprint(tasks)}})
		return id
	}
	// The matrix: 10 GB/s and 2 µs everywhere but from n3 to n1.
	m := newRun("matrix", "matrix", "ppn=1", 4, results.StatusOK)
	for a, from := range nodes {
		for b, to := range nodes {
			if a == b {
				continue
			}
			bw, lat := 10000.0+float64(10*a+b), 2.0+0.01*float64(a+b)
			if from == "n3" && to == "n1" {
				bw, lat = 3300, 6.5
			}
			tags := map[string]string{"from": from, "to": to}
			d.Samples = append(d.Samples,
				store.Sample{RunID: m, Sample: results.Sample{Metric: "matrix_bandwidth", Unit: "MB/s", Value: bw, Pair: []int{a, b}, Tags: tags}},
				store.Sample{RunID: m, Sample: results.Sample{Metric: "matrix_latency", Unit: "us", Value: lat, Pair: []int{a, b}, Tags: tags}})
		}
	}
	// Allreduce at 8 and 16 ranks: same variant, two process counts.
	for _, n := range []int{8, 16} {
		r := newRun("allreduce", "allreduce", "ppn=auto", n, results.StatusOK)
		for k := 3; k <= 16; k++ {
			x := math.Ldexp(1, k)
			d.Samples = append(d.Samples, store.Sample{RunID: r, Sample: results.Sample{Metric: "latency", Unit: "us",
				X: results.F(x), XUnit: "bytes", Value: float64(n)*0.5 + x/2000}})
		}
	}
	// Bandwidth, three repeats that disagree at 1 MiB.
	for rep := 0; rep < 3; rep++ {
		r := newRun("bw", "bw", "ppn=1", 2, results.StatusOK)
		d.Runs[len(d.Runs)-1].Params["repeat"] = fmt.Sprint(rep)
		for k := 0; k <= 22; k++ {
			x := math.Ldexp(1, k)
			v := ibModel.bandwidth(x)
			if k == 20 {
				v = []float64{9000, 11000, 12000}[rep]
			}
			d.Samples = append(d.Samples, store.Sample{RunID: r, Sample: results.Sample{Metric: "bandwidth", Unit: "MB/s",
				X: results.F(x), XUnit: "bytes", Value: v, Repeat: rep}})
		}
	}
	// HPL at 4 ranks (valid) and 8 ranks (valid, and one invalid repeat).
	hplRun := func(tasks int, gflops float64, ok bool) {
		status := results.StatusOK
		if !ok {
			status = results.StatusInvalid
		}
		r := newRun("hpl", "hpl", "ppn=auto", tasks, status)
		d.Runs[len(d.Runs)-1].Params["tv"] = "WR11C2R4"
		for _, s := range []results.Scalar{{Name: "n", Value: 40000}, {Name: "nb", Value: 192}, {Name: "p", Value: 2},
			{Name: "q", Value: float64(tasks / 2)}, {Name: "time_s", Unit: "s", Value: 123.45}, {Name: "gflops", Unit: "Gflops", Value: gflops}} {
			d.Scalars = append(d.Scalars, store.Scalar{RunID: r, Scalar: s})
		}
		d.Checks = append(d.Checks, store.Check{RunID: r, Check: results.Check{Name: "||Ax-b||_oo/(eps*(||A||_oo*||x||_oo+||b||_oo)*N)",
			Value: map[bool]float64{true: 0.0042, false: 97.5}[ok], Threshold: 16, Op: "<", Passed: ok}})
		if !ok {
			d.Runs[len(d.Runs)-1].Error = "residual check failed"
		}
	}
	hplRun(4, 2100, true)
	hplRun(8, 4000, true)
	hplRun(8, 9999, false)
	d.Generated = t0.Add(24 * time.Hour)
	d.Version = "golden"
	return d
}

func TestClusterSummariesGolden(t *testing.T) {
	r, err := New(clusterData())
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "golden", "cluster.txt"), summaryText(r))
}

func familyOf(t *testing.T, r *Report, name string) *familyResult {
	t.Helper()
	for _, f := range r.families {
		if f.name == name {
			return f
		}
	}
	t.Fatalf("no family %s", name)
	return nil
}

func TestMatrixFindsTheSlowCable(t *testing.T) {
	r, err := New(clusterData())
	if err != nil {
		t.Fatal(err)
	}
	f := familyOf(t, r, "matrix")
	if len(f.matrices) != 2 {
		t.Fatalf("%d matrices, want bandwidth and latency", len(f.matrices))
	}
	for _, m := range f.matrices {
		s := m.summary
		if s.Nodes != 4 || s.Pairs != 12 {
			t.Errorf("%s: %d nodes, %d pairs, want 4 and 12 (both directions of 6 pairs)", m.metric, s.Nodes, s.Pairs)
		}
		if len(s.Worst) == 0 || s.Worst[0].From != "n3" || s.Worst[0].To != "n1" {
			t.Errorf("%s: worst pairs %v, want n3 → n1 first", m.metric, s.Worst)
		}
		if w := s.Worst[0]; w.Reverse == 0 || w.Reverse == w.Value {
			t.Errorf("%s: n3 → n1 has reverse %v; both directions must be read", m.metric, w.Reverse)
		}
		if len(m.figs) != 1 || r.figures[m.figs[0]].Kind != KindMatrix {
			t.Errorf("%s: no heatmap", m.metric)
		}
	}
	v := strings.Join(r.Verdict(), "\n")
	for _, want := range []string{
		"matrix, bandwidth (ppn=1): 12 node pairs, median 10012.50 MB/s; slowest pair n3 → n1 at 3300.00 MB/s (33% of the median)",
		"matrix, latency (ppn=1): 12 node pairs, median 2.03 µs; highest pair n3 → n1 at 6.50 µs (320% of the median)",
	} {
		if !strings.Contains(v, want) {
			t.Errorf("verdict lacks %q:\n%s", want, v)
		}
	}
	// The heatmap shades the slow cell and only it.
	m := f.matrices[0]
	if sf := m.shortfall(3300); sf < 0.6 {
		t.Errorf("shortfall of the slow pair %.2f, want about 0.67", sf)
	}
	if c := cellColor(m.shortfall(10020)); c.R < 0xF0 || c.G < 0xF0 {
		t.Errorf("a pair on par with the best is coloured %v, want near white", c)
	}
	if c := cellColor(m.shortfall(3300)); c != badColor {
		t.Errorf("the slow pair is coloured %v, want %v", c, badColor)
	}
}

func TestCollectivePerProcessCountAndScaling(t *testing.T) {
	r, err := New(clusterData())
	if err != nil {
		t.Fatal(err)
	}
	f := familyOf(t, r, "allreduce")
	if !f.collective || len(f.groups) != 1 {
		t.Fatalf("allreduce: collective %v, %d groups", f.collective, len(f.groups))
	}
	g := f.groups[0]
	var labels []string
	for _, s := range g.series {
		labels = append(labels, s.Label())
	}
	if got := strings.Join(labels, "; "); got != "ppn=auto, 8 ranks; ppn=auto, 16 ranks" {
		t.Errorf("allreduce lines are %q, want one per process count", got)
	}
	fig := r.figures[g.figs[0]]
	if got := strings.Join(fig.LegendEntries(), "; "); got != "ppn=auto, 8 ranks; ppn=auto, 16 ranks" {
		t.Errorf("allreduce legend %q", got)
	}
	// One configuration at two process counts: a scaling figure.
	if len(f.scaling) != 1 || f.scaling[0].what != "latency at the smallest size" || len(f.scaling[0].figs) != 1 {
		t.Fatalf("allreduce scaling %+v, want latency at the smallest size vs ranks", f.scaling)
	}
	pts := f.scaling[0].series[0].Points
	if len(pts) != 2 || pts[0].X != 8 || pts[1].X != 16 || pts[0].Y != 4.004 {
		t.Errorf("scaling points %+v, want (8, 4.004) and (16, …)", pts)
	}
	// HPL: valid runs only, at 4 and 8 ranks.
	h := familyOf(t, r, "hpl")
	if len(h.scaling) != 1 || len(h.scaling[0].series[0].Points) != 2 {
		t.Fatalf("hpl scaling %+v", h.scaling)
	}
	for _, p := range h.scaling[0].series[0].Points {
		if p.Y == 9999 || p.Max == 9999 {
			t.Errorf("the invalid run's 9999 Gflops is in the scaling figure")
		}
	}
}

func TestRepeatsBandAndLinkRate(t *testing.T) {
	r, err := New(clusterData())
	if err != nil {
		t.Fatal(err)
	}
	g := familyOf(t, r, "bw").groups[0]
	if len(g.series) != 1 || len(g.series[0].Runs) != 3 {
		t.Fatalf("bw: %d series; three repeats must make one line", len(g.series))
	}
	for _, p := range g.series[0].Points {
		if p.X == 1<<20 && (p.Y != 11000 || p.Min != 9000 || p.Max != 12000 || p.N != 3) {
			t.Errorf("at 1 MiB: %+v, want median 11000 of 3, band 9000–12000", p)
		}
	}
	fig := r.figures[g.figs[0]]
	if fig.Bands != 1 {
		t.Errorf("%d bands drawn, want 1", fig.Bands)
	}
	if len(fig.LinkRates) != 1 || fig.LinkRates[0] != 100 {
		t.Errorf("link rates %v, want the ports' 100 Gb/s", fig.LinkRates)
	}
	b := g.bandwidth[0]
	if b.LinkRate != 100 || math.Abs(b.PercentOfLink-100*b.Peak/12500) > 1e-9 {
		t.Errorf("summary link %v Gb/s, %v%%", b.LinkRate, b.PercentOfLink)
	}
	// --link-rate overrides provenance.
	r2, err := New(clusterData(), WithLinkRate(200))
	if err != nil {
		t.Fatal(err)
	}
	if got := familyOf(t, r2, "bw").groups[0].bandwidth[0].LinkRate; got != 200 {
		t.Errorf("WithLinkRate(200): link rate %v", got)
	}
}

func TestHPLRowsAndRpeak(t *testing.T) {
	r, err := New(clusterData())
	if err != nil {
		t.Fatal(err)
	}
	rows := familyOf(t, r, "hpl").hpl
	if len(rows) != 3 {
		t.Fatalf("%d HPL rows", len(rows))
	}
	// 4 nodes × 64 cores × 2.0 GHz × 32 flops/cycle (AVX-512 with FMA).
	if rows[0].Rpeak != 4*64*2.0*32 || math.Abs(rows[0].Efficiency-100*2100/16384.0) > 1e-9 {
		t.Errorf("Rpeak %v (%s), efficiency %v", rows[0].Rpeak, rows[0].RpeakHow, rows[0].Efficiency)
	}
	bad := rows[2]
	if bad.Valid || len(bad.Failed) != 1 {
		t.Errorf("the invalid run: valid %v, failed %v", bad.Valid, bad.Failed)
	}
	v := strings.Join(r.Verdict(), "\n")
	want := "hpl: best valid result 4000.00 Gflops with ppn=auto (N=40000, NB=192, P×Q=2×4), 24% of Rpeak 16384.00 Gflops. Not results: ppn=auto 9999.00 Gflops (FAILED 1 of 1 residual checks)."
	if !strings.Contains(v, want) {
		t.Errorf("verdict lacks\n  %s\ngot\n%s", want, v)
	}
	r2, err := New(clusterData(), WithRpeak(8000))
	if err != nil {
		t.Fatal(err)
	}
	if row := familyOf(t, r2, "hpl").hpl[1]; row.Rpeak != 8000 || row.Efficiency != 50 {
		t.Errorf("WithRpeak(8000): %v Gflops, %v%%", row.Rpeak, row.Efficiency)
	}
	text := pdfText(t, writeReport(t, clusterData()))
	for _, w := range []string{"HPL results", "WR11C2R4", "4.000e+03", "9.999e+03", "INVALID", "FAILED", "Residual checks", "12.8"} {
		if !strings.Contains(text, w) {
			t.Errorf("report lacks %q", w)
		}
	}
}

func TestGroupBy(t *testing.T) {
	d := testData()
	d.Runs[0].Labels = map[string]string{"fabric": "ib"}
	d.Runs[1].Labels = map[string]string{"fabric": "eth"}
	r, err := New(d, WithGroupBy("fabric"))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(r.Figures()[0].LegendEntries()[:2], ","); got != "ib,eth" {
		t.Errorf("grouped by fabric, the legend is %q", got)
	}
	if r.configs.what["pingpong"] != "fabric" {
		t.Errorf("the table heading names %q, want fabric", r.configs.what["pingpong"])
	}
	if _, err := New(d, WithGroupBy(" ")); err == nil {
		t.Errorf("an empty --group-by was accepted")
	}
}

func TestDisplayNames(t *testing.T) {
	for _, c := range []struct {
		lists [][]attr
		want  string
		what  string
	}{
		{[][]attr{{{key: "variant", value: "ib"}}, {{key: "variant", value: "tcp"}}}, "ib|tcp", ""},
		{[][]attr{{{key: "section", value: "use erdma for osu_bw"}}, {{key: "section", value: "use tcp for osu_bw"}}}, "erdma|tcp", "section"},
		// Words that leave two names equal are kept.
		{[][]attr{{{key: "section", value: "a b"}}, {{key: "section", value: "b a"}}}, "a b|b a", "section"},
		{[][]attr{{{key: "fabric", value: "ib"}, {key: "mpi", value: "ompi"}}, {{key: "fabric", value: "ib"}, {key: "mpi", value: "mvapich"}}}, "ompi|mvapich", "mpi"},
		{[][]attr{{{key: "fabric", value: "ib"}, {key: "mpi", value: "ompi"}}, {{key: "fabric", value: "eth"}, {key: "mpi", value: "mvapich"}}}, "fabric=ib, mpi=ompi|fabric=eth, mpi=mvapich", ""},
		{[][]attr{{{key: "campaign", value: "a"}, {key: "variant", value: "x"}}, {{key: "campaign", value: "b"}, {key: "variant", value: "y"}}}, "a/x|b/y", ""},
		{[][]attr{{{key: "fabric", value: "ib"}}}, "ib", "fabric"},
		// Extra attributes: a sweep parameter that follows the variant
		// adds nothing; node pairs of one variant are what tell it apart;
		// a lone configuration is named by its naming attributes only.
		{[][]attr{{{key: "variant", value: "ppn=1"}, {key: "ppn", value: "1", extra: true}},
			{{key: "variant", value: "ppn=2"}, {key: "ppn", value: "2", extra: true}}}, "ppn=1|ppn=2", ""},
		{[][]attr{{{key: "variant", value: "v"}, {key: "pair", value: "n1->n2", extra: true}},
			{{key: "variant", value: "v"}, {key: "pair", value: "n2->n1", extra: true}}}, "n1->n2|n2->n1", "pair"},
		{[][]attr{{{key: "variant", value: "v"}, {key: "ppn", value: "1", extra: true}}}, "v", ""},
	} {
		names, what := displayNames(c.lists)
		if got := strings.Join(names, "|"); got != c.want || what != c.what {
			t.Errorf("displayNames(%v) = %q, %q; want %q, %q", c.lists, got, what, c.want, c.what)
		}
	}
}

func TestWriteCSV(t *testing.T) {
	r, err := New(clusterData())
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := r.WriteCSV(dir); err != nil {
		t.Fatal(err)
	}
	read := func(name string) [][]string {
		f, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		rows, err := csv.NewReader(f).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		return rows
	}
	for _, f := range r.Figures() {
		if _, err := os.Stat(filepath.Join(dir, f.Name+".csv")); err != nil {
			t.Errorf("no CSV for figure %s", f.Name)
		}
	}
	found := false
	for _, row := range read("matrix-matrix_bandwidth-ppn-1.csv") {
		if row[0] == "n3" && row[1] == "n1" && row[2] == "3300" {
			found = true
		}
	}
	if !found {
		t.Errorf("the matrix CSV lacks n3,n1,3300")
	}
	sum := read("summary.csv")
	if strings.Join(sum[0], ",") != "benchmark,metric,configuration,ranks,figure,value,unit,at_size_bytes,runs" {
		t.Errorf("summary.csv header %v", sum[0])
	}
	var invalid bool
	for _, row := range sum {
		if row[0] == "hpl" && row[4] == "invalid" && row[5] == "9999" {
			invalid = true
		}
	}
	if !invalid {
		t.Errorf("summary.csv does not mark the invalid HPL run")
	}
}

func TestParseLinkRate(t *testing.T) {
	for in, want := range map[string]float64{
		"100Gbps": 100, "100 Gb/s": 100, "25G": 25, "800Mbps": 0.8, "800 Mb/s": 0.8, "12500MB/s": 100,
		"1.5GB/s": 12, "40": 40, "200 gbit/s": 200, "1Tbps": 1000,
	} {
		got, err := ParseLinkRate(in)
		if err != nil || math.Abs(got-want) > 1e-9 {
			t.Errorf("ParseLinkRate(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "fast", "-5Gbps", "10 furlongs", "0Gbps"} {
		if _, err := ParseLinkRate(in); err == nil {
			t.Errorf("ParseLinkRate(%q) accepted", in)
		}
	}
	if g, err := ParseLinkRateFlag("auto"); g != 0 || err != nil {
		t.Errorf("auto: %v, %v", g, err)
	}
}

func FuzzParseLinkRate(f *testing.F) {
	for _, s := range []string{"100Gbps", "12500 MB/s", "auto", "1e3G", "", "9999999999999999999999Gbps"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		g, err := ParseLinkRate(s)
		if err == nil && !(g > 0) || math.IsInf(g, 0) && err == nil {
			t.Fatalf("ParseLinkRate(%q) = %v with no error", s, g)
		}
	})
}

func TestProseSize(t *testing.T) {
	for in, want := range map[float64]string{1: "1 B", 32768: "32 KiB", 4 << 20: "4 MiB", 8388605: "8388605 B ≈ 8 MiB", 1000: "1000 B",
		1572867: "1572867 B", 1 << 40: "1 TiB", 1.5: "1.5 B"} {
		if got := proseSize(in); got != want {
			t.Errorf("proseSize(%v) = %q, want %q", in, got, want)
		}
	}
}

func TestLinearTicks(t *testing.T) {
	ticks := linearTicks(0, 6890)
	var labels []string
	for _, tk := range ticks {
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
	}
	if got := strings.Join(labels, " "); got != "0 1000 2000 3000 4000 5000 6000" {
		t.Errorf("ticks of 0–6890: %q", got)
	}
	labels = nil
	for _, tk := range linearTicks(0, 0.9) {
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
	}
	if got := strings.Join(labels, " "); got != "0.0 0.2 0.4 0.6 0.8" {
		t.Errorf("ticks of 0–0.9: %q", got)
	}
}

// A report whose text needs a font finds one in the font folders it is
// given and embeds it: Liberation Sans (which gonum measures text with) has
// Greek, which Windows-1252 lacks.
func TestFontSearchEmbedsFont(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "LiberationSans-Regular.ttf")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, liberationsansregular.TTF, 0o644); err != nil {
		t.Fatal(err)
	}
	d := testData()
	d.Title = "Ω Δ report"
	d.Runs[1].Variant = "tcp-Σ"
	r, err := New(d, WithFontSearch(dir))
	if err != nil {
		t.Fatal(err)
	}
	if r.FontPath() != path {
		t.Fatalf("font %q, want %q", r.FontPath(), path)
	}
	if len(r.Warnings()) != 0 {
		t.Errorf("warnings with a font that has every glyph: %q", r.Warnings())
	}
	var buf bytes.Buffer
	if _, err := r.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	text := pdfText(t, buf.Bytes())
	for _, want := range []string{"Ω Δ report", "tcp-Σ", "bandwidth (MB/s)", "µs"} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q", want)
		}
	}
	if strings.Contains(text, "printed as '?'") {
		t.Errorf("the report says characters were replaced")
	}
	// The same font given explicitly; deterministic bytes with it too.
	a := writeReport(t, d, WithFont(path))
	b := writeReport(t, d, WithFont(path))
	if !bytes.Equal(a, b) {
		t.Errorf("two reports with an embedded font differ")
	}
	if _, err := New(d, WithFont(filepath.Join(dir, "missing.ttf"))); err == nil || !strings.Contains(err.Error(), "missing.ttf") {
		t.Errorf("a missing font file: %v", err)
	}
}

// Every figure renders to a PNG with ink in it: no empty plot.
func TestEveryFigureRenders(t *testing.T) {
	r, err := New(clusterData())
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := r.SaveFigures(dir, "png"); err != nil {
		t.Fatal(err)
	}
	for _, f := range r.Figures() {
		if ink := inkFraction(t, filepath.Join(dir, f.Name+".png")); ink < 0.02 {
			t.Errorf("%s: %.3f ink, want a drawn figure", f.Name, ink)
		}
	}
}

// TestHPLNativeKernelRow: the runner's hpl kernel solves one system per
// rank on no process grid; the table and verdict say so instead of 0×0.
func TestHPLNativeKernelRow(t *testing.T) {
	d := clusterData()
	var keep []store.Run
	for _, r := range d.Runs {
		if r.Benchmark != "hpl" {
			keep = append(keep, r)
		}
	}
	d.Runs = keep
	id := int64(1000)
	run := d.Runs[0]
	run.ID, run.Benchmark, run.Kernel, run.Variant, run.Status = id, "hpl-native", "hpl", "ep", results.StatusOK
	run.Params = map[string]string{}
	d.Runs = append(d.Runs, run)
	for _, s := range []results.Scalar{{Name: "n", Value: 3000}, {Name: "nb", Value: 128}, {Name: "ranks", Value: 2},
		{Name: "time_s", Unit: "s", Value: 0.3}, {Name: "gflops", Unit: "Gflops", Value: 123}} {
		d.Scalars = append(d.Scalars, store.Scalar{RunID: id, Scalar: s})
	}
	d.Checks = append(d.Checks, store.Check{RunID: id, Check: results.Check{Name: "||Ax-b||_oo/(eps*(||A||_oo*||x||_oo+||b||_oo)*N)",
		Value: 0.005, Threshold: 16, Op: "<", Passed: true}})
	r, err := New(d)
	if err != nil {
		t.Fatal(err)
	}
	var got string
	for _, v := range r.Verdict() {
		if strings.HasPrefix(v, "hpl-native:") {
			got = v
		}
	}
	if !strings.Contains(got, "(N=3000, NB=128, one system per rank)") {
		t.Errorf("verdict %q", got)
	}
	if gridDim(0) != "—" || gridDim(12) != "12" {
		t.Errorf("gridDim: %q %q", gridDim(0), gridDim(12))
	}
}
