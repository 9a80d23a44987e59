package main

import (
	"strconv"

	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/sbench/sbench/compare"

	"github.com/spf13/cobra"

	"github.com/sbench/sbench/reports"
	"github.com/sbench/sbench/results"
	"github.com/sbench/sbench/store"
)

// reportOpts are sbench report's flags.
type reportOpts struct {
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
}

func newReportCmd(e *env) *cobra.Command {
	var o reportOpts
	c := &cobra.Command{
		Use:   "report -o report.pdf [filters] [options]",
		Short: "Write a PDF report of the archived runs",
		Long: `Report writes the PDF an engineer hands over after testing a cluster:

  - a title page with the campaigns, dates, system and a verdict computed
    from the data (peak bandwidth and where it is reached, share of the link
    rate, latency at the smallest size, ratios between configurations, the
    slowest node pair, the best valid HPL result);
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

Configurations are told apart by variant, or by the labels runs were
ingested with; --group-by KEY makes one label (or parameter) the line of
every figure. --group-by family draws the same metric of different
benchmarks in one figure instead: osu_latency, IMB's PingPong and
sbench-runner's latency kernel are all latency against message size of the
point-to-point family, so each figure of that family has a line per tool,
named with its version ("osu_latency 7.4", "sbench-runner 0.9 latency"),
and there is a figure per configuration the tools share (an intra-node and
an inter-node variant); sbench compare --group-by family matches the same
rows. The link rate comes from the runs' InfiniBand or network
provenance or their link_rate label; --link-rate sets it for all.

Text in Japanese, Korean or any script outside Windows-1252 needs a TrueType
font: --font FILE.ttf, else one is looked for in the system's font folders
(Debian: fonts-ipafont-gothic, fonts-nanum). Without one, such characters
print as '?' and the report says so on its title page and on stderr.

The verdict is printed on stdout as well. The file is written atomically:
an existing report is replaced only by a complete one.`,
		Example: `  sbench report -o report.pdf
  sbench report --campaign erdma-vs-tcp --title "eRDMA vs TCP" -o erdma.pdf
  sbench report --label article=000 --group-by fabric --link-rate 10Gbps -o ib.pdf
  sbench report --since 2025-03-01 --figures figs --figure-format svg --csv data -o march.pdf
  sbench report --campaign acceptance --baseline pre-upgrade -o after-upgrade.pdf
  sbench report --campaign tools-vs-native --group-by family -o tools.pdf
  sbench report --title "性能評価" --font /usr/share/fonts/opentype/ipafont-gothic/ipag.ttf -o ja.pdf`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runReport(cmd.Context(), e, o)
		},
	}
	o.filter.add(c)
	fl := c.Flags()
	fl.StringVarP(&o.out, "output", "o", "", "PDF file to write")
	fl.StringVar(&o.title, "title", "", "report title (default: from the campaigns)")
	fl.StringVar(&o.groupBy, "group-by", "", "label or parameter whose values are the figures' lines (default: variant, else labels); family: one figure per metric family, a line per tool")
	fl.StringVar(&o.linkRate, "link-rate", "auto", "theoretical link rate for the bandwidth figures, e.g. 100Gbps, 25Gb/s, 12500MB/s; auto: from provenance")
	fl.Float64Var(&o.rpeak, "rpeak", 0, "theoretical peak of the HPL runs' nodes in Gflops (default: from provenance)")
	fl.StringVar(&o.font, "font", "", "TrueType font (.ttf) for text outside Windows-1252 (default: look in the system's fonts when needed)")
	fl.StringVar(&o.figures, "figures", "", "also save every figure into this directory")
	fl.StringVar(&o.figureFormat, "figure-format", "png", "format of --figures: png, svg or pdf")
	fl.StringVar(&o.csvDir, "csv", "", "also write every figure's data and the summaries as CSV into this directory")
	fl.StringVar(&o.baseline, "baseline", "", "add a section comparing the runs with this baseline's (sbench baseline list)")
	fl.StringVar(&o.threshold, "threshold", "5%", "with --baseline: smallest change that counts, as in sbench compare")
	return c
}

// reportOptions checks the flags and turns them into the store's filter and
// the report's options.
func (o reportOpts) reportOptions() (store.Filter, []reports.Option, error) {
	if o.out == "" {
		return store.Filter{}, nil, usagef("report: -o FILE is required")
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
	return flt, opts, nil
}

func runReport(ctx context.Context, e *env, o reportOpts) error {
	flt, opts, err := o.reportOptions()
	if err != nil {
		return err
	}
	db, err := openDBRead(e)
	if err != nil {
		return err
	}
	defer db.Close()
	d, err := reportData(ctx, db, flt, e.db)
	if err != nil {
		return err
	}
	d.Title, d.Generated, d.Version = o.title, time.Now(), version
	if o.baseline != "" {
		c, err := baselineComparison(ctx, db, d, o.baseline, o.threshold)
		if err != nil {
			return err
		}
		opts = append(opts, reports.WithComparison(c))
	}
	r, err := reports.New(d, opts...)
	if err != nil {
		var fe *reports.FontError
		if errors.As(err, &fe) {
			return usageError{fmt.Errorf("report: --font: %w", err)}
		}
		return fmt.Errorf("report: %w", err)
	}
	var buf bytes.Buffer
	if _, err := r.WriteTo(&buf); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	if err := results.WriteAtomic(o.out, buf.Bytes(), 0o644); err != nil {
		return err
	}
	for _, w := range r.Warnings() {
		fmt.Fprintln(e.stderr, "sbench: warning:", w)
	}
	printReportSummary(e.stdout, o.out, r, len(d.Runs), buf.Len())
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

// reportData reads what the report shows: the runs the filter selects, with
// their samples, scalars, checks, jobs, raw outputs and job scripts.
func reportData(ctx context.Context, db *store.DB, flt store.Filter, path string) (reports.Data, error) {
	var d reports.Data
	var err error
	if d.Runs, err = db.Runs(ctx, flt); err != nil {
		return d, err
	}
	if len(d.Runs) == 0 {
		return d, noRuns(ctx, db, "report", flt)
	}
	ids := make([]int64, len(d.Runs))
	for i, r := range d.Runs {
		ids[i] = r.ID
	}
	byID := store.Filter{RunIDs: ids}
	if d.Samples, err = db.Samples(ctx, byID); err != nil {
		return d, err
	}
	if d.Scalars, err = db.Scalars(ctx, byID); err != nil {
		return d, err
	}
	if d.Checks, err = db.Checks(ctx, byID); err != nil {
		return d, err
	}
	if d.Jobs, err = db.Jobs(ctx, flt.Campaign); err != nil {
		return d, err
	}
	d.Raw = map[int64]string{}
	for _, id := range ids {
		b, err := db.Bundle(ctx, id)
		if err != nil {
			if errors.Is(err, store.ErrNotFound) {
				continue
			}
			return d, err
		}
		if b.Raw != "" {
			d.Raw[id] = b.Raw
		}
	}
	d.Scripts = jobScripts(d.Runs, d.Jobs)
	return d, nil
}

// maxScript bounds the job script read for the appendix.
const maxScript = 256 << 10

// jobScripts reads the sbatch scripts of the runs' jobs, where they still
// are; a moved or deleted script is simply not quoted.
func jobScripts(runs []store.Run, jobs []store.Job) map[string]string {
	want := map[string]bool{}
	for _, r := range runs {
		if r.JobID != "" {
			want[r.JobID] = true
		}
	}
	out := map[string]string{}
	for _, j := range jobs {
		if !want[j.SlurmID] || j.Script == "" {
			continue
		}
		f, err := os.Open(j.Script)
		if err != nil {
			continue
		}
		data, err := io.ReadAll(io.LimitReader(f, maxScript))
		f.Close()
		if err == nil {
			out[j.SlurmID] = string(data)
		}
	}
	return out
}

// sOf is the plural ending for n things.
func sOf(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// baselineComparison compares the report's runs (less those the baseline
// holds) with the baseline's, as sbench compare would, and lays the result
// out for the report.
func baselineComparison(ctx context.Context, db *store.DB, d reports.Data, name, threshold string) (*reports.Comparison, error) {
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
	old, err := compare.Load(ctx, db, "baseline "+name, bf)
	if err != nil {
		return nil, usageError{fmt.Errorf("report: --baseline: %w", err)}
	}
	inBaseline := map[int64]bool{}
	for _, r := range old.Runs {
		inBaseline[r.ID] = true
	}
	cur := compare.Side{Name: "this report"}
	for _, r := range d.Runs {
		if !inBaseline[r.ID] {
			cur.Runs = append(cur.Runs, r)
		}
	}
	if len(cur.Runs) == 0 {
		return nil, usagef("report: --baseline %s: every run of the report is in the baseline; select the runs to compare with filters (--campaign, --since, --label)", name)
	}
	for _, s := range d.Samples {
		if !inBaseline[s.RunID] {
			cur.Samples = append(cur.Samples, s)
		}
	}
	for _, s := range d.Scalars {
		if !inBaseline[s.RunID] {
			cur.Scalars = append(cur.Scalars, s)
		}
	}
	res, err := compare.Build(old, cur, o)
	if err != nil {
		return nil, fmt.Errorf("report: --baseline %s: %w", name, err)
	}
	return comparisonSection(res, name), nil
}

// comparisonSection turns a comparison into the report's section.
func comparisonSection(res *compare.Result, name string) *reports.Comparison {
	c := &reports.Comparison{Title: "Compared with baseline " + name}
	rows := res.RowCount()
	worse, better := res.Regressions(), res.Count(compare.Better)
	head := fmt.Sprintf("against baseline %s (%s), the report's %s", name, nRuns(len(res.Old.Runs)), nRuns(len(res.New.Runs)))
	if worse > 0 {
		c.Summary = append(c.Summary, fmt.Sprintf("Warning: %s regressed in %d of %d compared points (beyond %s); %d improved.",
			head, worse, rows, fmtPct(res.Threshold), better))
	} else {
		c.Summary = append(c.Summary, fmt.Sprintf("No regression %s: %d points compared, %d improved beyond %s.",
			"against baseline "+name, rows, better, fmtPct(res.Threshold)))
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

func nRuns(n int) string {
	if n == 1 {
		return "1 run"
	}
	return strconv.Itoa(n) + " runs"
}

func fmtPct(f float64) string { return strconv.FormatFloat(f*100, 'f', -1, 64) + "%" }
