package templates

import (
	"fmt"
	"path"
	"strconv"
	"strings"
	"time"
)

// DefaultVariant names the single variant of a campaign without a sweep.
const DefaultVariant = "default"

// DefaultResultsDir is where bundles and Slurm output go when the campaign
// does not say.
const DefaultResultsDir = "sbench-runs"

// Setting is one swept key and the value a variant gives it.
type Setting struct {
	Key, Value string
	raw        any
}

// Variant is one point of the campaign's sweep.
type Variant struct {
	Index int
	// Name is "key=value,key=value" in sweep order, or DefaultVariant.
	Name string
	// Slug is Name made safe for file and job names.
	Slug     string
	Settings []Setting
	// Slurm is the campaign's [slurm] table with this variant's settings.
	Slurm  Slurm
	Env    map[string]string
	Params map[string]string // param.NAME settings, passed to every benchmark
	Labels map[string]string // campaign labels plus label.NAME settings
}

// Ranks is the number of tasks a step of this variant starts.
func (v Variant) Ranks() int {
	s := v.Slurm
	switch {
	case s.Ntasks > 0:
		return s.Ntasks
	case s.Nodes > 0 && s.NtasksPerNode > 0:
		return s.Nodes * s.NtasksPerNode
	case s.NtasksPerNode > 0:
		return s.NtasksPerNode
	case s.Nodes > 0:
		return s.Nodes
	}
	return 1
}

// NodeCount is the number of nodes a step of this variant runs on.
func (v Variant) NodeCount() int {
	if v.Slurm.Nodes > 0 {
		return v.Slurm.Nodes
	}
	return 1
}

// TasksPerNode is the number of tasks per node, as srun's block
// distribution places them.
func (v Variant) TasksPerNode() int {
	if v.Slurm.NtasksPerNode > 0 {
		return v.Slurm.NtasksPerNode
	}
	n := v.NodeCount()
	return (v.Ranks() + n - 1) / n
}

// Variants expands the sweep into its cartesian product, the first swept key
// varying slowest, in the order the keys are written.
func (c *Campaign) Variants() []Variant {
	combos := [][]Setting{nil}
	for _, k := range c.sweepOrder {
		vals, _ := c.Sweep[k].([]any)
		var next [][]Setting
		for _, combo := range combos {
			for _, v := range vals {
				s, _ := paramString(v)
				next = append(next, append(append([]Setting(nil), combo...), Setting{Key: k, Value: s, raw: v}))
			}
		}
		combos = next
	}
	variants := make([]Variant, 0, len(combos))
	for i, combo := range combos {
		v := Variant{
			Index:    i,
			Name:     DefaultVariant,
			Settings: combo,
			Slurm:    c.Slurm,
			Env:      copyMap(c.Slurm.Env),
			Params:   map[string]string{},
			Labels:   copyMap(c.Campaign.Labels),
		}
		if len(combo) > 0 {
			parts := make([]string, len(combo))
			for j, s := range combo {
				parts[j] = s.Key + "=" + s.Value
			}
			v.Name = strings.Join(parts, ",")
		}
		v.Slug = slug(v.Name)
		for _, s := range combo {
			prefix, name, dotted := strings.Cut(s.Key, ".")
			switch {
			case dotted && prefix == "env":
				v.Env[name] = s.Value
			case dotted && prefix == "param":
				v.Params[name] = s.Value
			case dotted && prefix == "label":
				v.Labels[name] = s.Value
			default:
				v.Slurm.set(s.Key, s.raw)
			}
		}
		variants = append(variants, v)
	}
	return variants
}

// set applies one swept Slurm key; validateSweepKey has checked its type.
func (s *Slurm) set(key string, v any) {
	n, _ := v.(int64)
	str, _ := paramString(v)
	switch key {
	case "nodes":
		s.Nodes = int(n)
	case "ntasks":
		s.Ntasks = int(n)
	case "ntasks_per_node":
		s.NtasksPerNode = int(n)
	case "cpus_per_task":
		s.CPUsPerTask = int(n)
	case "partition":
		s.Partition = str
	case "constraint":
		s.Constraint = str
	case "time":
		s.Time = str
	case "exclusive":
		s.Exclusive, _ = v.(bool)
	}
}

// Plan is what a campaign becomes: Slurm jobs, each with its steps.
type Plan struct {
	Campaign *Campaign
	Variants []Variant
	Jobs     []Job
}

// Job is one sbatch script.
type Job struct {
	Index int
	// File is the script's file name, e.g. "01-quickstart-ntasks_per_node-1.sbatch".
	File    string
	JobName string
	Variant Variant
	Steps   []Step
}

// Step is one srun of sbench-runner within a job.
type Step struct {
	Index     int
	Benchmark Benchmark
	Ranks     int
	Nodes     int
	PerNode   int
	// RunnerArgs are the arguments after the runner binary, identical for
	// srun in a script and for sbench local.
	RunnerArgs []string
}

// ResultsDir is where the campaign's bundles and job output go.
func (c *Campaign) ResultsDir() string {
	dir := c.Campaign.ResultsDir
	if dir == "" {
		dir = DefaultResultsDir
	}
	return path.Join(dir, c.Campaign.Name)
}

// RunnerPath is the runner binary scripts start.
func (c *Campaign) RunnerPath() string {
	if c.Runner.Path != "" {
		return c.Runner.Path
	}
	return "sbench-runner"
}

// Plan turns the campaign into jobs: one job per variant, one step per
// benchmark, so that a failing step does not lose the others.
func (c *Campaign) Plan() *Plan {
	p := &Plan{Campaign: c, Variants: c.Variants()}
	width := len(strconv.Itoa(len(p.Variants)))
	if width < 2 {
		width = 2
	}
	for _, v := range p.Variants {
		j := Job{
			Index:   v.Index,
			File:    fmt.Sprintf("%0*d-%s-%s.sbatch", width, v.Index+1, c.Campaign.Name, v.Slug),
			JobName: c.Slurm.JobName,
			Variant: v,
		}
		if j.JobName == "" {
			j.JobName = c.Campaign.Name + "-" + v.Slug
		}
		for i, b := range c.Benchmarks {
			st := Step{Index: i, Benchmark: b, Ranks: v.Ranks(), Nodes: v.NodeCount(), PerNode: v.TasksPerNode()}
			st.RunnerArgs = c.runnerArgs(v, b)
			j.Steps = append(j.Steps, st)
		}
		p.Jobs = append(p.Jobs, j)
	}
	return p
}

func (c *Campaign) runnerArgs(v Variant, b Benchmark) []string {
	args := []string{"run",
		"--campaign", c.Campaign.Name,
		"--variant", v.Name,
		"--benchmark", b.Name,
		"--kernel", b.Kernel,
	}
	params := map[string]string{}
	for k, val := range b.Params {
		params[k], _ = paramString(val)
	}
	for k, val := range v.Params {
		params[k] = val
	}
	for _, k := range sortedKeys(params) {
		args = append(args, "--param", k+"="+params[k])
	}
	for _, s := range v.Settings {
		args = append(args, "--vparam", s.Key+"="+s.Value)
	}
	labels := copyMap(v.Labels)
	for k, val := range b.Labels {
		labels[k] = val
	}
	for _, k := range sortedKeys(labels) {
		args = append(args, "--label", k+"="+labels[k])
	}
	args = append(args, "--results", c.ResultsDir())
	if c.Runner.BootstrapTimeout != "" {
		args = append(args, "--bootstrap-timeout", c.Runner.BootstrapTimeout)
	}
	if c.Runner.Timeout != "" {
		args = append(args, "--timeout", c.Runner.Timeout)
	}
	if c.Runner.Bind != "" {
		args = append(args, "--bind", c.Runner.Bind)
	}
	return args
}

// NodeHours estimates the plan's cost from each job's time limit.
func (p *Plan) NodeHours() (hours float64, known bool) {
	known = true
	for _, j := range p.Jobs {
		d, err := parseSlurmTime(j.Variant.Slurm.Time)
		if err != nil || d == 0 {
			known = false
			continue
		}
		hours += d.Hours() * float64(j.Variant.NodeCount())
	}
	return hours, known
}

func copyMap(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// parseDuration reads a Go duration ("90s", "10m").
func parseDuration(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%q is not a duration such as 60s or 10m", s)
	}
	return d, nil
}

// parseSlurmTime reads Slurm's time formats: M, M:S, H:M:S, D-H, D-H:M,
// D-H:M:S. UNLIMITED and "" give 0.
func parseSlurmTime(s string) (time.Duration, error) {
	if s == "" || s == "UNLIMITED" || s == "INFINITE" {
		return 0, nil
	}
	days := 0
	if d, rest, ok := strings.Cut(s, "-"); ok {
		n, err := strconv.Atoi(d)
		if err != nil {
			return 0, fmt.Errorf("bad time %q", s)
		}
		days, s = n, rest
	}
	parts := strings.Split(s, ":")
	nums := make([]int, len(parts))
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil {
			return 0, fmt.Errorf("bad time %q", s)
		}
		nums[i] = n
	}
	var h, m, sec int
	switch {
	case days > 0 && len(nums) == 1:
		h = nums[0]
	case days > 0 && len(nums) == 2:
		h, m = nums[0], nums[1]
	case len(nums) == 1:
		m = nums[0]
	case len(nums) == 2:
		m, sec = nums[0], nums[1]
	case len(nums) == 3:
		h, m, sec = nums[0], nums[1], nums[2]
	default:
		return 0, fmt.Errorf("bad time %q", s)
	}
	return time.Duration(days)*24*time.Hour + time.Duration(h)*time.Hour + time.Duration(m)*time.Minute + time.Duration(sec)*time.Second, nil
}
