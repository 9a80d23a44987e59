//go:debug netdns=go

// Command sbench-runner is started by srun on every rank of a job step (or
// by `sbench local`). It meets the step's other ranks over TCP, runs a
// native kernel between ranks 0 and 1, and rank 0 writes the result bundle.
// It is built with CGO_ENABLED=0: one static file to copy to compute nodes.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
	"time"

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
			name := "SIGTERM"
			if sig == syscall.SIGINT {
				name = "SIGINT"
			}
			cancel(fmt.Errorf("interrupted by %s (a time limit, scancel or Ctrl-C)", name))
		case <-ctx.Done():
		}
	}()
	return ctx, func() { signal.Stop(ch); cancel(nil) }
}

const mainUsage = `sbench-runner runs one rank of an sbench benchmark step.

It is started by srun on every rank of a job step (or by 'sbench local'),
meets the other ranks over TCP, runs a native kernel between ranks 0 and 1,
and rank 0 writes the result bundle <results>/<jobid>.<step>.<benchmark>.json
and prints its path.

Usage:
  sbench-runner run --campaign NAME --variant NAME --benchmark NAME --kernel latency|bw [flags]
  sbench-runner version
  sbench-runner --help | run --help

Examples:
  srun sbench-runner run --campaign fabric --variant ib --benchmark pingpong \
      --kernel latency --param sizes=1-4194304 --results $SBENCH_RESULTS_DIR
  sbench-runner version

Exit statuses:
  0  the run succeeded (on rank 0: the bundle says ok)
  1  the run failed (rank 0 still writes a bundle with status failed)
  2  bad command line, or not started by srun or sbench local
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

const runUsage = `Usage: sbench-runner run --campaign NAME --variant NAME --benchmark NAME --kernel latency|bw [flags]

Runs one rank of a job step. Slurm's SLURM_* variables say which rank; the
step's ranks must share --rundir (on a shared file system) and SBENCH_TOKEN.

Flags:
%s
Kernel parameters (--param):
  sizes=MIN-MAX     message sizes doubling from MIN to MAX, as OSU (0 is followed by 1);
  sizes=A,B,C       or a list; K, M, G suffixes are binary (default 1-4194304)
  iterations=N      timed repetitions per size (latency: iterations, bw: windows)
  warmup=N          untimed repetitions first
  window=N          bw only: messages per window (default 64)
  Defaults follow OSU's scaling: latency 1000 iterations + 100 warm-up up to 8 KiB,
  100 + 10 above; bw 100 windows + 10 up to 8 KiB, 20 + 2 above, fewer for large
  messages so that one size moves at most 512 MiB.

Environment:
  SBENCH_TOKEN               shared secret authenticating every connection (never put it in argv)
  SBENCH_RESULTS_DIR, SBENCH_RUN_DIR, SBENCH_BIND, SBENCH_BOOTSTRAP_TIMEOUT, SBENCH_TIMEOUT
                             defaults of the flags of the same name

Examples:
  # one-way latency from 1 B to 4 MiB between ranks 0 and 1
  srun -N2 -n2 sbench-runner run --campaign fabric --variant ib --benchmark pingpong \
      --kernel latency --vparam transport=ib --label site=lab
  # bandwidth for a few sizes, 128 messages per window
  srun -N2 -n2 sbench-runner run --campaign fabric --variant ib --benchmark stream \
      --kernel bw --param sizes=4K,64K,1M --param window=128 --results /scratch/results

Exit statuses:
  0  the run succeeded
  1  the run failed (rank 0 still writes a bundle with status failed and the reason)
  2  bad command line, or not started by srun or sbench local
`

// kvFlag collects repeated key=value flags.
type kvFlag struct {
	m map[string]string
}

func (f *kvFlag) String() string { return "" }

func (f *kvFlag) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	k = strings.TrimSpace(k)
	if !ok || k == "" {
		return fmt.Errorf("%q is not key=value", s)
	}
	if _, dup := f.m[k]; dup {
		return fmt.Errorf("%s given twice", k)
	}
	if f.m == nil {
		f.m = map[string]string{}
	}
	f.m[k] = v
	return nil
}

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

func runRun(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	bootDef, err := durationFromEnv("SBENCH_BOOTSTRAP_TIMEOUT", runner.DefaultBootstrapTimeout)
	if err != nil {
		return err
	}
	timeoutDef, err := durationFromEnv("SBENCH_TIMEOUT", runner.DefaultTimeout)
	if err != nil {
		return err
	}
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var (
		campaign  = fs.String("campaign", "", "campaign `name` (required)")
		variant   = fs.String("variant", "", "variant `name` (required)")
		benchmark = fs.String("benchmark", "", "benchmark `name`, used in the bundle's file name (required)")
		kernel    = fs.String("kernel", "", "native `kernel`: latency or bw (required)")
		resultsD  = fs.String("results", envOr("SBENCH_RESULTS_DIR", "."), "`dir` where rank 0 writes the bundle ($SBENCH_RESULTS_DIR)")
		rundir    = fs.String("rundir", os.Getenv("SBENCH_RUN_DIR"), "shared `dir` for the rendezvous file ($SBENCH_RUN_DIR, else RESULTS/.rendezvous)")
		bootTO    = fs.Duration("bootstrap-timeout", bootDef, "how long ranks wait for each other, a `duration` such as 90s ($SBENCH_BOOTSTRAP_TIMEOUT)")
		timeout   = fs.Duration("timeout", timeoutDef, "deadline of the whole run, a `duration` such as 2h ($SBENCH_TIMEOUT)")
		bind      = fs.String("bind", os.Getenv("SBENCH_BIND"), "`IP` to listen on and advertise ($SBENCH_BIND; default all interfaces)")
	)
	params, vparams, labels := &kvFlag{}, &kvFlag{}, &kvFlag{}
	fs.Var(params, "param", "kernel parameter `key=value` (repeatable)")
	fs.Var(vparams, "vparam", "the variant's sweep parameter `key=value`, copied to the bundle (repeatable)")
	fs.Var(labels, "label", "label `key=value`, copied to the bundle (repeatable)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(stdout, runUsage, flagDefaults(fs))
			return err
		}
		return usageError{err}
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	var missing []string
	for _, f := range []struct{ name, val string }{
		{"--campaign", *campaign}, {"--variant", *variant}, {"--benchmark", *benchmark}, {"--kernel", *kernel},
	} {
		if strings.TrimSpace(f.val) == "" {
			missing = append(missing, f.name)
		}
	}
	if len(missing) > 0 {
		return usagef("missing %s", strings.Join(missing, ", "))
	}
	if err := runner.CheckBenchmarkName(*benchmark); err != nil {
		return usageError{err}
	}
	kp, err := runner.ParseKernelParams(*kernel, params.m)
	if err != nil {
		return usageError{err}
	}
	if *bootTO <= 0 || *timeout < 0 {
		return usagef("timeouts must be positive")
	}
	id, err := runner.IdentityFromEnv(os.Getenv)
	if err != nil {
		return usagef("not started by srun or sbench local: %v", err)
	}
	cfg := runner.Config{
		Campaign: *campaign, Variant: *variant, Benchmark: *benchmark, Kernel: kp,
		Params: vparams.m, Labels: labels.m,
		ResultsDir: *resultsD, RunDir: *rundir, Bind: *bind,
		BootstrapTimeout: *bootTO, Timeout: *timeout,
		Token:    []byte(os.Getenv("SBENCH_TOKEN")),
		Identity: id,
		Command:  append([]string{"sbench-runner", "run"}, args...),
		Getenv:   os.Getenv,
		Stdout:   stdout, Stderr: stderr,
	}
	_, err = runner.Run(ctx, cfg)
	return err
}

// flagDefaults lists the flags in a stable order, for the help text.
func flagDefaults(fs *flag.FlagSet) string {
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		f := fs.Lookup(n)
		kind, usage := flag.UnquoteUsage(f)
		line := "  --" + n
		if kind != "" {
			line += " " + kind
		}
		fmt.Fprintf(&b, "%-30s %s", line, usage)
		if f.DefValue != "" && f.DefValue != "0s" && kind != "key=value" {
			fmt.Fprintf(&b, " (default %s)", f.DefValue)
		}
		b.WriteString("\n")
	}
	return b.String()
}
