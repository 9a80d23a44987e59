package site

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sbench/sbench/compare"
	"github.com/sbench/sbench/results"
	"github.com/sbench/sbench/store"
)

// group is the runs of one benchmark and one configuration, as sbench
// history follows them: campaigns are not configurations, a history
// follows the same measurement across submissions.
type group struct {
	slug      string
	benchmark string
	cluster   string
	config    store.Config
	variant   string
	runs      []store.Run // in the archive's order: start time, then id
}

func groupRuns(runs []store.Run) []*group {
	by := map[string]*group{}
	for i := range runs {
		r := &runs[i]
		cfg := store.ConfigOf(r).Without(store.AttrCampaign)
		key := r.Benchmark + "\x00" + cfg.Key()
		g := by[key]
		if g == nil {
			sum := sha256.Sum256([]byte(key))
			cluster := r.System // the system label, else the Slurm cluster the runner recorded
			g = &group{benchmark: r.Benchmark, cluster: cluster, config: cfg, variant: r.Variant,
				slug: slug(strings.Trim(cluster+"-"+r.Benchmark, "-")) + "-" + hex.EncodeToString(sum[:5])}
			by[key] = g
		}
		g.runs = append(g.runs, *r)
	}
	out := slices.Collect(maps.Values(by))
	slices.SortFunc(out, func(a, b *group) int { return cmp.Compare(a.slug, b.slug) })
	return out
}

// attrs are the configuration's attributes but the cluster.
func (g *group) attrs() []store.Attr {
	var out []store.Attr
	for _, a := range g.config {
		if a.Kind != store.AttrLabel || a.Key != "system" {
			out = append(out, a)
		}
	}
	return out
}

// shortNames names each history of the index by what tells it apart from
// the others of its benchmark: the attributes whose values differ, or only
// the variant when it decides all of them ("ppn=2" for variant=ppn=2,
// ppn=2, processes=4).
func shortNames(sums []summary) map[string]string {
	byBench := map[string][]summary{}
	for _, s := range sums {
		byBench[s.Benchmark] = append(byBench[s.Benchmark], s)
	}
	out := map[string]string{}
	for _, ss := range byBench {
		values := map[string]map[string]bool{}
		for _, s := range ss {
			for _, a := range s.Attrs {
				if values[a.Key] == nil {
					values[a.Key] = map[string]bool{}
				}
				values[a.Key][a.Value] = true
			}
		}
		lookup := func(s summary, key string) string {
			for _, a := range s.Attrs {
				if a.Key == key {
					return a.Value
				}
			}
			return "\x00"
		}
		var varying []string
		for k, vs := range values {
			missing := slices.ContainsFunc(ss, func(s summary) bool { return lookup(s, k) == "\x00" })
			if len(vs) > 1 || missing {
				varying = append(varying, k)
			}
		}
		slices.Sort(varying)
		if _, ok := values[store.AttrVariant]; ok && slices.Contains(varying, store.AttrVariant) {
			decides := true
			seen := map[string]string{}
			for _, s := range ss {
				v := lookup(s, store.AttrVariant)
				var rest []string
				for _, k := range varying {
					rest = append(rest, lookup(s, k))
				}
				r := strings.Join(rest, "\x01")
				if prev, ok := seen[v]; ok && prev != r {
					decides = false
				}
				seen[v] = r
			}
			if decides {
				varying = []string{store.AttrVariant}
			}
		}
		for _, s := range ss {
			var parts []string
			for _, k := range varying {
				v := lookup(s, k)
				switch {
				case v == "\x00":
				case k == store.AttrVariant && len(varying) == 1:
					parts = append(parts, v)
				default:
					parts = append(parts, k+"="+v)
				}
			}
			name := strings.Join(parts, ", ")
			if name == "" {
				name = "all runs"
			}
			out[s.Page] = name
		}
	}
	return out
}

// configName is what the site calls a group's configuration: its
// attributes but the cluster, which has its own column.
func (g *group) configName() string {
	var parts []string
	for _, a := range g.attrs() {
		parts = append(parts, a.String())
	}
	if len(parts) == 0 {
		return "all runs"
	}
	return strings.Join(parts, ", ")
}

// key is what the group's pages are made from: its runs as they are
// (content hash, status, time) and history's settings.
func (b *builder) groupKey(g *group) string {
	parts := []string{"group", g.slug, strconv.FormatBool(b.o.AllSizes), strconv.FormatFloat(b.o.Threshold, 'g', -1, 64), strconv.Itoa(b.o.Window),
		strconv.FormatFloat(b.o.Alpha, 'g', -1, 64)}
	for _, r := range g.runs {
		parts = append(parts, strconv.FormatInt(r.ID, 10), r.Hash, string(r.Status), r.Error, r.Start.Format(time.RFC3339Nano),
			r.IngestedAt.Format(time.RFC3339Nano), r.JobID, r.Step)
	}
	return b.keyOf(parts...)
}

// group makes the history pages of g — one per metric — unless they are
// made from what they were made from last time.
func (b *builder) group(g *group) (groupEntry, error) {
	key := b.groupKey(g)
	if old, ok := b.old.Groups[g.slug]; ok && old.Key == key && b.old.Format == format {
		fresh := true
		for _, s := range old.Pages {
			fresh = fresh && b.fresh(s.Page, key)
		}
		if fresh {
			for _, s := range old.Pages {
				b.keep(s.Page)
			}
			b.mu.Lock()
			b.new.Groups[g.slug] = old
			b.mu.Unlock()
			return old, nil
		}
	}
	ids := make([]int64, len(g.runs))
	for i, r := range g.runs {
		ids[i] = r.ID
	}
	// Only the samples of the sizes followed are read, a tenth of a
	// group's at the key sizes; which sizes there are is known from last
	// time for the runs that were there (a new run rarely brings a size).
	axes, err := b.axes(g, ids)
	if err != nil {
		return groupEntry{}, err
	}
	scalars, err := b.db.Scalars(b.ctx, store.Filter{RunIDs: ids})
	if err != nil {
		return groupEntry{}, err
	}
	byMetric := map[string][]store.SampleAxis{}
	for _, a := range axes {
		byMetric[a.Metric] = append(byMetric[a.Metric], a)
	}
	// A scalar is a sample with no x, for a history (as compare.LoadHistory
	// has it).
	loaded := map[string][]store.Sample{}
	for _, s := range scalars {
		loaded[s.Name] = append(loaded[s.Name], store.Sample{RunID: s.RunID, Sample: results.Sample{Metric: s.Name, Unit: s.Unit, Value: s.Value}})
		if _, ok := byMetric[s.Name]; !ok {
			byMetric[s.Name] = []store.SampleAxis{{Metric: s.Name}}
		}
	}
	follow := map[string][]*float64{}
	var wanted []store.SampleAxis
	for metric, as := range byMetric {
		if results.AltUnitMetric(metric) {
			continue // the same measurement as another metric, in another unit
		}
		follow[metric] = b.sizesFollowed(metric, as)
		for _, x := range follow[metric] {
			wanted = append(wanted, store.SampleAxis{Metric: metric, X: x})
		}
	}
	values, err := b.values(g, ids, wanted)
	if err != nil {
		return groupEntry{}, err
	}
	for _, v := range values {
		k := axisKey(v.Metric, v.X)
		loaded[k] = append(loaded[k], v.samples()...)
	}
	ge := groupEntry{Key: key, Runs: ids, Axes: axes, Values: values}
	for _, metric := range slices.Sorted(maps.Keys(follow)) {
		hs, err := b.histories(g, metric, follow[metric], loaded, len(byMetric[metric]))
		if err != nil {
			return groupEntry{}, err
		}
		if len(hs.all) == 0 {
			continue
		}
		page := "h/" + g.slug + "-" + slug(metric) + ".html"
		sum := hs.summary(g, page)
		hp, err := historyPage(g, metric, hs)
		if err != nil {
			return groupEntry{}, err
		}
		if err := b.write(page, key, hp); err != nil {
			return groupEntry{}, err
		}
		ge.Pages = append(ge.Pages, sum)
	}
	b.mu.Lock()
	b.new.Groups[g.slug] = ge
	b.mu.Unlock()
	return ge, nil
}

// metricHistories are the histories of one metric of a group: one per x
// built, and the key sizes whose charts the page draws.
type metricHistories struct {
	all  []*compare.History // by x, ascending; one with no x
	keys []*compare.History
	// sizes is the number of sizes measured, of which all has some or all.
	sizes int
}

// histories builds the history of metric at its key sizes (every size with
// Options.AllSizes), as sbench history --benchmark B --metric M --x X
// would for the group's configuration.
func (b *builder) histories(g *group, metric string, xs []*float64, loaded map[string][]store.Sample, sizes int) (metricHistories, error) {
	out := metricHistories{sizes: sizes}
	for _, x := range xs {
		ss := loaded[axisKey(metric, x)]
		if x == nil {
			ss = append(ss, loaded[metric]...) // scalars of that name
		}
		q := compare.HistoryQuery{Benchmark: g.benchmark, Metric: metric, X: x, Variant: g.variant,
			Window: b.o.Window, Alpha: b.o.Alpha, Threshold: b.o.Threshold, Permutations: compare.FamilyPermutations(len(xs), b.o.Alpha)}
		h, err := compare.BuildHistory(g.runs, ss, q)
		if errors.Is(err, compare.ErrNoData) {
			continue // no ok run measured it
		}
		if err != nil {
			return out, err
		}
		out.all = append(out.all, h)
	}
	// The page shows the steps of every size it follows at once: they are
	// one family, so that a page of twenty sizes does not show a step
	// that noise in one of them made.
	compare.HistoryFamily(out.all)
	var all []float64
	for _, x := range xs {
		if x != nil {
			all = append(all, *x)
		}
	}
	for _, k := range keySizes(metric, all) {
		for _, h := range out.all {
			if h.X != nil && *h.X == k {
				out.keys = append(out.keys, h)
			}
		}
	}
	if len(out.keys) == 0 {
		out.keys = out.all
	}
	return out, nil
}

// sizesFollowed are the x of metric whose history is built, ascending:
// none for samples with no x; the key sizes, or all with AllSizes.
func (b *builder) sizesFollowed(metric string, axes []store.SampleAxis) []*float64 {
	var xs []float64
	for _, a := range axes {
		if a.X != nil && !slices.Contains(xs, *a.X) {
			xs = append(xs, *a.X)
		}
	}
	if len(xs) == 0 {
		return []*float64{nil}
	}
	slices.Sort(xs)
	keys := keySizes(metric, xs)
	var out []*float64
	for _, x := range xs {
		if b.o.AllSizes || slices.Contains(keys, x) {
			out = append(out, &x)
		}
	}
	return out
}

func axisKey(metric string, x *float64) string {
	if x == nil {
		return metric + "\x00"
	}
	return metric + "\x00" + strconv.FormatFloat(*x, 'g', -1, 64)
}

// axisValues are the values of the samples on one axis, run by run: what
// a history is built from, kept in the manifest so that an update reads
// the samples of the new runs only.
type axisValues struct {
	Metric string      `json:"metric"`
	X      *float64    `json:"x,omitempty"`
	XUnit  string      `json:"x_unit,omitempty"`
	Unit   string      `json:"unit"`
	Runs   []int64     `json:"runs"`   // ascending
	Values [][]float64 `json:"values"` // per run, in the archive's order
}

// samples are the values as the archive's samples, in its order (run id,
// then repeat), which is what compare.BuildHistory reads of them.
func (a axisValues) samples() []store.Sample {
	var out []store.Sample
	for i, id := range a.Runs {
		for _, v := range a.Values[i] {
			out = append(out, store.Sample{RunID: id, Sample: results.Sample{Metric: a.Metric, Unit: a.Unit, X: a.X, XUnit: a.XUnit, Value: v}})
		}
	}
	return out
}

// values are the group's samples on the wanted axes: last time's for the
// runs that were there, read from the archive for the others, unless a
// run left the group (then all are read again).
func (b *builder) values(g *group, ids []int64, wanted []store.SampleAxis) ([]axisValues, error) {
	cached := map[string]axisValues{}
	var known []int64
	if old, ok := b.old.Groups[g.slug]; ok && b.old.Format == format && len(without(old.Runs, ids)) == 0 {
		for _, v := range old.Values {
			cached[axisKey(v.Metric, v.X)] = v
		}
		known = old.Runs
	}
	// One read for the axes every cached run has, of the new runs; one
	// for the axes that were not followed before, of every run.
	var fresh, all []store.SampleAxis
	for _, a := range wanted {
		if _, ok := cached[axisKey(a.Metric, a.X)]; ok {
			fresh = append(fresh, a)
		} else {
			all = append(all, a)
		}
	}
	added := without(ids, known)
	var samples []store.Sample
	if len(fresh) > 0 && len(added) > 0 {
		ss, err := b.db.SamplesAt(b.ctx, added, fresh)
		if err != nil {
			return nil, err
		}
		samples = ss
	}
	if len(all) > 0 {
		ss, err := b.db.SamplesAt(b.ctx, ids, all)
		if err != nil {
			return nil, err
		}
		samples = append(samples, ss...)
	}
	byAxis := map[string]map[int64][]float64{}
	units := map[string][2]string{}
	for _, s := range samples {
		k := axisKey(s.Metric, s.X)
		if byAxis[k] == nil {
			byAxis[k] = map[int64][]float64{}
			units[k] = [2]string{s.Unit, s.XUnit}
		}
		byAxis[k][s.RunID] = append(byAxis[k][s.RunID], s.Value)
	}
	in := map[int64]bool{}
	for _, id := range ids {
		in[id] = true
	}
	var out []axisValues
	for _, a := range wanted {
		k := axisKey(a.Metric, a.X)
		v := axisValues{Metric: a.Metric, X: a.X}
		per := map[int64][]float64{}
		if c, ok := cached[k]; ok {
			v.Unit, v.XUnit = c.Unit, c.XUnit
			for i, id := range c.Runs {
				if in[id] {
					per[id] = c.Values[i]
				}
			}
		}
		if u, ok := units[k]; ok && v.Unit == "" {
			v.Unit, v.XUnit = u[0], u[1]
		}
		for id, vs := range byAxis[k] {
			per[id] = vs
		}
		if len(per) == 0 {
			continue
		}
		v.Runs = slices.Sorted(maps.Keys(per))
		for _, id := range v.Runs {
			v.Values = append(v.Values, per[id])
		}
		out = append(out, v)
	}
	return out, nil
}

// without is ids, in order, less those in drop.
func without(ids, drop []int64) []int64 {
	in := make(map[int64]bool, len(drop))
	for _, id := range drop {
		in[id] = true
	}
	return slices.DeleteFunc(slices.Clone(ids), func(id int64) bool { return in[id] })
}

// axes are the metrics and sizes of the group's runs: last time's, and
// the new runs', unless a run left the group.
func (b *builder) axes(g *group, ids []int64) ([]store.SampleAxis, error) {
	old, ok := b.old.Groups[g.slug]
	if !ok || b.old.Format != format || len(old.Runs) == 0 {
		return b.db.SampleAxes(b.ctx, ids)
	}
	if len(without(old.Runs, ids)) > 0 {
		return b.db.SampleAxes(b.ctx, ids) // a run left: a size may have gone with it
	}
	added := without(ids, old.Runs)
	axes := slices.Clone(old.Axes)
	if len(added) == 0 {
		return axes, nil
	}
	more, err := b.db.SampleAxes(b.ctx, added)
	if err != nil {
		return nil, err
	}
	for _, a := range more {
		if !slices.ContainsFunc(axes, func(o store.SampleAxis) bool { return sameAxis(o, a) }) {
			axes = append(axes, a)
		}
	}
	return axes, nil
}

func sameAxis(a, b store.SampleAxis) bool {
	return a.Metric == b.Metric && a.XUnit == b.XUnit && (a.X == nil) == (b.X == nil) && (a.X == nil || *a.X == *b.X)
}

// keySizes are the sizes a reader looks at first, first first: for latency
// the smallest (the start-up cost; osu_latency's size 0 is no message)
// then the largest; for bandwidth and the rest the largest (where the
// link's rate is reached) then the smallest.
func keySizes(metric string, xs []float64) []float64 {
	if len(xs) <= 1 {
		return xs
	}
	first, last := xs[0], xs[len(xs)-1]
	if first == 0 && len(xs) > 2 {
		first = xs[1]
	}
	if compare.MetricKind(metric) == compare.KindLatency {
		return []float64{first, last}
	}
	return []float64{last, first}
}

// summary is the page's line on the index: the first key size's latest
// value and sparkline, and the steps at every size.
func (m metricHistories) summary(g *group, page string) summary {
	h := m.keys[0]
	last := h.Points[len(h.Points)-1]
	s := summary{Page: page, Cluster: g.cluster, Benchmark: g.benchmark, Metric: h.Metric, Config: g.configName(), Attrs: g.attrs(),
		Unit: h.Unit, Better: h.Better, X: h.X, XUnit: h.XUnit, Latest: last.Value, LatestRun: last.Run,
		LatestWhen: last.When, Outside: last.Outside, Runs: len(h.Points)}
	for _, p := range h.Points[max(0, len(h.Points)-sparkPoints):] {
		s.Spark = append(s.Spark, p.Value)
	}
	for _, h := range m.all {
		for _, c := range h.Changes {
			s.Changes = append(s.Changes, change{X: h.X, XUnit: h.XUnit, Run: c.Run, When: c.When, Delta: c.Delta,
				Change: string(c.Change), Provenance: provenanceText(c.Provenance)})
		}
	}
	slices.SortStableFunc(s.Changes, func(a, b change) int { return a.When.Compare(b.When) })
	return s
}

func provenanceText(ds []compare.Difference) string {
	var parts []string
	for _, d := range ds {
		parts = append(parts, d.Field+": "+d.Before+" → "+d.After)
	}
	return strings.Join(parts, "; ")
}

// slug makes s safe and readable as a file name.
func slug(s string) string {
	var b strings.Builder
	dash := false
	for _, c := range strings.ToLower(s) {
		ok := c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '.'
		if !ok {
			if !dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = true
			continue
		}
		b.WriteRune(c)
		dash = false
	}
	out := strings.Trim(b.String(), "-.")
	if len(out) > 60 {
		out = out[:60]
	}
	if out == "" {
		out = "x"
	}
	return out
}
