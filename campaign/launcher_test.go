package campaign

import (
	"strings"
	"testing"
)

// launcherCampaign is a campaign of one benchmark whose steps are
// 2 nodes × 1 rank and 1 node × 2 ranks, launched as [launcher] says:
// the placements of article 001, in one allocation of 2 nodes × 2.
func launcherCampaign(launcher string) string {
	return `[campaign]
name = "l"
[launcher]
` + launcher + `
[[variant]]
name = "inter"
slurm = { nodes = 2, ntasks_per_node = 1 }
[[variant]]
name = "intra"
slurm = { nodes = 1, ntasks_per_node = 2 }
[[benchmark]]
name = "imb"
command = ["IMB-MPI1", "PingPong"]
parser = "imb"
`
}

// launchLines are the launch lines of a campaign's steps (up to the
// runner), in order.
func launchLines(t *testing.T, text string) []string {
	t.Helper()
	c, err := Parse("c.toml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	p := mustPlan(t, c)
	var out []string
	for _, st := range p.Jobs[0].Steps {
		b := c.block(st)
		for _, l := range strings.Split(b.Body, "\n") {
			if i := strings.Index(l, " sbench-runner "); i >= 0 {
				out = append(out, strings.TrimSpace(l[:i]))
			}
		}
	}
	return out
}

// TestMPILaunchersPlacePerNode: each flavor's mpirun or mpiexec starts
// the ranks per node as the variant plans them. Told only -np (before
// flavor), Open MPI's mpirun filled the first node's two slots, so that
// the 2 nodes × 1 rank step ran both ranks on one node.
func TestMPILaunchersPlacePerNode(t *testing.T) {
	for _, tt := range []struct {
		name, launcher string
		want           []string
	}{
		{"open mpi", `type = "mpirun"` + "\n" + `flavor = "openmpi"`, []string{
			"timeout --kill-after=30 3630 mpirun -np 2 --map-by ppr:1:node",
			"timeout --kill-after=30 3630 mpirun -np 2 --map-by ppr:2:node"}},
		{"open mpi, the user's binding after", `type = "mpirun"` + "\n" + `flavor = "openmpi"` + "\n" + `args = ["--bind-to", "core"]`, []string{
			"timeout --kill-after=30 3630 mpirun -np 2 --map-by ppr:1:node --bind-to core",
			"timeout --kill-after=30 3630 mpirun -np 2 --map-by ppr:2:node --bind-to core"}},
		{"mpich", `type = "mpiexec"` + "\n" + `flavor = "mpich"`, []string{
			"timeout --kill-after=30 3630 mpiexec -np 2 -ppn 1",
			"timeout --kill-after=30 3630 mpiexec -np 2 -ppn 2"}},
		{"intel mpi", `type = "mpirun"` + "\n" + `flavor = "intelmpi"`, []string{
			"I_MPI_JOB_RESPECT_PROCESS_PLACEMENT=0 timeout --kill-after=30 3630 mpirun -np 2 -ppn 1",
			"I_MPI_JOB_RESPECT_PROCESS_PLACEMENT=0 timeout --kill-after=30 3630 mpirun -np 2 -ppn 2"}},
		// The user's args place the ranks: no second mapping (Open MPI
		// would take the last, Hydra refuses two -ppn), Intel MPI's
		// variable still set for their -ppn.
		{"user's --map-by", `type = "mpirun"` + "\n" + `flavor = "openmpi"` + "\n" + `args = ["--map-by", "ppr:{ppn}:node:PE=2"]`, []string{
			"timeout --kill-after=30 3630 mpirun -np 2 --map-by ppr:1:node:PE=2",
			"timeout --kill-after=30 3630 mpirun -np 2 --map-by ppr:2:node:PE=2"}},
		{"user's -ppn, intel mpi", `type = "mpirun"` + "\n" + `flavor = "intelmpi"` + "\n" + `args = ["-ppn", "{ppn}", "-genv", "I_MPI_DEBUG=5"]`, []string{
			"I_MPI_JOB_RESPECT_PROCESS_PLACEMENT=0 timeout --kill-after=30 3630 mpirun -np 2 -ppn 1 -genv I_MPI_DEBUG=5",
			"I_MPI_JOB_RESPECT_PROCESS_PLACEMENT=0 timeout --kill-after=30 3630 mpirun -np 2 -ppn 2 -genv I_MPI_DEBUG=5"}},
		{"user's -N, no flavor", `type = "mpirun"` + "\n" + `args = ["-N", "{ppn}"]`, []string{
			"timeout --kill-after=30 3630 mpirun -np 2 -N 1",
			"timeout --kill-after=30 3630 mpirun -np 2 -N 2"}},
		{"srun ignores flavor", `flavor = "openmpi"` + "\n" + `mpi = "pmix"`, []string{
			"timeout --kill-after=30 3630 srun --nodes=2 --ntasks=2 --ntasks-per-node=1 --mpi=pmix --kill-on-bad-exit=1 --time=01:01:00 --",
			"timeout --kill-after=30 3630 srun --nodes=1 --ntasks=2 --ntasks-per-node=2 --mpi=pmix --kill-on-bad-exit=1 --time=01:01:00 --"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := launchLines(t, launcherCampaign(tt.launcher))
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("launch lines\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

// TestMPILauncherOnANodeRange: on a node range the rank count is the
// allocation's nodes × ntasks_per_node, known only in the job: -np and
// the user's {ranks} and {nodes} are the script's arithmetic, quoted.
func TestMPILauncherOnANodeRange(t *testing.T) {
	got := launchLines(t, `[campaign]
name = "r"
[slurm]
nodes = "2-4"
ntasks_per_node = 4
[launcher]
type = "mpirun"
flavor = "openmpi"
args = ["--display-map", "-x", "NODES={nodes}", "--tag=r{ranks}'s"]
[[benchmark]]
name = "imb"
command = ["IMB-MPI1"]
`)
	want := `timeout --kill-after=30 3630 mpirun -np "$((SLURM_JOB_NUM_NODES * 4))" --map-by ppr:4:node --display-map -x NODES="$SLURM_JOB_NUM_NODES" --tag=r"$((SLURM_JOB_NUM_NODES * 4))"''\''s'`
	if len(got) != 1 || got[0] != want {
		t.Fatalf("launch line\n%q\nwant\n%q", got, want)
	}
}

// TestLauncherArgv is the launcher's argv as sbench local starts it,
// with the placeholders of the user's args replaced.
func TestLauncherArgv(t *testing.T) {
	c, err := Parse("c.toml", []byte(launcherCampaign(`type = "mpirun"`+"\n"+`flavor = "openmpi"`+"\n"+`args = ["--tag", "{ranks}x{nodes}x{ppn}{x}"]`)))
	if err != nil {
		t.Fatal(err)
	}
	st := mustPlan(t, c).Jobs[0].Steps[0]
	if got := strings.Join(st.LauncherArgv(6, 3, 2), " "); got != "mpirun -np 6 --map-by ppr:2:node --tag 6x3x2{x}" {
		t.Errorf("argv %q", got)
	}
	if env := st.LauncherEnv(); env != nil {
		t.Errorf("Open MPI's environment %q, want none", env)
	}
}

// TestLocalLauncherArgv is an MPI launcher's argv as sbench local starts
// it, every rank on this one host: the flavor's per-node option for all of
// them, and none of the user's options that place ranks on the cluster's
// nodes, which cannot hold here (Open MPI refuses 2 ranks at ppr:1:node on
// one host, and would ssh to the hosts of --host); the others stay.
func TestLocalLauncherArgv(t *testing.T) {
	for _, tt := range []struct {
		name, launcher string
		want, dropped  string
	}{
		{"open mpi", `type = "mpirun"` + "\n" + `flavor = "openmpi"`, "mpirun -np 3 --map-by ppr:3:node", ""},
		{"open mpi, the user's mapping and hosts", `type = "mpirun"` + "\n" + `flavor = "openmpi"` + "\n" +
			`args = ["--map-by", "ppr:1:node:PE=2", "--bind-to", "core", "-H", "n1,n2", "--pernode", "--hostfile=/etc/hosts", "-x", "A=1"]`,
			"mpirun -np 3 --map-by ppr:3:node --bind-to core -x A=1", "--map-by ppr:1:node:PE=2 -H n1,n2 --pernode --hostfile=/etc/hosts"},
		{"mpich", `type = "mpiexec"` + "\n" + `flavor = "mpich"` + "\n" + `args = ["-ppn", "1", "-f", "hosts", "-genv", "FI_PROVIDER=tcp", "-rr"]`,
			"mpiexec -np 3 -ppn 3 -genv FI_PROVIDER=tcp", "-ppn 1 -f hosts -rr"},
		{"no flavor", `type = "mpirun"` + "\n" + `args = ["-N", "{ppn}", "--mca", "btl", "tcp,self"]`,
			"mpirun -np 3 --mca btl tcp,self", "-N {ppn}"},
	} {
		c, err := Parse("c.toml", []byte(launcherCampaign(tt.launcher)))
		if err != nil {
			t.Fatal(err)
		}
		st := mustPlan(t, c).Jobs[0].Steps[0]
		argv, dropped := st.LocalLauncherArgv(3)
		if got := strings.Join(argv, " "); got != tt.want || strings.Join(dropped, " ") != tt.dropped {
			t.Errorf("%s: argv %q, dropped %q\nwant %q, dropped %q", tt.name, got, dropped, tt.want, tt.dropped)
		}
		// The step's own args are left as they were, for the script.
		if b := strings.Join(st.LauncherArgv(2, 2, 1), " "); tt.dropped != "" && !strings.Contains(b, strings.Fields(tt.dropped)[0]) {
			t.Errorf("%s: LocalLauncherArgv changed the step's args: %q", tt.name, b)
		}
	}
}

func TestPlacesRanks(t *testing.T) {
	for _, args := range [][]string{
		{"--map-by", "ppr:1:node"}, {"--map-by=node"}, {"-npernode", "2"}, {"-N", "2"}, {"--host", "a,b"},
		{"-ppn", "1"}, {"-perhost", "1"}, {"-hosts", "a,b"}, {"-f", "hosts"}, {"--bind-to", "none", "-rr"},
	} {
		if !PlacesRanks(args) {
			t.Errorf("%q: does not place ranks", args)
		}
	}
	for _, args := range [][]string{nil, {"--bind-to", "core"}, {"-genv", "X=-ppn"}, {"--mca", "btl", "tcp,self"}, {"-n", "4"}} {
		if PlacesRanks(args) {
			t.Errorf("%q: places ranks", args)
		}
	}
}

// TestMPIPlacementProblems: an MPI launcher that cannot place a run's
// ranks as planned is a problem of the campaign, where its type is set.
func TestMPIPlacementProblems(t *testing.T) {
	checkProblems(t, []problemCase{
		{"no flavor on two nodes", launcherCampaign(`type = "mpirun"`), []string{
			`c.toml:4:1: launcher.type: variant inter: mpirun places 2 rank(s) on 2 node(s) only when told how: set flavor (openmpi, mpich, intelmpi) for sbench to add the per-node option, or place them in args (--map-by ppr:{ppn}:node, -ppn {ppn})`,
		}},
		{"unknown flavor", launcherCampaign(`type = "mpirun"` + "\n" + `flavor = "open-mpi"`), []string{
			`c.toml:5:1: launcher.flavor: "open-mpi" is not an MPI launcher flavor: use openmpi, mpich, intelmpi (did you mean "openmpi"?)`,
		}},
		{"a variant's launcher", problemHead + `[[variant]]
name = "v"
launcher = { type = "mpiexec" }
[[benchmark]]
name = "b"
kernel = "latency"
`, []string{
			`c.toml:8:14: variant[0].launcher.type: variant v: mpiexec places 2 rank(s) on 2 node(s) only when told how: set flavor (openmpi, mpich, intelmpi) for sbench to add the per-node option, or place them in args (--map-by ppr:{ppn}:node, -ppn {ppn})`,
		}},
		{"ranks that leave a node empty", `[campaign]
name = "q"
[slurm]
nodes = 3
ntasks = 4
[launcher]
type = "mpirun"
flavor = "openmpi"
[[benchmark]]
name = "b"
kernel = "latency"
`, []string{
			`c.toml:7:1: launcher.type: variant default: 4 rank(s) on 3 nodes: mpirun's --map-by ppr:2:node puts 2 on each node, so they fill 2 node(s); give ntasks_per_node, or a rank count that fills every node`,
		}},
	})
}
