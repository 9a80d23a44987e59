package reports

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sbench/sbench/compare"
	"github.com/sbench/sbench/reports/typeset"
	"github.com/sbench/sbench/results"
)

// overviewRuns is how many runs make a report long enough to open with an
// overview, whatever they span.
const overviewRuns = 100

// minTestedRuns is the fewest runs a series needs for a change of level in
// it to be tested at 0.05, the overview's level.
var minTestedRuns = compare.MinStepRuns(0.05)

// Overview is the overview of the report's runs (compare.Overview): per
// system, benchmark and configuration, a key figure over time. It is
// computed whether the PDF shows it or not, for other views.
func (r *Report) Overview() *compare.Overview { return r.overview }

// showOverview says whether the PDF opens with the overview: asked for, or
// by default when the runs span several systems or campaigns, more than a
// week, or are many.
func (r *Report) showOverview() bool {
	switch {
	case r.opts.overview != 0:
		return r.opts.overview > 0 && r.overview != nil && len(r.overview.Rows) > 0
	case r.overview == nil || len(r.overview.Rows) == 0:
		return false
	}
	ov := r.overview
	return len(ov.Systems) > 1 || len(r.campaigns()) > 1 || ov.Runs >= overviewRuns ||
		!ov.First.IsZero() && ov.Last.Sub(ov.First) > 7*24*time.Hour
}

// overviewVerdict is the verdict's sentence on the overview: the steps
// for the worse, which a reader of a year of runs must not miss.
func (r *Report) overviewVerdict() []string {
	if !r.showOverview() {
		return nil
	}
	var worse []string
	steps := 0
	for _, row := range r.overview.Rows {
		for _, s := range row.Steps {
			steps++
			if s.Change == compare.Worse {
				worse = append(worse, fmt.Sprintf("%s %s on %s", rowTitle(row), signedPercent(s.Delta), s.When.UTC().Format("2006-01-02")))
			}
		}
	}
	switch {
	case steps == 0 && r.overview.Tested == 0:
		return []string{fmt.Sprintf("Over time (Overview): no series of the %d has the %d runs a change of level can be tested with.", len(r.overview.Rows), minTestedRuns)}
	case steps == 0:
		return []string{fmt.Sprintf("Over time (Overview): no figure changed level beyond 5%% in the %d series with the runs to tell.", r.overview.Tested)}
	case len(worse) == 0:
		return []string{fmt.Sprintf("Over time (Overview): %d change%s of level, none for the worse.", steps, results.Plural(steps))}
	}
	shown := worse
	if len(shown) > 4 {
		shown = append(shown[:4:4], fmt.Sprintf("%d more", len(worse)-4))
	}
	return []string{fmt.Sprintf("Warning: over time (Overview), %d of %d change%s of level %s for the worse: %s.",
		len(worse), steps, results.Plural(steps), map[bool]string{true: "is", false: "are"}[len(worse) == 1], strings.Join(shown, "; "))}
}

// rowTitle names a row in sentences: "alpha osu_bw (variant=inter) peak
// bandwidth".
func rowTitle(row compare.OverviewRow) string {
	if row.System != "" {
		return row.System + " " + rowName(row) + " " + row.What
	}
	return rowName(row) + " " + row.What
}

// rowName is a row's benchmark and configuration: "osu_bw (variant=inter)".
func rowName(row compare.OverviewRow) string {
	if len(row.Config) > 0 {
		return row.Benchmark + " (" + strings.Join(row.Config, ", ") + ")"
	}
	return row.Benchmark
}

// signedPercent is compare.SignedPercent with one decimal and a typeset
// minus.
func signedPercent(f float64) string {
	return strings.Replace(compare.SignedPercent(f, 1), "-", "−", 1)
}

// overviewSection draws the overview: a table per system — each series'
// figure, its latest value, a trace of it over time with its steps marked,
// its change since its first level, its failures — then the steps, each
// with what changed in the runs' provenance across it.
func (r *Report) overviewSection(d *content) {
	if !r.showOverview() {
		return
	}
	ov := r.overview
	// On the title page, right under the title: what a site's years come
	// to is what its report opens with.
	d.heading("Overview", h1Size, 60)
	span := ""
	if !ov.First.IsZero() {
		span = fmt.Sprintf(" from %s to %s", ov.First.UTC().Format("2006-01-02"), ov.Last.UTC().Format("2006-01-02"))
	}
	systems := slices.DeleteFunc(slices.Clone(ov.Systems), func(s string) bool { return s == "" })
	where := ""
	if len(systems) > 0 {
		where = fmt.Sprintf(" of %d system%s (%s)", len(systems), results.Plural(len(systems)), strings.Join(systems, ", "))
	}
	d.para(fmt.Sprintf("%d runs%s%s; %d failed, %d invalid. Each line follows one figure of one benchmark and configuration over time: "+
		"its latest value, a trace of every run (medians of equal spans when there are many; red ticks: changes of level), "+
		"its level now against its first level, and the runs that failed. Changes of level are found as sbench history finds them "+
		"(binary segmentation, permutation test), in a series of %d runs or more, and listed beyond 5%%; the %d series so tested are "+
		"one family, held to a false discovery rate of 0.05 (Benjamini–Hochberg), so that noise in some of many series is not "+
		"taken for a change.",
		ov.Runs, where, span, ov.Failed, ov.Invalid, minTestedRuns, ov.Tested), "", smallSize, grey)
	d.space(4)
	bySystem := map[string][]compare.OverviewRow{}
	for _, row := range ov.Rows {
		bySystem[row.System] = append(bySystem[row.System], row)
	}
	for _, sys := range slices.Sorted(maps.Keys(bySystem)) {
		rows := bySystem[sys]
		title := "System " + sys
		if sys == "" {
			title = "Runs of no system"
		}
		if len(bySystem) > 1 || sys != "" {
			d.heading(title, h2Size, 80)
		}
		cols := []column{
			{title: "Benchmark", width: 128},
			{title: "Figure", width: 98},
			{title: "Latest", width: 56, right: true},
			{title: "Last run", width: 64, right: true},
			{title: "Trend", width: 80, art: true},
			{title: "Level", width: 46, right: true},
			{title: "Failed", right: true},
		}
		t := d.table(cols)
		for _, row := range rows {
			c := redIf(slices.ContainsFunc(row.Steps, func(s compare.StepChange) bool { return s.Change == compare.Worse }))
			level := "—"
			if row.Runs > 0 {
				level = signedPercent(row.Trend)
			}
			latest, last := "—", "—"
			if row.Runs > 0 {
				latest = formatValue(row.Latest.Value)
				last = row.Latest.When.UTC().Format("2006-01-02")
				if row.LatestOutside {
					latest += " !"
				}
			}
			failed := "—"
			if n := row.Failed + row.Invalid; n > 0 {
				failed = strconv.Itoa(n)
			}
			t.row([]string{rowName(row), figureName(row), latest, last, "", level, failed}, c, nil).Art = func(doc *typeset.Document, x, y, w, h float64) {
				drawTrace(doc, x, y, w, h, row)
			}
		}
		d.space(4)
		for _, row := range rows {
			for _, s := range row.Steps {
				col := redIf(s.Change == compare.Worse)
				d.bullet(stepText(row, s), col)
			}
		}
		d.space(6)
	}
	if outside := countFunc(ov.Rows, func(row *compare.OverviewRow) bool { return row.LatestOutside }); outside > 0 {
		d.para(fmt.Sprintf("!: the latest run of %d series lies outside its control band (mean ± 3 standard deviations of the runs before it at its level): sbench history shows it.", outside), "I", smallSize, grey)
	}
}

// figureName is what a row's figure is, in what unit.
func figureName(row compare.OverviewRow) string {
	if row.Runs == 0 {
		return "no ok run"
	}
	if row.Unit == "" {
		return row.What
	}
	return row.What + " (" + unitLabel(row.Unit) + ")"
}

// stepText says what changed at a step and why it may have: "osu_bw
// (variant=inter) peak bandwidth: 23100 → 20560 MB/s (−11.0%) on
// 2024-03-12, run 12345 (job 100123.0); IB firmware 20.31 → 20.35".
func stepText(row compare.OverviewRow, s compare.StepChange) string {
	verdict := map[compare.Change]string{compare.Worse: "worse", compare.Better: "better", compare.Changed: "changed"}[s.Change]
	b := fmt.Sprintf("%s %s: %s → %s %s (%s, %s) from %s, run %d", rowName(row), row.What, formatValue(s.Before), formatValue(s.After), row.Unit,
		signedPercent(s.Delta), verdict, s.When.UTC().Format("2006-01-02"), s.Run)
	if s.Job != "" {
		b += " (job " + s.Job + ")"
	}
	if len(s.Provenance) == 0 {
		return b + "; nothing recorded in the runs' provenance differs across it."
	}
	var diffs []string
	for i, p := range s.Provenance {
		if i == 4 {
			diffs = append(diffs, fmt.Sprintf("%d more", len(s.Provenance)-4))
			break
		}
		diffs = append(diffs, fmt.Sprintf("%s %s → %s", p.Field, clip(p.Before), clip(p.After)))
	}
	return b + "; across it: " + strings.Join(diffs, ", ") + "."
}

// clip shortens a provenance value for a sentence: a node list of a dozen
// nodes is not what a reader of the overview needs whole.
func clip(s string) string {
	const most = 36
	if r := []rune(s); len(r) > most {
		return string(r[:most-1]) + "…"
	}
	return s
}

// drawTrace draws a row's trace in the box (x, y, w, h): the values over time
// as a line, the steps as red ticks.
func drawTrace(d *typeset.Document, x, y, w, h float64, row compare.OverviewRow) {
	pdf, pts := d.PDF(), row.Trace
	if len(pts) < 2 || w <= 0 || h <= 0 {
		return
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	vals := make([]float64, len(pts))
	for i, p := range pts {
		lo, hi = min(lo, p.Value), max(hi, p.Value)
		vals[i] = p.Value
	}
	// The box spans at least a quarter of the series' median, so that a
	// run-to-run jitter of 1% looks like one and a step of 10% stands out.
	if span := 0.25 * math.Abs(median(vals)); hi-lo < span {
		mid := (hi + lo) / 2
		lo, hi = mid-span/2, mid+span/2
	}
	t0, t1 := pts[0].When, pts[len(pts)-1].When
	span := t1.Sub(t0).Seconds()
	px := func(t time.Time) float64 {
		if span <= 0 {
			return x
		}
		return x + w*t.Sub(t0).Seconds()/span
	}
	py := func(v float64) float64 {
		if hi == lo {
			return y + h/2
		}
		return y + h - h*(v-lo)/(hi-lo)
	}
	pdf.SetLineWidth(0.6)
	pdf.SetDrawColor(0x00, 0x72, 0xB2)
	for i := 1; i < len(pts); i++ {
		pdf.Line(px(pts[i-1].When), py(pts[i-1].Value), px(pts[i].When), py(pts[i].Value))
	}
	pdf.SetDrawColor(failedRed[0], failedRed[1], failedRed[2])
	for _, s := range row.Steps {
		sx := px(s.When)
		pdf.Line(sx, y, sx, y+h)
	}
	pdf.SetLineWidth(0.5)
	pdf.SetDrawColor(0, 0, 0)
}
