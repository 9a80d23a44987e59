package store

import (
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/sbench/sbench/results"
)

// Kinds of configuration attributes.
const (
	AttrCampaign = "campaign"
	AttrVariant  = "variant"
	// AttrToolBenchmark is the benchmark a tool ran (Run.ToolBenchmark)
	// when the run's benchmark name does not say it: a campaign's
	// benchmark "imb" wrapping "IMB-MPI1 PingPong Allreduce".
	AttrToolBenchmark = "tool_benchmark"
	AttrParam         = "param"
	AttrLabel         = "label"
	AttrProcesses     = "processes"
)

// Attr is one setting that identifies a configuration.
type Attr struct {
	// Kind is AttrCampaign, AttrVariant, AttrToolBenchmark, AttrParam,
	// AttrLabel or AttrProcesses.
	Kind string
	// Key is the parameter's or label's name; the kind's name for the
	// others.
	Key   string
	Value string
}

// String is "key=value".
func (a Attr) String() string { return a.Key + "=" + a.Value }

// id keeps a label and a parameter of the same name apart.
func (a Attr) id() string { return a.Kind + "\x00" + a.Key }

// Config is what identifies a run's configuration, in a fixed order:
// campaign, variant, tool benchmark, parameters, labels, process count.
type Config []Attr

// Key is the configuration as one comparable string.
func (c Config) Key() string {
	var b strings.Builder
	for _, a := range c {
		b.WriteString(a.id())
		b.WriteByte('\x00')
		b.WriteString(a.Value)
		b.WriteByte('\x01')
	}
	return b.String()
}

// String is the configuration as "key=value,…", in its order.
func (c Config) String() string {
	parts := make([]string, len(c))
	for i, a := range c {
		parts[i] = a.String()
	}
	return strings.Join(parts, ",")
}

// Get returns the value of the attribute of kind and key.
func (c Config) Get(kind, key string) (string, bool) {
	for _, a := range c {
		if a.Kind == kind && a.Key == key {
			return a.Value, true
		}
	}
	return "", false
}

// Lookup finds an attribute by the name a user types: a label, else a
// parameter, else "campaign", "variant", "tool_benchmark" or "processes".
func (c Config) Lookup(name string) (string, bool) {
	for _, kind := range []string{AttrLabel, AttrParam} {
		if v, ok := c.Get(kind, name); ok {
			return v, true
		}
	}
	switch name {
	case AttrCampaign, AttrVariant, AttrToolBenchmark, AttrProcesses:
		return c.Get(name, name)
	}
	return "", false
}

// Without returns the configuration less the attributes of the given kinds.
func (c Config) Without(kinds ...string) Config {
	out := make(Config, 0, len(c))
	for _, a := range c {
		if !slices.Contains(kinds, a.Kind) {
			out = append(out, a)
		}
	}
	return out
}

// MetaLabels describe a run rather than tell configurations apart: the
// link rate and Rpeak a report compares against, and the process count
// (which is the configuration's AttrProcesses).
var MetaLabels = map[string]bool{"link_rate": true, "rpeak": true, "ranks": true, "site_profile": true}

// ConfigOf returns what the user varied on purpose to get run: its
// campaign and variant, the benchmark its tool ran when the run's
// benchmark name is not that (one command running IMB's PingPong and
// Allreduce gives two configurations, whatever the campaign calls it),
// its parameters (sweep values, and the settings a tool varied itself,
// such as the process count of each IMB table), its labels, and its
// process count. What only numbers a run or describes it
// is never part of it: the repeat index, HPL's row number, the dates and
// versions tools print (results.DescriptiveParam), the job, step and
// restart. Runs with equal configurations are repeats of one measurement
// and are pooled by every view: compare, history, report, export.
//
// This is the one place that decides it.
func ConfigOf(r *Run) Config {
	var c Config
	if r.Campaign != "" {
		c = append(c, Attr{AttrCampaign, AttrCampaign, r.Campaign})
	}
	if r.Variant != "" {
		c = append(c, Attr{AttrVariant, AttrVariant, r.Variant})
	}
	// An output ingested from a file is named after its tool benchmark
	// already: saying it again would only lengthen every configuration
	// shown.
	if r.ToolBenchmark != "" && r.ToolBenchmark != r.Benchmark {
		c = append(c, Attr{AttrToolBenchmark, AttrToolBenchmark, r.ToolBenchmark})
	}
	for _, k := range slices.Sorted(maps.Keys(r.Params)) {
		if DescriptiveParamOf(r, k) {
			continue
		}
		c = append(c, Attr{AttrParam, k, r.Params[k]})
	}
	for _, k := range slices.Sorted(maps.Keys(r.Labels)) {
		if !MetaLabels[k] {
			c = append(c, Attr{AttrLabel, k, r.Labels[k]})
		}
	}
	if n := ProcessCount(r); n > 0 {
		c = append(c, Attr{AttrProcesses, AttrProcesses, strconv.Itoa(n)})
	}
	return c
}

// processParams name the process count a tool measured with, when it
// chose it itself (IMB runs each benchmark at 2, 4 … up to the job's
// ranks) or printed it (HPCC's CommWorldProcs).
var processParams = []string{"processes", "ranks", "np", "ntasks"}

// DescriptiveParamOf reports whether parameter k of r describes the run
// rather than configures it; the process count parameters are the
// configuration's AttrProcesses, not parameters of their own.
func DescriptiveParamOf(r *Run, k string) bool {
	return slices.Contains(processParams, k) || results.DescriptiveParam(r.Tool, k)
}

// ProcessCount is the number of processes that took part in run: the
// count the tool reports for the measurement when it says (IMB's
// "#processes", HPCC's), else the job step's tasks, else a "ranks" label
// given at ingest; 0 when nothing says.
func ProcessCount(r *Run) int {
	for _, k := range processParams {
		if n := positive(r.Params[k]); n > 0 {
			return n
		}
	}
	if r.Tasks > 0 {
		return r.Tasks
	}
	for _, k := range processParams {
		if n := positive(r.Labels[k]); n > 0 {
			return n
		}
	}
	return 0
}

func positive(s string) int {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n <= 0 {
		return 0
	}
	return n
}
