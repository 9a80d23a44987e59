package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/sbench/sbench/compare"
	"github.com/sbench/sbench/site"
)

// siteOptions are sbench site's flags.
type siteOptions struct {
	filter    filterFlags
	out       string
	threshold string
	window    int
	alpha     float64
	verbose   bool
	allSizes  bool
}

func newSiteCmd(e *env) *cobra.Command {
	var o siteOptions
	c := &cobra.Command{
		Use:   "site -o DIR [filters] [options]",
		Short: "Write a static web site of the archive: index, histories, runs",
		Long: `Site writes the archive as a static web site in DIR, for a team to look at
its history in a browser — from any web server, or straight from file:// on a
cluster with nowhere to run a service. Nothing is loaded from outside: the
pages share DIR/sbench.css and DIR/sbench.js and may load nothing else,
figures are inline SVG, links are relative.

  - DIR/index.html: clusters (the runs' systems) across, benchmarks and
    metrics down; each cell lists the configurations measured there with
    their latest value, a sparkline, and a mark when the last step of their
    history was a regression (red) or an improvement (green), or the latest
    run lies outside its control band; then the latest steps of the archive
    and the latest runs.
  - DIR/h/*.html, one page per benchmark, metric and configuration: the
    history chart at the key sizes (the smallest and the largest; every size
    with --all-sizes) with its control band and steps, each step with the
    provenance change that explains it, and every run. The numbers are
    sbench history's, computed by the same code: the page of osu_bw
    bandwidth says what "sbench history --benchmark osu_bw --metric
    bandwidth --x SIZE" says for that configuration.
  - DIR/runs/ID.html, one page per run: facts, hosts and provenance,
    samples, scalars, checks, the sbatch script and the tool's whole output,
    so every number is one click from its source.

Run it again (every night, after sbench status --ingest) and it updates only
what changed: DIR/.sbench-site.json records what each page was made from,
so a new run rewrites its run page, the history pages of its configuration
and the index, and a run pruned from the archive loses its page. Pages are
replaced atomically; a DIR that is not empty and holds no site is refused.`,
		Example: `  sbench site -o /srv/www/bench
  sbench site --db /shared/site.db --since 365d -o ~/public_html/sbench
  sbench site --system alpha --benchmark osu_bw,osu_latency -o alpha
  sbench site -o site --threshold 10% --window 30 --all-sizes -v`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runSite(cmd.Context(), e, o)
		},
	}
	o.filter.add(c)
	fl := c.Flags()
	fl.StringVarP(&o.out, "output", "o", "", "directory of the site (made if missing)")
	fl.StringVar(&o.threshold, "threshold", "5%", "smallest step that counts as a regression, as in sbench history")
	fl.IntVar(&o.window, "window", compare.DefaultWindow, "earlier runs a control band is computed from, as in sbench history")
	fl.Float64Var(&o.alpha, "alpha", 0.05, "significance level of a step, as in sbench history")
	fl.BoolVar(&o.allSizes, "all-sizes", false, "follow every message size, not only the smallest and largest (about ten times slower)")
	fl.BoolVarP(&o.verbose, "verbose", "v", false, "say on stderr how long each stage took")
	return c
}

func runSite(ctx context.Context, e *env, o siteOptions) error {
	if o.out == "" {
		return usagef("site: -o DIR is required")
	}
	flt, err := o.filter.filter()
	if err != nil {
		return err
	}
	th, err := parsePercent("site: --threshold", o.threshold)
	if err != nil {
		return err
	}
	if err := checkAlpha(o.alpha); err != nil {
		return err
	}
	if o.window < compare.MinBandPoints {
		return usagef("site: --window %d: want at least %d", o.window, compare.MinBandPoints)
	}
	db, err := openDBRead(e)
	if err != nil {
		return err
	}
	defer db.Close()
	raiseHeap(siteHeapLimit)
	so := site.Options{Dir: o.out, Filter: flt, Generator: "sbench " + version, Threshold: th, Window: o.window, Alpha: o.alpha, AllSizes: o.allSizes}
	if o.verbose {
		so.Log = e.stderr
	}
	st, err := site.Build(ctx, db, so)
	var notSite *site.NotSiteError
	switch {
	case errors.Is(err, compare.ErrNoData):
		return noRuns(ctx, db, "site", flt)
	case errors.As(err, &notSite):
		return usageError{fmt.Errorf("-o %s: %w", o.out, err)}
	}
	if err != nil {
		return err
	}
	printSiteSummary(e.stdout, o.out, st)
	return nil
}

func printSiteSummary(w io.Writer, dir string, st *site.Stats) {
	fmt.Fprintf(w, "site %s: %d run%s, %d histor%s; %d page%s written, %d unchanged, %d removed\n",
		dir, st.Runs, sOf(st.Runs), st.Histories, map[bool]string{true: "y", false: "ies"}[st.Histories == 1],
		len(st.Written), sOf(len(st.Written)), st.Kept, len(st.Removed))
}
