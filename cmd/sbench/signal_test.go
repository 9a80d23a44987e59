package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sbench/sbench/store"
)

var (
	sbenchOnce sync.Once
	sbenchBin  string
	sbenchErr  error
)

// buildSbench builds this sbench once per test run, for the tests that
// need a real process: signals, and inputs that block in the kernel.
// packageDir is this package's directory, taken before any test changes
// directory.
var packageDir, _ = os.Getwd()

func buildSbench(t *testing.T) string {
	t.Helper()
	sbenchOnce.Do(func() {
		dir, err := os.MkdirTemp("", "sbench-cli")
		if err != nil {
			sbenchErr = err
			return
		}
		sbenchBin = filepath.Join(dir, "sbench")
		build := exec.Command("go", "build", "-o", sbenchBin, ".")
		build.Dir = packageDir // tests may have changed directory
		if out, err := build.CombinedOutput(); err != nil {
			sbenchErr = fmt.Errorf("%v\n%s", err, out)
		}
	})
	if sbenchErr != nil {
		t.Fatalf("build sbench: %v", sbenchErr)
	}
	return sbenchBin
}

// hangLimit is how long a process that should end at once may take before
// the test calls it hung: a hang detector, not a speed target.
const hangLimit = 2 * time.Second

// sbenchProcess is a running sbench.
type sbenchProcess struct {
	cmd            *exec.Cmd
	stdout, stderr *syncBuffer
	done           chan struct{}
}

func startSbench(t *testing.T, stdin *os.File, env []string, args ...string) *sbenchProcess {
	t.Helper()
	p := &sbenchProcess{cmd: exec.Command(buildSbench(t), args...), stdout: &syncBuffer{}, stderr: &syncBuffer{}, done: make(chan struct{})}
	p.cmd.Stdin, p.cmd.Stdout, p.cmd.Stderr = stdin, p.stdout, p.stderr
	p.cmd.Env = append(os.Environ(), env...)
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		p.cmd.Process.Kill()
		<-p.done
	})
	return p
}

// startOnEndlessInput starts sbench with args and, as its standard input,
// a pipe that stays open until the test ends; it returns the process and
// the pipe's write end.
func startOnEndlessInput(t *testing.T, args ...string) (*sbenchProcess, *os.File) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	p := startSbench(t, r, nil, args...)
	r.Close()
	return p, w
}

// exit waits up to limit for the process to end and returns its exit
// status; a process still running then is killed and the test fails.
func (p *sbenchProcess) exit(t *testing.T, limit time.Duration) int {
	t.Helper()
	select {
	case <-p.done:
		return p.cmd.ProcessState.ExitCode()
	case <-time.After(limit):
		p.cmd.Process.Kill()
		<-p.done
		t.Fatalf("sbench %s still running after %s\nstdout: %s\nstderr: %s", strings.Join(p.cmd.Args[1:], " "), limit, p.stdout, p.stderr)
		return -1
	}
}

// interrupt sends the process sig and checks that it ends within limit as
// an interrupted command does: exit status 130, saying so.
func (p *sbenchProcess) interrupt(t *testing.T, sig os.Signal, limit time.Duration) {
	t.Helper()
	p.cmd.Process.Signal(sig)
	if code := p.exit(t, limit); code != exitInterrupted {
		t.Errorf("exit %d after %s, want %d\nstderr: %s", code, sig, exitInterrupted, p.stderr)
	}
	if !strings.Contains(p.stderr.String(), "sbench: interrupted") {
		t.Errorf("stderr %q does not say it was interrupted", p.stderr)
	}
}

// waitFor polls until cond holds, for readiness (a file written, a line
// printed) before a signal is sent: a signal that arrives before sbench
// installs its handler kills it as the default action would.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestIngestRefusesNamedPipe is item 9: "sbench ingest FIFO" blocked for
// ever in open(2), waiting for a writer, and ignored SIGINT.
func TestIngestRefusesNamedPipe(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "results.fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	p := startSbench(t, nil, nil, "ingest", "--db", filepath.Join(dir, "a.db"), fifo)
	if code := p.exit(t, hangLimit); code != exitUsage {
		t.Errorf("exit %d, want %d", code, exitUsage)
	}
	if want := "sbench: " + fifo + " is a named pipe, not a file: use - to read from standard input\n"; p.stderr.String() != want {
		t.Errorf("stderr %q\nwant   %q", p.stderr, want)
	}

	// Met in a directory, it is skipped like any other non-file.
	data, err := os.ReadFile(fixture(t, "003-osu_latency-v7.5-2node.txt"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "lat.txt"), data, 0o644)
	p = startSbench(t, nil, nil, "ingest", "--db", filepath.Join(dir, "a.db"), dir)
	if code := p.exit(t, hangLimit); code != 0 || !strings.HasPrefix(p.stdout.String(), "1 run(s) added") || p.stderr.String() != "" {
		t.Errorf("ingest DIR holding a named pipe: exit %d\nstdout: %s\nstderr: %s", code, p.stdout, p.stderr)
	}
}

// TestIngestStdinInterrupted: an ingest of a standard input that never
// ends stops on SIGINT, with the status of an interrupted command.
func TestIngestStdinInterrupted(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "a.db")
	p, w := startOnEndlessInput(t, "ingest", "--db", db, "-")
	w.Write([]byte("# OSU MPI Latency Test v7.5\n# Size          Avg Latency(us)\n1    11.01\n"))
	// sbench opens the archive after installing its signal handler and
	// before reading its input.
	waitFor(t, "sbench to create "+db, func() bool { _, err := os.Stat(db); return err == nil })
	p.interrupt(t, os.Interrupt, hangLimit)
}

// TestStatusWaitTerminated: "status --wait" on a job that keeps running
// stops on SIGTERM (a batch system ending the shell it runs in).
func TestStatusWaitTerminated(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "s.db")
	recordJobs(t, db, store.Job{SlurmID: "4242", Campaign: "c", Variants: []string{"v"}, ResultsDir: dir, Submitted: time.Now(), State: "PENDING"})
	// A Slurm whose job runs for ever: scontrol as a Slurm without
	// slurmdbd answers, and an squeue for the polls of several jobs.
	bin := filepath.Join(dir, "bin")
	os.Mkdir(bin, 0o755)
	scripts := map[string]string{
		"scontrol": "#!/bin/sh\n" +
			`[ "$1 $2" = "show job" ] || { echo "fake scontrol: $*" >&2; exit 1; }` + "\n" +
			`echo "JobId=$4 JobName=c-v JobState=RUNNING Reason=None ExitCode=0:0 StartTime=2026-12-01T00:00:00 EndTime=Unknown NodeList=n[1-2]"` + "\n",
		"squeue": "#!/bin/sh\nexit 0\n",
	}
	for name, text := range scripts {
		if err := os.WriteFile(filepath.Join(bin, name), []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	p := startSbench(t, nil, []string{"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH")},
		"status", "--db", db, "--wait", "--interval", "100ms")
	waitFor(t, "status to report the job running", func() bool {
		select {
		case <-p.done:
			t.Fatalf("status ended: %s", p.stderr)
		default:
		}
		return strings.Contains(p.stderr.String(), "job 4242: RUNNING")
	})
	p.interrupt(t, syscall.SIGTERM, hangLimit)
}

func TestInterruptedExitStatus(t *testing.T) {
	for _, tt := range []struct {
		err  error
		code int
		msg  string
	}{
		{interruptedError{cause: errors.New("interrupt signal received"), err: fmt.Errorf("wait for jobs 7: %w", context.Canceled)}, exitInterrupted,
			"sbench: interrupted (interrupt signal received): wait for jobs 7\n"},
		{interruptedError{cause: errors.New("interrupt signal received"), err: context.Canceled}, exitInterrupted,
			"sbench: interrupted (interrupt signal received)\n"},
		{interruptedError{cause: errors.New("terminated signal received"), err: errors.New("write report.pdf: broken pipe")}, exitInterrupted,
			"sbench: interrupted (terminated signal received): write report.pdf: broken pipe\n"},
		{interruptedError{cause: errors.New("terminated signal received")}, exitInterrupted,
			"sbench: interrupted (terminated signal received)\n"},
		{fmt.Errorf("ingest: %w", context.Canceled), exitInterrupted, "sbench: interrupted\n"},
	} {
		var stderr bytes.Buffer
		if code := exitCode(tt.err, &stderr); code != tt.code || stderr.String() != tt.msg {
			t.Errorf("exitCode(%v) = %d, %q; want %d, %q", tt.err, code, stderr.String(), tt.code, tt.msg)
		}
	}
	// run turns whatever a command returns after a signal into that.
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(errors.New("interrupt signal received"))
	err := run(ctx, []string{"runs", "--db", filepath.Join(t.TempDir(), "none.db")}, strings.NewReader(""), &bytes.Buffer{}, &bytes.Buffer{})
	if code := exitCode(err, &bytes.Buffer{}); code != exitInterrupted {
		t.Errorf("a command ended by a signal: exit %d (%v), want %d", code, err, exitInterrupted)
	}
	if long := strings.Join(strings.Fields(newRootCmd(&env{}).Commands()[0].Long), " "); !strings.Contains(long, "130 interrupted (SIGINT/SIGTERM)") {
		t.Error("help does not list exit status 130")
	}
}

// blockingReader blocks every read until closed, like a terminal nobody
// types into, and says when the first read started.
type blockingReader struct {
	reading chan struct{}
	once    sync.Once
	closed  chan struct{}
}

func (b *blockingReader) Read(p []byte) (int, error) {
	b.once.Do(func() { close(b.reading) })
	<-b.closed
	return 0, errors.New("closed")
}

// TestIngestStdinHonoursContext: the command itself returns when its
// context ends, while its standard input still blocks (main's grace period
// is only the last resort).
func TestIngestStdinHonoursContext(t *testing.T) {
	stdin := &blockingReader{reading: make(chan struct{}), closed: make(chan struct{})}
	defer close(stdin.closed)
	ctx, cancel := context.WithCancelCause(context.Background())
	done := make(chan error, 1)
	var stdout, stderr bytes.Buffer
	go func() {
		done <- run(ctx, []string{"ingest", "--db", filepath.Join(t.TempDir(), "a.db"), "-"}, stdin, &stdout, &stderr)
	}()
	<-stdin.reading
	cancel(errors.New("interrupt signal received"))
	select {
	case err := <-done:
		if code := exitCode(err, &stderr); code != exitInterrupted {
			t.Errorf("exit %d, want %d: %s", code, exitInterrupted, &stderr)
		}
	case <-time.After(hangLimit):
		t.Fatal("ingest - did not return after its context was cancelled")
	}
}

// TestInterruptedWhileBlocked: a command blocked in a read of a standard
// input that never ends (here archive import) still ends with the same
// status and message, whether it notices the signal itself or main's grace
// period ends it.
func TestInterruptedWhileBlocked(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "a.db")
	p, _ := startOnEndlessInput(t, "archive", "import", "--db", db, "-")
	waitFor(t, "sbench to create "+db, func() bool { _, err := os.Stat(db); return err == nil })
	p.interrupt(t, syscall.SIGTERM, unwindGrace+hangLimit)
	if want := "sbench: interrupted (terminated signal received)\n"; p.stderr.String() != want {
		t.Errorf("stderr %q, want %q", p.stderr, want)
	}
}
