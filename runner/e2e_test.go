package runner

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sbench/sbench/internal/testenv"
	"github.com/sbench/sbench/kernels"
	"github.com/sbench/sbench/results"
)

// rank0Bundle checks that rank 0 printed the path of its bundle, and
// only that, and returns the bundle, which must be ok.
func rank0Bundle(t *testing.T, stdout, path string) *results.Bundle {
	t.Helper()
	if stdout != "0: "+path+"\n" {
		t.Errorf("stdout %q, want rank 0's bundle path", stdout)
	}
	b, err := results.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if b.Status != results.StatusOK {
		t.Fatalf("status %s: %s", b.Status, b.Error)
	}
	checkDeclared(t, b)
	return b
}

// checkDeclared: a native kernel writes only the metrics its row of the
// kernels table declares (kernels.Kernel.Metrics), each with a row of the
// metric table in the unit of that row's direction.
func checkDeclared(t *testing.T, b *results.Bundle) {
	t.Helper()
	if b.Benchmark.Kind != "native" {
		return
	}
	k, _ := kernels.Lookup(b.Benchmark.Kernel)
	for _, s := range b.Samples {
		m, ok := results.MetricOf(s.Metric)
		if !slices.Contains(k.Metrics, s.Metric) || !ok || results.BetterFor(s.Unit) != m.Better() {
			t.Errorf("kernel %s writes %s in %q: not what kernels.Kernel.Metrics and results/metric.go declare", k.Name, s.Metric, s.Unit)
			return
		}
	}
}

// runnerBinary builds cmd/sbench-runner, as shipped, with the version
// e2e-test.
func runnerBinary(t *testing.T) string {
	t.Helper()
	return testenv.Build(t, "../cmd/sbench-runner", "-ldflags", "-X github.com/sbench/sbench/runner.Version=e2e-test")
}

func TestEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the full 1 B to 4 MiB sweeps")
	}
	bin := runnerBinary(t)
	for _, layout := range []struct {
		name         string
		nodes        []string
		tasksPerNode int
	}{
		{"2 nodes", []string{"local1", "local2"}, 1},
		{"1 node", []string{"local1"}, 2},
	} {
		for _, kernel := range []struct{ name, metric, unit string }{
			{"latency", "latency", "us"}, {"bw", "bandwidth", "MB/s"},
		} {
			t.Run(layout.name+"/"+kernel.name, func(t *testing.T) {
				dir := t.TempDir()
				var stdout, stderr bytes.Buffer
				s := LocalStep{
					Runner: bin,
					Args: []string{"run", "--campaign", "e2e", "--variant", "tcp", "--benchmark", "pp-" + kernel.name,
						"--kernel", kernel.name, "--results", dir, "--label", "site=lab", "--vparam", "nodes=" + layout.name},
					Nodes: layout.nodes, TasksPerNode: layout.tasksPerNode,
					JobID: "4711", StepID: "0", JobName: "e2e",
					Env:    []string{"SBENCH_TOKEN=e2e-secret", "SBENCH_BIND=127.0.0.1", "SBENCH_BOOTSTRAP_TIMEOUT=20s"},
					Stdout: &stdout, Stderr: &stderr,
				}
				start := time.Now()
				if err := s.Run(context.Background()); err != nil {
					t.Fatalf("%v\nstderr:\n%s", err, stderr.String())
				}
				t.Logf("%s took %s", t.Name(), time.Since(start).Round(time.Millisecond))
				path := filepath.Join(dir, "4711.0.pp-"+kernel.name+".json")
				b := rank0Bundle(t, stdout.String(), path)
				sizes := make([]int, 23)
				for i := range sizes {
					sizes[i] = 1 << i
				}
				checkSamples(t, b, kernel.metric, kernel.unit, sizes)
				if b.Job.ID != "4711" || b.Job.Step != "0" || b.Job.Name != "e2e" || b.Job.Tasks != 2 || b.RunnerVersion != "e2e-test" {
					t.Errorf("job %+v, runner %s", b.Job, b.RunnerVersion)
				}
				if len(b.Hosts) != len(layout.nodes) {
					t.Fatalf("%d hosts, want %d", len(b.Hosts), len(layout.nodes))
				}
				for i, h := range b.Hosts {
					if h.NodeName != layout.nodes[i] || h.Hostname == "" || h.Kernel == "" {
						t.Errorf("host %d: %+v", i, h)
					}
				}
				if b.Benchmark.Command[0] != "sbench-runner" || b.Labels["site"] != "lab" || b.Params["nodes"] != layout.name {
					t.Errorf("command %v labels %v params %v", b.Benchmark.Command, b.Labels, b.Params)
				}
				if strings.Contains(strings.Join(b.Benchmark.Command, " "), "e2e-secret") {
					t.Error("the token is in the recorded command line")
				}
			})
		}
	}
}

// rankProcs starts a 2-rank step by hand, to signal its processes.
type rankProcs struct {
	cmds     [2]*exec.Cmd
	stderr   [2]*bytes.Buffer
	readDone [2]chan struct{}
	joined   chan struct{}
	results  string
}

func startRanks(t *testing.T, kernel string, params ...string) *rankProcs {
	bin := runnerBinary(t)
	dir := t.TempDir()
	p := &rankProcs{joined: make(chan struct{}), results: dir}
	s := LocalStep{Nodes: []string{"n1", "n2"}, TasksPerNode: 1, JobID: "812", StepID: "0",
		Env: []string{"SBENCH_TOKEN=t", "SBENCH_BIND=127.0.0.1"}}
	args := []string{"run", "--campaign", "c", "--variant", "v", "--benchmark", "b", "--kernel", kernel, "--results", dir}
	for _, kv := range params {
		args = append(args, "--param", kv)
	}
	for r := 0; r < 2; r++ {
		cmd := exec.Command(bin, args...)
		cmd.Env = s.rankEnv(r)
		p.stderr[r] = &bytes.Buffer{}
		p.readDone[r] = make(chan struct{})
		pipe, err := cmd.StderrPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill() })
		p.cmds[r] = cmd
		go func(r int) {
			defer close(p.readDone[r])
			sc := bufio.NewScanner(pipe)
			for sc.Scan() {
				p.stderr[r].WriteString(sc.Text() + "\n")
				if r == 0 && strings.Contains(sc.Text(), "joined in") {
					close(p.joined)
				}
			}
		}(r)
	}
	select {
	case <-p.joined:
	case <-time.After(20 * time.Second):
		t.Fatal("the ranks did not join")
	}
	return p
}

// wait returns a rank's exit code once it ends.
func (p *rankProcs) wait(t *testing.T, r int) int {
	select {
	case <-p.readDone[r]: // stderr is read to the end: the rank has exited
	case <-time.After(20 * time.Second):
		t.Fatalf("rank %d did not exit", r)
	}
	done := make(chan error, 1)
	go func() { done <- p.cmds[r].Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0
	case <-time.After(20 * time.Second):
		t.Fatalf("rank %d did not exit", r)
	}
	return -1
}

func TestEndToEndRankKilledMidKernel(t *testing.T) {
	p := startRanks(t, "latency", "sizes=1-1024", "iterations=10000000")
	time.Sleep(200 * time.Millisecond) // well into the kernel
	p.cmds[1].Process.Signal(syscall.SIGKILL)
	if code := p.wait(t, 0); code != 1 {
		t.Errorf("rank 0 exited %d, want 1", code)
	}
	p.wait(t, 1)
	b, err := results.ReadFile(filepath.Join(p.results, "812.0.b.json"))
	if err != nil {
		t.Fatalf("%v\nrank 0 stderr:\n%s", err, p.stderr[0])
	}
	if b.Status != results.StatusFailed || !strings.Contains(b.Error, "rank 1 (node n2)") || !strings.Contains(b.Error, "the process exited or was killed") {
		t.Errorf("status %s, error %q", b.Status, b.Error)
	}
	if !strings.Contains(p.stderr[0].String(), "sbench-runner: rank 0 (node n1): ") {
		t.Errorf("rank 0 stderr:\n%s", p.stderr[0])
	}
}

func TestEndToEndSIGTERMOnRankZero(t *testing.T) {
	p := startRanks(t, "bw", "sizes=1-1024", "iterations=10000000")
	time.Sleep(200 * time.Millisecond)
	p.cmds[0].Process.Signal(syscall.SIGTERM)
	if code := p.wait(t, 0); code != 1 {
		t.Errorf("rank 0 exited %d, want 1", code)
	}
	if code := p.wait(t, 1); code != 1 {
		t.Errorf("rank 1 exited %d, want 1", code)
	}
	b, err := results.ReadFile(filepath.Join(p.results, "812.0.b.json"))
	if err != nil {
		t.Fatal(err)
	}
	if b.Status != results.StatusFailed || !strings.HasPrefix(b.Error, "interrupted by SIGTERM") {
		t.Errorf("status %s, error %q", b.Status, b.Error)
	}
	if want := "rank 0 aborted the run: interrupted by SIGTERM"; !strings.Contains(p.stderr[1].String(), want) {
		t.Errorf("rank 1 stderr lacks %q:\n%s", want, p.stderr[1])
	}
}

// jsonArgv writes a command as --exec takes it.
func jsonArgv(t *testing.T, argv ...string) string {
	t.Helper()
	data, err := json.Marshal(argv)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestEndToEndExec runs the exec kernel as sbench local does: one process
// per rank, with srun's environment.
func TestEndToEndExec(t *testing.T) {
	bin := runnerBinary(t)
	base := func(dir, bench string) []string {
		return []string{"run", "--campaign", "e2e", "--variant", "tcp", "--benchmark", bench, "--kernel", "exec", "--results", dir}
	}
	step := func(args []string, stdout, stderr *bytes.Buffer) LocalStep {
		return LocalStep{Runner: bin, Args: args, Nodes: []string{"local1", "local2"}, TasksPerNode: 1,
			JobID: "4711", StepID: "0", JobName: "e2e",
			Env:    []string{"SBENCH_TOKEN=e2e-secret", "SBENCH_BIND=127.0.0.1", "SBENCH_BOOTSTRAP_TIMEOUT=20s"},
			Stdout: stdout, Stderr: stderr, Grace: 5 * time.Second, KillWait: time.Second}
	}

	t.Run("tool on every rank", func(t *testing.T) {
		dir := t.TempDir()
		var stdout, stderr bytes.Buffer
		args := append(base(dir, "lat"), "--exec", jsonArgv(t, "sh", "-c", "if [ {rank} = 0 ]; then "+osuLatency+"; fi"),
			"--parser", "osu", "--check", "latency@1<=5", "--repeat", "1", "--step", "3", "--session", "4711.3")
		if err := step(args, &stdout, &stderr).Run(context.Background()); err != nil {
			t.Fatalf("%v\n%s", err, stderr.String())
		}
		path := filepath.Join(dir, "4711.3.lat.json")
		if stdout.String() != "0: "+path+"\n" {
			t.Errorf("stdout %q", stdout.String())
		}
		b, err := results.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if b.Status != results.StatusOK || b.Benchmark.Launcher != "local" || b.Benchmark.ToolBenchmark != "osu_latency" ||
			b.Job.Step != "3" || b.Params["repeat"] != "1" || len(b.Samples) != 3 || b.Samples[0].Repeat != 1 ||
			len(b.Checks) != 1 || !b.Checks[0].Passed || len(b.Hosts) != 2 {
			t.Errorf("bundle: status %s %s, benchmark %+v, job %+v, params %v, checks %v", b.Status, b.Error, b.Benchmark, b.Job, b.Params, b.Checks)
		}
	})

	t.Run("failing rank", func(t *testing.T) {
		dir := t.TempDir()
		var stdout, stderr bytes.Buffer
		args := append(base(dir, "fail"), "--exec-rank", "0="+jsonArgv(t, "sleep", "30"),
			"--exec-rank", "1="+jsonArgv(t, "sh", "-c", "echo boom >&2; exit 3"))
		start := time.Now()
		err := step(args, &stdout, &stderr).Run(context.Background())
		var se *StepError
		if !errors.As(err, &se) || len(se.Failed) != 2 || time.Since(start) > 10*time.Second {
			t.Fatalf("%v after %s\n%s", err, time.Since(start), stderr.String())
		}
		b, err := results.ReadFile(filepath.Join(dir, "4711.0.fail.json"))
		if err != nil {
			t.Fatal(err)
		}
		if want := "rank 1 (node local2): sh -c 'echo boom >&2; exit 3' exited with status 3: boom"; b.Status != results.StatusFailed || b.Error != want {
			t.Errorf("status %s, error %q; want %q", b.Status, b.Error, want)
		}
		if !strings.Contains(stderr.String(), "1: boom\n") {
			t.Errorf("rank 1's standard error is not in the job's:\n%s", stderr.String())
		}
	})

	t.Run("iperf3 pair", func(t *testing.T) {
		testenv.LookPath(t, "iperf3", "iperf3")
		dir := t.TempDir()
		port := testenv.FreePort(t)
		var stdout, stderr bytes.Buffer
		args := append(base(dir, "iperf3"),
			"--exec-rank", "1="+jsonArgv(t, "iperf3", "-s", "-1", "-p", port),
			"--exec-rank", "0="+jsonArgv(t, "iperf3", "-c", "{host:1}", "-p", port, "-t", "1", "--json"),
			"--parser", "iperf3", "--start-delay", "500ms", "--check", "bandwidth>=1")
		if err := step(args, &stdout, &stderr).Run(context.Background()); err != nil {
			t.Fatalf("%v\n%s", err, stderr.String())
		}
		b, err := results.ReadFile(filepath.Join(dir, "4711.0.iperf3.json"))
		if err != nil {
			t.Fatal(err)
		}
		if b.Status != results.StatusOK || b.Benchmark.Tool != "iperf3" || b.Benchmark.ToolVersion == "" || len(b.Checks) != 1 {
			t.Errorf("status %s %s, benchmark %+v, checks %v", b.Status, b.Error, b.Benchmark, b.Checks)
		}
	})
}

// mpirunCommand is Open MPI's mpirun with what it needs as root on one
// host over loopback (see the lab notes), and none of the caller's Slurm
// or sbench variables.
func mpirunCommand(t *testing.T, ctx context.Context, np int, args ...string) *exec.Cmd {
	t.Helper()
	mpirun := testenv.LookPath(t, "mpirun", "openmpi-bin")
	if out, err := exec.Command(mpirun, "--version").CombinedOutput(); err != nil || !strings.Contains(string(out), "Open MPI") {
		testenv.Require(t, "mpirun is not Open MPI's: "+string(out))
	}
	cmd := exec.CommandContext(ctx, mpirun, append([]string{"--allow-run-as-root", "--oversubscribe", "--bind-to", "none",
		"-np", strconv.Itoa(np)}, args...)...)
	for _, kv := range os.Environ() {
		if !launcherVar(kv) && !strings.HasPrefix(kv, "SBENCH_") && !strings.HasPrefix(kv, "OMPI_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
		"OMPI_MCA_btl_tcp_if_include=lo", "OMPI_MCA_oob_tcp_if_include=lo",
		"SBENCH_TOKEN=mpirun-secret", "SBENCH_BIND=127.0.0.1", "SBENCH_BOOTSTRAP_TIMEOUT=30s")
	return cmd
}

// TestUnderMpirun starts the runner with Open MPI's mpirun instead of srun:
// the identity comes from OMPI_COMM_WORLD_*, the nodes from the bootstrap,
// and an MPI program started by the exec kernel finds mpirun through the
// environment it inherits.
func TestUnderMpirun(t *testing.T) {
	bin := runnerBinary(t)
	host, _ := os.Hostname()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	check := func(t *testing.T, b *results.Bundle) {
		t.Helper()
		if b.Status != results.StatusOK || b.Benchmark.Launcher != "mpirun" || b.Job.ID != "" || b.Job.Tasks != 2 ||
			strings.Join(b.Job.Nodes, " ") != host || b.Job.TasksPerNode != "2" {
			t.Errorf("status %s %s, benchmark %+v, job %+v", b.Status, b.Error, b.Benchmark, b.Job)
		}
		if len(b.Hosts) != 1 || fmt.Sprint(b.Hosts[0].Ranks) != "[0 1]" || b.Hosts[0].NodeName != host || b.Hosts[0].Kernel == "" {
			t.Errorf("hosts %+v", b.Hosts)
		}
	}

	t.Run("NPopenmpi", func(t *testing.T) {
		testenv.LookPath(t, "NPopenmpi", "netpipe-openmpi")
		dir := t.TempDir()
		cmd := mpirunCommand(t, ctx, 2, bin, "run", "--campaign", "e2e", "--variant", "mpi", "--benchmark", "np",
			"--kernel", "exec", "--exec", jsonArgv(t, "NPopenmpi", "-p", "0", "-n", "20", "-u", "4096"), "--parser", "netpipe",
			"--output", "np.out", // NetPIPE prints its rows on standard error
			"--results", dir)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%v\nstdout:\n%s\nstderr:\n%s", err, out, stderrOf(err))
		}
		paths, _ := filepath.Glob(filepath.Join(dir, "mpirun.*.np.json"))
		if len(paths) != 1 || strings.TrimSpace(string(out)) != paths[0] {
			t.Fatalf("bundles %v; mpirun printed %q", paths, out)
		}
		b, err := results.ReadFile(paths[0])
		if err != nil {
			t.Fatal(err)
		}
		check(t, b)
		n := 0
		for _, s := range b.Samples {
			if s.Metric == "bandwidth" && s.X != nil && s.Value > 0 {
				n++
			}
		}
		if n < 10 || b.Benchmark.Command[0] != "NPopenmpi" {
			t.Errorf("%d bandwidth samples, command %q", n, b.Benchmark.Command)
		}
		// NPopenmpi loads Debian's Open MPI, the one mpirun is.
		if h := b.Hosts[0]; !strings.HasPrefix(h.MPILibrary, "Open MPI ") || h.MPILibrary != h.MPI || !strings.Contains(h.MPILibraryPath, "/libmpi.so.") {
			t.Errorf("MPI %q, library %q at %q", h.MPI, h.MPILibrary, h.MPILibraryPath)
		}
	})

	t.Run("latency kernel", func(t *testing.T) {
		dir := t.TempDir()
		cmd := mpirunCommand(t, ctx, 2, bin, "run", "--campaign", "e2e", "--variant", "mpi", "--benchmark", "lat",
			"--kernel", "latency", "--param", "sizes=1-1024", "--param", "iterations=50",
			"--session", "e2e.1", "--step", "1", "--results", dir)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%v\nstdout:\n%s\nstderr:\n%s", err, out, stderrOf(err))
		}
		path := filepath.Join(dir, "mpirun.1.lat.json")
		if strings.TrimSpace(string(out)) != path {
			t.Fatalf("mpirun printed %q, want %s", out, path)
		}
		b, err := results.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		check(t, b)
		if b.Job.Step != "1" || len(b.Samples) != 11 {
			t.Errorf("step %q, %d samples", b.Job.Step, len(b.Samples))
		}
	})
}

func stderrOf(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return string(ee.Stderr)
	}
	return ""
}

// TestEndToEndRequeue: Slurm requeued a job after a node failure and reran
// its steps with SLURM_RESTART_COUNT=1. The rerun must write bundles of its
// own and leave the first attempt's as they were.
func TestEndToEndRequeue(t *testing.T) {
	bin := runnerBinary(t)
	dir := t.TempDir()
	attempt := func(env ...string) string {
		var stdout, stderr bytes.Buffer
		s := LocalStep{
			Runner: bin,
			// As the sbatch script runs a step: --session "$SLURM_JOB_ID.<step>".
			Args: []string{"run", "--campaign", "c", "--variant", "v", "--benchmark", "short1",
				"--kernel", "latency", "--param", "sizes=1-64", "--param", "iterations=20", "--results", dir, "--session", "7.0"},
			Nodes: []string{"n1", "n2"}, TasksPerNode: 1, JobID: "7", StepID: "0",
			Env:    append([]string{"SBENCH_TOKEN=t", "SBENCH_BIND=127.0.0.1"}, env...),
			Stdout: &stdout, Stderr: &stderr,
		}
		if err := s.Run(context.Background()); err != nil {
			t.Fatalf("%v\nstderr:\n%s", err, stderr.String())
		}
		return stdout.String()
	}
	first := filepath.Join(dir, "7.0.short1.json")
	if out := attempt(); out != "0: "+first+"\n" {
		t.Fatalf("attempt 0 wrote %q", out)
	}
	before, err := os.ReadFile(first)
	if err != nil {
		t.Fatal(err)
	}
	second := filepath.Join(dir, "7.r1.0.short1.json")
	if out := attempt("SLURM_RESTART_COUNT=1"); out != "0: "+second+"\n" {
		t.Fatalf("attempt 1 wrote %q, want %s", out, second)
	}
	after, err := os.ReadFile(first)
	if err != nil || !bytes.Equal(before, after) {
		t.Fatalf("attempt 1 changed attempt 0's bundle (%v)", err)
	}
	for path, restart := range map[string]int{first: 0, second: 1} {
		b, err := results.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if b.Status != results.StatusOK || b.Job.ID != "7" || b.Job.Step != "0" || b.Job.Restart != restart {
			t.Errorf("%s: status %s, job %+v; want restart %d", path, b.Status, b.Job, restart)
		}
	}
	if matches, _ := filepath.Glob(filepath.Join(dir, "7.*.json")); len(matches) != 2 {
		t.Errorf("7.*.json finds %v", matches)
	}
}
