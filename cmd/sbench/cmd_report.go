package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"github.com/sbench/sbench/compare"

	"github.com/sbench/sbench/reports"
	"github.com/sbench/sbench/results"
	"github.com/sbench/sbench/store"
)

// reportOptions are sbench report's flags.
type reportOptions struct {
	filter       filterFlags
	out, title   string
	groupBy      string
	linkRate     string
	rpeak        float64
	font         string
	figures      string
	figureFormat string
	csvDir       string
	baseline     string
	threshold    string
	appendix     string
	overview     string
	format       string
}

func newReportCmd(e *env) *cobra.Command {
	var o reportOptions
	c := &cobra.Command{
		Use:   "report -o report.pdf|report.html [filters] [options]",
		Short: "Write a PDF or HTML report of the archived runs",
		Long: `Report writes the PDF an engineer hands over after testing a cluster:

  - a title page with the campaigns, dates, system and a verdict computed
    from the data (peak bandwidth and where it is reached, share of the rate
    of the link the traffic crossed, latency at the smallest size, each the
    median of its runs with their count and range; ratios between
    configurations whose runs tell them apart; the slowest node pair, the
    best valid HPL result);
  - the system table from the runs' provenance (CPU, cores, memory, OS,
    kernel, MPI, InfiniBand ports), with nodes that differ called out;
  - the runs, failed and invalid ones in red with their errors;
  - per benchmark: bandwidth and latency against message size (one line per
    configuration, the median of repeats with their min-max band, the link's
    theoretical rate dashed), a small-message latency zoom, collectives per
    process count, node-pair heatmaps, HPL's table with its residual checks
    (invalid rows struck through), scaling against the process count, and
    summary tables (peak, % of link, N½, latency, ratios);
  - with --baseline NAME, a section comparing the report's runs with the
    runs of that baseline (sbench baseline set), as sbench compare does:
    old, new, change, p-value when both sides have repeats, regressions in
    red and named in the verdict;
  - an appendix quoting each run's job, command, script, hosts and output.

A report over many campaigns, systems or months (or of 100 runs or more)
opens with an overview: per system, benchmark and configuration, a key
figure over time — its latest value, a trace of every run, its level now
against its first, the changes of level sbench history would find (with
what changed in the runs' provenance) and the runs that failed. Such a
report sums its runs up per system and benchmark rather than listing them,
and its appendix quotes at most 50 runs: every run of a report of 50 runs
or fewer, else the newest failed and invalid ones, saying how many it left
out (--appendix all quotes every run, --appendix failed every failed one,
--appendix none none). The archive is read one sample at a time, so a
report of years costs what its figures need, not the samples; a progress
bar shows on a terminal.

Configurations are told apart by variant, or by the labels runs were
ingested with; --group-by KEY makes one label (or parameter) the line of
every figure. --group-by family draws the same metric of different
benchmarks in one figure instead: osu_latency, IMB's PingPong and
sbench-runner's latency kernel are all latency against message size of the
point-to-point family, so each figure of that family has a line per tool,
named with its version and benchmark ("osu-micro-benchmarks 7.4
(osu_latency)", "sbench-runner 0.9 latency"),
and there is a figure per configuration the tools share (an intra-node and
an inter-node variant); sbench compare --group-by family matches the same
rows. The link rate comes from the runs' InfiniBand or network
provenance or their link_rate label; --link-rate sets it for all.

Text in Japanese, Korean or any script outside Windows-1252 needs a TrueType
font: --font FILE.ttf, else one is looked for in the system's font folders
(Debian: fonts-ipafont-gothic, fonts-nanum). Without one, such characters
print as '?' and the report says so on its title page and on stderr.

-o report.html (or --format html) writes the same report as one HTML page
that needs nothing else: figures as inline SVG (a point's value, size and
runs on hover, a click on a legend entry hides its series), tables that
sort by a click on a column, no font, script or image loaded from anywhere,
so it opens from a file share or file:// on an air-gapped cluster and
prints as it shows. Its text needs no --font: the browser has the glyphs.

The verdict is printed on stdout as well. The file is written atomically:
an existing report is replaced only by a complete one.`,
		Example: `  sbench report -o report.pdf
  sbench report -o report.html
  sbench report --campaign acceptance --format html -o acceptance.htm
  sbench report --campaign erdma-vs-tcp --title "eRDMA vs TCP" -o erdma.pdf
  sbench report --label article=000 --group-by fabric --link-rate 10Gbps -o ib.pdf
  sbench report --since 2025-03-01 --figures figs --figure-format svg --csv data -o march.pdf
  sbench report --campaign acceptance --baseline pre-upgrade -o after-upgrade.pdf
  sbench report --campaign tools-vs-native --group-by family -o tools.pdf
  sbench report --title "性能評価" --font /usr/share/fonts/opentype/ipafont-gothic/ipag.ttf -o ja.pdf
  sbench report -o site.pdf                        # the whole archive: overview, then the sections
  sbench report --system alpha --since 90d --appendix failed -o alpha.pdf`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runReport(cmd.Context(), e, o)
		},
	}
	o.filter.add(c)
	fl := c.Flags()
	fl.StringVarP(&o.out, "output", "o", "", "report to write: a .pdf or .html file")
	fl.StringVar(&o.format, "format", "", "pdf or html (default: from -o's extension, else pdf)")
	fl.StringVar(&o.title, "title", "", "report title (default: from the campaigns)")
	fl.StringVar(&o.groupBy, "group-by", "", "label or parameter whose values are the figures' lines (default: variant, else labels); family: one figure per metric family, a line per tool")
	fl.StringVar(&o.linkRate, "link-rate", "auto", "theoretical link rate for the bandwidth figures, e.g. 100Gbps, 25Gb/s, 12500MB/s; auto: from provenance, of a link the runs' traffic crossed (none for loopback)")
	fl.Float64Var(&o.rpeak, "rpeak", 0, "theoretical peak of the HPL runs' nodes in Gflops (default: from provenance)")
	fl.StringVar(&o.font, "font", "", "TrueType font (.ttf) for text outside Windows-1252 (default: look in the system's fonts when needed)")
	fl.StringVar(&o.figures, "figures", "", "also save every figure into this directory")
	fl.StringVar(&o.figureFormat, "figure-format", "png", "format of --figures: png, svg or pdf")
	fl.StringVar(&o.csvDir, "csv", "", "also write every figure's data and the summaries as CSV into this directory")
	fl.StringVar(&o.baseline, "baseline", "", "add a section comparing the runs with this baseline's (sbench baseline list)")
	fl.StringVar(&o.threshold, "threshold", "5%", "with --baseline: smallest change that counts, as in sbench compare")
	fl.StringVar(&o.appendix, "appendix", "", "runs the appendix quotes: all, failed or none (default: every run of a report of at most 50, else the newest 50 failed or invalid)")
	fl.StringVar(&o.overview, "overview", "auto", "the overview of the runs over time: auto (when they span systems, campaigns, weeks or 100 runs), always or never")
	return c
}

// reportOptions checks the flags and turns them into the store's filter and
// the report's options.
func (o reportOptions) reportOptions() (store.Filter, []reports.Option, error) {
	if o.out == "" {
		return store.Filter{}, nil, usagef("report: -o FILE is required")
	}
	if _, err := o.outputFormat(); err != nil {
		return store.Filter{}, nil, err
	}
	flt, err := o.filter.filter()
	if err != nil {
		return flt, nil, err
	}
	opts := []reports.Option{reports.WithFontSearch()}
	if o.groupBy != "" {
		opts = append(opts, reports.WithGroupBy(o.groupBy))
	}
	rate, err := reports.ParseLinkRateFlag(o.linkRate)
	if err != nil {
		return flt, nil, usageError{fmt.Errorf("report: --link-rate: %w", err)}
	}
	if rate > 0 {
		opts = append(opts, reports.WithLinkRate(rate))
	}
	if o.rpeak < 0 {
		return flt, nil, usagef("report: --rpeak %g: want a positive number of Gflops", o.rpeak)
	}
	if o.rpeak > 0 {
		opts = append(opts, reports.WithRpeak(o.rpeak))
	}
	if o.font != "" {
		opts = append(opts, reports.WithFont(o.font))
	}
	if o.figures != "" {
		switch o.figureFormat {
		case "png", "svg", "pdf":
		default:
			return flt, nil, usagef("report: --figure-format %q: want png, svg or pdf", o.figureFormat)
		}
		opts = append(opts, reports.WithFigureDir(o.figures, o.figureFormat))
	}
	if o.csvDir != "" {
		opts = append(opts, reports.WithCSVDir(o.csvDir))
	}
	switch o.appendix {
	case "":
	case reports.AppendixAll, reports.AppendixFailed, reports.AppendixNone:
		opts = append(opts, reports.WithAppendix(o.appendix))
	default:
		return flt, nil, usagef("report: --appendix %q: want all, failed or none", o.appendix)
	}
	switch o.overview {
	case "auto":
	case "always", "never":
		opts = append(opts, reports.WithOverview(o.overview == "always"))
	default:
		return flt, nil, usagef("report: --overview %q: want auto, always or never", o.overview)
	}
	return flt, opts, nil
}

// outputFormat is the report's format: --format, else -o's extension
// (.html, .htm), else PDF.
func (o reportOptions) outputFormat() (string, error) {
	switch f := strings.ToLower(o.format); f {
	case "pdf", "html":
		return f, nil
	case "":
	default:
		return "", usagef("report: --format %q: want pdf or html", o.format)
	}
	switch strings.ToLower(filepath.Ext(o.out)) {
	case ".html", ".htm", ".xhtml":
		return "html", nil
	}
	return "pdf", nil
}

func runReport(ctx context.Context, e *env, o reportOptions) error {
	flt, opts, err := o.reportOptions()
	if err != nil {
		return err
	}
	db, err := openDBRead(e)
	if err != nil {
		return err
	}
	defer db.Close()
	raiseHeap(reportHeapLimit)
	d, src, err := reportData(ctx, db, flt)
	if err != nil {
		return err
	}
	d.Title, d.Generated, d.Version = o.title, time.Now(), version
	if d.Expectations, err = recordedVerdicts(ctx, db, d.Runs, flt); err != nil {
		return err
	}
	if o.baseline != "" {
		c, err := baselineComparison(ctx, db, flt, o.baseline, o.threshold)
		if err != nil {
			return err
		}
		opts = append(opts, reports.WithComparison(c))
	}
	// A bar over the samples read (twice with --group-by family: the
	// family view reads them once more).
	total, err := db.CountSamples(ctx, flt)
	if err != nil {
		return err
	}
	if o.groupBy == "family" {
		total *= 2
	}
	bar := newProgressBar(e, "report", total, total > 100000)
	defer bar.Finish()
	src.progress = bar
	r, err := reports.NewFrom(ctx, d, src, opts...)
	if err != nil {
		var fe *reports.FontError
		if errors.As(err, &fe) {
			return usageError{fmt.Errorf("report: --font: %w", err)}
		}
		return fmt.Errorf("report: %w", err)
	}
	bar.Describe("report: writing " + o.out)
	f, err := results.CreateAtomic(o.out, 0o644)
	if err != nil {
		return err
	}
	defer f.Abort()
	warnings := r.Warnings
	var size int64
	if format, _ := o.outputFormat(); format == "html" {
		size, err = r.WriteHTML(f)
		warnings = r.HTMLWarnings
	} else {
		size, err = r.WriteTo(f)
	}
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	if err := f.Commit(); err != nil {
		return err
	}
	bar.Finish()
	for _, w := range warnings() {
		fmt.Fprintln(e.stderr, "sbench: warning:", w)
	}
	printReportSummary(e.stdout, o.out, r, len(d.Runs), int(size))
	return nil
}

func printReportSummary(w io.Writer, path string, r *reports.Report, runs, size int) {
	font := ""
	if p := r.FontPath(); p != "" {
		font = ", text in " + p
	}
	n := len(r.Figures())
	fmt.Fprintf(w, "wrote %s (%d run%s, %d figure%s, %d bytes%s)\n", path, runs, sOf(runs), n, sOf(n), size, font)
	for _, v := range r.Verdict() {
		fmt.Fprintln(w, "  "+v)
	}
}

// reportData reads the runs the filter selects, with their checks and
// jobs, and the source the report reads their samples, outputs and job
// scripts from: one sample at a time, and only the outputs it quotes.
func reportData(ctx context.Context, db *store.DB, flt store.Filter) (reports.Data, *reportSource, error) {
	var d reports.Data
	n, err := db.CountRuns(ctx, flt)
	if err != nil {
		return d, nil, err
	}
	// Sized once: a year of runs held in a slice that doubled as it grew
	// would cost half as much again while it grew.
	d.Runs = make([]store.Run, 0, n)
	src := &reportSource{db: db, flt: flt, known: make(map[int64]bool, n)}
	err = db.EachRun(ctx, flt, store.RunOptions{}, func(r *store.Run) error {
		r.Hash = "" // the report never shows it
		d.Runs = append(d.Runs, *r)
		src.known[r.ID] = true
		return nil
	})
	if err != nil {
		return d, nil, err
	}
	if len(d.Runs) == 0 {
		return d, nil, noRuns(ctx, db, "report", flt)
	}
	// By id, as the report keeps them: no copy.
	slices.SortFunc(d.Runs, func(a, b store.Run) int { return cmp.Compare(a.ID, b.ID) })
	if d.Checks, err = db.Checks(ctx, flt); err != nil {
		return d, nil, err
	}
	if d.Jobs, err = db.Jobs(ctx, flt.Campaign); err != nil {
		return d, nil, err
	}
	for _, j := range d.Jobs {
		if j.Script != "" {
			if src.scripts == nil {
				src.scripts = map[string]string{}
			}
			src.scripts[j.SlurmID] = j.Script
		}
	}
	return d, src, nil
}

// reportSource is the archive as a report reads it (reports.Source): the
// samples and scalars of its runs, streamed, and the outputs and scripts
// of the runs it quotes. A run ingested after the report read its runs is
// not among them: its samples are left out.
type reportSource struct {
	db       *store.DB
	flt      store.Filter
	known    map[int64]bool
	scripts  map[string]string // job id -> script path
	progress *progressbar.ProgressBar
}

func (s *reportSource) EachSample(ctx context.Context, fn func(store.Sample) error) error {
	n := 0
	// With the statistics: the verdict quotes a latency's median (p50).
	err := s.db.EachSample(ctx, s.flt, store.SampleOptions{Stats: true}, func(x store.Sample) error {
		if n++; n%4096 == 0 && s.progress != nil {
			s.progress.Add(4096)
		}
		if !s.known[x.RunID] {
			return nil
		}
		return fn(x)
	})
	if s.progress != nil {
		s.progress.Add(n % 4096)
	}
	return err
}

func (s *reportSource) EachScalar(ctx context.Context, fn func(store.Scalar) error) error {
	return s.db.EachScalar(ctx, s.flt, func(x store.Scalar) error {
		if !s.known[x.RunID] {
			return nil
		}
		return fn(x)
	})
}

func (s *reportSource) Raw(ctx context.Context, id int64) (string, error) {
	b, err := s.db.Bundle(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return b.Raw, nil
}

// Script reads a job's sbatch script where it still is; a moved or deleted
// script is simply not quoted.
func (s *reportSource) Script(_ context.Context, job string) (string, error) {
	path := s.scripts[job]
	if path == "" {
		return "", nil
	}
	f, err := os.Open(path)
	if err != nil {
		return "", nil
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxScript))
	if err != nil {
		return "", nil
	}
	return string(data), nil
}

// maxScript bounds the job script read for the appendix.
const maxScript = 256 << 10

// sOf is the plural ending for n things.
func sOf(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// baselineComparison compares the report's runs (less those the baseline
// holds) with the baseline's, as sbench compare would, reading both sides
// one sample at a time, and lays the result out for the report.
func baselineComparison(ctx context.Context, db *store.DB, flt store.Filter, name, threshold string) (*reports.Comparison, error) {
	o := compare.DefaultOptions()
	th, err := parsePercent("report: --threshold", threshold)
	if err != nil {
		return nil, err
	}
	o.Threshold = th
	sel := compare.Selector{Kind: compare.SelectBaseline, Baseline: name}
	// An unknown baseline, or one with no runs left, is bad input (exit 2),
	// as for sbench compare.
	bf, err := sel.Filter(ctx, db)
	if err != nil {
		return nil, usageError{fmt.Errorf("report: --baseline: %w", err)}
	}
	if n, err := db.CountRuns(ctx, bf); err != nil {
		return nil, err
	} else if n == 0 {
		return nil, usageError{fmt.Errorf("report: --baseline: %w", compare.ExplainEmpty(ctx, db, "baseline "+name, bf))}
	}
	cur := flt.And(store.Filter{ExcludeRunIDs: bf.RunIDs})
	if n, err := db.CountRuns(ctx, cur); err != nil {
		return nil, err
	} else if n == 0 {
		return nil, usagef("report: --baseline %s: every run of the report is in the baseline; select the runs to compare with filters (--campaign, --since, --label)", name)
	}
	res, err := compare.CompareFilters(ctx, db, [2]string{"baseline " + name, "this report"}, [2]store.Filter{bf, cur}, o)
	if err != nil {
		return nil, fmt.Errorf("report: --baseline %s: %w", name, err)
	}
	return comparisonSection(res, name), nil
}

// comparisonSection turns a comparison into the report's section.
func comparisonSection(res *compare.Result, name string) *reports.Comparison {
	c := &reports.Comparison{Title: "Compared with baseline " + name}
	rows := res.RowCount()
	worse, better, untestable := res.Regressions(), res.Count(compare.Better), res.Untestable()
	head := fmt.Sprintf("against baseline %s (%s), the report's %s", name, nRuns(len(res.Old.Runs)), nRuns(len(res.New.Runs)))
	// Like sbench compare's verdict: a change counts only when significant
	// over the comparison's tested points (Benjamini–Hochberg), and points
	// with too few runs to test are judged neither way.
	tooFew := ""
	if untestable > 0 {
		tooFew = fmt.Sprintf(" %d of them had too few runs to judge (it takes %d a side).", untestable, compare.RunsNeeded(res.Alpha))
	}
	switch {
	case worse > 0:
		c.Summary = append(c.Summary, fmt.Sprintf("Warning: %s regressed in %d of %d compared points (beyond %s, significant at %s over %d tested); %d improved.%s",
			head, worse, rows, fmtPct(res.Threshold), strconv.FormatFloat(res.Alpha, 'f', -1, 64), res.Family, better, tooFew))
	case untestable == rows:
		c.Summary = append(c.Summary, fmt.Sprintf("No evidence either way %s: %d points compared, each with too few runs to judge (it takes %d a side).",
			head, rows, compare.RunsNeeded(res.Alpha)))
	default:
		c.Summary = append(c.Summary, fmt.Sprintf("No regression %s: %d points compared, %d improved beyond %s.%s",
			"against baseline "+name, rows, better, fmtPct(res.Threshold), tooFew))
	}
	c.Summary = append(c.Summary, res.Warnings...)
	for _, t := range res.Tables {
		header, cells := res.Cells(t)
		ct := reports.ComparisonTable{Heading: t.Heading(), Header: header, Rows: cells, Note: res.PairLine(t)}
		for _, c := range res.Changes(t) {
			ct.Worse = append(ct.Worse, c == compare.Worse)
			ct.Better = append(ct.Better, c == compare.Better)
		}
		c.Tables = append(c.Tables, ct)
	}
	if res.Untested() {
		c.Notes = append(c.Notes, "*: "+res.UntestedNote())
	}
	return c
}

func nRuns(n int) string { return strconv.Itoa(n) + " run" + sOf(n) }

func fmtPct(f float64) string { return strconv.FormatFloat(f*100, 'f', -1, 64) + "%" }
