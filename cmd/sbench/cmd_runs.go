package main

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/sbench/sbench/store"
)

// runsOptions are sbench runs' flags.
type runsOptions struct {
	filter  filterFlags
	json    bool
	limit   int
	groupBy string
}

func newRunsCmd(e *env) *cobra.Command {
	var o runsOptions
	c := &cobra.Command{
		Use:   "runs [--limit N] [--group-by KEY] [--json] [filters]",
		Short: "List the archive's runs",
		Long: `Runs lists the archived runs, oldest first: id, start, system, campaign,
variant, benchmark, job, nodes, status and labels. It reads one run at a time,
so listing an archive of years costs no more memory than listing a day.

The job is the step as Slurm names it, 8.3; a run of a job Slurm requeued
(a node failure, a preemption) and ran again is shown with the attempt's
restart count, 8.3 r1, and selected with --job 8.3r1 (--job 8r1: every step
of that attempt; --job 8.3: the step in every attempt).

--limit N lists only the newest N runs the filters select (still oldest
first), and says on standard error how many were left out. --group-by KEY
prints one line per value of KEY instead — system, campaign, benchmark,
variant, status, job or any label — with its number of runs, how many were
ok, failed and invalid, and the first and last start: what an archive holds,
at a glance.`,
		Example: `  sbench runs
  sbench runs --limit 20
  sbench runs --campaign quickstart --json
  sbench runs --group-by system
  sbench runs --system alpha --group-by benchmark --since 30d`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runRuns(cmd.Context(), e, o)
		},
	}
	o.filter.add(c)
	c.Flags().BoolVar(&o.json, "json", false, "print JSON instead of a table")
	c.Flags().IntVar(&o.limit, "limit", 0, "list only the newest N runs (0: all)")
	c.Flags().StringVar(&o.groupBy, "group-by", "", "one line per value of: system, campaign, benchmark, variant, status, job, or a label key")
	return c
}

func runRuns(ctx context.Context, e *env, o runsOptions) error {
	if o.limit < 0 {
		return usagef("runs: --limit %d: want 0 (all) or a positive number", o.limit)
	}
	if o.groupBy != "" && o.limit > 0 {
		return usagef("runs: --group-by counts every selected run: it takes no --limit")
	}
	db, flt, err := openFiltered(e, o.filter)
	if err != nil {
		return err
	}
	defer db.Close()
	total, err := db.CountRuns(ctx, flt)
	if err != nil {
		return err
	}
	if total == 0 {
		return noRuns(ctx, db, "runs", flt)
	}
	if o.groupBy != "" {
		return runsGrouped(ctx, e, db, flt, o)
	}
	ro := store.RunOptions{Detail: store.RunLabels, Limit: o.limit}
	if o.json {
		err = runsJSON(ctx, e, db, flt, ro)
	} else {
		err = runsTable(ctx, e, db, flt, ro)
	}
	if err == nil && o.limit > 0 && total > o.limit {
		fmt.Fprintf(e.stderr, "the newest %d of %d runs; --limit 0 lists them all\n", o.limit, total)
	}
	return err
}

// runsColumns are the table's columns, each its header and its cell of a
// run; the last one, the labels, is not padded.
var runsColumns = []struct {
	head string
	cell func(*store.Run) string
}{
	{"ID", func(r *store.Run) string { return strconv.FormatInt(r.ID, 10) }},
	{"WHEN", func(r *store.Run) string { return when(*r) }},
	{"SYSTEM", func(r *store.Run) string { return dash(r.System) }},
	{"CAMPAIGN", func(r *store.Run) string { return dash(r.Campaign) }},
	{"VARIANT", func(r *store.Run) string { return dash(r.Variant) }},
	{"BENCHMARK", func(r *store.Run) string {
		// A benchmark wrapping a tool that ran several says which one this is.
		if r.ToolBenchmark != "" && r.ToolBenchmark != r.Benchmark {
			return r.Benchmark + " (" + r.ToolBenchmark + ")"
		}
		return r.Benchmark
	}},
	// 1234.3, and 1234.3 r1 for the run of Slurm's second attempt.
	{"JOB/SOURCE", func(r *store.Run) string { return dash(cmp.Or(r.Launch(), r.Source)) }},
	{"NODES", func(r *store.Run) string { return dash(strings.Join(r.Nodes, ",")) }},
	{"STATUS", func(r *store.Run) string { return string(r.Status) }},
	{"LABELS", func(r *store.Run) string {
		var labels []string
		for _, k := range slices.Sorted(maps.Keys(r.Labels)) {
			labels = append(labels, k+"="+r.Labels[k])
		}
		return strings.Join(labels, ",")
	}},
}

// runsRow is the table's row of r, or with r nil its header.
func runsRow(r *store.Run) []string {
	row := make([]string, len(runsColumns))
	for i, c := range runsColumns {
		if r == nil {
			row[i] = c.head
		} else {
			row[i] = c.cell(r)
		}
	}
	return row
}

// runsTable prints the runs as an aligned table, holding one run at a
// time: a first walk measures the columns, a second prints the rows.
// (text/tabwriter would hold the whole table until its last row.)
func runsTable(ctx context.Context, e *env, db *store.DB, flt store.Filter, ro store.RunOptions) error {
	widths := make([]int, len(runsColumns))
	measure := func(cells []string) {
		for i, c := range cells {
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	measure(runsRow(nil))
	if err := db.EachRun(ctx, flt, ro, func(r *store.Run) error {
		measure(runsRow(r))
		return nil
	}); err != nil {
		return err
	}
	w := bufio.NewWriter(e.stdout)
	writeRow(w, runsRow(nil), widths)
	if err := db.EachRun(ctx, flt, ro, func(r *store.Run) error {
		writeRow(w, runsRow(r), widths)
		return nil
	}); err != nil {
		return err
	}
	return w.Flush()
}

// runsJSON prints the runs as a JSON array, one run at a time, in the
// layout writeJSON gives a whole list.
func runsJSON(ctx context.Context, e *env, db *store.DB, flt store.Filter, ro store.RunOptions) error {
	w := bufio.NewWriter(e.stdout)
	n := 0
	err := db.EachRun(ctx, flt, ro, func(r *store.Run) error {
		sep := ",\n  "
		if n == 0 {
			sep = "[\n  "
		}
		n++
		w.WriteString(sep)
		return encodeIndented(w, newRunJSON(*r), "  ")
	})
	if err != nil {
		return err
	}
	if n == 0 {
		w.WriteString("[]\n")
	} else {
		w.WriteString("\n]\n")
	}
	return w.Flush()
}

// encodeIndented writes v as writeJSON would inside a list indented by
// prefix: no trailing newline.
func encodeIndented(w io.Writer, v any, prefix string) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	var buf strings.Builder
	enc := json.NewEncoder(&buf)
	enc.SetIndent(prefix, "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(json.RawMessage(data)); err != nil {
		return err
	}
	_, err = io.WriteString(w, strings.TrimSuffix(buf.String(), "\n"))
	return err
}

// runsGroup is one line of runs --group-by.
type runsGroup struct {
	Value   string `json:"value"`
	Runs    int    `json:"runs"`
	OK      int    `json:"ok"`
	Failed  int    `json:"failed"`
	Invalid int    `json:"invalid"`
	First   string `json:"first,omitempty"`
	Last    string `json:"last,omitempty"`

	tally store.Tally
}

// groupValue is what run r has for the --group-by key.
func groupValue(r *store.Run, key string) string {
	switch key {
	case "system":
		return r.System
	case "campaign":
		return r.Campaign
	case "benchmark":
		return r.Benchmark
	case "variant":
		return r.Variant
	case "status":
		return string(r.Status)
	case "job":
		return r.JobID
	}
	return r.Labels[key]
}

// runsGrouped counts the runs per value of the --group-by key, one run at
// a time: what it holds is one line per value.
func runsGrouped(ctx context.Context, e *env, db *store.DB, flt store.Filter, o runsOptions) error {
	groups := map[string]*runsGroup{}
	err := db.EachRun(ctx, flt, store.RunOptions{Detail: store.RunLabels}, func(r *store.Run) error {
		v := groupValue(r, o.groupBy)
		g := groups[v]
		if g == nil {
			g = &runsGroup{Value: v}
			groups[v] = g
		}
		g.tally.Add(r)
		return nil
	})
	if err != nil {
		return err
	}
	out := make([]runsGroup, 0, len(groups))
	for _, v := range slices.Sorted(maps.Keys(groups)) {
		g := groups[v]
		t := g.tally
		g.Runs, g.OK, g.Failed, g.Invalid = t.Runs, t.OK, t.Failed, t.Invalid
		if !t.First.IsZero() {
			g.First, g.Last = t.First.UTC().Format(time.RFC3339), t.Last.UTC().Format(time.RFC3339)
		}
		out = append(out, *g)
	}
	if o.json {
		return writeJSON(e, out)
	}
	head := []string{strings.ToUpper(o.groupBy), "RUNS", "OK", "FAILED", "INVALID", "FIRST", "LAST"}
	rows := [][]string{head}
	for _, g := range out {
		first, last := "-", "-"
		if t := g.tally; !t.First.IsZero() {
			first, last = t.First.Local().Format("2006-01-02"), t.Last.Local().Format("2006-01-02")
		}
		rows = append(rows, []string{cmp.Or(g.Value, "(none)"), strconv.Itoa(g.Runs), strconv.Itoa(g.OK), strconv.Itoa(g.Failed), strconv.Itoa(g.Invalid), first, last})
	}
	widths := make([]int, len(head))
	for _, r := range rows {
		for i, c := range r {
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	w := bufio.NewWriter(e.stdout)
	for _, r := range rows {
		writeRow(w, r, widths)
	}
	return w.Flush()
}

// writeRow writes one line of a table, each cell but the last padded to
// its column's width and two spaces, as text/tabwriter does.
func writeRow(w *bufio.Writer, cells []string, widths []int) {
	for i, c := range cells {
		w.WriteString(c)
		if i == len(cells)-1 {
			break
		}
		w.WriteString(strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c)+2))
	}
	w.WriteByte('\n')
}
