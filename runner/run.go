package runner

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sbench/sbench/kernels"
	"github.com/sbench/sbench/parsers"
	"github.com/sbench/sbench/results"
)

// Version is the runner's version, recorded in every bundle. Set it with
// -ldflags "-X github.com/sbench/sbench/runner.Version=v1.2.3".
var Version = "dev"

// Defaults of Config's durations.
const (
	DefaultBootstrapTimeout = 60 * time.Second
	DefaultTimeout          = 30 * time.Minute
	DefaultIOTimeout        = 2 * time.Minute
)

// Config is one rank's run, as the command line and environment give it.
type Config struct {
	Campaign  string
	Variant   string
	Benchmark string
	// Kernel is the native kernel and its parameters, or Kernel.Kernel is
	// ExecKernel and Exec says what to run.
	Kernel KernelParams
	Exec   *Exec
	// Checks are judged on every bundle of the run (--check).
	Checks []CheckSpec
	// Repeat is the repetition index of this run (--repeat), recorded in
	// Params["repeat"] and every sample; nil when not repeated.
	Repeat *int
	// Plan is how the launch was meant to place the ranks (--plan-nodes,
	// --plan-ppn); rank 0 makes a run that ran otherwise invalid. Zero
	// when nobody said (a runner started by hand).
	Plan Placement
	// Params are the variant's sweep parameters, Labels the run's labels;
	// both are copied into the bundle.
	Params map[string]string
	Labels map[string]string

	// ResultsDir is where rank 0 writes the bundle; RunDir where it
	// publishes its address (shared by the step's nodes).
	ResultsDir string
	RunDir     string
	// Bind is the IP address to listen on and advertise; empty for all
	// interfaces.
	Bind string
	// Interface names the network interface (ib0 …) whose address this
	// rank listens on and advertises, found on its own node: what one
	// Bind cannot say for several nodes. At most one of Bind and
	// Interface.
	Interface string

	BootstrapTimeout time.Duration
	// Timeout bounds the whole run; zero for none.
	Timeout time.Duration
	// IOTimeout bounds how long one kernel step may make no progress before
	// the peer is given up for dead.
	IOTimeout time.Duration

	// Token authenticates every connection (SBENCH_TOKEN). Empty: derived
	// from the job step, with a warning.
	Token    []byte
	Identity Identity
	// Command is the runner's command line, recorded in the bundle of a
	// native kernel (the exec kernel records the tool's).
	Command []string

	// Root is where provenance is read from ("/" unless testing).
	Root   string
	Getenv func(string) string

	Stdout io.Writer
	Stderr io.Writer

	hooks *testHooks
}

// CheckBenchmarkName refuses names that are unsafe in a file name.
func CheckBenchmarkName(name string) error {
	if !safeFileName(name, 128) {
		return fmt.Errorf("benchmark name %q: use 1 to 128 letters, digits, '_', '-', '+' or '.', starting with a letter or digit", name)
	}
	return nil
}

// BundlePath is where rank 0 writes the bundle of a run:
// <results>/<jobid>[_<task>].<step>.<benchmark>.json. A tool that prints
// several runs gets one bundle each: the first at BundlePath, the k-th
// (from 1) with "-k" after the benchmark name.
//
// A job Slurm requeued reruns its steps: attempt k ≥ 1 (SLURM_RESTART_COUNT)
// puts ".r<k>" right after the job part,
// <jobid>[_<task>].r<k>.<step>.<benchmark>[-k].json, so that it never
// overwrites an earlier attempt's bundles and "<jobid>.*.json" still finds
// every attempt. The first attempt's names are as they always were.
func BundlePath(resultsDir string, id Identity, benchmark string) string {
	return bundlePath(resultsDir, id, benchmark, 0)
}

func bundlePath(resultsDir string, id Identity, benchmark string, k int) string {
	name := id.fileStem() + "." + benchmark
	if k > 0 {
		name += "-" + strconv.Itoa(k)
	}
	return filepath.Join(resultsDir, name+".json")
}

// DerivedToken is the token ranks agree on when SBENCH_TOKEN is unset. It
// keeps steps apart; it is no secret.
func DerivedToken(id Identity) []byte {
	sum := sha256.Sum256([]byte("sbench-runner derived token\x00" + id.Session()))
	return []byte(hex.EncodeToString(sum[:]))
}

// digest summarises what the ranks must agree on to measure together,
// the runner's version included: the wire protocol is not versioned beyond
// the handshake, and one binary is copied to every node anyway.
func (cfg *Config) digest() string {
	k := cfg.Kernel
	h := sha256.New()
	fmt.Fprintf(h, "%s %q %q %q %s sizes=%v iterations=%d warmup=%d window=%d checks=%v",
		Version, cfg.Campaign, cfg.Variant, cfg.Benchmark, k.Kernel, k.Sizes, k.Iterations, k.Warmup, k.Window, cfg.Checks)
	if cfg.Repeat != nil {
		fmt.Fprintf(h, " repeat=%d", *cfg.Repeat)
	}
	if k.Placement != "" || k.LatencySize != 0 || k.BandwidthSize != 0 || k.ArraySize != 0 {
		// kernel_*.go: ranks that pair up differently would wait for each other
		fmt.Fprintf(h, " placement=%s latency_size=%d bandwidth_size=%d array_size=%d", k.Placement, k.LatencySize, k.BandwidthSize, k.ArraySize)
	}
	if e := cfg.Exec; e != nil {
		fmt.Fprintf(h, " exec=%q parser=%q output=%q workdir=%q delay=%s", e.Argv, e.Parser, e.Output, e.WorkDir, e.StartDelay)
		for _, r := range slices.Sorted(maps.Keys(e.RankArgv)) {
			fmt.Fprintf(h, " rank%d=%q", r, e.RankArgv[r])
		}
		for _, n := range slices.Sorted(maps.Keys(e.Files)) {
			fmt.Fprintf(h, " file %q %x", n, sha256.Sum256(e.Files[n]))
		}
	}
	return hex.EncodeToString(h.Sum(nil)[:8])
}

// Validate checks the configuration before anything runs: names, kernel,
// the exec kernel's commands and placeholders against the step's size,
// the identity. Run calls it too.
func (cfg *Config) Validate() error {
	if err := CheckBenchmarkName(cfg.Benchmark); err != nil {
		return err
	}
	if cfg.Identity.Size < 1 || cfg.Identity.Rank < 0 || cfg.Identity.Rank >= cfg.Identity.Size {
		return fmt.Errorf("rank %d of %d", cfg.Identity.Rank, cfg.Identity.Size)
	}
	if _, err := cfg.bindAddr(); err != nil {
		return err
	}
	if cfg.Repeat != nil && *cfg.Repeat < 0 {
		return fmt.Errorf("repeat %d is negative", *cfg.Repeat)
	}
	if err := cfg.Plan.check(); err != nil {
		return err
	}
	switch _, native := kernels.Lookup(cfg.Kernel.Kernel); {
	case cfg.Kernel.Kernel == ExecKernel:
		if cfg.Exec == nil {
			return errors.New("the exec kernel needs a command: --exec or --exec-rank")
		}
		if err := cfg.Exec.check(cfg.Identity.Size); err != nil {
			return err
		}
	case !native:
		return fmt.Errorf("unknown kernel %q", cfg.Kernel.Kernel)
	case len(cfg.Kernel.Sizes) == 0:
		return errors.New("no message sizes")
	case cfg.Exec != nil:
		return fmt.Errorf("the %s kernel runs no command; --exec is for the exec kernel", cfg.Kernel.Kernel)
	}
	return cfg.Identity.Validate()
}

// Run runs this rank's part of the step. Rank 0 writes the bundles, for a
// failed run too, prints their paths on Stdout and returns the first; a
// run that failed returns that path and the error. A rank's own error is
// one line that names the rank and node at fault.
func Run(ctx context.Context, cfg Config) (string, error) {
	start := time.Now()
	if err := cfg.Validate(); err != nil {
		return "", err
	}
	cfg.setDefaults()
	id := cfg.Identity
	log := &logger{w: cfg.Stderr, prefix: fmt.Sprintf("sbench-runner: rank %d (node %s): ", id.Rank, id.NodeName)}
	if len(cfg.Token) == 0 {
		if id.Rank == 0 {
			log.Printf("warning: SBENCH_TOKEN is not set; using a token derived from job %s, which any user can compute", id.Session())
		}
		cfg.Token = DerivedToken(id)
	}
	workdir, err := cfg.workDir()
	if err != nil {
		return "", err
	}
	if id.Rank == 0 {
		if err := os.MkdirAll(cfg.ResultsDir, 0o755); err != nil {
			return "", fmt.Errorf("results directory: %w", err)
		}
	}

	runCtx, fail := context.WithCancelCause(ctx)
	defer fail(nil)
	var timeout *runTimeout
	if cfg.Timeout > 0 {
		timeout = &runTimeout{d: cfg.Timeout}
		var cancel context.CancelFunc
		runCtx, cancel = context.WithTimeoutCause(runCtx, cfg.Timeout, timeout)
		defer cancel()
	}
	c := newComm(id, cfg.Token, log, cfg.IOTimeout, fail)
	c.timeout = timeout
	m := cfg.measure(runCtx, c, start, workdir, log)
	if m.died {
		return "", rankError(id, m.err)
	}
	c.close()
	if id.Rank != 0 {
		return "", rankError(id, m.err)
	}
	m.err = stoppedFirst(ctx, m.err)
	bundles, err := cfg.bundles(cfg.newBundle(c, start), m)
	return cfg.writeBundles(c.id, bundles, err, log)
}

// stoppedFirst puts what stopped the run (ctx's cause: a signal, as
// sbench-runner names it) before err when the run failed after it: a
// stopped step's ranks end together, and rank 0 may read another's end
// ("lost rank 1") before its own signal reaches the run; the signal is
// why the run failed.
func stoppedFirst(ctx context.Context, err error) error {
	cause := context.Cause(ctx)
	if err == nil || cause == nil || cause == ctx.Err() || errors.Is(err, cause) || strings.Contains(err.Error(), cause.Error()) {
		return err
	}
	return fmt.Errorf("%w; %w", cause, err)
}

// setDefaults fills what the command line may leave out.
func (cfg *Config) setDefaults() {
	if cfg.Stdout == nil {
		cfg.Stdout = io.Discard
	}
	if cfg.Stderr == nil {
		cfg.Stderr = io.Discard
	}
	if cfg.Getenv == nil {
		cfg.Getenv = os.Getenv
	}
	if cfg.Root == "" {
		cfg.Root = "/"
	}
	if cfg.BootstrapTimeout <= 0 {
		cfg.BootstrapTimeout = DefaultBootstrapTimeout
	}
	if cfg.IOTimeout <= 0 {
		cfg.IOTimeout = DefaultIOTimeout
	}
	if cfg.ResultsDir == "" {
		cfg.ResultsDir = "."
	}
	if cfg.RunDir == "" {
		cfg.RunDir = filepath.Join(cfg.ResultsDir, ".rendezvous")
	}
}

// workDir is the exec kernel's work directory, absolute; "" for a native
// kernel.
func (cfg *Config) workDir() (string, error) {
	if cfg.Exec == nil {
		return "", nil
	}
	workdir := cfg.Exec.WorkDir
	if workdir == "" {
		workdir = filepath.Join(cfg.ResultsDir, "work", cfg.Identity.Session())
	}
	workdir, err := filepath.Abs(workdir)
	if err != nil {
		return "", fmt.Errorf("work directory: %w", err)
	}
	return workdir, nil
}

// measured is what a rank's part of the run gave: a native kernel's
// samples or the exec kernel's result, and the run's error; died when a
// test hook killed the rank (errDied), which then leaves without a word.
type measured struct {
	samples []results.Sample
	res     *execResult
	err     error
	died    bool
}

// measure meets the other ranks and runs the kernel.
func (cfg *Config) measure(ctx context.Context, c *comm, start time.Time, workdir string, log *logger) measured {
	id := cfg.Identity
	// Each node is described once (doc.go: provenance): by rank 0, and by
	// every other node's local rank 0 (every rank, where the launcher does
	// not say which that is) with its join.
	describe := func() *results.Host {
		h := GatherHost(cfg.Root, cfg.Getenv)
		h.NodeName = id.NodeName
		if cfg.Exec != nil && cfg.Root == "/" {
			// The wrapped tool is likely an MPI program: which MPI, and
			// which MPI library the tool loads here.
			h.MPI = MPIVersion(ctx)
			h.MPILibraryPath, h.MPILibrary = cfg.toolMPILibrary(workdir)
		}
		return &h
	}
	var host *results.Host
	if id.Rank == 0 {
		host = describe()
	}
	if id.Rank != 0 && id.LocalRank <= 0 {
		c.describe = describe
	}
	if id.Rank == 0 || c.describe != nil {
		// Only a rank that describes its node, or may, needs to know
		// its machine.
		c.machine = machineKey(cfg.Root)
	}
	bind, err := cfg.bindAddr()
	if err != nil {
		return measured{err: err}
	}
	if err := c.start(bind); err != nil {
		return measured{err: err}
	}
	if id.Rank == 0 {
		defer os.Remove(addrPath(cfg.RunDir, id))
	}
	if err := c.bootstrap(ctx, cfg.RunDir, start, cfg.BootstrapTimeout, c.self(host, cfg.digest())); err != nil {
		if id.Rank == 0 {
			c.abortAll(err.Error())
		}
		return measured{err: err}
	}
	if id.Rank == 0 {
		log.Printf("%d rank%s on %d node%s joined in %s", id.Size, results.Plural(id.Size), len(c.id.Nodes), results.Plural(len(c.id.Nodes)), time.Since(start).Round(time.Millisecond))
	}
	if cfg.Exec != nil {
		res, err := runExec(ctx, c, cfg.Exec, workdir, cfg.Stderr)
		return measured{res: res, err: err}
	}
	samples, err := runKernel(ctx, c, cfg.Kernel, cfg.hooks)
	if errors.Is(err, errDied) {
		return measured{err: err, died: true}
	}
	return measured{samples: samples, err: c.finish(ctx, err)}
}

// bundles are rank 0's bundles of the run: the exec kernel's, one per run
// its output holds; a native kernel's one, finished as its kernel says.
func (cfg *Config) bundles(b *results.Bundle, m measured) ([]*results.Bundle, error) {
	if cfg.Exec != nil {
		return cfg.execBundles(b, m.res, m.err)
	}
	b.Samples = m.samples
	if m.err != nil {
		b.Status, b.Error = results.StatusFailed, m.err.Error()
	}
	if finish := kernelRuns[cfg.Kernel.Kernel].finish; finish != nil {
		finish(b, cfg.Kernel)
	}
	if cfg.Kernel.Send == SendSplice {
		// A configuration of its own: archived runs that do not say
		// wrote (splice.go).
		b.Params = merge(b.Params, map[string]string{"send": SendSplice})
	}
	return []*results.Bundle{b}, m.err
}

// writeBundles judges and writes rank 0's bundles and prints their paths;
// it returns the first path and the run's error, or the first bundle's
// that failed.
func (cfg *Config) writeBundles(id Identity, bundles []*results.Bundle, err error, log *logger) (string, error) {
	var first string
	for k, b := range bundles {
		if cfg.Repeat != nil {
			for i := range b.Samples {
				b.Samples[i].Repeat = *cfg.Repeat
			}
		}
		applyPlacement(b, cfg.Plan)
		ApplyChecks(b, cfg.Checks)
		path := bundlePath(cfg.ResultsDir, id, cfg.Benchmark, k)
		if werr := results.WriteFile(path, b); werr != nil {
			if err != nil {
				return first, rankError(id, fmt.Errorf("%w; and the bundle could not be written: %v", err, werr))
			}
			return first, rankError(id, werr)
		}
		if k == 0 {
			first = path
		}
		fmt.Fprintln(cfg.Stdout, path)
		switch {
		case b.Status == results.StatusFailed && err == nil:
			err = fmt.Errorf("%s: %s", path, b.Error)
		case b.Status == results.StatusInvalid:
			log.Printf("%s is invalid: %s", path, b.Error)
		}
	}
	return first, rankError(id, err)
}

// toolMPILibrary is the MPI library this rank's command loads: its path
// and version, or "" when the command is not an MPI program, has none on
// this rank, or names its program by a placeholder known only after the
// bootstrap. A program that cannot be found says nothing here: the run
// fails when it starts it, and says so.
func (cfg *Config) toolMPILibrary(workdir string) (path, version string) {
	id := cfg.Identity
	argv := cfg.Exec.argv(id.Rank)
	if len(argv) == 0 {
		return "", ""
	}
	prog, err := expandArgv(argv[:1], argValues{rank: id.Rank, size: id.Size, workdir: workdir})
	if err != nil {
		return "", ""
	}
	path, version, _ = ToolMPILibrary(prog[0], workdir, cfg.Getenv)
	return printable(path, 1024), version
}

// runTimeout is the cause of a run's context ending at the run's deadline.
// Each rank's clock starts when the rank does, so one rank passes the
// deadline first, by luck; it tells rank 0 (or rank 0 tells the others) and
// every rank then ends as at its own deadline. d is zero on a rank given no
// timeout that heard of rank 0's.
type runTimeout struct{ d time.Duration }

func (e *runTimeout) Error() string {
	if e.d <= 0 {
		return "the run exceeded rank 0's timeout"
	}
	return fmt.Sprintf("the run exceeded its %s timeout", e.d)
}

// isRunTimeout reports whether err comes from the run's deadline.
func isRunTimeout(err error) bool {
	var rt *runTimeout
	return errors.As(err, &rt)
}

// newBundle is a bundle with what every bundle of the run shares: the
// campaign, the job, the hosts, the benchmark as run.
func (cfg *Config) newBundle(c *comm, start time.Time) *results.Bundle {
	id := c.id // with the nodes the bootstrap found, under mpirun
	b := results.New()
	b.Campaign, b.Variant = cfg.Campaign, cfg.Variant
	b.Params, b.Labels = merge(cfg.Params, nil), merge(cfg.Labels, nil)
	if cfg.Repeat != nil {
		b.Params = merge(b.Params, map[string]string{"repeat": strconv.Itoa(*cfg.Repeat)})
	}
	b.Job = results.Job{
		ID: id.JobID, Step: id.StepID, ArrayIndex: id.ArrayIndex, Name: id.JobName, Partition: id.Partition, Cluster: id.Cluster,
		Nodes: id.Nodes, Tasks: id.Size, TasksPerNode: id.TasksPerNode, Restart: id.Restart,
	}
	b.Start, b.End = start.UTC().Round(0), time.Now().UTC().Round(0)
	b.RunnerVersion = Version
	b.Hosts = c.hostsByNode()
	b.Benchmark = results.Benchmark{Name: cfg.Benchmark, Kind: "native", Kernel: cfg.Kernel.Kernel, Command: cfg.Command, Launcher: id.Launcher}
	return b
}

// execBundles turns the exec kernel's result into bundles: one per run
// the parser found in the output, with the job's context, whatever became
// of the run; one failed bundle with the output when there is none. Each
// keeps the campaign's name for the benchmark and says what the parser
// says of the run: the tool and the benchmark it ran (IMB-MPI1 and
// "IMB-MPI1 PingPong"), as an ingest of the same output from a file would.
//
// A run that failed (runErr) keeps its samples, as measured, in bundles
// that say it failed: views never take a failed run's samples for
// figures. An ok run whose other ranks' commands exited non-zero after a
// complete output says so in its note. A command without a parser
// (parsers.None) has its wall time for a figure (results.MetricWallTime),
// beside whatever else its bundle holds.
func (cfg *Config) execBundles(base *results.Bundle, res *execResult, runErr error) ([]*results.Bundle, error) {
	base.Benchmark.Kind = "tool"
	base.Benchmark.Command = nil
	if !cfg.Exec.Extract.Empty() {
		base.Benchmark.Extract = cfg.Exec.Extract
	}
	if res != nil {
		base.Benchmark.Command = res.argv
	}
	if res == nil || res.runs == nil {
		err := runErr
		if err == nil {
			err = res.parseErr
		}
		base.Status, base.Error = results.StatusFailed, firstLines(err.Error(), 20)
		if res != nil {
			// The output as far as it went, and what each rank said.
			base.Raw = withTails(string(res.output), res, nil)
		}
		return []*results.Bundle{base}, err
	}
	out := make([]*results.Bundle, len(res.runs))
	for i, run := range res.runs {
		b := *base
		tool := run.Benchmark.Normalized()
		b.Benchmark.Tool, b.Benchmark.ToolBenchmark, b.Benchmark.ToolVersion = tool.Tool, tool.ToolBenchmark, tool.ToolVersion
		// The campaign's parameters and labels win over the tool's own.
		b.Params = merge(merge(nil, run.Params), base.Params)
		b.Labels = merge(merge(nil, run.Labels), base.Labels)
		b.Samples, b.Scalars, b.Checks = run.Samples, run.Scalars, run.Checks
		b.Status, b.Error, b.Source, b.Raw = run.Status, run.Error, run.Source, run.Raw
		if cfg.Exec.parser() == parsers.None && res.took > 0 {
			b.Samples = append(b.Samples, results.Sample{Metric: results.MetricWallTime, Unit: results.UnitSeconds, Value: res.took.Seconds()})
		}
		switch {
		case runErr != nil:
			b.Status, b.Error = results.StatusFailed, firstLines(runErr.Error(), 20)
			b.Raw = withTails(b.Raw, res, nil)
		case res.note != "":
			b.Note = res.note
			b.Raw = withTails(b.Raw, res, res.noted)
		}
		out[i] = &b
	}
	return out, runErr
}

// withTails is raw with the tails of the standard error of ranks (every
// rank's when nil) after it, each under a line naming the rank, its
// command and how it ended; within parsers.MaxRaw, as valid UTF-8.
func withTails(raw string, res *execResult, ranks []int) string {
	var b strings.Builder
	b.WriteString(raw)
	tail := func(rank int, argv []string, outcome, stderr string) {
		if strings.TrimSpace(stderr) == "" || ranks != nil && !slices.Contains(ranks, rank) {
			return
		}
		if b.Len() > 0 && !strings.HasSuffix(b.String(), "\n") {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "%s%d: %s", results.StderrTailMark, rank, display(argv))
		if outcome != "" {
			b.WriteString(" " + outcome)
		}
		b.WriteString(" <==\n")
		b.WriteString(stderr)
	}
	tail(0, res.argv, "", res.stderr)
	for _, r := range slices.Sorted(maps.Keys(res.reports)) {
		rep := res.reports[r]
		tail(r, rep.Command, rep.Outcome, rep.Stderr)
	}
	out := b.String()
	if len(out) > parsers.MaxRaw {
		out = out[:parsers.MaxRaw/2] + "\n[… output cut by sbench …]\n" + out[len(out)-parsers.MaxRaw/2:]
	}
	return strings.ToValidUTF8(out, "\uFFFD")
}

// firstLines keeps the first n lines of s: a parser may find thousands of
// bad lines, and the bundle's error is for people.
func firstLines(s string, n int) string {
	lines := strings.SplitAfterN(s, "\n", n+1)
	if len(lines) <= n {
		return s
	}
	return strings.Join(lines[:n], "") + "[…]"
}

// merge returns a copy of a with b's entries added over it; nil when
// both are empty.
func merge(a, b map[string]string) map[string]string {
	if len(a) == 0 && len(b) == 0 {
		return nil
	}
	out := make(map[string]string, len(a)+len(b))
	maps.Copy(out, a)
	maps.Copy(out, b)
	return out
}

// rankError says which rank an error comes from: with hundreds of ranks
// writing to one job log, a bare message is useless. An error that already
// says so is left alone.
func rankError(id Identity, err error) error {
	if err == nil {
		return nil
	}
	prefix := fmt.Sprintf("rank %d (node %s): ", id.Rank, id.NodeName)
	if strings.HasPrefix(err.Error(), prefix) {
		return err
	}
	return fmt.Errorf("%s%w", prefix, err)
}
