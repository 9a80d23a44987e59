// Command runnerpair runs one native kernel of sbench-runner between two
// ranks on 127.0.0.1, started as processes by runner.LocalStep exactly as
// `sbench local` starts them, and prints rank 0's samples one per line:
//
//	SIZE VALUE MIN P50 P99 MAX ITERATIONS
//
// (latency in us, bandwidth in MB/s). bench/runner-vs-tools.sh uses it to
// put our kernels next to NPtcp and iperf3 in the same run; it is also the
// quickest way to time the kernels by hand:
//
//	go run ./bench/runnerpair -runner bin/sbench-runner -kernel latency -param sizes=1 -param iterations=20000
//
// With -ranks N (N > 2) the extra ranks only join the bootstrap and the
// final barrier, which -bootstrap times instead of printing samples.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/sbench/sbench/results"
	"github.com/sbench/sbench/runner"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintf(os.Stderr, "runnerpair: %v\n", err)
		os.Exit(1)
	}
}

type params []string

func (p *params) String() string     { return strings.Join(*p, " ") }
func (p *params) Set(s string) error { *p = append(*p, s); return nil }

func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("runnerpair", flag.ContinueOnError)
	bin := fs.String("runner", "bin/sbench-runner", "sbench-runner `binary`")
	kernel := fs.String("kernel", "latency", "native `kernel`: latency or bw")
	ranks := fs.Int("ranks", 2, "ranks of the step, all on one node")
	bootstrap := fs.Bool("bootstrap", false, "print the step's wall clock instead of samples")
	verbose := fs.Bool("v", false, "show the ranks' standard error")
	var ps params
	fs.Var(&ps, "param", "kernel parameter `key=value` (repeatable)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	abs, err := filepath.Abs(*bin)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "runnerpair")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	argv := []string{"run", "--campaign", "bench", "--variant", "loopback", "--benchmark", *kernel,
		"--kernel", *kernel, "--results", dir}
	for _, p := range ps {
		argv = append(argv, "--param", p)
	}
	var errOut strings.Builder
	step := runner.LocalStep{
		Runner: abs, Args: argv,
		Nodes: []string{"local1"}, TasksPerNode: *ranks,
		JobID: fmt.Sprint(os.Getpid()), StepID: "0", JobName: "runnerpair",
		Env:    []string{"SBENCH_TOKEN=runnerpair", "SBENCH_BIND=127.0.0.1", "SBENCH_BOOTSTRAP_TIMEOUT=60s"},
		Stderr: &errOut,
	}
	start := time.Now()
	err = step.Run(context.Background())
	took := time.Since(start)
	if *verbose || err != nil {
		io.WriteString(stderr, errOut.String())
	}
	if err != nil {
		return err
	}
	if *bootstrap {
		fmt.Fprintf(stdout, "%d ranks: %.1f ms\n", *ranks, float64(took.Microseconds())/1e3)
		return nil
	}
	b, err := results.ReadFile(filepath.Join(dir, fmt.Sprintf("%d.0.%s.json", os.Getpid(), *kernel)))
	if err != nil {
		return err
	}
	if b.Status != results.StatusOK {
		return errors.New(b.Error)
	}
	f := func(p *float64) float64 {
		if p == nil {
			return 0
		}
		return *p
	}
	for _, s := range b.Samples {
		fmt.Fprintf(stdout, "%g %g %g %g %g %g %d\n", f(s.X), s.Value, f(s.Min), f(s.P50), f(s.P99), f(s.Max), s.Iterations)
	}
	return nil
}
