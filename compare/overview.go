package compare

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sbench/sbench/results"
	"github.com/sbench/sbench/sizes"
	"github.com/sbench/sbench/store"
)

// A run's key figure is, by preference: its peak bandwidth against
// message size (the median of its repeats at each size, the highest of
// them); for a bandwidth without sizes (a node-pair matrix), the median
// over its samples (the pairs); HPL's Gflops; its latency at the smallest
// size it measured; else the median of its first metric with a direction.
// One series per system, benchmark, configuration (store.ConfigOf, less
// campaign and system) and key figure.

// OverviewOptions tune the overview's steps.
type OverviewOptions struct {
	Alpha     float64 // significance of a step (0.05 when 0)
	Threshold float64 // smallest step that counts, as a fraction (0.05 when 0)
	Seed      uint64
	// Points is the most points a row's trend keeps for drawing (120 when
	// 0); longer series are summarised by medians of equal spans of runs.
	Points int
}

// Overview is the key figures of an archive's series.
type Overview struct {
	Rows []OverviewRow `json:"rows"`
	// Tested is how many series were long enough to be tested for a step
	// (Testable): the family whose first tests are controlled together
	// (StepFamily).
	Tested int `json:"tested_series"`
	// Runs, Failed and Invalid count the runs the overview was built from.
	Runs, Failed, Invalid int `json:"-"`
	// Systems are the systems of the runs, sorted ("" for runs of none).
	Systems     []string  `json:"systems"`
	First, Last time.Time `json:"-"`
}

// OverviewRow is one series: a key figure of one benchmark in one
// configuration of one system.
type OverviewRow struct {
	System    string `json:"system,omitempty"`
	Benchmark string `json:"benchmark"`
	// Config is the configuration as "key=value", only the attributes that
	// tell the series of this system and benchmark apart.
	Config []string `json:"config,omitempty"`
	// What names the figure: "peak bandwidth", "latency at 8 B",
	// "median matrix_bandwidth", "gflops".
	What   string   `json:"what"`
	Metric string   `json:"metric"`
	Unit   string   `json:"unit"`
	Better string   `json:"better,omitempty"`
	X      *float64 `json:"x,omitempty"`
	// Runs is the number of ok runs in the series; Failed and Invalid
	// those of its configuration that failed or were invalid.
	Runs    int `json:"runs"`
	Failed  int `json:"failed"`
	Invalid int `json:"invalid"`
	// Latest is the newest run's figure; LatestOutside says it lies
	// outside its control band (mean ± 3σ of the runs before it at its
	// level).
	Latest        Point `json:"latest"`
	LatestOutside bool  `json:"latest_outside,omitempty"`
	// First and Level are the medians of the first and of the current
	// level (since the last step); Trend is Level/First − 1.
	First float64 `json:"first"`
	Level float64 `json:"level"`
	Trend float64 `json:"trend"`
	// Tested says the series had the runs for its steps to be tested
	// (Testable: 8 at 0.05); P is then the p-value of its first test,
	// whether it changed level at all, one of the overview's family.
	Tested bool    `json:"tested"`
	P      float64 `json:"p,omitempty"`
	// Steps are the changes of level beyond the threshold, oldest first,
	// each with what changed in provenance: found only in the series the
	// family's control selects (StepFamily).
	Steps []StepChange `json:"steps,omitempty"`
	// Trace is the series for drawing: at most OverviewOptions.Points
	// points, each the median of a span of runs.
	Trace []TracePoint `json:"trace"`
}

// TracePoint is one point of a row's trace.
type TracePoint struct {
	When  time.Time `json:"when"`
	Value float64   `json:"value"`
}

// OverviewBuilder builds an overview from runs, samples and scalars fed
// one at a time: samples run by run, as store.EachSample gives them. It
// keeps a record and a key figure per run, never the samples.
type OverviewBuilder struct {
	o      OverviewOptions
	runs   map[int64]*ovRun
	order  []*ovRun
	strs   interner
	cfgs   map[ovKey]*ovConfig
	cur    *ovRun
	curAcc map[ovMetric][]float64
}

type ovConfig struct {
	system, benchmark string
	attrs             store.Config // less campaign and system
	key               ovKey
}

// ovKey is a configuration of the overview: a system's benchmark, run
// with the rest of its configuration (store.Config.Key).
type ovKey struct{ system, benchmark, cfg string }

func (a ovKey) compare(b ovKey) int {
	return cmp.Or(cmp.Compare(a.system, b.system), cmp.Compare(a.benchmark, b.benchmark), cmp.Compare(a.cfg, b.cfg))
}

type ovRun struct {
	id     int64
	job    string
	when   time.Time
	status results.Status
	cfg    *ovConfig
	// fig is the run's key figure, by rank (lower is preferred).
	fig     ovFigure
	hasFig  bool
	scalars bool
}

type ovMetric struct {
	metric, unit, xunit string
	x                   float64
	hasX                bool
}

type ovFigure struct {
	rank   int
	metric string
	unit   string
	what   string
	x      float64
	hasX   bool
	value  float64
}

// NewOverviewBuilder starts an overview.
func NewOverviewBuilder(o OverviewOptions) *OverviewBuilder {
	if o.Alpha <= 0 || o.Alpha >= 1 {
		o.Alpha = 0.05
	}
	if o.Threshold <= 0 {
		o.Threshold = 0.05
	}
	if o.Points <= 0 {
		o.Points = 120
	}
	return &OverviewBuilder{o: o, runs: map[int64]*ovRun{}, strs: interner{}, cfgs: map[ovKey]*ovConfig{}}
}

// AddRun records a run; its samples and scalars follow.
func (b *OverviewBuilder) AddRun(r *store.Run) {
	cfg := store.ConfigOf(r).Without(store.AttrCampaign)
	cfg = slices.DeleteFunc(cfg, func(a store.Attr) bool { return a.Kind == store.AttrLabel && a.Key == "system" })
	key := ovKey{r.System, r.Benchmark, cfg.Key()}
	c := b.cfgs[key]
	if c == nil {
		c = &ovConfig{system: b.strs.of(r.System), benchmark: b.strs.of(r.Benchmark), attrs: cfg, key: key}
		b.cfgs[key] = c
	}
	when := r.Start
	if when.IsZero() {
		when = r.IngestedAt
	}
	or := &ovRun{id: r.ID, job: JobName(r), when: when, status: r.Status, cfg: c}
	b.runs[r.ID] = or
	b.order = append(b.order, or)
}

// AddSample adds a sample of a recorded run. Samples come run by run: a
// run's key figure is settled when the next run's samples begin.
func (b *OverviewBuilder) AddSample(s *store.Sample) {
	r := b.runs[s.RunID]
	if r == nil || r.status != results.StatusOK {
		return
	}
	if b.cur != r {
		b.settle()
		b.cur, b.curAcc = r, map[ovMetric][]float64{}
	}
	if results.BetterFor(s.Unit) == results.BetterUnknown || results.AltUnitMetric(s.Metric) {
		return
	}
	k := ovMetric{metric: b.strs.of(s.Metric), unit: b.strs.of(s.Unit), xunit: b.strs.of(s.XUnit)}
	if s.X != nil {
		k.x, k.hasX = *s.X, true
	}
	b.curAcc[k] = append(b.curAcc[k], s.Value)
}

// AddScalar adds a scalar of a recorded run (HPL's Gflops).
func (b *OverviewBuilder) AddScalar(s *store.Scalar) {
	b.settle()
	r := b.runs[s.RunID]
	if r == nil || r.status != results.StatusOK || results.BetterFor(s.Unit) == results.BetterUnknown {
		return
	}
	rank := 6
	if strings.EqualFold(s.Unit, "gflops") || strings.EqualFold(s.Unit, "tflops") {
		rank = 2
	}
	b.offer(r, ovFigure{rank: rank, metric: b.strs.of(s.Name), unit: b.strs.of(s.Unit), what: b.strs.of(s.Name), value: s.Value})
}

func (b *OverviewBuilder) offer(r *ovRun, f ovFigure) {
	if !r.hasFig || f.rank < r.fig.rank || f.rank == r.fig.rank && preferMetric(f.metric, r.fig.metric) {
		r.fig, r.hasFig = f, true
	}
}

// preferMetric: "bandwidth" before its variants, then the shorter name
// (matrix_bandwidth before matrix_retest_bandwidth), then by name.
func preferMetric(a, b string) bool {
	if (a == "bandwidth") != (b == "bandwidth") {
		return a == "bandwidth"
	}
	if len(a) != len(b) {
		return len(a) < len(b)
	}
	return a < b
}

// settle computes the key figure of the run whose samples just ended.
func (b *OverviewBuilder) settle() {
	r := b.cur
	if r == nil {
		return
	}
	b.cur = nil
	type curve struct {
		unit, xunit string
		pts         map[float64]float64 // x -> median
	}
	type metricUnit struct{ metric, unit string }
	curves := map[metricUnit]*curve{}
	for k, v := range b.curAcc {
		kind := MetricKind(k.metric)
		switch {
		case k.hasX && kind != "" && SizeAxis(k.xunit):
			c := curves[metricUnit{k.metric, k.unit}]
			if c == nil {
				c = &curve{unit: k.unit, xunit: k.xunit, pts: map[float64]float64{}}
				curves[metricUnit{k.metric, k.unit}] = c
			}
			c.pts[k.x] = Median(v)
		case !k.hasX && kind == KindBandwidth:
			b.offer(r, ovFigure{rank: 1, metric: k.metric, unit: k.unit, what: "median " + k.metric, value: Median(v)})
		case !k.hasX && kind == KindLatency:
			b.offer(r, ovFigure{rank: 4, metric: k.metric, unit: k.unit, what: "median " + k.metric, value: Median(v)})
		case !k.hasX && (strings.EqualFold(k.unit, "gflops") || strings.EqualFold(k.unit, "tflops")):
			b.offer(r, ovFigure{rank: 2, metric: k.metric, unit: k.unit, what: k.metric, value: Median(v)})
		case !k.hasX:
			b.offer(r, ovFigure{rank: 5, metric: k.metric, unit: k.unit, what: "median " + k.metric, value: Median(v)})
		}
	}
	for mu, c := range curves {
		metric := mu.metric
		switch MetricKind(metric) {
		case KindBandwidth:
			peak, at := math.Inf(-1), 0.0
			for x, v := range c.pts {
				if v > peak || v == peak && x < at {
					peak, at = v, x
				}
			}
			what := "peak " + metric
			b.offer(r, ovFigure{rank: 0, metric: metric, unit: c.unit, what: what, value: peak})
		case KindLatency:
			smallest := math.Inf(1)
			for x := range c.pts {
				if x > 0 && x < smallest {
					smallest = x
				}
			}
			if math.IsInf(smallest, 1) {
				continue
			}
			what := metric + " at " + sizeText(smallest, c.xunit)
			b.offer(r, ovFigure{rank: 3, metric: metric, unit: c.unit, what: what, x: smallest, hasX: true, value: c.pts[smallest]})
		}
	}
	b.curAcc = nil
}

func sizeText(x float64, unit string) string {
	if unit == "" || unit == results.UnitBytes {
		return sizes.Label(x)
	}
	return strconv.FormatFloat(x, 'f', -1, 64) + " " + unit
}

// ovSeriesKey is a series of the overview: a configuration's key figure.
type ovSeriesKey struct {
	cfg        *ovConfig
	metric     string
	unit, what string
}

// ovPending is a row of the overview before its steps are described.
type ovPending struct {
	row   *OverviewRow
	cfg   *ovConfig
	steps []Step
	pts   []*ovRun
}

// Finish builds the overview. runs gives the runs either side of each
// step, in full, for their provenance (nil leaves it out).
func (b *OverviewBuilder) Finish(runs func(ids []int64) (map[int64]*store.Run, error)) (*Overview, error) {
	b.settle()
	ov := &Overview{}
	series, failed := b.tally(ov)
	rows, need := b.seriesRows(ov, series)
	counted := map[*ovConfig]bool{}
	for _, p := range rows {
		counted[p.cfg] = true
	}
	for c, f := range failed {
		if !counted[c] && f[0]+f[1] > 0 {
			// A configuration whose every run failed: a row of its own.
			rows = append(rows, ovPending{row: &OverviewRow{System: c.system, Benchmark: c.benchmark, What: "no ok run"}, cfg: c})
		}
	}
	var full map[int64]*store.Run
	if runs != nil && len(need) > 0 {
		var err error
		if full, err = runs(slices.Compact(slices.Sorted(slices.Values(need)))); err != nil {
			return nil, fmt.Errorf("overview: %w", err)
		}
	}
	for _, p := range rows {
		b.describeSteps(p, full)
	}
	// Each row names the attributes that tell it from the other rows of
	// its system and benchmark: what a reader needs, not every setting.
	bySB := map[[2]string][]store.Config{}
	for _, p := range rows {
		k := [2]string{p.cfg.system, p.cfg.benchmark}
		bySB[k] = append(bySB[k], p.cfg.attrs)
	}
	for _, p := range rows {
		p.row.Config = differing(p.cfg.attrs, bySB[[2]string{p.cfg.system, p.cfg.benchmark}])
	}
	slices.SortFunc(rows, func(a, b ovPending) int {
		return cmp.Or(cmp.Compare(a.row.System, b.row.System), cmp.Compare(a.row.Benchmark, b.row.Benchmark),
			slices.Compare(a.row.Config, b.row.Config), cmp.Compare(a.row.What, b.row.What))
	})
	// A configuration's failed runs count in its first row.
	done := map[*ovConfig]bool{}
	for _, p := range rows {
		if !done[p.cfg] {
			done[p.cfg] = true
			p.row.Failed, p.row.Invalid = failed[p.cfg][0], failed[p.cfg][1]
		}
		ov.Rows = append(ov.Rows, *p.row)
	}
	return ov, nil
}

// tally counts the runs into ov, and sorts those with a key figure into
// their series; failed has each configuration's failed and invalid runs.
func (b *OverviewBuilder) tally(ov *Overview) (series map[ovSeriesKey][]*ovRun, failed map[*ovConfig][2]int) {
	series, failed = map[ovSeriesKey][]*ovRun{}, map[*ovConfig][2]int{}
	systems := map[string]bool{}
	for _, r := range b.order {
		ov.Runs++
		systems[r.cfg.system] = true
		if ov.First.IsZero() || r.when.Before(ov.First) {
			ov.First = r.when
		}
		if r.when.After(ov.Last) {
			ov.Last = r.when
		}
		if r.status == results.StatusFailed || r.status == results.StatusInvalid {
			f := failed[r.cfg]
			if r.status == results.StatusFailed {
				ov.Failed++
				f[0]++
			} else {
				ov.Invalid++
				f[1]++
			}
			failed[r.cfg] = f
			continue
		}
		if !r.hasFig {
			continue
		}
		k := ovSeriesKey{r.cfg, r.fig.metric, r.fig.unit, r.fig.what}
		series[k] = append(series[k], r)
	}
	ov.Systems = slices.Sorted(maps.Keys(systems))
	return series, failed
}

// seriesRows makes a row of each series, its steps found; need are the
// runs either side of each step.
func (b *OverviewBuilder) seriesRows(ov *Overview, series map[ovSeriesKey][]*ovRun) (rows []ovPending, need []int64) {
	// Every series' first test first: the series of one overview are one
	// family, and which are searched for steps, at what level, depends on
	// all of them (StepFamily).
	keys := slices.SortedFunc(maps.Keys(series), func(a, b ovSeriesKey) int {
		return cmp.Or(a.cfg.key.compare(b.cfg.key), cmp.Compare(a.metric, b.metric), cmp.Compare(a.unit, b.unit), cmp.Compare(a.what, b.what))
	})
	searches := make([]*StepSearch, len(keys))
	ps, tested := make([]float64, len(keys)), make([]bool, len(keys))
	m := 0
	for _, k := range keys {
		if Testable(len(series[k]), b.o.Alpha) {
			m++
		}
	}
	perms := FamilyPermutations(m, b.o.Alpha)
	for i, k := range keys {
		rs := series[k]
		slices.SortStableFunc(rs, func(a, b *ovRun) int { return cmp.Or(a.when.Compare(b.when), cmp.Compare(a.id, b.id)) })
		searches[i] = NewStepSearch(figures(rs), StepOptions{Alpha: b.o.Alpha, Seed: b.o.Seed, Permutations: perms})
		ps[i], tested[i] = searches[i].First()
		if tested[i] {
			ov.Tested++
		}
	}
	levels := StepFamily(ps, tested, b.o.Alpha)
	for i, k := range keys {
		rs := series[k]
		row := &OverviewRow{System: k.cfg.system, Benchmark: k.cfg.benchmark, What: k.what, Metric: k.metric, Unit: k.unit,
			Better: betterNames[results.BetterFor(k.unit)], Runs: len(rs), Tested: tested[i]}
		if tested[i] {
			row.P = ps[i]
		}
		if f := rs[0].fig; f.hasX {
			x := f.x
			row.X = &x
		}
		vals := figures(rs)
		last := rs[len(rs)-1]
		row.Latest = Point{Run: last.id, Job: last.job, When: last.when, Value: last.fig.value, Min: last.fig.value, Max: last.fig.value, N: 1}
		steps := searches[i].Steps(levels[i])
		var starts []int
		for _, s := range steps {
			starts = append(starts, s.Index)
		}
		_, outside := ControlBands(vals, DefaultWindow, starts)
		row.LatestOutside = outside[len(outside)-1]
		firstEnd, lastStart := len(vals), 0
		if len(steps) > 0 {
			firstEnd, lastStart = steps[0].Index, steps[len(steps)-1].Index
		}
		row.First, row.Level = Median(vals[:firstEnd]), Median(vals[lastStart:])
		if row.First != 0 {
			row.Trend = row.Level/row.First - 1
		}
		row.Trace = trace(rs, b.o.Points)
		for _, s := range steps {
			need = append(need, rs[s.Index-1].id, rs[s.Index].id)
		}
		rows = append(rows, ovPending{row, k.cfg, steps, rs})
	}
	return rows, need
}

// describeSteps adds p's steps beyond the threshold to its row, judged
// and with what changed between the runs either side (full, by id).
func (b *OverviewBuilder) describeSteps(p ovPending, full map[int64]*store.Run) {
	for _, s := range p.steps {
		before, after := p.pts[s.Index-1], p.pts[s.Index]
		c := newStepChange(s, Point{Run: after.id, Job: after.job, When: after.when}, b.o.Threshold, results.BetterFor(p.row.Unit))
		if c.Change == Same {
			continue
		}
		c.Provenance = Provenance(full[before.id], full[after.id])
		p.row.Steps = append(p.row.Steps, c)
	}
}

// differing is c's attributes that tell it from others: in their order,
// each attribute that splits others further than the ones before it (a
// variant that decides the process count needs no "processes=2" after
// it), as "key=value".
func differing(c store.Config, others []store.Config) []string {
	type id struct{ kind, key string }
	var keys []id
	seen := map[id]bool{}
	for _, o := range others {
		for _, a := range o {
			if k := (id{a.Kind, a.Key}); !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	groups := func(ks []id) int {
		set := map[string]bool{}
		for _, o := range others {
			var b strings.Builder
			for _, k := range ks {
				v, _ := o.Get(k.kind, k.key)
				b.WriteString(v + "\x00")
			}
			set[b.String()] = true
		}
		return len(set)
	}
	var chosen []id
	for _, k := range keys {
		if groups(append(chosen[:len(chosen):len(chosen)], k)) > groups(chosen) {
			chosen = append(chosen, k)
		}
	}
	var out []string
	for _, k := range chosen {
		if v, ok := c.Get(k.kind, k.key); ok {
			out = append(out, k.key+"="+v)
		} else {
			out = append(out, "no "+k.key)
		}
	}
	return out
}

// trace summarises a series for drawing: at most n points, each the
// median of an equal span of runs, at the span's middle time.
func trace(rs []*ovRun, n int) []TracePoint {
	if len(rs) <= n {
		out := make([]TracePoint, len(rs))
		for i, r := range rs {
			out[i] = TracePoint{When: r.when, Value: r.fig.value}
		}
		return out
	}
	out := make([]TracePoint, 0, n)
	for i := 0; i < n; i++ {
		lo, hi := i*len(rs)/n, (i+1)*len(rs)/n
		out = append(out, TracePoint{When: rs[(lo+hi)/2].when, Value: Median(figures(rs[lo:hi]))})
	}
	return out
}

// figures are the key figures of runs rs, in their order.
func figures(rs []*ovRun) []float64 {
	vals := make([]float64, len(rs))
	for i, r := range rs {
		vals[i] = r.fig.value
	}
	return vals
}
