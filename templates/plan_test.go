package templates

import (
	"reflect"
	"strings"
	"testing"

	"github.com/sbench/sbench/runner"
)

func TestQuickstartPlan(t *testing.T) {
	c, err := Load("../examples/quickstart.toml")
	if err != nil {
		t.Fatal(err)
	}
	p := c.Plan()
	if len(p.Jobs) != 2 {
		t.Fatalf("%d jobs, want 2 (one per variant)", len(p.Jobs))
	}
	want := []struct {
		variant               string
		ranks, nodes, perNode int
	}{
		{"ntasks_per_node=1", 2, 2, 1},
		{"ntasks_per_node=2", 4, 2, 2},
	}
	for i, w := range want {
		j := p.Jobs[i]
		if j.Variant.Name != w.variant {
			t.Errorf("job %d variant %q, want %q", i, j.Variant.Name, w.variant)
		}
		if len(j.Steps) != 2 {
			t.Fatalf("job %d has %d steps, want 2", i, len(j.Steps))
		}
		s := j.Steps[0]
		if s.Ranks != w.ranks || s.Nodes != w.nodes || s.PerNode != w.perNode {
			t.Errorf("job %d step 0: ranks %d nodes %d per node %d, want %d %d %d", i, s.Ranks, s.Nodes, s.PerNode, w.ranks, w.nodes, w.perNode)
		}
	}
	args := p.Jobs[0].Steps[1].RunnerArgs
	wantArgs := []string{"run", "--campaign", "quickstart", "--variant", "ntasks_per_node=1",
		"--benchmark", "bandwidth", "--kernel", "bw", "--param", "sizes=1-4194304", "--param", "window=64",
		"--vparam", "ntasks_per_node=1", "--label", "fabric=tcp", "--results", "sbench-runs/quickstart",
		"--bootstrap-timeout", "60s", "--timeout", "10m"}
	if !reflect.DeepEqual(args, wantArgs) {
		t.Errorf("runner args\n got %q\nwant %q", args, wantArgs)
	}
}

func TestSweepIsCartesianInWrittenOrder(t *testing.T) {
	c, err := Parse("s.toml", []byte(`
[campaign]
name = "s"
[slurm]
nodes = 2
[[benchmark]]
name = "lat"
kernel = "latency"
[sweep]
ntasks_per_node = [1, 2]
"env.FI_PROVIDER" = ["verbs;ofi_rxm", "tcp;ofi_rxm"]
"label.fabric" = ["x"]
`))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, v := range c.Variants() {
		names = append(names, v.Name)
	}
	want := []string{
		"ntasks_per_node=1,env.FI_PROVIDER=verbs;ofi_rxm,label.fabric=x",
		"ntasks_per_node=1,env.FI_PROVIDER=tcp;ofi_rxm,label.fabric=x",
		"ntasks_per_node=2,env.FI_PROVIDER=verbs;ofi_rxm,label.fabric=x",
		"ntasks_per_node=2,env.FI_PROVIDER=tcp;ofi_rxm,label.fabric=x",
	}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("variants\n got %q\nwant %q", names, want)
	}
	v := c.Variants()[1]
	if v.Env["FI_PROVIDER"] != "tcp;ofi_rxm" || v.Labels["fabric"] != "x" || v.Slurm.NtasksPerNode != 1 {
		t.Errorf("variant 1 settings not applied: %+v", v)
	}
	slugs := map[string]bool{}
	for _, v := range c.Variants() {
		if !nameRE.MatchString(v.Slug) {
			t.Errorf("slug %q is not a safe name", v.Slug)
		}
		slugs[v.Slug] = true
	}
	if len(slugs) != 4 {
		t.Errorf("slugs collide: %v", slugs)
	}
}

func TestBadCampaigns(t *testing.T) {
	const ok = `
[campaign]
name = "q"
[slurm]
nodes = 2
ntasks_per_node = 1
[[benchmark]]
name = "lat"
kernel = "latency"
`
	tests := []struct {
		name, text string
		want       []string // each must appear in the error
	}{
		{"syntax", "[campaign\nname = 1", []string{"c.toml:2:10:", "table name"}},
		{"unknown top key", ok + "bogus = 1\n", []string{"c.toml:10:1: benchmark.bogus: unknown key"}},
		{"unknown slurm key", strings.Replace(ok, "nodes = 2", "nodes = 2\nnode = 3", 1), []string{"c.toml:6:1: slurm.node: unknown key"}},
		{"wrong type", strings.Replace(ok, "nodes = 2", `nodes = "two"`, 1), []string{"c.toml:5:1: slurm.nodes: incompatible types"}},
		{"missing name", strings.Replace(ok, `name = "q"`, ``, 1), []string{"campaign.name: is empty"}},
		{"bad name", strings.Replace(ok, `name = "q"`, `name = "a$(touch x)"`, 1), []string{"c.toml:3:1: campaign.name", "not allowed"}},
		{"unknown kernel", strings.Replace(ok, `kernel = "latency"`, `kernel = "nope"`, 1), []string{"c.toml:9:1: benchmark[0].kernel: unknown kernel \"nope\""}},
		{"unknown kernel param", strings.Replace(ok, `kernel = "latency"`, "kernel = \"latency\"\nparams = { sise = \"1-8\" }", 1), []string{"c.toml:10:1: benchmark[0].params", "sise"}},
		{"bad sizes", strings.Replace(ok, `kernel = "latency"`, "kernel = \"latency\"\nparams = { sizes = \"8-1\" }", 1), []string{"benchmark[0].params", "sizes"}},
		{"too few ranks", strings.Replace(ok, "nodes = 2", "nodes = 1", 1), []string{"needs at least 2"}},
		{"inconsistent tasks", strings.Replace(ok, "nodes = 2", "nodes = 2\nntasks = 3", 1), []string{"nodes (2) × ntasks_per_node (1) = 2, but ntasks is 3"}},
		{"newline in directive", strings.Replace(ok, "nodes = 2", "nodes = 2\npartition = \"a\\nrm -rf /\"", 1), []string{"slurm.partition", "control character"}},
		{"bad time", strings.Replace(ok, "nodes = 2", "nodes = 2\ntime = \"ten minutes\"", 1), []string{"slurm.time", "not a Slurm time"}},
		{"bad sweep key", ok + "[sweep]\nfoo = [1]\n", []string{"c.toml:11:1: sweep.foo: cannot be swept"}},
		{"sweep not a list", ok + "[sweep]\nnodes = 2\n", []string{"sweep.nodes: must be a list"}},
		{"bad env name", ok + "[sweep]\n\"env.A-B\" = [\"x\"]\n", []string{"not a valid environment variable name"}},
		{"results dir with space", strings.Replace(ok, `name = "q"`, "name = \"q\"\nresults_dir = \"a b\"", 1), []string{"campaign.results_dir"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("c.toml", []byte(tt.text))
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestAllProblemsAtOnce(t *testing.T) {
	_, err := Parse("c.toml", []byte(`
[campaign]
name = "bad name"
[slurm]
nodes = -1
[[benchmark]]
name = "x"
kernel = "nope"
`))
	ps, ok := err.(Problems)
	if !ok || len(ps) < 3 {
		t.Fatalf("want ≥ 3 problems reported together, got %v", err)
	}
	for i := 1; i < len(ps); i++ {
		if ps[i].Line < ps[i-1].Line {
			t.Errorf("problems not in file order: %v", err)
		}
	}
}

func TestParseSlurmTime(t *testing.T) {
	for in, want := range map[string]float64{"10": 600, "10:30": 630, "01:00:00": 3600, "1-00:00:00": 86400, "2-3": 2*86400 + 3*3600, "UNLIMITED": 0} {
		d, err := parseSlurmTime(in)
		if err != nil || d.Seconds() != want {
			t.Errorf("parseSlurmTime(%q) = %v, %v; want %vs", in, d, err, want)
		}
	}
}

// The campaign's kernel table and the runner's must name the same kernels.
func TestNativeKernelsMatchRunner(t *testing.T) {
	got := sortedKeys(NativeKernels)
	if want := runner.Kernels(); !reflect.DeepEqual(got, want) {
		t.Errorf("templates knows kernels %q, the runner %q", got, want)
	}
}
