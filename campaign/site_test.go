package campaign

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// loadUnder loads the campaign file under the profile file ("" for none).
func loadUnder(t *testing.T, campaignFile, siteFile string) *Campaign {
	t.Helper()
	var s *Site
	if siteFile != "" {
		var err error
		if s, err = LoadSite(siteFile); err != nil {
			t.Fatal(err)
		}
	}
	c, err := LoadWith(campaignFile, s)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// script renders the campaign's only job.
func script(t *testing.T, c *Campaign) string {
	t.Helper()
	p, err := c.Plan()
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewRenderer(WithVersion("test"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := r.Script(p, p.Jobs[0])
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestSiteProfilesRenderOneCampaignTwoWays: one campaign that names no
// cluster, rendered under two profiles, gives two scripts with each
// cluster's partition, account, modules, environment, launcher and labels.
func TestSiteProfilesRenderOneCampaignTwoWays(t *testing.T) {
	const camp = "testdata/sites/portable.toml"
	bare := script(t, loadUnder(t, camp, ""))
	a := script(t, loadUnder(t, camp, "testdata/sites/site-a.toml"))
	b := script(t, loadUnder(t, camp, "testdata/sites/site-b.toml"))
	wantA := []string{
		"#SBATCH --partition=hdr\n", "#SBATCH --account=acc-alpha\n", "#SBATCH --qos=bench\n",
		"#SBATCH --gres-flags=enforce-binding\n", "module load openmpi/4.1.6 ucx/1.15\n",
		"export UCX_TLS=rc,sm\n", "export OMPI_MCA_pml=ucx\n", " --mpi=pmix ",
		" --bind 10.1.0.1 ", " --label link_rate=200Gbps ", " --label rpeak=4096 ", // 2 nodes × 64 × 2.0 × 16
		" --label 'site_profile=alpha sha256:", " --label system=alpha ",
	}
	wantB := []string{
		"#SBATCH --partition=ethernet\n", "#SBATCH --account=acc-beta\n", "module load mpich/4.1\n",
		"export FI_PROVIDER=tcp\n", " mpirun -np 2 -ppn 1 -bind-to core sbench-runner ",
		" --label 'link_rate=25 Gb/s' ", " --label rpeak=2000 ", " --label 'site_profile=beta sha256:", " --label system=beta ",
	}
	for _, w := range wantA {
		if !strings.Contains(a, w) {
			t.Errorf("site-a's script lacks %q:\n%s", w, a)
		}
		if strings.Contains(bare, w) || strings.Contains(b, w) {
			t.Errorf("%q is in a script rendered without site-a", w)
		}
	}
	for _, w := range wantB {
		if !strings.Contains(b, w) {
			t.Errorf("site-b's script lacks %q:\n%s", w, b)
		}
		if strings.Contains(bare, w) || strings.Contains(a, w) {
			t.Errorf("%q is in a script rendered without site-b", w)
		}
	}
	for name, s := range map[string]string{"bare": bare, "a": a, "b": b} {
		f := filepath.Join(t.TempDir(), name+".sbatch")
		os.WriteFile(f, []byte(s), 0o644)
		if out, err := exec.Command("bash", "-n", f).CombinedOutput(); err != nil {
			t.Errorf("%s: bash -n: %v\n%s", name, err, out)
		}
	}
}

// TestSiteMergePrecedence: what the campaign writes wins, key by key
// (env variable by env variable); the profile fills the rest.
func TestSiteMergePrecedence(t *testing.T) {
	s, err := LoadSite("testdata/sites/site-a.toml")
	if err != nil {
		t.Fatal(err)
	}
	c, err := ParseWith("c.toml", []byte(`[campaign]
name = "q"
labels = { link_rate = "100Gbps" }
[slurm]
partition = "debug"
nodes = 2
ntasks_per_node = 1
modules = ["gcc"]
env = { UCX_TLS = "tcp" }
[launcher]
mpi = "pmi2"
[runner]
bind = "192.168.0.7"
[[benchmark]]
name = "lat"
kernel = "latency"
`), s)
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct{ what, got, want string }{
		{"partition", c.Slurm.Partition, "debug"},
		{"account", c.Slurm.Account, "acc-alpha"},
		{"qos", c.Slurm.QOS, "bench"},
		{"modules", strings.Join(c.Slurm.Modules, " "), "gcc"},
		{"env UCX_TLS", c.Slurm.Env["UCX_TLS"], "tcp"},
		{"env OMPI_MCA_pml", c.Slurm.Env["OMPI_MCA_pml"], "ucx"},
		{"launcher.type", c.Launcher.Type, "srun"},
		{"launcher.mpi", c.Launcher.MPI, "pmi2"},
		{"runner.bind", c.Runner.Bind, "192.168.0.7"},
		{"link_rate", c.Campaign.Labels["link_rate"], "100Gbps"},
		{"system", c.Campaign.Labels["system"], "alpha"},
		{"site_profile", c.Campaign.Labels["site_profile"], "alpha " + s.Hash},
	}
	for _, ck := range checks {
		if ck.got != ck.want {
			t.Errorf("%s = %q; want %q", ck.what, ck.got, ck.want)
		}
	}
	if s.Slurm.Env["UCX_TLS"] != "rc,sm" {
		t.Errorf("the merge changed the profile's env: %v", s.Slurm.Env)
	}
	if !strings.HasPrefix(s.Hash, "sha256:") || len(s.Hash) != len("sha256:")+64 {
		t.Errorf("hash %q", s.Hash)
	}
}

// TestSiteProblems: a profile's problems are placed as a campaign's are,
// at file:line:col and key, every one at once.
func TestSiteProblems(t *testing.T) {
	_, err := ParseSite("s.toml", []byte(`[site]
name = "bad name"
[slurm]
partiton = "x"
modules = 3
qos = "a\nb"
[launcher]
type = "aprun"
[fabric]
bind = "ib0"
link_rate = "fast"
[node]
cores = 64
[gpu]
count = 4
`))
	want := []string{
		`s.toml:2:1: site.name: "bad name" has a character that is not allowed (use letters, digits, '.', '_' and '-', at most 64, starting with a letter or digit)`,
		`s.toml:4:1: slurm.partiton: unknown key (did you mean "partition"?)`,
		`s.toml:5:1: slurm.modules: has type integer; want a list of strings`,
		`s.toml:6:1: slurm.qos: "a\nb" has a control character (newline, tab …), which is not allowed in an #SBATCH line`,
		`s.toml:8:1: launcher.type: "aprun" is not a launcher: use srun, mpirun or mpiexec`,
		`s.toml:10:1: fabric.bind: "ib0" is not an IP address (sbench-runner looks up no host names)`,
		`s.toml:11:1: fabric.link_rate: link rate "fast": want a rate such as 100Gbps, 25 Gb/s, 800Mbps or 12500MB/s`,
		`s.toml:12:1: node: give all of cores, ghz and flops_per_cycle (Rpeak is their product), or rpeak_gflops`,
		`s.toml:14:1: gpu: unknown key`,
	}
	if err == nil {
		t.Fatal("no error")
	}
	if got := err.Error(); got != strings.Join(want, "\n") {
		t.Errorf("problems:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
	}
	if _, err := ParseSite("s.toml", []byte("[site\nname = 1\n")); err == nil || !strings.HasPrefix(err.Error(), "s.toml:1:") {
		t.Errorf("syntax error: %v", err)
	}
}

// mpirunSite is a profile s.toml whose launcher is mpirun (line 4).
func mpirunSite(t *testing.T) *Site {
	t.Helper()
	s, err := ParseSite("s.toml", []byte(`[site]
name = "x"
[launcher]
type = "mpirun"
flavor = "openmpi"
`))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestSiteProblemOfMergedSetting: a setting the profile gave that does
// not fit the campaign is placed in the profile, at its key.
func TestSiteProblemOfMergedSetting(t *testing.T) {
	s := mpirunSite(t)
	_, err := ParseWith("c.toml", []byte(`[campaign]
name = "q"
[slurm]
nodes = 3
ntasks = 4
[[benchmark]]
name = "b"
kernel = "latency"
`), s)
	want := `s.toml:4:1: launcher.type: variant default: 4 rank(s) on 3 nodes: mpirun's --map-by ppr:2:node puts 2 on each node, so they fill 2 node(s); give ntasks_per_node, or a rank count that fills every node`
	if err == nil || err.Error() != want {
		t.Errorf("got %v; want %s", err, want)
	}
}

// TestSiteValuesReachingScripts: a profile value with a quote, a space or
// a newline is quoted in the script (env) or refused where quoting is not
// possible (an #SBATCH line, a module name).
func TestSiteValuesReachingScripts(t *testing.T) {
	s, err := ParseSite("s.toml", []byte(`[site]
name = "x"
[slurm.env]
MSG = "it's $(rm -rf /) a\nb"
[launcher]
command = "/opt/my srun"
args = ["--x=it's $(id)"]
[runner]
path = "/opt/sb runner"
`))
	if err != nil {
		t.Fatal(err)
	}
	c, err := ParseWith("c.toml", []byte(problemHead+`[[benchmark]]
name = "lat"
kernel = "latency"
`), s)
	if err != nil {
		t.Fatal(err)
	}
	sc := script(t, c)
	if !strings.Contains(sc, `export MSG='it'\''s $(rm -rf /) a`+"\nb'") {
		t.Errorf("the env value is not quoted:\n%s", sc)
	}
	for _, w := range []string{` '/opt/my srun' --nodes=2 `, ` '--x=it'\''s $(id)' -- '/opt/sb runner' run `} {
		if !strings.Contains(sc, w) {
			t.Errorf("no %s in\n%s", w, sc)
		}
	}
	// The quoted value, run by bash, is the value itself.
	out, err := exec.Command("bash", "-c", "export MSG='it'\\''s $(rm -rf /) a\nb'; printf %s \"$MSG\"").Output()
	if err != nil || string(out) != "it's $(rm -rf /) a\nb" {
		t.Errorf("bash read %q, %v", out, err)
	}
	for _, tc := range []struct{ text, want string }{
		{"[site]\nname = \"x\"\n[slurm]\npartition = \"a\\nb\"\n", `s.toml:4:1: slurm.partition: "a\nb" has a control character`},
		{"[site]\nname = \"x\"\n[slurm]\nmodules = [\"ok\", \"a\\nrm -rf /\"]\n", `s.toml:4:18: slurm.modules[1]: "a\nrm -rf /" is not a module name`},
		{"[site]\nname = \"x\"\n[slurm]\nextra = [\"--x\\n#SBATCH --y\"]\n", `s.toml:4:10: slurm.extra[0]: "--x\n#SBATCH --y" has a control character`},
		{"[site]\nname = \"x\"\n[slurm.env]\n\"A B\" = \"1\"\n", `s.toml:4:1: slurm.env."A B": "A B" is not a valid environment variable name`},
	} {
		_, err := ParseSite("s.toml", []byte(tc.text))
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%q: got %v; want %s…", tc.text, err, tc.want)
		}
	}
}

// TestSitePath: --site, else $SBENCH_SITE, else the first default file
// that exists; "none" turns it off.
func TestSitePath(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	env["HOME"] = dir
	if p := SitePath("", getenv); p != "" {
		t.Errorf("no profile anywhere: got %q", p)
	}
	home := filepath.Join(dir, ".config", "sbench", "site.toml")
	os.MkdirAll(filepath.Dir(home), 0o755)
	os.WriteFile(home, []byte("[site]\nname = \"h\"\n"), 0o644)
	for _, tc := range []struct{ flag, envSite, xdg, want string }{
		{"", "", "", home},
		{"", "", filepath.Join(dir, "xdg"), ""}, // $XDG_CONFIG_HOME replaces ~/.config
		{"", "/e.toml", "", "/e.toml"},
		{"/f.toml", "/e.toml", "", "/f.toml"},
		{"none", "/e.toml", "", ""},
		{"", "none", "", ""},
	} {
		env["SBENCH_SITE"], env["XDG_CONFIG_HOME"] = tc.envSite, tc.xdg
		if got := SitePath(tc.flag, getenv); got != tc.want {
			t.Errorf("SitePath(%q) with SBENCH_SITE=%q XDG_CONFIG_HOME=%q = %q; want %q", tc.flag, tc.envSite, tc.xdg, got, tc.want)
		}
	}
	env["SBENCH_SITE"], env["XDG_CONFIG_HOME"] = "", ""
	s, err := FindSite("", getenv)
	if err != nil || s == nil || s.Site.Name != "h" {
		t.Errorf("FindSite = %v, %v", s, err)
	}
	if _, err := FindSite(filepath.Join(dir, "missing.toml"), getenv); err == nil {
		t.Error("a --site file that does not exist is no error")
	}
}

// TestSiteSources: where each merged setting came from.
func TestSiteSources(t *testing.T) {
	c := loadUnder(t, "testdata/sites/portable.toml", "testdata/sites/site-a.toml")
	got := map[string]string{}
	for _, s := range c.Sources() {
		got[s.Key] = s.Value + " @ " + s.From
	}
	for k, want := range map[string]string{
		"slurm.partition":           `"hdr" @ testdata/sites/site-a.toml:7`,
		"slurm.nodes":               `2 @ testdata/sites/portable.toml:6`,
		"slurm.env.UCX_TLS":         `"rc,sm" @ testdata/sites/site-a.toml:14`,
		"launcher.mpi":              `"pmix" @ testdata/sites/site-a.toml:19`,
		"runner.bind":               `"10.1.0.1" @ testdata/sites/site-a.toml:22`,
		"runner.path":               `"sbench-runner" @ default`,
		"campaign.labels.link_rate": `"200Gbps" @ testdata/sites/site-a.toml:23`,
		"campaign.labels.rpeak":     `2048 Gflops × each run's nodes @ testdata/sites/site-a.toml:25`,
	} {
		if got[k] != want {
			t.Errorf("%s: %q; want %q", k, got[k], want)
		}
	}
}

// TestSiteExpectations: the campaign's and the profile's [[expect]], each
// with its place; the profile's are its system's.
func TestSiteExpectations(t *testing.T) {
	c := loadUnder(t, "testdata/sites/portable.toml", "testdata/sites/site-a.toml")
	es := c.Expectations()
	if len(es) != 1 {
		t.Fatalf("expectations: %+v", es)
	}
	e := es[0]
	if e.Source() != "testdata/sites/site-a.toml:30" || e.Bound != "<= 3 us" || e.System != "alpha" || e.Benchmark != "lat" {
		t.Errorf("expectation %+v from %s", e.Expect, e.Source())
	}
}

// TestSiteNodeAndFabric: the peak is given one way, whole; the address once.
func TestSiteNodeAndFabric(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"[node]\nrpeak_gflops = 100\ncores = 4\n", `s.toml:3:1: node: give rpeak_gflops or cores, ghz and flops_per_cycle, not both`},
		{"[node]\nrpeak_gflops = -1\n", `s.toml:4:1: node.rpeak_gflops: must not be negative`},
		{"[node]\ncores = 4\nghz = \"fast\"\nflops_per_cycle = 16\n", `s.toml:5:1: node.ghz: has type string; want a number`},
		{"[runner]\nbind = \"10.0.0.1\"\n[fabric]\nbind = \"10.0.0.2\"\n", `s.toml:6:1: fabric.bind: runner.bind is set too: give the ranks' address once, as bind or interface`},
		{"[fabric]\nbind = \"10.0.0.2\"\ninterface = \"ib0\"\n", `s.toml:5:1: fabric.interface: fabric.bind is set too: give the ranks' address once, as bind or interface`},
		{"[fabric]\ninterface = \"ib 0\"\n", `s.toml:4:1: fabric.interface: "ib 0" is not a network interface name (such as ib0 or enp1s0f1)`},
		{"[runner]\ninterface = \"ib0;reboot\"\n", `s.toml:4:1: runner.interface: "ib0;reboot" is not a network interface name (such as ib0 or enp1s0f1)`},
		{"templates_dir = \"nowhere\"\n", `s.toml:3:1: site.templates_dir: no sbatch.tmpl there: stat /`}, // then the absolute path

	} {
		_, err := ParseSite("s.toml", []byte("[site]\nname = \"x\"\n"+tc.text))
		if err == nil || err.Error() != tc.want && !(strings.HasSuffix(tc.want, "/") && strings.HasPrefix(err.Error(), tc.want) && !strings.Contains(err.Error(), "\n")) {
			t.Errorf("%q: got %v; want %s", tc.text, err, tc.want)
		}
	}
	s, err := ParseSite("s.toml", []byte("[site]\nname = \"x\"\n[node]\ncores = 48\nghz = 2.1\nflops_per_cycle = 32\n"))
	if g := s.RpeakPerNode(); err != nil || g < 3225.5999 || g > 3225.6001 {
		t.Fatalf("Rpeak %v, %v; want %v", s.RpeakPerNode(), err, 48*2.1*32)
	}
	// The label is the peak of the run's nodes, written as a person would.
	c, err := ParseWith("c.toml", []byte(problemHead+"[[benchmark]]\nname = \"lat\"\nkernel = \"latency\"\n"), s)
	if err != nil {
		t.Fatal(err)
	}
	p, err := c.Plan()
	if err != nil {
		t.Fatal(err)
	}
	if args := strings.Join(p.Jobs[0].Steps[0].RunnerArgs, " "); !strings.Contains(args, "--label rpeak=6451.2 ") {
		t.Errorf("runner args of a 2-node run: %s", args)
	}
}

// TestSiteLauncherIsItsTypes: the profile's launcher keys are for its
// launcher type; a campaign, variant or benchmark that starts another
// launcher takes none of them, and the others keep them.
func TestSiteLauncherIsItsTypes(t *testing.T) {
	s, err := LoadSite("testdata/sites/site-a.toml") // srun, mpi = "pmix"
	if err != nil {
		t.Fatal(err)
	}
	c, err := ParseWith("c.toml", []byte(problemHead+`[launcher]
type = "mpirun"
flavor = "openmpi"
[[benchmark]]
name = "lat"
kernel = "latency"
`), s)
	if err != nil {
		t.Fatalf("a campaign's mpirun under an srun profile: %v", err)
	}
	if c.Launcher.MPI != "" {
		t.Errorf("the campaign's mpirun took the profile's mpi %q", c.Launcher.MPI)
	}
	c, err = ParseWith("c.toml", []byte(problemHead+`[[benchmark]]
name = "lat"
kernel = "latency"
[[variant]]
name = "ompi"
launcher = { type = "mpirun", flavor = "openmpi" }
[[variant]]
name = "srun"
`), s)
	if err != nil {
		t.Fatalf("a variant's mpirun under an srun profile: %v", err)
	}
	p, err := c.Plan()
	if err != nil {
		t.Fatal(err)
	}
	lines := map[string]string{}
	for _, j := range p.Jobs {
		for _, st := range j.AllSteps() {
			lines[st.Name] = c.launchLine(st, st.Ranks, st.Nodes, st.PerNode, nil)
		}
	}
	if !strings.Contains(lines["srun"], "--mpi=pmix") || strings.Contains(lines["ompi"], "pmix") || !strings.Contains(lines["ompi"], " mpirun -np 2 ") {
		t.Errorf("launch lines: %q", lines)
	}
}

// TestExamplesUnderSiteProfile: every example campaign, unchanged, loads
// and plans under a profile, and its scripts carry the profile's settings.
func TestExamplesUnderSiteProfile(t *testing.T) {
	s, err := LoadSite("testdata/sites/site-a.toml")
	if err != nil {
		t.Fatal(err)
	}
	examples, _ := filepath.Glob("../examples/*.toml")
	if len(examples) == 0 {
		t.Fatal("no example campaigns")
	}
	for _, ex := range examples {
		c, err := LoadWith(ex, s)
		if err != nil {
			t.Errorf("%s under site-a: %v", ex, err)
			continue
		}
		if sc := script(t, c); !strings.Contains(sc, "#SBATCH --account=acc-alpha\n") || !strings.Contains(sc, "system=alpha") {
			t.Errorf("%s: the first script lacks the profile's account or label:\n%s", ex, sc)
		}
	}
}

// TestSiteAddress: the ranks' address is one setting, an IP (bind) or an
// interface: the campaign's whichever it writes, else the profile's, from
// [runner] or [fabric]; the runner gets it as --bind or --interface.
func TestSiteAddress(t *testing.T) {
	s, err := ParseSite("s.toml", []byte("[site]\nname = \"x\"\n[fabric]\ninterface = \"ib0\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ runner, bind, iface, arg string }{
		{"", "", "ib0", "--interface ib0"},
		{"[runner]\nbind = \"10.0.0.9\"\n", "10.0.0.9", "", "--bind 10.0.0.9"},
		{"[runner]\ninterface = \"eth1\"\n", "", "eth1", "--interface eth1"},
	} {
		c, err := ParseWith("c.toml", []byte(problemHead+tc.runner+"[[benchmark]]\nname = \"lat\"\nkernel = \"latency\"\n"), s)
		if err != nil {
			t.Fatalf("%q: %v", tc.runner, err)
		}
		p, err := c.Plan()
		if err != nil {
			t.Fatal(err)
		}
		args := strings.Join(p.Jobs[0].Steps[0].RunnerArgs, " ")
		if c.Runner.Bind != tc.bind || c.Runner.Interface != tc.iface || !strings.Contains(args, tc.arg) || strings.Count(args, "--bind")+strings.Count(args, "--interface") != 1 {
			t.Errorf("%q: bind %q, interface %q, runner args %s", tc.runner, c.Runner.Bind, c.Runner.Interface, args)
		}
	}
	if _, err := Parse("c.toml", []byte(problemHead+"[runner]\nbind = \"10.0.0.1\"\ninterface = \"ib0\"\n[[benchmark]]\nname = \"lat\"\nkernel = \"latency\"\n")); err == nil ||
		err.Error() != "c.toml:8:1: runner.interface: runner.bind is set too: give the ranks' address or their interface, not both" {
		t.Errorf("a campaign's bind and interface: %v", err)
	}
	if got := loadUnder(t, "testdata/sites/portable.toml", "testdata/sites/site-a.toml").Runner.Bind; got != "10.1.0.1" {
		t.Errorf("site-a's [fabric] bind: %q", got)
	}
}

// TestSitePairsUnderProfileLauncher: a campaign's pairs benchmark under a
// profile whose launcher is mpirun is refused at the campaign's pairs key,
// and the message says where the launcher came from: the campaign's file
// does not name one.
func TestSitePairsUnderProfileLauncher(t *testing.T) {
	s := mpirunSite(t)
	_, err := ParseWith("c.toml", []byte(`[campaign]
name = "q"
[slurm]
nodes = 2
ntasks_per_node = 1
[[benchmark]]
name = "b"
kernel = "bw"
pairs = "all"
`), s)
	want := `c.toml:9:1: benchmark[0].pairs: variant default: pairs placements need the srun launcher (they place ranks with --distribution=arbitrary), not mpirun, which the site profile sets (s.toml:4); give launcher.type = "srun" in the campaign or the benchmark`
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
	// The campaign's own launcher is its own key: no profile to name.
	_, err = ParseWith("c.toml", []byte(`[campaign]
name = "q"
[slurm]
nodes = 2
ntasks_per_node = 1
[launcher]
type = "mpirun"
flavor = "openmpi"
[[benchmark]]
name = "b"
kernel = "bw"
pairs = "all"
`), s)
	if err == nil || !strings.HasSuffix(err.Error(), "not mpirun") {
		t.Errorf("a campaign's own mpirun: got %v, want the message without a profile's place", err)
	}
}
