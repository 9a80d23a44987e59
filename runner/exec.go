package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	// HPL and HPCC register their formats with parsers, for --parser hpl,
	// hpcc and auto. Both are cgo-free.
	_ "github.com/sbench/sbench/hpl"
	"github.com/sbench/sbench/parsers"
	"github.com/sbench/sbench/results"
	"github.com/sbench/sbench/runargs"
	"github.com/sbench/sbench/sizes"
)

// ExecKernel is the kernel that wraps a real tool instead of measuring.
const ExecKernel = runargs.ExecKernel

// Exec is the exec kernel's configuration: the command each rank runs and
// where rank 0 finds the output to parse.
type Exec struct {
	// Argv is the command every rank runs; RankArgv replaces it for some
	// ranks. A rank with neither only joins the bootstrap and waits.
	Argv     []string
	RankArgv map[int][]string
	// Parser is a parsers format name, "auto" (the default) to sniff, or
	// parsers.None for a command whose output holds no figures: its run
	// is judged by its exit status, with its wall time as its figure.
	Parser string
	// Output is the file to parse, relative to WorkDir; empty for rank 0's
	// standard output.
	Output string
	// WorkDir is every command's working directory; empty for
	// <results>/work/<session>. Rank 0 creates it.
	WorkDir string
	// Files are written into WorkDir by rank 0 before any command starts
	// (HPL.dat, hpccinf.txt …), by plain file name.
	Files map[string][]byte
	// StartDelay is how long rank 0 waits after the other ranks' commands
	// started before it starts its own: servers need a moment to listen.
	StartDelay time.Duration
	// Extract is the campaign's user-defined metrics and sanity patterns,
	// applied to the output after the parser (parsers.Compile); nil for
	// none.
	Extract *results.Extract
}

// Limits and timings of the exec kernel. Variables so that tests need not
// write 64 MiB or wait seconds.
var (
	// maxExecOutput caps what rank 0 keeps of its command's standard output
	// (and the size of an --output file).
	maxExecOutput = 64 << 20
	// stderrTailLen is how much of each command's standard error is kept
	// and sent to rank 0.
	stderrTailLen = 16 << 10
	// execStopWait is how long a rank lets its command end by itself after
	// rank 0's command ended (an MPI program finishing, NPtcp's receiver)
	// before SIGTERM; execKillWait then separates SIGTERM and SIGKILL.
	execStopWait = time.Second
	execKillWait = 3 * time.Second
)

// argv returns the command of rank, or nil.
func (e *Exec) argv(rank int) []string {
	if a, ok := e.RankArgv[rank]; ok {
		return a
	}
	return e.Argv
}

// check validates the configuration against the step's size: every
// placeholder, the ranks of --exec-rank, the parser, the file names.
func (e *Exec) check(size int) error {
	if len(e.Argv) == 0 && len(e.RankArgv) == 0 {
		return errors.New("the exec kernel needs a command: --exec or --exec-rank")
	}
	if len(e.Argv) > 0 {
		if err := checkArgv(e.Argv, size); err != nil {
			return fmt.Errorf("--exec: %w", err)
		}
	}
	for _, r := range slices.Sorted(maps.Keys(e.RankArgv)) {
		if r < 0 || r >= size {
			return fmt.Errorf("--exec-rank %d: the step has %d rank%s", r, size, results.Plural(size))
		}
		if len(e.RankArgv[r]) == 0 {
			return fmt.Errorf("--exec-rank %d: empty command", r)
		}
		if err := checkArgv(e.RankArgv[r], size); err != nil {
			return fmt.Errorf("--exec-rank %d: %w", r, err)
		}
	}
	if e.argv(0) == nil && e.Output == "" {
		return errors.New("rank 0 has no command and there is no --output file: nothing to parse")
	}
	if p := e.parser(); p != "auto" && p != parsers.None {
		if _, ok := parsers.Lookup(p); !ok {
			return fmt.Errorf("--parser %q: unknown (known: auto, %s, %s)", p, parsers.None, strings.Join(parsers.Names(), ", "))
		}
	}
	if e.Output != "" && (filepath.Clean(e.Output) == "." || strings.IndexByte(e.Output, 0) >= 0) {
		return fmt.Errorf("--output %q: not a file name", e.Output)
	}
	for name := range e.Files {
		if err := runargs.CheckFileName(name); err != nil {
			return err
		}
	}
	if e.StartDelay < 0 {
		return fmt.Errorf("--start-delay %s is negative", e.StartDelay)
	}
	if _, err := parsers.Compile(e.Extract); err != nil {
		return fmt.Errorf("--extract: %w", err)
	}
	return nil
}

// execResult is what rank 0 learned from a run of the exec kernel.
type execResult struct {
	// argv is rank 0's command as run; nil when rank 0 ran none.
	argv []string
	// name is what parse errors call the output: the output file, or the
	// command.
	name string
	// output is rank 0's standard output, or the --output file.
	output []byte
	// reports are the other ranks' (and stderr is rank 0's own).
	reports map[int]*execReport
	stderr  string
	// started says that the commands were started: from then on the
	// output is read and parsed whatever becomes of the run.
	started bool
	// took is rank 0's command's wall time, or, when rank 0 runs none,
	// the time until every rank's command had ended; zero when nothing ran.
	took time.Duration
	// collected says that the output was read and parsed: into runs, or
	// parseErr.
	collected bool
	runs      []*results.Bundle
	parseErr  error
	// note is an ok run's note (results.Bundle.Note): the commands of
	// the ranks in noted exited non-zero after rank 0's complete output.
	note  string
	noted []int
}

// parser is the format rank 0's output is read with.
func (e *Exec) parser() string {
	if e.Parser == "" {
		return "auto"
	}
	return e.Parser
}

// runExec runs the exec kernel on this rank once the bootstrap is over:
// rank 0 prepares the work directory; the other ranks start their
// commands; rank 0 starts its own after StartDelay and, when it ends,
// tells the others to stop theirs; a final barrier collects how each
// ended, and rank 0 reads its output before it releases it (judge). Only
// rank 0 returns a result, also when the run failed, with its output
// parsed whenever the commands were started. Errors name the rank at
// fault.
func runExec(ctx context.Context, c *comm, e *Exec, workdir string, stderr io.Writer) (*execResult, error) {
	id := c.id
	var argv []string
	var err error
	if a := e.argv(id.Rank); a != nil {
		vals := argValues{rank: id.Rank, size: id.Size, workdir: workdir, members: c.members}
		argv, err = expandArgv(a, vals) // checked before the bootstrap: cannot fail
	}
	if id.Rank == 0 && err == nil {
		err = prepareWorkDir(workdir, e)
	}
	if id.Rank == 0 && err != nil {
		// Rank 0's own errors end in the bundle as they are; the others'
		// are named by rank 0 when it receives them.
		err = rankError(id, err)
	}
	if err := c.barrier(ctx, "exec-prepare", err, time.Now().Add(c.ioTimeout)); err != nil {
		return &execResult{argv: argv}, err
	}
	if id.Rank != 0 {
		return nil, runExecPeer(ctx, c, argv, workdir, stderr)
	}

	res := &execResult{argv: argv}
	if err := c.barrier(ctx, "exec-start", nil, time.Now().Add(c.ioTimeout)); err != nil {
		return res, err
	}
	res.started = true
	start := time.Now()
	if argv == nil {
		// Without a command of rank 0's, another rank's exit fails the
		// run (judge), and at once, as any failure does: the other
		// commands are stopped, not waited for.
		go func() {
			select {
			case <-c.exited:
				c.fail(c.firstExit())
			case <-ctx.Done():
			}
		}()
	}
	var runErr error
	deadline := time.Time{} // without a command, rank 0 waits for the others' to end
	if argv != nil {
		if sleepUnlessExit(ctx, e.StartDelay, c.exited) {
			runErr = runOwn(ctx, c, argv, workdir, stderr, res)
		} else {
			// Another rank's command exited before rank 0's started:
			// nothing of the run can be complete.
			runErr = c.firstExit()
		}
		if runErr == nil {
			c.broadcast(execStop)
		}
		deadline = time.Now().Add(execStopWait + execKillWait + c.ioTimeout)
	}
	err = c.settle(ctx, finalBarrier, runErr, deadline, func() error {
		if argv == nil {
			res.took = time.Since(start)
		}
		return res.judge(c, e, workdir)
	})
	res.reports = c.execReports()
	if err != nil {
		res.collect(e, workdir) // what the tool printed is kept, whatever the run's end
	}
	return res, err
}

// sleepUnlessExit sleeps d, or until ctx ends, and reports false if
// another rank's command exited non-zero meanwhile (exited is closed).
func sleepUnlessExit(ctx context.Context, d time.Duration, exited <-chan struct{}) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	case <-exited:
		return false
	}
	return true
}

// judge weighs, on rank 0, a run whose every rank has reached the end
// without a failure of its own but for commands that exited non-zero by
// themselves (comm.commandExits): it reads and parses the output, and
// decides whether those exits fail the run. They do not when rank 0's
// command, whose output is the run's report, exited 0 by itself and its
// output parsed without an error: the other ranks' commands did their
// part, whatever they said when they ended (NetPIPE's receiver exits 3
// on its closing handshake, after a complete curve). The run is then ok,
// with the exits as its note. They do fail it when rank 0 runs no command
// (any rank may have written the output), and when the parser is
// parsers.None (nothing but the exit status says that the run did its
// work). A returned error fails the run everywhere.
func (res *execResult) judge(c *comm, e *Exec, workdir string) error {
	err := res.collect(e, workdir)
	exits := c.commandExits()
	if len(exits) == 0 {
		return rankError(c.id, err)
	}
	ranks := slices.Sorted(maps.Keys(exits))
	if err != nil || res.argv == nil || e.parser() == parsers.None || res.parseErr != nil {
		return exits[ranks[0]] // the likelier cause of a missing output too
	}
	msgs := make([]string, len(ranks))
	for i, r := range ranks {
		msgs[i] = exits[r].Error()
	}
	res.note = strings.Join(msgs, "\n") + "\n(after rank 0's command exited with status 0 and its output parsed complete: the run counts)"
	res.noted = ranks
	return nil
}

// collect reads the output, once: the --output file, or the standard
// output runOwn kept; and parses it. Only a file that cannot be read is
// an error; a parse error is kept in parseErr.
func (res *execResult) collect(e *Exec, workdir string) error {
	if res.collected || !res.started {
		return nil
	}
	res.collected = true
	if e.Output != "" {
		res.name = e.Output
		data, err := readOutput(outputPath(workdir, e.Output))
		if err != nil {
			res.parseErr = err
			return err
		}
		res.output = data
	}
	res.runs, res.parseErr = parsers.Parse(res.name, e.parser(), res.output)
	if len(res.runs) > 0 && !e.Extract.Empty() {
		e.extract(res, workdir)
	}
	var se parsers.SyntaxErrors
	if e.parser() == "auto" && errors.As(res.parseErr, &se) && slices.ContainsFunc(se, func(x *parsers.SyntaxError) bool {
		return strings.HasPrefix(x.Msg, parsers.NotToolOutputPrefix)
	}) {
		// The command may be no benchmark tool at all (hostname, an
		// application): say how to run it anyway.
		res.parseErr = fmt.Errorf("%w\nif the command prints no benchmark figures, give it parser %q: its runs are then judged by their exit status and timed (%s)",
			res.parseErr, parsers.None, results.MetricWallTime)
	}
	return nil
}

// extract applies the user-defined metrics and sanity patterns to every
// run the parser found: to the output it read, and to the files the
// metrics name (a file that cannot be read fails its metrics, which makes
// the run invalid).
func (e *Exec) extract(res *execResult, workdir string) {
	x, err := parsers.Compile(e.Extract) // check has compiled it: cannot fail
	if err != nil {
		return
	}
	files := map[string][]byte{}
	for _, f := range x.Files() {
		if data, err := readOutput(outputPath(workdir, f)); err == nil {
			files[f] = data
		}
	}
	for _, b := range res.runs {
		x.Apply(b, res.output, files)
	}
}

// runOwn runs rank 0's command, keeping its output in res. When another
// rank's command exits non-zero meanwhile, rank 0's gets execStopWait to
// end by itself (its output may be complete: NetPIPE's transmitter and
// receiver end together) before it is stopped.
func runOwn(ctx context.Context, c *comm, argv []string, workdir string, stderr io.Writer, res *execResult) error {
	id := c.id
	if ctx.Err() != nil {
		return stoppedError(ctx, id, argv)
	}

	out := &capWriter{limit: maxExecOutput}
	ch, err := startChild(argv, workdir, out, stderr)
	if err != nil {
		return rankError(id, err)
	}
	killWait := execKillWait
	out.notify(func() { ch.stop(0, killWait) })
	ended := ch.wait(ctx, c.exited, execStopWait)
	res.name = filepath.Base(argv[0])
	res.output = out.bytes()
	res.stderr = ch.tail.String()
	res.took = ch.took
	if !ended {
		if ctx.Err() == nil {
			return c.firstExit()
		}
		return stoppedError(ctx, id, argv)
	}
	if out.overflowed() {
		return rankError(id, fmt.Errorf("%s wrote more than %s to its standard output; let it write a file and parse that with --output",
			display(argv), sizes.Label(float64(maxExecOutput))))
	}
	if outcome, failed := ch.outcome(); failed {
		return rankError(id, ch.failure(outcome))
	}
	return nil
}

// stoppedError is why rank 0's command was stopped before its end: the
// run's timeout, or the cause of a run that failed elsewhere (a signal,
// another rank).
func stoppedError(ctx context.Context, id Identity, argv []string) error {
	if err := timeoutError(ctx, argv); err != nil {
		return rankError(id, err)
	}
	return context.Cause(ctx)
}

// timeoutError says that a command timed out, if ctx ended at the run's
// deadline: this rank's own, or another's that passed it first (the cause,
// not ctx.Err, says which deadline: a caller's context may have one too).
func timeoutError(ctx context.Context, argv []string) error {
	var rt *runTimeout
	if ctx.Err() != nil && errors.As(context.Cause(ctx), &rt) {
		return &commandTimeout{cmd: display(argv), run: rt}
	}
	return nil
}

// commandTimeout is a command stopped at the run's deadline. It wraps the
// deadline, so that the rank's barrier message says it timed out.
type commandTimeout struct {
	cmd string
	run *runTimeout
}

func (e *commandTimeout) Error() string {
	if e.run.d <= 0 {
		return e.cmd + " timed out (rank 0's timeout)"
	}
	return fmt.Sprintf("%s timed out after %s", e.cmd, e.run.d)
}

func (e *commandTimeout) Unwrap() error { return e.run }

// runExecPeer is a rank other than 0: it starts its command, reports that
// it did, and waits for the command to end or for rank 0's stop.
func runExecPeer(ctx context.Context, c *comm, argv []string, workdir string, stderr io.Writer) error {
	var ch *child
	var err error
	if argv != nil {
		if err = os.MkdirAll(workdir, 0o755); err != nil {
			err = fmt.Errorf("work directory: %w", err)
		} else {
			ch, err = startChild(argv, workdir, nil, stderr)
		}
	}
	if err := c.barrier(ctx, "exec-start", err, time.Now().Add(c.ioTimeout)); err != nil {
		if ch != nil {
			ch.stop(0, execKillWait)
		}
		return err
	}
	if ch == nil {
		return c.barrier(ctx, finalBarrier, nil, time.Time{})
	}
	msgs := c.ctrl[0].msgs
	stopping := false
	var runErr error
wait:
	for {
		select {
		case <-ch.done:
			break wait
		case f, ok := <-msgs:
			switch {
			case !ok:
				msgs = nil // the watcher has failed the run: ctx ends
			case f.t == msgAbort:
				// Rank 0 has given up: no report to send.
				ch.stop(0, execKillWait)
				var a abortMsg
				decode(f.t, f.payload, &a)
				return &abortError{Reason: a.Reason}
			case isRelease(f, execStop) && !stopping:
				stopping = true
				go ch.stop(execStopWait, execKillWait)
			}
		case <-ctx.Done():
			ch.stop(0, execKillWait)
			if runErr = timeoutError(ctx, argv); runErr == nil {
				runErr = context.Cause(ctx)
			}
			break wait
		}
	}
	outcome, failed := ch.outcome()
	if runErr == nil && failed {
		runErr = ch.failure(outcome)
		if ch.exitedNonZero() {
			runErr = &commandExit{runErr}
		}
	}
	report := &execReport{Command: argv, Outcome: outcome, Stderr: ch.tail.String()}
	return c.barrierWith(ctx, finalBarrier, runErr, report, time.Time{})
}

// prepareWorkDir creates the work directory, writes the input files and
// removes a stale output file, so that a tool that fails before writing
// its output is never credited with an old one.
func prepareWorkDir(dir string, e *Exec) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("work directory: %w", err)
	}
	for _, name := range slices.Sorted(maps.Keys(e.Files)) {
		if err := os.WriteFile(filepath.Join(dir, name), e.Files[name], 0o644); err != nil {
			return fmt.Errorf("input file: %w", err)
		}
	}
	if e.Output != "" {
		if err := os.Remove(outputPath(dir, e.Output)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("remove the last run's output: %w", err)
		}
	}
	return nil
}

func outputPath(workdir, output string) string {
	if filepath.IsAbs(output) {
		return output
	}
	return filepath.Join(workdir, output)
}

// readOutput reads the --output file, within the output limit.
func readOutput(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("output file: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, int64(maxExecOutput)+1))
	if err != nil {
		return nil, fmt.Errorf("output file: %w", err)
	}
	if len(data) > maxExecOutput {
		return nil, fmt.Errorf("output file %s is over %s", path, sizes.Label(float64(maxExecOutput)))
	}
	return data, nil
}

// commandExit is the error of a command that ended by itself with a
// non-zero exit status on a rank other than 0. Rank 0 weighs it against
// its output (execResult.judge) before it fails the run: NetPIPE's
// receiver exits 3 at the end of a complete curve.
type commandExit struct{ error }

func (e *commandExit) Unwrap() error { return e.error }

// child is one rank's command, in its own process group so that stopping
// it stops whatever it started (a shell's children, an MPI launcher's).
type child struct {
	argv []string
	cmd  *exec.Cmd
	tail *TailWriter
	done chan struct{}
	err  error // of Wait, once done is closed
	// took is the command's wall time, from its start to the end of
	// Wait, once done is closed.
	took time.Duration

	mu       sync.Mutex
	signaled bool
}

// startChild starts argv in dir with the runner's environment: an MPI
// program finds its launcher's PMIx/PMI variables there. stdout may be
// nil; standard error goes to stderr and a tail kept for the report.
func startChild(argv []string, dir string, stdout *capWriter, stderr io.Writer) (*child, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	// A process group of its own; and should the runner be killed outright,
	// the command dies with it instead of holding a port or a GPU.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if stdout != nil {
		cmd.Stdout = stdout
	}
	ch := &child{argv: argv, cmd: cmd, tail: NewTailWriter(stderrTailLen), done: make(chan struct{})}
	if stderr == nil {
		stderr = io.Discard
	}
	cmd.Stderr = io.MultiWriter(ch.tail, stderr)
	// A grandchild that escaped the group must not hold the pipes forever.
	cmd.WaitDelay = execKillWait
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", display(argv), err)
	}
	start := time.Now()
	go func() {
		ch.err = cmd.Wait()
		ch.took = time.Since(start)
		close(ch.done)
	}()
	return ch, nil
}

// signal sends sig to the command's process group.
func (ch *child) signal(sig syscall.Signal) {
	ch.mu.Lock()
	ch.signaled = true
	ch.mu.Unlock()
	syscall.Kill(-ch.cmd.Process.Pid, sig)
}

// stop lets the command end by itself for wait, then sends SIGTERM, then
// SIGKILL after killWait. It returns once the command has ended.
func (ch *child) stop(wait, killWait time.Duration) {
	for _, step := range []struct {
		after time.Duration
		sig   syscall.Signal
	}{{wait, syscall.SIGTERM}, {killWait, syscall.SIGKILL}} {
		t := time.NewTimer(step.after)
		select {
		case <-ch.done:
			t.Stop()
			return
		case <-t.C:
		}
		ch.signal(step.sig)
	}
	<-ch.done
}

// wait waits for the command to end. It reports false, having stopped
// the command, if ctx ended first, or if exited was closed (another
// rank's command exited) and the command did not end within grace. A
// command that has ended has ended, whatever else happened meanwhile.
func (ch *child) wait(ctx context.Context, exited <-chan struct{}, grace time.Duration) bool {
	select {
	case <-ch.done:
		return true
	case <-ctx.Done():
	case <-exited:
		t := time.NewTimer(grace)
		defer t.Stop()
		select {
		case <-ch.done:
			return true
		case <-ctx.Done():
		case <-t.C:
		}
	}
	select {
	case <-ch.done:
		return true
	default:
	}
	ch.stop(0, execKillWait)
	return false
}

// outcome says how the command ended, and whether that is a failure: a
// command this runner stopped has not failed, whatever its status.
func (ch *child) outcome() (string, bool) {
	ch.mu.Lock()
	signaled := ch.signaled
	ch.mu.Unlock()
	ps := ch.cmd.ProcessState
	if ps == nil {
		return fmt.Sprintf("did not run: %v", ch.err), true
	}
	ws, _ := ps.Sys().(syscall.WaitStatus)
	switch {
	case signaled && !ps.Success():
		return "stopped by sbench-runner", false
	case ws.Signaled():
		return "was killed by signal " + signalName(ws.Signal()), true
	case !ps.Success():
		return fmt.Sprintf("exited with status %d", ps.ExitCode()), true
	}
	return "exited with status 0", false
}

// exitedNonZero says that the command ended by itself with a non-zero
// exit status: not killed by a signal, not stopped by this runner.
func (ch *child) exitedNonZero() bool {
	ch.mu.Lock()
	signaled := ch.signaled
	ch.mu.Unlock()
	ps := ch.cmd.ProcessState
	return !signaled && ps != nil && ps.Exited() && ps.ExitCode() != 0
}

// failure is the error of a command that failed: what it was, how it
// ended, and the last thing it said.
func (ch *child) failure(outcome string) error {
	msg := display(ch.argv) + " " + outcome
	if line := lastLine(ch.tail.String()); line != "" {
		msg += ": " + line
	}
	return errors.New(msg)
}

var signalNames = map[syscall.Signal]string{
	syscall.SIGHUP: "SIGHUP", syscall.SIGINT: "SIGINT", syscall.SIGQUIT: "SIGQUIT", syscall.SIGILL: "SIGILL",
	syscall.SIGTRAP: "SIGTRAP", syscall.SIGABRT: "SIGABRT", syscall.SIGBUS: "SIGBUS", syscall.SIGFPE: "SIGFPE",
	syscall.SIGKILL: "SIGKILL", syscall.SIGUSR1: "SIGUSR1", syscall.SIGSEGV: "SIGSEGV", syscall.SIGUSR2: "SIGUSR2",
	syscall.SIGPIPE: "SIGPIPE", syscall.SIGALRM: "SIGALRM", syscall.SIGTERM: "SIGTERM", syscall.SIGXCPU: "SIGXCPU",
}

func signalName(s syscall.Signal) string {
	if n, ok := signalNames[s]; ok {
		return n
	}
	return fmt.Sprintf("%d (%s)", int(s), s)
}

// lastLine is the last non-blank line of s, shortened to fit in an error.
func lastLine(s string) string {
	s = strings.TrimRight(s, " \t\r\n")
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	s = strings.TrimSpace(strings.ToValidUTF8(s, "\uFFFD"))
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

// display writes a command for messages, quoted as a shell would need it
// and shortened.
func display(argv []string) string {
	parts := make([]string, len(argv))
	for i, a := range argv {
		parts[i] = shellQuote(a)
	}
	s := strings.Join(parts, " ")
	if len(s) > 120 {
		s = strings.ToValidUTF8(s[:120], "") + "…"
	}
	return s
}

func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-+=/.,:@%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// capWriter keeps what is written up to limit, then drops the rest (and
// says so once, so that the command can be stopped) while still reading,
// so that the command never blocks on a full pipe.
type capWriter struct {
	mu         sync.Mutex
	buf        bytes.Buffer
	limit      int
	over       bool
	onOverflow func()
}

// notify arranges for f to run (once, in its own goroutine) when the
// limit is passed, even if it already was.
func (w *capWriter) notify(f func()) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.onOverflow = f
	if w.over {
		go f()
	}
}

func (w *capWriter) bytes() []byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Bytes()
}

func (w *capWriter) overflowed() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.over
}

func (w *capWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.over {
		return len(p), nil
	}
	if w.buf.Len()+len(p) > w.limit {
		w.buf.Write(p[:w.limit-w.buf.Len()])
		w.over = true
		if w.onOverflow != nil {
			go w.onOverflow()
		}
		return len(p), nil
	}
	w.buf.Write(p)
	return len(p), nil
}

// TailWriter keeps the last max bytes written to it, for showing the end of
// a command's output; it is safe for concurrent writers. Once it has cut,
// String starts at a line and marks the cut with "[…]".
type TailWriter struct {
	mu  sync.Mutex
	buf []byte
	max int
	cut bool
}

// NewTailWriter returns a TailWriter that keeps the last max bytes.
func NewTailWriter(max int) *TailWriter { return &TailWriter{max: max} }

func (w *TailWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	if len(w.buf) > 2*w.max {
		w.buf = append(w.buf[:0], w.buf[len(w.buf)-w.max:]...)
		w.cut = true
	}
	return len(p), nil
}

func (w *TailWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	b := w.buf
	cut := w.cut
	if len(b) > w.max {
		b, cut = b[len(b)-w.max:], true
	}
	if cut {
		// Start at a line: half a line reads as a different message.
		if i := bytes.IndexByte(b, '\n'); i >= 0 && i < len(b)-1 {
			b = b[i+1:]
		}
		return "[…]\n" + strings.ToValidUTF8(string(b), "\uFFFD")
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}
