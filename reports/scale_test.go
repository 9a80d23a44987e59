package reports

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/sbench/sbench/results"
	"github.com/sbench/sbench/store"
)

// siteData is a site's months: two systems measured daily for 120 days
// (osu_bw pingpong curves), alpha's bandwidth 11% lower from day 60 when
// its InfiniBand firmware changes, every run with its tool output, a run
// in ten failed.
func siteData() Data {
	rng := rand.New(rand.NewPCG(5, 6))
	d := Data{Generated: time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC), Version: "test", Raw: map[int64]string{}}
	id := int64(0)
	for day := range 120 {
		when := time.Date(2025, 1, 1, 2, 0, 0, 0, time.UTC).AddDate(0, 0, day)
		for _, sys := range []string{"alpha", "beta"} {
			id++
			hosts := hostsOf(sys+"1", sys+"2")
			level := 1.0
			if sys == "alpha" && day >= 60 {
				level = 0.89
				for i := range hosts {
					hosts[i].IB[0].Firmware = "20.35"
				}
			}
			r := store.Run{ID: id, System: sys, Campaign: "nightly", Variant: "inter", Benchmark: "osu_bw", Kind: "tool", Tool: "osu_bw",
				Labels: map[string]string{"system": sys}, Status: results.StatusOK, JobID: fmt.Sprint(1000 + id), Step: "0",
				Nodes: []string{sys + "1", sys + "2"}, Tasks: 2, Hosts: hosts, Start: when, End: when.Add(time.Minute)}
			if id%10 == 0 {
				r.Status, r.Error = results.StatusFailed, fmt.Sprintf("srun: error: %s2: task 1: Exited with exit code 1 (run %d)", sys, id)
			}
			d.Runs = append(d.Runs, r)
			d.Raw[id] = fmt.Sprintf("# OSU MPI Bandwidth Test v7.3\n# Size Bandwidth (MB/s)\n1048576 %d\n", id)
			if r.Status != results.StatusOK {
				continue
			}
			for _, x := range testSizes {
				x := x
				v := ibModel.bandwidth(x) * level * (1 + 0.005*rng.NormFloat64())
				d.Samples = append(d.Samples, store.Sample{RunID: id, Sample: results.Sample{Metric: "bandwidth", Unit: "MB/s", X: &x, XUnit: "bytes", Value: v}})
			}
		}
	}
	return d
}

// quotingSource is Data's samples and outputs, remembering whose outputs
// the report read.
type quotingSource struct {
	dataSource
	read map[int64]bool
}

func (s *quotingSource) Raw(ctx context.Context, id int64) (string, error) {
	s.read[id] = true
	return s.dataSource.Raw(ctx, id)
}

// TestReportOfAnArchive: a report of months of two systems opens with the
// overview (the step with its firmware, each system's latest figure),
// sums its runs up per system instead of listing them, and quotes in its
// appendix the newest failed runs only — reading only their outputs —
// saying how many it left out and how to get them.
func TestReportOfAnArchive(t *testing.T) {
	d := siteData()
	src := &quotingSource{dataSource{&d}, map[int64]bool{}}
	r, err := NewFrom(context.Background(), d, src)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := r.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	text := pdfText(t, buf.Bytes())
	ov := r.Overview()
	if ov == nil || len(ov.Rows) != 2 || len(ov.Rows[0].Steps) != 1 || len(ov.Rows[1].Steps) != 0 {
		t.Fatalf("overview %+v", ov)
	}
	// The overview is on the title page; the verdict opens the next.
	first, _, _ := strings.Cut(text, "\f")
	if !strings.Contains(first, "\nOverview\n") || strings.Contains(first, "\nVerdict\n") {
		t.Errorf("the title page does not have the overview without the verdict:\n%s", first)
	}
	overview := section(t, text, "\nOverview\n", "\fVerdict\n")
	for _, want := range []string{"240 runs of 2 systems (alpha, beta) from 2025-01-01 to 2025-04-30; 24 failed", "System alpha", "System beta",
		"peak bandwidth", "from 2025-03-02", "firmware"} {
		if !strings.Contains(overview, want) {
			t.Errorf("the overview does not say %q:\n%s", want, overview)
		}
	}
	if !strings.Contains(text, "Warning: over time (Overview), 1 of 1 change of level is for the worse: alpha osu_bw peak bandwidth") {
		t.Errorf("the verdict does not name the step for the worse")
	}
	runs := section(t, text, "\nRuns\n", "Failed and invalid runs")
	if !strings.Contains(runs, "alpha") || !strings.Contains(runs, "beta") || !strings.Contains(runs, "120") {
		t.Errorf("the runs are not summed up per system:\n%s", runs)
	}
	appendix := text[strings.Index(text, "Appendix: runs"):]
	if n := strings.Count(appendix, "Run "); n != 24 {
		t.Errorf("the appendix quotes %d runs, want the 24 failed ones", n)
	}
	if !strings.Contains(appendix, "The appendix quotes the report's 24 failed or invalid runs, not its 216 others") ||
		!strings.Contains(appendix, "--appendix all") {
		t.Errorf("the appendix does not say what it left out:\n%.600s", appendix)
	}
	if len(src.read) != 24 {
		t.Errorf("the report read %d runs' outputs, want the 24 it quotes", len(src.read))
	}
	for id := range src.read {
		if !bad(r.byID[id]) {
			t.Errorf("the report read the output of run %d, which it does not quote", id)
		}
	}
	if pages := strings.Count(text, "\f"); pages > 20 {
		t.Errorf("%d pages for 240 runs", pages)
	}
}

// TestReportAppendixModes: --appendix all quotes every run, failed the
// failed ones, none leaves the appendix out; a small report quotes every
// run by default.
func TestReportAppendixModes(t *testing.T) {
	d := siteData()
	count := func(opts ...Option) int {
		text := pdfText(t, writeReport(t, d, opts...))
		i := strings.Index(text, "Appendix: runs")
		if i < 0 {
			return -1
		}
		return strings.Count(text[i:], "Run ")
	}
	if n := count(WithAppendix(AppendixAll)); n != 240 {
		t.Errorf("--appendix all quotes %d runs", n)
	}
	if n := count(WithAppendix(AppendixFailed)); n != 24 {
		t.Errorf("--appendix failed quotes %d runs", n)
	}
	if n := count(WithAppendix(AppendixNone)); n != -1 {
		t.Errorf("--appendix none has an appendix of %d runs", n)
	}
	small := testData()
	if n := count2(t, small); n != len(small.Runs) {
		t.Errorf("a report of %d runs quotes %d", len(small.Runs), n)
	}
	if _, err := New(d, WithAppendix("some")); err == nil {
		t.Error("WithAppendix took \"some\"")
	}
}

func count2(t *testing.T, d Data) int {
	text := pdfText(t, writeReport(t, d))
	return strings.Count(text[strings.Index(text, "Appendix: runs"):], "Run ")
}

// TestReportOverviewWhen: a small report of one campaign has no overview
// unless asked; a large one can do without.
func TestReportOverviewWhen(t *testing.T) {
	has := func(d Data, opts ...Option) bool {
		return strings.Contains(pdfText(t, writeReport(t, d, opts...)), "\nOverview\n")
	}
	if has(testData()) || !has(testData(), WithOverview(true)) {
		t.Error("the small report: overview by default, or none when asked")
	}
	if !has(siteData()) || has(siteData(), WithOverview(false)) {
		t.Error("the site's report: no overview by default, or one when told not to")
	}
}

// section is the text of the PDF from the first from to the next to.
func section(t *testing.T, text, from, to string) string {
	t.Helper()
	i := strings.Index(text, from)
	if i < 0 {
		t.Fatalf("no %q in the report", from)
	}
	rest := text[i+len(from):]
	if j := strings.Index(rest, to); j >= 0 {
		rest = rest[:j]
	}
	return rest
}

// TestReportManyHPLRuns: a year of HPL runs is summed up per
// configuration; the table lists each one's best valid run and the newest
// invalid runs, and says where every row is.
func TestReportManyHPLRuns(t *testing.T) {
	d := Data{Generated: time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)}
	for i := int64(1); i <= 80; i++ {
		variant := []string{"n4", "n8"}[i%2]
		r := store.Run{ID: i, Campaign: "weekly", Variant: variant, Benchmark: "hpl", Kind: "tool", Tool: "xhpl", Status: results.StatusOK,
			Params: map[string]string{"tv": "WR11C2R4"}, Tasks: 64, Start: d.Generated.AddDate(0, 0, int(i)-100)}
		gflops := 1000 + float64(i)
		if i%8 == 3 {
			r.Status, r.Error = results.StatusInvalid, "residual check failed"
			gflops = 99999
		}
		d.Runs = append(d.Runs, r)
		for _, s := range []results.Scalar{{Name: "n", Value: 40000}, {Name: "nb", Value: 192}, {Name: "p", Value: 8}, {Name: "q", Value: 8},
			{Name: "time_s", Unit: "s", Value: 123.45}, {Name: "gflops", Unit: "Gflops", Value: gflops}} {
			d.Scalars = append(d.Scalars, store.Scalar{RunID: i, Scalar: s})
		}
	}
	text := pdfText(t, writeReport(t, d))
	hpl := section(t, text, "HPL results", "Appendix")
	for _, want := range []string{"80 HPL runs, summed up per configuration", "the newest 10 of the 10", "sbench export --benchmark hpl lists every row",
		"1.080e+03 (run", "1.079e+03 (run"} {
		if !strings.Contains(hpl, want) {
			t.Errorf("the HPL section does not say %q:\n%s", want, hpl)
		}
	}
	if n := strings.Count(hpl, "WR11C2R4"); n != 12 {
		t.Errorf("%d HPL rows listed, want the 2 best and the 10 invalid", n)
	}
	if !strings.Contains(text, "4 more in the HPL table") {
		t.Errorf("the verdict lists the invalid runs without end")
	}
}
