package campaign

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func mustPlan(t *testing.T, c *Campaign) *Plan {
	t.Helper()
	p, err := c.Plan()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func mustParse(t *testing.T, text string) *Campaign {
	t.Helper()
	c, err := Parse("c.toml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestQuickstartPlanIsOneJob(t *testing.T) {
	c, err := Load("../examples/quickstart.toml")
	if err != nil {
		t.Fatal(err)
	}
	p := mustPlan(t, c)
	if len(p.Jobs) != 1 {
		t.Fatalf("%d jobs, want 1 (steps mode packs both variants)", len(p.Jobs))
	}
	j := p.Jobs[0]
	if len(j.Steps) != 4 || j.Alloc.Nodes.Max != 2 || j.Alloc.NtasksPerNode != 2 {
		t.Fatalf("job: %d steps, alloc %v nodes × %d per node", len(j.Steps), j.Alloc.Nodes, j.Alloc.NtasksPerNode)
	}
	want := []struct {
		variant, bench        string
		ranks, nodes, perNode int
	}{
		{"ntasks_per_node=1", "latency", 2, 2, 1},
		{"ntasks_per_node=1", "bandwidth", 2, 2, 1},
		{"ntasks_per_node=2", "latency", 4, 2, 2},
		{"ntasks_per_node=2", "bandwidth", 4, 2, 2},
	}
	for i, w := range want {
		s := j.Steps[i]
		if s.Name != w.variant || s.Benchmark.Name != w.bench || s.Ranks != w.ranks || s.Nodes != w.nodes || s.PerNode != w.perNode {
			t.Errorf("step %d: %s/%s %d ranks %d nodes %d per node; want %+v", i, s.Name, s.Benchmark.Name, s.Ranks, s.Nodes, s.PerNode, w)
		}
	}
	if j.Time != 4*(10*time.Minute+StepGrace) {
		t.Errorf("job time %v, want the sum of 4 steps of 10 minutes and their grace", j.Time)
	}
	for _, s := range j.Steps {
		if s.Limit != 10*time.Minute {
			t.Errorf("step %d: limit %v, want the campaign's time", s.Index, s.Limit)
		}
	}
	wantArgs := []string{"run", "--campaign", "quickstart", "--variant", "ntasks_per_node=1",
		"--benchmark", "bandwidth", "--kernel", "bw", "--param", "sizes=1-4194304", "--param", "window=64",
		"--vparam", "ntasks_per_node=1", "--label", "fabric=tcp", "--results", "sbench-runs/quickstart",
		"--bootstrap-timeout", "60s", "--timeout", "10m"}
	if got := j.Steps[1].RunnerArgs; !reflect.DeepEqual(got, wantArgs) {
		t.Errorf("runner args\n got %q\nwant %q", got, wantArgs)
	}
}

const base = `
[campaign]
name = "c"
[slurm]
nodes = 2
ntasks_per_node = 1
time = "5"
[[benchmark]]
name = "lat"
kernel = "latency"
`

func TestModes(t *testing.T) {
	sweep := "[sweep]\nntasks_per_node = [1, 2]\n\"env.X\" = [\"a\", \"b\"]\n"
	tests := []struct {
		mode          string
		jobs, steps   int
		tasks         int
		fileSubstring string
	}{
		{"steps", 1, 4, 0, "-steps.sbatch"},
		{"jobs", 4, 1, 0, "-ntasks_per_node-1-env.X-a.sbatch"},
		{"array", 1, 0, 4, "-array.sbatch"},
	}
	for _, tt := range tests {
		c := mustParse(t, strings.Replace(base, `name = "c"`, "name = \"c\"\nmode = \""+tt.mode+"\"", 1)+sweep)
		p := mustPlan(t, c)
		if len(p.Jobs) != tt.jobs || len(p.Jobs[0].Steps) != tt.steps || len(p.Jobs[0].Tasks) != tt.tasks {
			t.Errorf("%s: %d jobs, %d steps, %d tasks", tt.mode, len(p.Jobs), len(p.Jobs[0].Steps), len(p.Jobs[0].Tasks))
		}
		if !strings.HasSuffix(p.Jobs[0].File, tt.fileSubstring) {
			t.Errorf("%s: file %q", tt.mode, p.Jobs[0].File)
		}
	}
}

func TestStepsModeSplitsDifferentAllocations(t *testing.T) {
	c := mustParse(t, base+"[sweep]\npartition = [\"ib\", \"eth\"]\nnodes = [2, 3]\n")
	p := mustPlan(t, c)
	// Partitions differ: two jobs; node counts differ only: packed.
	if len(p.Jobs) != 2 {
		t.Fatalf("%d jobs, want 2", len(p.Jobs))
	}
	for _, j := range p.Jobs {
		if len(j.Steps) != 2 || j.Alloc.Nodes.Max != 3 {
			t.Errorf("%s: %d steps, %v nodes", j.File, len(j.Steps), j.Alloc.Nodes)
		}
	}
	if p.Jobs[0].Alloc.Partition != "ib" || p.Jobs[1].Alloc.Partition != "eth" {
		t.Errorf("partitions %q %q", p.Jobs[0].Alloc.Partition, p.Jobs[1].Alloc.Partition)
	}
}

func TestZipAndVariants(t *testing.T) {
	c := mustParse(t, `
[campaign]
name = "mpi"
[slurm]
time = "10"
[[benchmark]]
name = "lat"
kernel = "latency"
[[variant]]
name = "intel-mpi"
modules = ["intel-mpi/2021"]
[[variant]]
name = "mpich"
modules = ["mpich/4.0"]
env = { MPIR_CVAR_CH4_NETMOD = "ofi" }
[sweep]
nodes = [2, 1, 1, 2]
ntasks_per_node = [1, 2, 8, 16]
zip = [["nodes", "ntasks_per_node"]]
`)
	var names []string
	for _, v := range c.AllVariants() {
		names = append(names, v.Name)
	}
	want := []string{
		"intel-mpi,nodes=2,ntasks_per_node=1", "intel-mpi,nodes=1,ntasks_per_node=2",
		"intel-mpi,nodes=1,ntasks_per_node=8", "intel-mpi,nodes=2,ntasks_per_node=16",
		"mpich,nodes=2,ntasks_per_node=1", "mpich,nodes=1,ntasks_per_node=2",
		"mpich,nodes=1,ntasks_per_node=8", "mpich,nodes=2,ntasks_per_node=16",
	}
	if !reflect.DeepEqual(names, want) {
		t.Fatalf("variants\n got %q\nwant %q", names, want)
	}
	p := mustPlan(t, c)
	if len(p.Jobs) != 1 || len(p.Jobs[0].Steps) != 8 {
		t.Fatalf("%d jobs", len(p.Jobs))
	}
	j := p.Jobs[0]
	if j.Alloc.Nodes.Max != 2 || j.Alloc.NtasksPerNode != 16 {
		t.Errorf("allocation %v × %d, want 2 × 16", j.Alloc.Nodes, j.Alloc.NtasksPerNode)
	}
	st := j.Steps[7]
	if st.Ranks != 32 || st.Nodes != 2 || st.Config.Modules[0] != "mpich/4.0" || st.Config.Env["MPIR_CVAR_CH4_NETMOD"] != "ofi" {
		t.Errorf("last step: %d ranks %d nodes %v %v", st.Ranks, st.Nodes, st.Config.Modules, st.Config.Env)
	}
}

func TestDependenciesMakeStages(t *testing.T) {
	c := mustParse(t, base+`
[[benchmark]]
name = "bw"
kernel = "bw"
after = "lat"
[[benchmark]]
name = "bw2"
kernel = "bw"
after = "bw"
`)
	p := mustPlan(t, c)
	if len(p.Jobs) != 3 {
		t.Fatalf("%d jobs, want 3 (one per stage)", len(p.Jobs))
	}
	if len(p.Jobs[0].DependsOn) != 0 || !reflect.DeepEqual(p.Jobs[1].DependsOn, []int{0}) || !reflect.DeepEqual(p.Jobs[2].DependsOn, []int{1}) {
		t.Errorf("dependencies %v %v %v", p.Jobs[0].DependsOn, p.Jobs[1].DependsOn, p.Jobs[2].DependsOn)
	}
}

func TestExternalToolArgs(t *testing.T) {
	c := mustParse(t, `
[campaign]
name = "np"
repeats = 2
[slurm]
nodes = 2
[[benchmark]]
name = "nptcp"
per_rank = { "0" = ["NPtcp", "-h", "{host:1}", "-u", "{param:max}"], "1" = ["NPtcp"] }
parser = "netpipe"
start_delay = "1s"
params = { max = 1048576 }
checks = ["bandwidth_mbps@1048576>=800"]
[benchmark.files]
"np.conf" = { content = "x=1\n" }
`)
	p := mustPlan(t, c)
	st := p.Jobs[0].Steps[1]
	got := strings.Join(st.RunnerArgs, " ")
	for _, want := range []string{
		`--kernel exec`,
		`--exec-rank 0=["NPtcp","-h","{host:1}","-u","1048576"]`,
		`--exec-rank 1=["NPtcp"]`,
		`--parser netpipe --start-delay 1s --file np.conf=eD0xCg==`,
		`--check bandwidth_mbps@1048576>=800 --repeat 1`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("args %q lack %q", got, want)
		}
	}
}

// TestSizesTakeUnits: sizes are written as everywhere else (they were
// refused with a unit's B: "1-4MiB"), a check's x too.
func TestSizesTakeUnits(t *testing.T) {
	c := mustParse(t, `
[campaign]
name = "q"
[slurm]
nodes = 2
[[benchmark]]
name = "lat"
kernel = "latency"
params = { sizes = "1-4MiB" }
[[benchmark]]
name = "bw"
kernel = "bw"
params = { sizes = "0,64KiB-1MiB,4MB" }
[[benchmark]]
name = "bw-checked"
kernel = "bw"
checks = ["bandwidth@4MiB>=3000", "bandwidth@64K>1", "bandwidth@1048576>1", "x@-1.5e3<2"]
`)
	steps := mustPlan(t, c).Jobs[0].Steps
	for i, want := range []string{
		"--param sizes=1-4MiB",
		"--param sizes=0,64KiB-1MiB,4MB",
		"--check bandwidth@4MiB>=3000 --check bandwidth@64K>1",
	} {
		if args := strings.Join(steps[i].RunnerArgs, " "); !strings.Contains(args, want) {
			t.Errorf("step %d: args %s lack %s", i, args, want)
		}
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
		{"syntax", "[campaign\nname = 1", []string{"c.toml:1:10:", "table name"}},
		{"unknown top key", ok + "bogus = 1\n", []string{"c.toml:10:1: benchmark[0].bogus: unknown key"}},
		{"unknown slurm key", strings.Replace(ok, "nodes = 2", "nodes = 2\nnode = 3", 1), []string{"c.toml:6:1: slurm.node: unknown key"}},
		{"wrong type", strings.Replace(ok, "nodes = 2", `nodes = true`, 1), []string{"c.toml:5", "nodes"}},
		{"bad node range", strings.Replace(ok, "nodes = 2", `nodes = "4-2"`, 1), []string{"c.toml:5", "range"}},
		{"missing name", strings.Replace(ok, `name = "q"`, ``, 1), []string{"campaign.name: is empty"}},
		{"bad name", strings.Replace(ok, `name = "q"`, `name = "a$(touch x)"`, 1), []string{"c.toml:3:1: campaign.name", "not allowed"}},
		{"bad mode", strings.Replace(ok, `name = "q"`, "name = \"q\"\nmode = \"batch\"", 1), []string{"campaign.mode", "steps, jobs or array"}},
		{"unknown kernel", strings.Replace(ok, `kernel = "latency"`, `kernel = "nope"`, 1), []string{"c.toml:9:1: benchmark[0].kernel: unknown kernel \"nope\""}},
		{"kernel and command", strings.Replace(ok, `kernel = "latency"`, "kernel = \"latency\"\ncommand = [\"x\"]", 1), []string{"native kernel or a command, not both"}},
		{"neither", strings.Replace(ok, `kernel = "latency"`, ``, 1), []string{"set kernel"}},
		{"unknown kernel param", strings.Replace(ok, `kernel = "latency"`, "kernel = \"latency\"\nparams = { sise = \"1-8\" }", 1), []string{"benchmark[0].params", "sise"}},
		{"bad sizes", strings.Replace(ok, `kernel = "latency"`, "kernel = \"latency\"\nparams = { sizes = \"8-1\" }", 1), []string{"benchmark[0].params", "sizes"}},
		{"unknown parser", strings.Replace(ok, `kernel = "latency"`, "command = [\"osu_bw\"]\nparser = \"osux\"", 1), []string{"benchmark[0].parser", "unknown parser \"osux\""}},
		{"unknown placeholder", strings.Replace(ok, `kernel = "latency"`, "command = [\"NPtcp\", \"-h\", \"{peer}\"]", 1), []string{"benchmark[0].command", "unknown placeholder {peer}"}},
		{"missing param", strings.Replace(ok, `kernel = "latency"`, "command = [\"x\", \"{param:size}\"]", 1), []string{"{param:size}: no such param"}},
		{"bad rank", strings.Replace(ok, `kernel = "latency"`, "per_rank = { \"5\" = [\"x\"] }", 1), []string{"rank 5 does not exist"}},
		{"bad check", strings.Replace(ok, `kernel = "latency"`, "kernel = \"latency\"\nchecks = [\"latency < 5\"]", 1), []string{"benchmark[0].checks[0]", "not a check"}},
		{"bad check size", strings.Replace(ok, `kernel = "latency"`, "kernel = \"latency\"\nchecks = [\"latency@4Q<5\", \"latency@-inf<5\"]", 1), []string{"benchmark[0].checks[0]", "benchmark[0].checks[1]", "not a check"}},
		{"bad pairs", strings.Replace(ok, `kernel = "latency"`, "kernel = \"latency\"\npairs = \"both\"", 1), []string{"benchmark[0].pairs", "not a placement"}},
		{"pairs with mpirun", strings.Replace(ok, `kernel = "latency"`, "kernel = \"latency\"\npairs = \"all\"\nlauncher = { type = \"mpirun\" }", 1), []string{"pairs placements need the srun launcher"}},
		{"after unknown", strings.Replace(ok, `kernel = "latency"`, "kernel = \"latency\"\nafter = \"bw\"", 1), []string{"benchmark[0].after", "no benchmark is called \"bw\""}},
		{"after self", strings.Replace(ok, `kernel = "latency"`, "kernel = \"latency\"\nafter = \"lat\"", 1), []string{"cannot wait for itself"}},
		{"too few ranks", strings.Replace(ok, "nodes = 2", "nodes = 1", 1), []string{"needs at least 2"}},
		{"inconsistent tasks", strings.Replace(ok, "nodes = 2", "nodes = 2\nntasks = 3", 1), []string{"nodes (2) × ntasks_per_node (1) = 2, but ntasks is 3"}},
		{"range with ntasks", strings.Replace(ok, "nodes = 2\nntasks_per_node = 1", "nodes = \"2-4\"\nntasks = 4", 1), []string{"needs ntasks_per_node, not ntasks"}},
		{"newline in directive", strings.Replace(ok, "nodes = 2", "nodes = 2\npartition = \"a\\nrm -rf /\"", 1), []string{"slurm.partition", "control character"}},
		{"bad time", strings.Replace(ok, "nodes = 2", "nodes = 2\ntime = \"ten minutes\"", 1), []string{"slurm.time", "not a Slurm time"}},
		{"bad launcher", ok + "[launcher]\ntype = \"aprun\"\n", []string{"launcher.type", "srun, mpirun or mpiexec"}},
		{"bad override key", strings.Replace(ok, `kernel = "latency"`, "kernel = \"latency\"\nslurm = { nodez = 1 }", 1), []string{"benchmark[0].slurm.nodez", "unknown key"}},
		{"bad sweep key", ok + "[sweep]\nfoo = [1]\n", []string{"c.toml:11:1: sweep.foo: value 1: unknown key"}},
		{"sweep not a list", ok + "[sweep]\nnodes = 2\n", []string{"sweep.nodes: must be a list"}},
		{"sweep bad value", ok + "[sweep]\nnodes = [2, \"x\"]\n", []string{"sweep.nodes: value 2"}},
		{"bad env name", ok + "[sweep]\n\"env.A-B\" = [\"x\"]\n", []string{"not a valid env name"}},
		{"zip lengths", ok + "[sweep]\nnodes = [1, 2]\nntasks_per_node = [1]\nzip = [[\"nodes\", \"ntasks_per_node\"]]\n", []string{"sweep.zip", "different lengths"}},
		{"zip unknown", ok + "[sweep]\nnodes = [1, 2]\nzip = [[\"nodes\", \"x\"]]\n", []string{"\"x\" is not a swept key"}},
		{"duplicate variant", ok + "[[variant]]\nname = \"a\"\n[[variant]]\nname = \"a\"\n", []string{"variant[1].name", "used by two variants"}},
		{"results dir with space", strings.Replace(ok, `name = "q"`, "name = \"q\"\nresults_dir = \"a b\"", 1), []string{"campaign.results_dir"}},
		{"missing templates dir", strings.Replace(ok, `name = "q"`, "name = \"q\"\ntemplates_dir = \"nope\"", 1), []string{"campaign.templates_dir"}},
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
nodes = 1
time = "soon"
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
		if want > 0 {
			if back, _ := parseSlurmTime(formatSlurmTime(d)); back != d {
				t.Errorf("formatSlurmTime(%v) = %q does not read back", d, formatSlurmTime(d))
			}
		}
	}
}
