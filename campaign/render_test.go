package campaign

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sbench/sbench/internal/golden"
)

// TestRenderGolden renders every example campaign and compares the scripts
// with testdata/golden/CAMPAIGN/; -update rewrites them.
func TestRenderGolden(t *testing.T) {
	examples, err := filepath.Glob("../examples/*.toml")
	if err != nil || len(examples) == 0 {
		t.Fatalf("no example campaigns: %v", err)
	}
	more, _ := filepath.Glob("testdata/campaigns/*.toml")
	examples = append(examples, more...)
	for _, ex := range examples {
		name := strings.TrimSuffix(filepath.Base(ex), ".toml")
		t.Run(name, func(t *testing.T) {
			c, err := Load(ex)
			if err != nil {
				t.Fatal(err)
			}
			r, err := NewRenderer(WithVersion("test"))
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			plan, err := c.Plan()
			if err != nil {
				t.Fatal(err)
			}
			paths, err := r.RenderDir(plan, dir)
			if err != nil {
				t.Fatal(err)
			}
			gdir := filepath.Join("testdata", "golden", name)
			if golden.Update() {
				os.RemoveAll(gdir) // scripts the campaign no longer renders go too
			}
			for _, p := range paths {
				got, _ := os.ReadFile(p)
				if out, err := exec.Command("bash", "-n", p).CombinedOutput(); err != nil {
					t.Errorf("bash -n %s: %v\n%s", filepath.Base(p), err, out)
				}
				golden.Check(t, filepath.Join(gdir, filepath.Base(p)), got)
			}
			if !golden.Update() {
				entries, _ := os.ReadDir(gdir)
				if len(entries) != len(paths) {
					t.Errorf("rendered %d scripts, golden dir holds %d", len(paths), len(entries))
				}
			}
		})
	}
}

func TestRenderIsDeterministic(t *testing.T) {
	c, err := Load("../examples/quickstart.toml")
	if err != nil {
		t.Fatal(err)
	}
	r, _ := NewRenderer()
	p, _ := c.Plan()
	first, err := r.Script(p, p.Jobs[0])
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 20; i++ {
		p2, _ := c.Plan()
		again, _ := r.Script(p2, p2.Jobs[0])
		if !bytes.Equal(first, again) {
			t.Fatalf("render %d differs:\n%s\n---\n%s", i, first, again)
		}
	}
}

// A site's template replaces the embedded one, through templates_dir or
// WithTemplate, with the same data and quoting functions.
func TestSiteTemplate(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "site"), 0o755)
	site := "#!/bin/bash\n#SBATCH --comment=site-header\n{{range .Directives}}#SBATCH {{.}}\n{{end}}{{range .Blocks}}{{.Body}}\n{{end}}"
	os.WriteFile(filepath.Join(dir, "site", "sbatch.tmpl"), []byte(site), 0o644)
	camp := filepath.Join(dir, "c.toml")
	os.WriteFile(camp, []byte("[campaign]\nname = \"s\"\ntemplates_dir = \"site\"\n[slurm]\nnodes = 2\n[[benchmark]]\nname = \"lat\"\nkernel = \"latency\"\n"), 0o644)
	c, err := Load(camp)
	if err != nil {
		t.Fatal(err)
	}
	text, err := os.ReadFile(c.TemplatePath())
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewRenderer(WithTemplate("sbatch.tmpl", string(text)))
	if err != nil {
		t.Fatal(err)
	}
	p, _ := c.Plan()
	out, err := r.Script(p, p.Jobs[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"#SBATCH --comment=site-header", "#SBATCH --nodes=2", "srun --nodes=2"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("site render lacks %q:\n%s", want, out)
		}
	}
	if _, err := NewRenderer(WithTemplate("bad.tmpl", "{{.Nope")); err == nil || !strings.Contains(err.Error(), "bad.tmpl") {
		t.Errorf("a broken template: %v", err)
	}
}

// TestStepLimitEndsAHungLauncher: a launcher that hangs before the runner
// starts (an mpirun waiting for a daemon that never answers) is ended at
// its step's limit plus grace; the step's end marker says rc=124, and the
// job goes on to its next step.
func TestStepLimitEndsAHungLauncher(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a rendered script for a few seconds")
	}
	dir := t.TempDir()
	hung := filepath.Join(dir, "mpirun")
	if err := os.WriteFile(hung, []byte("#!/bin/sh\nexec sleep 600\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	camp := filepath.Join(dir, "c.toml")
	os.WriteFile(camp, []byte(`[campaign]
name = "hang"
[slurm]
nodes = 1
ntasks_per_node = 2
time = "0:02"
[launcher]
type = "mpirun"
command = "`+hung+`"
[[benchmark]]
name = "a"
kernel = "latency"
[[benchmark]]
name = "b"
kernel = "latency"
`), 0o644)
	c, err := Load(camp)
	if err != nil {
		t.Fatal(err)
	}
	p := mustPlan(t, c)
	if st := p.Jobs[0].Steps[0]; st.Limit != 2*time.Second || GraceFor(st.Limit) != time.Second {
		t.Fatalf("limit %v grace %v, want 2s and 1s", st.Limit, GraceFor(st.Limit))
	}
	r, _ := NewRenderer()
	script, err := r.Script(p, p.Jobs[0])
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "job.sbatch")
	os.WriteFile(path, script, 0o755)
	cmd := exec.Command("bash", path)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "SLURM_JOB_ID=77")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("the job still runs after 60 s: its hung launchers were not ended\n%s", stderr.String())
	}
	if err == nil {
		t.Errorf("the job exited 0 with two timed-out steps")
	}
	took := time.Since(start)
	var ends []string
	for _, l := range strings.Split(stderr.String(), "\n") {
		if strings.HasPrefix(l, StepMarker) && strings.Contains(l, " end ") {
			ends = append(ends, l)
		}
	}
	if len(ends) != 2 || !strings.HasSuffix(ends[0], "rc=124") || !strings.HasPrefix(ends[1], StepMarker+" 1 end attempt=0") {
		t.Errorf("end markers %q, want steps 0 and 1 ended by the limit (rc=124)\n%s", ends, stderr.String())
	}
	t.Logf("two hung steps of 2 s + 1 s grace ended after %v", took.Round(100*time.Millisecond))
}

// LaunchIDs names the launches as Launches (sbench local) and the script
// (--step) do.
func TestLaunchIDsMatchLaunches(t *testing.T) {
	nodes := []string{"n1", "n2", "n3"}
	for _, pairs := range []string{"", "both-directions", "all", "reference", "intra-inter"} {
		st := Step{Index: 4, Run: Run{Benchmark: &Benchmark{Pairs: pairs}}, Ranks: 2, Nodes: 2, PerNode: 1}
		var want []string
		for _, l := range st.Launches(nodes) {
			want = append(want, l.ID)
		}
		if got := LaunchIDs("4", pairs, nodes); strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("pairs %q: LaunchIDs %q, Launches %q", pairs, got, want)
		}
	}
}

// The reference placement: the first node to every other node and back,
// 2(n−1) launches of 2 ranks, each labelled with its pair and the
// reference; the job's time limit counts every launch.
func TestReferencePlacement(t *testing.T) {
	st := Step{Index: 2, Run: Run{Benchmark: &Benchmark{Pairs: "reference"}}, Ranks: 2, Nodes: 2, PerNode: 1}
	var got []string
	for _, l := range st.Launches([]string{"n1", "n2", "n3", "n4"}) {
		if l.Ranks != 2 || len(l.Nodes) != 2 || !strings.Contains(strings.Join(l.Args, " "), "--label reference=n1") {
			t.Errorf("launch %+v", l)
		}
		got = append(got, l.ID)
	}
	if want := "2-n1-n2 2-n2-n1 2-n1-n3 2-n3-n1 2-n1-n4 2-n4-n1"; strings.Join(got, " ") != want {
		t.Errorf("launches %s, want %s", strings.Join(got, " "), want)
	}
	if n := st.placements(4); n != 6 {
		t.Errorf("placements(4) = %d, want 6", n)
	}
	// The script's loop: testdata/golden/screen (examples/screen.toml).
}
