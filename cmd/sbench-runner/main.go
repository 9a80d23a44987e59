// Command sbench-runner is started on every rank of a job step by srun,
// mpirun or `sbench local`. It meets the step's other ranks over TCP, runs
// a native kernel between ranks 0 and 1 or wraps a real tool, and rank 0
// writes the result bundles.
// It imports nothing with C code: built as the Makefile does
// (CGO_ENABLED=0, tags netgo and osusergo), it is one static file to copy
// to compute nodes. A plain `go build` with cgo on links it statically too
// (static_cgo.go), and it always resolves names with Go's own resolver.
//
//go:debug netdns=go
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/sbench/sbench/kernels"
	"github.com/sbench/sbench/runargs"
	"github.com/sbench/sbench/runner"
)

func main() {
	ctx, stop := signalContext(context.Background())
	err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(exitCode(err, os.Stderr))
}

// Exit statuses.
const (
	exitOK     = 0
	exitFailed = 1
	exitUsage  = 2
)

// usageError is a bad command line or environment: exit status 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}

// exitCode reports err on stderr and maps it to the exit status.
func exitCode(err error, stderr io.Writer) int {
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	fmt.Fprintf(stderr, "sbench-runner: %v\n", err)
	var u usageError
	if errors.As(err, &u) {
		fmt.Fprintln(stderr, "Run 'sbench-runner --help' for usage.")
		return exitUsage
	}
	return exitFailed
}

// signalContext is cancelled by the first SIGINT or SIGTERM (Slurm's time
// limit sends SIGTERM, then SIGKILL after KillWait), with the signal as the
// cause, so rank 0 can still write a failed bundle that says why. A second
// signal kills the process as usual.
func signalContext(parent context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(parent)
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		select {
		case sig := <-ch:
			signal.Stop(ch)
			cancel(interruptCause(sig))
		case <-ctx.Done():
		}
	}()
	return ctx, func() { signal.Stop(ch); cancel(nil) }
}

// interruptCause says what a signal that stopped the run means. SIGINT is
// a Ctrl-C (sbench local passes its own on to the ranks as SIGINT);
// Slurm's time limit and scancel send SIGTERM.
func interruptCause(sig os.Signal) error {
	if sig == syscall.SIGINT {
		return errors.New("interrupted by Ctrl-C (SIGINT)")
	}
	return errors.New("interrupted by SIGTERM (a time limit, scancel or Ctrl-C)")
}

const mainUsage = `sbench-runner runs one rank of an sbench benchmark step.

It is started on every rank of a job step by srun, mpirun or 'sbench local',
meets the other ranks over TCP, runs a native kernel between ranks 0 and 1 or
wraps a real tool (--kernel exec), and rank 0 writes the result bundle
<results>/<jobid>.<step>.<benchmark>.json and prints its path. Attempt k of
a job Slurm requeued (SLURM_RESTART_COUNT=k) writes
<results>/<jobid>.r<k>.<step>.<benchmark>.json instead, never over an
earlier attempt's.

Usage:
  sbench-runner run --campaign NAME --variant NAME --benchmark NAME --kernel KERNEL [flags]
  sbench-runner version
  sbench-runner --help | run --help

Examples:
  srun sbench-runner run --campaign fabric --variant ib --benchmark pingpong \
      --kernel latency --param sizes=1-4194304 --results $SBENCH_RESULTS_DIR
  srun --mpi=pmix sbench-runner run --campaign fabric --variant ib --benchmark osu_bw \
      --kernel exec --exec '["osu_bw","-m","1:4194304"]' --parser osu
  sbench-runner version

Exit statuses:
  0  the run completed (on rank 0: the bundles say ok, or invalid when a check failed)
  1  the run failed (rank 0 still writes a bundle with status failed)
  2  bad command line, or not started by srun, mpirun or sbench local
`

// run is the whole command, minus the process: main only maps its error.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		io.WriteString(stderr, mainUsage)
		return usagef("no command given")
	}
	switch args[0] {
	case "run":
		return runRun(ctx, args[1:], stdout, stderr)
	case "version", "--version", "-version":
		fmt.Fprintf(stdout, "sbench-runner %s\n", runner.Version)
		return nil
	case "help", "--help", "-help", "-h", "--h":
		io.WriteString(stdout, mainUsage)
		return nil
	}
	return usagef("unknown command %q", args[0])
}

const runUsage = `Usage: sbench-runner run --campaign NAME --variant NAME --benchmark NAME --kernel KERNEL [flags]

Runs one rank of a job step. The launcher's variables say which rank: Open
MPI's mpirun (OMPI_COMM_WORLD_*), MPICH/Intel MPI's Hydra (PMI_RANK,
PMI_SIZE), else srun (SLURM_*). The step's ranks must share --rundir (on a
shared file system) and SBENCH_TOKEN.

Kernels (--kernel; their parameters, with defaults in brackets):
%s  exec         wrap a real tool (see below)

Flags:
%s
Kernel parameters (--param NAME=VALUE, native kernels; the values a parameter
takes, the kernels that take it, what it does):
%s  Sizes are bytes with an optional unit: 4096, 4K, 4KiB, 1.5MiB (K = KiB = 1024;
  KB = 1000). A list mixes sizes and MIN-MAX ranges: 1-4MiB, 1,8,64, 0,64K-1M.
  Defaults follow OSU's scaling: latency 1000 iterations + 100 warm-up up to 8 KiB,
  100 + 10 above; bw 100 windows + 10 up to 8 KiB, 20 + 2 above, fewer for large
  messages so that one size moves at most 512 MiB.

The exec kernel (--kernel exec):
  Every rank joins the bootstrap; rank 0 creates --workdir and writes the --file
  inputs; the other ranks start their commands there; after --start-delay rank 0
  starts its own. When it ends, the commands still running elsewhere (servers)
  get 1s to end, then SIGTERM, then SIGKILL. Rank 0's standard output (or the
  --output file) is parsed, and each run found becomes one bundle; the k-th
  after the first is named <jobid>.<step>.<benchmark>-<k>.json. A command that
  exits non-zero on any rank fails the run, naming the rank and its last
  standard error line. Commands inherit the environment, so an MPI program
  started this way under srun --mpi=pmix or mpirun finds its launcher.
  Placeholders, expanded in every argument (never by a shell):
    {rank} {size}     this rank, the number of ranks
    {host:N}          the IP address rank N advertised
    {node:N}          rank N's node name (Slurm's, or its hostname under mpirun)
    {hostname:N}      rank N's hostname
    {workdir}         the work directory
    {{                a literal '{'

Placement (--plan-nodes N --plan-ppn K, as sbench's scripts pass them): rank 0
compares where the ranks ran (the node of each, as the bootstrap met them:
Slurm's node name under srun, the hostname under mpirun) with the plan. A run
on another number of nodes, or with more than K ranks on a node, is measured
and written invalid, both placements in its reason: "placement: planned 2
nodes × 1 rank; ran on 1 node: n1 ranks 0,1". The tool the exec kernel wraps
runs beside each rank, so it ran where the ranks did.

Checks (--check, every kernel): METRIC[@X](>=|<=|>|<)VALUE, on the samples of
METRIC at x = X (a size: 4M = 4MiB = 4194304), or without @X on the scalar
METRIC (or the samples of METRIC without x). A failed check makes the bundle
invalid.

Environment:
  SBENCH_TOKEN               shared secret authenticating every connection (never put it in argv)
  SBENCH_RESULTS_DIR, SBENCH_RUN_DIR, SBENCH_BIND, SBENCH_BOOTSTRAP_TIMEOUT, SBENCH_TIMEOUT
                             defaults of the flags of the same name
  SLURM_RESTART_COUNT        set by Slurm in a requeued job; attempt k (k >= 1) adds .r<k>
                             after the job id in bundle names and to the session

Examples:
  # one-way latency from 1 B to 4 MiB between ranks 0 and 1
  srun -N2 -n2 sbench-runner run --campaign fabric --variant ib --benchmark pingpong \
      --kernel latency --vparam transport=ib --label site=lab
  # bandwidth for a few sizes, 128 messages per window, with a floor at 1 MiB
  srun -N2 -n2 sbench-runner run --campaign fabric --variant ib --benchmark stream \
      --kernel bw --param sizes=4K,64K,1M --param window=128 --check 'bandwidth@1M>=1000'
  # iperf3: a server on rank 1, the client on rank 0 half a second later
  srun -N2 -n2 sbench-runner run --campaign fabric --variant tcp --benchmark iperf3 \
      --kernel exec --exec-rank '1=["iperf3","-s","-1","-p","5201"]' \
      --exec-rank '0=["iperf3","-c","{host:1}","-p","5201","--json"]' --start-delay 500ms
  # NetPIPE over MPI under mpirun, in the second step of a batch job
  mpirun -np 2 sbench-runner run --campaign fabric --variant mpi --benchmark netpipe \
      --kernel exec --exec '["NPopenmpi","-u","4194304"]' --parser netpipe --output np.out \
      --session "$SLURM_JOB_ID.1" --step 1 --repeat 0

Exit statuses:
  0  the run completed (the bundles say ok, or invalid when a check failed)
  1  the run failed (rank 0 still writes a bundle with status failed and the reason)
  2  bad command line, or not started by srun, mpirun or sbench local
`

// durationFromEnv returns the value of env, or def when it is unset.
func durationFromEnv(env string, def time.Duration) (time.Duration, error) {
	v := strings.TrimSpace(os.Getenv(env))
	if v == "" {
		return def, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, usagef("%s=%q is not a positive duration such as 90s", env, v)
	}
	return d, nil
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// defaults are the flags' defaults, from the environment.
func defaults() (runargs.Args, error) {
	boot, err := durationFromEnv("SBENCH_BOOTSTRAP_TIMEOUT", runner.DefaultBootstrapTimeout)
	if err != nil {
		return runargs.Args{}, err
	}
	timeout, err := durationFromEnv("SBENCH_TIMEOUT", runner.DefaultTimeout)
	if err != nil {
		return runargs.Args{}, err
	}
	return runargs.Args{
		Results: envOr("SBENCH_RESULTS_DIR", "."), RunDir: os.Getenv("SBENCH_RUN_DIR"), Bind: os.Getenv("SBENCH_BIND"),
		BootstrapTimeout: runargs.Duration{D: boot}, Timeout: runargs.Duration{D: timeout}, Parser: "auto",
	}, nil
}

func runRun(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	defs, err := defaults()
	if err != nil {
		return err
	}
	a, err := runargs.Parse(args, defs)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprintf(stdout, runUsage, kernelsHelp(), flagDefaults(defs.FlagSet()), paramsHelp())
		return err
	}
	if err != nil {
		return usageError{err}
	}
	cfg, err := config(a)
	if err != nil {
		return usageError{err}
	}
	id, err := runner.IdentityFromEnv(os.Getenv)
	if errors.Is(err, runner.ErrRestartCount) {
		return usageError{err}
	}
	if err != nil {
		return usagef("not started by srun, mpirun or sbench local: %v", err)
	}
	id.SessionID = a.Session
	if a.Step != "" {
		id.StepID = a.Step
	}
	cfg.Identity = id
	cfg.Token = []byte(os.Getenv("SBENCH_TOKEN"))
	cfg.Command = append([]string{"sbench-runner", "run"}, args...)
	cfg.Getenv, cfg.Stdout, cfg.Stderr = os.Getenv, stdout, stderr
	if err := cfg.Validate(); err != nil {
		return usageError{err}
	}
	_, err = runner.Run(ctx, cfg)
	return err
}

// config is the run the arguments describe, before the environment says
// which rank this is.
func config(a runargs.Args) (runner.Config, error) {
	if err := runner.CheckBenchmarkName(a.Benchmark); err != nil {
		return runner.Config{}, err
	}
	kp, err := runner.ParseKernelParams(a.Kernel, runargs.Map(a.Params))
	if err != nil {
		return runner.Config{}, err
	}
	var checks []runner.CheckSpec
	for _, s := range a.Checks {
		c, err := runner.ParseCheck(s)
		if err != nil {
			return runner.Config{}, err
		}
		checks = append(checks, c)
	}
	var plan runner.Placement
	if a.PlanNodes != nil {
		plan = runner.Placement{Nodes: *a.PlanNodes, PerNode: *a.PlanPPN}
	}
	var exec *runner.Exec
	if a.Kernel == runner.ExecKernel {
		exec = &runner.Exec{Argv: a.Exec, RankArgv: a.ExecRank, Parser: a.Parser, Output: a.Output, WorkDir: a.WorkDir, Files: a.Files, StartDelay: a.StartDelay.D, Extract: a.Extract}
	}
	return runner.Config{
		Campaign: a.Campaign, Variant: a.Variant, Benchmark: a.Benchmark, Kernel: kp, Exec: exec,
		Checks: checks, Repeat: a.Repeat, Plan: plan,
		Params: runargs.Map(a.VParams), Labels: runargs.Map(a.Labels),
		ResultsDir: a.Results, RunDir: a.RunDir, Bind: a.Bind, Interface: a.Interface,
		BootstrapTimeout: a.BootstrapTimeout.D, Timeout: a.Timeout.D,
	}, nil
}

// flagDefaults lists the flags in lexicographical order (VisitAll's), for
// the help text.
func flagDefaults(fs *flag.FlagSet) string {
	var b strings.Builder
	fs.VisitAll(func(f *flag.Flag) {
		kind, usage := flag.UnquoteUsage(f)
		line := "  --" + f.Name
		if kind != "" {
			line += " " + kind
		}
		fmt.Fprintf(&b, "%-30s %s", line, usage)
		if f.DefValue != "" && f.DefValue != "0s" && kind != "key=value" {
			fmt.Fprintf(&b, " (default %s)", f.DefValue)
		}
		b.WriteString("\n")
	})
	return b.String()
}

// kernelParams lists a kernel's parameters as its help shows them, each
// with its default in brackets.
func kernelParams(k kernels.Kernel) string {
	var ps []string
	for _, p := range k.Params {
		if p.Default != "" {
			ps = append(ps, p.Name+" ["+p.Default+"]")
		} else {
			ps = append(ps, p.Name)
		}
	}
	return strings.Join(ps, ", ")
}

// kernelsHelp lists the native kernels from package kernels' table: what
// each measures, and its parameters.
func kernelsHelp() string {
	var b strings.Builder
	for _, k := range kernels.All() {
		text := k.Measures + "; " + kernelParams(k)
		if k.MinRanks > 1 {
			text += fmt.Sprintf("; %d ranks or more", k.MinRanks)
		}
		b.WriteString(hangingIndent(fmt.Sprintf("  %-12s ", k.Name), text, 80))
	}
	return b.String()
}

// paramsHelp lists the native kernels' parameters from package kernels'
// table.
func paramsHelp() string {
	var b strings.Builder
	docs := kernels.ParamDocs()
	width := 0
	for _, p := range docs {
		width = max(width, len(p.Name))
	}
	for _, p := range docs {
		b.WriteString(hangingIndent(fmt.Sprintf("  %-*s ", width, p.Name), p.Value+"; "+strings.Join(p.Kernels, ", ")+": "+p.Doc, 80))
	}
	return b.String()
}

// hangingIndent writes head and then text, wrapped at width, its lines
// after the first indented as far as head.
func hangingIndent(head, text string, width int) string {
	var b strings.Builder
	indent := strings.Repeat(" ", len([]rune(head)))
	line := head
	for i, w := range strings.Fields(text) {
		if i > 0 && len([]rune(line))+1+len([]rune(w)) > width {
			b.WriteString(line + "\n")
			line = indent + w
			continue
		}
		if i > 0 {
			line += " "
		}
		line += w
	}
	b.WriteString(line + "\n")
	return b.String()
}
