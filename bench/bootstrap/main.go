// Command bootstrap times whole job steps of sbench-runner processes started
// by runner.LocalStep exactly as `sbench local` starts them (static
// binary, provenance read from this machine, SBENCH_BIND=127.0.0.1), with a
// trivial kernel, so that the wall clock is the ranks' start-up, the
// bootstrap and the final barrier. For each step size it prints the median,
// minimum and maximum wall clock over -count steps, the median per rank,
// and the CPU time (user and system) the ranks' processes used, per rank,
// median over the steps:
//
//	RANKS MEDIAN_S MIN_S MAX_S MS_PER_RANK CPU_MS_PER_RANK
//
// On a machine that others use too, the CPU time moves less than the wall
// clock: it says what a rank costs, the wall clock what the step took.
//
// For example, 512 ranks on 256 fake nodes, five steps each:
//
//	go run ./bench/bootstrap -runner bin/sbench-runner -ranks 2,64,512 -per-node 2 -count 5
//
// The machine is likely shared: repeat, and read the spread (MIN..MAX)
// before the median.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/sbench/sbench/compare"
	"github.com/sbench/sbench/results"
	"github.com/sbench/sbench/runner"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "bootstrap: %v\n", err)
		os.Exit(1)
	}
}

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("bootstrap", flag.ContinueOnError)
	bin := fs.String("runner", "bin/sbench-runner", "sbench-runner `binary`")
	list := fs.String("ranks", "2,8,32,64,128,256,512", "step sizes, comma-separated")
	perNode := fs.Int("per-node", 2, "ranks per fake node")
	count := fs.Int("count", 5, "steps per size")
	verbose := fs.Bool("v", false, "show the ranks' standard error")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	abs, err := filepath.Abs(*bin)
	if err != nil {
		return err
	}
	var sizes []int
	for _, f := range strings.Split(*list, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return fmt.Errorf("-ranks: bad size %q", f)
		}
		sizes = append(sizes, n)
	}
	if *perNode < 1 || *count < 1 {
		return errors.New("-per-node and -count must be at least 1")
	}
	fmt.Fprintf(stdout, "# %d ranks per node, %d steps per size\n# RANKS MEDIAN_S MIN_S MAX_S MS_PER_RANK CPU_MS_PER_RANK\n", *perNode, *count)
	for _, n := range sizes {
		var took, cpu []float64
		for i := 0; i < *count; i++ {
			before := childCPU()
			d, err := step(abs, n, *perNode, i, *verbose)
			if err != nil {
				return fmt.Errorf("%d ranks: %w", n, err)
			}
			took = append(took, d.Seconds())
			cpu = append(cpu, (childCPU() - before).Seconds())
		}
		slices.Sort(took)
		fmt.Fprintf(stdout, "%d %.3f %.3f %.3f %.2f %.2f\n", n, compare.Median(took), took[0], took[len(took)-1],
			compare.Median(took)*1000/float64(n), compare.Median(cpu)*1000/float64(n))
	}
	return nil
}

// childCPU is the user and system time of this process's children that
// have been waited for (the ranks of the steps so far).
func childCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// step runs one step of n ranks and checks rank 0's bundle.
func step(bin string, n, perNode, i int, verbose bool) (time.Duration, error) {
	dir, err := os.MkdirTemp("", "bootstrap")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	nodes := make([]string, (n+perNode-1)/perNode)
	for k := range nodes {
		nodes[k] = fmt.Sprintf("local%d", k+1)
	}
	var errOut strings.Builder
	s := runner.LocalStep{
		Runner: bin,
		Args: []string{"run", "--campaign", "bench", "--variant", "v", "--benchmark", "boot",
			"--kernel", "latency", "--param", "sizes=1", "--param", "iterations=1", "--param", "warmup=0",
			"--results", dir},
		Nodes: nodes, TasksPerNode: perNode, Ranks: n,
		JobID: fmt.Sprintf("%d%03d", os.Getpid(), i), StepID: "0", JobName: "bootstrap",
		Env:    []string{"SBENCH_TOKEN=bootstrap", "SBENCH_BIND=127.0.0.1", "SBENCH_BOOTSTRAP_TIMEOUT=5m"},
		Stderr: &errOut,
	}
	start := time.Now()
	err = s.Run(context.Background())
	took := time.Since(start)
	if verbose || err != nil {
		os.Stderr.WriteString(errOut.String())
	}
	if err != nil {
		return 0, err
	}
	b, err := results.ReadFile(runner.BundlePath(dir, runner.Identity{JobID: s.JobID, StepID: "0"}, "boot"))
	if err != nil {
		return 0, err
	}
	if b.Status != results.StatusOK || b.Job.Tasks != n || len(b.Hosts) != len(nodes) {
		return 0, fmt.Errorf("bundle: status %s %s, %d tasks, %d hosts", b.Status, b.Error, b.Job.Tasks, len(b.Hosts))
	}
	return took, nil
}
