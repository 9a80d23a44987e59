// Package judge judges acceptance references (expect.Ref) on the runs of
// the archive: per configuration, the median of the runs' values at the
// expectation's point against its bound, resolved from the runs' link
// rate, their nodes' Rpeak or a baseline's median. sbench check prints
// its verdicts; the reports and the site draw them.
package judge

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/sbench/sbench/compare"
	"github.com/sbench/sbench/expect"
	"github.com/sbench/sbench/results"
	"github.com/sbench/sbench/store"
)

// Judge judges each expectation on the ok runs of its benchmark that sel
// selects (the zero filter: every run), narrowed by the expectation's
// where and system. An expectation gives one verdict per configuration of
// its runs (they are told apart by Verdict.Config), or one NO DATA.
func Judge(ctx context.Context, db *store.DB, refs []expect.Ref, sel store.Filter) ([]expect.Verdict, error) {
	var out []expect.Verdict
	for _, ref := range refs {
		vs, err := judgeRef(ctx, db, ref, sel)
		if err != nil {
			return nil, fmt.Errorf("judge %s: %w", ref.Title(), err)
		}
		out = append(out, vs...)
	}
	return out, nil
}

// Set is expectations that judge the runs of one campaign (all runs when
// Campaign is ""): a campaign's own, or a site profile's.
type Set struct {
	Campaign string
	Refs     []expect.Ref
}

// JudgeSets judges each set on its campaign's runs that sel selects.
func JudgeSets(ctx context.Context, db *store.DB, sets []Set, sel store.Filter) ([]expect.Verdict, error) {
	var out []expect.Verdict
	for _, s := range sets {
		f := sel
		if s.Campaign != "" {
			f = f.And(store.Filter{Campaign: s.Campaign})
		}
		vs, err := Judge(ctx, db, s.Refs, f)
		if err != nil {
			return nil, err
		}
		for i := range vs {
			vs[i].Campaign = s.Campaign
		}
		out = append(out, vs...)
	}
	return out, nil
}

// Recorded is the expectations the archive recorded for the campaigns of
// runs (store.SetExpectations: the last submission or local run of each).
func Recorded(ctx context.Context, db *store.DB, runs []store.Run) ([]Set, error) {
	campaigns := map[string]bool{}
	for i := range runs {
		campaigns[runs[i].Campaign] = true
	}
	recorded, err := db.Expectations(ctx, "")
	if err != nil {
		return nil, err
	}
	var sets []Set
	for _, r := range recorded {
		if campaigns[r.Campaign] {
			sets = append(sets, Set{r.Campaign, r.Refs})
		}
	}
	return sets, nil
}

// parsed is an expectation read for judging.
type parsed struct {
	ref   expect.Ref
	bound expect.Bound
	point expect.Point
	where map[string]string
}

func noData(ref expect.Ref, format string, args ...any) expect.Verdict {
	return expect.Verdict{Ref: ref, Status: expect.NoData, Runs: []int64{}, Note: fmt.Sprintf(format, args...)}
}

func judgeRef(ctx context.Context, db *store.DB, ref expect.Ref, sel store.Filter) ([]expect.Verdict, error) {
	if err := ref.Check(); err != nil {
		return []expect.Verdict{noData(ref, "%v", err)}, nil
	}
	p := parsed{ref: ref}
	p.bound, _ = expect.ParseBound(ref.Bound)
	p.point, _ = expect.ParseAt(ref.At)
	p.where, _ = expect.ParseWhere(ref.Where)
	f := sel.And(store.Filter{Benchmarks: []string{ref.Benchmark}, Statuses: []results.Status{results.StatusOK}, Labels: p.where})
	if ref.System != "" {
		f = f.And(store.Filter{Systems: []string{ref.System}})
	}
	groups, err := measure(ctx, db, f, p)
	if err != nil {
		return nil, err
	}
	if len(groups) == 0 {
		return []expect.Verdict{noData(ref, "no ok run of benchmark %s%s in the selection", ref.Benchmark, whereText(ref))}, nil
	}
	if !slices.ContainsFunc(groups, func(g *group) bool { return g.note == "" }) {
		// No configuration measured it: one NO DATA, not one per
		// configuration.
		return []expect.Verdict{noData(ref, "no run measured %s%s", ref.Metric, atText(ref.At))}, nil
	}
	var out []expect.Verdict
	for _, g := range groups {
		v := expect.Verdict{Ref: ref, Runs: []int64{}}
		if len(groups) > 1 {
			v.Config = g.config.String()
		}
		if g.note != "" {
			v.Status, v.Note = expect.NoData, g.note
			out = append(out, v)
			continue
		}
		v.Unit, v.X, v.N = g.unit, g.x, len(g.runs)
		vals := make([]float64, len(g.runs))
		for i, r := range g.runs {
			v.Runs, vals[i] = append(v.Runs, r.run.ID), r.value
		}
		v.Value = compare.Median(vals)
		if err := resolve(ctx, db, p, g, &v); err != nil {
			return nil, err
		}
		if v.Status == "" {
			v.Status = expect.Fail
			if p.bound.Holds(v.Value, v.Limit) {
				v.Status = expect.Pass
			}
			if v.N == 1 {
				v.Note = expect.SingleRunNote
			}
		}
		out = append(out, v)
	}
	return out, nil
}

func whereText(ref expect.Ref) string {
	var s []string
	if ref.Where != "" {
		s = append(s, ref.Where)
	}
	if ref.System != "" {
		s = append(s, "system "+ref.System)
	}
	if len(s) == 0 {
		return ""
	}
	return " (" + strings.Join(s, ", ") + ")"
}

// runValue is one run's value at the point: the median of its samples
// there (repeats, rank pairs).
type runValue struct {
	run   *store.Run
	value float64
}

// group is the runs of one configuration and their values.
type group struct {
	config store.Config // without the campaign
	runs   []runValue
	unit   string
	x      *float64
	// note says why the configuration has no value (its runs measured the
	// metric at other points).
	note string
}

// measure reads the runs f selects and their values of the metric at
// the point, per configuration (in the order of their first run).
func measure(ctx context.Context, db *store.DB, f store.Filter, p parsed) ([]*group, error) {
	runs, err := db.Runs(ctx, f)
	if err != nil || len(runs) == 0 {
		return nil, err
	}
	ids := make([]int64, len(runs))
	for i := range runs {
		ids[i] = runs[i].ID
	}
	samples, err := db.Samples(ctx, store.Filter{RunIDs: ids})
	if err != nil {
		return nil, err
	}
	byRun := map[int64][]store.Sample{}
	for _, s := range samples {
		if s.Metric == p.ref.Metric {
			byRun[s.RunID] = append(byRun[s.RunID], s)
		}
	}
	// A tool's figures that are scalars (xhpl's gflops, HPCC's summary)
	// are judged as samples without an x, for the runs that have no
	// sample of that name.
	scalars, err := db.Scalars(ctx, store.Filter{RunIDs: ids})
	if err != nil {
		return nil, err
	}
	fromScalars := map[int64]bool{}
	for _, sc := range scalars {
		if sc.Name == p.ref.Metric && (byRun[sc.RunID] == nil || fromScalars[sc.RunID]) {
			fromScalars[sc.RunID] = true
			byRun[sc.RunID] = append(byRun[sc.RunID], store.Sample{RunID: sc.RunID, Sample: results.Sample{Metric: sc.Name, Unit: sc.Unit, Value: sc.Value}})
		}
	}
	var groups []*group
	index := map[string]*group{}
	for i := range runs {
		r := &runs[i]
		cfg := store.ConfigOf(r).Without(store.AttrCampaign)
		g := index[cfg.Key()]
		if g == nil {
			g = &group{config: cfg}
			index[cfg.Key()] = g
			groups = append(groups, g)
		}
		ss := byRun[r.ID]
		if len(ss) == 0 {
			continue
		}
		v, x, ok := pointValue(ss, p.point, p.bound.Higher())
		if !ok {
			continue
		}
		g.runs = append(g.runs, runValue{run: r, value: v})
		g.unit = ss[0].Unit
		if p.point.Best {
			g.x = nil // each run's own best x
		} else {
			g.x = x
		}
	}
	for _, g := range groups {
		if len(g.runs) == 0 {
			g.note = fmt.Sprintf("no run of this configuration measured %s%s", p.ref.Metric, atText(p.ref.At))
		}
	}
	return groups, nil
}

func atText(at string) string {
	if at == "" {
		return " (with no x; give at for a metric measured at several x)"
	}
	return " at " + at
}

// pointValue is a run's value at the point: the median of its samples at
// x; at best, the best of its medians per x (the highest for a bound from
// below, else the lowest); with no point, of its samples without an x.
func pointValue(ss []store.Sample, pt expect.Point, higher bool) (float64, *float64, bool) {
	byX := map[float64][]float64{}
	var noX []float64
	for _, s := range ss {
		if s.X == nil {
			noX = append(noX, s.Value)
		} else {
			byX[*s.X] = append(byX[*s.X], s.Value)
		}
	}
	switch {
	case pt.X != nil:
		for x, vals := range byX {
			if sameX(x, *pt.X) {
				return compare.Median(vals), &x, true
			}
		}
		return 0, nil, false
	case pt.Best:
		best, bestX, found := 0.0, 0.0, false
		for _, x := range slices.Sorted(maps.Keys(byX)) {
			m := compare.Median(byX[x])
			if !found || (higher && m > best) || (!higher && m < best) {
				best, bestX, found = m, x, true
			}
		}
		if !found && len(noX) > 0 {
			return compare.Median(noX), nil, true
		}
		return best, &bestX, found
	}
	if len(noX) == 0 {
		return 0, nil, false
	}
	return compare.Median(noX), nil, true
}

func sameX(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b)) }

// resolve sets the verdict's limit and where it came from; a reference
// that is unknown makes it NO DATA.
func resolve(ctx context.Context, db *store.DB, p parsed, g *group, v *expect.Verdict) error {
	b := p.bound
	margin := 1 + b.Margin
	switch b.Kind {
	case expect.Absolute:
		limit, err := expect.Convert(b.Value, b.Unit, g.unit)
		if err != nil {
			v.Status, v.Note = expect.NoData, err.Error()
			return nil
		}
		v.Limit, v.LimitFrom = limit, "absolute"
		if b.Unit != "" && b.Unit != g.unit {
			v.LimitFrom = "absolute: " + expect.FormatValue(b.Value, b.Unit)
		}
	case expect.LinkRate:
		rate, from, note := runsLink(g.runs)
		if note != "" {
			v.Status, v.Note = expect.NoData, note
			return nil
		}
		return setLimit(v, b.Value*rate*margin, "Gb/s", fmt.Sprintf("%s × link rate %s (%s)%s", factor(b.Value), expect.FormatValue(rate, "Gb/s"), from, marginText(b)))
	case expect.Rpeak:
		peaks := make([]float64, len(g.runs))
		hows := map[string]bool{}
		for i, r := range g.runs {
			g, how := RunRpeak(r.run)
			if g == 0 {
				v.Status, v.Note = expect.NoData, fmt.Sprintf("run %d: %s (give the runs an rpeak label)", r.run.ID, how)
				return nil
			}
			peaks[i], hows[how] = g, true
		}
		rp := compare.Median(peaks)
		how := "from the nodes' provenance"
		if len(hows) == 1 {
			for h := range hows {
				how = h
			}
		}
		return setLimit(v, b.Value*rp*margin, "Gflops", fmt.Sprintf("%s × Rpeak %s (%s)%s", factor(b.Value), expect.FormatValue(rp, "Gflops"), how, marginText(b)))
	case expect.Baseline:
		return baselineLimit(ctx, db, p, g, v)
	}
	return nil
}

func setLimit(v *expect.Verdict, limit float64, unit, from string) error {
	l, err := expect.Convert(limit, unit, v.Unit)
	if err != nil {
		v.Status, v.Note = expect.NoData, err.Error()
		return nil
	}
	v.Limit, v.LimitFrom = l, from
	return nil
}

func factor(f float64) string { return expect.FormatValue(f, "") }

func marginText(b expect.Bound) string {
	if b.Margin == 0 {
		return ""
	}
	sign := "+"
	if b.Margin < 0 {
		sign = "−"
	}
	return fmt.Sprintf(" %s %s%%", sign, expect.FormatValue(math.Abs(b.Margin)*100, ""))
}

// runsLink is the link rate the runs share: the lowest of theirs (Gb/s)
// and where it came from; a note when one run's is unknown.
func runsLink(runs []runValue) (rate float64, from, note string) {
	labelled := 0
	for _, r := range runs {
		g, local := RunLink(r.run)
		if g == 0 {
			why := "its provenance names no link"
			if local != "" {
				why = "its traffic stayed on " + map[string]string{LocalLoopback: "loopback", LocalOneMachine: "one machine"}[local]
			}
			return 0, "", fmt.Sprintf("link rate of run %d unknown: %s (give the runs a link_rate label)", r.run.ID, why)
		}
		if _, ok := r.run.Labels["link_rate"]; ok {
			labelled++
		}
		if rate == 0 || g < rate {
			rate = g
		}
	}
	switch labelled {
	case len(runs):
		from = "label link_rate"
	case 0:
		from = "provenance"
	default:
		from = "label link_rate and provenance"
	}
	return rate, from, ""
}

// baselineLimit is the median of the baseline's runs of the
// configuration (the one configuration it has, if none matches).
func baselineLimit(ctx context.Context, db *store.DB, p parsed, g *group, v *expect.Verdict) error {
	name := p.bound.Baseline
	bl, err := db.Baseline(ctx, name)
	if errors.Is(err, store.ErrNotFound) {
		v.Status, v.Note = expect.NoData, fmt.Sprintf("no baseline %s in the archive (sbench baseline set %s SELECTOR)", name, name)
		return nil
	}
	if err != nil {
		return err
	}
	f := store.Filter{RunIDs: bl.RunIDs, Benchmarks: []string{p.ref.Benchmark}, Statuses: []results.Status{results.StatusOK}, Labels: p.where}
	groups, err := measure(ctx, db, f, p)
	if err != nil {
		return err
	}
	var match *group
	for _, bg := range groups {
		if bg.config.Key() == g.config.Key() && bg.note == "" {
			match = bg
		}
	}
	if match == nil && len(groups) == 1 && groups[0].note == "" {
		match = groups[0]
	}
	if match == nil {
		v.Status, v.Note = expect.NoData, fmt.Sprintf("baseline %s has no run of this configuration measuring %s%s", name, p.ref.Metric, atText(p.ref.At))
		return nil
	}
	vals, ids := make([]float64, len(match.runs)), make([]int64, len(match.runs))
	for i, r := range match.runs {
		vals[i], ids[i] = r.value, r.run.ID
	}
	med := compare.Median(vals)
	return setLimit(v, med*(1+p.bound.Margin), match.unit, fmt.Sprintf("baseline %s: median %s of %d run(s) (%s)%s",
		name, expect.FormatValue(med, match.unit), len(ids), store.FormatRunIDs(ids), marginText(p.bound)))
}
