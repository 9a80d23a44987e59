package main

import (
	"context"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/sbench/sbench/campaign"
	"github.com/sbench/sbench/internal/golden"
	"github.com/sbench/sbench/internal/testenv"
	"github.com/sbench/sbench/kernels"
	"github.com/sbench/sbench/results"
)

// clearEnv unsets the variables that change the command's defaults.
func clearEnv(t *testing.T) {
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "SLURM") || strings.HasPrefix(k, "SBENCH_") {
			t.Setenv(k, "")
			os.Unsetenv(k)
		}
	}
}

func runCLI(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return testenv.CLI(context.Background(), run, exitCode, args...)
}

func TestHelp(t *testing.T) {
	clearEnv(t)
	for _, tt := range []struct {
		args   []string
		golden string
	}{
		{[]string{"--help"}, "help.stdout"},
		{[]string{"help"}, "help.stdout"},
		{[]string{"run", "--help"}, "run-help.stdout"},
		{[]string{"run", "-h"}, "run-help.stdout"},
	} {
		stdout, stderr, code := runCLI(t, tt.args...)
		if code != exitOK || stderr != "" {
			t.Errorf("%v: exit %d, stderr %q", tt.args, code, stderr)
		}
		golden.Check(t, filepath.Join("testdata", tt.golden), stdout)
	}
}

// TestHelpListsTheKernels holds run --help to package kernels' table:
// every kernel with what it measures and its parameters' defaults, every
// parameter with its meaning.
func TestHelpListsTheKernels(t *testing.T) {
	clearEnv(t)
	stdout, _, _ := runCLI(t, "run", "--help")
	help := strings.Join(strings.Fields(stdout), " ")
	for _, k := range kernels.All() {
		if want := k.Name + " " + k.Measures + "; " + kernelParams(k); !strings.Contains(help, want) {
			t.Errorf("run --help lacks %q", want)
		}
	}
	for _, p := range kernels.ParamDocs() {
		if want := p.Name + " " + p.Value + "; " + strings.Join(p.Kernels, ", ") + ": " + p.Doc; !strings.Contains(help, want) {
			t.Errorf("run --help lacks %q", want)
		}
	}
	if want := "(" + strings.Join(kernels.Names(), ", ") + ")"; !strings.Contains(help, want) {
		t.Errorf("--kernel's help lacks %q", want)
	}
}

func TestVersion(t *testing.T) {
	stdout, _, code := runCLI(t, "version")
	if code != exitOK || stdout != "sbench-runner dev\n" {
		t.Errorf("exit %d, stdout %q", code, stdout)
	}
}

// slurmEnv is rank 0 of a 2-rank srun step.
var slurmEnv = map[string]string{
	"SLURM_PROCID": "0", "SLURM_NTASKS": "2", "SLURM_LOCALID": "0", "SLURM_NODEID": "0",
	"SLURM_JOB_ID": "31", "SLURM_STEP_ID": "2", "SLURM_STEP_NODELIST": "n[1-2]",
}

func TestUsageErrors(t *testing.T) {
	clearEnv(t)
	base := []string{"run", "--campaign", "c", "--variant", "v", "--benchmark", "b", "--kernel", "latency"}
	for _, tt := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{nil, nil, "no command given"},
		{[]string{"bench"}, nil, `unknown command "bench"`},
		{[]string{"run", "--kernel", "latency"}, nil, "missing --campaign, --variant, --benchmark"},
		{append(base[:8:8], "pingpong"), nil, `unknown kernel "pingpong"`},
		{append(base, "--param", "sizes"), nil, `invalid value "sizes" for flag -param: "sizes" is not key=value`},
		{append(base, "--param", "window=8"), nil, `param "window": not a parameter of the latency kernel`},
		{append(base, "--label", "a=1", "--label", "a=2"), nil, "a given twice"},
		{append(base, "--bogus"), nil, "flag provided but not defined: -bogus"},
		{append(base, "extra"), nil, `unexpected argument "extra"`},
		{[]string{"run", "--campaign", "c", "--variant", "v", "--benchmark", "../x", "--kernel", "bw"}, nil, `benchmark name "../x"`},
		{base, map[string]string{"SBENCH_TIMEOUT": "soon"}, `SBENCH_TIMEOUT="soon" is not a positive duration`},
		{base, nil, "not started by srun, mpirun or sbench local: slurm environment: SLURM_PROCID is not set"},
		{append(base, "--exec", `["true"]`), nil, "--exec: only for --kernel exec"},
		{append(base, "--parser", "osu", "--start-delay", "1s"), nil, "--parser, --start-delay: only for --kernel exec"},
		{append(base[:8:8], "exec", "--exec", "osu_bw -m 1"), nil, "--exec: command \"osu_bw -m 1\": not a JSON array of strings"},
		{append(base[:8:8], "exec", "--param", "sizes=1"), nil, `param "sizes": the exec kernel takes no parameters`},
		{append(base[:8:8], "exec", "--exec-rank", `1=["a"]`, "--exec-rank", `1=["b"]`), nil, "rank 1 given twice"},
		{append(base[:8:8], "exec", "--exec-rank", `one=["a"]`), nil, "want RANK=JSON"},
		{append(base[:8:8], "exec", "--file", "a/b=aGk="), nil, `--file "a/b": want a plain file name`},
		{append(base, "--check", "bandwidth"), nil, `check "bandwidth": no comparison`},
		{append(base, "--repeat", "-1"), nil, `invalid value "-1" for flag -repeat: "-1" is not a non-negative integer`},
		{append(base, "--step", "3-n1.x"), slurmEnv, `step id "3-n1.x": only letters, digits, '_', '+' and '-' are allowed`},
		{append(base, "--session", "a/b"), slurmEnv, `session "a/b": use 1 to 128 letters`},
		{base, merge(slurmEnv, map[string]string{"SLURM_RESTART_COUNT": "x"}), `bad restart count: SLURM_RESTART_COUNT="x" is not a non-negative integer`},
		{append(base[:8:8], "exec", "--exec", `["echo","{host:2}"]`), slurmEnv, "--exec: argument 1: {host:2}: the step has 2 ranks"},
		{append(base[:8:8], "exec", "--exec-rank", `1=["true"]`), slurmEnv, "rank 0 has no command and there is no --output file"},
		{append(base[:8:8], "exec", "--exec", `["true"]`, "--parser", "nope"), slurmEnv, `--parser "nope": unknown`},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			_, stderr, code := runCLI(t, tt.args...)
			if code != exitUsage || !strings.Contains(stderr, tt.want) || !strings.HasSuffix(stderr, "Run 'sbench-runner --help' for usage.\n") {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, stderr, tt.want)
			}
		})
	}
}

func merge(a, b map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

// TestRunFailureExitsOne runs a real, if hopeless, step in-process: one
// rank cannot ping-pong, so rank 0 writes a failed bundle and exits 1.
func TestRunFailureExitsOne(t *testing.T) {
	clearEnv(t)
	dir := t.TempDir()
	for k, v := range map[string]string{
		"SLURM_PROCID": "0", "SLURM_NTASKS": "1", "SLURM_LOCALID": "0", "SLURM_NODEID": "0",
		"SLURM_JOB_ID": "31", "SLURM_STEP_ID": "2", "SLURM_STEP_NODELIST": "n1", "SBENCH_TOKEN": "x",
		"SBENCH_BIND": "127.0.0.1", "SBENCH_RESULTS_DIR": dir,
	} {
		t.Setenv(k, v)
	}
	stdout, stderr, code := runCLI(t, "run", "--campaign", "c", "--variant", "v", "--benchmark", "solo", "--kernel", "latency", "--param", "sizes=1")
	path := filepath.Join(dir, "31.2.solo.json")
	if code != exitFailed || stdout != path+"\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if want := "sbench-runner: rank 0 (node n1): the latency kernel needs 2 ranks; the step has 1\n"; !strings.HasSuffix(stderr, want) {
		t.Errorf("stderr %q, want %q", stderr, want)
	}
	b, err := results.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if b.Status != results.StatusFailed || strings.Join(b.Benchmark.Command, " ") != "sbench-runner run --campaign c --variant v --benchmark solo --kernel latency --param sizes=1" {
		t.Errorf("status %s, command %q", b.Status, b.Benchmark.Command)
	}
}

// TestPlanRoundTrip holds the runner's flags to what sbench's scripts
// and sbench local pass (campaign.PlanArgs): a one-rank STREAM run on n1
// planned as 1 node × 1 rank is ok; planned as 2 nodes × 1 rank it is
// measured and invalid, both placements in its reason.
func TestPlanRoundTrip(t *testing.T) {
	clearEnv(t)
	dir := t.TempDir()
	for k, v := range map[string]string{
		"SLURM_PROCID": "0", "SLURM_NTASKS": "1", "SLURM_LOCALID": "0", "SLURM_NODEID": "0", "SLURMD_NODENAME": "n1",
		"SLURM_JOB_ID": "32", "SLURM_STEP_NODELIST": "n1", "SBENCH_TOKEN": "x",
		"SBENCH_BIND": "127.0.0.1", "SBENCH_RESULTS_DIR": dir,
	} {
		t.Setenv(k, v)
	}
	for _, tt := range []struct {
		nodes, perNode int
		status         results.Status
		reason         string
	}{
		{1, 1, results.StatusOK, ""},
		{2, 1, results.StatusInvalid, "placement: planned 2 nodes × 1 rank; ran on 1 node: n1 rank 0"},
		{1, 2, results.StatusOK, ""}, // a node may hold fewer ranks than planned at most
	} {
		step := fmt.Sprintf("%dx%d", tt.nodes, tt.perNode)
		args := append([]string{"run", "--campaign", "c", "--variant", "v", "--benchmark", "stream", "--kernel", "stream",
			"--param", "array_size=1000", "--param", "iterations=2", "--step", step}, campaign.PlanArgs(tt.nodes, tt.perNode)...)
		stdout, stderr, code := runCLI(t, args...)
		path := filepath.Join(dir, "32."+step+".stream.json")
		if code != exitOK || stdout != path+"\n" {
			t.Fatalf("%s: exit %d, stdout %q, stderr %q", step, code, stdout, stderr)
		}
		b, err := results.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if b.Status != tt.status || b.Error != tt.reason || len(b.Samples) == 0 {
			t.Errorf("%s: status %s, error %q, %d samples; want %s, %q", step, b.Status, b.Error, len(b.Samples), tt.status, tt.reason)
		}
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--plan-nodes", "2"}, "--plan-nodes and --plan-ppn go together"},
		{[]string{"--plan-nodes", "0", "--plan-ppn", "1"}, "a placement needs at least 1 node and 1 rank per node"},
	} {
		_, stderr, code := runCLI(t, append([]string{"run", "--campaign", "c", "--variant", "v", "--benchmark", "stream", "--kernel", "stream"}, tt.args...)...)
		if code != exitUsage || !strings.Contains(stderr, tt.want) {
			t.Errorf("%q: exit %d, stderr %q; want 2 and %q", tt.args, code, stderr, tt.want)
		}
	}
}

func TestMain(m *testing.M) {
	code := m.Run()
	testenv.RemoveBuilt()
	os.Exit(code)
}

// build compiles the command as shipped.
func build(tb testing.TB) string {
	tb.Helper()
	return testenv.Build(tb, ".")
}

func TestBinaryIsStatic(t *testing.T) {
	bin := build(t)
	f := openELF(t, bin, "the binary")
	if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
		t.Errorf("the binary needs shared libraries %v", libs)
	}
	if file, err := exec.LookPath("file"); err == nil {
		out, err := exec.Command(file, bin).Output()
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(out), "statically linked") {
			t.Errorf("file(1) says: %s", out)
		}
	}
	st, _ := os.Stat(bin)
	t.Logf("binary size %.1f MB", float64(st.Size())/1e6)
}

// TestBuildIsQuietAndStatic builds the runner with the very command
// `make build` (and so `make install`) runs: CGO_ENABLED=0 with the netgo
// and osusergo tags, so that package net's resolver is Go's and the
// binary one static file. The build prints nothing (no glibc warning about
// getaddrinfo in a static binary) and needs no shared library.
func TestBuildIsQuietAndStatic(t *testing.T) {
	build(t) // for the skip rule
	testenv.LookPath(t, "make", "make")
	bin := t.TempDir()
	goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
	dry := exec.Command("make", "-s", "-n", "build", "BIN="+bin, "GO="+goTool, "VERSION=test")
	dry.Dir = "../.."
	out, err := dry.Output()
	if err != nil {
		t.Fatalf("make -n build: %v", err)
	}
	var line string
	for _, l := range strings.Split(string(out), "\n") {
		if strings.Contains(l, "./cmd/sbench-runner") && strings.Contains(l, " build ") {
			line = l
		}
	}
	for _, want := range []string{"CGO_ENABLED=0", "-tags netgo,osusergo"} {
		if !strings.Contains(line, want) {
			t.Errorf("the Makefile builds sbench-runner without %s: %q", want, line)
		}
	}
	cmd := exec.Command("sh", "-c", line)
	cmd.Dir = "../.."
	if out, err := cmd.CombinedOutput(); err != nil || len(out) > 0 {
		t.Fatalf("%s: %v\n%s", line, err, out)
	}
	f := openELF(t, filepath.Join(bin, "sbench-runner"), "make's build")
	if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
		t.Errorf("make's build needs shared libraries %v", libs)
	}
}

// openELF opens a binary, closed when the test ends, and checks that it
// has no dynamic loader: what names it in the failure.
func openELF(t *testing.T, bin, what string) *elf.File {
	t.Helper()
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("%s has a dynamic loader (PT_INTERP)", what)
		}
	}
	return f
}

// BenchmarkStartup measures what srun pays per rank before any work:
// exec of `sbench-runner version` to its exit.
func BenchmarkStartup(b *testing.B) {
	bin := build(b)
	for i := 0; i < b.N; i++ {
		if out, err := exec.Command(bin, "version").Output(); err != nil || !strings.HasPrefix(string(out), "sbench-runner ") {
			b.Fatalf("%q, %v", out, err)
		}
	}
}
