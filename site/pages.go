package site

import (
	"cmp"
	"errors"
	"fmt"
	"html"
	"html/template"
	"io"
	"maps"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/plot/vg"

	"github.com/sbench/sbench/compare"
	"github.com/sbench/sbench/reports"
	"github.com/sbench/sbench/results"
	"github.com/sbench/sbench/sizes"
	"github.com/sbench/sbench/store"
	"github.com/sbench/sbench/svgplot"
	"github.com/sbench/sbench/trend"
	"github.com/sbench/sbench/webpage"
)

var esc = html.EscapeString

const dateLayout = "2006-01-02 15:04"

// xLabel writes an x: a message size as "4 KiB", another with its unit.
func xLabel(x *float64, unit string) string {
	if x == nil {
		return ""
	}
	if unit == "" || unit == results.UnitBytes {
		return sizes.Label(*x)
	}
	return strconv.FormatFloat(*x, 'g', -1, 64) + " " + unit
}

// value writes a measured value: two decimals in the everyday range,
// six significant digits outside it.
func value(v float64) string {
	if a := math.Abs(v); a != 0 && (a < 0.01 || a >= 1e9) {
		return strconv.FormatFloat(v, 'g', 6, 64)
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

func full(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

func pct(d float64) string { return fmt.Sprintf("%+.1f%%", 100*d) }

func when(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	return t.UTC().Format(dateLayout)
}

// page collects a page's body.
type page struct{ strings.Builder }

func (p *page) f(format string, args ...any) { fmt.Fprintf(p, format, args...) }

func (p *page) facts(kv [][2]string) {
	p.WriteString("<dl class=\"facts\">\n")
	for _, f := range kv {
		p.f("<dt>%s</dt><dd>%s</dd>\n", esc(f[0]), esc(f[1]))
	}
	p.WriteString("</dl>\n")
}

// table writes a sortable table: head, then rows of cells already HTML;
// a cell whose column is numeric (num[i]) is right-aligned.
func (p *page) table(head []string, num []bool, rows [][]string, rowAttrs []string) {
	class := ""
	if len(rows) > 1 {
		class = ` class="sb-sort"`
	}
	p.f("<div class=\"tbl\"><table%s>\n<thead><tr>", class)
	for i, h := range head {
		p.f("<th%s>%s</th>", numClass(num, i), esc(h))
	}
	p.WriteString("</tr></thead>\n<tbody>\n")
	for r, row := range rows {
		attrs := ""
		if r < len(rowAttrs) {
			attrs = rowAttrs[r]
		}
		p.f("<tr%s>", attrs)
		for i, c := range row {
			p.f("<td%s>%s</td>", numClass(num, i), c)
		}
		p.WriteString("</tr>\n")
	}
	p.WriteString("</tbody></table></div>\n")
}

func numClass(num []bool, i int) string {
	if i < len(num) && num[i] {
		return ` class="num"`
	}
	return ""
}

func a(href, text string) string { return `<a href="` + esc(href) + `">` + esc(text) + `</a>` }

// historyPage is one benchmark, metric and configuration over time.
func historyPage(g *group, metric string, hs metricHistories) webpage.Page {
	var p page
	title := g.benchmark + ": " + metric
	p.f("<p class=\"crumbs\">%s › %s › %s</p>\n", a("../index.html", "index"), esc(orDash(g.cluster)), esc(g.benchmark))
	p.f("<h1>%s</h1>\n<p>%s</p>\n", esc(title), esc(g.configName()))
	first := hs.all[0]
	ok := 0
	for _, r := range g.runs {
		if r.Status == results.StatusOK {
			ok++
		}
	}
	facts := [][2]string{{"Cluster", orDash(g.cluster)}, {"Configuration", orDash(g.config.String())},
		{"Runs", fmt.Sprintf("%d (%d ok; failed and invalid runs are listed below, never in a history)", len(g.runs), ok)}}
	if first.Better != "" {
		facts = append(facts, [2]string{"Better", first.Better + " " + first.Unit})
	}
	thr := full(100*first.Threshold) + "%"
	facts = append(facts, [2]string{"Judged by", fmt.Sprintf("each run against a control band, the mean ± 3σ of up to %d earlier runs; steps at α = %s, in a series of %d runs or more, the sizes of this page one family (Benjamini–Hochberg); a step beyond %s for the worse is a regression (sbench history --window %d --alpha %s --threshold %s)",
		first.Window, full(first.Alpha), compare.MinStepRuns(first.Alpha), thr, first.Window, full(first.Alpha), thr)})
	p.facts(facts)
	warned := map[string]bool{}
	for _, h := range hs.all {
		for _, w := range h.Warnings {
			if !warned[w] {
				warned[w] = true
				p.f("<p class=\"small muted\">%s</p>\n", esc(w))
			}
		}
	}

	for i, h := range hs.keys {
		at := xLabel(h.X, h.XUnit)
		head := "History"
		if at != "" {
			head = "At " + at
		}
		id := fmt.Sprintf("chart-%d", i)
		p.f("<section>\n<h2 id=\"%s\">%s</h2>\n", id, esc(head))
		if svg, err := historySVG(h); err == nil {
			p.f("<figure class=\"sb-figure\" id=\"fig-%s\">%s</figure>\n", id, svg)
			p.WriteString("<div class=\"sb-legend\" role=\"group\" aria-label=\"show or hide\">")
			for _, t := range []struct {
				s    int
				name string
			}{{trend.GroupBand, "control band"}, {trend.GroupRepeats, "range of repeats"}, {trend.GroupOutside, "outside the band"}, {trend.GroupSteps, "steps"}} {
				p.f("<button type=\"button\" class=\"sb-toggle\" data-fig=\"fig-%s\" data-s=\"%d\" aria-pressed=\"true\">%s</button>", id, t.s, t.name)
			}
			p.WriteString("</div>\n")
			if n := len(h.Points); n > chartRuns {
				p.f("<p class=\"small muted\">The chart shows the last %d of the %d runs; the tables below have them all.</p>\n", chartRuns, n)
			}
		} else {
			p.f("<p class=\"bad\">%s</p>\n", esc(err.Error()))
		}
		last := h.Points[len(h.Points)-1]
		line := fmt.Sprintf("Latest: %s %s, run %s on %s", esc(value(last.Value)), esc(h.Unit), a("../"+runPath(last.Run), strconv.FormatInt(last.Run, 10)), esc(when(last.When)))
		if last.Band != nil {
			line += fmt.Sprintf("; control band %s–%s", esc(value(last.Band.Lo)), esc(value(last.Band.Hi)))
		}
		if last.Outside {
			line += ` — <span class="mark outside">OUTSIDE the band</span>`
		}
		p.f("<p>%s. %d runs; %d step%s.</p>\n</section>\n", line, len(h.Points), len(h.Changes), results.Plural(len(h.Changes)))
	}

	if len(hs.all) < hs.sizes {
		p.f("<section>\n<h2 id=\"steps\">Steps</h2>\n<p class=\"small muted\">At the key sizes, %d of the %d measured; sbench site --all-sizes follows every size.</p>\n", len(hs.all), hs.sizes)
	} else {
		p.WriteString("<section>\n<h2 id=\"steps\">Steps at every size</h2>\n")
	}
	var rows [][]string
	var attrs []string
	for _, h := range hs.all {
		for _, c := range h.Changes {
			rows = append(rows, []string{esc(orDash(xLabel(h.X, h.XUnit))), a("../"+runPath(c.Run), strconv.FormatInt(c.Run, 10)), esc(orDash(c.Job)),
				esc(when(c.When)), esc(value(c.Before)), esc(value(c.After)), esc(pct(c.Delta)), esc(full(c.P)),
				`<span class="mark ` + string(c.Change) + `">` + esc(strings.ToUpper(changeWord(c.Change))) + `</span>`, esc(orDash(provenanceText(c.Provenance)))})
			x := ""
			if h.X != nil {
				x = full(*h.X)
			}
			attrs = append(attrs, fmt.Sprintf(` class="step" data-x="%s" data-index="%d" data-run="%d" data-before="%s" data-after="%s" data-delta="%s" data-p="%s" data-change="%s"`,
				x, c.Index, c.Run, full(c.Before), full(c.After), full(c.Delta), full(c.P), c.Change))
		}
	}
	switch {
	case len(rows) == 0 && !first.Tested:
		p.f("<p>No step tested: %d runs, and a change of level takes %d to be tested.</p>\n", len(first.Points), compare.MinStepRuns(first.Alpha))
	case len(rows) == 0:
		p.f("<p>No step at any size: the level held over the %d runs.</p>\n", len(first.Points))
	default:
		p.WriteString("<p class=\"small muted\">Each step names the first run of the new level and what changed in the nodes' provenance between the runs either side of it.</p>\n")
		p.table([]string{"Size", "First run", "Job", "Date", "Before", "After", "Change", "p", "Verdict", "Provenance change"},
			[]bool{true, true, false, false, true, true, true, true}, rows, attrs)
	}
	p.WriteString("</section>\n")

	if len(hs.all) > 1 {
		p.WriteString("<section>\n<h2 id=\"sizes\">By size</h2>\n")
		rows = nil
		for _, h := range hs.all {
			last := h.Points[len(h.Points)-1]
			band := "—"
			if last.Band != nil {
				band = value(last.Band.Lo) + "–" + value(last.Band.Hi)
			}
			step := "—"
			if n := len(h.Changes); n > 0 {
				c := h.Changes[n-1]
				step = pct(c.Delta) + " at run " + strconv.FormatInt(c.Run, 10) + " (" + changeWord(c.Change) + ")"
			}
			out := ""
			if last.Outside {
				out = "OUTSIDE"
			}
			rows = append(rows, []string{esc(orDash(xLabel(h.X, h.XUnit))), strconv.Itoa(len(h.Points)), esc(value(last.Value)),
				esc(band), esc(out), strconv.Itoa(len(h.Changes)), esc(step)})
		}
		p.table([]string{"Size", "Runs", "Latest (" + first.Unit + ")", "Control band", "Latest run", "Steps", "Last step"},
			[]bool{true, true, true, true}, rows, nil)
		p.WriteString("</section>\n")
	}

	p.WriteString("<section>\n<h2 id=\"runs\">Runs</h2>\n")
	vals := map[int64]compare.Point{}
	for _, pt := range hs.keys[0].Points {
		vals[pt.Run] = pt
	}
	keyAt := xLabel(hs.keys[0].X, hs.keys[0].XUnit)
	col := "Value (" + first.Unit + ")"
	if keyAt != "" {
		col = "At " + keyAt + " (" + first.Unit + ")"
	}
	rows, attrs = nil, nil
	for i := len(g.runs) - 1; i >= 0; i-- {
		r := &g.runs[i]
		v := "—"
		if pt, ok := vals[r.ID]; ok {
			v = value(pt.Value)
		}
		t := r.Start
		if t.IsZero() {
			t = r.IngestedAt
		}
		rows = append(rows, []string{a("../"+runPath(r.ID), strconv.FormatInt(r.ID, 10)), esc(orDash(compare.JobName(r))), esc(when(t)), esc(orDash(r.Campaign)),
			esc(string(r.Status)), esc(v)})
		if r.Status != results.StatusOK {
			attrs = append(attrs, ` class="bad"`)
		} else {
			attrs = append(attrs, "")
		}
	}
	p.table([]string{"Run", "Job", "Date", "Campaign", "Status", col}, []bool{true, false, false, false, false, true}, rows, attrs)
	p.WriteString("</section>\n")
	return webpage.Page{Title: title + " — " + g.configName(), Class: "sb-site", Assets: "../", Body: template.HTML(p.String())}
}

// chartRuns is the most runs a history chart draws: a year of nightly
// runs. Years of them would make a chart of megabytes whose points are
// finer than a pixel; the tables have every run and step.
const chartRuns = 366

// recent is h's last n points, with the steps among them, to draw.
func recent(h *compare.History, n int) *compare.History {
	cut := len(h.Points) - n
	if cut <= 0 {
		return h
	}
	v := *h
	v.Points = h.Points[cut:]
	v.Changes = nil
	for _, c := range h.Changes {
		if c.Index >= cut {
			c.Index -= cut
			v.Changes = append(v.Changes, c)
		}
	}
	return &v
}

func historySVG(h *compare.History) (string, error) {
	pl, err := trend.Plot(recent(h, chartRuns), trend.WithRunLink(func(id int64) string { return "../" + runPath(id) }))
	if err != nil {
		return "", err
	}
	svg, err := svgplot.Render(pl, 9*vg.Inch, 4.5*vg.Inch, pl.Title.Text)
	return string(svg), err
}

func changeWord(c compare.Change) string {
	switch c {
	case compare.Worse:
		return "regression"
	case compare.Better:
		return "better"
	case compare.Changed:
		return "changed"
	}
	return "within threshold"
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

// maxQuote bounds the output and script a run page quotes whole.
const maxQuote = 1 << 20

// runPage makes a run's page unless it is made from what it was.
func (b *builder) runPage(r *store.Run, pages []link) error {
	path := runPath(r.ID)
	job := b.jobs[r.JobID]
	if r.ArrayIndex != "" {
		if j, ok := b.jobs[r.JobID+"_"+r.ArrayIndex]; ok {
			job = j
		}
	}
	parts := []string{"run", strconv.FormatInt(r.ID, 10), r.Hash, string(r.Status), r.Error, store.ConfigOf(r).String(),
		r.Start.Format(time.RFC3339Nano), r.IngestedAt.Format(time.RFC3339Nano)}
	for _, l := range pages {
		parts = append(parts, l.path, l.text)
	}
	script := ""
	if job != nil {
		parts = append(parts, job.SlurmID, job.State, job.ExitCode, job.Reason, job.Name, strconv.Itoa(job.Restarts), job.Script)
		if st, err := os.Stat(job.Script); err == nil && job.Script != "" {
			parts = append(parts, strconv.FormatInt(st.Size(), 10), st.ModTime().Format(time.RFC3339Nano))
			script = job.Script
		}
	}
	key := b.keyOf(parts...)
	if b.fresh(path, key) {
		b.keep(path)
		return nil
	}
	bundle, err := b.db.Bundle(b.ctx, r.ID)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	var samples []results.Sample
	var scalars []results.Scalar
	var checks []store.Check
	raw := ""
	if bundle != nil {
		samples, scalars, raw = bundle.Samples, bundle.Scalars, bundle.Raw
		for _, c := range bundle.Checks {
			checks = append(checks, store.Check{RunID: r.ID, Check: c})
		}
	} else {
		one := store.Filter{RunIDs: []int64{r.ID}}
		ss, err := b.db.Samples(b.ctx, one)
		if err != nil {
			return err
		}
		for _, s := range ss {
			samples = append(samples, s.Sample)
		}
		sc, err := b.db.Scalars(b.ctx, one)
		if err != nil {
			return err
		}
		for _, s := range sc {
			scalars = append(scalars, s.Scalar)
		}
		if checks, err = b.db.Checks(b.ctx, one); err != nil {
			return err
		}
	}

	var p page
	crumbs := []string{a("../index.html", "index")}
	for _, l := range pages {
		crumbs = append(crumbs, a("../"+l.path, "history of "+l.text))
	}
	p.f("<p class=\"crumbs\">%s</p>\n", strings.Join(crumbs, " · "))
	title := fmt.Sprintf("Run %d — %s — %s", r.ID, orDash(r.Benchmark), orDash(string(r.Status)))
	class := ""
	if r.Status == results.StatusFailed || r.Status == results.StatusInvalid {
		class = ` class="bad"`
	}
	p.f("<h1%s>%s</h1>\n<p>%s</p>\n", class, esc(title), esc(orDash(store.ConfigOf(r).String())))
	if why := reports.FailureText(r, job, checks); why != "" && class != "" {
		p.f("<div class=\"warn pre-line\" role=\"alert\">%s</div>\n", esc(why))
	}
	p.facts(reports.RunFacts(r, job))

	if len(r.Hosts) > 0 {
		p.WriteString("<h2 id=\"hosts\">Hosts</h2>\n")
		head := []string{""}
		fields := map[string][]string{}
		var order []string
		for hi, h := range r.Hosts {
			head = append(head, reports.NodeName(h))
			for _, f := range reports.HostFields(h) {
				if _, ok := fields[f[0]]; !ok {
					order = append(order, f[0])
					fields[f[0]] = make([]string, len(r.Hosts))
				}
				fields[f[0]][hi] = f[1]
			}
		}
		var rows [][]string
		for _, k := range order {
			row := []string{"<b>" + esc(k) + "</b>"}
			for _, v := range fields[k] {
				row = append(row, esc(orDash(v)))
			}
			rows = append(rows, row)
		}
		p.WriteString("<div class=\"tbl\"><table>\n<thead><tr>")
		for _, h := range head {
			p.f("<th>%s</th>", esc(h))
		}
		p.WriteString("</tr></thead>\n<tbody>\n")
		for _, row := range rows {
			p.f("<tr><td>%s</td></tr>\n", strings.Join(row, "</td><td>"))
		}
		p.WriteString("</tbody></table></div>\n")
	}

	if len(samples) > 0 {
		p.f("<h2 id=\"samples\">Samples (%d)</h2>\n", len(samples))
		var rows [][]string
		for _, s := range samples {
			x := ""
			if s.X != nil {
				x = xLabel(s.X, s.XUnit)
			}
			var tags []string
			for _, k := range slices.Sorted(maps.Keys(s.Tags)) {
				tags = append(tags, k+"="+s.Tags[k])
			}
			rows = append(rows, []string{esc(s.Metric), esc(orDash(x)), esc(full(s.Value)),
				esc(s.Unit), strconv.Itoa(s.Repeat), esc(strings.Join(tags, ", "))})
		}
		p.table([]string{"Metric", "x", "Value", "Unit", "Repeat", "Tags"}, []bool{false, true, true, false, true}, rows, nil)
	}
	if len(scalars) > 0 {
		p.WriteString("<h2 id=\"scalars\">Scalars</h2>\n")
		var rows [][]string
		for _, s := range scalars {
			rows = append(rows, []string{esc(s.Name), esc(full(s.Value)), esc(s.Unit)})
		}
		p.table([]string{"Name", "Value", "Unit"}, []bool{false, true}, rows, nil)
	}
	if len(checks) > 0 {
		p.WriteString("<h2 id=\"checks\">Checks</h2>\n")
		var rows [][]string
		var attrs []string
		for _, c := range checks {
			res, attr := "PASSED", ""
			if !c.Passed {
				res, attr = "FAILED", ` class="bad"`
			}
			rows = append(rows, []string{esc(c.Name), esc(full(c.Value)), esc(strings.TrimSpace(c.Op + " " + full(c.Threshold))), res})
			attrs = append(attrs, attr)
		}
		p.table([]string{"Check", "Value", "Must be", "Result"}, []bool{false, true, true}, rows, attrs)
	}
	if script != "" {
		if text, err := readQuote(script); err == nil {
			p.f("<h2 id=\"script\">sbatch script</h2>\n<p class=\"small muted\">%s, job %s</p>\n<pre>%s</pre>\n", esc(script), esc(job.SlurmID), esc(text))
		}
	}
	if strings.TrimSpace(raw) != "" {
		note := ""
		if len(raw) > maxQuote {
			note = fmt.Sprintf(" (the first %d of %d bytes)", maxQuote, len(raw))
			raw = raw[:maxQuote]
		}
		p.f("<h2 id=\"output\">Output</h2>\n<p class=\"small muted\">What the tool printed, as the run recorded it%s.</p>\n<pre>%s</pre>\n", note, esc(raw))
	}
	return b.write(path, key, webpage.Page{Title: title, Class: "sb-site", Assets: "../", Body: template.HTML(p.String())})
}

func readQuote(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxQuote))
	return string(data), err
}

// index is the site's first page: clusters × benchmarks, then the latest
// steps and runs.
func (b *builder) index(sums []summary, runs []store.Run) error {
	var p page
	clusters := map[string]bool{}
	for _, s := range sums {
		clusters[s.Cluster] = true
	}
	cs := slices.Sorted(maps.Keys(clusters))
	latest := time.Time{}
	failed := 0
	for _, r := range runs {
		t := r.Start
		if t.IsZero() {
			t = r.IngestedAt
		}
		latest = later(latest, t)
		if r.Status != results.StatusOK {
			failed++
		}
	}
	p.f("<h1>sbench: %d runs</h1>\n", len(runs))
	worse := 0
	for _, s := range sums {
		if c := currentChange(s); c != nil && c.Change == string(compare.Worse) {
			worse++
		}
	}
	p.f("<p>%d histories of %d cluster%s; %d failed or invalid run%s; latest run %s. ", len(sums), len(cs), results.Plural(len(cs)), failed, results.Plural(failed), esc(when(latest)))
	if worse > 0 {
		p.f("<span class=\"mark worse\">%d regression%s</span> in the current level of a history.</p>\n", worse, results.Plural(worse))
	} else {
		p.WriteString("No history's current level is a regression.</p>\n")
	}
	p.WriteString("<p class=\"small muted\">Each line: a configuration, its latest value at the key size, its history, and a mark when its last step was for the worse (red) or the better (green), or its latest run lies outside its control band.</p>\n")

	type rowKey struct{ bench, metric string }
	cells := map[rowKey]map[string][]summary{}
	for _, s := range sums {
		k := rowKey{s.Benchmark, s.Metric}
		if cells[k] == nil {
			cells[k] = map[string][]summary{}
		}
		cells[k][s.Cluster] = append(cells[k][s.Cluster], s)
	}
	keys := slices.SortedFunc(maps.Keys(cells), func(x, y rowKey) int { return cmp.Or(cmp.Compare(x.bench, y.bench), cmp.Compare(x.metric, y.metric)) })
	names := shortNames(sums)
	p.WriteString("<h2 id=\"benchmarks\">Benchmarks</h2>\n<div class=\"tbl\"><table class=\"grid\">\n<thead><tr><th>Benchmark</th><th>Metric</th>")
	for _, c := range cs {
		name := c
		if name == "" {
			name = "(no system)"
		}
		p.f("<th>%s</th>", esc(name))
	}
	p.WriteString("</tr></thead>\n<tbody>\n")
	for _, k := range keys {
		p.f("<tr><td>%s</td><td>%s</td>", esc(k.bench), esc(k.metric))
		for _, c := range cs {
			p.WriteString("<td>")
			line := cells[k][c]
			slices.SortStableFunc(line, func(x, y summary) int { return cmp.Compare(names[x.Page], names[y.Page]) })
			for _, s := range line {
				p.cellLine(s, names[s.Page])
			}
			p.WriteString("</td>")
		}
		p.WriteString("</tr>\n")
	}
	p.WriteString("</tbody></table></div>\n")

	type step struct {
		s summary
		c change
	}
	var steps []step
	for _, s := range sums {
		for _, c := range s.Changes {
			steps = append(steps, step{s, c})
		}
	}
	slices.SortStableFunc(steps, func(x, y step) int { return y.c.When.Compare(x.c.When) })
	p.WriteString("<h2 id=\"steps\">Latest steps</h2>\n")
	if len(steps) == 0 {
		p.WriteString("<p>No history has a step.</p>\n")
	} else {
		const maxSteps = 100
		if len(steps) > maxSteps {
			p.f("<p class=\"small muted\">The %d latest of %d; each history page lists all of its own.</p>\n", maxSteps, len(steps))
			steps = steps[:maxSteps]
		}
		var rows [][]string
		for _, st := range steps {
			rows = append(rows, []string{esc(when(st.c.When)), esc(orDash(st.s.Cluster)), a(st.s.Page, st.s.Benchmark+": "+st.s.Metric),
				esc(orDash(xLabel(st.c.X, st.c.XUnit))), esc(st.s.Config), esc(pct(st.c.Delta)),
				`<span class="mark ` + esc(st.c.Change) + `">` + esc(strings.ToUpper(changeWord(compare.Change(st.c.Change)))) + `</span>`,
				a(runPath(st.c.Run), strconv.FormatInt(st.c.Run, 10)), esc(orDash(st.c.Provenance))})
		}
		p.table([]string{"Date", "Cluster", "History", "Size", "Configuration", "Change", "Verdict", "First run", "Provenance change"},
			[]bool{false, false, false, true, false, true, false, true}, rows, nil)
	}

	p.WriteString("<h2 id=\"runs\">Latest runs</h2>\n")
	const maxRuns = 50
	var rows [][]string
	var attrs []string
	for i := len(runs) - 1; i >= 0 && len(rows) < maxRuns; i-- {
		r := &runs[i]
		t := r.Start
		if t.IsZero() {
			t = r.IngestedAt
		}
		rows = append(rows, []string{a(runPath(r.ID), strconv.FormatInt(r.ID, 10)), esc(when(t)), esc(orDash(clusterOf(r))), esc(orDash(r.Benchmark)),
			esc(orDash(r.Campaign)), esc(orDash(compare.JobName(r))), esc(string(r.Status))})
		if r.Status != results.StatusOK {
			attrs = append(attrs, ` class="bad"`)
		} else {
			attrs = append(attrs, "")
		}
	}
	p.table([]string{"Run", "Date", "Cluster", "Benchmark", "Campaign", "Job", "Status"}, []bool{true}, rows, attrs)
	return b.write("index.html", "", webpage.Page{Title: "sbench site", Class: "sb-site", Assets: "./", Body: template.HTML(p.String())})
}

// cellLine is one configuration's line in an index cell.
func (p *page) cellLine(s summary, name string) {
	at := xLabel(s.X, s.XUnit)
	if at != "" {
		at = " @ " + at
	}
	p.f("<div class=\"cell-line\">%s <span class=\"num\" title=\"run %d, %s\">%s %s%s</span>%s",
		a(s.Page, name), s.LatestRun, esc(when(s.LatestWhen)), esc(value(s.Latest)), esc(s.Unit), esc(at), spark(s))
	if c := currentChange(s); c != nil && c.Change != string(compare.Same) {
		arrow := "▲"
		if c.Delta < 0 {
			arrow = "▼"
		}
		p.f(" <span class=\"mark %s\" title=\"%s at run %d, %s\">%s %s</span>", esc(c.Change), esc(changeWord(compare.Change(c.Change))), c.Run, esc(when(c.When)), arrow, esc(pct(c.Delta)))
	}
	if s.Outside {
		p.WriteString(` <span class="mark outside" title="the latest run lies outside its control band">outside</span>`)
	}
	p.WriteString("</div>")
}

// currentChange is the step at the start of the key size's current level,
// nil when it has none.
func currentChange(s summary) *change {
	var last *change
	for i := range s.Changes {
		c := &s.Changes[i]
		same := (c.X == nil && s.X == nil) || (c.X != nil && s.X != nil && *c.X == *s.X)
		if same {
			last = c
		}
	}
	return last
}

// spark draws a history as a sparkline: the values, the last as a dot.
func spark(s summary) string {
	vs := s.Spark
	if len(vs) < 2 {
		return ""
	}
	lo, hi := slices.Min(vs), slices.Max(vs)
	if hi == lo {
		hi, lo = hi+1, lo-1
	}
	const w, h = 90.0, 20.0
	var pts []string
	var x, y float64
	for i, v := range vs {
		x = 1 + (w-2)*float64(i)/float64(len(vs)-1)
		y = 1 + (h-2)*(1-(v-lo)/(hi-lo))
		pts = append(pts, strconv.FormatFloat(x, 'f', 1, 64)+","+strconv.FormatFloat(y, 'f', 1, 64))
	}
	color := "#1f4e99"
	if c := currentChange(s); c != nil && c.Change == string(compare.Worse) {
		color = "#be0000"
	}
	return fmt.Sprintf(`<svg class="spark" width="%g" height="%g" viewBox="0 0 %g %g" aria-hidden="true"><polyline fill="none" stroke="%s" stroke-width="1.2" points="%s"/><circle cx="%.1f" cy="%.1f" r="2" fill="%s"/></svg>`,
		w, h, w, h, color, strings.Join(pts, " "), x, y, color)
}

func later(t time.Time, ts ...time.Time) time.Time {
	for _, c := range ts {
		if c.After(t) {
			t = c
		}
	}
	return t
}
