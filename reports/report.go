package reports

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/sbench/sbench/compare"
	"github.com/sbench/sbench/expect"
	"github.com/sbench/sbench/reports/typeset"
	"github.com/sbench/sbench/results"
	"github.com/sbench/sbench/screen"
	"github.com/sbench/sbench/store"
)

// Data is what a report shows; the caller fills it from the archive. A
// report of a few runs can hold everything here; one of an archive's years
// gives its runs here and the rest through a Source (NewFrom), which the
// report reads one sample at a time.
type Data struct {
	// Title heads the report; empty means "sbench report — CAMPAIGN(s)".
	Title   string
	Runs    []store.Run
	Samples []store.Sample
	Scalars []store.Scalar
	Checks  []store.Check
	// Jobs gives the Slurm state of the jobs the runs belong to.
	Jobs []store.Job
	// Raw maps a run's id to the tool's output as the run recorded it
	// (results.Bundle.Raw); the appendix quotes it so that every number of
	// the report can be traced back to what the tool printed.
	Raw map[int64]string
	// Scripts maps a Slurm job id to the text of the sbatch script that
	// was submitted for it, for the appendix.
	Scripts map[string]string
	// Generated is the report's date, shown on the title page and written
	// as the PDF's creation date. Zero means the end of the latest run, so
	// that the same Data always gives the same bytes.
	Generated time.Time
	// Version is sbench's version, for the generated-by line.
	Version string
	// Expectations are the campaigns' acceptance references judged on
	// the report's runs (expect/judge), for the table after the verdict.
	Expectations []expect.Verdict
}

// Source is where a report reads what it does not hold: samples and
// scalars, one at a time, run by run (store.DB.EachSample's order), and
// the tool outputs and job scripts of the runs it quotes in full. A report
// keeps per run what its tables need and per measured point a value,
// never the samples; the appendix reads only the outputs it quotes.
// Samples come with their statistics (store.SampleOptions.Stats): the
// verdict quotes a latency kernel's median over its iterations (P50),
// not its mean.
type Source interface {
	EachSample(ctx context.Context, fn func(store.Sample) error) error
	EachScalar(ctx context.Context, fn func(store.Scalar) error) error
	// Raw is the tool's output a run recorded (results.Bundle.Raw), ""
	// when it has none.
	Raw(ctx context.Context, run int64) (string, error)
	// Script is the sbatch script a Slurm job was submitted with, "" when
	// it is not known.
	Script(ctx context.Context, job string) (string, error)
}

// dataSource serves a Data's own samples, scalars, outputs and scripts.
type dataSource struct{ d *Data }

// EachSample gives the samples run by run, as a Source does, whatever
// their order in Data (stably: a run's keep theirs).
func (s dataSource) EachSample(_ context.Context, fn func(store.Sample) error) error {
	order := make([]int, len(s.d.Samples))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(s.d.Samples[a].RunID, s.d.Samples[b].RunID) })
	for _, i := range order {
		if err := fn(s.d.Samples[i]); err != nil {
			return err
		}
	}
	return nil
}

func (s dataSource) EachScalar(_ context.Context, fn func(store.Scalar) error) error {
	for _, x := range s.d.Scalars {
		if err := fn(x); err != nil {
			return err
		}
	}
	return nil
}

func (s dataSource) Raw(_ context.Context, run int64) (string, error) { return s.d.Raw[run], nil }

func (s dataSource) Script(_ context.Context, job string) (string, error) {
	return s.d.Scripts[job], nil
}

// Option configures a report.
type Option func(*options) error

type options struct {
	compress     bool
	figureDir    string
	figureFormat string
	csvDir       string
	groupBy      string
	families     bool
	linkRate     float64 // Gb/s; 0 means from provenance
	rpeak        float64 // Gflops; 0 means unknown
	fontPath     string
	fontDirs     []string
	searchFonts  bool
	comparison   *Comparison
	appendix     string // AppendixAuto, AppendixAll …
	overview     int    // 0 auto, 1 always, -1 never
	screen       screen.Options
}

// WithCompression turns compression of the PDF's page streams on (the
// default) or off; off is for reading the drawing operators while debugging.
func WithCompression(on bool) Option {
	return func(o *options) error { o.compress = on; return nil }
}

// WithFigureDir also saves every figure into dir as a file of the given
// format (png, svg, pdf, eps, jpg or tiff) when the report is written.
func WithFigureDir(dir, format string) Option {
	return func(o *options) error {
		if err := checkFigureFormat(format); err != nil {
			return err
		}
		o.figureDir, o.figureFormat = dir, format
		return nil
	}
}

// WithCSVDir also writes the data of every figure and the summary tables
// into dir as CSV files when the report is written (see WriteCSV).
func WithCSVDir(dir string) Option {
	return func(o *options) error { o.csvDir = dir; return nil }
}

// WithGroupBy makes the value of one label (or, when no run has that
// label, one parameter) what tells configurations apart: one line per
// value in every figure. Besides labels and parameters, "variant",
// "campaign", "benchmark" and "ranks" name the runs' own fields, and
// "family" is WithFamilies.
func WithGroupBy(key string) Option {
	return func(o *options) error {
		if strings.TrimSpace(key) == "" {
			return fmt.Errorf("group by: empty key")
		}
		if key == "family" {
			o.families = true
			return nil
		}
		o.groupBy = key
		return nil
	}
}

// WithFamilies draws the same metric of different benchmarks side by
// side: the latency (or bandwidth) against message size of every
// point-to-point benchmark — osu_latency, IMB's PingPong, the runner's
// latency kernel — in one section, "Metric family: point-to-point", and a
// collective's with the same operation's (compare.MetricFamily). Each
// figure's lines are the tools that measured them, with their version
// (compare.ToolLabel: "osu-micro-benchmarks 7.4 (osu_latency)",
// "sbench-runner 0.9.0 latency"); a figure is drawn per value of the
// configuration attributes the tools share (the intra- and inter-node
// variants both ran). Other measurements (HPL, values without a size)
// keep their benchmark's section.
func WithFamilies() Option {
	return func(o *options) error { o.families = true; return nil }
}

// WithLinkRate sets the theoretical link rate, in Gb/s, that bandwidth
// figures draw as a reference and summaries compare against, instead of the
// rate each run's provenance (or its link_rate label) gives.
func WithLinkRate(gbps float64) Option {
	return func(o *options) error {
		if gbps <= 0 {
			return fmt.Errorf("link rate %g Gb/s: want a positive rate", gbps)
		}
		o.linkRate = gbps
		return nil
	}
}

// WithRpeak sets the theoretical peak of the HPL runs' machine, in Gflops,
// for their efficiency. Without it, a run's own "rpeak" scalar or label is
// used, and efficiency is left out when there is none.
func WithRpeak(gflops float64) Option {
	return func(o *options) error {
		if gflops <= 0 {
			return fmt.Errorf("rpeak %g Gflops: want a positive number", gflops)
		}
		o.rpeak = gflops
		return nil
	}
}

// WithFont sets all the report's text, figures included, in the TrueType
// font at path (a .ttf file), embedded in the PDF: what Japanese, Korean
// or any other text outside Windows-1252 needs.
func WithFont(path string) Option {
	return func(o *options) error { o.fontPath = path; return nil }
}

// FontError is a font given with WithFont that cannot be used: the user's
// mistake, which the CLI reports as such.
type FontError = typeset.FontError

// WithFontSearch makes the report look for a font in dirs (SystemFontDirs
// when none are given) when its text has characters the PDF core fonts
// cannot show and no font was given with WithFont.
func WithFontSearch(dirs ...string) Option {
	return func(o *options) error {
		o.searchFonts = true
		o.fontDirs = dirs
		if len(dirs) == 0 {
			o.fontDirs = typeset.SystemFontDirs
		}
		return nil
	}
}

// Appendix modes (WithAppendix).
const (
	// AppendixAuto quotes every run of a report of at most maxAppendix
	// runs; of a larger one, the newest maxAppendix failed or invalid
	// runs, and says how many it left out.
	AppendixAuto = "auto"
	// AppendixAll quotes every run.
	AppendixAll = "all"
	// AppendixFailed quotes every failed or invalid run.
	AppendixFailed = "failed"
	// AppendixNone leaves the appendix out.
	AppendixNone = "none"
)

// WithAppendix chooses the runs the appendix quotes: AppendixAuto (the
// default), AppendixAll, AppendixFailed or AppendixNone.
func WithAppendix(mode string) Option {
	return func(o *options) error {
		switch mode {
		case AppendixAuto, AppendixAll, AppendixFailed, AppendixNone:
			o.appendix = mode
			return nil
		}
		return fmt.Errorf("appendix %q: want all, failed or none", mode)
	}
}

// WithOverview puts the overview (Overview) after the title page, or
// leaves it out. By default a report has one when its runs span several
// systems or campaigns, more than a week, or at least overviewRuns runs.
func WithOverview(on bool) Option {
	return func(o *options) error {
		o.overview = map[bool]int{true: 1, false: -1}[on]
		return nil
	}
}

// Report is a report laid out from Data: its figures are built and can be
// saved on their own, and WriteTo writes the PDF.
type Report struct {
	data    Data
	src     Source
	ctx     context.Context
	opts    options
	runs    []store.Run // sorted by id
	byID    map[int64]*store.Run
	jobs    map[string]*store.Job
	configs *configs
	font    *typeset.Font
	text    *textStyles
	// missingGlyphs are characters the report's text needs and its fonts
	// lack; fontNote says why, for the title page and Warnings.
	missingGlyphs []rune
	fontNote      string
	fview         *familyView
	families      []*familyResult
	figures       []Figure
	verdict       []string
	notes         []string
	// checks are the runs' validity checks, by run.
	checks map[int64][]store.Check
	// sampleTexts are the distinct texts of the samples (metrics, units,
	// tags) that need more than ASCII, for the choice of font.
	sampleTexts map[string]bool
	overview    *compare.Overview
	// groups and mismatch are hostGroups and hostMismatches, once worked
	// out.
	groups   []*hostGroup
	mismatch *[]string
	// appendixRuns and listedRuns are the runs the appendix quotes and the
	// runs section lists (indexes in runs); raw and scripts their outputs
	// and job scripts.
	appendixRuns, listedRuns []int
	raw                      map[int64]quote
	scripts                  map[string]string
	// screen is the screening's verdict on the runs (package screen), nil
	// when they hold no screening; screenRuns are the runs it judges (the
	// newest screening's) and screenSamples their samples, while they are
	// read.
	screen        *screen.Verdict
	screenRuns    map[int64]bool
	screenSamples []store.Sample
}

// New lays out a report of d, all of whose data it holds.
func New(d Data, opts ...Option) (*Report, error) {
	return NewFrom(context.Background(), d, nil, opts...)
}

// NewFrom lays out a report of d's runs, reading their samples, scalars,
// outputs and scripts from src (d's own when src is nil) with ctx. The
// report keeps d.Runs when they come sorted by id (store.Filter order
// sorted, as cmd/sbench gives them): do not change them afterwards.
func NewFrom(ctx context.Context, d Data, src Source, opts ...Option) (*Report, error) {
	r := &Report{data: d, src: src, ctx: ctx, opts: options{compress: true, appendix: AppendixAuto, screen: screen.DefaultOptions()}}
	if r.src == nil {
		r.src = dataSource{&r.data}
	}
	for _, o := range opts {
		if err := o(&r.opts); err != nil {
			return nil, err
		}
	}
	if slices.IsSortedFunc(d.Runs, func(a, b store.Run) int { return cmp.Compare(a.ID, b.ID) }) {
		r.runs = d.Runs
	} else {
		r.runs = append([]store.Run(nil), d.Runs...)
		sort.SliceStable(r.runs, func(i, j int) bool { return r.runs[i].ID < r.runs[j].ID })
	}
	var dups []int64 // sorted by id, a run's copies are neighbours
	for i := 1; i < len(r.runs); i++ {
		if r.runs[i].ID == r.runs[i-1].ID {
			dups = append(dups, r.runs[i].ID)
		}
	}
	if len(dups) > 0 {
		r.notef("run%s %s appear%s more than once in the data; the first copy is used",
			results.Plural(len(slices.Compact(dups))), store.FormatRunIDs(dups), verbS(len(slices.Compact(dups))))
		r.runs = slices.CompactFunc(slices.Clone(r.runs), func(a, b store.Run) bool { return a.ID == b.ID })
	}
	r.byID = make(map[int64]*store.Run, len(r.runs))
	for i := range r.runs {
		r.byID[r.runs[i].ID] = &r.runs[i]
	}
	r.checks = map[int64][]store.Check{}
	for _, c := range d.Checks {
		r.checks[c.RunID] = append(r.checks[c.RunID], c)
	}
	r.jobs = make(map[string]*store.Job, len(d.Jobs))
	for i := range d.Jobs {
		j := &d.Jobs[i]
		if _, dup := r.jobs[j.SlurmID]; !dup && j.SlurmID != "" {
			r.jobs[j.SlurmID] = j
		}
	}
	if r.data.Generated.IsZero() {
		r.data.Generated = latestRunTime(r.runs)
	}
	r.configs = newConfigs(r.runs, r.opts.groupBy)
	r.chooseScreening()
	if err := r.buildFamilyView(); err != nil {
		return nil, err
	}
	if err := r.analyse(); err != nil {
		return nil, err
	}
	r.screen = r.screening()
	if err := r.chooseQuoted(); err != nil {
		return nil, err
	}
	if err := r.chooseFont(); err != nil {
		return nil, err
	}
	r.text = newTextStyles(r.font)
	r.buildFigures()
	r.verdict = r.computeVerdict()
	if c := r.opts.comparison; c != nil && len(c.Summary) > 0 {
		r.verdict = append(r.verdict, c.Summary[0])
	}
	if r.screen != nil {
		r.verdict = append(r.verdict, "Screening: "+r.screen.Summary()+".")
	}
	return r, nil
}

// chooseFont loads the font the report's text needs: the one given, else,
// when the text has characters outside Windows-1252 and a search was asked
// for, the best one found.
func (r *Report) chooseFont() error {
	if r.opts.fontPath != "" {
		f, err := typeset.LoadFont(r.opts.fontPath)
		if err != nil {
			return err
		}
		r.font = f
		r.checkGlyphs()
		return nil
	}
	need := typeset.NeedsFont(r.texts)
	if len(need) == 0 {
		return nil
	}
	if r.opts.searchFonts {
		if path, _ := typeset.FindFont(r.opts.fontDirs, need); path != "" {
			f, err := typeset.LoadFont(path)
			if err == nil {
				r.font = f
				r.checkGlyphs()
				return nil
			}
		}
	}
	r.missingGlyphs = need
	r.fontNote = fmt.Sprintf("%d character%s of the report's text (%s) need a font with %s glyphs: "+
		"pass a TrueType font (--font FILE.ttf), or install fonts-ipafont-gothic (Japanese) or fonts-nanum (Korean); "+
		"they are printed as '?'",
		len(need), results.Plural(len(need)), runeSample(need, 4), scriptNames(need))
	return nil
}

// checkGlyphs notes the characters the chosen font lacks.
func (r *Report) checkGlyphs() {
	var miss []rune
	for _, c := range typeset.NeedsFont(r.texts) {
		if !r.font.Has(c) {
			miss = append(miss, c)
		}
	}
	if len(miss) > 0 {
		r.missingGlyphs = miss
		r.fontNote = fmt.Sprintf("the font %s has no glyph for %d character%s of the report's text (%s); they are printed as '?'",
			filepath.Base(r.font.Path()), len(miss), results.Plural(len(miss)), runeSample(miss, 4))
	}
}

// FontPath is the TrueType font the report's text is set in, "" for the
// PDF core fonts.
func (r *Report) FontPath() string {
	if r.font == nil {
		return ""
	}
	return r.font.Path()
}

// Warnings says what the reader of the PDF could miss: characters no font
// could show, nodes that differ, runs that failed. The CLI prints them.
func (r *Report) Warnings() []string {
	var w []string
	if r.fontNote != "" {
		w = append(w, r.fontNote)
	}
	return append(w, r.mismatches()...)
}

func runeSample(rs []rune, max int) string {
	var parts []string
	for i, c := range rs {
		if i == max {
			parts = append(parts, "…")
			break
		}
		parts = append(parts, fmt.Sprintf("U+%04X", c))
	}
	return strings.Join(parts, " ")
}

// scriptNames names the writing systems of rs, for the user to know which
// font to look for.
func scriptNames(rs []rune) string {
	var kana, hangul, han, other bool
	for _, c := range rs {
		switch {
		case c >= 0x3040 && c <= 0x30FF:
			kana = true
		case c >= 0xAC00 && c <= 0xD7AF || c >= 0x1100 && c <= 0x11FF || c >= 0x3130 && c <= 0x318F:
			hangul = true
		case c >= 0x4E00 && c <= 0x9FFF:
			han = true
		default:
			other = true
		}
	}
	var names []string
	if kana {
		names = append(names, "Japanese")
	}
	if hangul {
		names = append(names, "Korean")
	}
	if han && !kana && !hangul {
		names = append(names, "CJK")
	}
	if other || len(names) == 0 {
		names = append(names, "Unicode")
	}
	return strings.Join(names, " and ")
}

// texts yields every text the report can show, so that the font is chosen
// before anything is drawn.
func (r *Report) texts(yield func(string)) {
	yield(r.data.Title)
	hosts := map[*results.Host]bool{} // shared between runs: seen once
	for i := range r.runs {
		run := &r.runs[i]
		for _, s := range []string{run.Campaign, run.Variant, run.Benchmark, run.Kernel, run.Tool, run.ToolVer,
			run.Error, run.Launcher, run.Source, run.Origin} {
			yield(s)
		}
		for _, s := range run.Command {
			yield(s)
		}
		for k, v := range run.Labels {
			yield(k)
			yield(v)
		}
		for k, v := range run.Params {
			yield(k)
			yield(v)
		}
		for j := range run.Hosts {
			h := &run.Hosts[j]
			if hosts[h] {
				continue
			}
			hosts[h] = true
			for _, f := range HostFields(*h) {
				yield(f[1])
			}
			yield(NodeName(*h))
		}
	}
	for _, q := range r.raw {
		for _, l := range q.lines {
			yield(l)
		}
	}
	for _, cs := range r.checks {
		for _, c := range cs {
			yield(c.Name)
		}
	}
	for s := range r.sampleTexts {
		yield(s)
	}
	for _, s := range r.scripts {
		yield(excerpt(s, scriptHead, 0))
	}
}

// mismatches is hostMismatches of the report's runs, worked out once.
func (r *Report) mismatches() []string {
	if r.mismatch == nil {
		m := hostMismatches(r.runs)
		r.mismatch = &m
	}
	return *r.mismatch
}

// Write lays out a report of d and writes it to w as a PDF.
func Write(w io.Writer, d Data, opts ...Option) error {
	r, err := New(d, opts...)
	if err != nil {
		return err
	}
	_, err = r.WriteTo(w)
	return err
}

// Notes returns what the report could not show and why (metrics it does not
// plot yet, units it does not know, samples of unknown runs).
func (r *Report) Notes() []string { return append([]string(nil), r.notes...) }

func (r *Report) notef(format string, args ...any) {
	r.notes = append(r.notes, fmt.Sprintf(format, args...))
}

// Figures returns the report's figures in the order the PDF shows them.
func (r *Report) Figures() []Figure { return append([]Figure(nil), r.figures...) }

// Verdict returns the report's verdict: sentences computed from the data,
// the same the PDF opens with.
func (r *Report) Verdict() []string { return append([]string(nil), r.verdict...) }

// SaveFigures writes every figure to dir as NAME.FORMAT, each file
// atomically, at the size it has in the PDF.
func (r *Report) SaveFigures(dir, format string) error {
	if err := checkFigureFormat(format); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("save figures: %w", err)
	}
	for _, f := range r.figures {
		wt, err := f.Plot.WriterTo(f.width(), f.height(), format)
		if err != nil {
			return fmt.Errorf("save figure %s: %w", f.Name, err)
		}
		var buf bytes.Buffer
		if _, err := wt.WriteTo(&buf); err != nil {
			return fmt.Errorf("save figure %s: %w", f.Name, err)
		}
		path := filepath.Join(dir, f.Name+"."+format)
		if err := results.WriteAtomic(path, buf.Bytes(), 0o644); err != nil {
			return fmt.Errorf("save figure %s: %w", f.Name, err)
		}
	}
	return nil
}

func checkFigureFormat(format string) error {
	switch format {
	case "png", "svg", "pdf", "eps", "jpg", "jpeg", "tif", "tiff":
		return nil
	}
	return fmt.Errorf("figure format %q: want png, svg, pdf, eps, jpg or tiff", format)
}

// WriteTo writes the report as a PDF.
func (r *Report) WriteTo(w io.Writer) (int64, error) {
	if err := r.saveExtras(); err != nil {
		return 0, err
	}
	producer := "sbench"
	if r.data.Version != "" {
		producer += " " + r.data.Version
	}
	doc := typeset.New(producer, r.data.Generated, r.opts.compress, r.font)
	renderPDF(doc, r.content())
	r.replacementNote(doc)
	return doc.Output(w)
}

// content is the report's content, section by section, as the PDF
// (WriteTo) and the HTML page (WriteHTML) both render it.
func (r *Report) content() *content {
	doc := &content{}
	r.titlePage(doc)
	r.overviewSection(doc)
	if r.showOverview() {
		doc.newPage()
		r.verdictSection(doc)
	}
	r.systemSection(doc)
	r.screeningSection(doc)
	r.runsSection(doc)
	r.familySections(doc)
	r.comparisonSection(doc)
	r.notesSection(doc)
	r.appendix(doc)
	return doc
}

// latestRunTime is the latest end (or start) of the runs, or the Unix epoch
// when none has a time.
func latestRunTime(runs []store.Run) time.Time {
	var t time.Time
	for _, run := range runs {
		for _, c := range []time.Time{run.Start, run.End, run.IngestedAt} {
			if c.After(t) {
				t = c
			}
		}
	}
	if t.IsZero() {
		return time.Unix(0, 0).UTC()
	}
	return t
}

// campaigns returns the distinct campaign names of the runs, sorted.
func (r *Report) campaigns() []string {
	return r.sortedValues(func(run *store.Run) string { return run.Campaign })
}

// sortedValues is the distinct non-empty values of of(run) among the runs,
// sorted.
func (r *Report) sortedValues(of func(run *store.Run) string) []string {
	set := map[string]bool{}
	for i := range r.runs {
		if v := of(&r.runs[i]); v != "" {
			set[v] = true
		}
	}
	return slices.Sorted(maps.Keys(set))
}

// title is the report's title, defaulted from its campaigns.
func (r *Report) title() string {
	if r.data.Title != "" {
		return r.data.Title
	}
	cs := r.campaigns()
	if len(cs) == 0 {
		return "sbench report"
	}
	return "sbench report — " + strings.Join(cs, ", ")
}

// jobOf returns the recorded Slurm job of a run, if any.
func (r *Report) jobOf(run *store.Run) *store.Job {
	if run.JobID == "" {
		return nil
	}
	if run.ArrayIndex != "" {
		if j, ok := r.jobs[run.JobID+"_"+run.ArrayIndex]; ok {
			return j
		}
	}
	return r.jobs[run.JobID]
}

// bad reports whether a run's numbers must stay out of figures and
// summaries.
func bad(run *store.Run) bool {
	return run.Status == results.StatusFailed || run.Status == results.StatusInvalid
}

// badRuns counts the report's failed or invalid runs.
func (r *Report) badRuns() int { return countFunc(r.runs, bad) }

// countFunc counts the elements of s that f holds for.
func countFunc[T any](s []T, f func(*T) bool) int {
	n := 0
	for i := range s {
		if f(&s[i]) {
			n++
		}
	}
	return n
}
