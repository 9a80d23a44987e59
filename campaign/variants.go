package campaign

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// DefaultVariant names the single variant of a campaign without variants
// or a sweep.
const DefaultVariant = "default"

// zipKey is the sweep key that pairs other swept keys: zip = [["a", "b"]]
// takes a's and b's values together instead of every combination.
const zipKey = "zip"

// Setting is one swept key and the value a variant gives it.
type Setting struct {
	Key   string
	Value any
}

// Text is the value as written in names and bundle params.
func (s Setting) Text() string { return valueText(s.Value) }

// Variant is one point of the campaign: a [[variant]] (if any) with one
// value of each swept key.
type Variant struct {
	Index int
	// Name is the spec's name and "key=value" settings, comma-separated,
	// or DefaultVariant.
	Name string
	// Slug is Name made safe for file and job names.
	Slug     string
	Spec     *VariantSpec
	Settings []Setting
}

// Config is the effective setup of one run: the campaign's defaults with
// the benchmark's, the variant's and the sweeps' overrides applied.
type Config struct {
	Slurm    Slurm
	Launcher Launcher
	Env      map[string]string
	Modules  []string
	Setup    []string
	Params   map[string]string
	Labels   map[string]string
	// tool is what a variant or a sweep chose the run to execute instead
	// of its benchmark's own tool; Run.Benchmark has it applied.
	tool toolChoice
}

// toolKeys are the keys with which a variant or a sweep chooses what a
// run executes.
var toolKeys = map[string]bool{"kernel": true, "command": true, "parser": true}

// toolChoice is a run's choice of tool, made by its variant or its sweep
// points, each later one overriding: a kernel replaces a command and its
// parser, a command replaces a kernel. The *At fields are the key paths
// where each choice was written ("" when not chosen), for problems.
type toolChoice struct {
	kernel, parser                string
	command                       []string
	kernelAt, commandAt, parserAt string
}

// choose applies one choice, key = v, written at the key path at. An
// empty value ("" or []) chooses nothing: in a zip, a point that runs a
// kernel leaves the command empty, and the other way round.
func (t *toolChoice) choose(key, at string, v any) error {
	switch key {
	case "kernel":
		s, ok := v.(string)
		if !ok {
			return fmt.Errorf("has type %s; want a kernel name", tomlType(v))
		}
		if s != "" {
			t.kernel, t.kernelAt = s, at
			t.command, t.commandAt = nil, ""
			t.parser, t.parserAt = "", ""
		}
	case "command":
		argv, err := stringList(v)
		if err != nil {
			return err
		}
		if len(argv) > 0 {
			t.command, t.commandAt = argv, at
			t.kernel, t.kernelAt = "", ""
		}
	case "parser":
		s, ok := v.(string)
		if !ok {
			return fmt.Errorf("has type %s; want a parser name", tomlType(v))
		}
		if s != "" {
			t.parser, t.parserAt = s, at
		}
	}
	return nil
}

// toolConflict names the key of settings (one sweep point) that chooses
// what another key of it contradicts: a kernel and a command, or a kernel
// and a parser; "" when they agree.
func toolConflict(settings []Setting) string {
	chosen := map[string]bool{}
	for _, st := range settings {
		switch v := st.Value.(type) {
		case string:
			chosen[st.Key] = toolKeys[st.Key] && v != ""
		case []any:
			chosen[st.Key] = st.Key == "command" && len(v) > 0
		}
	}
	switch {
	case chosen["kernel"] && chosen["command"]:
		return "command"
	case chosen["kernel"] && chosen["parser"]:
		return "parser"
	}
	return ""
}

// running is benchmark b as a run with choice t executes it: b itself
// when nothing was chosen.
func (b *Benchmark) running(t toolChoice) *Benchmark {
	if t.kernelAt == "" && t.commandAt == "" && t.parserAt == "" {
		return b
	}
	e := *b
	switch {
	case t.kernelAt != "":
		// A native kernel: nothing of the benchmark's tool applies.
		e.Kernel = t.kernel
		e.Command, e.PerRank, e.Parser, e.Output, e.StartDelay, e.Files, e.Kind, e.HPL = nil, nil, "", "", "", nil, "", nil
		e.Metrics, e.Require, e.Reject = nil, nil, nil
	case t.commandAt != "":
		e.Kernel = ""
		e.Command, e.PerRank = t.command, nil
	}
	if t.parserAt != "" {
		e.Parser = t.parser
	}
	return &e
}

// Ranks is the number of tasks of one step.
func (c Config) Ranks() int {
	s := c.Slurm
	n := s.Nodes.Max
	switch {
	case s.Ntasks > 0:
		return s.Ntasks
	case n > 0 && s.NtasksPerNode > 0:
		return n * s.NtasksPerNode
	case s.NtasksPerNode > 0:
		return s.NtasksPerNode
	case n > 0:
		return n
	}
	return 1
}

// NodeCount is the number of nodes of one step (the top of a range).
func (c Config) NodeCount() int { return max(c.Slurm.Nodes.Max, 1) }

// TasksPerNode is the number of tasks per node, as srun's block
// distribution places them.
func (c Config) TasksPerNode() int {
	if c.Slurm.NtasksPerNode > 0 {
		return c.Slurm.NtasksPerNode
	}
	n := c.NodeCount()
	return (c.Ranks() + n - 1) / n
}

// apply sets one key of a sweep or an override: env.NAME, param.NAME,
// label.NAME, modules, setup, launcher.KEY, or a [slurm] key.
func (c *Config) apply(key string, v any) error {
	prefix, name, dotted := strings.Cut(key, ".")
	switch {
	case dotted && (prefix == "env" || prefix == "param" || prefix == "label"):
		read, dst := scalarString, map[string]map[string]string{"env": c.Env, "param": c.Params, "label": c.Labels}[prefix]
		if prefix == "param" {
			read = paramString // a list of values is joined
		}
		s, err := read(v)
		if err != nil {
			return err
		}
		dst[name] = s
	case dotted && prefix == "launcher":
		return setKey(&c.Launcher, launcherFields, name, v)
	case !dotted && (key == "modules" || key == "setup"):
		list, err := stringList(v)
		if err != nil {
			return err
		}
		if key == "modules" {
			c.Modules = list
		} else {
			c.Setup = list
		}
	case !dotted:
		if key == "env" || key == "teardown" || key == "job_name" || key == "output" || key == "error" {
			return fmt.Errorf("is set for the whole job in [slurm], not per run")
		}
		return setKey(&c.Slurm, slurmFields, key, v)
	default:
		return fmt.Errorf("unknown key: use env.NAME, param.NAME, label.NAME, launcher.KEY, modules, setup or a [slurm] key")
	}
	return nil
}

// applyTable applies a [benchmark.slurm]-style table of overrides; keys
// come in sorted order so that errors come out in a stable order.
func (c *Config) applyTable(prefix string, m map[string]any) error {
	for _, k := range slices.Sorted(maps.Keys(m)) {
		key := k
		if prefix != "" {
			key = prefix + "." + k
		}
		if err := c.apply(key, m[k]); err != nil {
			return &keyError{key: k, err: err}
		}
	}
	return nil
}

type keyError struct {
	key string
	err error
}

func (e *keyError) Error() string { return e.key + ": " + e.err.Error() }

// base is the campaign's defaults.
func (c *Campaign) base() Config {
	return Config{
		Slurm:    c.Slurm,
		Launcher: c.Launcher,
		Env:      mergeMaps(nil, c.Slurm.Env),
		Modules:  c.Slurm.Modules,
		Setup:    nil,
		Params:   map[string]string{},
		Labels:   mergeMaps(nil, c.Campaign.Labels),
	}
}

// sweepDims turns a sweep into its dimensions in written order: a plain key
// is a dimension of its own, a zip group one dimension of paired values.
func sweepDims(sweep map[string]any, order []string) [][][]Setting {
	zipped := map[string]int{} // key -> group index
	groups, _ := sweep[zipKey].([]any)
	for gi, g := range groups {
		keys, _ := g.([]any)
		for _, k := range keys {
			if s, ok := k.(string); ok {
				zipped[s] = gi
			}
		}
	}
	var dims [][][]Setting
	done := map[int]bool{}
	for _, k := range order {
		if k == zipKey {
			continue
		}
		gi, isZipped := zipped[k]
		if !isZipped {
			vals, _ := sweep[k].([]any)
			var dim [][]Setting
			for _, v := range vals {
				dim = append(dim, []Setting{{Key: k, Value: v}})
			}
			dims = append(dims, dim)
			continue
		}
		if done[gi] {
			continue
		}
		done[gi] = true
		var members []string
		for _, k2 := range order {
			if g2, ok := zipped[k2]; ok && g2 == gi {
				members = append(members, k2)
			}
		}
		first, _ := sweep[members[0]].([]any)
		var dim [][]Setting
		for i := range first {
			var point []Setting
			for _, m := range members {
				vals, _ := sweep[m].([]any)
				if i < len(vals) {
					point = append(point, Setting{Key: m, Value: vals[i]})
				}
			}
			dim = append(dim, point)
		}
		dims = append(dims, dim)
	}
	return dims
}

// points is the cartesian product of a sweep's dimensions, the first
// varying slowest.
func points(dims [][][]Setting) [][]Setting {
	out := [][]Setting{nil}
	for _, dim := range dims {
		var next [][]Setting
		for _, p := range out {
			for _, d := range dim {
				next = append(next, append(append([]Setting(nil), p...), d...))
			}
		}
		out = next
	}
	return out
}

// settingsName names a sweep point by its settings. A tool key left empty
// chose nothing (the other one of a zipped kernel and command did), and
// is no part of the name.
func settingsName(ss []Setting) string {
	parts := make([]string, 0, len(ss))
	for _, s := range ss {
		if toolKeys[s.Key] && s.Text() == "" {
			continue
		}
		parts = append(parts, s.Key+"="+s.Text())
	}
	return strings.Join(parts, ",")
}

// AllVariants expands [[variant]] × [sweep], variants outermost.
func (c *Campaign) AllVariants() []Variant {
	specs := []*VariantSpec{nil}
	if len(c.Variants) > 0 {
		specs = specs[:0]
		for i := range c.Variants {
			specs = append(specs, &c.Variants[i])
		}
	}
	pts := points(sweepDims(c.Sweep, c.sweepOrder))
	var out []Variant
	for _, spec := range specs {
		for _, p := range pts {
			var parts []string
			if spec != nil {
				parts = append(parts, spec.Name)
			}
			if sn := settingsName(p); sn != "" {
				parts = append(parts, sn)
			}
			name := strings.Join(parts, ",")
			if name == "" {
				name = DefaultVariant
			}
			out = append(out, Variant{Index: len(out), Name: name, Slug: slug(name), Spec: spec, Settings: p})
		}
	}
	return out
}

// overlay applies a benchmark's or a variant's own settings over c:
// its slurm and launcher tables, env, modules, params and labels.
func (c *Config) overlay(slurm, launcher map[string]any, env map[string]string, modules []string,
	params map[string]any, labels map[string]string) error {
	if err := c.applyTable("", slurm); err != nil {
		return err
	}
	if err := c.applyTable("launcher", launcher); err != nil {
		return err
	}
	c.Env = mergeMaps(c.Env, env)
	if len(modules) > 0 {
		c.Modules = modules
	}
	for k, val := range params {
		s, err := paramString(val)
		if err != nil {
			return &keyError{key: "params." + k, err: err}
		}
		c.Params[k] = s
	}
	c.Labels = mergeMaps(c.Labels, labels)
	return nil
}

// config computes a run's effective setup: defaults, then the benchmark's
// overrides, the variant's, the campaign's sweep and the benchmark's sweep
// (benchmark bi's).
func (c *Campaign) config(v Variant, bi int, bench []Setting) (Config, error) {
	b := &c.Benchmarks[bi]
	cfg := c.base()
	if err := cfg.overlay(b.Slurm, b.Launcher, b.Env, b.Modules, b.Params, b.Labels); err != nil {
		return cfg, err
	}
	if s := v.Spec; s != nil {
		if err := cfg.overlay(s.Slurm, s.Launcher, s.Env, s.Modules, s.Params, s.Labels); err != nil {
			return cfg, err
		}
		if len(s.Setup) > 0 {
			cfg.Setup = s.Setup
		}
		// The variant's tool; validate has checked the types.
		at := fmt.Sprintf("variant[%d].", c.specIndex(s))
		if s.Kernel != "" {
			cfg.tool.choose("kernel", at+"kernel", s.Kernel)
		}
		if len(s.Command) > 0 {
			cfg.tool.choose("command", at+"command", anyList(s.Command))
		}
		if s.Parser != "" {
			cfg.tool.choose("parser", at+"parser", s.Parser)
		}
	}
	for _, st := range v.Settings {
		if err := cfg.applySetting("sweep", st); err != nil {
			return cfg, err
		}
	}
	for _, st := range bench {
		if err := cfg.applySetting(fmt.Sprintf("benchmark[%d].sweep", bi), st); err != nil {
			return cfg, err
		}
	}
	c.siteLauncher(&cfg)
	c.rpeakLabel(&cfg)
	return cfg, nil
}

// applySetting applies one swept key of the sweep at prefix.
func (cfg *Config) applySetting(prefix string, st Setting) error {
	var err error
	if toolKeys[st.Key] {
		err = cfg.tool.choose(st.Key, prefix+"."+st.Key, st.Value)
	} else {
		err = cfg.apply(st.Key, st.Value)
	}
	if err != nil {
		return &keyError{key: st.Key, err: err}
	}
	return nil
}

// specIndex is the index of a [[variant]] table.
func (c *Campaign) specIndex(s *VariantSpec) int {
	for i := range c.Variants {
		if &c.Variants[i] == s {
			return i
		}
	}
	return -1
}

func anyList(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
