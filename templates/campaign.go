package templates

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/sbench/sbench/runner"
)

// Campaign is a whole experiment as the user wrote it in TOML.
type Campaign struct {
	Campaign   Meta           `toml:"campaign"`
	Slurm      Slurm          `toml:"slurm"`
	Runner     Runner         `toml:"runner"`
	Benchmarks []Benchmark    `toml:"benchmark"`
	Sweep      map[string]any `toml:"sweep"`

	// File is the path the campaign was read from ("" for literal text).
	File string `toml:"-"`
	// sweepOrder is the sweep's keys in the order they are written, which is
	// the order variants are numbered in.
	sweepOrder []string
	index      *keyIndex
}

// Meta is the [campaign] table.
type Meta struct {
	Name        string            `toml:"name"`
	Description string            `toml:"description"`
	System      string            `toml:"system"`
	Labels      map[string]string `toml:"labels"`
	// ResultsDir is where jobs write their bundles and Slurm its output
	// files; relative paths are relative to the directory of submission.
	ResultsDir string `toml:"results_dir"`
	Repeats    int    `toml:"repeats"`
}

// Slurm is the [slurm] table: the job's resources and environment.
type Slurm struct {
	Partition     string            `toml:"partition"`
	Account       string            `toml:"account"`
	QOS           string            `toml:"qos"`
	Reservation   string            `toml:"reservation"`
	Time          string            `toml:"time"`
	Nodes         int               `toml:"nodes"`
	Ntasks        int               `toml:"ntasks"`
	NtasksPerNode int               `toml:"ntasks_per_node"`
	CPUsPerTask   int               `toml:"cpus_per_task"`
	Mem           string            `toml:"mem"`
	MemPerCPU     string            `toml:"mem_per_cpu"`
	Exclusive     bool              `toml:"exclusive"`
	Constraint    string            `toml:"constraint"`
	Gres          string            `toml:"gres"`
	Nodelist      string            `toml:"nodelist"`
	Exclude       string            `toml:"exclude"`
	JobName       string            `toml:"job_name"`
	Output        string            `toml:"output"`
	Error         string            `toml:"error"`
	Extra         []string          `toml:"extra"`
	Modules       []string          `toml:"modules"`
	Env           map[string]string `toml:"env"`
	Setup         []string          `toml:"setup"`
	Teardown      []string          `toml:"teardown"`
}

// Runner is the [runner] table: how sbench-runner is started.
type Runner struct {
	// Path of sbench-runner on the compute nodes; default "sbench-runner",
	// found through PATH (sbench submit puts its own directory first).
	Path             string `toml:"path"`
	BootstrapTimeout string `toml:"bootstrap_timeout"`
	Timeout          string `toml:"timeout"`
	// Bind is the address ranks listen on and advertise (e.g. an IPoIB
	// address); empty lets the runner choose.
	Bind string `toml:"bind"`
}

// Benchmark is one [[benchmark]] table.
type Benchmark struct {
	Name   string            `toml:"name"`
	Kernel string            `toml:"kernel"`
	Params map[string]any    `toml:"params"`
	Labels map[string]string `toml:"labels"`
}

// NativeKernels are the kernels sbench-runner runs itself, with the number of
// ranks each needs at least.
var NativeKernels = map[string]int{
	"latency": 2,
	"bw":      2,
}

// Problem is one thing wrong with a campaign, placed in its file.
type Problem struct {
	File      string
	Line, Col int
	Key       string
	Msg       string
}

func (p *Problem) Error() string {
	var b strings.Builder
	b.WriteString(p.File)
	if p.Line > 0 {
		fmt.Fprintf(&b, ":%d", p.Line)
		if p.Col > 0 {
			fmt.Fprintf(&b, ":%d", p.Col)
		}
	}
	b.WriteString(": ")
	if p.Key != "" {
		b.WriteString(p.Key + ": ")
	}
	b.WriteString(p.Msg)
	return b.String()
}

// Problems is every problem found in a campaign, in file order.
type Problems []*Problem

func (ps Problems) Error() string {
	lines := make([]string, len(ps))
	for i, p := range ps {
		lines[i] = p.Error()
	}
	return strings.Join(lines, "\n")
}

// Load reads and validates a campaign file.
func Load(path string) (*Campaign, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read campaign: %w", err)
	}
	return Parse(path, data)
}

// Parse decodes and validates campaign text; name is used in error messages.
// Unknown keys, wrong types and every semantic problem are reported together.
func Parse(name string, data []byte) (*Campaign, error) {
	c := &Campaign{File: name}
	md, err := toml.Decode(string(data), c)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return nil, Problems{{File: name, Line: pe.Position.Line, Col: pe.Position.Col, Key: pe.LastKey, Msg: pe.Message}}
		}
		// Type errors come as "toml: line N (last key "K"): msg".
		if m := typeErrRE.FindStringSubmatch(err.Error()); m != nil {
			line, _ := strconv.Atoi(m[1])
			col := 0
			if l, c := newKeyIndex(string(data)).lookup(m[2]); l == line {
				col = c
			}
			return nil, Problems{{File: name, Line: line, Col: col, Key: m[2], Msg: m[3]}}
		}
		return nil, Problems{{File: name, Msg: strings.TrimPrefix(err.Error(), "toml: ")}}
	}
	c.index = newKeyIndex(string(data))
	var ps Problems
	for _, k := range md.Undecoded() {
		line, col := c.index.lookup(k.String())
		ps = append(ps, &Problem{File: name, Line: line, Col: col, Key: k.String(), Msg: "unknown key"})
	}
	for _, k := range md.Keys() {
		if len(k) == 2 && k[0] == "sweep" {
			c.sweepOrder = append(c.sweepOrder, k[1])
		}
	}
	ps = append(ps, c.validate()...)
	if len(ps) > 0 {
		sort.SliceStable(ps, func(i, j int) bool { return ps[i].Line < ps[j].Line })
		return nil, ps
	}
	return c, nil
}

// problem places a semantic problem at the key it is about.
func (c *Campaign) problem(key, format string, args ...any) *Problem {
	line, col := 0, 0
	if c.index != nil {
		line, col = c.index.lookup(key)
	}
	return &Problem{File: c.File, Line: line, Col: col, Key: key, Msg: fmt.Sprintf(format, args...)}
}

var typeErrRE = regexp.MustCompile(`^toml: line (\d+) \(last key "([^"]*)"\): (.*)$`)

var timeRE = regexp.MustCompile(`^(\d+-)?\d+(:\d{1,2}){0,2}$|^UNLIMITED$|^INFINITE$`)

func (c *Campaign) validate() Problems {
	var ps Problems
	add := func(p *Problem) { ps = append(ps, p) }
	m := &c.Campaign
	if err := checkName(m.Name); err != nil {
		add(c.problem("campaign.name", "%v", err))
	}
	if m.Repeats < 0 {
		add(c.problem("campaign.repeats", "must not be negative"))
	}
	if m.ResultsDir != "" {
		if !pathRE.MatchString(m.ResultsDir) {
			add(c.problem("campaign.results_dir", "%q has a character that is not allowed in a results path (letters, digits, '.', '_', '-', '+', '@', '/')", m.ResultsDir))
		} else if err := checkDirective(m.ResultsDir); err != nil {
			add(c.problem("campaign.results_dir", "%v", err))
		}
	}
	for _, k := range sortedKeys(m.Labels) {
		if err := checkLabelKey(k); err != nil {
			add(c.problem("campaign.labels."+k, "%v", err))
		}
	}
	ps = append(ps, c.validateSlurm("slurm", &c.Slurm)...)
	r := &c.Runner
	for key, v := range map[string]string{"runner.bootstrap_timeout": r.BootstrapTimeout, "runner.timeout": r.Timeout} {
		if v != "" {
			if _, err := parseDuration(v); err != nil {
				add(c.problem(key, "%v", err))
			}
		}
	}
	if len(c.Benchmarks) == 0 {
		add(c.problem("benchmark", "the campaign has no [[benchmark]]"))
	}
	seen := map[string]bool{}
	for i, b := range c.Benchmarks {
		key := fmt.Sprintf("benchmark[%d]", i)
		if err := checkName(b.Name); err != nil {
			add(c.problem(key+".name", "%v", err))
		} else if seen[b.Name] {
			add(c.problem(key+".name", "%q is used by two benchmarks", b.Name))
		}
		seen[b.Name] = true
		if _, ok := NativeKernels[b.Kernel]; !ok {
			add(c.problem(key+".kernel", "unknown kernel %q (known: %s)", b.Kernel, strings.Join(sortedKeys(NativeKernels), ", ")))
		}
		params := map[string]string{}
		paramsOK := true
		for _, k := range sortedKeys(b.Params) {
			v, err := paramString(b.Params[k])
			if err != nil {
				add(c.problem(key+".params."+k, "%v", err))
				paramsOK = false
			}
			if err := checkParamKey(k); err != nil {
				add(c.problem(key+".params."+k, "%v", err))
				paramsOK = false
			}
			params[k] = v
		}
		// The runner's own check, so that a typo fails at validate time
		// rather than on the compute nodes.
		if _, known := NativeKernels[b.Kernel]; known && paramsOK {
			if _, err := runner.ParseKernelParams(b.Kernel, params); err != nil {
				add(c.problem(key+".params", "%v", err))
			}
		}
		for _, k := range sortedKeys(b.Labels) {
			if err := checkLabelKey(k); err != nil {
				add(c.problem(key+".labels."+k, "%v", err))
			}
		}
	}
	for _, k := range c.sweepOrder {
		ps = append(ps, c.validateSweepKey(k)...)
	}
	if len(ps) == 0 {
		// Resource checks need the variants: a sweep may set the node count.
		for _, v := range c.Variants() {
			ps = append(ps, c.checkResources(v)...)
		}
	}
	return ps
}

func (c *Campaign) validateSlurm(prefix string, s *Slurm) Problems {
	var ps Problems
	add := func(key, format string, args ...any) { ps = append(ps, c.problem(prefix+"."+key, format, args...)) }
	directives := map[string]string{
		"partition": s.Partition, "account": s.Account, "qos": s.QOS, "reservation": s.Reservation,
		"mem": s.Mem, "mem_per_cpu": s.MemPerCPU, "constraint": s.Constraint, "gres": s.Gres,
		"nodelist": s.Nodelist, "exclude": s.Exclude, "output": s.Output, "error": s.Error, "time": s.Time,
	}
	for _, k := range sortedKeys(directives) {
		if err := checkDirective(directives[k]); err != nil {
			add(k, "%v", err)
		}
	}
	if s.JobName != "" {
		if err := checkName(s.JobName); err != nil {
			add("job_name", "%v", err)
		}
	}
	if s.Time != "" && !timeRE.MatchString(s.Time) {
		add("time", "%q is not a Slurm time (minutes, MM:SS, HH:MM:SS, D-HH:MM:SS or UNLIMITED)", s.Time)
	}
	for name, v := range map[string]int{"nodes": s.Nodes, "ntasks": s.Ntasks, "ntasks_per_node": s.NtasksPerNode, "cpus_per_task": s.CPUsPerTask} {
		if v < 0 {
			add(name, "must not be negative (got %d)", v)
		}
	}
	for i, e := range s.Extra {
		if err := checkDirective(e); err != nil {
			add(fmt.Sprintf("extra[%d]", i), "%v", err)
		} else if !strings.HasPrefix(e, "-") {
			add(fmt.Sprintf("extra[%d]", i), "%q is not an sbatch option (it must start with '-')", e)
		}
	}
	for i, mod := range s.Modules {
		if mod == "" || strings.ContainsAny(mod, "\n\r\x00") {
			add(fmt.Sprintf("modules[%d]", i), "%q is not a module name", mod)
		}
	}
	for _, k := range sortedKeys(s.Env) {
		if !envNameRE.MatchString(k) {
			add("env."+k, "%q is not a valid environment variable name", k)
		}
		if strings.ContainsRune(s.Env[k], 0) {
			add("env."+k, "holds a NUL byte")
		}
	}
	return ps
}

// sweepable are the keys a [sweep] may vary besides env.NAME, param.NAME and
// label.NAME.
var sweepable = map[string]bool{
	"nodes": true, "ntasks": true, "ntasks_per_node": true, "cpus_per_task": true,
	"partition": true, "constraint": true, "time": true, "exclusive": true,
}

func (c *Campaign) validateSweepKey(k string) Problems {
	key := "sweep." + k
	var ps Problems
	vals, ok := c.Sweep[k].([]any)
	if !ok {
		return Problems{c.problem(key, "must be a list of values, e.g. %s = [1, 2]", k)}
	}
	if len(vals) == 0 {
		return Problems{c.problem(key, "is an empty list")}
	}
	prefix, name, dotted := strings.Cut(k, ".")
	switch {
	case dotted && prefix == "env":
		if !envNameRE.MatchString(name) {
			ps = append(ps, c.problem(key, "%q is not a valid environment variable name", name))
		}
	case dotted && prefix == "param":
		if err := checkParamKey(name); err != nil {
			ps = append(ps, c.problem(key, "%v", err))
		}
	case dotted && prefix == "label":
		if err := checkLabelKey(name); err != nil {
			ps = append(ps, c.problem(key, "%v", err))
		}
	case !dotted && sweepable[k]:
	default:
		known := sortedKeys(sweepable)
		ps = append(ps, c.problem(key, "cannot be swept (sweep one of %s, or env.NAME, param.NAME, label.NAME)", strings.Join(known, ", ")))
	}
	for i, v := range vals {
		s, err := paramString(v)
		if err != nil {
			ps = append(ps, c.problem(key, "value %d: %v", i+1, err))
			continue
		}
		if !dotted { // Slurm settings reach #SBATCH lines unquoted
			if err := checkDirective(s); err != nil {
				ps = append(ps, c.problem(key, "value %d: %v", i+1, err))
			}
		}
		switch k {
		case "nodes", "ntasks", "ntasks_per_node", "cpus_per_task":
			if n, ok := v.(int64); !ok || n < 1 {
				ps = append(ps, c.problem(key, "value %d: %v is not a positive integer", i+1, v))
			}
		case "exclusive":
			if _, ok := v.(bool); !ok {
				ps = append(ps, c.problem(key, "value %d: %v is not true or false", i+1, v))
			}
		case "time":
			if !timeRE.MatchString(s) {
				ps = append(ps, c.problem(key, "value %d: %q is not a Slurm time", i+1, s))
			}
		}
	}
	return ps
}

// checkResources checks one variant's node and task counts against what its
// benchmarks need.
func (c *Campaign) checkResources(v Variant) Problems {
	var ps Problems
	s := v.Slurm
	where := "slurm"
	if v.Name != DefaultVariant {
		where = "sweep"
	}
	if s.Nodes > 0 && s.NtasksPerNode > 0 && s.Ntasks > 0 && s.Nodes*s.NtasksPerNode != s.Ntasks {
		ps = append(ps, c.problem(where, "variant %s: nodes (%d) × ntasks_per_node (%d) = %d, but ntasks is %d",
			v.Name, s.Nodes, s.NtasksPerNode, s.Nodes*s.NtasksPerNode, s.Ntasks))
	}
	if s.Nodes > 0 && s.Ntasks > 0 && s.Ntasks < s.Nodes {
		ps = append(ps, c.problem(where, "variant %s: ntasks (%d) is less than nodes (%d)", v.Name, s.Ntasks, s.Nodes))
	}
	ranks := v.Ranks()
	for i, b := range c.Benchmarks {
		if need := NativeKernels[b.Kernel]; ranks < need {
			ps = append(ps, c.problem(fmt.Sprintf("benchmark[%d].kernel", i), "variant %s has %d rank(s); kernel %s needs at least %d",
				v.Name, ranks, b.Kernel, need))
		}
	}
	return ps
}

// pathRE is the character set of paths that reach #SBATCH lines unquoted.
var pathRE = regexp.MustCompile(`^[A-Za-z0-9._/+@-]+$`)

var paramKeyRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]*$`)

func checkParamKey(k string) error {
	if !paramKeyRE.MatchString(k) {
		return fmt.Errorf("%q is not a valid parameter name (letters, digits, '_')", k)
	}
	return nil
}

func checkLabelKey(k string) error {
	if !paramKeyRE.MatchString(k) {
		return fmt.Errorf("%q is not a valid label name (letters, digits, '_')", k)
	}
	return nil
}

// paramString formats a scalar TOML value the way it is passed on.
func paramString(v any) (string, error) {
	switch x := v.(type) {
	case string:
		if strings.ContainsRune(x, 0) {
			return "", fmt.Errorf("holds a NUL byte")
		}
		return x, nil
	case int64:
		return strconv.FormatInt(x, 10), nil
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64), nil
	case bool:
		return strconv.FormatBool(x), nil
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			s, err := paramString(e)
			if err != nil {
				return "", err
			}
			if _, nested := e.([]any); nested {
				return "", fmt.Errorf("nested lists are not allowed")
			}
			parts[i] = s
		}
		return strings.Join(parts, ","), nil
	}
	return "", fmt.Errorf("has type %T; want a string, number, boolean or list of those", v)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
