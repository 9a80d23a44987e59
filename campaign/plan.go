package campaign

import (
	"cmp"
	"fmt"
	"maps"
	"path"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/sbench/sbench/runargs"
)

// DefaultResultsDir is where bundles and Slurm output go when the campaign
// does not say.
const DefaultResultsDir = "sbench-runs"

// Run is one benchmark run of one variant: what a step executes.
type Run struct {
	Variant Variant
	// Benchmark is the benchmark as this run executes it: with the
	// kernel, command or parser its variant or sweep chose, if any.
	Benchmark *Benchmark
	// BenchSettings are the benchmark's own sweep point, if it has a sweep.
	BenchSettings []Setting
	// Name is the variant's name with the benchmark sweep point appended:
	// the bundle's variant.
	Name   string
	Repeat int
	Config Config
	// bench is the benchmark's index in the campaign.
	bench int
}

// Step is one launch of sbench-runner within a job (a pairs placement
// makes it several at run time).
type Step struct {
	Index int
	Run
	Ranks, Nodes, PerNode int
	// RunnerArgs are the arguments after the runner binary, without --step
	// and --session, which depend on where the step runs.
	RunnerArgs []string
	// Limit bounds each launch of the step (StepLimit): the script kills a
	// launcher still running GraceFor(Limit) after it.
	Limit time.Duration
}

// DefaultStepLimit bounds a run when neither the campaign's time nor a
// runner timeout says how long one may take: a hung launcher must not hold
// its allocation until the partition's limit.
const DefaultStepLimit = time.Hour

// StepGrace is the longest a launcher may outlive its step's limit: time
// for sbench-runner, which stops itself at the limit, to write the run's
// failed bundle. Then the script's timeout(1) ends the launcher (and Slurm
// ends an srun step at the same time), so that a launcher that hangs
// before the runner starts is ended too.
const StepGrace = 30 * time.Second

// GraceFor is the grace of a step limited to limit: StepGrace, or a tenth
// of a short limit (at least a second), so that a run of seconds is not
// allowed ten times its time.
func GraceFor(limit time.Duration) time.Duration {
	return min(StepGrace, max(time.Second, limit/10).Round(time.Second))
}

// StepLimit is the time limit of one run: the campaign's (or benchmark's,
// variant's) [slurm] time, else the runner's timeout, else
// DefaultStepLimit.
func (c *Campaign) StepLimit(r Run) time.Duration {
	if d, err := parseSlurmTime(r.Config.Slurm.Time); err == nil && d > 0 {
		return d
	}
	for _, s := range []string{r.Benchmark.Timeout, c.Runner.Timeout} {
		if d, err := parseDuration(s); err == nil && d > 0 {
			return d
		}
	}
	return DefaultStepLimit
}

// Job is one sbatch script.
type Job struct {
	Index int
	// File is the script's file name, e.g. "01-quickstart-all.sbatch".
	File    string
	JobName string
	// Alloc is the allocation: the union of what the job's steps need.
	Alloc Slurm
	// Steps run one after the other; in array mode, Tasks[i] are the steps
	// of array task i and Steps is empty.
	Steps []Step
	Tasks [][]Step
	// Variants the job runs, in order.
	Variants []string
	// DependsOn are indices of jobs that must complete first.
	DependsOn []int
	// Time is the job's time limit: the sum of its steps' (the longest
	// task's, in array mode); zero when a step has none.
	Time time.Duration
}

// AllSteps returns the job's steps, over every array task.
func (j Job) AllSteps() []Step {
	if len(j.Tasks) == 0 {
		return j.Steps
	}
	return slices.Concat(j.Tasks...)
}

// Plan is what a campaign becomes: Slurm jobs, each with its steps.
type Plan struct {
	Campaign *Campaign
	Variants []Variant
	Jobs     []Job
}

// ResultsDir is where the campaign's bundles and job output go.
func (c *Campaign) ResultsDir() string {
	return path.Join(cmp.Or(c.Campaign.ResultsDir, DefaultResultsDir), c.Campaign.Name)
}

// RunnerPath is the runner binary scripts start.
func (c *Campaign) RunnerPath() string {
	return cmp.Or(c.Runner.Path, "sbench-runner")
}

// Repeats is how often b runs: its repeats, else the campaign's, else 1.
func (c *Campaign) Repeats(b *Benchmark) int {
	switch {
	case b.Repeats > 0:
		return b.Repeats
	case c.Campaign.Repeats > 0:
		return c.Campaign.Repeats
	}
	return 1
}

// Runs lists every run of the campaign: variants outermost, then
// benchmarks, their sweep points and repeats. Validation has checked every
// override, so errors here cannot happen for a loaded campaign.
func (c *Campaign) Runs() ([]Run, error) {
	var runs []Run
	for _, v := range c.AllVariants() {
		for bi := range c.Benchmarks {
			b := &c.Benchmarks[bi]
			order := c.benchSweepOrder[bi]
			for _, bp := range points(sweepDims(b.Sweep, order)) {
				cfg, err := c.config(v, bi, bp)
				if err != nil {
					return nil, fmt.Errorf("benchmark %s, variant %s: %w", b.Name, v.Name, err)
				}
				name := v.Name
				if sn := settingsName(bp); sn != "" {
					if name == DefaultVariant {
						name = sn
					} else {
						name += "," + sn
					}
				}
				for r := 0; r < c.Repeats(b); r++ {
					runs = append(runs, Run{Variant: v, Benchmark: b.running(cfg.tool), BenchSettings: bp, Name: name, Repeat: r, Config: cfg, bench: bi})
				}
			}
		}
	}
	return runs, nil
}

// stages gives each benchmark its dependency depth: 0 without after,
// else one more than the benchmark it waits for.
func (c *Campaign) stages() map[string]int {
	st := map[string]int{}
	var depth func(name string, seen int) int
	depth = func(name string, seen int) int {
		if d, ok := st[name]; ok {
			return d
		}
		if seen > len(c.Benchmarks) {
			return 0 // a cycle; validate reports it
		}
		for i := range c.Benchmarks {
			if b := &c.Benchmarks[i]; b.Name == name {
				d := 0
				if b.After != "" {
					d = depth(b.After, seen+1) + 1
				}
				st[name] = d
				return d
			}
		}
		return 0
	}
	for i := range c.Benchmarks {
		depth(c.Benchmarks[i].Name, 0)
	}
	return st
}

// allocKey is what must be equal for runs to share one allocation; node
// and task counts are not part of it (the job takes the largest), nor are
// time (the job takes the sum) and what each step sets for itself.
func allocKey(s Slurm) string {
	nodes := ""
	if s.Nodes.IsRange() {
		nodes = s.Nodes.String()
	}
	return strings.Join([]string{s.Partition, s.Account, s.QOS, s.Reservation, s.Mem, s.MemPerCPU,
		strconv.FormatBool(s.Exclusive), s.Constraint, s.Gres, s.GPUs, s.Nodelist, s.Exclude,
		strconv.Itoa(s.CPUsPerTask), strings.Join(s.Extra, "\x00"), nodes}, "\x01")
}

// Plan packs the campaign's runs into jobs by its mode.
func (c *Campaign) Plan() (*Plan, error) {
	runs, err := c.Runs()
	if err != nil {
		return nil, err
	}
	p := &Plan{Campaign: c, Variants: c.AllVariants()}
	stages := c.stages()
	mode := c.Mode()
	type group struct {
		key  string
		runs []Run
	}
	var groups []*group
	byKey := map[string]*group{}
	for _, r := range runs {
		key := fmt.Sprintf("%d\x02", stages[r.Benchmark.Name])
		switch mode {
		case ModeJobs:
			key += strconv.Itoa(r.Variant.Index)
		default:
			key += allocKey(r.Config.Slurm)
		}
		g := byKey[key]
		if g == nil {
			g = &group{key: key}
			byKey[key] = g
			groups = append(groups, g)
		}
		g.runs = append(g.runs, r)
	}
	// Jobs of earlier stages first, so that dependencies point backwards.
	sort.SliceStable(groups, func(i, j int) bool {
		return stages[groups[i].runs[0].Benchmark.Name] < stages[groups[j].runs[0].Benchmark.Name]
	})
	width := max(2, len(strconv.Itoa(len(groups))))
	benchJobs := map[string][]int{} // benchmark -> jobs running it
	for gi, g := range groups {
		j := Job{Index: gi, Alloc: allocation(g.runs)}
		switch mode {
		case ModeJobs:
			j.File = fmt.Sprintf("%0*d-%s-%s.sbatch", width, gi+1, c.Campaign.Name, g.runs[0].Variant.Slug)
		case ModeArray:
			j.File = fmt.Sprintf("%0*d-%s-array.sbatch", width, gi+1, c.Campaign.Name)
		default:
			j.File = fmt.Sprintf("%0*d-%s-steps.sbatch", width, gi+1, c.Campaign.Name)
		}
		j.JobName = cmp.Or(c.Slurm.JobName, strings.TrimSuffix(j.File[width+1:], ".sbatch"))
		var task []Step
		lastVariant := -1
		for _, r := range g.runs {
			if !slices.Contains(j.Variants, r.Variant.Name) {
				j.Variants = append(j.Variants, r.Variant.Name)
			}
			if mode == ModeArray && r.Variant.Index != lastVariant && lastVariant >= 0 {
				j.Tasks = append(j.Tasks, task)
				task = nil
			}
			lastVariant = r.Variant.Index
			if _, err := c.InputFiles(r); err != nil {
				return nil, err
			}
			st := c.step(r)
			if mode == ModeArray {
				st.Index = len(task)
				task = append(task, st)
			} else {
				st.Index = len(j.Steps)
				j.Steps = append(j.Steps, st)
			}
			if !slices.Contains(benchJobs[r.Benchmark.Name], gi) {
				benchJobs[r.Benchmark.Name] = append(benchJobs[r.Benchmark.Name], gi)
			}
		}
		if mode == ModeArray {
			j.Tasks = append(j.Tasks, task)
		}
		j.Time = jobTime(j.Alloc.Nodes.Max, j.Steps, j.Tasks)
		p.Jobs = append(p.Jobs, j)
	}
	for ji := range p.Jobs {
		for _, st := range p.Jobs[ji].AllSteps() {
			if a := st.Benchmark.After; a != "" {
				p.Jobs[ji].DependsOn = append(p.Jobs[ji].DependsOn, benchJobs[a]...)
			}
		}
		slices.Sort(p.Jobs[ji].DependsOn)
		p.Jobs[ji].DependsOn = slices.Compact(p.Jobs[ji].DependsOn)
	}
	return p, nil
}

// allocation is the union of what a group's runs need: every step fits.
func allocation(runs []Run) Slurm {
	a := runs[0].Config.Slurm
	a.Ntasks = 0
	a.Time = ""
	for _, r := range runs {
		s := r.Config.Slurm
		nodes, perNode := r.Config.NodeCount(), r.Config.TasksPerNode()
		if r.Benchmark.Pairs != "" && nodes < 2 {
			nodes = 2
		}
		if !s.Nodes.IsRange() && nodes > a.Nodes.Max {
			a.Nodes = Nodes{nodes, nodes}
		}
		a.NtasksPerNode = max(a.NtasksPerNode, perNode)
	}
	if a.Nodes.Max == 0 {
		a.Nodes = Nodes{1, 1}
	}
	return a
}

// stepsTime sums steps' time limits; false when one has none.
func stepsTime(allocNodes int, steps []Step) (time.Duration, bool) {
	var t time.Duration
	for _, st := range steps {
		d, err := parseSlurmTime(st.Config.Slurm.Time)
		if err != nil || d == 0 {
			return 0, false
		}
		// Each launch may run its grace past its limit before the
		// script ends it.
		t += (d + GraceFor(d)) * time.Duration(st.placements(allocNodes))
	}
	return t, true
}

// jobTime sums the steps' time limits (the longest task's in an array);
// zero when a step has none.
func jobTime(allocNodes int, steps []Step, tasks [][]Step) time.Duration {
	if len(tasks) == 0 {
		t, _ := stepsTime(allocNodes, steps)
		return t
	}
	var longest time.Duration
	for _, task := range tasks {
		t, ok := stepsTime(allocNodes, task)
		if !ok {
			return 0
		}
		longest = max(longest, t)
	}
	return longest
}

// placements is how many launches a step makes on an allocation of n
// nodes: every ordered pair for "all", every other node and back for
// "reference", two for the other placements.
func (st Step) placements(n int) int {
	switch st.Benchmark.Pairs {
	case "both-directions", "intra-inter":
		return 2
	case "reference":
		return 2 * max(n-1, 1)
	case "all":
		n = max(n, 2)
		return n * (n - 1)
	}
	return 1
}

// step turns a run into a step: counts and runner arguments.
func (c *Campaign) step(r Run) Step {
	st := Step{Run: r, Ranks: r.Config.Ranks(), Nodes: r.Config.NodeCount(), PerNode: r.Config.TasksPerNode()}
	if r.Benchmark.Pairs != "" {
		st.Ranks, st.Nodes, st.PerNode = 2, 2, 1
	}
	st.Limit = c.StepLimit(r)
	st.RunnerArgs = c.runnerArgs(r)
	return st
}

var paramRefRE = regexp.MustCompile(`\{param:([A-Za-z][A-Za-z0-9_]*)\}`)

// expandParams replaces {param:NAME} in a tool's argv; validate has
// checked every name exists.
func expandParams(argv []string, params map[string]string) []string {
	out := make([]string, len(argv))
	for i, a := range argv {
		out[i] = paramRefRE.ReplaceAllStringFunc(a, func(m string) string {
			return params[paramRefRE.FindStringSubmatch(m)[1]]
		})
	}
	return out
}

// runnerArgs is the runner's command line for run r.
func (c *Campaign) runnerArgs(r Run) []string {
	b := r.Benchmark
	a := runargs.Args{Campaign: c.Campaign.Name, Variant: r.Name, Benchmark: b.Name, Kernel: b.Kernel}
	if b.Kernel != "" {
		a.Params = sortedKVs(r.Config.Params)
	} else {
		a.Kernel = runargs.ExecKernel
		if len(b.Command) > 0 {
			a.Exec = expandParams(b.Command, r.Config.Params)
		}
		for rank, argv := range b.PerRank {
			n, _ := strconv.Atoi(rank) // validate has checked it
			if a.ExecRank == nil {
				a.ExecRank = map[int][]string{}
			}
			a.ExecRank[n] = expandParams(argv, r.Config.Params)
		}
		a.Extract = runExtract(r)
		a.Parser = runParser(r, a.Extract)
		a.Output = b.Output
		a.StartDelay.Text = b.StartDelay
		// Plan has checked that the files can be made.
		a.Files, _ = c.InputFiles(r)
	}
	for _, s := range append(slices.Clone(r.Variant.Settings), r.BenchSettings...) {
		a.VParams = append(a.VParams, runargs.KV{Key: s.Key, Value: s.Text()})
	}
	a.Labels = sortedKVs(r.Config.Labels)
	a.Checks = b.Checks
	if c.Repeats(b) > 1 {
		a.Repeat = &r.Repeat
	}
	a.Results = c.ResultsDir()
	a.BootstrapTimeout.Text = c.Runner.BootstrapTimeout
	// Without a timeout of its own, the runner stops at the step's limit
	// and writes a failed bundle that says so, before the script's
	// timeout ends it.
	a.Timeout.Text = cmp.Or(b.Timeout, c.Runner.Timeout, c.StepLimit(r).String())
	a.Bind = c.Runner.Bind
	a.Interface = c.Runner.Interface
	return a.Argv()
}

func sortedKVs(m map[string]string) []runargs.KV {
	var kv []runargs.KV
	for _, k := range slices.Sorted(maps.Keys(m)) {
		kv = append(kv, runargs.KV{Key: k, Value: m[k]})
	}
	return kv
}

// sortedRanks orders per_rank's keys numerically.
func sortedRanks(m map[string][]string) []string {
	return slices.SortedFunc(maps.Keys(m), func(a, b string) int {
		x, _ := strconv.Atoi(a)
		y, _ := strconv.Atoi(b)
		return cmp.Or(cmp.Compare(x, y), strings.Compare(a, b))
	})
}

// NodeHours bounds the plan's cost: each job's time limit × its nodes (×
// tasks for an array).
func (p *Plan) NodeHours() (hours float64, known bool) {
	known = true
	for _, j := range p.Jobs {
		if j.Time == 0 {
			known = false
			continue
		}
		n := float64(j.Alloc.Nodes.Max)
		if len(j.Tasks) > 0 {
			// Array tasks are independent jobs; the limit is per task.
			var t time.Duration
			for _, task := range j.Tasks {
				tt, _ := stepsTime(j.Alloc.Nodes.Max, task)
				t += tt
			}
			hours += t.Hours() * n
			continue
		}
		hours += j.Time.Hours() * n
	}
	return hours, known
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

// formatSlurmTime writes a duration as D-HH:MM:SS or HH:MM:SS.
func formatSlurmTime(d time.Duration) string {
	s := int64(d.Seconds())
	days, s := s/86400, s%86400
	h, s := s/3600, s%3600
	m, s := s/60, s%60
	if days > 0 {
		return fmt.Sprintf("%d-%02d:%02d:%02d", days, h, m, s)
	}
	return fmt.Sprintf("%02d:%02d:%02d", h, m, s)
}
