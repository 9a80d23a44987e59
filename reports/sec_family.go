package reports

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/sbench/sbench/results"
	"github.com/sbench/sbench/sizes"
)

// familySections gives each benchmark its own pages: its verdict, its
// figures, each with a caption and a table of the numbers a reader would
// otherwise read off the curve by eye, HPL's table, and the values that
// have no curve.
func (r *Report) familySections(d *content) {
	if len(r.families) == 0 {
		d.newPage()
		d.heading("Results", h1Size, 30)
		d.para("No samples or scalars of successful runs to show.", "", bodySize, black)
		return
	}
	for i, f := range r.families {
		// Each benchmark starts a page, unless the one before left room
		// for this one's verdict, first figure and table: a short section
		// need not leave half a page blank.
		if i == 0 {
			d.newPage()
		} else {
			d.pageUnlessRoom(r.firstBlockHeight(f), 14)
		}
		title := "Benchmark: " + f.name
		if f.collective {
			title += " (collective)"
		}
		if t := r.familyTitle(f); t != "" {
			title = t
		}
		d.heading(title, h1Size, 60)
		for _, v := range r.familyVerdict(f) {
			c := redIf(strings.Contains(v, "FAILED") || strings.Contains(v, "no valid result"))
			d.bullet(v, c)
		}
		d.space(4)
		for _, g := range f.groups {
			for i, idx := range g.figs {
				last := i == len(g.figs)-1
				r.drawFigure(d, &r.figures[idx], last)
			}
			if len(g.figs) == 0 {
				d.heading(fmt.Sprintf("%s: %s", g.title(), g.metric), h2Size, 60)
				d.caption("One size per configuration: no curve to draw.")
			}
			switch g.kind {
			case KindBandwidth:
				r.bandwidthTable(d, f, g)
			case KindLatency:
				r.latencyTable(d, f, g)
			}
			d.space(10)
		}
		for _, m := range f.matrices {
			for _, idx := range m.figs {
				r.drawFigure(d, &r.figures[idx], true)
			}
			r.matrixTable(d, m)
			d.space(10)
		}
		if len(f.hpl) > 0 {
			r.hplSection(d, f)
		}
		for _, s := range f.scaling {
			for _, idx := range s.figs {
				r.drawFigure(d, &r.figures[idx], true)
			}
			d.space(10)
		}
		if len(f.values) > 0 {
			r.valuesTable(d, f)
		}
	}
}

// firstBlockHeight estimates the height of a family's heading, verdict and
// first figure with its table.
func (r *Report) firstBlockHeight(f *familyResult) float64 {
	h := h1Size*2.2 + float64(len(r.familyVerdict(f)))*2*bodySize*1.3 + 4
	switch {
	case len(f.figures) > 0:
		fig := &r.figures[f.figures[0]]
		h += fig.height().Points() + 4 + r.belowFigure(fig, true)
	case len(f.hpl) > 0:
		h += smallSize * 1.55 * float64(len(f.hpl)*3+8)
	default:
		h += 120
	}
	return h
}

// drawFigure draws a figure and its caption, on the page that also has room
// for its table when withTable.
func (r *Report) drawFigure(d *content, fig *Figure, withTable bool) {
	d.need(fig.height().Points() + 4 + r.belowFigure(fig, withTable))
	d.figure(fig)
	d.caption(r.figureCaption(fig))
}

// belowFigure estimates the height of what follows a figure on its page:
// its caption and, unless the next figure takes it, its table.
func (r *Report) belowFigure(f *Figure, withTable bool) float64 {
	const caption = 2*smallSize*1.3 + 2
	rowH := smallSize * 1.55
	if !withTable {
		return caption
	}
	switch f.Kind {
	case KindBandwidth:
		return caption + rowH*float64(2+len(f.Series)) + smallSize*1.3
	case KindLatency, KindLatencyZoom:
		return caption + rowH*float64(2+len(f.Series))
	case KindMatrix:
		return caption + bodySize*1.3 + rowH*float64(2+len(f.matrix.summary.Worst))
	}
	return caption
}

// figureCaption says how the points were made and what the figure leaves
// out.
func (r *Report) figureCaption(f *Figure) string {
	var parts []string
	switch f.Kind {
	case KindMatrix:
		g := f.matrix
		runs := len(g.summary.Runs)
		parts = append(parts,
			"rows are senders and columns receivers, so the two directions of a pair are mirror cells",
			"colour: shortfall from the best pair, white when on par, full vermillion at half of it or worse",
			fmt.Sprintf("%d node%s, from %d run%s", len(g.nodes), results.Plural(len(g.nodes)), runs, results.Plural(runs)))
		switch {
		case r.screenMatrix(g) != nil:
			if len(g.nodes) > byNameUpTo {
				parts = append(parts, "nodes in the order of the mean of their links, best first (a bad node's row and column come last)")
			}
			parts = append(parts, "a pair outside tolerance in every run and re-test is framed, or dotted where its value does not fit; one that came back (transient) dashed, or ringed",
				"a long frame: what the nodes the screening blames send (rows) and receive (columns); see the Screening section")
		case len(g.nodes) > 1:
			parts = append(parts, "nodes by name")
		}
		if step := (len(g.nodes) + 31) / 32; step > 1 {
			parts = append(parts, fmt.Sprintf("every %s node labelled, and every blamed one", ordinal(step)))
		}
		if runs > 1 {
			parts = append(parts, "each cell is the median of the runs' values")
		}
		return strings.Join(parts, "; ") + "."
	case KindScaling:
		return "Each point is the median over the runs at that process count; invalid runs are left out."
	}
	runs := map[int64]bool{}
	combined := false
	for _, s := range f.Series {
		for _, id := range s.Runs {
			runs[id] = true
		}
		for _, p := range s.Points {
			if p.N > 1 {
				combined = true
			}
		}
	}
	// The tables below count the runs; the caption names them, for the
	// appendix.
	parts = append(parts, fmt.Sprintf("%d line%s from %d run%s (%s)", len(f.Series), results.Plural(len(f.Series)), len(runs), results.Plural(len(runs)),
		runIDs(slices.Collect(maps.Keys(runs)))))
	if combined {
		s := "each point is the median of the samples at that size"
		if f.Bands > 0 {
			s += ", the band their minimum to maximum"
		}
		parts = append(parts, s)
	}
	if len(f.LinkRates) > 0 {
		var rs []string
		for _, g := range f.LinkRates {
			rs = append(rs, fmt.Sprintf("%s = %s MB/s", formatRate(g), strconv.FormatFloat(g*125, 'f', 0, 64)))
		}
		parts = append(parts, "dashed: theoretical link rate ("+strings.Join(rs, ", ")+")")
	}
	if f.Kind == KindLatencyZoom {
		parts = append(parts, "linear latency axis, to compare small messages")
	}
	if f.Hidden > 0 {
		parts = append(parts, fmt.Sprintf("%d point%s at size or value 0 not drawn on the log axis (see the table)", f.Hidden, results.Plural(f.Hidden)))
	}
	return strings.Join(parts, "; ") + "."
}

// configHeading is the configuration column's title: "Configuration",
// or the attribute the configurations are values of.
func (r *Report) configHeading(fam string) string {
	switch w := r.configs.what[fam]; w {
	case "":
	case "tool":
		return "Tool" // the family view's lines
	default:
		return "Configuration (" + w + ")"
	}
	return "Configuration"
}

func (r *Report) bandwidthTable(d *content, f *familyResult, g *sizeGroup) {
	if g == nil {
		return
	}
	d.need(rowHeight * float64(2+len(g.bandwidth)))
	t := d.table([]column{
		{title: r.configHeading(f.name), width: 100},
		{title: "Peak (MB/s)", width: 66, right: true},
		{title: "at size", width: 50, right: true},
		{title: "% of link", width: 54, right: true},
		{title: "N½", width: 56, right: true},
		{title: "At largest size", width: 86, right: true},
		{title: "vs best", width: 46, right: true},
		{title: "Runs (n)", right: true},
	})
	for _, b := range g.bandwidth {
		pct, half := "—", "—"
		if b.PercentOfLink > 0 {
			pct = formatPercent(b.PercentOfLink)
		}
		if b.HalfPeakAt > 0 {
			half = sizes.Format(b.HalfPeakAt)
		}
		st := r.configs.style(b.Config)
		t.row([]string{label(b.Config, b.Ranks), formatValue(b.Peak), sizes.Format(b.PeakAt), pct, half,
			formatValue(b.Largest) + " @ " + sizes.Format(b.LargestAt), ratioCell(b.Ratio), strconv.Itoa(len(b.Runs))}, black, &st)
	}
	d.space(2)
	d.para("N½: the smallest size reaching half the peak. vs best: the peak over the best configuration's, "+ratioRule+".", "", smallSize, grey)
}

func (r *Report) latencyTable(d *content, f *familyResult, g *sizeGroup) {
	if g == nil {
		return
	}
	common := "At common size"
	for _, l := range g.latency {
		if l.CommonAt > 0 {
			common = "At " + sizes.Format(l.CommonAt) + " (µs)"
			break
		}
	}
	d.need(rowHeight * float64(2+len(g.latency)))
	t := d.table([]column{
		{title: r.configHeading(f.name), width: 104},
		{title: common, width: 68, right: true},
		{title: "vs best", width: 46, right: true},
		{title: "Smallest", width: 54, right: true},
		{title: "Latency (µs)", width: 66, right: true},
		{title: "Largest", width: 50, right: true},
		{title: "Latency (µs)", width: 66, right: true},
		{title: "Runs (n)", right: true},
	})
	for _, l := range g.latency {
		at := "—"
		if l.AtCommon > 0 {
			at = formatValue(l.AtCommon)
		}
		st := r.configs.style(l.Config)
		t.row([]string{label(l.Config, l.Ranks), at, ratioCell(l.Ratio), sizes.Format(l.SmallestAt), formatValue(l.Smallest),
			sizes.Format(l.LargestAt), formatValue(l.Largest), strconv.Itoa(len(l.Runs))}, black, &st)
	}
	d.space(2)
	d.para("vs best: the latency over the best configuration's, "+ratioRule+".", "", smallSize, grey)
}

// ratioRule says when a "vs best" cell holds a factor (ratioRuns).
var ratioRule = "given where both rest on " + strconv.Itoa(ratioRuns) + " or more runs"

// ratioCell is a "vs best" cell: the factor, or — where none is given.
func ratioCell(ratio float64) string {
	if ratio == 0 {
		return "—"
	}
	return formatRatio(ratio, 1)
}

func (r *Report) matrixTable(d *content, g *matrixGroup) {
	s := g.summary
	unit := unitLabel(s.Unit)
	d.para(fmt.Sprintf("%d pairs: minimum %s, median %s, maximum %s %s.", s.Pairs,
		formatValue(s.Min), formatValue(s.Median), formatValue(s.Max), unit), "", bodySize, black)
	if len(s.Worst) == 0 {
		return
	}
	word := "Slowest"
	if !g.higherBetter() {
		word = "Highest"
	}
	d.need(rowHeight * float64(2+len(s.Worst)))
	t := d.table([]column{
		{title: word + " pairs", width: 180},
		{title: "There (" + unit + ")", width: 80, right: true},
		{title: "Back (" + unit + ")", width: 80, right: true},
		{title: "% of median", width: 70, right: true},
		{title: "Asymmetry", right: true},
	})
	for _, w := range s.Worst {
		back, asym := "—", "—"
		if w.Reverse > 0 {
			back = formatValue(w.Reverse)
			asym = formatPercent(100*math.Abs(w.Value-w.Reverse)/max(w.Value, w.Reverse)) + "%"
		}
		pct := "—"
		if s.Median > 0 {
			pct = formatPercent(100 * w.Value / s.Median)
		}
		t.row([]string{w.From + " → " + w.To, formatValue(w.Value), back, pct, asym}, black, nil)
	}
}

// ordinal writes 2nd, 3rd, 8th.
func ordinal(n int) string {
	switch {
	case n%100/10 == 1:
		return strconv.Itoa(n) + "th"
	case n%10 == 1:
		return strconv.Itoa(n) + "st"
	case n%10 == 2:
		return strconv.Itoa(n) + "nd"
	case n%10 == 3:
		return strconv.Itoa(n) + "rd"
	}
	return strconv.Itoa(n) + "th"
}

func (r *Report) valuesTable(d *content, f *familyResult) {
	d.heading("Values without a size axis", h2Size, 60)
	t := d.table([]column{
		{title: "Metric", width: 90},
		{title: r.configHeading(f.name), width: 88},
		{title: "Median", width: 58, right: true},
		{title: "Min", width: 50, right: true},
		{title: "Max", width: 50, right: true},
		{title: "Unit", width: 58}, // "timesteps/s" on one line
		{title: "Samples (n)", width: 64, right: true},
		{title: "Runs (n)", right: true},
	})
	for _, v := range f.values {
		t.row([]string{v.Metric, v.Config, formatNumber(v.Median), formatNumber(v.Min), formatNumber(v.Max),
			unitLabel(v.Unit), strconv.Itoa(v.N), strconv.Itoa(len(v.Runs))}, black, nil)
	}
	d.space(6)
}

// formatNumber writes a value of any magnitude readably: two decimals in
// the everyday range, scientific notation outside it.
func formatNumber(v float64) string {
	if a := math.Abs(v); a != 0 && (a < 0.01 || a >= 1e9) {
		return strconv.FormatFloat(v, 'g', 6, 64)
	}
	return formatValue(v)
}
