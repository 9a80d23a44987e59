package runner

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

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
	Kernel    KernelParams
	// Params are the variant's sweep parameters, Labels the run's labels;
	// both are copied into the bundle.
	Params map[string]string
	Labels map[string]string

	// ResultsDir is where rank 0 writes the bundle; RunDir where it
	// publishes its address (shared by the step's nodes).
	ResultsDir string
	RunDir     string
	// Bind is the address to listen on and advertise; empty for all
	// interfaces.
	Bind string

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
	// Command is the runner's command line, recorded in the bundle.
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
	ok := name != "" && len(name) <= 128 && isAlnum(name[0]) && !strings.Contains(name, "..")
	for _, c := range []byte(name) {
		ok = ok && (isAlnum(c) || c == '_' || c == '.' || c == '+' || c == '-')
	}
	if !ok {
		return fmt.Errorf("benchmark name %q: use 1 to 128 letters, digits, '_', '-', '+' or '.', starting with a letter or digit", name)
	}
	return nil
}

// BundlePath is where rank 0 writes the bundle of a run.
func BundlePath(resultsDir string, id Identity, benchmark string) string {
	return filepath.Join(resultsDir, id.JobID+"."+id.Step()+"."+benchmark+".json")
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
	s := fmt.Sprintf("%s %q %q %q %s sizes=%v iterations=%d warmup=%d window=%d",
		Version, cfg.Campaign, cfg.Variant, cfg.Benchmark, k.Kernel, k.Sizes, k.Iterations, k.Warmup, k.Window)
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:8])
}

func (cfg *Config) check() error {
	if err := CheckBenchmarkName(cfg.Benchmark); err != nil {
		return err
	}
	if _, ok := kernelParamNames[cfg.Kernel.Kernel]; !ok {
		return fmt.Errorf("unknown kernel %q", cfg.Kernel.Kernel)
	}
	if len(cfg.Kernel.Sizes) == 0 {
		return errors.New("no message sizes")
	}
	if cfg.Identity.Size < 1 || cfg.Identity.Rank < 0 || cfg.Identity.Rank >= cfg.Identity.Size {
		return fmt.Errorf("rank %d of %d", cfg.Identity.Rank, cfg.Identity.Size)
	}
	return cfg.Identity.check()
}

// Run runs this rank's part of the step. Rank 0 writes the bundle, for a
// failed run too, prints its path on Stdout and returns it; a run that
// failed returns the bundle's path and the error. A rank's own error is one
// line that names the rank and node at fault.
func Run(ctx context.Context, cfg Config) (string, error) {
	start := time.Now()
	if err := cfg.check(); err != nil {
		return "", err
	}
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
	id := cfg.Identity
	log := &logger{w: cfg.Stderr, prefix: fmt.Sprintf("sbench-runner: rank %d (node %s): ", id.Rank, id.NodeName)}
	if len(cfg.Token) == 0 {
		if id.Rank == 0 {
			log.Printf("warning: SBENCH_TOKEN is not set; using a token derived from job %s, which any user can compute", id.Session())
		}
		cfg.Token = DerivedToken(id)
	}

	var path string
	if id.Rank == 0 {
		path = BundlePath(cfg.ResultsDir, id, cfg.Benchmark)
		if err := os.MkdirAll(cfg.ResultsDir, 0o755); err != nil {
			return "", fmt.Errorf("results directory: %w", err)
		}
	}

	runCtx, fail := context.WithCancelCause(ctx)
	defer fail(nil)
	if cfg.Timeout > 0 {
		var cancel context.CancelFunc
		runCtx, cancel = context.WithTimeoutCause(runCtx, cfg.Timeout, fmt.Errorf("the run exceeded its %s timeout", cfg.Timeout))
		defer cancel()
	}

	// Each node's local rank 0 describes the node, before the bootstrap:
	// it costs a few milliseconds and travels with the join.
	var host *results.Host
	if id.LocalRank == 0 {
		h := GatherHost(cfg.Root, cfg.Getenv)
		h.NodeName = id.NodeName
		host = &h
	}

	c := newComm(id, cfg.Token, log, cfg.IOTimeout, fail)
	var samples []results.Sample
	err := c.start(cfg.Bind)
	if err == nil {
		if id.Rank == 0 {
			defer os.Remove(addrPath(cfg.RunDir, id))
		}
		err = c.bootstrap(runCtx, cfg.RunDir, start, cfg.BootstrapTimeout, c.self(host, cfg.digest()))
		if err != nil && id.Rank == 0 {
			c.abortAll(err.Error())
		}
		if err == nil {
			if id.Rank == 0 {
				log.Printf("%s on %s joined in %s", plural(id.Size, "rank"), plural(len(id.Nodes), "node"), time.Since(start).Round(time.Millisecond))
			}
			var kerr error
			samples, kerr = runKernel(runCtx, c, cfg.Kernel, cfg.hooks)
			if errors.Is(kerr, errDied) {
				return "", rankError(id, kerr)
			}
			err = c.finish(runCtx, kerr)
		}
	}
	c.close()
	if id.Rank != 0 {
		return "", rankError(id, err)
	}

	b := results.New()
	b.Campaign, b.Variant = cfg.Campaign, cfg.Variant
	b.Params, b.Labels = nonEmpty(cfg.Params), nonEmpty(cfg.Labels)
	b.Job = results.Job{
		ID: id.JobID, Step: id.StepID, ArrayIndex: id.ArrayIndex, Name: id.JobName, Partition: id.Partition,
		Nodes: id.Nodes, Tasks: id.Size, TasksPerNode: id.TasksPerNode,
	}
	b.Start, b.End = start.UTC().Round(0), time.Now().UTC().Round(0)
	b.RunnerVersion = Version
	b.Hosts = c.hostsByNode()
	b.Benchmark = results.Benchmark{Name: cfg.Benchmark, Kind: "native", Kernel: cfg.Kernel.Kernel, Command: cfg.Command}
	b.Samples = samples
	if err != nil {
		b.Status, b.Error = results.StatusFailed, err.Error()
	}
	if werr := results.WriteFile(path, b); werr != nil {
		if err != nil {
			return "", rankError(id, fmt.Errorf("%w; and the bundle could not be written: %v", err, werr))
		}
		return "", rankError(id, werr)
	}
	fmt.Fprintln(cfg.Stdout, path)
	return path, rankError(id, err)
}

// rankError says which rank an error comes from: with hundreds of ranks
// writing to one job log, a bare message is useless.
func rankError(id Identity, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("rank %d (node %s): %w", id.Rank, id.NodeName, err)
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func nonEmpty(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	return m
}
