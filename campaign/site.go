package campaign

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/sbench/sbench/hpl"
	"github.com/sbench/sbench/results"
	"github.com/sbench/sbench/sizes"
)

// Site is a site profile: one cluster's settings in a TOML file of its
// own, so that one campaign runs unchanged on several clusters. Its
// [slurm], [launcher] and [runner] tables are the campaign's, as
// defaults: a key the campaign writes itself wins (LoadWith).
type Site struct {
	Site     SiteMeta `toml:"site"`
	Slurm    Slurm    `toml:"slurm"`
	Launcher Launcher `toml:"launcher"`
	Runner   Runner   `toml:"runner"`
	Fabric   Fabric   `toml:"fabric"`
	Node     NodePeak `toml:"node"`
	// Expects are the system's acceptance references ([[expect]]); their
	// System is the profile's name unless they say otherwise.
	Expects []Expect `toml:"expect"`

	// File is the path the profile was read from.
	File string `toml:"-"`
	// Hash is "sha256:HEX" of the file's bytes.
	Hash  string    `toml:"-"`
	index *keyIndex `toml:"-"`
}

// SiteMeta is a profile's [site] table.
type SiteMeta struct {
	// Name is the system's name: the runs' system label.
	Name        string `toml:"name"`
	Description string `toml:"description"`
	// TemplatesDir holds the site's sbatch.tmpl, relative to the
	// profile's file: the campaign's templates_dir unless it gives one.
	TemplatesDir string `toml:"templates_dir"`
}

// templatesDir is the profile's templates_dir, relative to where sbench
// runs (the campaign's file may be elsewhere): absolute when it can be.
func (s *Site) templatesDir() string {
	dir := s.Site.TemplatesDir
	if dir == "" || filepath.IsAbs(dir) {
		return dir
	}
	dir = filepath.Join(filepath.Dir(s.File), dir)
	if abs, err := filepath.Abs(dir); err == nil {
		return abs
	}
	return dir
}

// Fabric is a profile's [fabric] table: the network benchmarks cross.
type Fabric struct {
	// Bind is the address ranks listen on (runner.bind's default);
	// Interface the network interface whose address each rank takes on
	// its own node (runner.interface's). At most one of them.
	Bind      string `toml:"bind"`
	Interface string `toml:"interface"`
	// LinkRate is the link's theoretical rate ("100Gbps", "200 Gb/s"):
	// the runs' link_rate label, which reports compare against.
	LinkRate string `toml:"link_rate"`
}

// NodePeak is a profile's [node] table: one node's theoretical peak,
// given as rpeak_gflops or as cores × ghz × flops_per_cycle.
type NodePeak struct {
	Cores         int     `toml:"cores"`
	GHz           float64 `toml:"ghz"`
	FlopsPerCycle float64 `toml:"flops_per_cycle"`
	RpeakGflops   float64 `toml:"rpeak_gflops"`
}

// RpeakPerNode is one node's peak in Gflops, 0 when the profile has none.
func (s *Site) RpeakPerNode() float64 {
	n := s.Node
	if n.RpeakGflops > 0 {
		return n.RpeakGflops
	}
	// As sbench hpl rpeak computes it, with every factor given.
	g, _ := hpl.Rpeak(results.Host{}, hpl.PeakSpec{Cores: n.Cores, GHz: n.GHz, FlopsPerCycle: n.FlopsPerCycle})
	return g
}

// Label is what a run records of the profile that shaped it, the
// site_profile label: "NAME sha256:HEX".
func (s *Site) Label() string { return s.Site.Name + " " + s.Hash }

// Site label names. SiteProfileLabel is a meta label (store.MetaLabels):
// it describes a run and does not make a configuration of its own.
const (
	SiteProfileLabel = "site_profile"
	SystemLabel      = "system"
	LinkRateLabel    = "link_rate"
	RpeakLabel       = "rpeak"
)

// SiteEnv is the environment variable naming the site profile; NoSite as
// its value or --site's turns the default profile off.
const (
	SiteEnv = "SBENCH_SITE"
	NoSite  = "none"
)

// DefaultSitePaths are where a profile is looked for when neither --site
// nor $SBENCH_SITE names one, in order: $XDG_CONFIG_HOME/sbench/site.toml
// (else ~/.config/sbench/site.toml), then /etc/sbench/site.toml.
func DefaultSitePaths(getenv func(string) string) []string {
	var paths []string
	if x := getenv("XDG_CONFIG_HOME"); x != "" {
		paths = append(paths, filepath.Join(x, "sbench", "site.toml"))
	} else if h := getenv("HOME"); h != "" {
		paths = append(paths, filepath.Join(h, ".config", "sbench", "site.toml"))
	}
	return append(paths, "/etc/sbench/site.toml")
}

// SitePath is the profile to use: flag (--site) if given, else
// $SBENCH_SITE, else the first of DefaultSitePaths that exists; "" for
// none (NoSite, or no default file).
func SitePath(flag string, getenv func(string) string) string {
	for _, p := range []string{flag, getenv(SiteEnv)} {
		if p == NoSite {
			return ""
		}
		if p != "" {
			return p
		}
	}
	for _, p := range DefaultSitePaths(getenv) {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}

// FindSite loads the profile SitePath names, or returns nil for none.
func FindSite(flag string, getenv func(string) string) (*Site, error) {
	p := SitePath(flag, getenv)
	if p == "" {
		return nil, nil
	}
	return LoadSite(p)
}

// LoadSite reads and checks a site profile.
func LoadSite(path string) (*Site, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read site profile: %w", err)
	}
	return ParseSite(path, data)
}

// ParseSite decodes and checks a profile's text; name is its file's.
// Problems are placed as a campaign's are: file, line, key.
func ParseSite(name string, data []byte) (*Site, error) {
	sum := sha256.Sum256(data)
	s := &Site{File: name, Hash: "sha256:" + hex.EncodeToString(sum[:])}
	doc, md, err := decodeDoc(name, data)
	if err != nil {
		return nil, err
	}
	s.index = newKeyIndex(string(data))
	scratch := s.scratch()
	d := &decoder{md: md, c: scratch, bad: map[string]bool{}}
	d.table("", doc, reflect.ValueOf(s).Elem())
	ps := d.ps
	for _, p := range s.validate(scratch) {
		// A problem of a whole table ("node": give all of …) is about
		// its keys, and one that did not decode says it better.
		if !d.covers(p.Key) && !d.within(p.Key) {
			ps = append(ps, p)
		}
	}
	if len(ps) > 0 {
		return nil, ps.sorted()
	}
	for i := range s.Expects {
		if s.Expects[i].System == "" {
			s.Expects[i].System = s.Site.Name
		}
	}
	return s, nil
}

// scratch is a campaign that places problems in the profile, so that the
// campaign's checks of its tables check the profile's (validate gives it
// the profile's tables).
func (s *Site) scratch() *Campaign {
	return &Campaign{File: s.File, index: s.index}
}

// validate checks the profile's values as the campaign's own are checked.
func (s *Site) validate(c *Campaign) Problems {
	c.Slurm, c.Launcher, c.Runner = s.Slurm, s.Launcher, s.Runner
	var ps Problems
	add := func(key, format string, args ...any) { ps = append(ps, c.problem(key, format, args...)) }
	if err := checkName(s.Site.Name); err != nil {
		add("site.name", "%v", err)
	}
	if dir := s.templatesDir(); dir != "" {
		if _, err := os.Stat(filepath.Join(dir, "sbatch.tmpl")); err != nil {
			add("site.templates_dir", "no sbatch.tmpl there: %v", err)
		}
	}
	ps = append(ps, c.validateSlurm(func(k string) string { return "slurm." + k }, s.Slurm)...)
	ps = append(ps, c.validateLauncher(func(k string) string { return "launcher." + k }, s.Launcher)...)
	ps = append(ps, c.validateRunner()...)
	ps = append(ps, s.validateAddress(c)...)
	ps = append(ps, c.validateExpects(s.Expects, true)...)
	if s.Fabric.LinkRate != "" {
		if _, err := sizes.ParseLinkRate(s.Fabric.LinkRate); err != nil {
			add("fabric.link_rate", "%v", err)
		}
	}
	n := s.Node
	for _, kv := range []struct {
		key string
		v   float64
	}{{"node.cores", float64(n.Cores)}, {"node.ghz", n.GHz}, {"node.flops_per_cycle", n.FlopsPerCycle}, {"node.rpeak_gflops", n.RpeakGflops}} {
		if kv.v < 0 {
			add(kv.key, "must not be negative")
		}
	}
	parts := 0
	for _, v := range []float64{float64(n.Cores), n.GHz, n.FlopsPerCycle} {
		if v > 0 {
			parts++
		}
	}
	switch {
	case n.RpeakGflops > 0 && parts > 0:
		add("node", "give rpeak_gflops or cores, ghz and flops_per_cycle, not both")
	case parts > 0 && parts < 3:
		add("node", "give all of cores, ghz and flops_per_cycle (Rpeak is their product), or rpeak_gflops")
	}
	return ps
}

// validateAddress checks that the ranks' address is given once, as an IP
// or an interface, in [runner] or [fabric].
func (s *Site) validateAddress(c *Campaign) Problems {
	var ps Problems
	var given []string
	for _, a := range []struct{ key, v string }{
		{"runner.bind", s.Runner.Bind}, {"runner.interface", s.Runner.Interface},
		{"fabric.bind", s.Fabric.Bind}, {"fabric.interface", s.Fabric.Interface},
	} {
		if a.v == "" {
			continue
		}
		given = append(given, a.key)
		if len(given) > 1 {
			ps = append(ps, c.problem(a.key, "%s is set too: give the ranks' address once, as bind or interface", given[0]))
			continue
		}
		if err := checkAddress(a.key, a.v); err != nil && strings.HasPrefix(a.key, "fabric.") {
			ps = append(ps, c.problem(a.key, "%v", err))
		}
	}
	return ps
}

// address is the profile's address for the ranks: runner.KEY (bind or
// interface) and the profile's key that gives it, if it gives one.
func (s *Site) address() (key, value, from string) {
	for _, a := range []struct{ key, v, from string }{
		{"runner.bind", s.Runner.Bind, "runner.bind"}, {"runner.interface", s.Runner.Interface, "runner.interface"},
		{"runner.bind", s.Fabric.Bind, "fabric.bind"}, {"runner.interface", s.Fabric.Interface, "fabric.interface"},
	} {
		if a.v != "" {
			return a.key, a.v, a.from
		}
	}
	return "", "", ""
}

// checkBind checks an address the runner listens on.
func checkBind(addr string) error {
	// sbench-runner looks up no names (it has no resolver, to stay
	// static): an IP literal or nothing.
	if ip, err := netip.ParseAddr(addr); err != nil || ip.Zone() != "" {
		return fmt.Errorf("%q is not an IP address (sbench-runner looks up no host names)", addr)
	}
	return nil
}

// SourcedExpect is an expectation and where it is written.
type SourcedExpect struct {
	Expect
	File string
	Line int
}

// Source is "FILE:LINE".
func (e SourcedExpect) Source() string { return fmt.Sprintf("%s:%d", e.File, e.Line) }

// Expectations are the profile's [[expect]] tables with their places.
func (s *Site) Expectations() []SourcedExpect {
	return sourced(s.Expects, s.File, s.index)
}

// Expectations are the campaign's [[expect]] tables, then its site
// profile's, each with its place.
func (c *Campaign) Expectations() []SourcedExpect {
	out := sourced(c.Expects, c.File, c.index)
	if c.site != nil {
		out = append(out, c.site.Expectations()...)
	}
	return out
}

func sourced(es []Expect, file string, ix *keyIndex) []SourcedExpect {
	out := make([]SourcedExpect, len(es))
	for i, e := range es {
		out[i] = SourcedExpect{Expect: e, File: file}
		if ix != nil {
			out[i].Line, _ = ix.lookup(fmt.Sprintf("expect[%d]", i))
		}
	}
	return out
}

// Site is the profile the campaign was loaded with, or nil.
func (c *Campaign) Site() *Site { return c.site }

// LoadWith reads and validates a campaign under a site profile (nil for
// none).
func LoadWith(path string, site *Site) (*Campaign, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read campaign: %w", err)
	}
	return ParseWith(path, data, site)
}

// written reports whether the campaign's file writes the key path.
func (c *Campaign) written(path string) bool { return c.index.has(path) }

// applySite takes the profile's settings where the campaign writes none:
// each key of [slurm], [launcher] and [runner] (env key by key), the
// ranks' address (bind or interface, of [runner] or [fabric]), the
// templates directory, and the labels system, site_profile and link_rate.
// origins records which campaign keys came from where in the profile, so
// that a problem with one is placed there.
func (c *Campaign) applySite(s *Site) {
	c.site = s
	c.origins = map[string]string{}
	c.mergeTable("slurm", reflect.ValueOf(&c.Slurm).Elem(), reflect.ValueOf(&s.Slurm).Elem(), s)
	// The profile's launcher keys are its launcher type's: srun's mpi
	// plugin means nothing to a campaign that starts mpirun.
	if !c.written("launcher.type") || launcherType(c.Launcher) == launcherType(s.Launcher) {
		c.mergeTable("launcher", reflect.ValueOf(&c.Launcher).Elem(), reflect.ValueOf(&s.Launcher).Elem(), s)
	}
	c.mergeTable("runner", reflect.ValueOf(&c.Runner).Elem(), reflect.ValueOf(&s.Runner).Elem(), s, "runner.bind", "runner.interface")
	// The ranks' address is one setting, an IP or an interface: the
	// campaign's, else the profile's.
	if key, v, from := s.address(); key != "" && !c.written("runner.bind") && !c.written("runner.interface") {
		if key == "runner.bind" {
			c.Runner.Bind = v
		} else {
			c.Runner.Interface = v
		}
		c.origins[key] = from
	}
	if !c.written("campaign.system") {
		c.Campaign.System = s.Site.Name
		c.origins["campaign.system"] = "site.name"
	}
	if dir := s.templatesDir(); dir != "" && !c.written("campaign.templates_dir") {
		c.Campaign.TemplatesDir = dir
		c.origins["campaign.templates_dir"] = "site.templates_dir"
	}
	labels := []struct{ name, value, at string }{
		{SystemLabel, s.Site.Name, "site.name"},
		{SiteProfileLabel, s.Label(), "site.name"},
		{LinkRateLabel, s.Fabric.LinkRate, "fabric.link_rate"},
	}
	for _, l := range labels {
		key := join("campaign.labels", l.name)
		if l.value == "" || c.written(key) {
			continue
		}
		if c.Campaign.Labels == nil {
			c.Campaign.Labels = map[string]string{}
		}
		c.Campaign.Labels[l.name] = l.value
		c.origins[key] = l.at
	}
}

// mergeTable copies the profile's keys of one table that the campaign
// does not write, but for the keys skip.
func (c *Campaign) mergeTable(table string, dst, src reflect.Value, s *Site, skip ...string) {
	for i, name := range tomlNames(dst.Type()) {
		key := table + "." + name
		if name == "" || !s.written(key) || slices.Contains(skip, key) {
			continue
		}
		df, sf := dst.Field(i), src.Field(i)
		if sf.Kind() == reflect.Map {
			merged := reflect.MakeMap(sf.Type())
			for _, k := range sf.MapKeys() {
				ek := join(key, k.String())
				if !c.written(ek) {
					merged.SetMapIndex(k, sf.MapIndex(k))
					c.origins[ek] = ek
				}
			}
			for _, k := range df.MapKeys() {
				merged.SetMapIndex(k, df.MapIndex(k))
			}
			df.Set(merged)
			continue
		}
		if c.written(key) {
			continue
		}
		df.Set(sf)
		c.origins[key] = key
	}
}

// written reports whether the profile's file writes the key path.
func (s *Site) written(path string) bool { return s.index.has(path) }

// placeAt returns the file and key index a problem about path is placed
// in, and the path to look up there: the profile's, for a setting that
// came from it.
func (c *Campaign) placeAt(at string) (string, *keyIndex, string) {
	for p := at; p != "" && c.origins != nil; p = parentPath(p) {
		if sp, ok := c.origins[p]; ok {
			return c.site.File, c.site.index, sp + at[len(p):]
		}
	}
	return c.File, c.index, at
}

// fromSite is where the site profile sets the campaign-wide setting key
// ("FILE:LINE"), or "" when the campaign, a benchmark or a variant sets it:
// for a problem that the setting causes but that is reported at another
// key.
func (c *Campaign) fromSite(key string) string {
	if at, file := c.writtenAt(key); c.site != nil && file == c.site.File {
		return at
	}
	return ""
}

// writtenAt is where key is written, as "FILE:LINE", and that file (the
// campaign's or its profile's); "" when neither writes it.
func (c *Campaign) writtenAt(key string) (at, file string) {
	file, ix, path := c.placeAt(key)
	if !ix.has(path) {
		return "", ""
	}
	line, _ := ix.lookup(path)
	return fmt.Sprintf("%s:%d", file, line), file
}

// siteLauncher drops, from a run whose launcher a benchmark, variant or
// sweep made another type than the profile's, the launcher keys it still
// has from the profile: they were the profile's type's.
func (c *Campaign) siteLauncher(cfg *Config) {
	if c.site == nil || launcherType(cfg.Launcher) == launcherType(c.site.Launcher) {
		return
	}
	run, site := reflect.ValueOf(&cfg.Launcher).Elem(), reflect.ValueOf(c.site.Launcher)
	for name, i := range launcherFields {
		if _, ok := c.origins["launcher."+name]; !ok || name == "type" {
			continue
		}
		if f := run.Field(i); reflect.DeepEqual(f.Interface(), site.Field(i).Interface()) {
			f.Set(reflect.Zero(f.Type()))
		}
	}
}

// rpeakLabel gives a run the profile's Rpeak for its node count, unless
// the campaign labels it itself.
func (c *Campaign) rpeakLabel(cfg *Config) {
	if c.site == nil {
		return
	}
	g := c.site.RpeakPerNode()
	if _, ok := cfg.Labels[RpeakLabel]; ok || g <= 0 {
		return
	}
	if cfg.Labels == nil {
		cfg.Labels = map[string]string{}
	}
	cfg.Labels[RpeakLabel] = strconv.FormatFloat(g*float64(cfg.NodeCount()), 'g', 10, 64)
}

// SettingSource is one setting of a campaign as merged with its site
// profile, and where it came from: "FILE:LINE" or "default".
type SettingSource struct {
	Key, Value, From string
}

// builtinDefaults are the settings that have a value when nobody gives one.
var builtinDefaults = map[string]string{
	"campaign.mode":        ModeSteps,
	"campaign.results_dir": DefaultResultsDir,
	"launcher.type":        "srun",
	"runner.path":          "sbench-runner",
	"slurm.nodes":          "1",
}

// Sources lists the campaign-wide settings ([campaign], [slurm],
// [launcher], [runner]) that have a value, each with where it came from:
// the campaign's file and line, the profile's, or a default. Overrides of
// benchmarks, variants and sweeps are the campaign's own and not listed.
func (c *Campaign) Sources() []SettingSource {
	var out []SettingSource
	for _, t := range []struct {
		name string
		v    reflect.Value
	}{
		{"campaign", reflect.ValueOf(c.Campaign)},
		{"slurm", reflect.ValueOf(c.Slurm)},
		{"launcher", reflect.ValueOf(c.Launcher)},
		{"runner", reflect.ValueOf(c.Runner)},
	} {
		for i, name := range tomlNames(t.v.Type()) {
			if name == "" {
				continue
			}
			key, f := t.name+"."+name, t.v.Field(i)
			if f.Kind() == reflect.Map {
				keys := f.MapKeys()
				sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
				for _, k := range keys {
					out = append(out, c.source(join(key, k.String()), settingText(f.MapIndex(k))))
				}
				continue
			}
			if f.IsZero() {
				if d, ok := builtinDefaults[key]; ok {
					out = append(out, SettingSource{Key: key, Value: strconv.Quote(d), From: "default"})
				}
				continue
			}
			out = append(out, c.source(key, settingText(f)))
		}
	}
	if s := c.site; s != nil && s.RpeakPerNode() > 0 && !c.written(join("campaign.labels", RpeakLabel)) {
		line, _ := s.index.lookup("node")
		out = append(out, SettingSource{Key: join("campaign.labels", RpeakLabel),
			Value: strconv.FormatFloat(s.RpeakPerNode(), 'g', 10, 64) + " Gflops × each run's nodes", From: fmt.Sprintf("%s:%d", s.File, line)})
	}
	return out
}

// source places one setting.
func (c *Campaign) source(key, value string) SettingSource {
	at, _ := c.writtenAt(key)
	return SettingSource{Key: key, Value: value, From: cmp.Or(at, "default")}
}

// settingText writes a setting's value as TOML would.
func settingText(v reflect.Value) string {
	switch x := v.Interface().(type) {
	case string:
		return strconv.Quote(x)
	case []string:
		return "[" + strings.Join(mapped(x, strconv.Quote), ", ") + "]"
	case Nodes:
		return x.String()
	}
	return fmt.Sprint(v.Interface())
}
