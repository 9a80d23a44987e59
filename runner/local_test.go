package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sbench/sbench/internal/testenv"
)

// TestMain lets the test binary play a rank of a LocalStep: with
// SBENCH_TEST_RANK_MODE set it runs helperRank instead of the tests; with
// SBENCH_TEST_NOFILE_RANK0, rank 0 short of file descriptors.
func TestMain(m *testing.M) {
	if mode := os.Getenv("SBENCH_TEST_RANK_MODE"); mode != "" {
		os.Exit(helperRank(mode))
	}
	if spec := os.Getenv(nofileRankEnv); spec != "" {
		os.Exit(nofileRank0(spec))
	}
	pipes := openPipes()
	code := m.Run()
	testenv.RemoveBuilt() // the runner, built once for all end-to-end tests
	// A pipe left open counts against the user's pipe pages
	// (fs.pipe-user-pages-soft) as long as the process lives: enough of
	// them, and a later test's send=splice gets a pipe too small to use.
	if left := openPipes() - pipes; left > 0 && code == 0 {
		fmt.Fprintf(os.Stderr, "FAIL: the tests left %d pipe ends open\n", left)
		code = 1
	}
	os.Exit(code)
}

// openPipes counts the ends of pipes the process has open.
func openPipes() int {
	fds, _ := os.ReadDir("/proc/self/fd")
	n := 0
	for _, fd := range fds {
		if target, err := os.Readlink("/proc/self/fd/" + fd.Name()); err == nil && strings.HasPrefix(target, "pipe:") {
			n++
		}
	}
	return n
}

func helperRank(mode string) int {
	rank := os.Getenv("SLURM_PROCID")
	switch mode {
	case "env":
		var keys []string
		for _, kv := range os.Environ() {
			if strings.HasPrefix(kv, "SLURM") || strings.HasPrefix(kv, "EXTRA=") {
				keys = append(keys, kv)
			}
		}
		sort.Strings(keys)
		fmt.Println(strings.Join(keys, " "))
		fmt.Fprint(os.Stderr, "no newline at the end")
		return 0
	case "fail":
		switch rank {
		case "1":
			fmt.Fprintln(os.Stderr, "rank 1 fails")
			return 3
		case "0":
			// Rank 0 ignores SIGTERM: only SIGKILL stops it.
			signal.Ignore(syscall.SIGTERM)
		}
		time.Sleep(time.Minute)
		return 0
	case "sleep":
		time.Sleep(time.Minute)
		return 0
	case "cores":
		fmt.Println(UsableCores())
		return 0
	case "signal":
		// Say which signal stopped it, as the runner records it.
		ch := make(chan os.Signal, 1)
		signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM)
		fmt.Println("ready")
		select {
		case sig := <-ch:
			fmt.Printf("rank %s got %v\n", rank, sig)
			return 1
		case <-time.After(time.Minute):
			return 0
		}
	case "tool":
		// A rank whose tool runs in a process group of its own, as the
		// runner starts one, and that only SIGKILL ends.
		signal.Ignore(syscall.SIGINT, syscall.SIGTERM)
		exe, _ := os.Executable()
		tool := exec.Command(exe, "-test.run=^$")
		tool.Env = append(os.Environ(), "SBENCH_TEST_RANK_MODE=sleep")
		tool.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := tool.Start(); err != nil {
			fmt.Println(err)
			return 1
		}
		fmt.Printf("tool %d\n", tool.Process.Pid)
		fmt.Println("ready")
		time.Sleep(time.Minute)
		return 0
	case "launch":
		// An MPI launcher that starts 2 ranks of SBENCH_TEST_LAUNCHED's
		// mode and waits for them, deaf to the signals that stop a step:
		// only the ranks can hear them.
		signal.Ignore(syscall.SIGINT, syscall.SIGTERM)
		exe, _ := os.Executable()
		var ranks []*exec.Cmd
		for r := range 2 {
			c := exec.Command(exe, "-test.run=^$")
			c.Env = append(os.Environ(), "SBENCH_TEST_RANK_MODE="+os.Getenv("SBENCH_TEST_LAUNCHED"), fmt.Sprintf("SLURM_PROCID=%d", r))
			c.Stdout, c.Stderr = os.Stdout, os.Stderr
			if err := c.Start(); err != nil {
				fmt.Println(err)
				return 1
			}
			ranks = append(ranks, c)
		}
		code := 0
		for _, c := range ranks {
			if c.Wait() != nil {
				code = 1
			}
		}
		return code
	case "chatter":
		// Standard output and standard error at once, in writes that split
		// lines, as a tool with unbuffered output does.
		var wg sync.WaitGroup
		for _, f := range []*os.File{os.Stdout, os.Stderr} {
			wg.Add(1)
			go func(f *os.File, stream string) {
				defer wg.Done()
				for i := 0; i < chatterLines; i++ {
					line := fmt.Sprintf("%s r=%s i=%d %s\n", stream, rank, i, chatterPad(i))
					cut := len(line) / 2
					f.WriteString(line[:cut])
					f.WriteString(line[cut:])
				}
			}(f, map[*os.File]string{os.Stdout: "out", os.Stderr: "err"}[f])
		}
		wg.Wait()
		return 0
	}
	return 99
}

func helperStep(t *testing.T, mode string, nodes []string, tasksPerNode int) (LocalStep, *bytes.Buffer, *bytes.Buffer) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	return LocalStep{
		Runner: exe, Args: []string{"-test.run=^$"},
		Nodes: nodes, TasksPerNode: tasksPerNode, JobID: "55", StepID: "3", JobName: "fab",
		Env:    []string{"SBENCH_TEST_RANK_MODE=" + mode, "EXTRA=1"},
		Stdout: &stdout, Stderr: &stderr,
		Grace: 300 * time.Millisecond, KillWait: 300 * time.Millisecond,
	}, &stdout, &stderr
}

func TestLocalStepEnvironment(t *testing.T) {
	t.Setenv("SLURM_JOB_ID", "999") // the caller's job must not leak into the step
	s, stdout, stderr := helperStep(t, "env", []string{"local1", "local2"}, 2)
	if err := s.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	if len(lines) != 4 {
		t.Fatalf("stdout:\n%s", stdout)
	}
	sort.Strings(lines)
	for r, line := range lines {
		prefix := fmt.Sprintf("%d: ", r)
		if !strings.HasPrefix(line, prefix) {
			t.Fatalf("line %q lacks the %q prefix", line, prefix)
		}
		env := map[string]string{}
		for _, kv := range strings.Fields(strings.TrimPrefix(line, prefix)) {
			k, v, _ := strings.Cut(kv, "=")
			env[k] = v
		}
		node := r / 2
		want := map[string]string{
			"SLURM_PROCID": fmt.Sprint(r), "SLURM_NTASKS": "4", "SLURM_STEP_NUM_TASKS": "4",
			"SLURM_LOCALID": fmt.Sprint(r % 2), "SLURM_NODEID": fmt.Sprint(node),
			"SLURM_JOB_ID": "55", "SLURM_STEP_ID": "3", "SLURM_JOB_NAME": "fab",
			"SLURMD_NODENAME": fmt.Sprintf("local%d", node+1), "SLURM_STEP_NODELIST": "local[1-2]",
			"SLURM_STEP_NUM_NODES": "2", "SLURM_STEP_TASKS_PER_NODE": "2(x2)", "EXTRA": "1",
		}
		for k, v := range want {
			if env[k] != v {
				t.Errorf("rank %d: %s=%q, want %q", r, k, env[k], v)
			}
		}
		// What the runner will make of it.
		id, err := IdentityFromEnv(func(k string) string { return env[k] })
		if err != nil || id.Rank != r || id.NodeName != want["SLURMD_NODENAME"] || id.ExpectedNode(r) != id.NodeName {
			t.Errorf("rank %d: identity %+v, %v", r, id, err)
		}
	}
	if got := strings.Count(stderr.String(), "no newline at the end\n"); got != 4 {
		t.Errorf("stderr's unterminated last lines: %d of 4 flushed:\n%s", got, stderr)
	}
}

// TestLocalStepShortLastNode: 3 ranks on 2 nodes of 2 leave n2 with one, as
// srun -N2 -n3 does.
func TestLocalStepShortLastNode(t *testing.T) {
	s, stdout, _ := helperStep(t, "env", []string{"local1", "local2"}, 2)
	s.Ranks = 3
	if err := s.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("stdout:\n%s", stdout)
	}
	for _, line := range lines {
		for _, want := range []string{"SLURM_NTASKS=3", "SLURM_STEP_TASKS_PER_NODE=2,1"} {
			if !strings.Contains(line, want) {
				t.Errorf("line %q lacks %s", line, want)
			}
		}
		if strings.HasPrefix(line, "2: ") && !strings.Contains(line, "SLURMD_NODENAME=local2") {
			t.Errorf("rank 2 not on local2: %q", line)
		}
	}
}

func TestLocalStepKillsOnBadExit(t *testing.T) {
	s, _, stderr := helperStep(t, "fail", []string{"n1", "n2"}, 2)
	start := time.Now()
	err := s.Run(context.Background())
	took := time.Since(start)
	var se *StepError
	if !errors.As(err, &se) {
		t.Fatalf("got %v, want a StepError", err)
	}
	want := "local step: rank 0 (node n1): killed by signal killed (stopped by the launcher); " +
		"rank 1 (node n1): exit status 3; " +
		"rank 2 (node n2): killed by signal terminated (stopped by the launcher); " +
		"rank 3 (node n2): killed by signal terminated (stopped by the launcher)"
	if err.Error() != want {
		t.Errorf("error:\n%s\nwant:\n%s", err, want)
	}
	// Grace, then SIGTERM, then SIGKILL for rank 0: well under the minute
	// the ranks would sleep.
	if took > 5*time.Second {
		t.Errorf("took %s", took)
	}
	if !strings.Contains(stderr.String(), "1: rank 1 fails\n") {
		t.Errorf("stderr:\n%s", stderr)
	}
}

func TestLocalStepContextCancel(t *testing.T) {
	s, _, _ := helperStep(t, "sleep", []string{"n1"}, 2)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := s.Run(ctx)
	if time.Since(start) > 3*time.Second {
		t.Errorf("took %s", time.Since(start))
	}
	if err == nil || !strings.Contains(err.Error(), "rank 0 (node n1): killed by signal terminated (stopped by the launcher)") {
		t.Errorf("got %v", err)
	}
}

const chatterLines = 2000

// TestLocalStepSharedWriter: sbench local passes one writer as Stdout and
// Stderr. Every line of every rank must come out whole, once, labelled, in
// its rank's order, and (under -race) without two goroutines writing the
// writer at once.
func TestLocalStepSharedWriter(t *testing.T) {
	s, _, _ := helperStep(t, "chatter", []string{"n1", "n2"}, 2)
	var out bytes.Buffer // not safe for concurrent use, like most writers
	s.Stdout, s.Stderr = &out, &out
	if err := s.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	next := map[string]int{} // "rank stream" → next line number
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	for _, line := range lines {
		var label, stream, r string
		var i int
		var pad string
		n, _ := fmt.Sscanf(line, "%s %s r=%s i=%d %s", &label, &stream, &r, &i, &pad)
		if n < 4 || label != r+":" || chatterPad(i) != pad {
			t.Fatalf("garbled line %q", line)
		}
		key := r + " " + stream
		if next[key] != i {
			t.Fatalf("rank %s %s: line %d, want %d", r, stream, i, next[key])
		}
		next[key]++
	}
	if len(lines) != 4*2*chatterLines || len(next) != 8 {
		t.Errorf("%d lines from %d streams, want %d from 8", len(lines), len(next), 4*2*chatterLines)
	}
}

func chatterPad(i int) string { return strings.Repeat("x", i%97) }

func TestLocalStepChecks(t *testing.T) {
	for _, s := range []LocalStep{
		{Nodes: []string{"n1"}, TasksPerNode: 1, JobID: "1"},
		{Runner: "x", TasksPerNode: 1, JobID: "1"},
		{Runner: "x", Nodes: []string{"n1"}, JobID: "1"},
		{Runner: "x", Nodes: []string{"n1", "n1"}, TasksPerNode: 1, JobID: "1"},
		{Runner: "x", Nodes: []string{"n[1-2]"}, TasksPerNode: 1, JobID: "1"},
		{Runner: "x", Nodes: []string{"n1"}, TasksPerNode: 1},
		{Runner: "x", Nodes: []string{"n1", "n2"}, TasksPerNode: 2, Ranks: 2, JobID: "1"}, // n2 would be empty
		{Runner: "x", Nodes: []string{"n1"}, TasksPerNode: 2, Ranks: 3, JobID: "1"},
	} {
		if err := s.Run(context.Background()); err == nil {
			t.Errorf("%+v ran", s)
		}
	}
	s := LocalStep{Runner: "/nonexistent/sbench-runner", Nodes: []string{"n1"}, TasksPerNode: 2, JobID: "1"}
	if err := s.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "start rank 0") {
		t.Errorf("missing binary: %v", err)
	}
}

// lineWatch is a writer that counts the lines holding want, and closes
// seen once it has counted n.
type lineWatch struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	want string
	n    int
	seen chan struct{}
}

func newLineWatch(want string, n int) *lineWatch {
	return &lineWatch{want: want, n: n, seen: make(chan struct{})}
}

func (w *lineWatch) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if w.n > 0 && strings.Count(w.buf.String(), w.want) >= w.n {
		w.n = 0
		close(w.seen)
	}
	return len(p), nil
}

func (w *lineWatch) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// wait waits for the lines, or fails the test when the step ended first.
func (w *lineWatch) wait(t *testing.T, done <-chan error) {
	t.Helper()
	select {
	case <-w.seen:
	case err := <-done:
		t.Fatalf("the step ended before %d line(s) %q: %v\n%s", w.n, w.want, err, w)
	}
}

// toolPIDs are the pids of the tools "tool" ranks started.
func toolPIDs(t *testing.T, out string) []int {
	t.Helper()
	var pids []int
	for _, l := range strings.Split(out, "\n") {
		var pid int
		if _, err := fmt.Sscanf(l[strings.Index(l, ":")+1:], " tool %d", &pid); err == nil {
			pids = append(pids, pid)
		} else if _, err := fmt.Sscanf(l, "tool %d", &pid); err == nil {
			pids = append(pids, pid)
		}
	}
	if len(pids) == 0 {
		t.Fatalf("no tool pid in\n%s", out)
	}
	return pids
}

// gone reports whether pid ends within a minute, as a process sent
// SIGKILL does at once (a zombie nobody reaps, as PID 1 of a container may
// leave one, has ended too).
func gone(pid int) bool {
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if st, ok := readProcStat(pid); !ok || st.zombie {
			return true
		}
	}
	return false
}

// TestLocalStepStopSignal: ranks of a step whose context ends with a
// StopSignal cause get that signal (sbench local passes a Ctrl-C on as
// SIGINT, which the runner records as one), others SIGTERM.
func TestLocalStepStopSignal(t *testing.T) {
	for _, tt := range []struct {
		cause error
		want  string
	}{
		{StopSignal{Signal: syscall.SIGINT}, "got interrupt"},
		{errors.New("the step's time limit"), "got terminated"},
	} {
		s, _, _ := helperStep(t, "signal", []string{"n1"}, 2)
		out := newLineWatch("ready", 2)
		s.Stdout = out
		ctx, cancel := context.WithCancelCause(context.Background())
		done := make(chan error, 1)
		go func() { done <- s.Run(ctx) }()
		out.wait(t, done)
		cancel(tt.cause)
		err := <-done
		if err == nil || strings.Count(out.String(), tt.want) != 2 {
			t.Errorf("cause %v: error %v, output\n%s\nwant each rank to say %q", tt.cause, err, out, tt.want)
		}
	}
}

// TestLocalStepAbort: closing Abort kills every rank at once, and the
// tool each started in a process group of its own, which a signal to the
// rank would not reach; nothing is left running.
func TestLocalStepAbort(t *testing.T) {
	s, _, _ := helperStep(t, "tool", []string{"n1"}, 2)
	s.KillWait = time.Hour // the abort, not the step's own escalation, kills
	out := newLineWatch("ready", 2)
	s.Stdout = out
	abort := make(chan struct{})
	s.Abort = abort
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	out.wait(t, done)
	cancel() // a first Ctrl-C: the ranks ignore it
	close(abort)
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "killed by signal killed") {
			t.Errorf("got %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("ranks still running after the abort")
	}
	for _, pid := range toolPIDs(t, out.String()) {
		if !gone(pid) {
			syscall.Kill(-pid, syscall.SIGKILL)
			t.Errorf("tool %d outlived its killed rank", pid)
		}
	}
}

func launcherStep(t *testing.T, mode string) (LauncherStep, *lineWatch) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	out := newLineWatch("ready", 2)
	return LauncherStep{
		Argv: []string{exe, "-test.run=^$"}, Runner: exe,
		Env:    append(os.Environ(), "SBENCH_TEST_RANK_MODE=launch", "SBENCH_TEST_LAUNCHED="+mode),
		Stdout: out, Stderr: out, KillWait: 300 * time.Millisecond,
	}, out
}

// TestLauncherStepSignalsRanks: a step under an MPI launcher is stopped by
// signalling its ranks, with the stop signal, not the launcher (mpirun
// would kill them before rank 0 writes its bundle).
func TestLauncherStepSignalsRanks(t *testing.T) {
	s, out := launcherStep(t, "signal")
	ctx, cancel := context.WithCancelCause(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	out.wait(t, done)
	cancel(StopSignal{Signal: syscall.SIGINT})
	select {
	case err := <-done:
		if err == nil || !strings.Contains(out.String(), "rank 0 got interrupt") || !strings.Contains(out.String(), "rank 1 got interrupt") {
			t.Errorf("error %v, output\n%s\nwant both ranks interrupted", err, out)
		}
	case <-time.After(time.Minute):
		t.Fatal("launcher still running")
	}
}

// TestLauncherStepKills: ranks that ignore the stop signal are killed
// KillWait later, with the launcher and the ranks' tools; Abort does the
// same at once.
func TestLauncherStepKills(t *testing.T) {
	for _, abort := range []bool{false, true} {
		s, out := launcherStep(t, "tool")
		ab := make(chan struct{})
		s.Abort = ab
		if abort {
			s.KillWait = time.Hour
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- s.Run(ctx) }()
		out.wait(t, done)
		cancel()
		if abort {
			close(ab)
		}
		select {
		case err := <-done:
			if err == nil {
				t.Errorf("abort %v: a killed launcher returned no error", abort)
			}
		case <-time.After(time.Minute):
			t.Fatalf("abort %v: launcher still running", abort)
		}
		for _, pid := range toolPIDs(t, out.String()) {
			if !gone(pid) {
				syscall.Kill(-pid, syscall.SIGKILL)
				t.Errorf("abort %v: tool %d outlived the step", abort, pid)
			}
		}
	}
}

// TestUsableCores counts the cores a process may run on, as Open MPI's
// mpirun gives it slots: pinned to one CPU by taskset, one.
func TestUsableCores(t *testing.T) {
	if n := UsableCores(); n < 1 || n > runtime.NumCPU() {
		t.Errorf("%d usable cores of %d CPUs", n, runtime.NumCPU())
	}
	taskset := testenv.LookPath(t, "taskset", "util-linux")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(taskset, "-c", "0", exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), "SBENCH_TEST_RANK_MODE=cores")
	out, err := cmd.Output()
	if err != nil || strings.TrimSpace(string(out)) != "1" {
		t.Errorf("under taskset -c 0: %q, %v; want 1", out, err)
	}
}
