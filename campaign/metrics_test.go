package campaign

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/sbench/sbench/results"
	"github.com/sbench/sbench/runargs"
)

// User-defined metrics: a benchmark with metrics and no parser runs with
// parser none (never auto's "not output of any known tool"), and its
// definitions reach the runner whole through --extract; with a parser
// they extend it.
func TestMetricsReachTheRunner(t *testing.T) {
	c := mustParse(t, `
[campaign]
name = "apps"
[slurm]
nodes = 1
[[benchmark]]
name = "lammps"
command = ["lmp", "-in", "in.melt", "-log", "none"]
require = ['^Total wall time']
reject = ['^ERROR']
[[benchmark.metric]]
name = "timesteps_per_s"
regex = 'Performance: .*, ([0-9.]+) timesteps/s'
unit = "timesteps/s"
[[benchmark.metric]]
name = "temp"
regex = '^\s+(?P<step>\d+)\s+(?P<t>[0-9.]+)'
value = "t"
x = "step"
x_unit = "steps"
better = "lower"
match = "each"
[[benchmark]]
name = "osu"
command = ["osu_bw"]
parser = "osu"
[[benchmark.metric]]
name = "bw_4m"
regex = '^4194304\s+([0-9.]+)'
value = 1
unit = "MB/s"
`)
	p := mustPlan(t, c)
	byBench := map[string]runargs.Args{}
	for _, j := range p.Jobs {
		for _, st := range j.Steps {
			a, err := runargs.Parse(st.RunnerArgs[1:], runargs.Args{})
			if err != nil {
				t.Fatal(err)
			}
			byBench[a.Benchmark] = a
		}
	}
	lmp := byBench["lammps"]
	if lmp.Parser != "none" || lmp.Extract == nil || len(lmp.Extract.Metrics) != 2 || lmp.Extract.Metrics[1].Value != "t" ||
		lmp.Extract.Metrics[1].X != "step" || lmp.Extract.Require[0] != `^Total wall time` {
		data, _ := json.Marshal(lmp.Extract)
		t.Errorf("lammps: parser %q, extract %s", lmp.Parser, data)
	}
	if osu := byBench["osu"]; osu.Parser != "osu" || osu.Extract == nil || osu.Extract.Metrics[0].Value != "1" {
		t.Errorf("osu: %+v", osu)
	}
}

// Every problem of a definition is placed at its key's line (a missing
// key's at its table); a regular expression's at the character in the
// file where it goes wrong.
func TestMetricsValidated(t *testing.T) {
	src := `[campaign]
name = "apps"
[slurm]
nodes = 1
[[benchmark]]
name = "a"
kernel = "latency"
require = ["x"]
[[benchmark]]
name = "b"
command = ["app"]
reject = ["ok", "bad ("]
[[benchmark.metric]]
name = "steps"
regex = 'Performance: ([0-9.]+ timesteps/s'
unit = "timesteps/s"
[[benchmark.metric]]
name = "atoms"
regex = "with (\\d+) atoms"
value = "n"
unit = "atoms"
[[benchmark.metric]]
name = "speed"
regex = 'x (\d+)'
unit = "furlongs/fortnight"
`
	_, err := Parse("c.toml", []byte(src))
	if err == nil {
		t.Fatal("no error")
	}
	got := err.Error()
	for _, want := range []string{
		`c.toml:8:1: benchmark[0].require: is for external tools (command), not for kernel latency`,
		`c.toml:12:22: benchmark[1].reject[1]: not a regular expression: missing closing ): ` + "`bad (`" + ` (column 5 of the pattern)`,
		`c.toml:15:23: benchmark[1].metric[0].regex: not a regular expression: missing closing ): ` + "`Performance: ([0-9.]+ timesteps/s`" + ` (column 14 of the pattern)`,
		`c.toml:20:1: benchmark[1].metric[1].value: the pattern has no group "n" (named groups: none)`,
		`c.toml:17:1: benchmark[1].metric[1].better: is required: unit "atoms" says nothing of whether higher or lower is better`,
		`c.toml:25:1: benchmark[1].metric[2].unit: sbench cannot normalise unit "furlongs/fortnight"`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("problems lack\n%s\ngot:\n%s", want, got)
		}
	}
}

// The bundle's record of the definitions is the campaign's, key for key.
func TestMetricsExtractIsTheCampaigns(t *testing.T) {
	b := Benchmark{Metrics: []results.MetricDef{{Name: "a", Regex: "x(1)"}}, Reject: []string{"e"}}
	if e := b.Extract(); e == nil || e.Metrics[0].Name != "a" || e.Reject[0] != "e" {
		t.Errorf("%+v", e)
	}
	if (&Benchmark{}).Extract() != nil {
		t.Error("an empty extract is not nil")
	}
}

// [[benchmark.metric]] counts from 0 in each [[benchmark]]: a problem in
// the second benchmark's first metric is placed there, not at the first
// benchmark's.
func TestMetricsPlacedPerBenchmark(t *testing.T) {
	_, err := Parse("c.toml", []byte(`[campaign]
name = "apps"
[[benchmark]]
name = "a"
command = ["a"]
[[benchmark.metric]]
name = "x"
regex = 'x (\d+)'
unit = "s"
[[benchmark]]
name = "b"
command = ["b"]
[[benchmark.metric]]
name = "y"
regex = 'y (\d+)'
unit = "parsecs/fortnight"
`))
	if want := "c.toml:16:1: benchmark[1].metric[0].unit: sbench cannot normalise"; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("%v, want %s", err, want)
	}
}

// A variant adds its own metrics and patterns to the benchmark's for its
// runs (its metric of a benchmark metric's name replaces it); validated
// at the variant's keys.
func TestVariantMetrics(t *testing.T) {
	c := mustParse(t, `
[campaign]
name = "apps"
[[benchmark]]
name = "app"
command = ["app"]
require = ['^done']
[[benchmark.metric]]
name = "steps"
regex = 'steps: (\d+)'
unit = "steps/s"
[[variant]]
name = "plain"
[[variant]]
name = "gpu"
command = ["app", "--gpu"]
reject = ['fallback to CPU']
[[variant.metric]]
name = "steps"
regex = 'GPU steps: (\d+)'
unit = "steps/s"
[[variant.metric]]
name = "gpu_mem"
regex = 'GPU memory: (\d+) MiB'
unit = "MiB"
better = "lower"
`)
	p := mustPlan(t, c)
	got := map[string]*results.Extract{}
	for _, j := range p.Jobs {
		for _, st := range j.Steps {
			a, err := runargs.Parse(st.RunnerArgs[1:], runargs.Args{})
			if err != nil {
				t.Fatal(err)
			}
			if a.Parser != "none" {
				t.Errorf("%s: parser %q", a.Variant, a.Parser)
			}
			got[a.Variant] = a.Extract
		}
	}
	if e := got["plain"]; e == nil || len(e.Metrics) != 1 || e.Metrics[0].Regex != `steps: (\d+)` || len(e.Reject) != 0 {
		t.Errorf("plain: %+v", e)
	}
	if e := got["gpu"]; e == nil || len(e.Metrics) != 2 || e.Metrics[0].Regex != `GPU steps: (\d+)` || e.Metrics[1].Name != "gpu_mem" ||
		e.Require[0] != "^done" || e.Reject[0] != "fallback to CPU" {
		t.Errorf("gpu: %+v", e)
	}

	_, err := Parse("c.toml", []byte(`[campaign]
name = "apps"
[[benchmark]]
name = "app"
command = ["app"]
[[variant]]
name = "native"
kernel = "latency"
require = ["x"]
[[variant]]
name = "bad"
[[variant.metric]]
name = "m"
regex = 'm: ([0-9]+'
unit = "s"
`))
	for _, want := range []string{
		"c.toml:9:1: variant[0].require: is for external tools (command), not for kernel latency",
		"c.toml:14:13: variant[1].metric[0].regex: not a regular expression: missing closing )",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%v\nwant %s", err, want)
		}
	}
}
