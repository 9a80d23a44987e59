package reports

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sbench/sbench/internal/golden"
	"github.com/sbench/sbench/internal/testenv"
	"github.com/sbench/sbench/reports/typeset"
	"github.com/sbench/sbench/results"
	"github.com/sbench/sbench/store"
)

// articlesDir holds the articles' published outputs and what they are
// (articles.tsv, reports.tsv), shared with examples/articles/make-reports.sh.
const articlesDir = "../examples/articles"

// tsv reads a tab-separated file of articlesDir, skipping comments.
func tsv(t testing.TB, name string) [][]string {
	t.Helper()
	f, err := os.Open(filepath.Join(articlesDir, name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows [][]string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if l := sc.Text(); l != "" && !strings.HasPrefix(l, "#") {
			rows = append(rows, strings.Split(l, "\t"))
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return rows
}

// articleData reads an article's files as sbench ingest does — parsed,
// labelled, numbered in order — and the options its report is made with.
func articleData(t testing.TB, article string) (Data, []Option) {
	t.Helper()
	d := Data{Generated: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Version: "golden", Raw: map[int64]string{}}
	id := int64(0)
	for _, row := range tsv(t, "articles.tsv") {
		if row[0] != article {
			continue
		}
		bundles := parseFile(t, filepath.Join(articlesDir, "testdata", row[1]))
		labels := map[string]string{"article": article}
		if len(row) > 2 {
			for _, kv := range strings.Split(row[2], ";") {
				k, v, _ := strings.Cut(kv, "=")
				labels[k] = v
			}
		}
		for _, b := range bundles {
			id++
			for k, v := range labels {
				if b.Labels == nil {
					b.Labels = map[string]string{}
				}
				b.Labels[k] = v
			}
			d.Runs = append(d.Runs, runOf(id, row[1], b))
			d.Raw[id] = b.Raw
			for _, s := range b.Samples {
				d.Samples = append(d.Samples, store.Sample{RunID: id, Sample: s})
			}
			for _, s := range b.Scalars {
				d.Scalars = append(d.Scalars, store.Scalar{RunID: id, Scalar: s})
			}
			for _, c := range b.Checks {
				d.Checks = append(d.Checks, store.Check{RunID: id, Check: c})
			}
		}
	}
	if id == 0 {
		t.Fatalf("article %s has no files in articles.tsv", article)
	}
	var opts []Option
	for _, row := range tsv(t, "reports.tsv") {
		if row[0] == article {
			d.Title = row[3]
			if row[2] != "-" {
				opts = append(opts, WithGroupBy(row[2]))
			}
		}
	}
	return d, opts
}

// runOf is the archive's row of a bundle, as store.Ingest makes it.
func runOf(id int64, source string, b *results.Bundle) store.Run {
	tool := b.Benchmark.Normalized() // as the archive reads it
	return store.Run{
		ID: id, Campaign: b.Campaign, Variant: b.Variant, Params: b.Params, Labels: b.Labels,
		Benchmark: b.Benchmark.Name, Kind: b.Benchmark.Kind, Kernel: b.Benchmark.Kernel, Command: b.Benchmark.Command,
		Launcher: b.Benchmark.Launcher, Tool: tool.Tool, ToolBenchmark: tool.ToolBenchmark, ToolVer: b.Benchmark.ToolVersion,
		Status: b.Status, Error: b.Error, JobID: b.Job.ID, Step: b.Job.Step, ArrayIndex: b.Job.ArrayIndex,
		Nodes: b.Job.Nodes, Tasks: b.Job.Tasks, TasksPerNode: b.Job.TasksPerNode, Hosts: b.Hosts,
		Start: b.Start, End: b.End, RunnerVersion: b.RunnerVersion, Source: source, Origin: b.Source,
	}
}

// summaryText writes out everything the report computed — each family's
// summaries, HPL rows, matrices and the verdict — for golden files: a
// change in any number shows as a one-line diff.
func summaryText(r *Report) string {
	var b strings.Builder
	// Eight significant digits: the numbers as measured, without the last
	// bits that differ between machines that fuse multiply-adds and not.
	f := func(v float64) string {
		if v == math.Trunc(v) && math.Abs(v) < 1e15 {
			return strconv.FormatFloat(v, 'f', 0, 64)
		}
		return strconv.FormatFloat(v, 'g', 8, 64)
	}
	for _, fam := range r.families {
		fmt.Fprintf(&b, "family %s (collective %v)\n", fam.name, fam.collective)
		for _, g := range fam.groups {
			fmt.Fprintf(&b, "  %s %s, %d series, ranks %d, figures %d\n", g.kind, g.metric, len(g.series), g.ranks, len(g.figs))
			for _, s := range g.bandwidth {
				fmt.Fprintf(&b, "    %q: peak %s at %s, N½ %s, largest %s at %s, link %s Gb/s = %s%%, ratio %s, runs %v\n",
					label(s.Config, s.Ranks), f(s.Peak), f(s.PeakAt), f(s.HalfPeakAt), f(s.Largest), f(s.LargestAt),
					f(s.LinkRate), formatPercent(s.PercentOfLink), ratioCell(s.Ratio), s.Runs)
			}
			for _, s := range g.latency {
				fmt.Fprintf(&b, "    %q: %s at %s, %s at %s, common %s at %s, ratio %s, runs %v\n",
					label(s.Config, s.Ranks), f(s.Smallest), f(s.SmallestAt), f(s.Largest), f(s.LargestAt),
					f(s.AtCommon), f(s.CommonAt), ratioCell(s.Ratio), s.Runs)
			}
		}
		for _, m := range fam.matrices {
			s := m.summary
			fmt.Fprintf(&b, "  matrix %s %q: %d nodes, %d pairs, min %s median %s max %s, worst %v, asymmetry %s %v\n",
				s.Metric, s.Config, s.Nodes, s.Pairs, f(s.Min), f(s.Median), f(s.Max), s.Worst, formatPercent(100*s.Asymmetry), s.AsymmetryPair)
		}
		for _, h := range fam.hpl {
			fmt.Fprintf(&b, "  hpl run %d %q %s N=%d NB=%d P=%d Q=%d time %s gflops %s rpeak %s valid %v failed %q\n",
				h.Run, h.Config, h.TV, h.N, h.NB, h.P, h.Q, f(h.Time), f(h.Gflops), f(h.Rpeak), h.Valid, h.Failed)
		}
		for _, v := range fam.values {
			fmt.Fprintf(&b, "  value %s %q: median %s min %s max %s %s, n %d\n", v.Metric, v.Config, f(v.Median), f(v.Min), f(v.Max), v.Unit, v.N)
		}
		for _, s := range fam.scaling {
			fmt.Fprintf(&b, "  scaling %s (%s), %d series\n", s.what, s.unit, len(s.series))
		}
	}
	b.WriteString("figures:\n")
	for _, fig := range r.figures {
		fmt.Fprintf(&b, "  %s [%s] %q legend %q link rates %v bands %d hidden %d\n", fig.Name, fig.Kind, fig.Title, fig.LegendEntries(), fig.LinkRates, fig.Bands, fig.Hidden)
	}
	b.WriteString("verdict:\n")
	for _, v := range r.verdict {
		b.WriteString("  " + v + "\n")
	}
	b.WriteString("notes:\n")
	for _, n := range r.notes {
		b.WriteString("  " + n + "\n")
	}
	return b.String()
}

// The summaries and verdict of each article's report, as computed from the
// articles' own published numbers.
func TestArticleSummariesGolden(t *testing.T) {
	for _, article := range []string{"000", "002", "003", "004"} {
		t.Run(article, func(t *testing.T) {
			d, opts := articleData(t, article)
			r, err := New(d, opts...)
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("testdata", "golden", "article-"+article+".txt"), summaryText(r))
		})
	}
}

// The numbers an engineer reads in the articles are the ones the verdict
// states, whatever the golden files say: these are checked against the
// articles' text, not against sbench's previous output. Each article
// published one run per configuration: the verdict quotes its numbers and
// says so, and states no factor between configurations (one run has no
// known spread), however far apart they are.
func TestArticleVerdicts(t *testing.T) {
	cases := map[string][]string{
		// 004: "eRDMA の帯域幅はメッセージサイズが 32 KB でピークに達し…"
		"004": {
			"osu_bw: erdma reached 6264.41 MB/s at 32 KiB (1 run: no spread known); tcp 3160.96 MB/s at 128 KiB (1 run: no spread known): with 1 run each no factor is claimed: their spread is unknown.",
			"osu_bw: the curves differ most at 32 KiB, where erdma has 6264.41 MB/s and tcp 1731.67 MB/s (with 1 run each no factor is claimed: their spread is unknown).",
			"osu_bw: beyond its peak, erdma falls to 1637.17 MB/s at 4 MiB (26% of its peak).",
			"osu_latency: at 1 B, erdma has 11.01 µs latency (1 run: no spread known), tcp 16.07 µs (1 run: no spread known); with 1 run each no factor is claimed: their spread is unknown.",
		},
		// 000: both HPL runs FAILED two of their three residual checks.
		"000": {
			"hpl: no valid result. Not results: InfiniBand 7.24 Gflops (FAILED 2 of 3 residual checks); Fast Ethernet (100 Mb/s) 5.60 Gflops (FAILED 2 of 3 residual checks).",
			"perf_main RC BW: InfiniBand (perf_main RC) reached 981.05 MB/s at 125 KiB (1 run: no spread known; 78% of the 10 Gb/s link).",
		},
		// 003: "レイテンシ: 1.67 usec", "帯域幅（256 MiBメッセージサイズ）: 12,254 MB/s"
		"003": {
			"osu_bw: Open MPI 5.0.8 + UCX reached 12254.16 MB/s at 256 MiB (1 run: no spread known; 98% of the 100 Gb/s link).",
			"osu_latency: at 1 B, Open MPI 5.0.8 + UCX has 1.67 µs latency (1 run: no spread known).",
		},
		// 002: both directions reach ~3958 MB/s; one is half as fast at 256 B.
		"002": {
			"osu_bw: the curves differ most at 256 B, where cent064 → cent063 has 604.66 MB/s and cent063 → cent064 1289.30 MB/s (with 1 run each no factor is claimed: their spread is unknown).",
		},
	}
	for article, want := range cases {
		d, opts := articleData(t, article)
		r, err := New(d, opts...)
		if err != nil {
			t.Fatal(err)
		}
		got := strings.Join(r.Verdict(), "\n")
		for _, w := range want {
			if !strings.Contains(got, w) {
				t.Errorf("article %s: verdict lacks\n  %s\ngot:\n%s", article, w, got)
			}
		}
	}
}

// The acceptance check's report: 004 and the two HPL runs of 000, as a
// PDF whose text holds the computed numbers, rendered page by page.
func TestArticleReportPDF(t *testing.T) {
	d4, _ := articleData(t, "004")
	d0, _ := articleData(t, "000")
	// Only 000's HPL runs, renumbered after 004's.
	d := d4
	next := int64(len(d4.Runs))
	ids := map[int64]int64{}
	for _, run := range d0.Runs {
		if run.Benchmark != "hpl" {
			continue
		}
		next++
		ids[run.ID] = next
		d.Raw[next] = d0.Raw[run.ID]
		run.ID = next
		d.Runs = append(d.Runs, run)
	}
	for _, s := range d0.Scalars {
		if n, ok := ids[s.RunID]; ok {
			s.RunID = n
			d.Scalars = append(d.Scalars, s)
		}
	}
	for _, c := range d0.Checks {
		if n, ok := ids[c.RunID]; ok {
			c.RunID = n
			d.Checks = append(d.Checks, c)
		}
	}
	d.Title = "eRDMA vs TCP, and HPL on InfiniBand vs Fast Ethernet"
	path := savePDF(t, t.TempDir(), "r.pdf", writeReport(t, d))
	pages := pageCount(t, path)
	if pages < 4 {
		t.Errorf("%d pages, want at least 4", pages)
	}
	text := pdfFileText(t, path)
	for _, want := range []string{
		"6264.41", "16.07", "11.01", "7.240e+00", "7.24 Gflops", "FAILED", "INVALID",
		"||Ax-b||_oo/(eps*||A||_1*N)", // the failed check, by name
		"WR10R2C4", "20000", "736.74",
		"Appendix: runs", "# OSU MPI Bandwidth Test v7.5",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("report text lacks %q", want)
		}
	}
	renderPages(t, path, pages)
}

// Every article's report renders, page by page, with its title and
// numbers extractable; with a CJK font on the system, the Korean and
// Japanese titles come out as text.
func TestArticleReportsRender(t *testing.T) {
	for _, row := range tsv(t, "reports.tsv") {
		article, title := row[0], row[3]
		t.Run(article, func(t *testing.T) {
			d, opts := articleData(t, article)
			r, err := New(d, append(opts, WithFontSearch())...)
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if _, err := r.WriteTo(&buf); err != nil {
				t.Fatal(err)
			}
			path := savePDF(t, keepDir(t), article+".pdf", buf.Bytes())
			renderPages(t, path, pageCount(t, path))
			text := strings.Join(strings.Fields(pdfFileText(t, path)), " ")
			if r.FontPath() == "" {
				// The title prints as '?', and the report says so; the
				// title itself is not checked (or, in CI, a failure).
				if !strings.Contains(text, "they are printed as '?'") {
					t.Errorf("the report does not say its title's characters could not be shown")
				}
				testenv.Require(t, fmt.Sprintf("no CJK TrueType font found in %v (install fonts-ipafont-gothic and fonts-nanum)", typeset.SystemFontDirs))
			}
			// pdftotext may put spaces between CJK glyphs: compare without.
			squeeze := func(s string) string { return strings.Join(strings.Fields(s), "") }
			if !strings.Contains(squeeze(text), squeeze(title)) {
				t.Errorf("with font %s the title %q is not in the text:\n%.400s", r.FontPath(), title, text)
			}
			for _, v := range r.Verdict() {
				first := strings.Fields(v)[0]
				if !strings.Contains(text, first) {
					t.Errorf("verdict %q is not in the text", v)
				}
			}
		})
	}
}
