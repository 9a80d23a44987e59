package campaign

import (
	"fmt"
	"slices"

	"github.com/sbench/sbench/expect"
	"github.com/sbench/sbench/results"
)

// ExpectRefs are expectations as sbench check judges them, each with
// source for where it came from ("site profile hpc1 (site.toml)"): what a
// site profile's [[expect]] tables become.
func ExpectRefs(es []Expect, source string) []expect.Ref {
	out := make([]expect.Ref, len(es))
	for i, e := range es {
		out[i] = expect.Ref{Name: e.Name, Benchmark: e.Benchmark, Metric: e.Metric, At: e.At, Bound: e.Bound,
			Where: e.Where, System: e.System, Source: source}
	}
	return out
}

// Refs are the campaign's expectations, then its site profile's
// (SiteRefs).
func (c *Campaign) Refs() []expect.Ref { return append(c.OwnRefs(), c.SiteRefs()...) }

// OwnRefs are the campaign's own expectations, each with where it is
// written: "campaign NAME (FILE:LINE)".
func (c *Campaign) OwnRefs() []expect.Ref {
	return refsOf(sourced(c.Expects, c.File, c.index), "campaign "+c.Campaign.Name)
}

// SiteRefs are the expectations of the site profile the campaign was read
// under (none without one), each its system's: "site NAME (FILE:LINE)".
func (c *Campaign) SiteRefs() []expect.Ref {
	if c.site == nil {
		return nil
	}
	return c.site.Refs()
}

// Refs are the profile's expectations, each its system's, with where it
// is written: "site NAME (FILE:LINE)".
func (s *Site) Refs() []expect.Ref { return refsOf(s.Expectations(), "site "+s.Site.Name) }

func refsOf(es []SourcedExpect, from string) []expect.Ref {
	var out []expect.Ref
	for _, e := range es {
		src := from
		if e.File != "" {
			where := e.File
			if e.Line > 0 {
				where = e.Source()
			}
			src += " (" + where + ")"
		}
		out = append(out, ExpectRefs([]Expect{e.Expect}, src)...)
	}
	return out
}

// validateExpects checks the [[expect]] tables: a benchmark of the
// campaign, a metric, a bound and a point that parse, a bound whose unit
// the metric's converts to (for the metrics of results' table).
//
// A site profile's expectations (ofProfile) may name a benchmark of any
// campaign run under it: their benchmark is not looked for here.
func (c *Campaign) validateExpects(es []Expect, ofProfile bool) Problems {
	var ps Problems
	for i, e := range es {
		key := fmt.Sprintf("expect[%d]", i)
		add := func(k, format string, args ...any) { ps = append(ps, c.problem(key+"."+k, format, args...)) }
		switch {
		case e.Benchmark == "":
			add("benchmark", "is missing: name a [[benchmark]] of the campaign")
		case !ofProfile && !slices.Contains(c.benchmarkNames(), e.Benchmark):
			add("benchmark", "no benchmark is called %q%s", e.Benchmark, didYouMean(e.Benchmark, c.benchmarkNames(), true))
		}
		if e.Metric == "" {
			add("metric", "is missing: name the metric judged (bandwidth, latency, wall_time …)")
		}
		b, err := expect.ParseBound(e.Bound)
		switch {
		case e.Bound == "":
			add("bound", "is missing: e.g. bound = \">= 24 GB/s\"")
		case err != nil:
			add("bound", "%v", err)
		default:
			if m, ok := results.MetricOf(e.Metric); ok {
				if err := b.CheckUnit(m.Unit); err != nil {
					add("bound", "%v", err)
				}
			}
		}
		if _, err := expect.ParseAt(e.At); err != nil {
			add("at", "%v", err)
		}
		if _, err := expect.ParseWhere(e.Where); err != nil {
			add("where", "%v", err)
		}
		if e.System != "" {
			if err := checkName(e.System); err != nil {
				add("system", "%v", err)
			}
		}
	}
	return ps
}
