// Package runargs is the command line of `sbench-runner run`, as one type:
// the planner (package campaign) fills an Args and writes it with Argv
// into the job scripts; sbench-runner reads it back with Parse. Neither
// side spells a flag the other does not know, and a test holds the two to
// each other.
//
// It reads the command line's syntax only (key=value pairs, JSON commands,
// base64 files, durations, flags that go together); what the values mean
// (a kernel's parameters, a check, placeholders in a command) the runner
// judges. The package is a leaf below both campaign and runner.
package runargs

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sbench/sbench/kernels"
	"github.com/sbench/sbench/results"
)

// ExecKernel is the kernel that wraps a real tool.
const ExecKernel = "exec"

// KV is one KEY=VALUE of a repeatable flag, in the order given.
type KV struct{ Key, Value string }

// Duration is a duration as written ("90s", "2h"): Argv writes back the
// text it was given, else D's own. Text is empty when the flag was not
// given.
type Duration struct {
	D    time.Duration
	Text string
}

func (d *Duration) String() string {
	if d.Text != "" {
		return d.Text
	}
	return d.D.String()
}

func (d *Duration) Set(s string) error {
	v, err := time.ParseDuration(s)
	if err != nil {
		return errors.New("parse error")
	}
	d.D, d.Text = v, s
	return nil
}

// Args are the flags of `sbench-runner run`, in the order Argv writes
// them. A zero field is a flag not given.
type Args struct {
	Campaign, Variant, Benchmark string
	// Kernel is a native kernel of package kernels, or ExecKernel.
	Kernel string
	// Params are the native kernel's parameters (--param).
	Params []KV

	// The exec kernel's: the command every rank runs (--exec), the
	// commands of given ranks (--exec-rank), the output's parser, the
	// file to parse instead of rank 0's output, rank 0's delay, the input
	// files rank 0 writes (--file NAME=BASE64) and the commands' work
	// directory.
	Exec       []string
	ExecRank   map[int][]string
	Parser     string
	Output     string
	StartDelay Duration
	Files      map[string][]byte
	WorkDir    string
	// Extract is the user-defined metrics and sanity patterns applied to
	// the output after the parser (--extract JSON).
	Extract *results.Extract

	// VParams are the variant's sweep parameters, Labels the run's labels
	// (copied to the bundle); Checks the validity checks' specs.
	VParams []KV
	Labels  []KV
	Checks  []string
	Repeat  *int

	Results          string
	BootstrapTimeout Duration
	Timeout          Duration
	Bind             string
	Interface        string
	RunDir           string

	// Where the launch runs, which the scripts and sbench local add.
	PlanNodes, PlanPPN *int
	Step, Session      string
}

// Argv is the runner's command line after its binary: "run" and the
// flags.
func (a *Args) Argv() []string {
	out := []string{"run"}
	str := func(flag, v string) {
		if v != "" {
			out = append(out, "--"+flag, v)
		}
	}
	kvs := func(flag string, kv []KV) {
		for _, p := range kv {
			out = append(out, "--"+flag, p.Key+"="+p.Value)
		}
	}
	num := func(flag string, n *int) {
		if n != nil {
			out = append(out, "--"+flag, strconv.Itoa(*n))
		}
	}
	str("campaign", a.Campaign)
	str("variant", a.Variant)
	str("benchmark", a.Benchmark)
	str("kernel", a.Kernel)
	kvs("param", a.Params)
	if len(a.Exec) > 0 {
		str("exec", jsonArgv(a.Exec))
	}
	for _, r := range slices.Sorted(maps.Keys(a.ExecRank)) {
		out = append(out, "--exec-rank", strconv.Itoa(r)+"="+jsonArgv(a.ExecRank[r]))
	}
	str("parser", a.Parser)
	str("output", a.Output)
	str("start-delay", a.StartDelay.Text)
	for _, name := range slices.Sorted(maps.Keys(a.Files)) {
		out = append(out, "--file", name+"="+base64.StdEncoding.EncodeToString(a.Files[name]))
	}
	str("workdir", a.WorkDir)
	if a.Extract != nil {
		data, _ := json.Marshal(a.Extract)
		str("extract", string(data))
	}
	kvs("vparam", a.VParams)
	kvs("label", a.Labels)
	for _, c := range a.Checks {
		out = append(out, "--check", c)
	}
	num("repeat", a.Repeat)
	str("results", a.Results)
	str("bootstrap-timeout", a.BootstrapTimeout.Text)
	str("timeout", a.Timeout.Text)
	str("bind", a.Bind)
	str("interface", a.Interface)
	str("rundir", a.RunDir)
	num("plan-nodes", a.PlanNodes)
	num("plan-ppn", a.PlanPPN)
	str("step", a.Step)
	str("session", a.Session)
	return out
}

func jsonArgv(argv []string) string {
	data, _ := json.Marshal(argv)
	return string(data)
}

// FlagSet binds the flags of `sbench-runner run` to a, its values their
// defaults (the help shows them).
func (a *Args) FlagSet() *flag.FlagSet {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&a.Campaign, "campaign", a.Campaign, "campaign `name` (required)")
	fs.StringVar(&a.Variant, "variant", a.Variant, "variant `name` (required)")
	fs.StringVar(&a.Benchmark, "benchmark", a.Benchmark, "benchmark `name`, used in the bundle's file name (required)")
	fs.StringVar(&a.Kernel, "kernel", a.Kernel, "`kernel`: a native kernel ("+strings.Join(kernels.Names(), ", ")+") or exec to wrap a tool (required)")
	fs.StringVar(&a.Results, "results", a.Results, "`dir` where rank 0 writes the bundle ($SBENCH_RESULTS_DIR)")
	fs.StringVar(&a.RunDir, "rundir", a.RunDir, "shared `dir` for the rendezvous file ($SBENCH_RUN_DIR, else RESULTS/.rendezvous)")
	fs.Var(&a.BootstrapTimeout, "bootstrap-timeout", "how long ranks wait for each other, a `duration` such as 90s ($SBENCH_BOOTSTRAP_TIMEOUT)")
	fs.Var(&a.Timeout, "timeout", "deadline of the whole run, a `duration` such as 2h ($SBENCH_TIMEOUT)")
	fs.StringVar(&a.Bind, "bind", a.Bind, "`IP` to listen on and advertise ($SBENCH_BIND; default all interfaces)")
	fs.StringVar(&a.Interface, "interface", a.Interface, "network interface `NAME` (ib0 …) whose address on this node to listen on and advertise, instead of --bind")
	fs.StringVar(&a.Session, "session", a.Session, "`ID` naming the rendezvous, the same on every rank (default: the job and step ids, or mpirun's job); attempt k of a requeued job adds .r<k>")
	fs.StringVar(&a.Step, "step", a.Step, "sbench's step `ID` (3, 3-intra …), for the bundle's name and job step (default: Slurm's step id)")
	fs.Var(&optInt{&a.Repeat}, "repeat", "repetition index `N` of this run, recorded in the bundle's params and samples")
	fs.Func("exec", "exec: the command every rank runs, a `JSON` array of strings such as '[\"osu_bw\",\"-m\",\"1:4194304\"]'", func(s string) error {
		argv, err := ParseArgv(s)
		if err != nil {
			return fmt.Errorf("--exec: %w", err)
		}
		a.Exec = argv
		return nil
	})
	fs.StringVar(&a.Parser, "parser", a.Parser, "exec: the output's format `name` (a parser, auto to detect it, or none for a command without figures: judged by its exit status, timed as wall_time)")
	fs.StringVar(&a.Output, "output", a.Output, "exec: parse this `file` (relative to the work dir) instead of rank 0's standard output")
	fs.StringVar(&a.WorkDir, "workdir", a.WorkDir, "exec: the commands' working `dir` (default RESULTS/work/SESSION)")
	fs.Func("extract", "exec: user-defined metrics and sanity patterns read from the output after the parser, a `JSON` object {\"metrics\":[{\"name\",\"regex\",\"value\",\"unit\",…}],\"require\":[…],\"reject\":[…]}", func(s string) error {
		var e results.Extract
		dec := json.NewDecoder(strings.NewReader(s))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&e); err != nil || dec.More() {
			return fmt.Errorf("--extract %.60q: not a JSON object of metrics, require and reject: %v", s, err)
		}
		a.Extract = &e
		return nil
	})
	fs.Var(&a.StartDelay, "start-delay", "exec: how long rank 0 waits after the other ranks' commands started, a `duration`")
	fs.Var(&kvFlag{&a.Params}, "param", "native kernel parameter `key=value` (repeatable)")
	fs.Var(&kvFlag{&a.VParams}, "vparam", "the variant's sweep parameter `key=value`, copied to the bundle (repeatable)")
	fs.Var(&kvFlag{&a.Labels}, "label", "label `key=value`, copied to the bundle (repeatable)")
	fs.Var(&optInt{&a.PlanNodes}, "plan-nodes", "the `N` nodes the launch was meant to place the ranks on (with --plan-ppn); a run that ran otherwise is invalid")
	fs.Var(&optInt{&a.PlanPPN}, "plan-ppn", "at most `K` ranks on each of the planned nodes (with --plan-nodes)")
	fs.Func("check", "validity check `spec` such as 'bandwidth@4194304>=3000' or 'gflops>=100' (repeatable)", func(s string) error {
		a.Checks = append(a.Checks, s)
		return nil
	})
	fs.Var(&mapFlag[int, []string]{&a.ExecRank, parseRankArgv, func(r int) string { return fmt.Sprintf("rank %d", r) }}, "exec-rank", "exec: rank N runs this command instead of --exec, `N=JSON` (repeatable)")
	fs.Var(&mapFlag[string, []byte]{&a.Files, parseFile, nil}, "file", "exec: an input file rank 0 writes into the work dir, `NAME=BASE64` (repeatable)")
	return fs
}

// Parse reads the arguments after "run"; defaults holds the values of the
// flags not given. Its errors name the flag; flag.ErrHelp asks for the
// help.
func Parse(args []string, defaults Args) (Args, error) {
	a := defaults
	fs := a.FlagSet()
	if err := fs.Parse(args); err != nil {
		return a, err
	}
	if fs.NArg() > 0 {
		return a, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	var missing []string
	for _, f := range []struct{ name, val string }{
		{"--campaign", a.Campaign}, {"--variant", a.Variant}, {"--benchmark", a.Benchmark}, {"--kernel", a.Kernel},
	} {
		if strings.TrimSpace(f.val) == "" {
			missing = append(missing, f.name)
		}
	}
	if len(missing) > 0 {
		return a, fmt.Errorf("missing %s", strings.Join(missing, ", "))
	}
	switch {
	case (a.PlanNodes == nil) != (a.PlanPPN == nil):
		return a, errors.New("--plan-nodes and --plan-ppn go together")
	case a.PlanNodes != nil && (*a.PlanNodes < 1 || *a.PlanPPN < 1):
		return a, fmt.Errorf("--plan-nodes %d --plan-ppn %d: a placement needs at least 1 node and 1 rank per node", *a.PlanNodes, *a.PlanPPN)
	case a.BootstrapTimeout.Text != "" && a.BootstrapTimeout.D <= 0 || a.Timeout.D < 0:
		return a, errors.New("timeouts must be positive")
	}
	if a.Kernel != ExecKernel {
		var given []string
		fs.Visit(func(f *flag.Flag) {
			switch f.Name {
			case "exec", "exec-rank", "parser", "output", "workdir", "file", "start-delay", "extract":
				given = append(given, "--"+f.Name)
			}
		})
		if len(given) > 0 {
			return a, fmt.Errorf("%s: only for --kernel exec", strings.Join(given, ", "))
		}
	}
	return a, nil
}

// Map is kv as a map (Parse has refused a key given twice).
func Map(kv []KV) map[string]string {
	if len(kv) == 0 {
		return nil
	}
	m := make(map[string]string, len(kv))
	for _, p := range kv {
		m[p.Key] = p.Value
	}
	return m
}

// Limits on an exec command line, so that a broken template is an error
// rather than a command the kernel refuses at exec time.
const (
	maxArgs   = 4096
	maxArgLen = 128 << 10
)

// ParseArgv reads a command as a JSON array of strings, as --exec gives
// it: ["osu_bw","-m","1:4194304"]. The runner never hands it to a shell;
// it checks the placeholders.
func ParseArgv(text string) ([]string, error) {
	var argv []string
	dec := json.NewDecoder(strings.NewReader(text))
	if err := dec.Decode(&argv); err != nil {
		return nil, fmt.Errorf("command %.60q: not a JSON array of strings: %w", text, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("command %.60q: trailing data after the JSON array", text)
	}
	if len(argv) == 0 || argv[0] == "" {
		return nil, fmt.Errorf("command %.60q: no program to run", text)
	}
	if len(argv) > maxArgs {
		return nil, fmt.Errorf("command %.60q: %d arguments, more than %d", text, len(argv), maxArgs)
	}
	for i, a := range argv {
		if strings.IndexByte(a, 0) >= 0 || len(a) > maxArgLen {
			return nil, fmt.Errorf("command %.60q: argument %d has a NUL byte or is over %d bytes", text, i, maxArgLen)
		}
	}
	return argv, nil
}

// CheckFileName refuses an input file name that is not a plain name in the
// work directory.
func CheckFileName(name string) error {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\x00") || len(name) > 255 {
		return fmt.Errorf("--file %q: want a plain file name, without '/'", name)
	}
	return nil
}

// parseFile reads --file NAME=BASE64.
func parseFile(s string) (string, []byte, error) {
	name, enc, ok := strings.Cut(s, "=")
	if !ok {
		return "", nil, fmt.Errorf("--file %.40q: want NAME=BASE64", s)
	}
	if err := CheckFileName(name); err != nil {
		return "", nil, err
	}
	data, err := base64.StdEncoding.DecodeString(enc)
	if err != nil {
		if data, err = base64.RawStdEncoding.DecodeString(enc); err != nil {
			return "", nil, fmt.Errorf("--file %s: content is not base64: %w", name, err)
		}
	}
	return name, data, nil
}

// parseRankArgv reads --exec-rank N=JSON.
func parseRankArgv(s string) (int, []string, error) {
	n, argv, ok := strings.Cut(s, "=")
	r, err := strconv.Atoi(strings.TrimSpace(n))
	if !ok || err != nil || r < 0 {
		return 0, nil, fmt.Errorf("--exec-rank %.40q: want RANK=JSON, e.g. 1='[\"iperf3\",\"-s\"]'", s)
	}
	a, err := ParseArgv(argv)
	if err != nil {
		return 0, nil, fmt.Errorf("--exec-rank %d: %w", r, err)
	}
	return r, a, nil
}

// optInt is a non-negative integer flag that knows whether it was given.
type optInt struct{ p **int }

func (f *optInt) String() string { return "" }

func (f *optInt) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return fmt.Errorf("%q is not a non-negative integer", s)
	}
	*f.p = &n
	return nil
}

// kvFlag collects a repeatable key=value flag, each key once.
type kvFlag struct{ kv *[]KV }

func (f *kvFlag) String() string { return "" }

func (f *kvFlag) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	k = strings.TrimSpace(k)
	if !ok || k == "" {
		return fmt.Errorf("%q is not key=value", s)
	}
	if slices.ContainsFunc(*f.kv, func(p KV) bool { return p.Key == k }) {
		return fmt.Errorf("%s given twice", k)
	}
	*f.kv = append(*f.kv, KV{k, v})
	return nil
}

// mapFlag collects a repeatable flag into a map (--exec-rank N=JSON,
// --file NAME=BASE64), each key once; name, if set, says a key in the
// error.
type mapFlag[K comparable, V any] struct {
	m     *map[K]V
	parse func(string) (K, V, error)
	name  func(K) string
}

func (f *mapFlag[K, V]) String() string { return "" }

func (f *mapFlag[K, V]) Set(s string) error {
	k, v, err := f.parse(s)
	if err != nil {
		return err
	}
	if _, dup := (*f.m)[k]; dup {
		if f.name != nil {
			return fmt.Errorf("%s given twice", f.name(k))
		}
		return fmt.Errorf("%v given twice", k)
	}
	if *f.m == nil {
		*f.m = map[K]V{}
	}
	(*f.m)[k] = v
	return nil
}
