package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sbench/sbench/compare"
)

// parseSelectors reads the selector arguments.
func parseSelectors(cmd string, args []string) ([]compare.Selector, error) {
	sels := make([]compare.Selector, len(args))
	for i, a := range args {
		s, err := compare.ParseSelector(a)
		if err != nil {
			return nil, usagef("%s: %v", cmd, err)
		}
		sels[i] = s
	}
	return sels, nil
}

// compareOptions are compare's flags.
type compareOptions struct {
	metrics             []string
	filter              filterFlags
	threshold, groupBy  string
	alpha               float64
	json, thresholdOnly bool
}

func newCompareCmd(e *env) *cobra.Command {
	var o compareOptions
	c := &cobra.Command{
		Use:   "compare [--metric M]... [--group-by family] [--threshold 5%] [--alpha 0.05] [--threshold-only] [--json] OLD NEW",
		Short: "Compare two sets of runs and say what got worse",
		Long: `Compare puts two selections of runs side by side, benchstat-style: for each
benchmark, metric and message size, the median of each side, the change, and
whether it is significant. OLD and NEW are selectors:

  KEY=VALUE[,KEY=VALUE…]       runs with all these labels (fabric=ib, run=before;
                               system=NAME: a cluster's runs) or swept values
                               (buf=16384, ntasks_per_node=2)
  run:ID[,ID…]                 runs by id; ranges allowed (run:3,7-9)
  job:ID[,ID…]                 the runs of Slurm or local jobs (job:4242, job:local-…-1)
  campaign:NAME                every run of a campaign
  campaign:NAME@YYYY-MM-DD     … that started that day (UTC)
  campaign:NAME@latest         … of its newest submission (sbench submit or local)
  campaign:NAME@N              … of its Nth newest (@1 is @latest, @2 the one before)
  baseline:NAME                the runs of a baseline (see sbench baseline)
  since:SELECTOR               runs that started after the newest run of SELECTOR,
                               SELECTOR's own left out (since:baseline:pre-upgrade)

The run is what is repeated: each ok run of a side gives one value per
benchmark, metric, size, tags and configuration, the median of its samples
there (repeats within a run share its nodes and its moment, and are no
evidence about another run); n counts runs. Settings whose values differ
entirely between the sides (the labels you select by, a section named after
the transport) are what is being compared; settings both sides share
(variant, ntasks_per_node) keep rows apart. Failed and invalid runs are left
out, with a warning.

Samples that differ only in their node pair (the matrix and pairs kernels'
from/to/placement tags, a tool placed on each pair) are the rows of one
table per metric, one per pair, with a summary line: how many pairs got
worse or better, the worst, and an "all pairs" row comparing the pairs of
each side taken together — which is what two systems that share no pair
are judged by. A matrix round or a re-test pass only numbers a sample.
Compare reads one sample at a time, both sides at once.

Rows are matched by benchmark. --group-by family matches them by metric
family instead: the latency (or bandwidth) against message size of
osu_latency on one side and of sbench-runner's latency kernel on the other
(or IMB's PingPong, NetPIPE) fall in one table of the point-to-point family,
collectives in their operation's, and each side's column says which tool
and version measured it. That is how two tools measuring the same thing
compare (examples/tools-vs-native.toml); report's --group-by family draws
the same.

No verdict without evidence. A row with enough runs on each side for a
Mann-Whitney U test to reach --alpha (4+4 or 3+5 runs at 0.05) is tested;
the p-values of every tested row of the comparison are one family, adjusted
by Benjamini–Hochberg (q), and a change counts only when its q is at most
--alpha. The table shows p and q, and "~" for a change that is not
significant, as benchstat does. A row with fewer runs is not judged at all:
"~ n=1+1: too few runs to judge; repeat ≥ 4×". Then a change smaller than
--threshold is not a regression either, and the direction comes from the
unit: bandwidth higher is better, latency and time lower.

--threshold-only judges the rows with too few runs to test by the change
alone, as sbench did before: there is no evidence behind such a verdict, and
on a noisy machine identical re-runs trip it. Tested rows still need
significance.

Compare fails (exit status 1) when a row is worse beyond the threshold, so
that it can gate CI or a post-maintenance check; rows too few to judge never
fail it (unless --threshold-only); selectors that find nothing to compare are
bad input (exit status 2), never mistaken for a regression.`,
		Example: `  sbench compare run=before run=after
  sbench compare --threshold 3% baseline:pre-upgrade campaign:acceptance@2024-06-01
  sbench compare --metric latency fabric=ib fabric=roce
  sbench compare --json run:12 run:14 | jq '.tables[].rows[] | select(.change=="worse")'
  sbench compare campaign:acceptance@2 campaign:acceptance@latest
  sbench compare job:4242 job:4250
  sbench compare baseline:pre-upgrade since:baseline:pre-upgrade
  sbench compare --group-by family impl=native impl=openmpi
  sbench compare system=alpha system=beta
  sbench compare buf=16384 buf=262144
  sbench compare --system alpha campaign:acceptance@2 campaign:acceptance@latest`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCompare(cmd.Context(), e, o, args)
		},
	}
	c.Flags().StringArrayVar(&o.metrics, "metric", nil, "compare only this metric (repeatable or comma-separated)")
	o.filter.add(c)
	c.Flags().StringVar(&o.threshold, "threshold", "5%", "smallest change that counts as a regression")
	c.Flags().Float64Var(&o.alpha, "alpha", 0.05, "significance level of the Mann-Whitney tests, and false discovery rate of their family")
	c.Flags().BoolVar(&o.thresholdOnly, "threshold-only", false, "judge rows with too few runs to test by the change alone: no evidence is behind it, and on a noisy machine identical re-runs trip it")
	c.Flags().BoolVar(&o.json, "json", false, "print the comparison as JSON")
	c.Flags().StringVar(&o.groupBy, "group-by", "", "family: match rows by metric family (osu_latency with the latency kernel), not by benchmark")
	return c
}

// runCompare compares the runs of two selectors (args) and fails on a
// regression.
func runCompare(ctx context.Context, e *env, o compareOptions, args []string) error {
	th, err := parsePercent("--threshold", o.threshold)
	if err != nil {
		return err
	}
	if err := checkAlpha(o.alpha); err != nil {
		return err
	}
	families := false
	switch o.groupBy {
	case "":
	case "family":
		families = true
	default:
		return usagef("compare: --group-by %q: want family (rows are already kept apart by every configuration the sides share)", o.groupBy)
	}
	sels, err := parseSelectors("compare", args)
	if err != nil {
		return err
	}
	db, flt, err := openFiltered(e, o.filter)
	if err != nil {
		return err
	}
	defer db.Close()
	opts := compare.Options{Threshold: th, Alpha: o.alpha, Metrics: splitList(o.metrics), Filter: flt, Families: families, ThresholdOnly: o.thresholdOnly}
	raiseHeap(compareHeapLimit)
	res, err := compare.Compare(ctx, db, sels[0], sels[1], opts)
	if err != nil {
		return dataError(fmt.Errorf("compare: %w", err))
	}
	if err := writeResult(e, res, o.json); err != nil {
		return err
	}
	if n := res.Regressions(); n > 0 {
		return exitError{code: exitGate, msg: fmt.Sprintf("compare: %d regression(s) beyond %s", n, strings.TrimSpace(o.threshold))}
	}
	return nil
}
