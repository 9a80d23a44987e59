package reports

import (
	"cmp"
	"maps"
	"slices"
	"strings"

	"github.com/sbench/sbench/compare"
	"github.com/sbench/sbench/store"
)

// The metric-family view (WithFamilies) draws the same measurement made by
// different benchmarks in one figure: osu_latency and the runner's latency
// kernel are both "latency against message size" of the point-to-point
// family, osu_allreduce and the allreduce kernel the allreduce family's.
//
// A figure's lines are then what measured them — the tool and its version
// (compare.ToolLabel) — and the figures of a family's metric are split by
// the configuration attributes that are not what differs: an attribute
// with a value that runs of two tools share (the intra and inter variants
// both tools ran) gives a figure per value; one whose every value belongs
// to a single tool (impl=native, impl=openmpi-tcp; the kernel's sizes
// parameter) goes with the tool, and is named in the legend only where it
// tells two lines of one tool apart.

// familyLine is where a run's samples of one metric go in the family
// view: the figure (split) and the line (name).
type familyLine struct {
	split, name string
}

// familyView holds, per metric family and metric, each run's line.
type familyView struct {
	lines map[[2]string]map[int64]familyLine
	// members are the benchmarks whose samples a family shows.
	members map[string]map[string]bool
}

// sampleFamily is the metric family a size-axis sample of run goes in, ""
// when the report draws it with its benchmark.
func (r *Report) sampleFamily(run *store.Run, metric, xunit string) string {
	if !r.opts.families {
		return ""
	}
	return compare.MetricFamily(run, metric, xunit)
}

// buildFamilyView decides the figures and lines of the family view, before
// the samples are sorted into them: what splits a figure depends on every
// run that measured its metric.
func (r *Report) buildFamilyView() error {
	fv := &familyView{lines: map[[2]string]map[int64]familyLine{}, members: map[string]map[string]bool{}}
	r.fview = fv
	if !r.opts.families {
		return nil
	}
	runs := map[[2]string]map[int64]bool{}
	err := r.src.EachSample(r.ctx, func(s store.Sample) error {
		run := r.byID[s.RunID]
		if run == nil || bad(run) || s.X == nil {
			return nil
		}
		fam := r.sampleFamily(run, s.Metric, s.XUnit) // "" unless a latency or bandwidth against size
		if fam == "" {
			return nil
		}
		addToSet(runs, [2]string{fam, s.Metric}, run.ID)
		addToSet(fv.members, fam, family(run))
		return nil
	})
	if err != nil {
		return err
	}
	keys := slices.SortedFunc(maps.Keys(runs), func(a, b [2]string) int {
		return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1]))
	})
	// The tools take the first colours, the figures being theirs; the
	// configurations of the other sections follow.
	others := r.configs.names
	r.configs.names, r.configs.index = nil, map[string]int{}
	defer func() {
		for _, name := range others {
			r.configs.add(name)
		}
	}()
	for _, k := range keys {
		ids := slices.Sorted(maps.Keys(runs[k]))
		fv.lines[k] = r.familyLines(ids)
		// Lines keep one colour in every figure: in the order of their
		// first run.
		byFirst := map[string]int64{}
		for _, id := range ids {
			l := fv.lines[k][id]
			if _, ok := byFirst[l.name]; !ok {
				byFirst[l.name] = id
			}
		}
		names := slices.SortedFunc(maps.Keys(byFirst), func(a, b string) int { return cmp.Compare(byFirst[a], byFirst[b]) })
		for _, name := range names {
			r.configs.add(name)
		}
		r.configs.what[k[0]] = "tool"
	}
	return nil
}

// familyLines places the runs (sorted by id) that measured one metric of
// a family: their figure and their line.
func (r *Report) familyLines(ids []int64) map[int64]familyLine {
	tool := map[int64]string{}
	attrs := map[int64]map[string]string{}
	keys := map[string]bool{}
	for _, id := range ids {
		run := r.byID[id]
		tool[id] = compare.ToolLabel(run)
		a := map[string]string{}
		// By the name the user gave: a label overrides a parameter of the
		// same name, as store.Config.Lookup does.
		for _, at := range store.ConfigOf(run) {
			a[at.Key] = at.Value
			keys[at.Key] = true
		}
		attrs[id] = a
	}
	var split, legend []string
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		toolsOf := map[string]map[string]bool{} // value -> tools with it
		for _, id := range ids {
			addToSet(toolsOf, attrs[id][k], tool[id]) // absent is ""
		}
		if len(toolsOf) < 2 {
			continue // one value: it tells nothing apart
		}
		shared := false
		for _, ts := range toolsOf {
			shared = shared || len(ts) > 1
		}
		if shared {
			split = append(split, k)
		} else {
			legend = append(legend, k)
		}
	}
	// The legend attributes that vary among one tool's runs name its lines.
	varies := map[string][]string{}
	for _, k := range legend {
		vals := map[string]map[string]bool{}
		for _, id := range ids {
			addToSet(vals, tool[id], attrs[id][k])
		}
		for t, vs := range vals {
			if len(vs) > 1 {
				varies[t] = append(varies[t], k)
			}
		}
	}
	out := make(map[int64]familyLine, len(ids))
	for _, id := range ids {
		var sp, extra []string
		for _, k := range split {
			sp = append(sp, k+"="+attrs[id][k])
		}
		for _, k := range varies[tool[id]] {
			extra = append(extra, k+"="+attrs[id][k])
		}
		name := tool[id]
		if len(extra) > 0 {
			name += " [" + strings.Join(extra, ", ") + "]"
		}
		out[id] = familyLine{split: strings.Join(sp, ", "), name: name}
	}
	return out
}

// familyTitle heads a metric family's section: the family and the
// benchmarks it brings together.
func (r *Report) familyTitle(f *familyResult) string {
	members := r.fview.members[f.name]
	if len(members) == 0 {
		return ""
	}
	return "Metric family: " + f.name + " (" + strings.Join(slices.Sorted(maps.Keys(members)), ", ") + ")"
}
