package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
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

// localStopLimit is how long sbench local may take to stop a step and
// archive what finished after a signal: a hang detector (the ranks have
// localKillWait before SIGKILL), not a speed target.
const localStopLimit = localKillWait + time.Minute

// ctrlcCampaign is three steps in one job: a quick native one, one held
// until the file GO exists (then printing an OSU latency output, LAT),
// and another quick one.
func ctrlcCampaign(dir string) string {
	return `[campaign]
name = "ctrlc"

[slurm]
nodes = 1
ntasks_per_node = 2

[[benchmark]]
name = "first"
kernel = "latency"
params = { sizes = "1", iterations = 10, warmup = 1 }

[[benchmark]]
name = "held"
command = ["sh", "-c", "[ -e ` + filepath.Join(dir, "GO") + ` ] || exec sleep 300; cat ` + filepath.Join(dir, "LAT") + `"]
parser = "osu"

[[benchmark]]
name = "last"
kernel = "latency"
params = { sizes = "1", iterations = 10, warmup = 1 }
`
}

// startHeld starts sbench local on ctrlcCampaign and returns once the
// first step's bundle is written and the held step's ranks have met (rank
// 0's rendezvous file): the events before which a signal would stop
// another step.
func startHeld(t *testing.T, db string) *sbenchProcess {
	t.Helper()
	dir, _ := os.Getwd()
	return startHeldCampaign(t, db, ctrlcCampaign(dir))
}

func startHeldCampaign(t *testing.T, db, camp string) *sbenchProcess {
	t.Helper()
	if err := os.WriteFile("c.toml", []byte(camp), 0o644); err != nil {
		t.Fatal(err)
	}
	p := startSbench(t, nil, nil, "local", "c.toml", "--db", db)
	ended := func() {
		select {
		case <-p.done:
			t.Fatalf("sbench local ended: %s", p.stderr)
		default:
		}
	}
	waitFor(t, "the first step's bundle", func() bool {
		ended()
		m, _ := filepath.Glob("sbench-runs/ctrlc/local-*.0.first.json")
		return len(m) == 1
	})
	waitFor(t, "the held step's ranks to meet", func() bool {
		ended()
		m, _ := filepath.Glob("sbench-runs/ctrlc/.rendezvous/local-*.1.addr")
		return len(m) == 1
	})
	return p
}

// writeLAT writes the held step's output, an OSU latency run.
func writeLAT(t *testing.T) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(packageDir, "..", "..", "parsers", "testdata", "003-osu_latency-v7.5-2node.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile("LAT", data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// leftovers are the rendezvous files and unfinished bundles left in the
// campaign's results directory.
func leftovers() []string {
	addr, _ := filepath.Glob("sbench-runs/ctrlc/.rendezvous/*")
	tmp, _ := filepath.Glob("sbench-runs/ctrlc/.*.tmp*")
	return append(addr, tmp...)
}

// TestLocalInterrupted: Ctrl-C during sbench local, after a step finished
// and while the next runs. It used to lose the finished run (its bundle
// in the results directory, "sbench runs" saying the archive had no
// runs), leave the running step's rendezvous file, and say nothing of how
// to go on. Now the running step is stopped, the finished one archived,
// the stopped one archived as failed "interrupted by Ctrl-C", the one
// that never started as failed, no rendezvous file is left, and the
// message gives the command that runs the rest — which does.
func TestLocalInterrupted(t *testing.T) {
	dir := endToEndDir(t, "runs a campaign and interrupts it")
	db := filepath.Join(dir, "a.db")
	p := startHeld(t, db)
	p.interrupt(t, os.Interrupt, localStopLimit)
	resume := "sbench local c.toml --db " + db + " --resume"
	if errs := p.stderr.String(); !strings.Contains(errs, "interrupted by Ctrl-C (SIGINT)") || !strings.Contains(errs, resume+" runs them") ||
		!strings.Contains(errs, "2 of 3 step(s) not run") {
		t.Errorf("stderr does not say what was interrupted and how to run the rest (%q):\n%s", resume, errs)
	}
	if !strings.Contains(p.stdout.String(), "3 run(s) from 1 job(s) archived") {
		t.Errorf("stdout: %s", p.stdout)
	}
	if l := leftovers(); len(l) > 0 {
		t.Errorf("left behind: %q", l)
	}
	status := func() map[string][]string {
		got := map[string][]string{}
		for _, r := range storedRuns(t, db, store.Filter{Campaign: "ctrlc"}) {
			got[r.Benchmark] = append(got[r.Benchmark], string(r.Status)+": "+r.Error)
		}
		return got
	}
	got := status()
	if len(got["first"]) != 1 || got["first"][0] != "ok: " {
		t.Errorf("the finished step's runs: %q, want one ok", got["first"])
	}
	if len(got["held"]) != 1 || !strings.HasPrefix(got["held"][0], "failed: ") || !strings.Contains(got["held"][0], "interrupted by Ctrl-C") {
		t.Errorf("the interrupted step's runs: %q, want one failed, interrupted by Ctrl-C", got["held"])
	}
	if len(got["last"]) != 1 || !strings.HasPrefix(got["last"][0], "failed: ") || !strings.Contains(got["last"][0], "never started") {
		t.Errorf("the step that never started: %q, want one failed run saying so", got["last"])
	}

	// The command it printed runs what did not run, and nothing else.
	writeLAT(t)
	os.WriteFile("GO", nil, 0o644)
	out, errs, code := sbench(t, "local", "c.toml", "--db", db, "--resume")
	if code != 0 || !strings.Contains(out, "2 run(s) from 1 job(s) archived") {
		t.Fatalf("--resume: exit %d\n%s\n%s", code, out, errs)
	}
	got = status()
	if len(got["first"]) != 1 || len(got["held"]) != 2 || got["held"][1] != "ok: " || len(got["last"]) != 2 || got["last"][1] != "ok: " {
		t.Errorf("after --resume: %q, want first's one run, and held and last run again, ok", got)
	}
	if out, errs, code := sbench(t, "local", "c.toml", "--db", db, "--resume"); code != 0 || !strings.Contains(out, "nothing to resume") {
		t.Errorf("a second --resume: exit %d\n%s\n%s", code, out, errs)
	}
}

// TestLocalInterruptedTwice: a second signal while sbench local stops a
// step whose tool ignores SIGINT and SIGTERM kills the step at once; it
// still leaves no rendezvous file and no process, and says how to go on.
// Should the step have stopped before the second signal, the same holds.
func TestLocalInterruptedTwice(t *testing.T) {
	dir := endToEndDir(t, "runs a campaign and interrupts it twice")
	db := filepath.Join(dir, "a.db")
	camp := strings.Replace(ctrlcCampaign(dir), `"[ -e `, `"trap '' INT TERM; echo $$ >>`+filepath.Join(dir, "pids")+`; [ -e `, 1)
	p := startHeldCampaign(t, db, camp)
	waitFor(t, "the held step's tool to start on both ranks", func() bool {
		data, _ := os.ReadFile("pids")
		return len(strings.Fields(string(data))) == 2
	})
	p.cmd.Process.Signal(os.Interrupt)
	waitFor(t, "sbench to say it stops the step", func() bool {
		return strings.Contains(p.stderr.String(), "stopping the running step")
	})
	p.interrupt(t, syscall.SIGTERM, hangLimit+localStopLimit)
	if errs := p.stderr.String(); !strings.Contains(errs, "sbench local c.toml --db "+db+" --resume") {
		t.Errorf("stderr does not say how to go on:\n%s", errs)
	}
	if l := leftovers(); len(l) > 0 {
		t.Errorf("left behind: %q", l)
	}
	data, _ := os.ReadFile("pids")
	pids := strings.Fields(string(data))
	if len(pids) != 2 {
		t.Fatalf("the tool's pids: %q, want one per rank", pids)
	}
	for _, s := range pids {
		pid, _ := strconv.Atoi(s)
		waitFor(t, "tool "+s+" to end", func() bool {
			b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
			return err != nil || strings.Contains(string(b), ") Z ")
		})
	}
	// What finished is archived by --resume, and the rest runs.
	os.WriteFile("GO", nil, 0o644)
	writeLAT(t)
	if out, errs, code := sbench(t, "local", "c.toml", "--db", db, "--resume"); code != 0 {
		t.Fatalf("--resume: exit %d\n%s\n%s", code, out, errs)
	}
	ok := map[string]int{}
	for _, r := range storedRuns(t, db, store.Filter{Campaign: "ctrlc"}) {
		if r.Status == "ok" {
			ok[r.Benchmark]++
		}
	}
	if ok["first"] != 1 || ok["held"] != 1 || ok["last"] != 1 {
		t.Errorf("ok runs after --resume %v, want one of each step", ok)
	}
}
