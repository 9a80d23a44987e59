package runner

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sbench/sbench/internal/testenv"
	"github.com/sbench/sbench/results"
)

// requireSlurm skips (or, under SBENCH_REQUIRE_INTEGRATION=1, fails)
// unless a test cluster is up: make test-slurm starts one (fake nodes n1
// and n2 on this host) and exports SLURM_CONF.
func requireSlurm(t *testing.T, tools ...string) {
	t.Helper()
	if os.Getenv("SLURM_CONF") == "" {
		testenv.Require(t, "SLURM_CONF is not set (run make test-slurm)")
	}
	for _, tool := range append([]string{"srun", "salloc"}, tools...) {
		testenv.LookPath(t, tool, "")
	}
}

// slurmCommand runs argv against the test cluster with the runner's
// environment: loopback only, one token.
func slurmCommand(ctx context.Context, dir string, argv ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "SLURM_CONF=") ||
			!launcherVar(kv) && !strings.HasPrefix(kv, "SBENCH_") && !strings.HasPrefix(kv, "OMPI_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "SBENCH_TOKEN=slurm-secret", "SBENCH_BIND=127.0.0.1", "SBENCH_BOOTSTRAP_TIMEOUT=30s",
		"OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
		"OMPI_MCA_btl_tcp_if_include=lo", "OMPI_MCA_oob_tcp_if_include=lo",
		// Fake nodes share one host, and Open MPI's shared memory between
		// ranks it believes on different nodes collides (see the lab notes).
		"OMPI_MCA_btl=self,tcp")
	return cmd
}

func slurmDir(t *testing.T) string {
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil { // slurmd's tasks write here
		t.Fatal(err)
	}
	return dir
}

// slurmRun runs argv against the test cluster in dir, within two minutes,
// and reads the bundle whose path the runner printed.
func slurmRun(t *testing.T, dir string, argv ...string) (b *results.Bundle, path string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := slurmCommand(ctx, dir, argv...).Output()
	if err != nil {
		t.Fatalf("%v\n%s\n%s", err, out, stderrOf(err))
	}
	path = strings.TrimSpace(string(out))
	b, err = results.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (%s printed %q)", err, argv[0], out)
	}
	return b, path
}

// TestSlurmExecUnderSrun: srun --mpi=pmix starts the runner on two nodes,
// and the MPI program the exec kernel starts finds PMIx through the
// environment.
func TestSlurmExecUnderSrun(t *testing.T) {
	requireSlurm(t, "NPopenmpi")
	bin := runnerBinary(t)
	dir := slurmDir(t)
	b, out := slurmRun(t, dir, "srun", "-N2", "-n2", "--mpi=pmix", bin, "run", "--campaign", "lab", "--variant", "pmix",
		"--benchmark", "np", "--kernel", "exec", "--exec", jsonArgv(t, "NPopenmpi", "-p", "0", "-n", "20", "-u", "4096"),
		"--parser", "netpipe", "--output", "np.out", "--step", "5", "--results", dir)
	if b.Status != results.StatusOK || b.Benchmark.Launcher != "srun" || b.Job.Step != "5" ||
		strings.Join(b.Job.Nodes, " ") != "n1 n2" || len(b.Hosts) != 2 || len(b.Samples) == 0 ||
		filepath.Base(out) != b.Job.ID+".5.np.json" {
		t.Errorf("%s: status %s %s, benchmark %+v, job %+v, %d samples", out, b.Status, b.Error, b.Benchmark, b.Job, len(b.Samples))
	}
}

// TestSlurmMpirunInAllocation is the trap: mpirun inside an allocation
// starts its daemons with srun, and ranks 0, 1 and 2 all see the daemon's
// SLURM_PROCID=0. Were Slurm's variables believed, three ranks would claim
// rank 0 and the bootstrap would fail.
func TestSlurmMpirunInAllocation(t *testing.T) {
	requireSlurm(t, "mpirun")
	bin := runnerBinary(t)
	dir := slurmDir(t)
	b, _ := slurmRun(t, dir, "salloc", "-N2", "-n4", "mpirun", "--allow-run-as-root", "--bind-to", "none", "-np", "4",
		bin, "run", "--campaign", "lab", "--variant", "mpirun", "--benchmark", "lat", "--kernel", "latency",
		"--param", "sizes=1-64", "--param", "iterations=20", "--results", dir)
	var ranks []int
	for _, h := range b.Hosts {
		ranks = append(ranks, h.Ranks...)
	}
	if b.Status != results.StatusOK || b.Benchmark.Launcher != "mpirun" || b.Job.ID == "" || b.Job.Tasks != 4 ||
		len(ranks) != 4 || len(b.Samples) != 7 {
		t.Errorf("status %s %s, benchmark %+v, job %+v, ranks %v", b.Status, b.Error, b.Benchmark, b.Job, ranks)
	}
}

// TestSlurmIperf3AcrossNodes: a server on n2, the client on n1 reaching it
// at the address rank 1 advertised.
func TestSlurmIperf3AcrossNodes(t *testing.T) {
	requireSlurm(t, "iperf3")
	bin := runnerBinary(t)
	dir := slurmDir(t)
	port := testenv.FreePort(t)
	b, _ := slurmRun(t, dir, "srun", "-N2", "-n2", bin, "run", "--campaign", "lab", "--variant", "tcp",
		"--benchmark", "iperf3", "--kernel", "exec",
		"--exec-rank", "1="+jsonArgv(t, "iperf3", "-s", "-1", "-p", port),
		"--exec-rank", "0="+jsonArgv(t, "iperf3", "-c", "{host:1}", "-p", port, "-t", "1", "--json"),
		"--start-delay", "500ms", "--check", "bandwidth>=1", "--results", dir)
	if b.Status != results.StatusOK || b.Benchmark.Tool != "iperf3" || len(b.Checks) != 1 || !b.Checks[0].Passed ||
		strings.Join(b.Job.Nodes, " ") != "n1 n2" {
		t.Errorf("status %s %s, benchmark %+v, checks %+v, job %+v", b.Status, b.Error, b.Benchmark, b.Checks, b.Job)
	}
}
