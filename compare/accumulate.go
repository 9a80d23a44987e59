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
	"sync"

	"github.com/sbench/sbench/results"
	"github.com/sbench/sbench/store"
)

// PairID names the node pair a row measured: its nodes, their placement
// and the ranks (results.PairTag, Sample.Pair). Samples that differ only
// in their pair are rows of one table, not tables of their own.
type PairID struct {
	From      string `json:"from,omitempty"`
	To        string `json:"to,omitempty"`
	Placement string `json:"placement,omitempty"`
	Ranks     []int  `json:"ranks,omitempty"`
}

// String is the pair as a table shows it: "n01→n02 (inter-node)", or its
// ranks "0:1" when the tool names no nodes.
func (p *PairID) String() string {
	if p == nil {
		return ""
	}
	var s string
	switch {
	case p.From != "" || p.To != "":
		s = orDash(p.From) + "→" + orDash(p.To)
	case len(p.Ranks) > 0:
		s = rankList(p.Ranks)
	}
	if p.Placement != "" {
		if s == "" {
			return p.Placement
		}
		s += " (" + p.Placement + ")"
	}
	return s
}

// parts are the pair as configuration parts, as a table that measured one
// pair only names it in its heading: "from=n01", "pair=0:1".
func (p *PairID) parts() []string {
	var out []string
	for _, kv := range [][2]string{{"from", p.From}, {"placement", p.Placement}, {"to", p.To}} {
		if kv[1] != "" {
			out = append(out, kv[0]+"="+kv[1])
		}
	}
	if len(p.Ranks) > 0 {
		out = append(out, "pair="+rankList(p.Ranks))
	}
	return out
}

// key is the pair as a map key (pairKey.id's inverse).
func (p *PairID) key() pairKey {
	if p == nil {
		return pairKey{}
	}
	return newPairKey(p.From, p.To, p.Placement, p.Ranks)
}

func comparePairs(a, b *PairID) int {
	if a == nil || b == nil {
		return cmp.Compare(btoi(a != nil), btoi(b != nil))
	}
	return cmp.Or(cmp.Compare(a.From, b.From), cmp.Compare(a.To, b.To), cmp.Compare(a.Placement, b.Placement), slices.Compare(a.Ranks, b.Ranks))
}

func rankList(ranks []int) string {
	s := make([]string, len(ranks))
	for i, v := range ranks {
		s[i] = strconv.Itoa(v)
	}
	return strings.Join(s, ":")
}

func orDash(s string) string { return cmp.Or(s, "-") }

// PairSummary is the summary line of a table whose rows are node pairs:
// how many pairs got worse or better, the worst, and the pairs of each
// side taken together, which is what two systems that share no pair still
// compare by.
type PairSummary struct {
	// Pairs is the number of distinct pairs; Rows the number of rows
	// (pairs × sizes), Both of them measured on both sides.
	Pairs int `json:"pairs"`
	Rows  int `json:"rows"`
	Both  int `json:"both"`
	// OnlyOld and OnlyNew count the rows measured on one side only; the
	// text output does not list them.
	OnlyOld int `json:"only_old"`
	OnlyNew int `json:"only_new"`
	Worse   int `json:"worse"`
	Better  int `json:"better"`
	// Worst is the row that got worse the most (or changed the most,
	// when none got worse).
	Worst *Row `json:"worst,omitempty"`
	// All compares the pairs taken together, one row per size: each
	// side's values are its pairs' medians, so that every pair counts
	// once. When no pair was measured on both sides (two systems' node
	// pairs), these rows are the table's verdict and count among the
	// result's regressions; otherwise the pairs' own rows do.
	All []Row `json:"all"`
}

// Judges reports whether the All rows carry the table's verdict: no pair
// was measured on both sides.
func (p *PairSummary) Judges() bool { return p != nil && p.Both == 0 }

// runInfo is what a comparison keeps of a run: its configuration, shared
// by every run of it, and what names its tool.
type runInfo struct {
	id  int64
	cfg *runConfigs
	// The fields MetricFamily and ToolLabel read.
	benchmark, kind, kernel, tool, toolBenchmark, toolVer, runnerVersion string
}

func (ri *runInfo) run() *store.Run {
	return &store.Run{ID: ri.id, Benchmark: ri.benchmark, Kind: ri.kind, Kernel: ri.kernel, Tool: ri.tool, ToolBenchmark: ri.toolBenchmark,
		ToolVer: ri.toolVer, RunnerVersion: ri.runnerVersion}
}

// runConfigs is one configuration (runConfig), shared by its runs.
type runConfigs struct {
	m map[cfgKey]string
}

// accumulator builds a comparison one run and one sample at a time: it
// keeps a small record per run and, per measured point, the values that a
// row's statistics need; never the samples. Build and Compare feed it.
// Each side has an accumulator of its own (sideAcc), so that the two
// sides can be read at once; tables merges them.
type accumulator struct {
	o     Options
	res   *Result
	names [2]string
	sides [2]*sideAcc
	// inOld are the old side's runs; both those the new side selects too.
	inOld map[int64]bool
	both  []int64
}

// sideAcc is what one side gathers.
type sideAcc struct {
	o          *Options
	ok         map[int64]*runInfo
	okIDs      []int64
	excluded   []int64
	notOK      map[results.Status][]int64
	benchmarks map[string]bool
	// sampled has a run's metrics and units: a scalar that repeats a
	// sample of its run (HPL's Gflops) is not a repeat of it.
	sampled map[sampledKey]bool
	cfgs    map[string]*runConfigs
	// strs interns the strings every run and sample repeats.
	strs   interner
	groups map[groupKey]*group
	// fams has, per family (benchmark, metric, unit), the configurations
	// of the runs that measured it: what configKeys reads.
	fams map[familyKey]map[*runConfigs]bool
}

type sampledKey struct {
	run          int64
	metric, unit string
}

type familyKey struct{ benchmark, metric, unit string }

// pairKey is a PairID as a map key.
type pairKey struct {
	from, to, placement string
	n, r0, r1           int
	more                string // ranks beyond two, rarely
}

func newPairKey(from, to, placement string, ranks []int) pairKey {
	k := pairKey{from: from, to: to, placement: placement, n: len(ranks)}
	switch len(ranks) {
	case 0:
	case 1:
		k.r0 = ranks[0]
	case 2:
		k.r0, k.r1 = ranks[0], ranks[1]
	default:
		k.more = rankList(ranks)
	}
	return k
}

func (k pairKey) id() *PairID {
	if k == (pairKey{}) {
		return nil
	}
	p := &PairID{From: k.from, To: k.to, Placement: k.placement}
	switch {
	case k.more != "":
		for _, f := range strings.Split(k.more, ":") {
			v, _ := strconv.Atoi(f)
			p.Ranks = append(p.Ranks, v)
		}
	case k.n == 1:
		p.Ranks = []int{k.r0}
	case k.n == 2:
		p.Ranks = []int{k.r0, k.r1}
	}
	return p
}

// groupKey is the finest grouping of points: a family, a configuration,
// the sample's other tags, its pair and its x. Tables and rows are
// unions of groups.
type groupKey struct {
	family familyKey
	xunit  string
	extra  string // the other tags, "k=v" joined by NUL
	pair   pairKey
	x      float64
	hasX   bool
	cfg    *runConfigs
}

// group gathers one value per run: the median of the run's samples in
// it. A run's samples come together (store.EachSample gives them run by
// run; Build sorts them so), so that the run in progress is the only one
// whose samples are held.
type group struct {
	extraParts []string
	// vals are the finished runs' values; cur the samples of run.
	vals  []float64
	run   int64
	cur   []float64
	tools map[string]bool
}

// addValue adds a sample of run, finishing the run before it.
func (g *group) addValue(run int64, v float64) {
	if len(g.cur) > 0 && run != g.run {
		g.finishRun()
	}
	g.run = run
	g.cur = append(g.cur, v)
}

// finishRun turns the run in progress into its value.
func (g *group) finishRun() {
	switch len(g.cur) {
	case 0:
		return
	case 1:
		g.vals = append(g.vals, g.cur[0])
	default:
		g.vals = append(g.vals, Median(g.cur))
	}
	g.cur = g.cur[:0]
}

func newAccumulator(oldName, newName string, o Options) *accumulator {
	if o.Alpha <= 0 || o.Alpha >= 1 {
		o.Alpha = 0.05
	}
	if o.Threshold < 0 {
		o.Threshold = 0
	}
	a := &accumulator{o: o, names: [2]string{oldName, newName}, inOld: map[int64]bool{}}
	a.res = &Result{Old: SideInfo{Name: oldName}, New: SideInfo{Name: newName}, Threshold: o.Threshold, Alpha: o.Alpha,
		Correction: Correction, ThresholdOnly: o.ThresholdOnly}
	for i := range a.sides {
		a.sides[i] = &sideAcc{o: &a.o, ok: map[int64]*runInfo{}, notOK: map[results.Status][]int64{}, benchmarks: map[string]bool{},
			sampled: map[sampledKey]bool{}, cfgs: map[string]*runConfigs{}, strs: interner{}, groups: map[groupKey]*group{},
			fams: map[familyKey]map[*runConfigs]bool{}}
	}
	return a
}

// interner keeps one copy of each string it is given: what many runs and
// samples repeat (benchmark, metric, tool names) is held once.
type interner map[string]string

func (in interner) of(s string) string {
	if v, ok := in[s]; ok {
		return v
	}
	in[s] = s
	return s
}

// addRun records a run of the side; only ok runs are compared.
func (sa *sideAcc) addRun(r *store.Run) {
	if r.Status != results.StatusOK {
		sa.excluded = append(sa.excluded, r.ID)
		sa.notOK[r.Status] = append(sa.notOK[r.Status], r.ID)
		return
	}
	sa.okIDs = append(sa.okIDs, r.ID)
	sa.benchmarks[sa.strs.of(r.Benchmark)] = true
	key := store.ConfigOf(r).Key()
	cfg := sa.cfgs[key]
	if cfg == nil {
		cfg = &runConfigs{m: runConfig(r)}
		sa.cfgs[key] = cfg
	}
	sa.ok[r.ID] = &runInfo{id: r.ID, cfg: cfg, benchmark: sa.strs.of(r.Benchmark), kind: sa.strs.of(r.Kind), kernel: sa.strs.of(r.Kernel),
		tool: sa.strs.of(r.Tool), toolBenchmark: sa.strs.of(r.ToolBenchmark), toolVer: sa.strs.of(r.ToolVer), runnerVersion: sa.strs.of(r.RunnerVersion)}
}

// addSample adds a sample of one of the side's runs; samples of other
// runs (not ok, or the other side's) are left out.
func (sa *sideAcc) addSample(s *store.Sample) {
	ri := sa.ok[s.RunID]
	if ri == nil {
		return
	}
	metric, unit := sa.strs.of(s.Metric), sa.strs.of(s.Unit)
	sa.sampled[sampledKey{s.RunID, metric, unit}] = true
	if !wanted(*sa.o, ri.benchmark, metric) {
		return
	}
	benchmark, tool, ranks := ri.benchmark, "", s.Pair
	if sa.o.Families && s.X != nil {
		if fam := MetricFamily(ri.run(), metric, s.XUnit); fam != "" {
			benchmark, tool = sa.strs.of(fam), sa.strs.of(ToolLabel(ri.run()))
			// Ranks 0 and 1 are the pair of every two-rank measurement,
			// said by some tools and not by others: not a reason to keep
			// them apart.
			if slices.Equal(ranks, []int{0, 1}) {
				ranks = nil
			}
		}
	}
	k := groupKey{family: familyKey{benchmark, metric, unit}, xunit: sa.strs.of(s.XUnit), cfg: ri.cfg}
	var extra []string
	for t, v := range s.Tags {
		switch {
		case results.DescriptiveTag(t):
		case t == "from":
			k.pair.from = v
		case t == "to":
			k.pair.to = v
		case t == "placement":
			k.pair.placement = v
		default: // a pair tag this code does not know (results.PairTag) too
			extra = append(extra, t+"="+v)
		}
	}
	slices.Sort(extra)
	k.extra = strings.Join(extra, "\x00")
	k.pair = newPairKey(k.pair.from, k.pair.to, k.pair.placement, ranks)
	if s.X != nil {
		k.x, k.hasX = *s.X, true
	}
	sa.add(k, extra, s.RunID, s.Value, tool)
}

// addScalar adds a scalar of one of the side's runs: those whose unit has
// a direction (HPL's Gflops) and that do not repeat one of its samples.
func (sa *sideAcc) addScalar(sc *store.Scalar) {
	ri := sa.ok[sc.RunID]
	if ri == nil || results.BetterFor(sc.Unit) == results.BetterUnknown || !wanted(*sa.o, ri.benchmark, sc.Name) ||
		sa.sampled[sampledKey{sc.RunID, sc.Name, sc.Unit}] {
		return
	}
	sa.add(groupKey{family: familyKey{ri.benchmark, sa.strs.of(sc.Name), sa.strs.of(sc.Unit)}, cfg: ri.cfg}, nil, sc.RunID, sc.Value, "")
}

func (sa *sideAcc) add(k groupKey, extra []string, run int64, value float64, tool string) {
	g := sa.groups[k]
	if g == nil {
		g = &group{extraParts: extra}
		sa.groups[k] = g
		f := sa.fams[k.family]
		if f == nil {
			f = map[*runConfigs]bool{}
			sa.fams[k.family] = f
		}
		f[k.cfg] = true
	}
	g.addValue(run, value)
	if tool != "" {
		if g.tools == nil {
			g.tools = map[string]bool{}
		}
		g.tools[tool] = true
	}
}

// result finishes the comparison: tables, warnings, and the errors of a
// comparison with nothing to compare.
func (a *accumulator) result() (*Result, error) {
	res := a.res
	for i, info := range []*SideInfo{&res.Old, &res.New} {
		sa := a.sides[i]
		info.Runs, info.Excluded = sa.okIDs, sa.excluded
		if len(sa.notOK) > 0 {
			res.Warnings = append(res.Warnings, fmt.Sprintf("%s: %s left out, only ok runs are compared", a.names[i], statusRuns(sa.notOK)))
		}
		if len(info.Runs) == 0 {
			return nil, fmt.Errorf("%s: no ok runs: %w", info.Name, ErrNoData)
		}
	}
	res.Tables = a.tables()
	a.judgeAll(res.Tables)
	if res.judged(func(Row) bool { return true }) == 0 {
		return nil, fmt.Errorf("%s: %w", a.nothingInCommon(), ErrNoData)
	}
	for _, t := range res.Tables {
		for i, tools := range [][]string{t.OldTools, t.NewTools} {
			if len(tools) > 1 {
				res.Warnings = append(res.Warnings, fmt.Sprintf("%s: %s pools the values of %d tools (%s): select one per side to compare them",
					t.title(), a.names[i], len(tools), strings.Join(tools, "; ")))
			}
		}
	}
	for _, t := range res.Tables {
		if t.Pairs != nil {
			continue // its summary line counts the pairs of one side only
		}
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
			res.Warnings = append(res.Warnings, fmt.Sprintf("%s: %d row(s) only in %s, %d only in %s", t.title(), onlyOld, a.names[0], onlyNew, a.names[1]))
		}
	}
	return res, nil
}

type tableAcc struct {
	t     Table
	rows  map[rowKey]*rowAcc
	pairs map[pairKey]*PairID
	tools [2]map[string]bool
}

type rowAcc struct {
	x    *float64
	pair *PairID
	vals [2][]float64
}

// tables merges the groups of both sides into tables: one per benchmark
// (or family), metric and configuration, one row per x and pair.
func (a *accumulator) tables() []Table {
	famCfgs := map[familyKey]*[2][]map[cfgKey]string{}
	for i, sa := range a.sides {
		for f, set := range sa.fams {
			fc := famCfgs[f]
			if fc == nil {
				fc = &[2][]map[cfgKey]string{}
				famCfgs[f] = fc
			}
			for c := range set {
				fc[i] = append(fc[i], c.m)
			}
		}
	}
	famKeys := map[familyKey][]cfgKey{}
	for f, cfgs := range famCfgs {
		famKeys[f] = configKeys(*cfgs)
	}
	// A table is a family's, in one configuration (its parts, a list
	// joined), for one set of other tags and one x unit.
	type tableKey struct {
		family              familyKey
		parts, extra, xunit string
	}
	tables := map[tableKey]*tableAcc{}
	// A table is the same for every group of a family, configuration,
	// other tags and x unit: the tens of thousands of node pairs of a
	// site's matrices are a few tables.
	type groupTable struct {
		family       familyKey
		cfg          *runConfigs
		extra, xunit string
	}
	of := map[groupTable]*tableAcc{}
	for side, sa := range a.sides {
		for k, g := range sa.groups {
			gt := groupTable{k.family, k.cfg, k.extra, k.xunit}
			ta := of[gt]
			if ta == nil {
				var parts []string
				for _, key := range famKeys[k.family] {
					parts = append(parts, key.name+"="+k.cfg.m[key])
				}
				parts = append(parts, g.extraParts...)
				slices.Sort(parts)
				tkey := tableKey{k.family, strings.Join(parts, "\x00"), k.extra, k.xunit}
				ta = tables[tkey]
				if ta == nil {
					ta = &tableAcc{t: Table{Benchmark: k.family.benchmark, Metric: k.family.metric, Unit: k.family.unit, XUnit: k.xunit,
						Better: betterNames[results.BetterFor(k.family.unit)], Config: parts}, rows: map[rowKey]*rowAcc{}, pairs: map[pairKey]*PairID{},
						tools: [2]map[string]bool{{}, {}}}
					tables[tkey] = ta
				}
				of[gt] = ta
			}
			rk := rowKey{pair: k.pair, x: k.x, hasX: k.hasX}
			ra := ta.rows[rk]
			if ra == nil {
				ra = &rowAcc{pair: ta.pair(k.pair)}
				if k.hasX {
					x := k.x
					ra.x = &x
				}
				ta.rows[rk] = ra
			}
			// Most rows are one group a side: its values, not a copy;
			// either way the group lets go of them.
			g.finishRun()
			g.cur = nil
			if ra.vals[side] == nil {
				ra.vals[side] = g.vals
			} else {
				ra.vals[side] = append(ra.vals[side], g.vals...)
			}
			g.vals = nil
			for tool := range g.tools {
				ta.tools[side][tool] = true
			}
		}
	}
	out := make([]Table, 0, len(tables))
	for _, ta := range tables {
		out = append(out, a.finishTable(ta))
	}
	slices.SortFunc(out, func(a, b Table) int {
		return cmp.Or(cmp.Compare(a.Benchmark, b.Benchmark), cmp.Compare(a.Metric, b.Metric),
			cmp.Compare(a.Unit, b.Unit), slices.Compare(a.Config, b.Config), cmp.Compare(a.XUnit, b.XUnit))
	})
	return out
}

type rowKey struct {
	pair pairKey
	x    float64
	hasX bool
}

// pair is the table's PairID of k, one per pair.
func (ta *tableAcc) pair(k pairKey) *PairID {
	if k == (pairKey{}) {
		return nil
	}
	p := ta.pairs[k]
	if p == nil {
		p = k.id()
		ta.pairs[k] = p
	}
	return p
}

func (a *accumulator) finishTable(ta *tableAcc) Table {
	t := ta.t
	t.OldTools = slices.Sorted(maps.Keys(ta.tools[0]))
	t.NewTools = slices.Sorted(maps.Keys(ta.tools[1]))
	accs := slices.Collect(maps.Values(ta.rows))
	byPair := len(ta.pairs) > 1
	if len(ta.pairs) == 1 {
		// One pair: the table is that pair's, named in its heading.
		for _, p := range ta.pairs {
			t.Config = append(t.Config, p.parts()...)
		}
		slices.Sort(t.Config)
	}
	slices.SortFunc(accs, func(a, b *rowAcc) int {
		if byPair {
			if c := comparePairs(a.pair, b.pair); c != 0 {
				return c
			}
		}
		return cmpX(a.x, b.x)
	})
	var gOld, gNew []float64
	for _, ra := range accs {
		row := rowStats(ra.vals[0], ra.vals[1], "runs", a.o)
		row.X = ra.x
		if byPair {
			row.Pair = ra.pair
		}
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
	if byPair {
		t.Pairs = a.pairSummary(t.Rows)
	}
	return t
}

// pairSummary sums up the rows of a table of node pairs, and compares the
// pairs of each side taken together, size by size; count adds the
// verdicts once the rows are judged.
func (a *accumulator) pairSummary(rows []Row) *PairSummary {
	ps := &PairSummary{Rows: len(rows)}
	pairs := map[pairKey]bool{}
	type side struct {
		x       *float64
		medians [2][]float64
	}
	byX := map[string]*side{}
	var xs []*side
	for i := range rows {
		r := &rows[i]
		pairs[r.Pair.key()] = true
		switch {
		case r.Old != nil && r.New != nil:
			ps.Both++
		case r.Old != nil:
			ps.OnlyOld++
		default:
			ps.OnlyNew++
		}
		xk := "none"
		if r.X != nil {
			xk = strconv.FormatFloat(*r.X, 'g', -1, 64)
		}
		s := byX[xk]
		if s == nil {
			s = &side{x: r.X}
			byX[xk] = s
			xs = append(xs, s)
		}
		for j, sum := range []*Summary{r.Old, r.New} {
			if sum != nil {
				s.medians[j] = append(s.medians[j], sum.Median)
			}
		}
	}
	ps.Pairs = len(pairs)
	slices.SortFunc(xs, func(a, b *side) int { return cmpX(a.x, b.x) })
	for _, s := range xs {
		row := rowStats(s.medians[0], s.medians[1], "pairs", a.o)
		row.X = s.x
		ps.All = append(ps.All, row)
	}
	return ps
}

// count counts the judged rows of a table of node pairs that got worse or
// better, and finds the worst.
func (ps *PairSummary) count(rows []Row, better results.Better) {
	ps.Worse, ps.Better, ps.Worst = 0, 0, nil
	for i := range rows {
		r := &rows[i]
		switch r.Change {
		case Worse:
			ps.Worse++
		case Better:
			ps.Better++
		}
		if r.Delta != nil && (r.Change == Worse || (r.Change == Changed && ps.Worse == 0)) {
			if ps.Worst == nil || worseThan(*r.Delta, *ps.Worst.Delta, better) {
				w := *r
				ps.Worst = &w
			}
		}
	}
}

// judgeAll judges every row of the comparison as one family: the p-values of
// the tested rows — of every table, and the rows comparing node pairs
// taken together — are adjusted together (BenjaminiHochberg), so that a
// comparison of hundreds of rows does not find changes by chance alone;
// then each row gets its verdict (see judge).
func (a *accumulator) judgeAll(tables []Table) {
	var tested []*Row
	each := func(fn func(t *Table, r *Row)) {
		for i := range tables {
			t := &tables[i]
			for j := range t.Rows {
				fn(t, &t.Rows[j])
			}
			if t.Pairs != nil {
				for j := range t.Pairs.All {
					fn(t, &t.Pairs.All[j])
				}
			}
		}
	}
	each(func(_ *Table, r *Row) {
		if r.Tested {
			tested = append(tested, r)
		}
	})
	ps := make([]float64, len(tested))
	for i, r := range tested {
		ps[i] = *r.P
	}
	for i, q := range BenjaminiHochberg(ps) {
		tested[i].Q = &q
	}
	a.res.Family = len(tested)
	each(func(t *Table, r *Row) { judge(r, results.BetterFor(t.Unit), a.o) })
	for i := range tables {
		if t := &tables[i]; t.Pairs != nil {
			t.Pairs.count(t.Rows, results.BetterFor(t.Unit))
		}
	}
}

// worseThan reports whether change d is worse than e for a unit whose
// better direction is b (any direction: larger in size).
func worseThan(d, e float64, b results.Better) bool {
	switch b {
	case results.BetterHigher:
		return d < e
	case results.BetterLower:
		return d > e
	}
	return math.Abs(d) > math.Abs(e)
}

// nothingInCommon says why no row has both sides, and when the sides ran
// different benchmarks, how to compare them anyway.
func (a *accumulator) nothingInCommon() string {
	old, new := a.names[0], a.names[1]
	msg := fmt.Sprintf("no benchmark, metric and size was measured on both sides (%s and %s)", old, new)
	if a.o.Families {
		return strings.Replace(msg, "no benchmark,", "no metric family,", 1)
	}
	var names [2][]string
	for i := range a.sides {
		names[i] = slices.Sorted(maps.Keys(a.sides[i].benchmarks))
	}
	for _, b := range names[0] {
		if slices.Contains(names[1], b) {
			return msg
		}
	}
	return fmt.Sprintf("%s: %s ran %s, %s ran %s; to put the same metric of different benchmarks side by side (osu_latency against the latency kernel), match rows by metric family (--group-by family)",
		msg, old, listOf(names[0]), new, listOf(names[1]))
}

// Build compares two sides held in memory. Every sample (and every scalar
// whose unit has a direction, such as HPL's Gflops) of the ok runs is
// matched with those of the other side that have the same benchmark,
// metric, unit, x and tags, and the same configuration — except the
// settings that tell the two sides apart (see configKeys). Samples that
// differ only in their node pair (results.PairTag, the rank pair) are rows
// of one table, with a summary line (PairSummary); tags that only number
// a sample (results.DescriptiveTag: a matrix round, a re-test pass) are
// not told apart at all.
func Build(old, new Side, o Options) (*Result, error) {
	a := newAccumulator(old.Name, new.Name, o)
	for i, s := range []Side{old, new} {
		for j := range s.Runs {
			a.addRun(i, &s.Runs[j])
		}
	}
	if err := a.shared(); err != nil {
		return nil, err
	}
	for i, s := range []Side{old, new} {
		// Run by run, as the archive gives them (see group).
		for _, j := range byRun(len(s.Samples), func(j int) int64 { return s.Samples[j].RunID }) {
			a.sides[i].addSample(&s.Samples[j])
		}
		for _, j := range byRun(len(s.Scalars), func(j int) int64 { return s.Scalars[j].RunID }) {
			a.sides[i].addScalar(&s.Scalars[j])
		}
	}
	return a.result()
}

// byRun returns the indexes 0 … n-1 ordered by the run id of each (run),
// stably: each run's in their order.
func byRun(n int, run func(i int) int64) []int {
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(run(a), run(b)) })
	return idx
}

// addRun records a run of side (0 old, 1 new). A run both sides select
// (baseline:X against the campaign the baseline's runs belong to) would be
// compared with itself: it is the old side's.
func (a *accumulator) addRun(side int, r *store.Run) {
	if side == 0 {
		a.inOld[r.ID] = true
	} else if a.inOld[r.ID] {
		a.both = append(a.both, r.ID)
		return
	}
	a.sides[side].addRun(r)
}

// shared notes the runs both sides selected, compared on the old side only.
func (a *accumulator) shared() error {
	ids := a.both
	if len(ids) == 0 {
		return nil
	}
	if len(a.sides[1].okIDs)+len(a.sides[1].excluded) == 0 {
		return fmt.Errorf("every run %s selects is selected by %s too (%s), and a run selected by both sides is compared on the old side only: %w",
			a.names[1], a.names[0], runList(ids), ErrNoData)
	}
	a.res.Warnings = append(a.res.Warnings, fmt.Sprintf("%s selected by both sides: compared on the old side (%s) only", capitalRuns(ids), a.names[0]))
	return nil
}

// Compare resolves two selectors against the archive and compares their
// runs: the whole of "sbench compare" but the printing. A run both select
// is compared on the old side only (see Build).
func Compare(ctx context.Context, db *store.DB, old, new Selector, o Options) (*Result, error) {
	var fs [2]store.Filter
	for i, sel := range []Selector{old, new} {
		f, err := sel.Filter(ctx, db)
		if err != nil {
			return nil, err
		}
		fs[i] = f.And(o.Filter)
	}
	return CompareFilters(ctx, db, [2]string{old.String(), new.String()}, fs, o)
}

// CompareFilters compares the runs of two filters, named names[0] (old)
// and names[1] (new), reading the archive one run and one sample at a
// time: what it holds is a record per run and a value per sample, never
// the samples themselves. The two sides' samples are read at once, each
// on a connection and a core of its own. A filter that selects nothing
// is an *EmptySelectionError.
func CompareFilters(ctx context.Context, db *store.DB, names [2]string, fs [2]store.Filter, o Options) (*Result, error) {
	a := newAccumulator(names[0], names[1], o)
	for i, f := range fs {
		n := 0
		err := db.EachRun(ctx, f, store.RunOptions{Detail: store.RunParams}, func(r *store.Run) error {
			n++
			a.addRun(i, r)
			return nil
		})
		if err != nil {
			return nil, err
		}
		if n == 0 {
			return nil, ExplainEmpty(ctx, db, "selector "+names[i], f)
		}
	}
	if err := a.shared(); err != nil {
		return nil, err
	}
	var errs [2]error
	var wg sync.WaitGroup
	for i, f := range fs {
		sa := a.sides[i]
		if len(sa.ok) == 0 {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = db.EachSample(ctx, f, store.SampleOptions{}, func(s store.Sample) error {
				sa.addSample(&s)
				return nil
			})
			if errs[i] == nil {
				errs[i] = db.EachScalar(ctx, f, func(s store.Scalar) error {
					sa.addScalar(&s)
					return nil
				})
			}
			// What only the walk needed: the runs, what each sampled.
			sa.ok, sa.sampled = nil, nil
		}()
	}
	wg.Wait()
	if err := errors.Join(errs[:]...); err != nil {
		return nil, err
	}
	return a.result()
}
