package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/sbench/sbench/campaign"
)

// profileCampaign names no cluster; its second benchmark succeeds only
// when a site profile gave its ranks SITE_MARK.
const profileCampaign = smallCampaign + `
[[benchmark]]
name = "mark"
command = ["sh", "-c", "test -n \"$SITE_MARK\""]
parser = "none"
`

// TestLocalUnderSiteProfiles: one campaign, run unchanged by sbench local
// under two site profiles (--site and $SBENCH_SITE), archives runs that
// carry each profile's name and hash, system, link_rate and rpeak, with
// the profile's environment in their steps (and alpha's ranks on its
// fabric's interface, lo here); without a profile the step that needs
// that environment fails.
func TestLocalUnderSiteProfiles(t *testing.T) {
	dir := endToEndDir(t, "runs a campaign under two site profiles")
	os.WriteFile("c.toml", []byte(profileCampaign), 0o644)
	profiles := map[string]string{
		"alpha": "[site]\nname = \"alpha\"\n[slurm.env]\nSITE_MARK = \"a\"\n[fabric]\nlink_rate = \"200Gbps\"\ninterface = \"lo\"\n[node]\nrpeak_gflops = 1500\n",
		"beta":  "[site]\nname = \"beta\"\n[slurm]\nenv = { SITE_MARK = \"b\" }\n[fabric]\nlink_rate = \"25Gbps\"\n[node]\ncores = 8\nghz = 2.5\nflops_per_cycle = 16\n",
	}
	hashes := map[string]string{}
	for name, text := range profiles {
		os.WriteFile(name+".toml", []byte(text), 0o644)
		sum := sha256.Sum256([]byte(text))
		hashes[name] = "sha256:" + hex.EncodeToString(sum[:])
	}
	t.Setenv("HOME", dir) // no profile of whoever runs the tests
	t.Setenv("XDG_CONFIG_HOME", "")
	dbs := map[string]string{}
	for _, name := range []string{"alpha", "beta", "none"} {
		dbs[name] = filepath.Join(dir, name+".db")
		args := []string{"local", "c.toml", "--db", dbs[name]}
		switch name {
		case "alpha":
			args = append(args, "--site", "alpha.toml")
			t.Setenv("SBENCH_SITE", "beta.toml") // --site wins
		case "beta":
			t.Setenv("SBENCH_SITE", "beta.toml")
		case "none":
			t.Setenv("SBENCH_SITE", "")
		}
		_, errs, code := sbench(t, args...)
		if name != "none" && code != 0 {
			t.Fatalf("%s: exit %d\n%s", name, code, errs)
		}
	}
	want := map[string]map[string]string{
		"alpha": {"site_profile": "alpha " + hashes["alpha"], "system": "alpha", "link_rate": "200Gbps", "rpeak": "1500"},
		"beta":  {"site_profile": "beta " + hashes["beta"], "system": "beta", "link_rate": "25Gbps", "rpeak": "320"},
	}
	for name, labels := range want {
		runs := archivedRuns(t, dbs[name])
		if len(runs) != 2 {
			t.Fatalf("%s: %d runs, want 2", name, len(runs))
		}
		for _, r := range runs {
			got, _ := r["labels"].(map[string]any)
			for k, v := range labels {
				if got[k] != v {
					t.Errorf("%s: run %v of %v: label %s = %v; want %q", name, r["id"], r["benchmark"], k, got[k], v)
				}
			}
			if r["system"] != name || r["status"] != "ok" {
				t.Errorf("%s: run of %v: system %v, status %v %v", name, r["benchmark"], r["system"], r["status"], r["error"])
			}
		}
	}
	for _, r := range archivedRuns(t, dbs["none"]) {
		labels, _ := r["labels"].(map[string]any)
		if _, ok := labels["site_profile"]; ok {
			t.Errorf("a run without a profile is labelled %v", labels)
		}
		if ok := r["status"] == "ok"; ok == (r["benchmark"] == "mark") {
			t.Errorf("without a profile: %v is %v (%v)", r["benchmark"], r["status"], r["error"])
		}
	}
}

// TestValidateSiteShowsSources: validate --site prints the merged plan and
// where each setting came from; --json says the same; a problem in the
// profile is placed in it.
func TestValidateSiteShowsSources(t *testing.T) {
	t.Chdir(t.TempDir())
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("SBENCH_SITE", "")
	os.WriteFile("c.toml", []byte(smallCampaign), 0o644)
	os.WriteFile("s.toml", []byte("[site]\nname = \"alpha\"\n[slurm]\npartition = \"hdr\"\nntasks_per_node = 8\n"), 0o644)
	out, errs, code := sbench(t, "validate", "--site", "s.toml", "c.toml")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, re := range []string{
		`site profile alpha \(s\.toml, sha256:[0-9a-f]{64}\)`,
		`slurm\.partition +"hdr" +s\.toml:4\n`,
		`slurm\.ntasks_per_node +2 +c\.toml:7\n`, // the campaign's wins
		`launcher\.type +"srun" +default\n`,
		`campaign\.labels\.system +"alpha" +s\.toml:2\n`,
	} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("validate --site lacks %s:\n%s", re, out)
		}
	}
	out, _, code = sbench(t, "validate", "--json", "--site", "s.toml", "c.toml")
	var plan struct {
		Site     struct{ Name, Hash string }
		Settings []struct{ Key, Value, From string }
	}
	if err := json.Unmarshal([]byte(out), &plan); err != nil || code != 0 {
		t.Fatalf("exit %d, %v: %s", code, err, out)
	}
	found := false
	for _, s := range plan.Settings {
		found = found || s.Key == "slurm.partition" && s.Value == `"hdr"` && s.From == "s.toml:4"
	}
	if plan.Site.Name != "alpha" || !found {
		t.Errorf("validate --json: %+v", plan)
	}
	os.WriteFile("bad.toml", []byte("[site]\nname = \"alpha\"\n[slurm]\nmodules = 3\n"), 0o644)
	_, errs, code = sbench(t, "validate", "--site", "bad.toml", "c.toml")
	if code != 2 || !strings.Contains(errs, "bad.toml:4:1: slurm.modules: has type integer; want a list of strings") {
		t.Errorf("a bad profile: exit %d, %s", code, errs)
	}
	out, _, _ = sbench(t, "validate", "--json", "c.toml")
	if strings.Contains(out, `"settings"`) {
		t.Errorf("validate without a profile shows settings: %s", out)
	}
	t.Setenv("SBENCH_SITE", "bad.toml")
	if _, errs, code = sbench(t, "validate", "--site", "none", "c.toml"); code != 0 {
		t.Errorf("--site none still read $SBENCH_SITE: exit %d, %s", code, errs)
	}
}

// TestRenderSite: render takes its profile from --site, else
// $SBENCH_SITE; the campaign file is the same.
func TestRenderSite(t *testing.T) {
	tmpl, err := os.ReadFile("../../campaign/templates/sbatch.tmpl")
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_CONFIG_HOME", "")
	os.WriteFile("c.toml", []byte(smallCampaign), 0o644)
	// alpha's sbatch template is beside its profile, not the campaign.
	os.MkdirAll("sites/tmpl", 0o755)
	os.WriteFile("sites/tmpl/sbatch.tmpl", append(tmpl, "# alpha's own template\n"...), 0o644)
	os.WriteFile("sites/a.toml", []byte("[site]\nname = \"alpha\"\ntemplates_dir = \"tmpl\"\n[slurm]\npartition = \"hdr\"\nmodules = [\"ompi/4\"]\n"), 0o644)
	os.WriteFile("b.toml", []byte("[site]\nname = \"beta\"\n[slurm]\npartition = \"eth\"\n[launcher]\ntype = \"mpirun\"\nflavor = \"openmpi\"\n"), 0o644)
	t.Setenv("SBENCH_SITE", "b.toml")
	render := func(dir string, args ...string) string {
		t.Helper()
		_, errs, code := sbench(t, append([]string{"render", "c.toml", "-o", dir}, args...)...)
		if code != 0 {
			t.Fatalf("render %v: exit %d: %s", args, code, errs)
		}
		b, err := os.ReadFile(filepath.Join(dir, "01-small-steps.sbatch"))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	a, b := render("a", "--site", "sites/a.toml"), render("b")
	for _, w := range []string{"#SBATCH --partition=hdr\n", "module load ompi/4\n", " srun ", "system=alpha", "# alpha's own template\n"} {
		if !strings.Contains(a, w) {
			t.Errorf("--site a.toml: no %q in\n%s", w, a)
		}
	}
	for _, w := range []string{"#SBATCH --partition=eth\n", " mpirun -np 2 --map-by ppr:2:node ", "system=beta"} {
		if !strings.Contains(b, w) {
			t.Errorf("$SBENCH_SITE=b.toml: no %q in\n%s", w, b)
		}
	}
	if strings.Contains(b, "alpha's own template") {
		t.Errorf("beta's script has alpha's template")
	}
}

// TestResumeCommandKeepsSite: the command that resumes an interrupted
// local run names the profile it ran under, wherever that was found.
func TestResumeCommandKeepsSite(t *testing.T) {
	s, err := campaign.ParseSite("/etc/sites/my site.toml", []byte("[site]\nname = \"x\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	got := resumeCommand("c.toml", "a.db", s, 0, nil)
	if want := "sbench local c.toml --db a.db --site '/etc/sites/my site.toml' --resume"; got != want {
		t.Errorf("resume command %q; want %q", got, want)
	}
	if got := resumeCommand("c.toml", "a.db", nil, 0, nil); strings.Contains(got, "--site") {
		t.Errorf("resume command without a profile: %q", got)
	}
}

// TestHPLInputSite: hpl input sizes each run as submit would under the
// profile: its ntasks_per_node makes the auto process grid 2 × 2.
func TestHPLInputSite(t *testing.T) {
	t.Chdir(t.TempDir())
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("SBENCH_SITE", "")
	os.WriteFile("h.toml", []byte("[campaign]\nname = \"h\"\n[slurm]\nnodes = 1\n[[benchmark]]\nname = \"hpl\"\nkind = \"hpl\"\n[benchmark.hpl]\nn = \"auto\"\nmem_per_node = \"64MiB\"\n"), 0o644)
	os.WriteFile("s.toml", []byte("[site]\nname = \"a\"\n[slurm]\nntasks_per_node = 4\n"), 0o644)
	grid := regexp.MustCompile(`(?m)^(\d+) +Ps\n(\d+) +Qs$`)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"hpl", "input", "h.toml"}, "1×1"},
		{[]string{"hpl", "input", "--site", "s.toml", "h.toml"}, "2×2"},
	} {
		out, errs, code := sbench(t, tc.args...)
		m := grid.FindStringSubmatch(out)
		if code != 0 || m == nil || m[1]+"×"+m[2] != tc.want {
			t.Errorf("%v: exit %d, grid %v; want %s\n%s%s", tc.args, code, m, tc.want, out, errs)
		}
	}
}

// TestCheckSiteExpectations: a site profile's [[expect]] tables are
// validated where they are written, recorded with the campaign run under
// the profile, and judged by sbench check on that system's runs, each
// line naming the profile and its file:line, and kept when the campaign
// runs under another profile; --site judges them again only once.
func TestCheckSiteExpectations(t *testing.T) {
	dir := endToEndDir(t, "runs a campaign under a profile with expectations")
	t.Setenv("HOME", dir)
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("SBENCH_SITE", "")
	os.WriteFile("c.toml", []byte(smallCampaign), 0o644)
	profile := `[site]
name = "gamma"

[[expect]]
name = "gamma floor"
benchmark = "latency"
metric = "latency"
at = "1"
bound = "<= 10 s"

[[expect]]
name = "gamma promise"
benchmark = "latency"
metric = "latency"
at = "1"
bound = "<= 1 ns"
`
	os.WriteFile("gamma.toml", []byte(profile), 0o644)
	// A bound that does not parse is the profile's problem, at its line.
	os.WriteFile("bad.toml", []byte(strings.Replace(profile, `"<= 1 ns"`, `"<= fast"`, 1)), 0o644)
	if _, errs, code := sbench(t, "validate", "c.toml", "--site", "bad.toml"); code != 2 || !strings.Contains(errs, "bad.toml:16:") || !strings.Contains(errs, "expect[1].bound") {
		t.Errorf("validate under a bad profile: exit %d\n%s", code, errs)
	}
	db := filepath.Join(dir, "a.db")
	if _, errs, code := sbench(t, "local", "c.toml", "--site", "gamma.toml", "--db", db); code != 0 {
		t.Fatalf("local: exit %d\n%s", code, errs)
	}
	// The campaign run again under another profile keeps gamma's
	// expectations: each profile's are recorded apart.
	os.WriteFile("delta.toml", []byte("[site]\nname = \"delta\"\n"), 0o644)
	if _, errs, code := sbench(t, "local", "c.toml", "--site", "delta.toml", "--db", db); code != 0 {
		t.Fatalf("local under delta: exit %d\n%s", code, errs)
	}
	for _, args := range [][]string{
		{"check", "campaign:small", "--db", db},
		{"check", "campaign:small", "--db", db, "--site", "gamma.toml"},
	} {
		out, errs, code := sbench(t, args...)
		if code != 1 || !strings.Contains(errs, "gamma promise") {
			t.Errorf("%v: exit %d, want 1 naming gamma promise\n%s\n%s", args, code, out, errs)
		}
		for name, status := range map[string]string{"gamma floor": "PASS", "gamma promise": "FAIL"} {
			var lines []string
			for _, l := range strings.Split(out, "\n") {
				if strings.Contains(l, name) && !strings.HasPrefix(l, " ") {
					lines = append(lines, l)
				}
			}
			if len(lines) != 1 || !strings.HasPrefix(lines[0], status) || !strings.Contains(lines[0], "site gamma (gamma.toml:") {
				t.Errorf("%v: the lines of %s: %q, want one %s from site gamma (gamma.toml:LINE)\n%s", args, name, lines, status, out)
			}
		}
	}
}
