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
