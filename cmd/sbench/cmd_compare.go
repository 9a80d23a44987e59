package main

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sbench/sbench/compare"
	"github.com/sbench/sbench/store"
)

// parsePercent reads a threshold given as "5%" or "5" (percent either way).
func parsePercent(flag, s string) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), "%")), 64)
	if err != nil || math.IsNaN(v) || v < 0 || v >= 1000 {
		return 0, usagef("%s %q: want a percentage such as 5%%", flag, s)
	}
	return v / 100, nil
}

func checkAlpha(a float64) error {
	if !(a > 0 && a < 1) {
		return usagef("--alpha %v: want a level between 0 and 1, such as 0.05", a)
	}
	return nil
}

// dataError marks errors about what the selection found (no runs, unknown
// baseline, nothing measured on both sides) as exit status 2, like bad
// usage: a CI gate must not read them as "a regression".
func dataError(err error) error {
	if errors.Is(err, compare.ErrNoData) || errors.Is(err, store.ErrNotFound) {
		return usageError{err}
	}
	return err
}

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

func newCompareCmd(e *env) *cobra.Command {
	var metrics, benchmarks []string
	var threshold string
	var alpha float64
	var asJSON bool
	c := &cobra.Command{
		Use:   "compare [--metric M]... [--threshold 5%] [--alpha 0.05] [--json] OLD NEW",
		Short: "Compare two sets of runs and say what got worse",
		Long: `Compare puts two selections of runs side by side, benchstat-style: for each
benchmark, metric and message size, the median of each side, the change, and
whether it is significant. OLD and NEW are selectors:

  KEY=VALUE[,KEY=VALUE…]       runs with all these labels (fabric=ib, run=before)
  run:ID[,ID…]                 runs by id; ranges allowed (run:3,7-9)
  campaign:NAME[@YYYY-MM-DD]   a campaign's runs, optionally of one day (UTC)
  baseline:NAME                the runs of a baseline (see sbench baseline)

Every sample of every ok run of a side with the same benchmark, metric,
size, tags and configuration is a repeat. Settings whose values differ
entirely between the sides (the labels you select by, a section named after
the transport) are what is being compared; settings both sides share
(variant, ntasks_per_node) keep rows apart. Failed and invalid runs are left
out, with a warning.

With enough repeats for a Mann-Whitney U test to reach --alpha (4+4 values at
0.05), a change counts only when significant; the table shows "~" otherwise,
with the p-value. With fewer (one run per side is common) there is no p-value
and the change alone decides. Either way a change smaller than --threshold is
not a regression, and the direction comes from the unit: bandwidth higher is
better, latency and time lower.

Compare fails (exit status 1) when a row is worse beyond the threshold, so
that it can gate CI or a post-maintenance check; selectors that find nothing
to compare are bad input (exit status 2), never mistaken for a regression.`,
		Example: `  sbench compare run=before run=after
  sbench compare --threshold 3% baseline:pre-upgrade campaign:acceptance@2024-06-01
  sbench compare --metric latency fabric=ib fabric=roce
  sbench compare --json run:12 run:14 | jq '.tables[].rows[] | select(.change=="worse")'`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			th, err := parsePercent("--threshold", threshold)
			if err != nil {
				return err
			}
			if err := checkAlpha(alpha); err != nil {
				return err
			}
			sels, err := parseSelectors("compare", args)
			if err != nil {
				return err
			}
			db, err := openDBRead(e)
			if err != nil {
				return err
			}
			defer db.Close()
			o := compare.Options{Threshold: th, Alpha: alpha, Metrics: splitList(metrics), Benchmarks: splitList(benchmarks)}
			res, err := compare.Compare(cmd.Context(), db, sels[0], sels[1], o)
			if err != nil {
				return dataError(fmt.Errorf("compare: %w", err))
			}
			if asJSON {
				err = res.WriteJSON(e.stdout)
			} else {
				err = res.WriteText(e.stdout)
			}
			if err != nil {
				return err
			}
			if n := res.Regressions(); n > 0 {
				return exitError{code: exitFailure, msg: fmt.Sprintf("compare: %d regression(s) beyond %s", n, strings.TrimSpace(threshold))}
			}
			return nil
		},
	}
	c.Flags().StringArrayVar(&metrics, "metric", nil, "compare only this metric (repeatable or comma-separated)")
	c.Flags().StringArrayVar(&benchmarks, "benchmark", nil, "compare only this benchmark (repeatable or comma-separated)")
	c.Flags().StringVar(&threshold, "threshold", "5%", "smallest change that counts as a regression")
	c.Flags().Float64Var(&alpha, "alpha", 0.05, "significance level of the Mann-Whitney test")
	c.Flags().BoolVar(&asJSON, "json", false, "print the comparison as JSON")
	return c
}

// splitList flattens repeated and comma-separated flag values.
func splitList(vals []string) []string {
	var out []string
	for _, v := range vals {
		for _, p := range strings.Split(v, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
	}
	return out
}
