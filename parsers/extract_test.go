package parsers

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/sbench/sbench/results"
)

// lammpsMetrics are the LJ melt benchmark's figures as a campaign would
// define them.
var lammpsMetrics = &results.Extract{
	Metrics: []results.MetricDef{
		{Name: "timesteps_per_s", Regex: `^Performance: .*, ([0-9.]+) timesteps/s`, Unit: "timesteps/s"},
		{Name: "tau_per_day", Regex: `^Performance: (?P<tau>[0-9.]+) tau/day`, Value: "tau", Unit: "tau/day"},
		{Name: "loop_time", Regex: `^Loop time of ([0-9.]+) on (\d+) procs`, Unit: "s"},
		{Name: "temp", Regex: `^\s+(?P<step>\d+)\s+(?P<t>[0-9.]+)\s+-?[0-9.]+\s+0\s`, Value: "t", X: "step", XUnit: "steps", Better: "lower", Unit: ""},
	},
	Require: []string{`^Total wall time: `},
	Reject:  []string{`^ERROR`, `Dangerous builds = [1-9]`},
}

func mustCompile(t *testing.T, e *results.Extract) *Extractor {
	t.Helper()
	x, err := Compile(e)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

func sampleOf(b *results.Bundle, metric string) []results.Sample {
	var out []results.Sample
	for _, s := range b.Samples {
		if s.Metric == metric {
			out = append(out, s)
		}
	}
	return out
}

// The figures of real LAMMPS outputs (Debian's lmp, the LJ melt input of
// testdata/lammps-in.melt on one and two ranks), read with parser none.
func TestExtractLAMMPS(t *testing.T) {
	for _, tt := range []struct {
		file                    string
		steps, tau, loop, temp0 float64
	}{
		{"lammps-2021.09-melt-1rank.txt", 570.120, 246291.755, 0.350803, 1.44},
		{"lammps-2021.09-melt-2ranks.txt", 148.420, 64117.252, 1.34753, 1.44},
	} {
		t.Run(tt.file, func(t *testing.T) {
			data := []byte(fixture(t, tt.file))
			runs, err := Parse(tt.file, None, data)
			if err != nil {
				t.Fatal(err)
			}
			b := runs[0]
			b.Benchmark.Name = "lj-melt"
			mustCompile(t, lammpsMetrics).Apply(b, data, nil)
			if b.Status != results.StatusOK || b.Error != "" {
				t.Fatalf("status %s: %s", b.Status, b.Error)
			}
			if err := b.Validate(); err != nil {
				t.Fatal(err)
			}
			for _, w := range []struct {
				metric, unit string
				v            float64
			}{{"timesteps_per_s", "timesteps/s", tt.steps}, {"tau_per_day", "tau/day", tt.tau}, {"loop_time", "s", tt.loop}} {
				s := sampleOf(b, w.metric)
				if len(s) != 1 || s[0].Value != w.v || s[0].Unit != w.unit || s[0].X != nil {
					t.Errorf("%s: %+v, want one sample %v %s", w.metric, s, w.v, w.unit)
				}
			}
			// The thermo table: one sample per step, 0 to 200 by 50.
			temps := sampleOf(b, "temp")
			if len(temps) != 5 || *temps[0].X != 0 || temps[0].Value != tt.temp0 || *temps[4].X != 200 || temps[0].XUnit != "steps" {
				t.Errorf("temp: %d samples %+v", len(temps), temps)
			}
			if b.Benchmark.Extract != lammpsMetrics {
				t.Errorf("the definitions are not recorded: %+v", b.Benchmark.Extract)
			}
			if results.BetterFor(sampleOf(b, "timesteps_per_s")[0].Unit) != results.BetterHigher {
				t.Error("timesteps/s is not higher-is-better")
			}
		})
	}
}

// An extra figure on top of the built-in parser: a real OSU log keeps its
// parser's bandwidth curve, and a table read by a pattern from the same
// lines agrees with it point for point (GB/s as MB/s ×1000 shows the
// normalisation).
func TestExtractOnTopOfOSU(t *testing.T) {
	file := "002-osu_bw-v5.9-cent063-to-cent064.txt"
	data := []byte(fixture(t, file))
	runs, err := Parse(file, "osu", data)
	if err != nil || len(runs) != 1 {
		t.Fatal(len(runs), err)
	}
	b := runs[0]
	builtin := sampleOf(b, "bandwidth")
	x := mustCompile(t, &results.Extract{Metrics: []results.MetricDef{
		{Name: "bw_by_pattern", Regex: `^(\d+)\s+([0-9.]+)$`, Value: "2", X: "1", XUnit: "bytes", Unit: "MB/s"},
		{Name: "bw_4mib_gbps", Regex: `^4194304\s+([0-9.]+)$`, Unit: "GB/s"}, // pretend OSU printed GB/s
		{Name: "bw_mean", Regex: `^(\d+)\s+([0-9.]+)$`, Value: "2", Unit: "MB/s", Match: MatchAll},
	}, Require: []string{`# OSU MPI Bandwidth Test`}})
	x.Apply(b, data, nil)
	if b.Status != results.StatusOK {
		t.Fatal(b.Error)
	}
	if len(sampleOf(b, "bandwidth")) != len(builtin) || len(builtin) < 20 {
		t.Fatalf("the parser's samples changed: %d", len(sampleOf(b, "bandwidth")))
	}
	mine := sampleOf(b, "bw_by_pattern")
	if len(mine) != len(builtin) {
		t.Fatalf("%d samples by pattern, %d by the parser", len(mine), len(builtin))
	}
	sum, lo, hi := 0.0, math.Inf(1), math.Inf(-1)
	for i := range mine {
		if *mine[i].X != *builtin[i].X || mine[i].Value != builtin[i].Value || mine[i].Unit != builtin[i].Unit {
			t.Errorf("point %d: %+v by pattern, %+v by the parser", i, mine[i], builtin[i])
		}
		sum, lo, hi = sum+mine[i].Value, min(lo, mine[i].Value), max(hi, mine[i].Value)
	}
	var at4M float64
	for _, s := range builtin {
		if *s.X == 4194304 {
			at4M = s.Value
		}
	}
	if s := sampleOf(b, "bw_4mib_gbps"); len(s) != 1 || s[0].Unit != "MB/s" || math.Abs(s[0].Value-1000*at4M) > 1e-6 {
		t.Errorf("bw_4mib_gbps %+v, want %v MB/s", s, 1000*at4M)
	}
	if s := sampleOf(b, "bw_mean"); len(s) != 1 || math.Abs(s[0].Value-sum/float64(len(mine))) > 1e-9 || *s[0].Min != lo || *s[0].Max != hi {
		t.Errorf("bw_mean %+v, want mean %v min %v max %v", s, sum/float64(len(mine)), lo, hi)
	}
}

func TestExtractMatchModes(t *testing.T) {
	out := []byte("t= 1\nt= 2\nt= 6\n")
	for _, tt := range []struct {
		match string
		want  []float64
	}{{"", []float64{6}}, {MatchLast, []float64{6}}, {MatchFirst, []float64{1}}, {MatchEach, []float64{1, 2, 6}}, {MatchAll, []float64{3}}} {
		b := results.New()
		b.Benchmark.Name = "x"
		mustCompile(t, &results.Extract{Metrics: []results.MetricDef{{Name: "t", Regex: `t=\s*(\d+)`, Unit: "s", Match: tt.match}}}).Apply(b, out, nil)
		var got []float64
		for _, s := range b.Samples {
			got = append(got, s.Value)
		}
		if !equalFloats(got, tt.want) {
			t.Errorf("match %q: %v, want %v", tt.match, got, tt.want)
		}
	}
}

func equalFloats(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Sanity patterns and missing figures make an ok run invalid, each said
// with its pattern; a failed run stays failed; Reapply takes the verdict
// back when the new definitions are met.
func TestExtractSanity(t *testing.T) {
	data := []byte(fixture(t, "lammps-2021.09-melt-1rank.txt"))
	x := mustCompile(t, &results.Extract{
		Metrics: []results.MetricDef{{Name: "katom_step_s", Regex: `([0-9.]+) katom-step/s`, Unit: "katom-step/s"}},
		Require: []string{`^Total wall time`, `WARNING: all good`},
		Reject:  []string{`Dangerous builds not checked`},
	})
	b := results.New()
	b.Benchmark.Name = "lj"
	x.Apply(b, data, nil)
	if b.Status != results.StatusInvalid {
		t.Fatalf("status %s", b.Status)
	}
	for _, want := range []string{
		`sanity: metric katom_step_s: no match of "([0-9.]+) katom-step/s"`,
		`sanity: the output lacks the required pattern "WARNING: all good"`,
		`sanity: the output shows the rejected pattern "Dangerous builds not checked" on line 58: "Dangerous builds not checked"`,
	} {
		if !strings.Contains(b.Error, want) {
			t.Errorf("error %q lacks %q", b.Error, want)
		}
	}
	if strings.Contains(b.Error, "Total wall time") {
		t.Errorf("a pattern that is met is reported: %s", b.Error)
	}
	failed := results.New()
	failed.Status, failed.Error = results.StatusFailed, "rank 1 died"
	x.Apply(failed, data, nil)
	if failed.Status != results.StatusFailed || failed.Error != "rank 1 died" {
		t.Errorf("failed run: %s %q", failed.Status, failed.Error)
	}
	// Re-read with definitions the output meets: ok again, the old
	// definitions' samples and verdict gone.
	mustCompile(t, lammpsMetrics).Reapply(b, data, nil)
	if b.Status != results.StatusOK || b.Error != "" || len(sampleOf(b, "timesteps_per_s")) != 1 || b.Benchmark.Extract != lammpsMetrics {
		t.Errorf("after Reapply: %s %q %+v", b.Status, b.Error, b.Samples)
	}
}

// Every definition error names its key; a regex error its column in the
// pattern.
func TestCompileErrors(t *testing.T) {
	for _, tt := range []struct {
		def   results.MetricDef
		field string
		col   int
		msg   string
	}{
		{results.MetricDef{Name: "a", Regex: `x ([0-9.]+ y`, Unit: "s"}, "metric[0].regex", 3, "missing closing )"},
		{results.MetricDef{Name: "a", Regex: `x ([0-9]+) y[`, Unit: "s"}, "metric[0].regex", 13, "missing closing ]"},
		{results.MetricDef{Name: "a", Regex: `[(]x (\d+)) y`, Unit: "s"}, "metric[0].regex", 11, "unexpected )"},
		{results.MetricDef{Name: "a", Regex: `x (\d+) \q`, Unit: "s"}, "metric[0].regex", 9, "invalid escape"},
		{results.MetricDef{Name: "a", Regex: `x*`, Unit: "s"}, "metric[0].regex", 0, "matches the empty text"},
		{results.MetricDef{Name: "a", Regex: `x (\d+)`, Value: "2", Unit: "s"}, "metric[0].value", 0, "no group 2"},
		{results.MetricDef{Name: "a", Regex: `x (?P<v>\d+)`, Value: "val", Unit: "s"}, "metric[0].value", 0, `no group "val" (named groups: v)`},
		{results.MetricDef{Name: "a", Regex: `x (\d+)`, X: "size", Unit: "s"}, "metric[0].x", 0, `no group "size"`},
		{results.MetricDef{Name: "a", Regex: `x (\d+)`, Unit: "furlongs/fortnight"}, "metric[0].unit", 0, "cannot normalise"},
		{results.MetricDef{Name: "a", Regex: `x (\d+)`, Unit: "atoms"}, "metric[0].better", 0, "is required"},
		{results.MetricDef{Name: "a", Regex: `x (\d+)`, Unit: "s", Better: "higher"}, "metric[0].better", 0, "contradicts"},
		{results.MetricDef{Name: "a", Regex: `x (\d+)`, Unit: "s", Match: "most"}, "metric[0].match", 0, "not a match"},
		{results.MetricDef{Name: "Bad-Name", Regex: `x (\d+)`, Unit: "s"}, "metric[0].name", 0, "not a metric name"},
		{results.MetricDef{Name: "bandwidth", Regex: `x (\d+)`, Unit: "s"}, "metric[0].name", 0, "sbench's own"},
		{results.MetricDef{Name: "a", Regex: `x (\d+)`, Unit: "s", File: "../etc/passwd"}, "metric[0].file", 0, "relative path"},
	} {
		_, err := Compile(&results.Extract{Metrics: []results.MetricDef{tt.def}})
		var es DefErrors
		if !errors.As(err, &es) || len(es) != 1 {
			t.Errorf("%+v: %v, want one DefError", tt.def, err)
			continue
		}
		if e := es[0]; e.Field != tt.field || e.Col != tt.col || !strings.Contains(e.Msg, tt.msg) {
			t.Errorf("%+v: %s col %d %q; want %s col %d %q", tt.def, e.Field, e.Col, e.Msg, tt.field, tt.col, tt.msg)
		}
	}
	_, err := Compile(&results.Extract{Require: []string{`ok`, `(`}, Reject: []string{``}})
	if err == nil || !strings.Contains(err.Error(), "require[1]: not a regular expression") || !strings.Contains(err.Error(), "reject[0]: is empty") {
		t.Errorf("patterns: %v", err)
	}
}

func TestNormalizeUnit(t *testing.T) {
	for _, tt := range []struct {
		in, unit string
		scale    float64
	}{{"GB/s", "MB/s", 1000}, {"Gbit/s", "MB/s", 125}, {"ms", "s", 1e-3}, {"ns", "us", 1e-3}, {"TFLOPS", "Gflops", 1000},
		{"timesteps/s", "timesteps/s", 1}, {"tau/day", "tau/day", 1}, {"ns/day", "ns/day", 1}, {"atoms", "atoms", 1}, {"", "", 1}, {"KiB", "bytes", 1024}} {
		u, err := NormalizeUnit(tt.in)
		if err != nil || u.Unit != tt.unit || u.Scale != tt.scale {
			t.Errorf("%q: %+v %v, want %s ×%v", tt.in, u, err, tt.unit, tt.scale)
		}
	}
	for _, bad := range []string{"MB/GB", "per second", "s/s/s", "x;rm", "steps per/s", "$(id)/s", "/s"} {
		if _, err := NormalizeUnit(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// FuzzExtract compiles any definition and applies it to any output: no
// panic, and every sample it adds is finite and a bundle that validates.
// RE2 bounds the time of any pattern (linear in the output).
func FuzzExtract(f *testing.F) {
	f.Add(`^Performance: .*, ([0-9.]+) timesteps/s`, "1", "", "timesteps/s", "", fixture(f, "lammps-2021.09-melt-1rank.txt"))
	f.Add(`^(\d+)\s+([0-9.]+)$`, "2", "1", "MB/s", "all", fixture(f, "002-osu_bw-v5.9-cent063-to-cent064.txt"))
	f.Add(`(?P<v>[0-9.eEdD+-]+)`, "v", "", "GB/s", "each", "1.5D+03 2e400 nan -0")
	f.Add(`(a*)*b`, "1", "", "s", "first", strings.Repeat("a", 5000))
	f.Fuzz(func(t *testing.T, re, value, x, unit, match, out string) {
		e := &results.Extract{Metrics: []results.MetricDef{{Name: "m", Regex: re, Value: results.Group(value), X: results.Group(x), Unit: unit, Better: "higher", Match: match}},
			Require: []string{re}, Reject: []string{re}}
		xt, err := Compile(e)
		if err != nil {
			var es DefErrors
			if !errors.As(err, &es) {
				t.Fatalf("not a DefErrors: %v", err)
			}
			return
		}
		b := results.New()
		b.Benchmark.Name = "fuzz"
		xt.Apply(b, []byte(out), nil)
		if err := b.Validate(); err != nil {
			t.Fatal(err)
		}
		if b.Status == results.StatusOK {
			t.Fatalf("a pattern both required and rejected passed: %q", re)
		}
	})
}
