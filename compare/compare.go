package compare

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/sbench/sbench/results"
	"github.com/sbench/sbench/store"
)

// ErrNoData is wrapped by errors about selections that give nothing to
// compare: no runs, no ok runs, or no metric measured on both sides.
var ErrNoData = errors.New("nothing to compare")

// Options are the thresholds of a comparison.
type Options struct {
	// Threshold is the smallest relative change that counts, as a
	// fraction (0.05 for 5%). A significant change smaller than this is
	// reported but is not a regression.
	Threshold float64
	// Alpha is the significance level of the Mann-Whitney tests and the
	// false discovery rate of the comparison's family of them
	// (Benjamini–Hochberg; default 0.05).
	Alpha float64
	// ThresholdOnly judges the rows with too few runs for a test (fewer
	// than RunsNeeded a side) by the change alone, as sbench did before
	// it required evidence: no evidence is behind such a verdict, and on
	// a noisy machine identical re-runs trip it. Tested rows still need
	// significance.
	ThresholdOnly bool
	// Benchmarks and Metrics, when not empty, restrict the comparison.
	Benchmarks []string
	Metrics    []string
	// Filter narrows both sides (the commands' filter flags).
	Filter store.Filter
	// Families matches rows by metric family instead of benchmark: the
	// latency (or bandwidth) against message size of osu_latency on one
	// side and of the runner's latency kernel on the other fall in one
	// table, whose Benchmark is the family (PointToPoint, or a
	// collective's operation) and whose OldTools and NewTools say what
	// measured each side (ToolLabel). Metrics without a family (HPL's
	// Gflops, values without a size) are still matched by benchmark.
	Families bool
}

// DefaultOptions are those of "sbench compare" with no flags.
func DefaultOptions() Options { return Options{Threshold: 0.05, Alpha: 0.05} }

// Side is the runs of one side of a comparison with what was measured, for
// Build: a caller that already holds the rows (a report, a test) fills it.
type Side struct {
	// Name is how the side was selected (e.g. "run=before"); it heads
	// the side's column.
	Name    string
	Runs    []store.Run
	Samples []store.Sample
	Scalars []store.Scalar
}

// Change is the verdict on one row.
type Change string

const (
	// Same: no significant change, one within the threshold, or too few
	// runs to tell (Row.Tested false).
	Same Change = "same"
	// Better: a significant change beyond the threshold, for the better.
	Better Change = "better"
	// Worse: a significant change beyond the threshold, for the worse —
	// a regression.
	Worse Change = "worse"
	// Changed: a significant change beyond the threshold, for a unit with
	// no known direction.
	Changed Change = "changed"
	// Missing: measured on one side only.
	Missing Change = "missing"
)

// Correction names how a comparison controls its family of tests.
const Correction = "benjamini-hochberg"

// Result is a comparison: one table per benchmark, metric and
// configuration, one row per x (message size, rank count) and node pair.
type Result struct {
	Old       SideInfo `json:"old"`
	New       SideInfo `json:"new"`
	Threshold float64  `json:"threshold"`
	Alpha     float64  `json:"alpha"`
	// Correction is how the family of tested rows is controlled
	// (Correction); Family is how many rows were tested, the family's
	// size.
	Correction string `json:"correction"`
	Family     int    `json:"tested_rows"`
	// ThresholdOnly says rows too small to test were judged by the change
	// alone (Options.ThresholdOnly).
	ThresholdOnly bool    `json:"threshold_only,omitempty"`
	Tables        []Table `json:"tables"`
	// Warnings are what the reader should know about the data (runs left
	// out, rows on one side only); they do not change the verdict.
	Warnings []string `json:"warnings,omitempty"`
}

// SideInfo names a side and the runs it compared.
type SideInfo struct {
	Name string  `json:"name"`
	Runs []int64 `json:"runs"`
	// Excluded are selected runs that were not ok (failed or invalid):
	// their numbers are not to be trusted, so they are not compared.
	Excluded []int64 `json:"excluded,omitempty"`
}

// Table compares one metric of one benchmark in one configuration.
type Table struct {
	Benchmark string `json:"benchmark"`
	Metric    string `json:"metric"`
	Unit      string `json:"unit"`
	// Better is "higher", "lower", or "" for a unit with no direction.
	Better string `json:"better,omitempty"`
	// Config tells the table from the others of its benchmark and
	// metric: "key=value" settings (variant, parameters, labels that
	// both sides share), sample tags and rank pairs, sorted.
	Config []string `json:"config,omitempty"`
	XUnit  string   `json:"x_unit,omitempty"`
	Rows   []Row    `json:"rows"`
	// GeoMean summarises the rows measured on both sides.
	GeoMean *GeoMean `json:"geomean,omitempty"`
	// OldTools and NewTools name what measured each side's values
	// (ToolLabel), when rows are matched by metric family.
	OldTools []string `json:"old_tools,omitempty"`
	NewTools []string `json:"new_tools,omitempty"`
	// Pairs is set when the rows are node pairs (the matrix and pairs
	// kernels, a tool run on each pair): one table per metric and
	// configuration, a row per pair and size, and this summary line.
	Pairs *PairSummary `json:"pairs,omitempty"`
}

// Row compares the values at one x.
type Row struct {
	// Pair is the node pair of a table whose rows are pairs (Table.Pairs).
	Pair *PairID  `json:"pair,omitempty"`
	X    *float64 `json:"x,omitempty"`
	Old  *Summary `json:"old,omitempty"`
	New  *Summary `json:"new,omitempty"`
	// Delta is (new − old) / old of the medians, a fraction.
	Delta *float64 `json:"delta,omitempty"`
	// Tested says the row had enough runs on each side for a
	// Mann-Whitney test to reach Alpha (MinP ≤ Alpha); P is then its
	// p-value and Q the p-value adjusted for the comparison's family of
	// tested rows (BenjaminiHochberg). The change is significant when Q
	// is at most Alpha.
	Tested bool     `json:"tested"`
	P      *float64 `json:"p,omitempty"`
	Q      *float64 `json:"q,omitempty"`
	// Note says why a row measured on both sides was not tested: "n=1+1:
	// too few runs to judge; repeat ≥ 4×".
	Note   string `json:"note,omitempty"`
	Change Change `json:"change"`
}

// Significant reports whether the row's change is significant: tested,
// with its adjusted p-value at most alpha.
func (r Row) Significant(alpha float64) bool { return r.Tested && r.Q != nil && *r.Q <= alpha }

// Summary is one side's values at one x: one value per ok run of the side
// with the same benchmark, metric, configuration and x — the median of
// that run's samples there — for the run is what is repeated: a run's
// own repeats share its conditions (its nodes, its moment, the machine's
// state) and are no evidence about another run. N counts the runs (for
// the rows of node pairs taken together, PairSummary.All, the pairs),
// Min and Max span their values.
type Summary struct {
	N      int     `json:"n"`
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
}

// GeoMean is the geometric mean of a table's medians on each side, over the
// rows measured on both, like benchstat's summary line.
type GeoMean struct {
	Old   float64 `json:"old"`
	New   float64 `json:"new"`
	Delta float64 `json:"delta"`
	Rows  int     `json:"rows"`
}

// Count returns how many rows of all tables have verdict c: the rows of
// node pairs, or when the sides share no pair, the rows comparing their
// pairs taken together (PairSummary.Judges).
func (r *Result) Count(c Change) int {
	n := 0
	for _, t := range r.Tables {
		for _, row := range t.Rows {
			if row.Change == c {
				n++
			}
		}
		if t.Pairs.Judges() {
			for _, row := range t.Pairs.All {
				if row.Change == c {
					n++
				}
			}
		}
	}
	return n
}

// Regressions returns how many rows got worse beyond the threshold.
func (r *Result) Regressions() int { return r.Count(Worse) }

// wanted reports whether a metric of a benchmark is compared. A copy of a
// figure in the tool's own unit (results.AltUnitMetric: IMB's
// bandwidth_imb, NetPIPE's bandwidth_mbps) is one measured quantity with
// its twin: it gets no table of its own unless asked for by --metric.
func wanted(o Options, benchmark, metric string) bool {
	if len(o.Metrics) == 0 && results.AltUnitMetric(metric) {
		return false
	}
	return (len(o.Benchmarks) == 0 || slices.Contains(o.Benchmarks, benchmark)) &&
		(len(o.Metrics) == 0 || slices.Contains(o.Metrics, metric))
}

// cfgKey is a key of a run's configuration: a label and a parameter of
// the same name stay apart.
type cfgKey struct{ kind, name string }

func (a cfgKey) compare(b cfgKey) int {
	return cmp.Or(cmp.Compare(a.kind, b.kind), cmp.Compare(a.name, b.name))
}

// runConfig is what identifies a run's configuration (store.ConfigOf).
func runConfig(r *store.Run) map[cfgKey]string {
	cfg := store.ConfigOf(r)
	c := make(map[cfgKey]string, len(cfg)+2)
	// Absent campaign or variant is a value too ("" on one side only).
	c[cfgKey{store.AttrCampaign, store.AttrCampaign}] = ""
	c[cfgKey{store.AttrVariant, store.AttrVariant}] = ""
	for _, a := range cfg {
		c[cfgKey{a.Kind, a.Key}] = a.Value
	}
	return c
}

// configKeys returns the configuration keys that split a family's rows,
// from the configurations of the runs each side measured it with: a
// key whose values on the old side and on the new side have none in common
// is what the comparison is about (fabric=ib against fabric=eth, run=a
// against run=b, a section named after the transport) and is ignored; a key
// that varies on both sides with shared values (ntasks_per_node=1 and 2 on
// each) makes separate tables. Keys with one value across both sides split
// nothing and are left out too.
func configKeys(runs [2][]map[cfgKey]string) []cfgKey {
	keys := map[cfgKey]bool{}
	for _, side := range runs {
		for _, c := range side {
			for k := range c {
				keys[k] = true
			}
		}
	}
	var out []cfgKey
	for k := range keys {
		var vals [2]map[string]bool
		all := map[string]bool{}
		for i, side := range runs {
			vals[i] = map[string]bool{}
			for _, c := range side {
				vals[i][c[k]] = true // absent is ""
				all[c[k]] = true
			}
		}
		// The sides share a value when their union is smaller than both.
		if len(all) >= 2 && len(all) < len(vals[0])+len(vals[1]) {
			out = append(out, k)
		}
	}
	slices.SortFunc(out, cfgKey.compare)
	return out
}

func cmpX(a, b *float64) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return -1
	case b == nil:
		return 1
	}
	return cmp.Compare(*a, *b)
}

// betterNames name a unit's better direction (Table.Better): none for a
// unit with no direction.
var betterNames = map[results.Better]string{results.BetterHigher: "higher", results.BetterLower: "lower"}

// rowStats compares one row's values, one per run (or per pair, unit
// says which), without judging it: the summaries, the change and, when
// both sides have enough values for a Mann-Whitney test to reach Alpha at
// all (MinP ≤ Alpha: 4+4 or 3+5 at 0.05), the test's p-value. A row with
// fewer is not tested and says so in its note. Judge gives the verdict,
// once the family's p-values are adjusted.
func rowStats(old, new []float64, unit string, o Options) Row {
	var row Row
	if len(old) > 0 {
		row.Old = summarize(old)
	}
	if len(new) > 0 {
		row.New = summarize(new)
	}
	if row.Old == nil || row.New == nil {
		row.Change = Missing
		return row
	}
	row.Change = Same
	if row.Old.Median != 0 {
		d := row.New.Median/row.Old.Median - 1
		row.Delta = &d
	}
	if MinP(len(old), len(new)) <= o.Alpha {
		if u, err := MannWhitney(old, new); err == nil {
			p := u.P
			row.P, row.Tested = &p, true
			return row
		}
	}
	row.Note = untestedNote(len(old), len(new), unit, o)
	return row
}

// untestedNote says why a row of n+m values was not tested.
func untestedNote(n, m int, unit string, o Options) string {
	s := fmt.Sprintf("n=%d+%d: too few %s to judge", n, m, unit)
	if unit == "runs" {
		s += fmt.Sprintf("; repeat ≥ %d×", RunsNeeded(o.Alpha))
	}
	if o.ThresholdOnly {
		s += "; judged by the change alone (--threshold-only)"
	}
	return s
}

// judge gives a row its verdict: a tested row's change counts when its
// adjusted p-value is at most Alpha, an untested row's never — unless
// ThresholdOnly, when the change alone decides it. Either way a change
// within the threshold is not one, and the direction comes from the unit.
func judge(row *Row, better results.Better, o Options) {
	if row.Change == Missing {
		return
	}
	row.Change = Same
	counts := row.Significant(o.Alpha) || !row.Tested && o.ThresholdOnly
	if !counts {
		return
	}
	if row.Delta == nil {
		// From a median of 0: no relative change, any change is one.
		if row.New.Median != 0 {
			row.Change = Changed
		}
		return
	}
	// A small tolerance, so that 5% of a value printed with two decimals
	// is not beyond a 5% threshold by a rounding error.
	d := *row.Delta
	if math.Abs(d) <= o.Threshold+1e-9 {
		return
	}
	row.Change = direction(d, better)
}

// direction is the verdict on a change d beyond the threshold, for a
// unit whose better direction is better.
func direction(d float64, better results.Better) Change {
	switch {
	case better == results.BetterUnknown:
		return Changed
	case (d > 0) == (better == results.BetterHigher):
		return Better
	}
	return Worse
}

// newStepChange is step s of a series, first of the new level the run
// at p, judged against threshold for a unit whose better direction is
// better: Same within it, Changed from a level of 0.
func newStepChange(s Step, p Point, threshold float64, better results.Better) StepChange {
	c := StepChange{Index: s.Index, Run: p.Run, Job: p.Job, When: p.When, Before: s.Before, After: s.After, P: s.P, Change: Same}
	if s.Before == 0 {
		c.Change = Changed
		return c
	}
	c.Delta = s.After/s.Before - 1
	if math.Abs(c.Delta) > threshold+1e-9 {
		c.Change = direction(c.Delta, better)
	}
	return c
}

func summarize(v []float64) *Summary {
	return &Summary{N: len(v), Median: Median(v), Min: slices.Min(v), Max: slices.Max(v)}
}

// title names a table in messages: "osu_bw bandwidth (MB/s) variant=x".
func (t Table) title() string {
	s := t.Benchmark + " " + t.Metric
	if t.Unit != "" {
		s += " (" + t.Unit + ")"
	}
	if len(t.Config) > 0 {
		s += " " + strings.Join(t.Config, " ")
	}
	return s
}

// statusRuns lists runs by status, each list sorted and compressed:
// "failed runs 3-5,9 and invalid run 12".
func statusRuns(byStatus map[results.Status][]int64) string {
	var parts []string
	for _, st := range slices.Sorted(maps.Keys(byStatus)) {
		parts = append(parts, fmt.Sprintf("%s %s", st, runList(byStatus[st])))
	}
	return strings.Join(parts, " and ")
}

// capitalRuns is runList at the start of a sentence.
func capitalRuns(ids []int64) string {
	s := runList(ids)
	return strings.ToUpper(s[:1]) + s[1:]
}
