package campaign

import (
	"strings"
	"testing"
)

// TestVariantsChooseTheTool: one benchmark, measured by the native kernel
// in one variant and by a wrapped tool in the other; each run carries its
// own kernel or command and parser.
func TestVariantsChooseTheTool(t *testing.T) {
	c := mustParse(t, `
[campaign]
name = "lat"
[slurm]
nodes = 2
ntasks_per_node = 1
[[variant]]
name = "native"
kernel = "latency"
params = { sizes = "1-4MiB" }
[[variant]]
name = "openmpi"
command = ["osu_latency", "-m", "{param:range}"]
parser = "osu"
params = { range = "1:4194304" }
[[variant]]
name = "mpich"
command = ["/opt/mpich/osu_latency"]
[[benchmark]]
name = "latency"
parser = "auto"
`)
	steps := mustPlan(t, c).Jobs[0].Steps
	want := []string{
		"run --campaign lat --variant native --benchmark latency --kernel latency --param sizes=1-4MiB --results",
		`run --campaign lat --variant openmpi --benchmark latency --kernel exec --exec ["osu_latency","-m","1:4194304"] --parser osu --results`,
		`run --campaign lat --variant mpich --benchmark latency --kernel exec --exec ["/opt/mpich/osu_latency"] --parser auto --results`,
	}
	if len(steps) != len(want) {
		t.Fatalf("%d steps", len(steps))
	}
	for i, st := range steps {
		if got := strings.Join(st.RunnerArgs, " "); !strings.HasPrefix(got, want[i]) {
			t.Errorf("step %d:\n got %s\nwant %s …", i, got, want[i])
		}
	}
	// The campaign's benchmark is left as written; each run has its own.
	if b := c.Benchmarks[0]; b.Kernel != "" || b.Command != nil || steps[0].Benchmark.Kernel != "latency" || steps[1].Benchmark.Parser != "osu" {
		t.Errorf("benchmark %+v, runs %+v %+v", b, steps[0].Benchmark, steps[1].Benchmark)
	}
}

// TestBenchmarkSweepChoosesTheTool: a benchmark's sweep zips a label with
// a kernel and a command, one of them empty in each point.
func TestBenchmarkSweepChoosesTheTool(t *testing.T) {
	c := mustParse(t, `
[campaign]
name = "bw"
[slurm]
nodes = 2
ntasks_per_node = 1
[[benchmark]]
name = "bw"
kernel = "bw"
[benchmark.sweep]
"label.impl" = ["native", "openmpi"]
command = [[], ["osu_bw"]]
zip = [["label.impl", "command"]]
`)
	steps := mustPlan(t, c).Jobs[0].Steps
	for i, want := range []string{
		"--variant label.impl=native --benchmark bw --kernel bw --vparam",
		`--variant label.impl=openmpi,command=osu_bw --benchmark bw --kernel exec --exec ["osu_bw"] --parser auto --vparam`,
	} {
		if got := strings.Join(steps[i].RunnerArgs, " "); !strings.Contains(got, want) {
			t.Errorf("step %d: %s lacks %s", i, got, want)
		}
	}
}

// TestToolProblems: the combinations a variant or a sweep may not make,
// and the parameters checked against the kernel a run ends up with.
func TestToolProblems(t *testing.T) {
	checkProblems(t, []problemCase{
		{"a variant with a kernel and a command, and a parser for its kernel", problemHead + `[[benchmark]]
name = "lat"
[[variant]]
name = "a"
kernel = "latncy"
command = ["osu_latency"]
parser = "osu"
`, []string{
			`c.toml:10:1: variant[0].kernel: unknown kernel "latncy" (did you mean "latency"?)`,
			`c.toml:11:1: variant[0].command: a variant runs a native kernel or a command, not both`,
			`c.toml:12:1: variant[0].parser: is for external tools (command), not for kernel latncy`,
		}},
		{"unknown names in a variant and a sweep", problemHead + `[[benchmark]]
name = "lat"
kernel = "latency"
[[variant]]
name = "a"
command = ["osu_latency", "{peer}"]
parser = "osux"
[sweep]
kernel = ["bw", "bww"]
parser = ["imbb"]
`, []string{
			`c.toml:11:27: variant[0].command: unknown placeholder {peer} (known: {rank}, {size}, {host:N}, {node:N}, {hostname:N}, {workdir}, {param:NAME}, {{ for a brace)`,
			`c.toml:12:1: variant[0].parser: unknown parser "osux" (did you mean "osu"?)`,
			`c.toml:14:1: sweep.kernel: value 2: unknown kernel "bww" (did you mean "bw"?)`,
			`c.toml:15:1: sweep.parser: value 1: unknown parser "imbb" (did you mean "imb"?)`,
		}},
		{"a parser for the native kernel of a benchmark", problemHead + `[[benchmark]]
name = "lat"
kernel = "latency"
[[variant]]
name = "a"
parser = "osu"
`, []string{
			`c.toml:11:1: variant[0].parser: variant a: is for external tools (command); the run's kernel is latency`,
		}},
		{"params checked against the variant's kernel", problemHead + `[[benchmark]]
name = "lat"
kernel = "latency"
params = { sizes = "1-4MiB" }
[[variant]]
name = "native"
[[variant]]
name = "stream"
kernel = "stream"
`, []string{
			`c.toml:9:12: benchmark[0].params.sizes: variant stream: param "sizes": not a parameter of the stream kernel (known: array_size, iterations)`,
		}},
		{"a run with no tool", problemHead + `[[benchmark]]
name = "lat"
[[variant]]
name = "native"
kernel = "latency"
[[variant]]
name = "none"
`, []string{
			`c.toml:6:1: benchmark[0].kernel: variant none: runs nothing: set kernel (allreduce, alltoall, barrier, bcast, bibw, bw, hpl, latency, matrix, pairs, stream) or command, in the benchmark or in every variant`,
		}},
		{"a sweep point with a kernel and a command", problemHead + `[[benchmark]]
name = "lat"
[benchmark.sweep]
kernel = ["latency", ""]
command = [["osu_latency"], ["osu_bw"]]
zip = [["kernel", "command"]]
`, []string{
			`c.toml:10:1: benchmark[0].sweep.command: variant kernel=latency,command=osu_latency: kernel=latency,command=osu_latency: a run executes a native kernel, or a command read by a parser; leave one of them empty ("" or []) in each point`,
		}},
		{"too few ranks for the variant's kernel", `[campaign]
name = "q"
[slurm]
nodes = 1
[[benchmark]]
name = "b"
[[variant]]
name = "stream"
kernel = "stream"
[[variant]]
name = "bw"
kernel = "bw"
`, []string{
			`c.toml:12:1: variant[1].kernel: variant bw: 1 rank(s); kernel bw needs at least 2`,
		}},
	})
}
