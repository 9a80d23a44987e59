package runner

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sbench/sbench/results"
)

// requireIntegration: an integration test may skip when a tool is absent,
// except in CI where SBENCH_REQUIRE_INTEGRATION=1 makes that a failure.
func requireIntegration(t *testing.T, format string, args ...any) {
	t.Helper()
	if os.Getenv("SBENCH_REQUIRE_INTEGRATION") == "1" {
		t.Fatalf(format, args...)
	}
	t.Skipf(format, args...)
}

var (
	buildOnce   sync.Once
	builtRunner string
	buildErr    error
)

// runnerBinary builds cmd/sbench-runner, as shipped: CGO_ENABLED=0.
func runnerBinary(t *testing.T) string {
	t.Helper()
	goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(goTool); err != nil {
		if goTool, err = exec.LookPath("go"); err != nil {
			requireIntegration(t, "no go command to build sbench-runner")
		}
	}
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "sbench-runner-e2e")
		if err != nil {
			buildErr = err
			return
		}
		builtRunner = filepath.Join(dir, "sbench-runner")
		cmd := exec.Command(goTool, "build", "-o", builtRunner,
			"-ldflags", "-X github.com/sbench/sbench/runner.Version=e2e-test", "../cmd/sbench-runner")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = errors.New(string(out))
		}
	})
	if buildErr != nil {
		t.Fatalf("build sbench-runner: %v", buildErr)
	}
	return builtRunner
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
				if got := stdout.String(); got != "0: "+path+"\n" {
					t.Errorf("stdout %q, want rank 0's bundle path", got)
				}
				b, err := results.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				if b.Status != results.StatusOK {
					t.Fatalf("status %s: %s", b.Status, b.Error)
				}
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
