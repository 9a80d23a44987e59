package runargs

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/sbench/sbench/results"
)

func intp(n int) *int { return &n }

// TestRoundTrip sets every field, writes it with Argv and reads it back
// with Parse: the same Args. A field added to Args but not to Argv or to
// the flags fails here.
func TestRoundTrip(t *testing.T) {
	want := Args{
		Campaign: "fabric", Variant: "ib-x", Benchmark: "osu_bw", Kernel: ExecKernel,
		Params:     []KV{{"sizes", "1-4M"}, {"window", "64"}},
		Exec:       []string{"osu_bw", "-m", "1:4194304", "{host:1}", "a<b&c"},
		ExecRank:   map[int][]string{1: {"iperf3", "-s"}, 10: {"x"}, 2: {"y", ""}},
		Parser:     "osu",
		Output:     "np.out",
		StartDelay: Duration{500 * time.Millisecond, "500ms"},
		Files:      map[string][]byte{"HPL.dat": []byte("hello\n"), "b": {0, 1, 2}},
		WorkDir:    "/w",
		Extract: &results.Extract{Metrics: []results.MetricDef{
			{Name: "timesteps_per_s", Regex: `^Performance: .*, ([0-9.]+) timesteps/s`, Unit: "timesteps/s"},
			{Name: "temp", Regex: `^\s+(?P<step>\d+)\s+(?P<t>[0-9.]+)`, Value: "t", X: "step", XUnit: "steps", Better: "lower", Match: "each", File: "log.lammps"},
		}, Require: []string{"Total wall time"}, Reject: []string{"^ERROR", `"quoted" 'and' {braces}`}},
		VParams: []KV{{"transport", "ib"}, {"a", "x=y"}},
		Labels:  []KV{{"site", "lab"}},
		Checks:  []string{"bandwidth@4M>=1000", "gflops>=1"},
		Repeat:  intp(0),
		Results: "/r", BootstrapTimeout: Duration{90 * time.Second, "90s"}, Timeout: Duration{2 * time.Hour, "2h"},
		Bind: "10.0.0.1", Interface: "ib0", RunDir: "/run",
		PlanNodes: intp(2), PlanPPN: intp(1), Step: "3-intra", Session: "31.3",
	}
	v := reflect.ValueOf(want)
	for i := range v.NumField() {
		if v.Field(i).IsZero() {
			t.Errorf("field %s is not set: the round trip does not cover it", v.Type().Field(i).Name)
		}
	}
	argv := want.Argv()
	if argv[0] != "run" {
		t.Fatalf("argv %q", argv)
	}
	// Exec's flags are refused for a native kernel; Params are not
	// refused for exec here (the runner judges them).
	got, err := Parse(argv[1:], Args{})
	if err != nil {
		t.Fatalf("Parse(%q): %v", argv, err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("round trip:\n got %#v\nwant %#v", got, want)
	}
	if again := got.Argv(); !reflect.DeepEqual(again, argv) {
		t.Errorf("Argv after Parse:\n got %q\nwant %q", again, argv)
	}
}

// TestDefaults: a flag not given keeps its default, and Argv writes none
// of the defaults back.
func TestDefaults(t *testing.T) {
	defs := Args{Results: ".", Parser: "auto", BootstrapTimeout: Duration{D: time.Minute}, Timeout: Duration{D: 30 * time.Minute}}
	a, err := Parse([]string{"--campaign", "c", "--variant", "v", "--benchmark", "b", "--kernel", "latency"}, defs)
	if err != nil {
		t.Fatal(err)
	}
	if a.Results != "." || a.Parser != "auto" || a.BootstrapTimeout.D != time.Minute || a.Timeout.D != 30*time.Minute {
		t.Errorf("defaults lost: %+v", a)
	}
	if got := strings.Join(a.Argv(), " "); got != "run --campaign c --variant v --benchmark b --kernel latency --parser auto --results ." {
		t.Errorf("argv %q", got)
	}
}

func TestParseErrors(t *testing.T) {
	base := []string{"--campaign", "c", "--variant", "v", "--benchmark", "b", "--kernel", "latency"}
	exec := append(base[:6:6], "--kernel", "exec")
	base, exec = base[:len(base):len(base)], exec[:len(exec):len(exec)] // each case appends to its own copy
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--kernel", "latency"}, "missing --campaign, --variant, --benchmark"},
		{append(base, "extra"), `unexpected argument "extra"`},
		{append(base, "--param", "sizes"), `"sizes" is not key=value`},
		{append(base, "--label", "a=1", "--label", "a=2"), "a given twice"},
		{append(base, "--repeat", "-1"), `"-1" is not a non-negative integer`},
		{append(base, "--plan-nodes", "2"), "--plan-nodes and --plan-ppn go together"},
		{append(base, "--plan-nodes", "0", "--plan-ppn", "1"), "a placement needs at least 1 node"},
		{append(base, "--bootstrap-timeout", "0s"), "timeouts must be positive"},
		{append(base, "--timeout", "soon"), "invalid value \"soon\" for flag -timeout"},
		{append(base, "--parser", "osu", "--start-delay", "1s"), "--parser, --start-delay: only for --kernel exec"},
		{append(exec, "--exec", "osu_bw -m 1"), `--exec: command "osu_bw -m 1": not a JSON array of strings`},
		{append(exec, "--exec", `[]`), "no program to run"},
		{append(exec, "--exec", `[""]`), "no program to run"},
		{append(exec, "--exec", `["a", 1]`), "not a JSON array of strings"},
		{append(exec, "--exec", `["a"] ["b"]`), "trailing data"},
		{append(exec, "--exec", `["a", "x\u0000y"]`), "NUL byte"},
		{append(exec, "--exec-rank", `1=["a"]`, "--exec-rank", `1=["b"]`), "rank 1 given twice"},
		{append(exec, "--exec-rank", `one=["a"]`), "want RANK=JSON"},
		{append(exec, "--exec-rank", `-1=["a"]`), "want RANK=JSON"},
		{append(exec, "--exec-rank", `1=["a"`), "--exec-rank 1: command"},
		{append(exec, "--file", "a/b=aGk="), `--file "a/b": want a plain file name`},
		{append(exec, "--file", "noequals"), "want NAME=BASE64"},
		{append(exec, "--file", "x=!!!"), "content is not base64"},
		{append(base, "--extract", `{"require":["x"]}`), "--extract: only for --kernel exec"},
		{append(exec, "--extract", `{"metrics":[{"name":"a","regexp":"x"}]}`), `unknown field "regexp"`},
		{append(exec, "--extract", `{"require":["x"]} {}`), "not a JSON object"},
	} {
		if _, err := Parse(tt.args, Args{}); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Parse(%q): %v, want %q", tt.args, err, tt.want)
		}
	}
	a, err := Parse(append(exec, "--file", "HPL.dat=aGVsbG8", "--exec-rank", `1=["iperf3","-s"]`), Args{})
	if err != nil || string(a.Files["HPL.dat"]) != "hello" || strings.Join(a.ExecRank[1], " ") != "iperf3 -s" {
		t.Errorf("%q %v %v", a.Files, a.ExecRank, err)
	}
}
