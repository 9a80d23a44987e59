package reports

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/sbench/sbench/compare"
	"github.com/sbench/sbench/kernels"
	"github.com/sbench/sbench/results"
	"github.com/sbench/sbench/screen"
	"github.com/sbench/sbench/store"
)

// familyResult is one benchmark's section of the report: everything it
// measured, combined per configuration and summarised.
type familyResult struct {
	name       string
	collective bool
	groups     []*sizeGroup // curves against message size, bandwidth first
	matrices   []*matrixGroup
	hpl        []HPLRow
	values     []ValueRow // measurements without a size axis
	scaling    []*scalingGroup
	figures    []int // indices of the section's figures in Report.figures
}

// sizeGroup is one metric of one benchmark against message size (or, in
// the family view, of one metric family and one split: "variant=intra").
type sizeGroup struct {
	family, metric, kind string
	split                string
	collective           bool
	series               []Series
	// ranks is the one process count of every series, when they share it
	// (it then goes in the title instead of every legend entry).
	ranks     int
	bandwidth []BandwidthSummary
	latency   []LatencySummary
	figs      []int // indices of its figures in Report.figures

	raw map[seriesKey]map[float64][]float64
	ids map[seriesKey]map[int64]bool
	// rawRuns are the runs of raw's samples, one per sample; rawP50 their
	// own medians (a latency sample's P50, the median of its iterations;
	// NaN for a sample without one), for latency only.
	rawRuns map[seriesKey]map[float64][]int64
	rawP50  map[seriesKey]map[float64][]float64
}

// title names the group in sentences: its benchmark (or family), and the
// split of the family view.
func (g *sizeGroup) title() string {
	if g.split == "" {
		return g.family
	}
	return g.family + " (" + g.split + ")"
}

// metricLabel is the group's metric, with the family view's split.
func (g *sizeGroup) metricLabel() string {
	if g.split == "" {
		return g.metric
	}
	return g.metric + " (" + g.split + ")"
}

// seriesOf is the group's series of a configuration and process count.
func (g *sizeGroup) seriesOf(config string, ranks int) *Series {
	for i := range g.series {
		if g.series[i].Config == config && g.series[i].Ranks == ranks {
			return &g.series[i]
		}
	}
	return nil
}

type seriesKey struct {
	config string
	ranks  int
}

// scalingGroup is a key figure of a benchmark against the process count.
type scalingGroup struct {
	family, what, unit string
	series             []Series
	figs               []int // its figure, when drawn
}

// ValueRow is a measurement that has no size axis — a STREAM triad rate,
// an iperf3 interval, a scalar — combined per configuration.
type ValueRow struct {
	Family, Config, Metric, Unit string
	Median, Min, Max             float64
	N                            int
	Runs                         []int64
	// RunValues are the runs' values, one a run, when each run gave one
	// sample (an application's timesteps/s, a wall time): what tells two
	// configurations apart. Nil when a run gave several.
	RunValues []float64
}

// analyse sorts the samples and scalars of good runs into the families'
// groups and summarises them, noting everything it leaves out. It reads
// the samples once, one at a time, and builds the overview from the same
// walk.
func (r *Report) analyse() error {
	a := newAccumulator(r)
	if err := r.src.EachSample(r.ctx, a.addSample); err != nil {
		return err
	}
	if err := a.addScalars(); err != nil {
		return err
	}
	a.finish()
	r.families = a.order()
	a.notes()
	var err error
	r.overview, err = a.ob.Finish(func(ids []int64) (map[int64]*store.Run, error) {
		out := make(map[int64]*store.Run, len(ids))
		for _, id := range ids {
			out[id] = r.byID[id]
		}
		return out, nil
	})
	return err
}

// accumulator is what analyse gathers while it reads: the groups of every
// family (curves against size, node-pair matrices, values, scaling), and
// what it leaves out.
type accumulator struct {
	r        *Report
	fams     map[string]*familyResult
	groups   map[groupKey]*sizeGroup
	matrices map[matrixKey]*matrixGroup
	scaling  map[scalingKey]byConfig
	values   map[valueKey]*valueData
	ob       *compare.OverviewBuilder

	unknownRun map[int64]int
	notShown   map[string]int
	badRuns    map[int64]bool
}

type groupKey struct{ family, metric, split string }

type matrixKey struct{ family, metric, config string }

type scalingKey struct{ family, metric, unit string }

type valueKey struct{ family, config, metric, unit string }

// byConfig are values by configuration and process count (or size).
type byConfig map[string]map[float64][]float64

func (m byConfig) add(config string, x, v float64) {
	if m[config] == nil {
		m[config] = map[float64][]float64{}
	}
	m[config][x] = append(m[config][x], v)
}

// valueData is one ValueRow's values and runs while they are read.
type valueData struct {
	row  ValueRow
	data []float64
	runs map[int64]bool
}

func newAccumulator(r *Report) *accumulator {
	a := &accumulator{r: r, fams: map[string]*familyResult{}, groups: map[groupKey]*sizeGroup{},
		matrices: map[matrixKey]*matrixGroup{}, scaling: map[scalingKey]byConfig{},
		values: map[valueKey]*valueData{}, ob: compare.NewOverviewBuilder(compare.OverviewOptions{}),
		unknownRun: map[int64]int{}, notShown: map[string]int{}, badRuns: map[int64]bool{}}
	for i := range r.runs {
		f := a.family(family(&r.runs[i]))
		f.collective = f.collective || compare.Collective(&r.runs[i])
		a.ob.AddRun(&r.runs[i])
	}
	r.sampleTexts = map[string]bool{}
	return a
}

// family is the family of that name, made on first use.
func (a *accumulator) family(name string) *familyResult {
	f := a.fams[name]
	if f == nil {
		f = &familyResult{name: name, collective: isCollective(name)}
		a.fams[name] = f
	}
	return f
}

// text notes a sample's text that is not ASCII (the fonts must draw it).
func (a *accumulator) text(s string) {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			a.r.sampleTexts[s] = true
			return
		}
	}
}

// addSample sorts one sample into its group.
func (a *accumulator) addSample(s store.Sample) error {
	r := a.r
	run := r.byID[s.RunID]
	if run == nil {
		a.unknownRun[s.RunID]++
		return nil
	}
	a.text(s.Metric)
	a.text(s.Unit)
	for _, v := range s.Tags {
		a.text(v)
	}
	if r.screenRuns[run.ID] {
		r.screenSamples = append(r.screenSamples, s)
	}
	if bad(run) {
		// A failed or invalid run's numbers must never become a curve or
		// a peak figure; the runs table and appendix list them instead.
		a.badRuns[run.ID] = true
		return nil
	}
	a.ob.AddSample(&s)
	if r.screenRuns[run.ID] && run.Labels[screen.LabelReference] != "" {
		// The screening section shows every node's links to the
		// reference in one table, not a configuration per pair.
		return nil
	}
	fam := family(run)
	cfg := r.configs.ofRun[run.ID]
	matrix, retest := kernels.MatrixMetric(strings.ToLower(s.Metric))
	kind := compare.MetricKind(s.Metric)
	switch {
	case retest:
		// Re-tests of suspect pairs: the screening section's.
	case matrix:
		a.addMatrix(run, fam, cfg, &s)
	case results.AltUnitMetric(s.Metric):
		// The same measurement as bandwidth, in another unit: nothing
		// is left out by not drawing it twice.
	case kind != "" && s.X != nil && compare.SizeAxis(s.XUnit):
		a.addSized(run, fam, cfg, kind, &s)
	case s.X != nil && isRanksAxis(s.XUnit):
		k := scalingKey{fam, s.Metric, s.Unit}
		if a.scaling[k] == nil {
			a.scaling[k] = byConfig{}
		}
		a.scaling[k].add(cfg, *s.X, s.Value)
	case s.X != nil:
		a.notShown[fmt.Sprintf("%s: %s against %s (only message size and rank count are plotted)", fam, s.Metric, orDash(s.XUnit))]++
	default:
		a.addValue(run, s.Metric, s.Unit, s.Value)
	}
	return nil
}

// addMatrix adds a sample of the matrix kernel to its heatmap.
func (a *accumulator) addMatrix(run *store.Run, fam, cfg string, s *store.Sample) {
	from, to := s.Tags["from"], s.Tags["to"]
	if from == "" || to == "" {
		a.notShown[fmt.Sprintf("%s: %s without from/to node tags", fam, s.Metric)]++
		return
	}
	k := matrixKey{fam, s.Metric, cfg}
	g := a.matrices[k]
	if g == nil {
		g = newMatrixGroup(fam, s.Metric, s.Unit, cfg)
		a.matrices[k] = g
	}
	g.add(run.ID, from, to, s.Value)
}

// addSized adds a sample against message size to its curve.
func (a *accumulator) addSized(run *store.Run, fam, cfg, kind string, s *store.Sample) {
	factor, ok := unitFactor(kind, s.Unit)
	if !ok {
		a.notShown[fmt.Sprintf("%s: %s in unknown unit %q", fam, s.Metric, s.Unit)]++
		return
	}
	split := ""
	if mf := a.r.sampleFamily(run, s.Metric, s.XUnit); mf != "" {
		// The family view: the line is the tool, the figure the
		// attributes the tools share (buildFamilyView).
		l := a.r.fview.lines[[2]string{mf, s.Metric}][run.ID]
		fam, cfg, split = mf, l.name, l.split
	}
	k := groupKey{fam, s.Metric, split}
	g := a.groups[k]
	if g == nil {
		g = &sizeGroup{family: fam, metric: s.Metric, kind: kind, split: split, collective: compare.Collective(run),
			raw: map[seriesKey]map[float64][]float64{}, ids: map[seriesKey]map[int64]bool{},
			rawRuns: map[seriesKey]map[float64][]int64{}, rawP50: map[seriesKey]map[float64][]float64{}}
		a.groups[k] = g
	}
	sk := seriesKey{cfg, store.ProcessCount(run)}
	if g.raw[sk] == nil {
		g.raw[sk] = map[float64][]float64{}
		g.ids[sk] = map[int64]bool{}
		g.rawRuns[sk] = map[float64][]int64{}
		g.rawP50[sk] = map[float64][]float64{}
	}
	g.raw[sk][*s.X] = append(g.raw[sk][*s.X], s.Value*factor)
	g.rawRuns[sk][*s.X] = append(g.rawRuns[sk][*s.X], run.ID)
	if kind == KindLatency {
		p50 := math.NaN()
		if s.P50 != nil {
			p50 = *s.P50 * factor
		}
		g.rawP50[sk][*s.X] = append(g.rawP50[sk][*s.X], p50)
	}
	g.ids[sk][run.ID] = true
}

// addValue adds a measurement without a size axis to its row.
func (a *accumulator) addValue(run *store.Run, metric, unit string, v float64) {
	k := valueKey{family(run), a.r.configs.ofRun[run.ID], metric, unit}
	d := a.values[k]
	if d == nil {
		d = &valueData{row: ValueRow{Family: k.family, Config: k.config, Metric: metric, Unit: unit}, runs: map[int64]bool{}}
		a.values[k] = d
	}
	d.data = append(d.data, v)
	d.runs[run.ID] = true
}

// addScalars reads the scalars: HPL's become its table, others are values
// like any. Scalars are few (HPL's dozen per run): grouped by run whatever
// their order.
func (a *accumulator) addScalars() error {
	r := a.r
	byRun := map[int64][]store.Scalar{}
	err := r.src.EachScalar(r.ctx, func(s store.Scalar) error {
		if r.byID[s.RunID] == nil {
			a.unknownRun[s.RunID]++
			return nil
		}
		a.ob.AddScalar(&s)
		byRun[s.RunID] = append(byRun[s.RunID], s)
		return nil
	})
	if err != nil {
		return err
	}
	for _, id := range slices.Sorted(maps.Keys(byRun)) {
		run := r.byID[id]
		if row, ok := r.hplRow(run, byRun[id]); ok {
			f := a.family(family(run))
			f.hpl = append(f.hpl, row)
			continue
		}
		if bad(run) {
			a.badRuns[run.ID] = true
			continue
		}
		for _, s := range byRun[id] {
			a.addValue(run, s.Name, s.Unit, s.Value)
		}
	}
	return nil
}

// finish summarises every group and hands it to its family.
func (a *accumulator) finish() {
	r := a.r
	// In key order: finishing a group may add notes, which must come in
	// the same order every time.
	for _, k := range slices.SortedFunc(maps.Keys(a.groups), func(x, y groupKey) int {
		return cmp.Or(cmp.Compare(x.family, y.family), cmp.Compare(x.metric, y.metric), cmp.Compare(x.split, y.split))
	}) {
		g := a.groups[k]
		r.finishSizeGroup(g)
		f := a.family(g.family)
		f.groups = append(f.groups, g)
	}
	for _, g := range a.matrices {
		g.finish()
		f := a.family(g.family)
		f.matrices = append(f.matrices, g)
	}
	for _, d := range a.values {
		v := d.row
		v.Median = median(d.data)
		v.Min, v.Max = slices.Min(d.data), slices.Max(d.data)
		v.N = len(d.data)
		v.Runs = slices.Sorted(maps.Keys(d.runs))
		if len(d.data) == len(v.Runs) {
			v.RunValues = d.data
		}
		f := a.family(v.Family)
		f.values = append(f.values, v)
	}
	for k, byCfg := range a.scaling {
		f := a.family(k.family)
		f.scaling = append(f.scaling, r.scalingGroup(k.family, k.metric, k.unit, byCfg))
	}
}

// order is the families with something to show, in the report's order:
// point-to-point curves first, then collectives, node-pair matrices and
// HPL, as the articles go from the link up to the whole machine; within
// each, bandwidth before latency, then by metric and configuration.
func (a *accumulator) order() []*familyResult {
	r := a.r
	names := slices.Sorted(maps.Keys(a.fams))
	rank := func(f *familyResult) int {
		switch {
		case len(f.groups) > 0 && !f.collective:
			return 0
		case len(f.groups) > 0:
			return 1
		case len(f.matrices) > 0:
			return 2
		case len(f.hpl) > 0:
			return 3
		}
		return 4
	}
	sort.SliceStable(names, func(i, j int) bool { return rank(a.fams[names[i]]) < rank(a.fams[names[j]]) })
	var out []*familyResult
	for _, name := range names {
		f := a.fams[name]
		slices.SortFunc(f.groups, func(a, b *sizeGroup) int {
			// KindBandwidth sorts before KindLatency, the only other kind:
			// bandwidth first, as the articles do.
			return cmp.Or(cmp.Compare(a.kind, b.kind), cmp.Compare(a.metric, b.metric), cmp.Compare(a.split, b.split))
		})
		slices.SortFunc(f.matrices, func(a, b *matrixGroup) int {
			return cmp.Or(cmp.Compare(a.metric, b.metric), cmp.Compare(r.configs.index[a.config], r.configs.index[b.config]))
		})
		slices.SortStableFunc(f.values, func(a, b ValueRow) int {
			return cmp.Or(cmp.Compare(a.Metric, b.Metric), cmp.Compare(r.configs.index[a.Config], r.configs.index[b.Config]), cmp.Compare(a.Unit, b.Unit))
		})
		slices.SortFunc(f.scaling, func(a, b *scalingGroup) int {
			return cmp.Or(cmp.Compare(a.what, b.what), cmp.Compare(a.unit, b.unit))
		})
		r.addScaling(f)
		if len(f.groups)+len(f.matrices)+len(f.hpl)+len(f.values)+len(f.scaling) > 0 {
			out = append(out, f)
		}
	}
	return out
}

// notes says what the analysis left out.
func (a *accumulator) notes() {
	r := a.r
	if len(a.unknownRun) > 0 {
		n := 0
		for _, c := range a.unknownRun {
			n += c
		}
		r.notef("%d samples or scalars belong to run%s %s, which %s not in the report's runs",
			n, results.Plural(len(a.unknownRun)), runIDs(slices.Collect(maps.Keys(a.unknownRun))), isAre(len(a.unknownRun)))
	}
	if len(a.badRuns) > 0 {
		r.notef("the samples of %d failed or invalid run%s (%s) are not plotted or summarised",
			len(a.badRuns), results.Plural(len(a.badRuns)), runIDs(slices.Collect(maps.Keys(a.badRuns))))
	}
	for _, what := range slices.Sorted(maps.Keys(a.notShown)) {
		r.notef("not plotted: %s, %d samples", what, a.notShown[what])
	}
}

// configOrder sorts configuration names in colour order.
func (r *Report) configOrder(names []string) []string {
	sort.SliceStable(names, func(i, j int) bool { return r.configs.index[names[i]] < r.configs.index[names[j]] })
	return names
}

// finishSizeGroup turns a group's samples into series, in the report's
// configuration order, and summarises them.
func (r *Report) finishSizeGroup(g *sizeGroup) {
	keys := make([]seriesKey, 0, len(g.raw))
	ranksOfConfig := map[string]map[int]bool{}
	allRanks := map[int]bool{}
	for k := range g.raw {
		keys = append(keys, k)
		addToSet(ranksOfConfig, k.config, k.ranks)
		allRanks[k.ranks] = true
	}
	slices.SortFunc(keys, func(a, b seriesKey) int {
		return cmp.Or(cmp.Compare(r.configs.index[a.config], r.configs.index[b.config]), cmp.Compare(a.ranks, b.ranks))
	})
	if len(allRanks) == 1 {
		for n := range allRanks {
			g.ranks = n
		}
	}
	for _, k := range keys {
		byX := g.raw[k]
		s := Series{Config: k.config, Color: r.configs.style(k.config).Color}
		// The process count goes in the legend when it is what tells two
		// lines apart: several counts of one configuration, or (for
		// collectives, whose latency depends on it) counts that differ
		// between configurations.
		if len(ranksOfConfig[k.config]) > 1 || (g.collective && len(allRanks) > 1) {
			s.Ranks = k.ranks
		}
		for _, x := range slices.Sorted(maps.Keys(byX)) {
			p := point(x, byX[x])
			p.Runs, p.RunValues, p.RunP50 = perRun(g.rawRuns[k][x], byX[x], g.rawP50[k][x])
			s.Points = append(s.Points, p)
		}
		s.Runs = slices.Sorted(maps.Keys(g.ids[k]))
		l := r.seriesLink(s.Runs)
		s.LinkRate, s.Local = l.rate, l.local
		g.series = append(g.series, s)
	}
	g.raw, g.ids, g.rawRuns, g.rawP50 = nil, nil, nil, nil
	switch g.kind {
	case KindBandwidth:
		g.bandwidth = summariseBandwidth(g.series)
		// One direction of one link cannot beat its rate (both directions
		// or several pairs at once can): above it, the rate or the path
		// is not what the reader is told.
		for _, b := range g.bandwidth {
			if g.metric == "bandwidth" && b.PercentOfLink > 100 {
				r.notef("%s: %s peaked at %s MB/s, %s%% of the %s link rate it was given: the rate is wrong for this configuration (set --link-rate or a link_rate label), or the traffic did not cross that link (loopback, shared memory, a faster fabric).",
					g.title(), b.Config, formatValue(b.Peak), formatPercent(b.PercentOfLink), formatRate(b.LinkRate))
			}
		}
	case KindLatency:
		g.latency = summariseLatency(g.series)
	}
}

// perRun sorts the samples at one size by run: the runs, sorted, and each
// run's value there (the median of its samples: repeats within a run) and,
// when every sample has one, its median of their own medians (p50s, NaN
// for none).
func perRun(runs []int64, values, p50s []float64) (ids []int64, vals, meds []float64) {
	byRun := map[int64][]int{}
	for i, id := range runs {
		byRun[id] = append(byRun[id], i)
	}
	ids = slices.Sorted(maps.Keys(byRun))
	vals = make([]float64, len(ids))
	meds = make([]float64, len(ids))
	haveP50 := len(p50s) == len(values)
	for k, id := range ids {
		var vs, ps []float64
		for _, i := range byRun[id] {
			vs = append(vs, values[i])
			if haveP50 {
				if math.IsNaN(p50s[i]) {
					haveP50 = false
				}
				ps = append(ps, p50s[i])
			}
		}
		vals[k] = median(vs)
		if haveP50 {
			meds[k] = median(ps)
		}
	}
	if !haveP50 {
		meds = nil
	}
	return ids, vals, meds
}

// addScaling adds, for a family whose runs of one configuration used
// several process counts, its key figure against the count: peak
// bandwidth, latency at the smallest size, HPL's Gflops.
func (r *Report) addScaling(f *familyResult) {
	type keyed struct {
		what, unit string
		pts        byConfig // config -> ranks -> values
	}
	var out []keyed
	for _, g := range f.groups {
		k := keyed{unit: figureUnit(g.kind), pts: byConfig{}}
		switch g.kind {
		case KindBandwidth:
			k.what = "peak " + g.metric
		case KindLatency:
			k.what = g.metric + " at the smallest size"
		}
		for i, s := range g.series {
			if s.Ranks == 0 && g.ranks == 0 {
				continue
			}
			n := s.Ranks
			if n == 0 {
				n = g.ranks
			}
			var v float64
			if g.kind == KindBandwidth {
				v = g.bandwidth[i].Peak
			} else {
				v = g.latency[i].Smallest
			}
			k.pts.add(s.Config, float64(n), v)
		}
		out = append(out, k)
	}
	if len(f.hpl) > 0 {
		k := keyed{what: "HPL Gflops (valid runs)", unit: "Gflops", pts: byConfig{}}
		for _, row := range f.hpl {
			n := row.P * row.Q
			if !row.Valid || n == 0 {
				continue
			}
			k.pts.add(row.Config, float64(n), row.Gflops)
		}
		out = append(out, k)
	}
	for _, k := range out {
		varies := false
		for _, byN := range k.pts {
			varies = varies || len(byN) > 1
		}
		if varies {
			f.scaling = append(f.scaling, r.scalingGroup(f.name, k.what, k.unit, k.pts))
		}
	}
}

// scalingGroup is a figure against the process count of the values
// byCfg holds: a series per configuration, in colour order.
func (r *Report) scalingGroup(family, what, unit string, byCfg byConfig) *scalingGroup {
	sg := &scalingGroup{family: family, what: what, unit: unit}
	for _, cfg := range r.configOrder(slices.Sorted(maps.Keys(byCfg))) {
		s := Series{Config: cfg, Color: r.configs.style(cfg).Color}
		for _, n := range slices.Sorted(maps.Keys(byCfg[cfg])) {
			s.Points = append(s.Points, point(n, byCfg[cfg][n]))
		}
		sg.series = append(sg.series, s)
	}
	return sg
}

// BandwidthSummary is what a reader takes from one bandwidth curve.
type BandwidthSummary struct {
	Config string
	Ranks  int
	// Peak is the highest median bandwidth (MB/s), first reached at PeakAt
	// bytes.
	Peak, PeakAt float64
	// HalfPeakAt is N½: the smallest size reaching half the peak; 0 when
	// the curve has too few points to say.
	HalfPeakAt float64
	// Largest is the bandwidth at the largest size, LargestAt: below the
	// peak when the curve falls off.
	Largest, LargestAt float64
	// LinkRate is the link's theoretical rate (Gb/s) and PercentOfLink the
	// peak's share of it; both 0 when the rate is unknown or none applies.
	LinkRate, PercentOfLink float64
	// Local says why no link rate applies, as Series.Local does.
	Local string
	// Ratio is the peak over the best configuration's peak; 0 (not given)
	// unless both rest on repeated runs (ratioRuns).
	Ratio float64
	Runs  []int64
}

// ratioRuns is how many runs a configuration and the best one must each
// have before a table sets one against the other as a factor: a ratio of
// two single runs is a factor without spread, which no verdict of sbench
// would state.
const ratioRuns = 2

// setRatios sets out[i]'s ratio to value(i) over the best value (the
// highest, or the lowest when lower is better), where that configuration
// and the best each rest on ratioRuns runs. value(i) = 0 has no ratio.
func setRatios(n int, value func(int) float64, runs func(int) int, lowerBetter bool, set func(int, float64)) {
	best := -1
	for i := range n {
		if v := value(i); v > 0 && (best < 0 || (lowerBetter && v < value(best)) || (!lowerBetter && v > value(best))) {
			best = i
		}
	}
	if best < 0 || runs(best) < ratioRuns {
		return
	}
	for i := range n {
		if value(i) > 0 && runs(i) >= ratioRuns {
			set(i, value(i)/value(best))
		}
	}
}

func summariseBandwidth(series []Series) []BandwidthSummary {
	out := make([]BandwidthSummary, len(series))
	for i, s := range series {
		b := BandwidthSummary{Config: s.Config, Ranks: s.Ranks, Runs: s.Runs, LinkRate: s.LinkRate, Local: s.Local}
		b.Peak, b.PeakAt = peakOf(s.Points)
		last := s.Points[len(s.Points)-1]
		b.Largest, b.LargestAt = last.Y, last.X
		// N½ is known only when the curve starts below half its peak: a
		// table that begins at 1.5 MiB (as the articles cut NetPIPE's) says
		// nothing about where half the peak is reached.
		if len(s.Points) >= 3 && b.Peak > 0 && s.Points[0].Y < b.Peak/2 {
			for _, p := range s.Points {
				if p.Y >= b.Peak/2 {
					b.HalfPeakAt = p.X
					break
				}
			}
		}
		if b.LinkRate > 0 {
			b.PercentOfLink = 100 * b.Peak / (b.LinkRate * 125)
		}
		out[i] = b
	}
	setRatios(len(out), func(i int) float64 { return out[i].Peak }, func(i int) int { return len(out[i].Runs) }, false,
		func(i int, r float64) { out[i].Ratio = r })
	return out
}

// LatencySummary is what a reader takes from one latency curve.
type LatencySummary struct {
	Config string
	Ranks  int
	// Smallest is the latency (µs) at the smallest size measured,
	// SmallestAt; Largest at the largest.
	Smallest, SmallestAt float64
	Largest, LargestAt   float64
	// AtCommon is the latency at CommonAt, the smallest size every
	// configuration of the figure measured: what they compare at.
	AtCommon, CommonAt float64
	// Ratio is AtCommon over the best configuration's; 0 (not given)
	// unless both rest on repeated runs (ratioRuns).
	Ratio float64
	Runs  []int64
}

func summariseLatency(series []Series) []LatencySummary {
	// The smallest size every series has, ignoring size 0 (osu_latency's
	// first row, which other tools do not measure).
	common := math.Inf(1)
	counts := map[float64]int{}
	for _, s := range series {
		for _, p := range s.Points {
			counts[p.X]++
		}
	}
	for x, n := range counts {
		if n == len(series) && x > 0 && x < common {
			common = x
		}
	}
	out := make([]LatencySummary, len(series))
	for i, s := range series {
		l := LatencySummary{Config: s.Config, Ranks: s.Ranks, Runs: s.Runs}
		first, last := s.Points[0], s.Points[len(s.Points)-1]
		l.Smallest, l.SmallestAt = first.Y, first.X
		l.Largest, l.LargestAt = last.Y, last.X
		if !math.IsInf(common, 1) {
			for _, p := range s.Points {
				if p.X == common {
					l.AtCommon, l.CommonAt = p.Y, p.X
				}
			}
		}
		out[i] = l
	}
	setRatios(len(out), func(i int) float64 { return out[i].AtCommon }, func(i int) int { return len(out[i].Runs) }, true,
		func(i int, r float64) { out[i].Ratio = r })
	return out
}

// peakOf returns the highest value and the smallest size it is reached at.
func peakOf(pts []Point) (peak, at float64) {
	for i, p := range pts {
		if i == 0 || p.Y > peak {
			peak, at = p.Y, p.X
		}
	}
	return peak, at
}

// Summary is every number a benchmark's tables show: what compare, history
// or a script can take from a report without reading the PDF.
type Summary struct {
	Benchmark string
	// Bandwidth and Latency are keyed by metric, as the samples name it;
	// in the family view, followed by the figure's split: "latency
	// (variant=intra)".
	Bandwidth map[string][]BandwidthSummary
	Latency   map[string][]LatencySummary
	Matrices  []MatrixSummary
	HPL       []HPLRow
	Values    []ValueRow
}

// Summaries returns the summaries of every benchmark, in the report's order.
func (r *Report) Summaries() []Summary {
	out := make([]Summary, 0, len(r.families))
	for _, f := range r.families {
		s := Summary{Benchmark: f.name, Bandwidth: map[string][]BandwidthSummary{}, Latency: map[string][]LatencySummary{},
			HPL: append([]HPLRow(nil), f.hpl...), Values: append([]ValueRow(nil), f.values...)}
		for _, g := range f.groups {
			if len(g.bandwidth) > 0 {
				s.Bandwidth[g.metricLabel()] = append([]BandwidthSummary(nil), g.bandwidth...)
			}
			if len(g.latency) > 0 {
				s.Latency[g.metricLabel()] = append([]LatencySummary(nil), g.latency...)
			}
		}
		for _, m := range f.matrices {
			s.Matrices = append(s.Matrices, m.summary)
		}
		out = append(out, s)
	}
	return out
}
