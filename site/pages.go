package site

import (
	"cmp"
	_ "embed"
	"errors"
	"fmt"
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

//go:embed pages.tmpl
var pagesText string

// pageTemplates are the bodies of the site's pages (pages.tmpl).
var pageTemplates = template.Must(template.New("pages").Parse(pagesText))

// render is the body of a page: the template name with data.
func render(name string, data any) (template.HTML, error) {
	var sb strings.Builder
	if err := pageTemplates.ExecuteTemplate(&sb, name, data); err != nil {
		return "", err
	}
	return template.HTML(sb.String()), nil
}

// cell is a table cell (or a crumb): text, a link, a mark or a bold
// header; Num right-aligns it.
type cell struct {
	Text, Href, Mark string
	Bold, Num        bool
}

func linkCell(href, text string) cell { return cell{Text: text, Href: href} }

// mark is a verdict's mark: its word in capitals, coloured by the change.
func mark(change string) cell {
	return cell{Text: strings.ToUpper(changeWord(compare.Change(change))), Mark: change}
}

// texts are cells of plain text.
func texts(ss ...string) []cell {
	out := make([]cell, len(ss))
	for i, s := range ss {
		out[i] = cell{Text: s}
	}
	return out
}

type column struct {
	Text string
	Num  bool
}

// row is a table row; Bad marks a failed run's, Step a step's (its data
// for the page's script).
type row struct {
	Cells []cell
	Bad   bool
	Step  *stepAttrs
}

type stepAttrs struct {
	X, Before, After, Delta, P, Change string
	Index                              int
	Run                                int64
}

// tableView is a sortable table: a cell whose column is numeric is
// right-aligned.
type tableView struct {
	Head []column
	Rows []row
}

func newTable(head []string, num ...bool) *tableView {
	t := &tableView{}
	for i, h := range head {
		t.Head = append(t.Head, column{Text: h, Num: i < len(num) && num[i]})
	}
	return t
}

// orNil is t, or nil when it has no rows: a page leaves out an empty table.
func (t *tableView) orNil() *tableView {
	if len(t.Rows) == 0 {
		return nil
	}
	return t
}

func (t *tableView) add(r row) {
	for i := range r.Cells {
		r.Cells[i].Num = i < len(t.Head) && t.Head[i].Num
	}
	t.Rows = append(t.Rows, r)
}

// historyPage is one benchmark, metric and configuration over time.
func historyPage(g *group, metric string, hs metricHistories) (webpage.Page, error) {
	title := g.benchmark + ": " + metric
	first := hs.all[0]
	v := historyView{Cluster: orDash(g.cluster), Benchmark: g.benchmark, Title: title, Config: g.configName(), Facts: historyFacts(g, first),
		Toggles: historyToggles, SomeSizes: len(hs.all) < hs.sizes, KeySizes: len(hs.all), Sizes: hs.sizes}
	warned := map[string]bool{}
	for _, h := range hs.all {
		for _, w := range h.Warnings {
			if !warned[w] {
				warned[w] = true
				v.Warnings = append(v.Warnings, w)
			}
		}
	}
	for i, h := range hs.keys {
		v.Charts = append(v.Charts, historyChart(i, h))
	}
	v.StepTable = stepTable(hs.all)
	switch {
	case v.StepTable != nil:
	case !first.Tested:
		v.NoSteps = fmt.Sprintf("No step tested: %d runs, and a change of level takes %d to be tested.", len(first.Points), compare.MinStepRuns(first.Alpha))
	default:
		v.NoSteps = fmt.Sprintf("No step at any size: the level held over the %d runs.", len(first.Points))
	}
	if len(hs.all) > 1 {
		v.BySize = sizeTable(hs.all, first.Unit)
	}
	v.Runs = historyRuns(g, hs.keys[0], first.Unit)
	body, err := render("history", v)
	return webpage.Page{Title: title + " — " + g.configName(), Class: "sb-site", Assets: "../", Body: body}, err
}

// historyView is what a history page shows.
type historyView struct {
	Cluster, Benchmark, Title, Config string
	Facts                             [][2]string
	Warnings                          []string
	Charts                            []chartView
	Toggles                           []toggle
	SomeSizes                         bool
	KeySizes, Sizes                   int
	StepTable, BySize, Runs           *tableView
	NoSteps                           string
}

// chartView is a history's chart at one key size, with its latest run.
type chartView struct {
	ID, Head, Err      string
	SVG                template.HTML
	Cut                bool
	Shown, Runs, Steps int
	Latest, Unit, When string
	Run                cell
	Band               string
	Outside            bool
}

// toggle is a button that shows or hides a chart's group of marks.
type toggle struct {
	S    int
	Name string
}

var historyToggles = []toggle{{trend.GroupBand, "control band"}, {trend.GroupRepeats, "range of repeats"}, {trend.GroupOutside, "outside the band"}, {trend.GroupSteps, "steps"}}

func historyFacts(g *group, first *compare.History) [][2]string {
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
	return append(facts, [2]string{"Judged by", fmt.Sprintf("each run against a control band, the mean ± 3σ of up to %d earlier runs; steps at α = %s, in a series of %d runs or more, the sizes of this page one family (Benjamini–Hochberg); a step beyond %s for the worse is a regression (sbench history --window %d --alpha %s --threshold %s)",
		first.Window, full(first.Alpha), compare.MinStepRuns(first.Alpha), thr, first.Window, full(first.Alpha), thr)})
}

func historyChart(i int, h *compare.History) chartView {
	c := chartView{ID: fmt.Sprintf("chart-%d", i), Head: "History", Runs: len(h.Points), Steps: len(h.Changes), Unit: h.Unit}
	if at := xLabel(h.X, h.XUnit); at != "" {
		c.Head = "At " + at
	}
	if svg, err := historySVG(h); err == nil {
		c.SVG = template.HTML(svg)
		c.Cut, c.Shown = len(h.Points) > chartRuns, chartRuns
	} else {
		c.Err = err.Error()
	}
	last := h.Points[len(h.Points)-1]
	c.Latest, c.When, c.Outside = value(last.Value), when(last.When), last.Outside
	c.Run = linkCell("../"+runPath(last.Run), strconv.FormatInt(last.Run, 10))
	if last.Band != nil {
		c.Band = value(last.Band.Lo) + "–" + value(last.Band.Hi)
	}
	return c
}

// stepTable is every step at every size, nil when there is none.
func stepTable(all []*compare.History) *tableView {
	t := newTable([]string{"Size", "First run", "Job", "Date", "Before", "After", "Change", "p", "Verdict", "Provenance change"},
		true, true, false, false, true, true, true, true)
	for _, h := range all {
		for _, c := range h.Changes {
			cells := texts(orDash(xLabel(h.X, h.XUnit)), "", orDash(c.Job), when(c.When), value(c.Before), value(c.After), pct(c.Delta), full(c.P), "", orDash(provenanceText(c.Provenance)))
			cells[1], cells[8] = linkCell("../"+runPath(c.Run), strconv.FormatInt(c.Run, 10)), mark(string(c.Change))
			x := ""
			if h.X != nil {
				x = full(*h.X)
			}
			t.add(row{Cells: cells, Step: &stepAttrs{X: x, Index: c.Index, Run: c.Run, Before: full(c.Before), After: full(c.After),
				Delta: full(c.Delta), P: full(c.P), Change: string(c.Change)}})
		}
	}
	return t.orNil()
}

// sizeTable is every size's latest value, band and last step.
func sizeTable(all []*compare.History, unit string) *tableView {
	t := newTable([]string{"Size", "Runs", "Latest (" + unit + ")", "Control band", "Latest run", "Steps", "Last step"}, true, true, true, true)
	for _, h := range all {
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
		t.add(row{Cells: texts(orDash(xLabel(h.X, h.XUnit)), strconv.Itoa(len(h.Points)), value(last.Value), band, out, strconv.Itoa(len(h.Changes)), step)})
	}
	return t
}

// historyRuns are the group's runs, the newest first, with their value at
// the key size.
func historyRuns(g *group, key *compare.History, unit string) *tableView {
	vals := map[int64]compare.Point{}
	for _, pt := range key.Points {
		vals[pt.Run] = pt
	}
	col := "Value (" + unit + ")"
	if at := xLabel(key.X, key.XUnit); at != "" {
		col = "At " + at + " (" + unit + ")"
	}
	t := newTable([]string{"Run", "Job", "Date", "Campaign", "Status", col}, true, false, false, false, false, true)
	for i := len(g.runs) - 1; i >= 0; i-- {
		r := &g.runs[i]
		v := "—"
		if pt, ok := vals[r.ID]; ok {
			v = value(pt.Value)
		}
		cells := texts("", orDash(compare.JobName(r)), when(runTime(r)), orDash(r.Campaign), string(r.Status), v)
		cells[0] = linkCell("../"+runPath(r.ID), strconv.FormatInt(r.ID, 10))
		t.add(row{Cells: cells, Bad: r.Status != results.StatusOK})
	}
	return t
}

// runTime is when a run started, else when it was archived.
func runTime(r *store.Run) time.Time {
	if r.Start.IsZero() {
		return r.IngestedAt
	}
	return r.Start
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

	v := runView{Crumbs: []cell{linkCell("../index.html", "index")}, Title: fmt.Sprintf("Run %d — %s — %s", r.ID, orDash(r.Benchmark), orDash(string(r.Status))),
		Bad: r.Status == results.StatusFailed || r.Status == results.StatusInvalid, Config: orDash(store.ConfigOf(r).String()),
		Facts: reports.RunFacts(r, job), Hosts: hostsTable(r.Hosts)}
	for _, l := range pages {
		v.Crumbs = append(v.Crumbs, linkCell("../"+l.path, "history of "+l.text))
	}
	if why := reports.FailureText(r, job, checks); why != "" && v.Bad {
		v.Why = why
	}
	v.Samples, v.Scalars, v.Checks = samplesTable(samples), scalarsTable(scalars), checksTable(checks)
	if script != "" {
		if text, err := readQuote(script); err == nil {
			v.Script, v.ScriptJob, v.ScriptText = script, job.SlurmID, text
		}
	}
	if strings.TrimSpace(raw) != "" {
		if len(raw) > maxQuote {
			v.RawNote = fmt.Sprintf(" (the first %d of %d bytes)", maxQuote, len(raw))
			raw = raw[:maxQuote]
		}
		v.Raw = raw
	}
	body, err := render("run", v)
	if err != nil {
		return err
	}
	return b.write(path, key, webpage.Page{Title: v.Title, Class: "sb-site", Assets: "../", Body: body})
}

// runView is what a run's page shows.
type runView struct {
	Crumbs                        []cell
	Title, Config, Why            string
	Bad                           bool
	Facts                         [][2]string
	Hosts                         *hostsView
	Samples, Scalars, Checks      *tableView
	Script, ScriptJob, ScriptText string
	Raw, RawNote                  string
}

// hostsView is a run's hosts side by side: a column per host, a row per
// field of their provenance.
type hostsView struct {
	Head []string
	Rows [][]cell
}

func hostsTable(hosts []results.Host) *hostsView {
	if len(hosts) == 0 {
		return nil
	}
	v := &hostsView{Head: []string{""}}
	fields := map[string][]string{}
	var order []string
	for hi, h := range hosts {
		v.Head = append(v.Head, reports.NodeName(h))
		for _, f := range reports.HostFields(h) {
			if _, ok := fields[f[0]]; !ok {
				order = append(order, f[0])
				fields[f[0]] = make([]string, len(hosts))
			}
			fields[f[0]][hi] = f[1]
		}
	}
	for _, k := range order {
		r := []cell{{Text: k, Bold: true}}
		for _, val := range fields[k] {
			r = append(r, cell{Text: orDash(val)})
		}
		v.Rows = append(v.Rows, r)
	}
	return v
}

func samplesTable(samples []results.Sample) *tableView {
	t := newTable([]string{"Metric", "x", "Value", "Unit", "Repeat", "Tags"}, false, true, true, false, true)
	for _, s := range samples {
		var tags []string
		for _, k := range slices.Sorted(maps.Keys(s.Tags)) {
			tags = append(tags, k+"="+s.Tags[k])
		}
		t.add(row{Cells: texts(s.Metric, orDash(xLabel(s.X, s.XUnit)), full(s.Value), s.Unit, strconv.Itoa(s.Repeat), strings.Join(tags, ", "))})
	}
	return t.orNil()
}

func scalarsTable(scalars []results.Scalar) *tableView {
	t := newTable([]string{"Name", "Value", "Unit"}, false, true)
	for _, s := range scalars {
		t.add(row{Cells: texts(s.Name, full(s.Value), s.Unit)})
	}
	return t.orNil()
}

func checksTable(checks []store.Check) *tableView {
	t := newTable([]string{"Check", "Value", "Must be", "Result"}, false, true, true)
	for _, c := range checks {
		res := "PASSED"
		if !c.Passed {
			res = "FAILED"
		}
		t.add(row{Cells: texts(c.Name, full(c.Value), strings.TrimSpace(c.Op+" "+full(c.Threshold)), res), Bad: !c.Passed})
	}
	return t.orNil()
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
	clusters := map[string]bool{}
	for _, s := range sums {
		clusters[s.Cluster] = true
	}
	cs := slices.Sorted(maps.Keys(clusters))
	v := indexView{Runs: len(runs), Histories: len(sums), Clusters: len(cs), Latest: "—"}
	latest := time.Time{}
	for i := range runs {
		if t := runTime(&runs[i]); t.After(latest) {
			latest = t
		}
		if runs[i].Status != results.StatusOK {
			v.Failed++
		}
	}
	v.Latest = when(latest)
	for _, s := range sums {
		if c := currentChange(s); c != nil && c.Change == string(compare.Worse) {
			v.Worse++
		}
	}
	for _, c := range cs {
		v.ClusterNames = append(v.ClusterNames, cmp.Or(c, "(no system)"))
	}
	v.Grid = indexGrid(sums, cs)
	v.Steps, v.AllSteps = latestSteps(sums)
	v.StepsCut = v.Steps != nil && len(v.Steps.Rows) < v.AllSteps
	var err error
	if v.Expect, err = b.expectTable(runs); err != nil {
		return err
	}
	v.LatestRuns = newTable([]string{"Run", "Date", "Cluster", "Benchmark", "Campaign", "Job", "Status"}, true)
	const maxRuns = 50
	for i := len(runs) - 1; i >= 0 && len(v.LatestRuns.Rows) < maxRuns; i-- {
		r := &runs[i]
		cells := texts("", when(runTime(r)), orDash(r.System), orDash(r.Benchmark), orDash(r.Campaign), orDash(compare.JobName(r)), string(r.Status))
		cells[0] = linkCell(runPath(r.ID), strconv.FormatInt(r.ID, 10))
		v.LatestRuns.add(row{Cells: cells, Bad: r.Status != results.StatusOK})
	}
	body, err := render("index", v)
	if err != nil {
		return err
	}
	return b.write("index.html", "", webpage.Page{Title: "sbench site", Class: "sb-site", Assets: "./", Body: body})
}

// indexView is what the index shows.
type indexView struct {
	Runs, Histories, Clusters, Failed, Worse int
	Latest                                   string
	ClusterNames                             []string
	Grid                                     []gridRow
	Steps, LatestRuns                        *tableView
	// Expect is the campaigns' acceptance references judged (sbench
	// check's table); nil when no campaign recorded any.
	Expect   *tableView
	AllSteps int
	StepsCut bool
}

// gridRow is a benchmark and metric: per cluster, a line per
// configuration.
type gridRow struct {
	Benchmark, Metric string
	Cells             [][]cellLine
}

// cellLine is one configuration's line in an index cell: its latest value
// at the key size, its sparkline, the change of its current level.
type cellLine struct {
	Page, Name, When, Value, Unit, At string
	Run                               int64
	Spark                             template.HTML
	Change                            *lineChange
	Outside                           bool
}

type lineChange struct {
	Class, Word, When, Arrow, Delta string
	Run                             int64
}

func indexGrid(sums []summary, cs []string) []gridRow {
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
	var grid []gridRow
	for _, k := range keys {
		gr := gridRow{Benchmark: k.bench, Metric: k.metric}
		for _, c := range cs {
			line := cells[k][c]
			slices.SortStableFunc(line, func(x, y summary) int { return cmp.Compare(names[x.Page], names[y.Page]) })
			var ls []cellLine
			for _, s := range line {
				ls = append(ls, lineOf(s, names[s.Page]))
			}
			gr.Cells = append(gr.Cells, ls)
		}
		grid = append(grid, gr)
	}
	return grid
}

func lineOf(s summary, name string) cellLine {
	l := cellLine{Page: s.Page, Name: name, Run: s.LatestRun, When: when(s.LatestWhen), Value: value(s.Latest), Unit: s.Unit,
		Spark: template.HTML(spark(s)), Outside: s.Outside}
	if at := xLabel(s.X, s.XUnit); at != "" {
		l.At = " @ " + at
	}
	if c := currentChange(s); c != nil && c.Change != string(compare.Same) {
		arrow := "▲"
		if c.Delta < 0 {
			arrow = "▼"
		}
		l.Change = &lineChange{Class: c.Change, Word: changeWord(compare.Change(c.Change)), Run: c.Run, When: when(c.When), Arrow: arrow, Delta: pct(c.Delta)}
	}
	return l
}

// latestSteps are the latest steps of every history, the newest first,
// and how many there are; nil when there is none.
func latestSteps(sums []summary) (*tableView, int) {
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
	if len(steps) == 0 {
		return nil, 0
	}
	slices.SortStableFunc(steps, func(x, y step) int { return y.c.When.Compare(x.c.When) })
	const maxSteps = 100
	t := newTable([]string{"Date", "Cluster", "History", "Size", "Configuration", "Change", "Verdict", "First run", "Provenance change"},
		false, false, false, true, false, true, false, true)
	for _, st := range steps[:min(len(steps), maxSteps)] {
		cells := texts(when(st.c.When), orDash(st.s.Cluster), "", orDash(xLabel(st.c.X, st.c.XUnit)), st.s.Config, pct(st.c.Delta), "", "", orDash(st.c.Provenance))
		cells[2], cells[6] = linkCell(st.s.Page, st.s.Benchmark+": "+st.s.Metric), mark(st.c.Change)
		cells[7] = linkCell(runPath(st.c.Run), strconv.FormatInt(st.c.Run, 10))
		t.add(row{Cells: cells})
	}
	return t, len(steps)
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
