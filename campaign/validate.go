package campaign

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"os"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/sbench/sbench/kernels"
	"github.com/sbench/sbench/parsers"
	"github.com/sbench/sbench/results"
	"github.com/sbench/sbench/sizes"
)

var (
	timeRE     = regexp.MustCompile(`^(\d+-)?\d+(:\d{1,2}){0,2}$|^UNLIMITED$|^INFINITE$`)
	paramKeyRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]*$`)
	// pathRE is the character set of paths that reach #SBATCH lines unquoted.
	pathRE = regexp.MustCompile(`^[A-Za-z0-9._/+@-]+$`)
	// fileNameRE is what an input file of a benchmark may be called.
	fileNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._+-]{0,127}$`)
	// checkRE is a check's shape; its x (after @) must also read as a
	// number or a size (checkX), as sbench-runner reads it.
	checkRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]*(@(-?[0-9.][0-9A-Za-z.+-]*))?(>=|<=|>|<)-?[0-9][0-9.eE+-]*$`)
	// placeholderRE finds {…} in a tool's argv; {{ is a literal brace.
	placeholderRE = regexp.MustCompile(`\{\{|\{[^{}]*\}`)
	runnerHoldRE  = regexp.MustCompile(`^\{(rank|size|workdir|(host|node|hostname):[0-9]+|param:[A-Za-z][A-Za-z0-9_]*)\}$`)
)

var (
	modes     = map[string]bool{ModeSteps: true, ModeJobs: true, ModeArray: true}
	launchers = map[string]bool{"srun": true, "mpirun": true, "mpiexec": true}
	pairKinds = map[string]bool{"both-directions": true, "all": true, "reference": true, "intra-inter": true}
)

func unknownKernel(name string) string {
	return fmt.Sprintf("unknown kernel %q%s", name, didYouMean(name, kernels.Names(), true))
}

// knownParser reports whether name is a parser, auto, none (a command
// whose output holds no figures), or unset.
func knownParser(name string) bool {
	if name == "" || name == "auto" || name == parsers.None {
		return true
	}
	_, ok := parsers.Lookup(name)
	return ok
}

// argvProblem is a problem with a tool's argv, in its item'th string (-1:
// with the whole list).
type argvProblem struct {
	item int
	msg  string
}

// argvProblems says what is wrong with a tool's argv.
func argvProblems(argv []string) []argvProblem {
	var out []argvProblem
	if len(argv) == 0 || argv[0] == "" {
		out = append(out, argvProblem{-1, "is empty"})
	}
	for i, a := range argv {
		if strings.ContainsRune(a, 0) {
			out = append(out, argvProblem{i, "holds a NUL byte"})
		}
		for _, ph := range placeholderRE.FindAllString(a, -1) {
			if ph != "{{" && !runnerHoldRE.MatchString(ph) {
				out = append(out, argvProblem{i, fmt.Sprintf("unknown placeholder %s (known: {rank}, {size}, {host:N}, {node:N}, {hostname:N}, {workdir}, {param:NAME}, {{ for a brace)", ph)})
			}
		}
	}
	return out
}

// validateArgv places the problems of the argv at key (argvProblems),
// each at the string it is in.
func (c *Campaign) validateArgv(key string, argv []string) Problems {
	var ps Problems
	for _, p := range argvProblems(argv) {
		at := key
		if p.item >= 0 {
			at = fmt.Sprintf("%s[%d]", key, p.item)
		}
		ps = append(ps, c.problemAt(key, at, "%s", p.msg))
	}
	return ps
}

// validateTool checks the tool a [[variant]] chooses (prefix
// "variant[i]").
func (c *Campaign) validateTool(prefix string, v *VariantSpec) Problems {
	var ps Problems
	add := func(k, format string, args ...any) { ps = append(ps, c.problem(prefix+k, format, args...)) }
	if v.Kernel != "" {
		if _, ok := kernels.Lookup(v.Kernel); !ok {
			add(".kernel", "%s", unknownKernel(v.Kernel))
		}
		if len(v.Command) > 0 {
			add(".command", "a variant runs a native kernel or a command, not both")
		}
		if v.Parser != "" {
			add(".parser", "is for external tools (command), not for kernel %s", v.Kernel)
		}
	}
	if !knownParser(v.Parser) {
		add(".parser", "%s", unknownParser(v.Parser))
	}
	ps = append(ps, c.validateExtract(prefix, v.Kernel, extractOf(v.Metrics, v.Require, v.Reject))...)
	if len(v.Command) > 0 {
		ps = append(ps, c.validateArgv(prefix+".command", v.Command)...)
	}
	return ps
}

func unknownParser(name string) string {
	return fmt.Sprintf("unknown parser %q%s", name, didYouMean(name, append([]string{"auto", parsers.None}, parsers.Names()...), true))
}

// benchmarkNames are the names of the campaign's benchmarks, in order.
func (c *Campaign) benchmarkNames() []string {
	return mapped(c.Benchmarks, func(b Benchmark) string { return b.Name })
}

func checkParamKey(k string) error {
	if !paramKeyRE.MatchString(k) {
		return fmt.Errorf("%q is not a valid name (letters, digits, '_', starting with a letter)", k)
	}
	return nil
}

// validate checks what the types cannot; with runs set, also each run's
// combination of settings.
func (c *Campaign) validate(runs bool) Problems {
	var ps Problems
	add := func(key, format string, args ...any) { ps = append(ps, c.problem(key, format, args...)) }
	m := &c.Campaign
	if err := checkName(m.Name); err != nil {
		add("campaign.name", "%v", err)
	}
	if m.Repeats < 0 {
		add("campaign.repeats", "must not be negative")
	}
	if m.Mode != "" && !modes[m.Mode] {
		add("campaign.mode", "%q is not a mode: use steps, jobs or array", m.Mode)
	}
	if m.ResultsDir != "" && !pathRE.MatchString(m.ResultsDir) {
		add("campaign.results_dir", "%q has a character that is not allowed in a results path (letters, digits, '.', '_', '-', '+', '@', '/')", m.ResultsDir)
	}
	if p := c.TemplatePath(); p != "" {
		if _, err := os.Stat(p); err != nil {
			add("campaign.templates_dir", "no sbatch.tmpl there: %v", err)
		}
	}
	ps = append(ps, c.validateLabels("campaign.labels", m.Labels)...)
	ps = append(ps, c.validateSlurm(func(k string) string { return "slurm." + k }, c.Slurm)...)
	ps = append(ps, c.validateLauncher(func(k string) string { return "launcher." + k }, c.Launcher)...)
	if c.Slurm.JobName != "" {
		if err := checkName(c.Slurm.JobName); err != nil {
			add("slurm.job_name", "%v", err)
		}
	}
	for i, t := range c.Slurm.Teardown {
		if strings.ContainsRune(t, 0) {
			add(fmt.Sprintf("slurm.teardown[%d]", i), "holds a NUL byte")
		}
	}
	ps = append(ps, c.validateRunner()...)
	if len(c.Benchmarks) == 0 {
		add("benchmark", "the campaign has no [[benchmark]]")
	}
	// uniqueName checks the name at key, and that no other of what (seen
	// so far) has it.
	uniqueName := func(seen map[string]bool, key, name, what string) {
		if err := checkName(name); err != nil {
			add(key+".name", "%v", err)
		} else if seen[name] {
			add(key+".name", "%q is used by two %s", name, what)
		}
		seen[name] = true
	}
	names := map[string]bool{}
	for i := range c.Benchmarks {
		b := &c.Benchmarks[i]
		key := fmt.Sprintf("benchmark[%d]", i)
		uniqueName(names, key, b.Name, "benchmarks")
		ps = append(ps, c.validateBenchmark(key, b)...)
	}
	for i := range c.Benchmarks {
		b := &c.Benchmarks[i]
		if b.After == "" {
			continue
		}
		key := fmt.Sprintf("benchmark[%d].after", i)
		switch {
		case b.After == b.Name:
			add(key, "a benchmark cannot wait for itself")
		case !names[b.After]:
			add(key, "no benchmark is called %q%s", b.After, didYouMean(b.After, c.benchmarkNames(), true))
		case c.dependsOn(b.After, b.Name):
			add(key, "%q and %q wait for each other", b.Name, b.After)
		}
	}
	vnames := map[string]bool{}
	for i := range c.Variants {
		v := &c.Variants[i]
		key := fmt.Sprintf("variant[%d]", i)
		uniqueName(vnames, key, v.Name, "variants")
		ps = append(ps, c.validateOverrides(key, v.Slurm, v.Launcher)...)
		ps = append(ps, c.validateTool(key, v)...)
		ps = append(ps, c.validateEnv(key+".env", v.Env)...)
		ps = append(ps, c.validateParams(key+".params", v.Params)...)
		ps = append(ps, c.validateLabels(key+".labels", v.Labels)...)
	}
	ps = append(ps, c.validateExpects(c.Expects, false)...)
	ps = append(ps, c.validateSweep("sweep", c.Sweep, c.sweepOrder)...)
	for i := range c.Benchmarks {
		ps = append(ps, c.validateSweep(fmt.Sprintf("benchmark[%d].sweep", i), c.Benchmarks[i].Sweep, c.benchSweepOrder[i])...)
	}
	if runs && len(ps) == 0 {
		// What needs the combination of all settings: each run's resources.
		ps = append(ps, c.validateRuns()...)
	}
	return ps
}

// validateRunner checks the [runner] table.
func (c *Campaign) validateRunner() Problems {
	var ps Problems
	r := &c.Runner
	for _, kv := range [][2]string{{"runner.bootstrap_timeout", r.BootstrapTimeout}, {"runner.timeout", r.Timeout}} {
		if kv[1] != "" {
			if _, err := parseDuration(kv[1]); err != nil {
				ps = append(ps, c.problem(kv[0], "%v", err))
			}
		}
	}
	for _, kv := range [][2]string{{"runner.bind", r.Bind}, {"runner.interface", r.Interface}} {
		if err := checkAddress(kv[0], kv[1]); err != nil {
			ps = append(ps, c.problem(kv[0], "%v", err))
		} else if kv[0] == "runner.interface" && kv[1] != "" && r.Bind != "" {
			ps = append(ps, c.problem(kv[0], "runner.bind is set too: give the ranks' address or their interface, not both"))
		}
	}
	return ps
}

// interfaceRE is what Linux takes as a network interface's name.
var interfaceRE = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.:-]{0,14}$`)

// checkAddress checks the ranks' address at key, if given: an IP for a
// bind key, a network interface's name for an interface key.
func checkAddress(key, v string) error {
	switch {
	case v == "":
		return nil
	case strings.HasSuffix(key, ".interface") && !interfaceRE.MatchString(v):
		return fmt.Errorf("%q is not a network interface name (such as ib0 or enp1s0f1)", v)
	case strings.HasSuffix(key, ".bind"):
		return checkBind(v)
	}
	return nil
}

// dependsOn reports whether benchmark a waits, directly or not, for b.
func (c *Campaign) dependsOn(a, b string) bool {
	for steps := 0; a != "" && steps <= len(c.Benchmarks); steps++ {
		if a == b {
			return true
		}
		next := ""
		for i := range c.Benchmarks {
			if c.Benchmarks[i].Name == a {
				next = c.Benchmarks[i].After
			}
		}
		a = next
	}
	return false
}

// validateSlurm checks Slurm settings; at names the key where each is set.
func (c *Campaign) validateSlurm(at func(string) string, s Slurm) Problems {
	var ps Problems
	add := func(key, format string, args ...any) {
		k, item, _ := strings.Cut(key, "[")
		if item != "" {
			item = "[" + item
		}
		ps = append(ps, c.problem(at(k)+item, format, args...))
	}
	directives := map[string]string{
		"partition": s.Partition, "account": s.Account, "qos": s.QOS, "reservation": s.Reservation,
		"mem": s.Mem, "mem_per_cpu": s.MemPerCPU, "constraint": s.Constraint, "gres": s.Gres, "gpus": s.GPUs,
		"nodelist": s.Nodelist, "exclude": s.Exclude, "output": s.Output, "error": s.Error, "time": s.Time,
	}
	for _, k := range slices.Sorted(maps.Keys(directives)) {
		if err := checkDirective(directives[k]); err != nil {
			add(k, "%v", err)
		}
	}
	if s.Time != "" && !timeRE.MatchString(s.Time) {
		add("time", "%q is not a Slurm time (minutes, MM:SS, HH:MM:SS, D-HH:MM:SS or UNLIMITED)", s.Time)
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
	for i, l := range s.Setup {
		if strings.ContainsRune(l, 0) {
			add(fmt.Sprintf("setup[%d]", i), "holds a NUL byte")
		}
	}
	ps = append(ps, c.validateEnv(at("env"), s.Env)...)
	return ps
}

func (c *Campaign) validateEnv(prefix string, env map[string]string) Problems {
	var ps Problems
	for _, k := range slices.Sorted(maps.Keys(env)) {
		if !envNameRE.MatchString(k) {
			ps = append(ps, c.problem(join(prefix, k), "%q is not a valid environment variable name", k))
		}
	}
	return ps
}

func (c *Campaign) validateParams(prefix string, params map[string]any) Problems {
	var ps Problems
	for _, k := range slices.Sorted(maps.Keys(params)) {
		if err := checkParamKey(k); err != nil {
			ps = append(ps, c.problem(join(prefix, k), "%v", err))
		} else if _, err := paramString(params[k]); err != nil {
			ps = append(ps, c.problem(join(prefix, k), "%v", err))
		}
	}
	return ps
}

// validateLauncher checks launcher settings; at names the key where each
// is set.
func (c *Campaign) validateLauncher(at func(string) string, l Launcher) Problems {
	var ps Problems
	if l.Type != "" && !launchers[l.Type] {
		ps = append(ps, c.problem(at("type"), "%q is not a launcher: use srun, mpirun or mpiexec", l.Type))
	}
	if l.MPI != "" && !paramKeyRE.MatchString(l.MPI) {
		ps = append(ps, c.problem(at("mpi"), "%q is not an srun --mpi plugin name", l.MPI))
	}
	if l.MPI != "" && l.Type != "" && l.Type != "srun" {
		ps = append(ps, c.problem(at("mpi"), "is srun's --mpi option; the launcher is %s", l.Type))
	}
	if l.Flavor != "" && !slices.Contains(Flavors, l.Flavor) {
		ps = append(ps, c.problem(at("flavor"), "%q is not an MPI launcher flavor: use %s%s", l.Flavor, strings.Join(Flavors, ", "), didYouMean(l.Flavor, Flavors, true)))
	}
	if l.Command != "" && strings.ContainsAny(l.Command, "\n\x00") {
		ps = append(ps, c.problem(at("command"), "%q is not a command", l.Command))
	}
	return ps
}

func (c *Campaign) validateBenchmark(key string, b *Benchmark) Problems {
	var ps Problems
	add := func(k, format string, args ...any) { ps = append(ps, c.problem(key+k, format, args...)) }
	external := len(b.Command) > 0 || len(b.PerRank) > 0
	// A benchmark with neither kernel nor command takes them from its
	// variants or sweeps: validateRuns checks every run has one.
	switch {
	case b.Kernel != "" && external:
		add(".kernel", "a benchmark is a native kernel or a command, not both")
	case b.Kernel != "":
		if _, ok := kernels.Lookup(b.Kernel); !ok {
			add(".kernel", "%s", unknownKernel(b.Kernel))
		}
		for _, f := range []struct {
			set  bool
			name string
		}{{b.Parser != "", "parser"}, {b.Output != "", "output"}, {b.StartDelay != "", "start_delay"}, {len(b.Files) > 0, "files"}} {
			if f.set {
				add("."+f.name, "is for external tools (command), not for kernel %s", b.Kernel)
			}
		}
	}
	if b.Kernel == "" {
		if !knownParser(b.Parser) {
			add(".parser", "%s", unknownParser(b.Parser))
		}
		if len(b.Command) > 0 {
			ps = append(ps, c.validateArgv(key+".command", b.Command)...)
		}
		for _, r := range slices.Sorted(maps.Keys(b.PerRank)) {
			if n, err := strconv.Atoi(r); err != nil || n < 0 || strconv.Itoa(n) != r {
				add(join(".per_rank", r), "%q is not a rank number", r)
			}
			ps = append(ps, c.validateArgv(join(key+".per_rank", r), b.PerRank[r])...)
		}
		if b.Output != "" && (path.IsAbs(b.Output) || strings.Contains(b.Output, "..") || !pathRE.MatchString(b.Output)) {
			add(".output", "%q must be a plain relative file name in the step's working directory", b.Output)
		}
		for _, name := range slices.Sorted(maps.Keys(b.Files)) {
			if !fileNameRE.MatchString(name) {
				add(join(".files", name), "%q is not a plain file name", name)
			}
		}
		if b.StartDelay != "" {
			if _, err := parseDuration(b.StartDelay); err != nil {
				add(".start_delay", "%v", err)
			}
		}
	}
	ps = append(ps, c.validateKind(key, b)...)
	if b.Timeout != "" {
		if _, err := parseDuration(b.Timeout); err != nil {
			add(".timeout", "%v", err)
		}
	}
	if b.Repeats < 0 {
		add(".repeats", "must not be negative")
	}
	ps = append(ps, c.validateExtract(key, b.Kernel, b.Extract())...)
	for i, chk := range b.Checks {
		if m := checkRE.FindStringSubmatch(chk); m == nil || !checkX(m[2]) {
			add(fmt.Sprintf(".checks[%d]", i), "%q is not a check: write METRIC[@X](>=|<=|>|<)VALUE, e.g. bandwidth@4194304>=3000", chk)
		}
	}
	if b.Pairs != "" && !pairKinds[b.Pairs] {
		add(".pairs", "%q is not a placement: use both-directions, all, reference or intra-inter", b.Pairs)
	}
	ps = append(ps, c.validateParams(key+".params", b.Params)...)
	ps = append(ps, c.validateEnv(key+".env", b.Env)...)
	ps = append(ps, c.validateLabels(key+".labels", b.Labels)...)
	return append(ps, c.validateOverrides(key, b.Slurm, b.Launcher)...)
}

// validateLabels checks the label names of the labels table at prefix.
func (c *Campaign) validateLabels(prefix string, labels map[string]string) Problems {
	var ps Problems
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		if err := checkParamKey(k); err != nil {
			ps = append(ps, c.problem(join(prefix, k), "%v", err))
		}
	}
	return ps
}

// validateOverrides checks the slurm and launcher override tables of the
// benchmark or variant at key: the first bad key of each.
func (c *Campaign) validateOverrides(key string, slurm, launcher map[string]any) Problems {
	var ps Problems
	scratch := c.base()
	for _, t := range []struct {
		prefix string
		m      map[string]any
	}{{"", slurm}, {"launcher", launcher}} {
		var ke *keyError
		if err := scratch.applyTable(t.prefix, t.m); errors.As(err, &ke) {
			ps = append(ps, c.problem(join(key+"."+cmp.Or(t.prefix, "slurm"), ke.key), "%v", ke.err))
		}
	}
	return ps
}

// validateSweep checks a sweep table: every key settable, every value of
// the right type, zip groups of equal length.
func (c *Campaign) validateSweep(prefix string, sweep map[string]any, order []string) Problems {
	var ps Problems
	inZip := map[string]bool{}
	if z, ok := sweep[zipKey]; ok {
		groups, ok := z.([]any)
		if !ok {
			return Problems{c.problem(prefix+"."+zipKey, `must be a list of key lists, e.g. zip = [["nodes", "ntasks_per_node"]]`)}
		}
		for gi, g := range groups {
			keys, err := stringList(g)
			if err != nil || len(keys) < 2 {
				ps = append(ps, c.problem(prefix+"."+zipKey, "group %d must list at least two swept keys", gi+1))
				continue
			}
			n := -1
			for _, k := range keys {
				vals, ok := sweep[k].([]any)
				switch {
				case k == zipKey || !ok:
					ps = append(ps, c.problem(prefix+"."+zipKey, "group %d: %q is not a swept key", gi+1, k))
				case inZip[k]:
					ps = append(ps, c.problem(prefix+"."+zipKey, "%q is in two zip groups", k))
				case n >= 0 && len(vals) != n:
					ps = append(ps, c.problem(prefix+"."+zipKey, "group %d pairs lists of different lengths (%q has %d values, the first %d)", gi+1, k, len(vals), n))
				default:
					n = len(vals)
				}
				inZip[k] = true
			}
		}
	}
	for _, k := range order {
		if k == zipKey {
			continue
		}
		key := join(prefix, k)
		vals, ok := sweep[k].([]any)
		if !ok {
			ps = append(ps, c.problem(key, "must be a list of values, e.g. %s = [1, 2]", k))
			continue
		}
		if len(vals) == 0 {
			ps = append(ps, c.problem(key, "is an empty list"))
			continue
		}
		if toolKeys[k] {
			ps = append(ps, c.validateSweptTool(prefix, k, vals)...)
			continue
		}
		for i, v := range vals {
			scratch := c.base()
			if err := scratch.apply(k, v); err != nil {
				ps = append(ps, c.problem(key, "value %d: %v", i+1, err))
				break
			}
			if p, name, ok := strings.Cut(k, "."); ok && (p == "env" && !envNameRE.MatchString(name) || (p == "param" || p == "label") && checkParamKey(name) != nil) {
				ps = append(ps, c.problem(key, "%q is not a valid %s name", name, p))
				break
			}
			if !strings.Contains(k, ".") {
				if s, err := scalarString(v); err == nil {
					if err := checkDirective(s); err != nil {
						ps = append(ps, c.problem(key, "value %d: %v", i+1, err))
					}
				}
			}
			if k == "time" {
				if s, _ := scalarString(v); !timeRE.MatchString(s) {
					ps = append(ps, c.problem(key, "value %d: %q is not a Slurm time", i+1, s))
				}
			}
		}
	}
	return ps
}

// validateSweptTool checks the values of a swept kernel, command or
// parser (key k of the sweep at prefix); validateRuns checks that no
// point sets a kernel with a command or a parser.
func (c *Campaign) validateSweptTool(prefix, k string, vals []any) Problems {
	var ps Problems
	key := join(prefix, k)
	for i, v := range vals {
		var t toolChoice
		if err := t.choose(k, key, v); err != nil {
			ps = append(ps, c.problem(key, "value %d: %v", i+1, err))
			continue
		}
		var msgs []string
		switch k {
		case "kernel":
			if _, ok := kernels.Lookup(t.kernel); !ok && t.kernelAt != "" {
				msgs = append(msgs, unknownKernel(t.kernel))
			}
		case "command":
			if t.commandAt != "" {
				for _, p := range argvProblems(t.command) {
					msgs = append(msgs, p.msg)
				}
			}
		case "parser":
			if !knownParser(t.parser) {
				msgs = append(msgs, unknownParser(t.parser))
			}
		}
		for _, msg := range msgs {
			ps = append(ps, c.problem(key, "value %d: %s", i+1, msg))
		}
	}
	return ps
}

// validateRuns checks what only the combination of settings shows: each
// run's ranks, nodes, launcher and kernel parameters.
func (c *Campaign) validateRuns() Problems {
	runs, err := c.Runs()
	if err != nil {
		return Problems{c.problem("", "%v", err)}
	}
	v := &runValidator{c: c, seen: map[string]bool{}}
	for _, r := range runs {
		v.r, v.b, v.t = r, r.Benchmark, r.Config.tool
		v.shape()
		switch k, known := kernels.Lookup(v.b.Kernel); {
		case v.b.Kernel == "" && len(v.b.Command) == 0 && len(v.b.PerRank) == 0:
			v.report(v.where(".kernel"), "runs nothing: set kernel (%s) or command, in the benchmark or in every variant", strings.Join(kernels.Names(), ", "))
		case v.b.Kernel != "" && v.t.parserAt != "":
			v.report(v.t.parserAt, "is for external tools (command); the run's kernel is %s", v.b.Kernel)
		case known:
			// (An unknown kernel is reported where it is written.)
			v.kernel(k)
		case v.b.Kernel == "":
			v.command()
		}
	}
	return v.ps
}

// runValidator checks the runs of a campaign: each problem once, however
// many runs share it.
type runValidator struct {
	c    *Campaign
	seen map[string]bool
	ps   Problems
	// The run under check: b is the benchmark as it executes it, its
	// variant's or sweep's kernel, command or parser (written at t's keys).
	r Run
	b *Benchmark
	t toolChoice
}

func (v *runValidator) where(k string) string { return fmt.Sprintf("benchmark[%d]%s", v.r.bench, k) }

// at is the key a variant or sweep chose, else the benchmark's own.
func (v *runValidator) at(chosen, own string) string {
	if chosen != "" {
		return chosen
	}
	return v.where(own)
}

func (v *runValidator) once(p *Problem) {
	if !v.seen[p.Error()] {
		v.seen[p.Error()] = true
		v.ps = append(v.ps, p)
	}
}

// reportAt reports a problem with key at the path at (a string in key's
// list); report one at key itself.
func (v *runValidator) reportAt(key, at, format string, args ...any) {
	v.once(v.c.problemAt(key, at, "variant %s: "+format, append([]any{v.r.Name}, args...)...))
}

func (v *runValidator) report(key, format string, args ...any) { v.reportAt(key, key, format, args...) }

// shape checks the run's allocation, launcher and placement, its HPL
// input, and that each sweep point runs one tool.
func (v *runValidator) shape() {
	c, r, b := v.c, v.r, v.b
	s := r.Config.Slurm
	// A setting wrong in every run is reported once, where it is set.
	for _, p := range c.validateSlurm(func(k string) string { return c.settingKey(r, "slurm", k) }, s) {
		v.once(p)
	}
	for _, p := range c.validateLauncher(func(k string) string { return c.settingKey(r, "launcher", k) }, r.Config.Launcher) {
		v.once(p)
	}
	n := s.Nodes.Max
	if n > 0 && s.NtasksPerNode > 0 && s.Ntasks > 0 && n*s.NtasksPerNode != s.Ntasks {
		v.report("slurm", "nodes (%d) × ntasks_per_node (%d) = %d, but ntasks is %d", n, s.NtasksPerNode, n*s.NtasksPerNode, s.Ntasks)
	}
	if n > 0 && s.Ntasks > 0 && s.Ntasks < s.Nodes.Min {
		v.report("slurm", "ntasks (%d) is less than nodes (%d)", s.Ntasks, s.Nodes.Min)
	}
	if s.Nodes.IsRange() && s.Ntasks > 0 {
		v.report("slurm.nodes", "a node range (%s) needs ntasks_per_node, not ntasks", s.Nodes)
	}
	if s.Nodes.IsRange() && s.NtasksPerNode == 0 {
		v.report("slurm.nodes", "a node range (%s) needs ntasks_per_node", s.Nodes)
	}
	typ := r.Config.Launcher.Type
	if p := mpiPlacementProblem(r); p != "" && (typ == "" || launchers[typ]) {
		v.report(c.settingKey(r, "launcher", "type"), "%s", p)
	}
	if b.Pairs != "" {
		if typ != "" && typ != "srun" {
			why := ""
			if at := c.fromSite(c.settingKey(r, "launcher", "type")); at != "" {
				why = fmt.Sprintf(", which the site profile sets (%s); give launcher.type = \"srun\" in the campaign or the benchmark", at)
			}
			v.report(v.where(".pairs"), "pairs placements need the srun launcher (they place ranks with --distribution=arbitrary), not %s%s", typ, why)
		}
		if s.Nodes.IsRange() {
			v.report(v.where(".pairs"), "pairs placements need a node count, not a range")
		}
	}
	if k, ok := kinds[b.Kind]; ok && b.Kernel == "" {
		if p, errs := readHPL(b.HPL); len(errs) == 0 {
			_, errs = p.resolve(r.Config)
			for _, e := range errs {
				v.report(v.where("."+e.key), "%s: %v", k.input, e.err)
			}
		}
	}
	for _, layer := range []struct {
		prefix   string
		settings []Setting
	}{{"sweep", r.Variant.Settings}, {v.where(".sweep"), r.BenchSettings}} {
		if k := toolConflict(layer.settings); k != "" {
			v.report(join(layer.prefix, k), "%s: a run executes a native kernel, or a command read by a parser; leave one of them empty (\"\" or []) in each point", settingsName(layer.settings))
		}
	}
}

// kernel checks a native kernel's ranks and parameters.
func (v *runValidator) kernel(k kernels.Kernel) {
	r, b := v.r, v.b
	if b.Pairs == "" && r.Config.Ranks() < k.MinRanks {
		v.report(v.at(v.t.kernelAt, ".kernel"), "%d rank(s); kernel %s needs at least %d", r.Config.Ranks(), b.Kernel, k.MinRanks)
	}
	unknown := false
	for _, name := range slices.Sorted(maps.Keys(r.Config.Params)) {
		if _, ok := k.Param(name); !ok {
			unknown = true
			v.report(v.c.paramKey(r, name), "param %q: not a parameter of the %s kernel%s", name, b.Kernel, didYouMean(name, k.ParamNames(), true))
		}
	}
	if _, err := kernels.Parse(b.Kernel, r.Config.Params); err != nil && !unknown {
		v.report(v.where(".params"), "%v", err)
	}
}

// command checks a command's {param:…} references, each at the string
// holding it (per_rank."1"[2]), and that its per_rank ranks exist.
func (v *runValidator) command() {
	r, b := v.r, v.b
	type argvAt struct {
		key  string
		argv []string
	}
	argvs := []argvAt{{v.at(v.t.commandAt, ".command"), b.Command}}
	for _, rank := range sortedRanks(b.PerRank) {
		argvs = append(argvs, argvAt{v.where(join(".per_rank", rank)), b.PerRank[rank]})
	}
	for _, a := range argvs {
		for i, arg := range a.argv {
			item := fmt.Sprintf("%s[%d]", a.key, i)
			if strings.HasPrefix(a.key, "sweep.") || strings.Contains(a.key, ".sweep.") {
				// A swept command is one of several lists.
				item = a.key
			}
			for _, m := range paramRefRE.FindAllStringSubmatch(arg, -1) {
				if _, ok := r.Config.Params[m[1]]; !ok {
					v.reportAt(a.key, item, "{param:%s}: no such param (set it in params or sweep param.%s)", m[1], m[1])
				}
			}
		}
	}
	for _, rank := range slices.Sorted(maps.Keys(b.PerRank)) {
		if n, _ := strconv.Atoi(rank); b.Pairs == "" && n >= r.Config.Ranks() {
			v.report(v.where(join(".per_rank", rank)), "rank %d does not exist: the step has %d rank(s)", n, r.Config.Ranks())
		}
	}
}

// checkX reports whether a check's x reads as sbench-runner reads it: a
// size (4MiB, 64K) or a plain number (0.5, -2, 1e3).
func checkX(x string) bool {
	if x == "" {
		return true
	}
	if _, err := sizes.ParseFloat(x); err == nil {
		return true
	}
	// ParseFloat takes inf, nan, hex and underscores; the runner does not.
	if strings.Trim(x, "0123456789.+-eE") != "" {
		return false
	}
	_, err := strconv.ParseFloat(x, 64)
	return err == nil
}

// paramKey is where the run's param name is written: the benchmark's
// params, its variant's, a sweep's param.NAME, or the benchmark's params
// table.
func (c *Campaign) paramKey(r Run, name string) string {
	if _, ok := c.Benchmarks[r.bench].Params[name]; ok {
		return fmt.Sprintf("benchmark[%d].params.%s", r.bench, name)
	}
	if s := r.Variant.Spec; s != nil {
		if _, ok := s.Params[name]; ok {
			return fmt.Sprintf("variant[%d].params.%s", c.specIndex(s), name)
		}
	}
	return cmp.Or(sweptAt(r, "param."+name, false), sweptAt(r, "param."+name, true), fmt.Sprintf("benchmark[%d].params", r.bench))
}

// sweptAt is where run r's sweep point sets key, in its benchmark's sweep
// (bench) or the campaign's; "" when it does not.
func sweptAt(r Run, key string, bench bool) string {
	settings, prefix := r.Variant.Settings, "sweep"
	if bench {
		settings, prefix = r.BenchSettings, fmt.Sprintf("benchmark[%d].sweep", r.bench)
	}
	if slices.ContainsFunc(settings, func(st Setting) bool { return st.Key == key }) {
		return join(prefix, key)
	}
	return ""
}

// validateKind checks what a benchmark's kind asks of it, and its
// [benchmark.hpl] values that do not depend on the run.
func (c *Campaign) validateKind(key string, b *Benchmark) Problems {
	var ps Problems
	add := func(k, format string, args ...any) { ps = append(ps, c.problem(key+k, format, args...)) }
	if b.Kind == "" {
		if b.HPL != nil {
			add(".hpl", `is the input of kind = "hpl" or "hpcc"; this benchmark has no kind`)
		}
		return ps
	}
	k, ok := kinds[b.Kind]
	if !ok {
		add(".kind", "unknown kind %q%s", b.Kind, didYouMean(b.Kind, slices.Sorted(maps.Keys(kinds)), true))
		return ps
	}
	switch {
	case b.Kernel != "":
		add(".kind", "is for external tools; kernel %s is native", b.Kernel)
		return ps
	case len(b.PerRank) > 0:
		add(".per_rank", "kind %s runs one MPI program on every rank: use command", b.Kind)
	case b.Pairs != "":
		add(".pairs", "kind %s runs on every rank of the step, not on pairs", b.Kind)
	}
	if _, dup := b.Files[k.input]; dup {
		add(join(".files", k.input), "kind %s writes %s from [benchmark.hpl]: drop this file (or the kind, to use it as written)", b.Kind, k.input)
	}
	_, errs := readHPL(b.HPL)
	for _, e := range errs {
		add("."+e.key, "%v", e.err)
	}
	return ps
}

// mpiPlacementProblem says why an MPI launcher (mpirun, mpiexec) cannot
// place a run's ranks as its variant plans them, or "". Within an
// allocation sized for the job's largest step, an mpirun told only -np
// fills the first node's slots: a 2 nodes × 1 rank step would run both
// ranks on one node. So a run on several nodes needs the launcher's
// flavor (sbench then adds its per-node option) or args that place the
// ranks; and the per-node option must reach every planned node.
func mpiPlacementProblem(r Run) string {
	l := r.Config.Launcher
	typ := launcherType(l)
	if typ == "srun" || PlacesRanks(l.Args) {
		return ""
	}
	nodes, perNode, ranks := r.Config.NodeCount(), r.Config.TasksPerNode(), r.Config.Ranks()
	if l.Flavor == "" {
		if nodes < 2 && !r.Config.Slurm.Nodes.IsRange() {
			return ""
		}
		return fmt.Sprintf("%s places %d rank(s) on %d node(s) only when told how: set flavor (%s) for sbench to add the per-node option, or place them in args (--map-by ppr:{ppn}:node, -ppn {ppn})",
			typ, ranks, nodes, strings.Join(Flavors, ", "))
	}
	if filled := (ranks + perNode - 1) / perNode; !r.Config.Slurm.Nodes.IsRange() && filled != nodes {
		return fmt.Sprintf("%d rank(s) on %d nodes: %s's %s puts %d on each node, so they fill %d node(s); give ntasks_per_node, or a rank count that fills every node",
			ranks, nodes, typ, strings.Join(perNodeArgs(l.Flavor, perNode), " "), perNode, filled)
	}
	return ""
}

// settingKey is where a run's key of table (slurm or launcher) is set,
// the layer that wins first (as config applies them): the benchmark's
// sweep, the campaign's sweep, the variant's table, the benchmark's, else
// the campaign's [slurm] or [launcher].
func (c *Campaign) settingKey(r Run, table, key string) string {
	swept := key // as a sweep names it: nodes, launcher.type
	if table == "launcher" {
		swept = "launcher." + key
	}
	if at := cmp.Or(sweptAt(r, swept, true), sweptAt(r, swept, false)); at != "" {
		return at
	}
	tables := func(slurm, launcher map[string]any) map[string]any {
		if table == "launcher" {
			return launcher
		}
		return slurm
	}
	if s := r.Variant.Spec; s != nil {
		if _, ok := tables(s.Slurm, s.Launcher)[key]; ok {
			return fmt.Sprintf("variant[%d].%s.%s", c.specIndex(s), table, keyPart(key))
		}
	}
	b := &c.Benchmarks[r.bench]
	if _, ok := tables(b.Slurm, b.Launcher)[key]; ok {
		return fmt.Sprintf("benchmark[%d].%s.%s", r.bench, table, keyPart(key))
	}
	return table + "." + keyPart(key)
}

// validateExtract checks the user-defined metrics and sanity patterns e
// of the benchmark or variant at key (which runs kernel, if any), each
// problem at its key; a pattern's at the character that is wrong, where
// the file writes the pattern as it is.
func (c *Campaign) validateExtract(key, kernel string, e *results.Extract) Problems {
	if e == nil {
		return nil
	}
	if kernel != "" {
		var ps Problems
		for _, k := range []struct {
			set  bool
			name string
		}{{len(e.Metrics) > 0, "metric"}, {len(e.Require) > 0, "require"}, {len(e.Reject) > 0, "reject"}} {
			if k.set {
				ps = append(ps, c.problem(key+"."+k.name, "is for external tools (command), not for kernel %s", kernel))
			}
		}
		return ps
	}
	_, err := parsers.Compile(e)
	var es parsers.DefErrors
	if !errors.As(err, &es) {
		return nil
	}
	var ps Problems
	for _, de := range es {
		at := key + "." + de.Field
		p := c.problem(at, "%s", de.Msg)
		if de.Col > 0 {
			p.Msg = fmt.Sprintf("%s (column %d of the pattern)", de.Msg, de.Col)
			if c.index != nil {
				p.Line, p.Col = c.index.inString(at, patternAt(e, de.Field), de.Col)
			}
		}
		ps = append(ps, p)
	}
	return ps
}

// patternAt is the pattern a DefError's field names: metric[i].regex,
// require[i] or reject[i].
func patternAt(e *results.Extract, field string) string {
	var i int
	switch {
	case strings.HasSuffix(field, ".regex"):
		if _, err := fmt.Sscanf(field, "metric[%d].regex", &i); err == nil && i < len(e.Metrics) {
			return e.Metrics[i].Regex
		}
	case strings.HasPrefix(field, "require["):
		if _, err := fmt.Sscanf(field, "require[%d]", &i); err == nil && i < len(e.Require) {
			return e.Require[i]
		}
	case strings.HasPrefix(field, "reject["):
		if _, err := fmt.Sscanf(field, "reject[%d]", &i); err == nil && i < len(e.Reject) {
			return e.Reject[i]
		}
	}
	return ""
}
