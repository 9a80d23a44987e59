package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/sbench/sbench/slurm/hostlist"
)

// LocalStep runs one job step's ranks as local processes, with the
// environment srun would give them, so that a campaign runs without Slurm
// (`sbench local`). Ranks are laid out by block over Nodes, TasksPerNode on
// each, as srun does by default.
type LocalStep struct {
	Runner string   // path of the sbench-runner binary
	Args   []string // arguments after the binary ("run", "--campaign", …)
	// Nodes are fake node names, e.g. ["local1", "local2"].
	Nodes        []string
	TasksPerNode int
	// Ranks is the step's task count; 0 means len(Nodes) × TasksPerNode.
	// Fewer ranks leave the last node short, as srun -n does with block
	// distribution; every node must get at least one.
	Ranks   int
	JobID   string
	StepID  string
	JobName string
	// Env is added to every rank's environment (SBENCH_TOKEN,
	// SBENCH_BIND=127.0.0.1 …). The caller's SLURM_* variables, and the
	// rank variables of MPI launchers, are not passed on: they describe
	// another job.
	Env []string
	// Dir is the ranks' working directory; empty for the caller's.
	Dir string
	// Stdout and Stderr receive every rank's output, each line prefixed
	// "RANK: " as srun -l does. Nil discards it. They may be one writer:
	// lines are written whole, one call at a time, never two at once.
	Stdout, Stderr io.Writer
	// Grace is how long the other ranks may keep running after one fails
	// (rank 0 needs a moment to write its bundle); default 10s. KillWait is
	// how long a rank has between SIGTERM and SIGKILL; default 5s.
	Grace    time.Duration
	KillWait time.Duration
	// Abort, once closed, kills every rank and what it started at once,
	// with SIGKILL (a second Ctrl-C).
	Abort <-chan struct{}
}

// StopSignal, as the cause of a local step's context
// (context.WithCancelCause), is the signal its ranks get when the context
// ends: sbench local passes a Ctrl-C on as SIGINT, which the runner
// records as such. Ranks whose context ends for another reason (the
// step's time limit) get SIGTERM, as Slurm sends at a time limit.
type StopSignal struct{ Signal syscall.Signal }

func (s StopSignal) Error() string { return "stopped by " + s.Signal.String() }

// stopSignal is the signal that stops the ranks of a step whose context
// ended.
func stopSignal(ctx context.Context) syscall.Signal {
	var s StopSignal
	if errors.As(context.Cause(ctx), &s) && s.Signal != 0 {
		return s.Signal
	}
	return syscall.SIGTERM
}

// RankExit is how one rank of a local step ended.
type RankExit struct {
	Rank int
	Node string
	// Err is the process's exit error (*exec.ExitError) or the start error.
	Err error
	// Killed is set when the launcher stopped the rank because another one
	// failed or the context ended.
	Killed bool
}

// StepError lists the ranks of a local step that failed.
type StepError struct {
	Failed []RankExit
}

func (e *StepError) Error() string {
	parts := make([]string, len(e.Failed))
	for i, f := range e.Failed {
		parts[i] = fmt.Sprintf("rank %d (node %s): %s", f.Rank, f.Node, describeExit(f.Err))
		if f.Killed {
			parts[i] += " (stopped by the launcher)"
		}
	}
	return "local step: " + strings.Join(parts, "; ")
}

func describeExit(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return "killed by signal " + ws.Signal().String()
		}
		return fmt.Sprintf("exit status %d", ee.ExitCode())
	}
	return err.Error()
}

// rankEnv returns the environment of rank: the caller's without its
// launchers' variables, those srun would set (and LocalStepVar), then Env.
func (s LocalStep) rankEnv(rank int) []string { return s.newStepEnv().rank(rank) }

// stepEnv is what every rank's environment shares, made once for the step:
// the caller's environment and the node list are the same for all ranks,
// and compressing hundreds of node names once per rank added up.
type stepEnv struct {
	s        LocalStep
	inherit  []string
	size     int
	step     string
	perNode  []int
	tpn      string
	nodelist string
}

func (s LocalStep) newStepEnv() *stepEnv {
	e := &stepEnv{s: s, size: s.size(), step: s.StepID, perNode: s.tasksOn(), nodelist: hostlist.Compress(s.Nodes)}
	if e.step == "" {
		e.step = "0"
	}
	e.tpn = compactCounts(e.perNode)
	e.inherit = LocalEnv()
	return e
}

func (e *stepEnv) rank(rank int) []string {
	s := e.s
	node := rank / s.TasksPerNode
	gtids := make([]string, e.perNode[node])
	for i := range gtids {
		gtids[i] = strconv.Itoa(node*s.TasksPerNode + i)
	}
	size, nodes := strconv.Itoa(e.size), strconv.Itoa(len(s.Nodes))
	env := make([]string, 0, len(e.inherit)+25+len(s.Env))
	env = append(env, e.inherit...)
	set := func(value string, names ...string) {
		for _, n := range names {
			env = append(env, n+"="+value)
		}
	}
	set(strconv.Itoa(rank), "SLURM_PROCID")
	set(size, "SLURM_NTASKS", "SLURM_NPROCS", "SLURM_STEP_NUM_TASKS")
	set(strconv.Itoa(rank%s.TasksPerNode), "SLURM_LOCALID")
	set(strconv.Itoa(node), "SLURM_NODEID")
	set(strings.Join(gtids, ","), "SLURM_GTIDS")
	set(s.JobID, "SLURM_JOB_ID", "SLURM_JOBID")
	set(e.step, "SLURM_STEP_ID", "SLURM_STEPID")
	set(s.JobName, "SLURM_JOB_NAME")
	set(s.Nodes[node], "SLURMD_NODENAME", "SLURM_TOPOLOGY_ADDR")
	set(e.nodelist, "SLURM_JOB_NODELIST", "SLURM_NODELIST", "SLURM_STEP_NODELIST")
	set(nodes, "SLURM_NNODES", "SLURM_JOB_NUM_NODES", "SLURM_STEP_NUM_NODES")
	set(e.tpn, "SLURM_TASKS_PER_NODE", "SLURM_STEP_TASKS_PER_NODE")
	set(strconv.Itoa(s.TasksPerNode), "SLURM_NTASKS_PER_NODE")
	set("block", "SLURM_DISTRIBUTION")
	set("1", LocalStepVar)
	return append(env, s.Env...)
}

// launcherVar reports whether kv is a variable by which a launcher tells
// a process its rank: the caller's (an sbench started by srun or mpirun)
// describe another job, and the ranks must not mistake them for theirs.
func launcherVar(kv string) bool {
	name, _, _ := strings.Cut(kv, "=")
	switch name {
	case "PMI_RANK", "PMI_ID", "PMI_SIZE", "PMI_FD", "PMI_PORT", "PMI_JOBID", "MPI_LOCALRANKID", "MPI_LOCALNRANKS",
		"PMIX_RANK", "PMIX_NAMESPACE", LocalStepVar:
		return true
	}
	return strings.HasPrefix(name, "SLURM_") || strings.HasPrefix(name, "SLURMD_") || strings.HasPrefix(name, "OMPI_COMM_WORLD_")
}

// size is the number of ranks the step starts.
func (s LocalStep) size() int {
	if s.Ranks > 0 {
		return s.Ranks
	}
	return len(s.Nodes) * s.TasksPerNode
}

// tasksOn returns how many ranks each node gets under block distribution.
func (s LocalStep) tasksOn() []int {
	counts := make([]int, len(s.Nodes))
	for r := 0; r < s.size(); r++ {
		counts[r/s.TasksPerNode]++
	}
	return counts
}

// compactCounts writes per-node task counts as Slurm does: "2(x2),1".
func compactCounts(counts []int) string {
	var parts []string
	for i := 0; i < len(counts); {
		j := i
		for j+1 < len(counts) && counts[j+1] == counts[i] {
			j++
		}
		if j > i {
			parts = append(parts, fmt.Sprintf("%d(x%d)", counts[i], j-i+1))
		} else {
			parts = append(parts, strconv.Itoa(counts[i]))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}

func (s LocalStep) check() error {
	switch {
	case s.Runner == "":
		return errors.New("local step: no runner binary")
	case len(s.Nodes) == 0:
		return errors.New("local step: no nodes")
	case s.TasksPerNode < 1:
		return fmt.Errorf("local step: %d tasks per node", s.TasksPerNode)
	case s.JobID == "":
		return errors.New("local step: no job id")
	case s.Ranks < 0 || s.Ranks > len(s.Nodes)*s.TasksPerNode || (s.Ranks > 0 && s.Ranks <= (len(s.Nodes)-1)*s.TasksPerNode):
		return fmt.Errorf("local step: %d ranks do not fill %d node(s) of %d task(s) by block", s.Ranks, len(s.Nodes), s.TasksPerNode)
	}
	seen := map[string]bool{}
	for _, n := range s.Nodes {
		if n == "" || strings.ContainsAny(n, ",[] \t") || seen[n] {
			return fmt.Errorf("local step: bad or repeated node name %q", n)
		}
		seen[n] = true
	}
	return nil
}

// Run starts every rank and waits for all of them. When a rank fails, the
// others get Grace to finish (rank 0 writes its bundle), then SIGTERM, then
// SIGKILL after KillWait, like srun --kill-on-bad-exit. Cancelling ctx stops
// every rank the same way, with the signal its cause names (StopSignal).
// SIGKILL ends a rank and every process under it: the tool a rank started
// in a process group of its own would outlive it. Each rank runs in a
// process group of its own, so that a Ctrl-C at the terminal reaches
// sbench only, which stops the step in order. The error is a *StepError
// naming each failed rank and how it ended.
func (s LocalStep) Run(ctx context.Context) error {
	if err := s.check(); err != nil {
		return err
	}
	grace, killWait := s.Grace, s.KillWait
	if grace <= 0 {
		grace = 10 * time.Second
	}
	if killWait <= 0 {
		killWait = 5 * time.Second
	}
	rs, startErr := s.start(killWait)
	if startErr != nil {
		rs.stop(syscall.SIGTERM)
	}
	failed := rs.wait(ctx, grace, s.Abort)
	if startErr != nil {
		return startErr
	}
	if len(failed) == 0 {
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		return nil
	}
	slices.SortStableFunc(failed, func(a, b RankExit) int { return a.Rank - b.Rank })
	return &StepError{Failed: failed}
}

// localRanks are the processes of a LocalStep's ranks, as Run watches
// them.
type localRanks struct {
	procs   []localProc
	exits   chan RankExit
	started int
	exited  []bool
	// killed says which ranks Run ended (they did not fail by
	// themselves).
	killedMu sync.Mutex
	killed   []bool
	// killWait is how long a signalled rank has before SIGKILL;
	// killTimer, once set, fires then.
	killWait  time.Duration
	killTimer <-chan time.Time
}

type localProc struct {
	cmd  *exec.Cmd
	outs []*lineWriter
}

// start starts every rank, or as many as it can: the error says which
// could not start.
func (s LocalStep) start(killWait time.Duration) (*localRanks, error) {
	size := s.size()
	// One lock for both streams: callers pass one writer as Stdout and
	// Stderr (sbench local does), and a lock per stream would let a
	// stdout line and a stderr line write it at once.
	var mu sync.Mutex
	stdout := newLabeler(s.Stdout, &mu)
	stderr := newLabeler(s.Stderr, &mu)
	rs := &localRanks{procs: make([]localProc, size), exits: make(chan RankExit, size),
		exited: make([]bool, size), killed: make([]bool, size), killWait: killWait}
	env := s.newStepEnv()
	for r := 0; r < size; r++ {
		cmd := exec.Command(s.Runner, s.Args...)
		cmd.Env = env.rank(r)
		cmd.Dir = s.Dir
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		o, e := stdout.writer(r), stderr.writer(r)
		cmd.Stdout, cmd.Stderr = o, e
		// The pipes' copying goroutines must not outlive a killed rank for
		// long if it left a child holding them.
		cmd.WaitDelay = killWait
		if err := cmd.Start(); err != nil {
			return rs, fmt.Errorf("local step: start rank %d: %w", r, err)
		}
		rs.procs[r] = localProc{cmd: cmd, outs: []*lineWriter{o, e}}
		rs.started++
		go func(r int, cmd *exec.Cmd) {
			err := cmd.Wait()
			rs.exits <- RankExit{Rank: r, Node: s.Nodes[r/s.TasksPerNode], Err: err}
		}(r, cmd)
	}
	return rs, nil
}

// kill ends every rank still running, and what it started.
func (rs *localRanks) kill() {
	for r := 0; r < rs.started; r++ {
		if !rs.exited[r] {
			killTree(rs.procs[r].cmd.Process)
		}
	}
}

// stop signals every rank still running: sig, then SIGKILL.
func (rs *localRanks) stop(sig syscall.Signal) {
	if rs.killTimer != nil {
		return
	}
	for r := 0; r < rs.started; r++ {
		rs.killedMu.Lock()
		rs.killed[r] = true
		rs.killedMu.Unlock()
		if !rs.exited[r] {
			rs.procs[r].cmd.Process.Signal(sig)
		}
	}
	rs.killTimer = time.After(rs.killWait)
}

// killRunning marks every rank still running as ended by Run.
func (rs *localRanks) killRunning() {
	rs.killedMu.Lock()
	defer rs.killedMu.Unlock()
	for r := range rs.killed {
		rs.killed[r] = rs.killed[r] || !rs.exited[r]
	}
}

// wait waits for every started rank and returns those that failed. A
// rank that fails by itself gives the others grace, then stop; ctx's end
// stops them with the signal its cause names; abort kills them.
func (rs *localRanks) wait(ctx context.Context, grace time.Duration, abort <-chan struct{}) []RankExit {
	var failed []RankExit
	var graceTimer <-chan time.Time
	ctxDone := ctx.Done()
	for n := 0; n < rs.started; {
		select {
		case e := <-rs.exits:
			n++
			rs.exited[e.Rank] = true
			for _, w := range rs.procs[e.Rank].outs {
				w.flush()
			}
			if e.Err == nil {
				continue
			}
			rs.killedMu.Lock()
			e.Killed = rs.killed[e.Rank]
			rs.killedMu.Unlock()
			failed = append(failed, e)
			if graceTimer == nil && !e.Killed {
				graceTimer = time.After(grace)
			}
		case <-graceTimer:
			graceTimer = nil
			rs.killRunning()
			rs.stop(syscall.SIGTERM)
		case <-ctxDone:
			ctxDone = nil
			rs.stop(stopSignal(ctx))
		case <-rs.killTimer:
			rs.kill()
		case <-abort:
			abort = nil
			rs.killRunning()
			rs.kill()
		}
	}
	return failed
}

// labeler prefixes every line of each rank's output with "RANK: " and
// keeps lines of different ranks whole on the shared writer: a line is
// written in one call, under mu, which every labeler of a step shares.
type labeler struct {
	mu *sync.Mutex
	w  io.Writer
}

func newLabeler(w io.Writer, mu *sync.Mutex) *labeler {
	if w == nil {
		w = io.Discard
	}
	return &labeler{w: w, mu: mu}
}

func (l *labeler) writer(rank int) *lineWriter {
	return &lineWriter{l: l, prefix: []byte(strconv.Itoa(rank) + ": ")}
}

type lineWriter struct {
	l      *labeler
	prefix []byte
	mu     sync.Mutex
	buf    []byte
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			break
		}
		w.emit(w.buf[:i+1])
		w.buf = w.buf[i+1:]
	}
	// A rank printing megabytes without a newline is still shown.
	if len(w.buf) > 64<<10 {
		w.emit(append(w.buf, '\n'))
		w.buf = nil
	}
	return len(p), nil
}

// flush writes a last line that had no newline.
func (w *lineWriter) flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.buf) > 0 {
		w.emit(append(w.buf, '\n'))
		w.buf = nil
	}
}

func (w *lineWriter) emit(line []byte) {
	w.l.mu.Lock()
	defer w.l.mu.Unlock()
	w.l.w.Write(append(append([]byte(nil), w.prefix...), line...))
}

// LauncherStep runs one step through an MPI launcher on this host
// (sbench local with launcher mpirun or mpiexec): the launcher starts the
// runner's ranks itself, as the job script's launch line does.
type LauncherStep struct {
	// Argv is the whole command line: the launcher, its options, the
	// runner and the runner's arguments.
	Argv []string
	// Runner is the runner's binary: its processes under the launcher
	// are the step's ranks.
	Runner string
	// Env is the launcher's whole environment (see LocalEnv).
	Env []string
	// Dir is the launcher's working directory; empty for the caller's.
	Dir string
	// Stdout and Stderr receive what the launcher and the ranks print.
	Stdout, Stderr io.Writer
	// KillWait is how long the ranks have, once told to stop, before
	// SIGKILL ends the launcher and everything under it; default 5s.
	KillWait time.Duration
	// Abort, once closed, kills the launcher and everything under it at
	// once, with SIGKILL.
	Abort <-chan struct{}
}

// Run starts the launcher and waits for it. Cancelling ctx tells the
// ranks to stop, with the signal its cause names (StopSignal, else
// SIGTERM): the ranks themselves, not the launcher, which would kill them
// before rank 0 writes its bundle (Open MPI's mpirun sends SIGTERM, then
// SIGKILL a moment later). Before any rank has started, the launcher gets
// the signal. KillWait later, SIGKILL ends everything still running. The
// launcher runs in a process group of its own, so that a Ctrl-C at the
// terminal reaches sbench only.
func (s LauncherStep) Run(ctx context.Context) error {
	if len(s.Argv) == 0 || s.Runner == "" {
		return errors.New("launcher step: no command or no runner")
	}
	killWait := s.KillWait
	if killWait <= 0 {
		killWait = 5 * time.Second
	}
	cmd := exec.Command(s.Argv[0], s.Argv[1:]...)
	cmd.Env, cmd.Dir = s.Env, s.Dir
	cmd.Stdout, cmd.Stderr = s.Stdout, s.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// The pipes' copying goroutines must not wait for a process the
	// launcher left behind holding them.
	cmd.WaitDelay = killWait
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("launcher step: %w", err)
	}
	pid := cmd.Process.Pid
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	ctxDone, abort := ctx.Done(), s.Abort
	var killTimer <-chan time.Time
	for {
		select {
		case err := <-done:
			if err == nil && ctx.Err() != nil {
				return context.Cause(ctx)
			}
			return err
		case <-ctxDone:
			ctxDone = nil
			sig := stopSignal(ctx)
			if signalRunners(pid, s.Runner, sig) == 0 {
				syscall.Kill(-pid, sig)
			}
			killTimer = time.After(killWait)
		case <-killTimer:
			killTimer = nil
			killTree(cmd.Process)
		case <-abort:
			abort = nil
			killTree(cmd.Process)
		}
	}
}

// LocalEnv is the environment of a step sbench local starts through an
// MPI launcher: the caller's, less the variables by which a launcher tells
// a process its rank (an sbench local run inside a Slurm allocation would
// otherwise have mpirun start its ranks on the allocation's nodes), then
// extra.
func LocalEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !launcherVar(kv) {
			env = append(env, kv)
		}
	}
	return append(env, extra...)
}
