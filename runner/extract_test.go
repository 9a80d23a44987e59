package runner

import (
	"strings"
	"testing"

	"github.com/sbench/sbench/results"
)

// The exec kernel applies the user-defined metrics after the parser: an
// extra figure from the OSU output it parsed, one from a file the tool
// wrote, and a check on a user-defined metric; the bundle records the
// definitions.
func TestExecExtract(t *testing.T) {
	fastStops(t)
	def := &results.Extract{Metrics: []results.MetricDef{
		{Name: "lat_at_1", Regex: `^1\s+([0-9.]+)$`, Unit: "us"},
		{Name: "solver_time", Regex: `solve: ([0-9.]+) ms`, Unit: "ms", File: "out/solver.log"},
	}, Require: []string{`OSU MPI Latency Test`}}
	e := &Exec{Argv: []string{"sh", "-c", "mkdir -p out && echo 'solve: 250 ms' > out/solver.log && " + osuLatency}, Parser: "osu", Extract: def}
	s := execStep(t, []string{"n1"}, 1, e)
	edit := s.edit
	s.edit = func(rank int, cfg *Config) {
		edit(rank, cfg)
		cfg.Checks = []CheckSpec{mustCheck(t, "solver_time<=0.1")}
	}
	res := s.run()
	allRanksOK(t, res)
	b := s.bundle(res)
	got := map[string]results.Sample{}
	for _, smp := range b.Samples {
		got[smp.Metric] = smp
	}
	if smp := got["lat_at_1"]; smp.Value != 1.25 || smp.Unit != "us" {
		t.Errorf("lat_at_1 %+v", smp)
	}
	if smp := got["solver_time"]; smp.Value != 0.25 || smp.Unit != "s" {
		t.Errorf("solver_time %+v", smp)
	}
	if _, ok := got["latency"]; !ok {
		t.Error("the parser's samples are gone")
	}
	if b.Status != results.StatusInvalid || !strings.Contains(b.Error, "check solver_time<=0.1 failed: solver_time is 0.25") {
		t.Errorf("status %s %q", b.Status, b.Error)
	}
	if b.Benchmark.Extract == nil || len(b.Benchmark.Extract.Metrics) != 2 {
		t.Errorf("definitions not recorded: %+v", b.Benchmark)
	}

	// A file the tool did not write fails its metric: the run is invalid,
	// saying so.
	e2 := &Exec{Argv: []string{"sh", "-c", osuLatency}, Parser: "osu", Extract: def}
	s2 := execStep(t, []string{"n1"}, 1, e2)
	b = s2.bundle(s2.run())
	if b.Status != results.StatusInvalid || b.Error != "sanity: metric solver_time: file out/solver.log could not be read" {
		t.Errorf("status %s %q", b.Status, b.Error)
	}
}

// A definition the runner is given that does not compile is refused
// before anything runs.
func TestExecExtractRefused(t *testing.T) {
	e := &Exec{Argv: []string{"true"}, Extract: &results.Extract{Require: []string{"("}}}
	if err := e.check(1); err == nil || !strings.Contains(err.Error(), "--extract: require[0]: not a regular expression") {
		t.Errorf("%v", err)
	}
}
