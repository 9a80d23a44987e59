package templates

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
func (c Config) NodeCount() int {
	if c.Slurm.Nodes.Max > 0 {
		return c.Slurm.Nodes.Max
	}
	return 1
}

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
	case dotted && prefix == "env":
		s, err := scalarString(v)
		if err != nil {
			return err
		}
		c.Env[name] = s
	case dotted && prefix == "param":
		s, err := paramString(v)
		if err != nil {
			return err
		}
		c.Params[name] = s
	case dotted && prefix == "label":
		s, err := scalarString(v)
		if err != nil {
			return err
		}
		c.Labels[name] = s
	case dotted && prefix == "launcher":
		return setKey(&c.Launcher, launcherFields, name, v)
	case !dotted && key == "modules":
		list, err := stringList(v)
		if err != nil {
			return err
		}
		c.Modules = list
	case !dotted && key == "setup":
		list, err := stringList(v)
		if err != nil {
			return err
		}
		c.Setup = list
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
		Env:      copyMap(c.Slurm.Env),
		Modules:  c.Slurm.Modules,
		Setup:    nil,
		Params:   map[string]string{},
		Labels:   copyMap(c.Campaign.Labels),
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

func settingsName(ss []Setting) string {
	parts := make([]string, len(ss))
	for i, s := range ss {
		parts[i] = s.Key + "=" + s.Text()
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
			if len(p) > 0 {
				parts = append(parts, settingsName(p))
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

// config computes a run's effective setup: defaults, then the benchmark's
// overrides, the variant's, the campaign's sweep and the benchmark's sweep.
func (c *Campaign) config(v Variant, b *Benchmark, bench []Setting) (Config, error) {
	cfg := c.base()
	if err := cfg.applyTable("", b.Slurm); err != nil {
		return cfg, err
	}
	if err := cfg.applyTable("launcher", b.Launcher); err != nil {
		return cfg, err
	}
	cfg.Env = mergeMaps(cfg.Env, b.Env)
	if len(b.Modules) > 0 {
		cfg.Modules = b.Modules
	}
	for k, val := range b.Params {
		s, err := paramString(val)
		if err != nil {
			return cfg, &keyError{key: "params." + k, err: err}
		}
		cfg.Params[k] = s
	}
	cfg.Labels = mergeMaps(cfg.Labels, b.Labels)
	if s := v.Spec; s != nil {
		if err := cfg.applyTable("", s.Slurm); err != nil {
			return cfg, err
		}
		if err := cfg.applyTable("launcher", s.Launcher); err != nil {
			return cfg, err
		}
		cfg.Env = mergeMaps(cfg.Env, s.Env)
		if len(s.Modules) > 0 {
			cfg.Modules = s.Modules
		}
		if len(s.Setup) > 0 {
			cfg.Setup = s.Setup
		}
		for k, val := range s.Params {
			p, err := paramString(val)
			if err != nil {
				return cfg, &keyError{key: "params." + k, err: err}
			}
			cfg.Params[k] = p
		}
		cfg.Labels = mergeMaps(cfg.Labels, s.Labels)
	}
	for _, st := range append(append([]Setting(nil), v.Settings...), bench...) {
		if err := cfg.apply(st.Key, st.Value); err != nil {
			return cfg, &keyError{key: st.Key, err: err}
		}
	}
	return cfg, nil
}
