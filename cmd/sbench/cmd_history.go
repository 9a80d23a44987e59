package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sbench/sbench/compare"
	"github.com/sbench/sbench/results"
	"github.com/sbench/sbench/trend"
)

// parseSize reads an x value: a number, or a size with a binary suffix
// (4K, 4KiB, 1M, 1MiB, 2G) as OSU users say message sizes.
func parseSize(s string) (float64, error) {
	t := strings.TrimSpace(s)
	mult := 1.0
	upper := strings.ToUpper(t)
	for _, suf := range []struct {
		s string
		m float64
	}{{"KIB", 1 << 10}, {"MIB", 1 << 20}, {"GIB", 1 << 30}, {"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"B", 1}} {
		if strings.HasSuffix(upper, suf.s) {
			t, mult = strings.TrimSpace(t[:len(t)-len(suf.s)]), suf.m
			break
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, usagef("--x %q: want a number or a size such as 4096, 4K or 1MiB", s)
	}
	return v * mult, nil
}

// historyOptions are history's flags.
type historyOptions struct {
	query             compare.HistoryQuery
	filter            filterFlags
	x, threshold, out string
	configs           []string
	json              bool
}

func newHistoryCmd(e *env) *cobra.Command {
	var o historyOptions
	c := &cobra.Command{
		Use:   "history --benchmark NAME [--metric M] [--x SIZE] [--config K=V]... [filters] [-o trend.png|pdf|svg]",
		Short: "Follow one metric over time: control band, outliers, steps",
		Long: `History follows one metric of one benchmark at one message size over time:
one point per ok run (the median of its repeats), oldest first.

Each run is judged against a control band, the mean ± 3σ of up to --window
earlier runs of the same level, as XDMoD's application kernels do; a run
outside it is marked OUTSIDE. Steps — a lasting change of level, two runs
or more — are found by binary segmentation (least squares on winsorised
values) with a permutation test at --alpha, so that a series of pure noise
shows a step in about 5% of cases; a series too short for the test to reach
--alpha (8 runs at 0.05) is not tested, and history says so. Each step names the first run of the new level, its Slurm job, and what
changed in provenance between the runs either side: kernel, OS, MPI,
InfiniBand firmware, port rate, tool version, nodes. A step beyond
--threshold in the worse direction (from the unit: bandwidth higher is
better, latency lower) is marked REGRESSION.

A history follows one configuration: runs that differ only in their repeat
index (or in what only numbers or describes a run) are one, runs at other
process counts, placements, parameters or labels are not. --config
KEY=VALUE (a label, a swept value such as buf=16384 or ntasks_per_node=2,
"variant", "processes", or "tool_benchmark": the benchmark a wrapped tool
ran), --label and --variant pick one when the runs have several; history
lists the choices, and needs none when the selection leaves one
configuration.

--metric and --x may be left out when the runs have one metric or one size;
otherwise history lists the choices. -o draws the figure (PNG, PDF or SVG by
extension), with the limit of each expectation recorded for the runs'
campaigns ([[expect]] on the same benchmark, metric and x; see sbench check)
as a labelled horizontal line.`,
		Example: `  sbench history --benchmark osu_bw --metric bandwidth --x 1M
  sbench history --benchmark pingpong --metric latency --x 8 --label fabric=ib -o trend.png
  sbench history --benchmark hpl --metric gflops --json
  sbench history --benchmark imb_allreduce --metric latency --x 4MiB --config processes=4`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runHistory(cmd.Context(), e, o)
		},
	}
	c.Flags().StringVar(&o.query.Metric, "metric", "", "metric to follow (needed when the runs have several)")
	c.Flags().StringVar(&o.x, "x", "", "message size or other x to follow, e.g. 8, 4K, 1MiB (needed when there are several)")
	c.Flags().StringVar(&o.query.Variant, "variant", "", "only runs of this variant (needed when there are several)")
	c.Flags().StringArrayVar(&o.configs, "config", nil, "only runs whose configuration has KEY=VALUE: a label, swept value (buf=16384, ntasks_per_node=2), variant, processes or tool_benchmark (repeatable)")
	o.filter.add(c)
	c.Flags().IntVar(&o.query.Window, "window", compare.DefaultWindow, "earlier runs a control band is computed from")
	c.Flags().Float64Var(&o.query.Alpha, "alpha", 0.05, "significance level of a step")
	c.Flags().StringVar(&o.threshold, "threshold", "5%", "smallest step that counts as a regression")
	c.Flags().StringVarP(&o.out, "output", "o", "", "write the figure to this .png, .pdf or .svg file")
	c.Flags().BoolVar(&o.json, "json", false, "print the history as JSON")
	return c
}

// runHistory follows one metric of one benchmark over time.
func runHistory(ctx context.Context, e *env, o historyOptions) error {
	flt, err := o.filter.filter()
	if err != nil {
		return err
	}
	switch len(flt.Benchmarks) {
	case 0:
		return usagef("history: --benchmark is required")
	case 1:
		o.query.Benchmark, o.query.Filter = flt.Benchmarks[0], flt
	default:
		return usagef("history: --benchmark %s: a history follows one benchmark", strings.Join(flt.Benchmarks, ","))
	}
	if o.x != "" {
		v, err := parseSize(o.x)
		if err != nil {
			return err
		}
		o.query.X = &v
	}
	if o.query.Threshold, err = parsePercent("--threshold", o.threshold); err != nil {
		return err
	}
	if err := checkAlpha(o.query.Alpha); err != nil {
		return err
	}
	if o.query.Window < compare.MinBandPoints {
		return usagef("history: --window %d: want at least %d", o.query.Window, compare.MinBandPoints)
	}
	if o.query.Config, err = parseLabels("--config", o.configs); err != nil {
		return err
	}
	format := ""
	if o.out != "" {
		format = strings.ToLower(strings.TrimPrefix(filepath.Ext(o.out), "."))
		if format != "png" && format != "pdf" && format != "svg" {
			return usagef("history: -o %s: want a .png, .pdf or .svg file", o.out)
		}
	}
	db, err := openDBRead(e)
	if err != nil {
		return err
	}
	defer db.Close()
	h, err := compare.LoadHistory(ctx, db, o.query)
	var amb *compare.AmbiguousError
	if errors.As(err, &amb) {
		return usagef("history: %v", err)
	}
	if err != nil {
		return dataError(fmt.Errorf("history: %w", err))
	}
	if err := writeResult(e, h, o.json); err != nil {
		return err
	}
	if o.out != "" {
		bounds, said, err := historyBounds(ctx, db, h)
		if err != nil {
			return err
		}
		for _, s := range said {
			fmt.Fprintf(e.stderr, "expectation drawn: %s\n", s)
		}
		data, err := trend.Render(o.out, h, bounds...)
		if err != nil {
			return err
		}
		if err := results.WriteAtomic(o.out, data, 0o644); err != nil {
			return err
		}
		fmt.Fprintf(e.stderr, "wrote %s\n", o.out)
	}
	return nil
}
