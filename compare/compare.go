package compare

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
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
	// Alpha is the significance level of the Mann-Whitney test
	// (default 0.05).
	Alpha float64
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

// Side is the runs of one side of a comparison with what was measured.
// Load fills one from the archive; a report that already holds the rows can
// fill it itself.
type Side struct {
	// Name is how the side was selected (e.g. "run=before"); it heads
	// the side's column.
	Name    string
	Runs    []store.Run
	Samples []store.Sample
	Scalars []store.Scalar
}

// Load reads the runs f selects, and their samples and scalars, as a side
// called name. When f selects nothing, the error is an
// *EmptySelectionError naming what the archive has (ExplainEmpty).
func Load(ctx context.Context, db *store.DB, name string, f store.Filter) (Side, error) {
	return load(ctx, db, name, name, f, nil)
}

// load reads a side; the samples and scalars of the runs in skip, which
// the other side has, are not read.
func load(ctx context.Context, db *store.DB, name, what string, f store.Filter, skip map[int64]bool) (Side, error) {
	s := Side{Name: name}
	var err error
	if s.Runs, err = db.Runs(ctx, f); err != nil {
		return Side{}, err
	}
	if len(s.Runs) == 0 {
		return Side{}, ExplainEmpty(ctx, db, what, f)
	}
	var ids []int64
	for _, r := range s.Runs {
		if !skip[r.ID] {
			ids = append(ids, r.ID)
		}
	}
	if len(ids) == 0 {
		return s, nil
	}
	if s.Samples, err = db.Samples(ctx, store.Filter{RunIDs: ids}); err != nil {
		return Side{}, err
	}
	if s.Scalars, err = db.Scalars(ctx, store.Filter{RunIDs: ids}); err != nil {
		return Side{}, err
	}
	return s, nil
}

// Compare resolves two selectors against the archive and compares their
// runs: the whole of "sbench compare" but the printing. A run both select
// is compared on the old side only (see Build).
func Compare(ctx context.Context, db *store.DB, old, new Selector, o Options) (*Result, error) {
	var sides [2]Side
	oldRuns := map[int64]bool{}
	for i, sel := range []Selector{old, new} {
		f, err := sel.Filter(ctx, db)
		if err != nil {
			return nil, err
		}
		f = f.And(o.Filter)
		if sides[i], err = load(ctx, db, sel.String(), "selector "+sel.String(), f, oldRuns); err != nil {
			return nil, err
		}
		for _, r := range sides[i].Runs {
			oldRuns[r.ID] = true
		}
	}
	return Build(sides[0], sides[1], o)
}

// Change is the verdict on one row.
type Change string

const (
	// Same: no significant change, or one within the threshold.
	Same Change = "same"
	// Better: a significant change beyond the threshold, for the better.
	Better Change = "better"
	// Worse: a significant change beyond the threshold, for the worse —
	// a regression.
	Worse Change = "worse"
	// Changed: beyond the threshold, for a unit with no known direction.
	Changed Change = "changed"
	// Missing: measured on one side only.
	Missing Change = "missing"
)

// Result is a comparison: one table per benchmark, metric and
// configuration, one row per x (message size, rank count).
type Result struct {
	Old       SideInfo `json:"old"`
	New       SideInfo `json:"new"`
	Threshold float64  `json:"threshold"`
	Alpha     float64  `json:"alpha"`
	Tables    []Table  `json:"tables"`
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
}

// Row compares the values at one x.
type Row struct {
	X   *float64 `json:"x,omitempty"`
	Old *Summary `json:"old,omitempty"`
	New *Summary `json:"new,omitempty"`
	// Delta is (new − old) / old of the medians, a fraction.
	Delta *float64 `json:"delta,omitempty"`
	// P is the Mann-Whitney p-value; absent when there are too few
	// repeats for the test to reach Alpha (see Tested).
	P      *float64 `json:"p,omitempty"`
	Change Change   `json:"change"`
}

// Tested reports whether the row's verdict rests on a significance test.
// Without one, a change beyond the threshold in the worse direction is a
// regression on its own.
func (r Row) Tested() bool { return r.P != nil }

// Summary is one side's values at one x: every sample of every run of the
// side with the same benchmark, metric, configuration and x is a repeat.
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

// Count returns how many rows of all tables have verdict c.
func (r *Result) Count(c Change) int {
	n := 0
	for _, t := range r.Tables {
		for _, row := range t.Rows {
			if row.Change == c {
				n++
			}
		}
	}
	return n
}

// Regressions returns how many rows got worse beyond the threshold.
func (r *Result) Regressions() int { return r.Count(Worse) }

// point is one value to compare.
type point struct {
	side   int
	run    *store.Run
	family string // benchmark, metric, unit
	extra  string // tags, pair, x unit
	x      *float64
	value  float64

	benchmark, metric, unit, xunit string
	extraParts                     []string
	// tool is what measured the value (ToolLabel), when rows are matched
	// by family.
	tool string
}

// Build compares two sides. Every sample (and every scalar whose unit has a
// direction, such as HPL's Gflops) of the ok runs is matched with those of
// the other side that have the same benchmark, metric, unit, x, tags and
// rank pair, and the same configuration — except the settings that tell
// the two sides apart (see configKeys).
func Build(old, new Side, o Options) (*Result, error) {
	if o.Alpha <= 0 || o.Alpha >= 1 {
		o.Alpha = 0.05
	}
	if o.Threshold < 0 {
		o.Threshold = 0
	}
	res := &Result{Old: SideInfo{Name: old.Name}, New: SideInfo{Name: new.Name}, Threshold: o.Threshold, Alpha: o.Alpha}
	// A run both sides select (baseline:X against the campaign the
	// baseline's runs belong to) would be compared with itself: it is the
	// old side's.
	inOld := map[int64]bool{}
	for _, r := range old.Runs {
		inOld[r.ID] = true
	}
	var shared []int64
	newRuns := make([]store.Run, 0, len(new.Runs))
	for _, r := range new.Runs {
		if inOld[r.ID] {
			shared = append(shared, r.ID)
			continue
		}
		newRuns = append(newRuns, r)
	}
	if len(shared) > 0 {
		if len(newRuns) == 0 {
			return nil, fmt.Errorf("every run %s selects is selected by %s too (%s), and a run selected by both sides is compared on the old side only: %w",
				new.Name, old.Name, runList(shared), ErrNoData)
		}
		res.Warnings = append(res.Warnings, fmt.Sprintf("%s selected by both sides: compared on the old side (%s) only", capitalRuns(shared), old.Name))
		new.Runs = newRuns
	}
	var pts []point
	for i, s := range []Side{old, new} {
		info := &res.Old
		if i == 1 {
			info = &res.New
		}
		ok := map[int64]*store.Run{}
		notOK := map[results.Status][]int64{}
		for j := range s.Runs {
			r := &s.Runs[j]
			if r.Status != results.StatusOK {
				info.Excluded = append(info.Excluded, r.ID)
				notOK[r.Status] = append(notOK[r.Status], r.ID)
				continue
			}
			ok[r.ID] = r
			info.Runs = append(info.Runs, r.ID)
		}
		if len(notOK) > 0 {
			res.Warnings = append(res.Warnings, fmt.Sprintf("%s: %s left out, only ok runs are compared", s.Name, statusRuns(notOK)))
		}
		for _, smp := range s.Samples {
			r := ok[smp.RunID]
			if r == nil || !wanted(o, r.Benchmark, smp.Metric) {
				continue
			}
			pts = append(pts, samplePoint(i, r, smp, o.Families))
		}
		sampled := map[string]bool{}
		for _, smp := range s.Samples {
			sampled[fmt.Sprint(smp.RunID, "\x00", smp.Metric, "\x00", smp.Unit)] = true
		}
		for _, sc := range s.Scalars {
			r := ok[sc.RunID]
			// A scalar that repeats a sample of its run (HPL's Gflops)
			// is not a repeat of it.
			if r == nil || results.BetterFor(sc.Unit) == results.BetterUnknown || !wanted(o, r.Benchmark, sc.Name) ||
				sampled[fmt.Sprint(sc.RunID, "\x00", sc.Name, "\x00", sc.Unit)] {
				continue
			}
			pts = append(pts, point{side: i, run: r, family: r.Benchmark + "\x00" + sc.Name + "\x00" + sc.Unit,
				value: sc.Value, benchmark: r.Benchmark, metric: sc.Name, unit: sc.Unit})
		}
	}
	for _, info := range []SideInfo{res.Old, res.New} {
		if len(info.Runs) == 0 {
			return nil, fmt.Errorf("%s: no ok runs: %w", info.Name, ErrNoData)
		}
	}
	res.Tables = buildTables(pts, o)
	both := 0
	for _, t := range res.Tables {
		for _, r := range t.Rows {
			if r.Change != Missing {
				both++
			}
		}
	}
	if both == 0 {
		return nil, fmt.Errorf("%s: %w", nothingInCommon(old, new, o), ErrNoData)
	}
	for _, t := range res.Tables {
		for i, tools := range [][]string{t.OldTools, t.NewTools} {
			if len(tools) > 1 {
				name := []string{old.Name, new.Name}[i]
				res.Warnings = append(res.Warnings, fmt.Sprintf("%s: %s pools the values of %d tools (%s): select one per side to compare them",
					t.title(), name, len(tools), strings.Join(tools, "; ")))
			}
		}
	}
	for _, t := range res.Tables {
		var onlyOld, onlyNew int
		for _, r := range t.Rows {
			switch {
			case r.Change == Missing && r.Old != nil:
				onlyOld++
			case r.Change == Missing:
				onlyNew++
			}
		}
		if onlyOld+onlyNew > 0 {
			res.Warnings = append(res.Warnings, fmt.Sprintf("%s: %d row(s) only in %s, %d only in %s", t.title(), onlyOld, old.Name, onlyNew, new.Name))
		}
	}
	return res, nil
}

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

func samplePoint(side int, r *store.Run, s store.Sample, families bool) point {
	p := point{side: side, run: r, x: s.X, value: s.Value,
		benchmark: r.Benchmark, metric: s.Metric, unit: s.Unit, xunit: s.XUnit}
	if fam := MetricFamily(r, s.Metric, s.XUnit); families && s.X != nil && fam != "" {
		p.benchmark, p.tool = fam, ToolLabel(r)
		// Ranks 0 and 1 are the pair of every two-rank measurement, said
		// by some tools and not by others: not a reason to keep them apart.
		if slices.Equal(s.Pair, []int{0, 1}) {
			s.Pair = nil
		}
	}
	p.family = p.benchmark + "\x00" + s.Metric + "\x00" + s.Unit
	for _, k := range slices.Sorted(maps.Keys(s.Tags)) {
		p.extraParts = append(p.extraParts, k+"="+s.Tags[k])
	}
	if len(s.Pair) > 0 {
		ranks := make([]string, len(s.Pair))
		for i, v := range s.Pair {
			ranks[i] = strconv.Itoa(v)
		}
		p.extraParts = append(p.extraParts, "pair="+strings.Join(ranks, ":"))
	}
	p.extra = strings.Join(p.extraParts, "\x00") + "\x00" + s.XUnit
	return p
}

// runConfig is what identifies a run's configuration (store.ConfigOf),
// keyed so that a label and a parameter of the same name stay apart.
func runConfig(r *store.Run) map[string]string {
	cfg := store.ConfigOf(r)
	c := make(map[string]string, len(cfg)+2)
	// Absent campaign or variant is a value too ("" on one side only).
	c[store.AttrCampaign+"\x00"+store.AttrCampaign] = ""
	c[store.AttrVariant+"\x00"+store.AttrVariant] = ""
	for _, a := range cfg {
		c[a.Kind+"\x00"+a.Key] = a.Value
	}
	return c
}

// configKeys returns the configuration keys that split a family's rows: a
// key whose values on the old side and on the new side have none in common
// is what the comparison is about (fabric=ib against fabric=eth, run=a
// against run=b, a section named after the transport) and is ignored; a key
// that varies on both sides with shared values (ntasks_per_node=1 and 2 on
// each) makes separate tables. Keys with one value across both sides split
// nothing and are left out too.
func configKeys(runs [2]map[int64]map[string]string) []string {
	keys := map[string]bool{}
	for _, side := range runs {
		for _, c := range side {
			for k := range c {
				keys[k] = true
			}
		}
	}
	var out []string
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
		if len(all) < 2 {
			continue
		}
		shared := false
		for v := range vals[0] {
			if vals[1][v] {
				shared = true
				break
			}
		}
		if shared {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// displayKey turns a runConfig key into what the user typed.
func displayKey(k string) string {
	_, name, _ := strings.Cut(k, "\x00")
	return name
}

type tableAcc struct {
	t     Table
	rows  map[string]*rowAcc
	tools [2]map[string]bool
}

type rowAcc struct {
	x    *float64
	vals [2][]float64
}

func buildTables(pts []point, o Options) []Table {
	// Configuration of the runs involved in each family, by side.
	famRuns := map[string]*[2]map[int64]map[string]string{}
	for _, p := range pts {
		fr := famRuns[p.family]
		if fr == nil {
			fr = &[2]map[int64]map[string]string{{}, {}}
			famRuns[p.family] = fr
		}
		if _, ok := fr[p.side][p.run.ID]; !ok {
			fr[p.side][p.run.ID] = runConfig(p.run)
		}
	}
	famKeys := map[string][]string{}
	for f, fr := range famRuns {
		famKeys[f] = configKeys(*fr)
	}
	tables := map[string]*tableAcc{}
	for _, p := range pts {
		cfg := famRuns[p.family][p.side][p.run.ID]
		var parts []string
		for _, k := range famKeys[p.family] {
			parts = append(parts, displayKey(k)+"="+cfg[k])
		}
		parts = append(parts, p.extraParts...)
		slices.Sort(parts)
		tkey := p.family + "\x00" + strings.Join(parts, "\x00") + "\x00" + p.extra
		ta := tables[tkey]
		if ta == nil {
			ta = &tableAcc{t: Table{Benchmark: p.benchmark, Metric: p.metric, Unit: p.unit, XUnit: p.xunit,
				Better: betterName(results.BetterFor(p.unit)), Config: parts}, rows: map[string]*rowAcc{}}
			tables[tkey] = ta
		}
		rkey := "none"
		if p.x != nil {
			rkey = strconv.FormatFloat(*p.x, 'g', -1, 64)
		}
		ra := ta.rows[rkey]
		if ra == nil {
			ra = &rowAcc{x: p.x}
			ta.rows[rkey] = ra
		}
		ra.vals[p.side] = append(ra.vals[p.side], p.value)
		if p.tool != "" {
			if ta.tools[p.side] == nil {
				ta.tools[p.side] = map[string]bool{}
			}
			ta.tools[p.side][p.tool] = true
		}
	}
	out := make([]Table, 0, len(tables))
	for _, ta := range tables {
		t := ta.t
		t.OldTools = slices.Sorted(maps.Keys(ta.tools[0]))
		t.NewTools = slices.Sorted(maps.Keys(ta.tools[1]))
		accs := make([]*rowAcc, 0, len(ta.rows))
		for _, ra := range ta.rows {
			accs = append(accs, ra)
		}
		slices.SortFunc(accs, func(a, b *rowAcc) int { return cmpX(a.x, b.x) })
		var gOld, gNew []float64
		for _, ra := range accs {
			row := compareRow(ra.vals[0], ra.vals[1], results.BetterFor(t.Unit), o)
			row.X = ra.x
			t.Rows = append(t.Rows, row)
			if row.Old != nil && row.New != nil && row.Old.Median > 0 && row.New.Median > 0 {
				gOld = append(gOld, row.Old.Median)
				gNew = append(gNew, row.New.Median)
			}
		}
		if len(gOld) > 0 {
			g := &GeoMean{Old: GeometricMean(gOld), New: GeometricMean(gNew), Rows: len(gOld)}
			g.Delta = g.New/g.Old - 1
			t.GeoMean = g
		}
		out = append(out, t)
	}
	slices.SortFunc(out, func(a, b Table) int {
		return cmp.Or(cmp.Compare(a.Benchmark, b.Benchmark), cmp.Compare(a.Metric, b.Metric),
			cmp.Compare(a.Unit, b.Unit), slices.Compare(a.Config, b.Config), cmp.Compare(a.XUnit, b.XUnit))
	})
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

func betterName(b results.Better) string {
	switch b {
	case results.BetterHigher:
		return "higher"
	case results.BetterLower:
		return "lower"
	}
	return ""
}

// compareRow judges one row. The test decides when it can: with repeats on
// both sides numerous enough that a Mann-Whitney test could reach Alpha at
// all (MinP ≤ Alpha: at least 4+4 or 3+5 values at 0.05). With fewer — a
// single run on each side being the common case — no test can, so the
// change alone decides: beyond the threshold in the worse direction, it is
// a regression. That is deliberate: a post-maintenance check that re-runs
// once must still fail on a 20% bandwidth drop.
func compareRow(old, new []float64, better results.Better, o Options) Row {
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
	significant := true
	if MinP(len(old), len(new)) <= o.Alpha {
		u, err := MannWhitney(old, new)
		if err == nil {
			p := u.P
			row.P = &p
			significant = p < o.Alpha
		}
	}
	row.Change = Same
	if row.Old.Median == 0 {
		if row.New.Median != 0 && significant {
			row.Change = Changed
		}
		return row
	}
	d := row.New.Median/row.Old.Median - 1
	row.Delta = &d
	// A small tolerance, so that 5% of a value printed with two decimals
	// is not beyond a 5% threshold by a rounding error.
	if !significant || math.Abs(d) <= o.Threshold+1e-9 {
		return row
	}
	switch {
	case better == results.BetterUnknown:
		row.Change = Changed
	case (d > 0) == (better == results.BetterHigher):
		row.Change = Better
	default:
		row.Change = Worse
	}
	return row
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

// nothingInCommon says why no row has both sides, and when the sides ran
// different benchmarks, how to compare them anyway.
func nothingInCommon(old, new Side, o Options) string {
	msg := fmt.Sprintf("no benchmark, metric and size was measured on both sides (%s and %s)", old.Name, new.Name)
	if o.Families {
		return strings.Replace(msg, "no benchmark,", "no metric family,", 1)
	}
	var names [2][]string
	for i, s := range []Side{old, new} {
		set := map[string]bool{}
		for _, r := range s.Runs {
			if r.Status == results.StatusOK {
				set[r.Benchmark] = true
			}
		}
		names[i] = slices.Sorted(maps.Keys(set))
	}
	for _, b := range names[0] {
		if slices.Contains(names[1], b) {
			return msg
		}
	}
	return fmt.Sprintf("%s: %s ran %s, %s ran %s; to put the same metric of different benchmarks side by side (osu_latency against the latency kernel), match rows by metric family (--group-by family)",
		msg, old.Name, listOf(names[0]), new.Name, listOf(names[1]))
}
