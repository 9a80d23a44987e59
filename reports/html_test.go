package reports

import (
	"bytes"
	"html"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/sbench/sbench/sizes"
)

func writeHTML(t *testing.T, r *Report) string {
	t.Helper()
	var buf bytes.Buffer
	n, err := r.WriteHTML(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if n != int64(buf.Len()) {
		t.Errorf("WriteHTML says %d bytes, wrote %d", n, buf.Len())
	}
	return buf.String()
}

// htmlReports are the reports the HTML tests read: every article's and
// the cluster campaign's (matrix, collectives, HPL with an invalid row).
func htmlReports(t *testing.T) map[string]*Report {
	t.Helper()
	out := map[string]*Report{}
	for _, a := range []string{"000", "002", "003", "004"} {
		d, opts := articleData(t, a)
		r, err := New(d, append([]Option{WithFontSearch()}, opts...)...)
		if err != nil {
			t.Fatal(err)
		}
		out["article "+a] = r
	}
	r, err := New(clusterData())
	if err != nil {
		t.Fatal(err)
	}
	out["cluster"] = r
	return out
}

var (
	tagRE     = regexp.MustCompile(`<[^>]+>`)
	sectionRE = regexp.MustCompile(`(?s)<section>\n<h2 id="[^"]*">(.*?)</h2>(.*?)</section>`)
	liRE      = regexp.MustCompile(`(?s)<li[^>]*>(.*?)</li>`)
	tdRE      = regexp.MustCompile(`(?s)<td[^>]*>(.*?)</td>`)
)

func plainText(s string) string { return html.UnescapeString(tagRE.ReplaceAllString(s, "")) }

// sections are the page's level-2 sections by heading.
func sections(page string) map[string]string {
	out := map[string]string{}
	for _, m := range sectionRE.FindAllStringSubmatch(page, -1) {
		out[plainText(m[1])] += m[2]
	}
	return out
}

func cells(section string) map[string]bool {
	out := map[string]bool{}
	for _, m := range tdRE.FindAllStringSubmatch(section, -1) {
		out[strings.TrimSpace(plainText(m[1]))] = true
	}
	return out
}

// The HTML report says what the PDF says: its verdict is the report's
// Verdict, line for line, and every number of Summaries is a cell of its
// benchmark's tables, formatted as the PDF's tables format it.
func TestHTMLReportSameNumbersAsPDF(t *testing.T) {
	for name, r := range htmlReports(t) {
		t.Run(name, func(t *testing.T) {
			page := writeHTML(t, r)
			secs := sections(page)
			var verdict []string
			for _, m := range liRE.FindAllStringSubmatch(secs["Verdict"], -1) {
				verdict = append(verdict, plainText(m[1]))
			}
			if !slices.Equal(verdict, r.Verdict()) {
				t.Errorf("verdict:\n%q\nwant Verdict():\n%q", verdict, r.Verdict())
			}
			for _, s := range r.Summaries() {
				sec := ""
				for h, body := range secs {
					if strings.HasPrefix(h, "Benchmark: "+s.Benchmark) || strings.HasPrefix(h, "Metric family: "+s.Benchmark) {
						sec += body
					}
				}
				if sec == "" {
					t.Errorf("no section for benchmark %s in %v", s.Benchmark, slices.Sorted(maps.Keys(secs)))
					continue
				}
				got := cells(sec)
				var want []string
				for _, bs := range s.Bandwidth {
					for _, b := range bs {
						want = append(want, formatValue(b.Peak), sizes.Format(b.PeakAt), formatValue(b.Largest)+" @ "+sizes.Format(b.LargestAt), ratioCell(b.Ratio), strconv.Itoa(len(b.Runs)))
					}
				}
				for _, ls := range s.Latency {
					for _, l := range ls {
						want = append(want, formatValue(l.Smallest), formatValue(l.Largest))
						if l.AtCommon > 0 {
							want = append(want, formatValue(l.AtCommon), ratioCell(l.Ratio))
						}
					}
				}
				for _, h := range s.HPL {
					want = append(want, formatHPLGflops(h.Gflops), strconv.Itoa(h.N), formatHPLTime(h.Time))
				}
				for _, v := range s.Values {
					want = append(want, formatNumber(v.Median), formatNumber(v.Min), formatNumber(v.Max))
				}
				for _, m := range s.Matrices {
					for _, w := range m.Worst {
						want = append(want, formatValue(w.Value))
					}
					if !strings.Contains(plainText(sec), "minimum "+formatValue(m.Min)+", median "+formatValue(m.Median)) {
						t.Errorf("%s: matrix line lacks min %s and median %s", s.Benchmark, formatValue(m.Min), formatValue(m.Median))
					}
				}
				if len(want) == 0 {
					t.Errorf("%s: summary has no number to look for", s.Benchmark)
				}
				for _, w := range want {
					if !got[w] {
						t.Errorf("%s: no table cell %q", s.Benchmark, w)
					}
				}
			}
		})
	}
}

// The page loads nothing: no source, style sheet, font or script from
// anywhere, and a policy that forbids any.
func TestHTMLReportSelfContained(t *testing.T) {
	for name, r := range htmlReports(t) {
		page := writeHTML(t, r)
		for _, bad := range []string{"<link", "src=", "@import", "url(", "http://", "https://", "//fonts", "<iframe", "<img"} {
			if s := strings.ReplaceAll(page, `xmlns="http://www.w3.org/2000/svg"`, ""); strings.Contains(s, bad) {
				t.Errorf("%s: page contains %q", name, bad)
			}
		}
		if !strings.Contains(page, `content="default-src 'none'; img-src data:;`) {
			t.Errorf("%s: no Content-Security-Policy forbidding requests", name)
		}
		if !strings.HasPrefix(page, "<!DOCTYPE html>") || !strings.Contains(page, "</html>") {
			t.Errorf("%s: not a whole HTML document", name)
		}
	}
}

// Writing the HTML leaves the PDF as it was: same bytes before and after.
func TestWriteHTMLLeavesPDF(t *testing.T) {
	r := htmlReports(t)["cluster"]
	var before, after bytes.Buffer
	if _, err := r.WriteTo(&before); err != nil {
		t.Fatal(err)
	}
	writeHTML(t, r)
	if _, err := r.WriteTo(&after); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before.Bytes(), after.Bytes()) {
		t.Error("the PDF changed after WriteHTML")
	}
}

// HPL's invalid rows are struck through in red with the checks they
// failed under them, as in the PDF; the runs table's failed run carries
// its error; run ids link to the appendix.
func TestHTMLReportInvalidRows(t *testing.T) {
	page := writeHTML(t, htmlReports(t)["article 000"])
	hpl := sections(page)["Benchmark: hpl"]
	var rows [][]string
	for _, row := range regexp.MustCompile(`(?s)<tr class="bad">(.*?)</tr>`).FindAllStringSubmatch(hpl, -1) {
		if strings.Contains(row[1], "INVALID") {
			rows = append(rows, row)
		}
	}
	if len(rows) != 2 {
		t.Fatalf("%d red HPL rows, want 2 (both runs failed their checks)", len(rows))
	}
	for _, row := range rows {
		if !strings.Contains(row[1], "<s>") || !strings.Contains(row[1], "<td>INVALID</td>") {
			t.Errorf("invalid row not struck, or its result struck too: %s", row[1])
		}
	}
	if !strings.Contains(hpl, `<tr class="detail bad"><td></td><td colspan="10">check ||Ax-b||_oo/(eps*||A||_1*N) FAILED`) {
		t.Errorf("no failed check under the invalid row:\n%s", hpl)
	}
	for _, id := range []string{"1", "5"} {
		if !strings.Contains(page, `<a href="#run-`+id+`">`+id+`</a>`) || !strings.Contains(page, `id="run-`+id+`"`) {
			t.Errorf("run %s: no link from the tables to its appendix entry", id)
		}
	}
}

// A figure's points tell their value, size and run on hover, and link to
// the run; its legend entries toggle the series.
func TestHTMLReportFigureInteraction(t *testing.T) {
	page := writeHTML(t, htmlReports(t)["article 004"])
	want := `data-tip="erdma
32 KiB: 6264.41 MB/s
run 3" data-href="#run-3"`
	if !strings.Contains(page, want) {
		t.Errorf("no hover target for erdma's peak:\n%s", want)
	}
	for _, s := range []string{`<g class="sb-leg" data-s="0">`, `<g class="sb-leg" data-s="1">`, `<g class="sb-s" data-s="1">`} {
		if !strings.Contains(page, s) {
			t.Errorf("page lacks %s", s)
		}
	}
	if n := strings.Count(page, `<svg class="sb-fig"`); n != len(htmlReports(t)["article 004"].Figures()) {
		t.Errorf("%d figures in the page, the report has %d", n, len(htmlReports(t)["article 004"].Figures()))
	}
}

// The screening section and the fleet heatmaps, added to the PDF's
// sections, are in the HTML page too, with the same verdict and drain
// list, and the page stays small enough to open (a 64-node screening).
func TestHTMLReportScreening(t *testing.T) {
	r, err := New(fleetData(t, fleet64))
	if err != nil {
		t.Fatal(err)
	}
	page := writeHTML(t, r)
	secs := sections(page)
	sc, ok := secs["Screening"]
	if !ok {
		t.Fatalf("no Screening section among %v", slices.Sorted(maps.Keys(secs)))
	}
	for _, want := range []string{"4 bad nodes (n17, n50, n60, n61), 1 one-way node link (n33→*), 1 bad link (n5→n40); drain n[17,50,60-61].",
		`scontrol update NodeName=n17 State=DRAIN \`} {
		if !strings.Contains(sc, want) {
			t.Errorf("screening section lacks %q", want)
		}
	}
	if !strings.Contains(secs["Verdict"], "<li>Screening: 4 bad nodes") {
		t.Error("the verdict lacks the screening's")
	}
	if n, figs := strings.Count(page, `<svg class="sb-fig"`), len(r.Figures()); n != figs {
		t.Errorf("%d figures in the page, the report has %d", n, figs)
	}
	t.Logf("64-node screening: %d KB of HTML", len(page)/1024)
}

// A "vs best" factor is given only where the configuration and the best
// one each rest on repeated runs: testData has one run a configuration,
// and gets none; the same curves measured twice get 1.00× and the ratio.
func TestVsBestNeedsRepeatedRuns(t *testing.T) {
	vsBest := func(d Data) []string {
		r, err := New(d)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, s := range r.Summaries() {
			for _, bs := range s.Bandwidth {
				for _, b := range bs {
					out = append(out, ratioCell(b.Ratio))
				}
			}
			for _, ls := range s.Latency {
				for _, l := range ls {
					out = append(out, ratioCell(l.Ratio))
				}
			}
		}
		page := plainText(writeHTML(t, r))
		if !strings.Contains(page, "vs best: the peak over the best configuration's, given where both rest on 2 or more runs.") {
			t.Error("the bandwidth table's note does not say when a factor is given")
		}
		return out
	}
	if got := vsBest(testData()); !slices.Equal(got, []string{"—", "—", "—", "—"}) {
		t.Errorf("one run a configuration: vs best cells %q, want none given", got)
	}
	d := testData()
	d.Runs = append(d.Runs, d.Runs[0], d.Runs[1])
	d.Runs[3].ID, d.Runs[4].ID = 11, 12
	for _, s := range slices.Clone(d.Samples) {
		if s.RunID == 1 || s.RunID == 2 {
			s.RunID += 10
			d.Samples = append(d.Samples, s)
		}
	}
	got := vsBest(d)
	peakRatio := formatRatio(gbeModel.bandwidth(testSizes[len(testSizes)-1]), ibModel.bandwidth(testSizes[len(testSizes)-1]))
	if len(got) != 4 || !slices.Contains(got, "1.00×") || !slices.Contains(got, peakRatio) || slices.Contains(got, "—") {
		t.Errorf("two runs a configuration: vs best cells %q, want 1.00× for the best and %s for the other bandwidth", got, peakRatio)
	}
}
