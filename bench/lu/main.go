// Command lu runs the native HPL kernel (package hpl/lu) as
// bench/lu-vs-hpcc.sh needs it: one solve per repetition, one line per
// solve in HPL's terms.
//
//	go run ./bench/lu -n 3000 -nb 192 -threads 2 -repeat 3
//
// prints, per repetition:
//
//	N NB THREADS KERNEL TIME_S GFLOPS RESIDUAL PASSED
//
// and exits 1 when a residual check failed, 2 on any other error.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/sbench/sbench/hpl/lu"
)

func main() {
	err := run(context.Background(), os.Args[1:], os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "lu:", err)
		if errors.As(err, new(checkFailed)) {
			os.Exit(1)
		}
		os.Exit(2)
	}
}

type checkFailed struct{ residual float64 }

func (c checkFailed) Error() string {
	return fmt.Sprintf("residual check failed: %g is not below %g", c.residual, lu.Threshold)
}

func run(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("lu", flag.ContinueOnError)
	n := fs.Int("n", 3000, "order of the system")
	nb := fs.Int("nb", 0, "block size (0: the kernel's default)")
	threads := fs.Int("threads", 0, "goroutines (0: GOMAXPROCS)")
	seed := fs.Uint64("seed", 1, "seed of the random system")
	repeat := fs.Int("repeat", 1, "solves, one after the other")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var failed error
	for range *repeat {
		res, err := lu.Run(ctx, lu.Config{N: *n, NB: *nb, Seed: *seed, Threads: *threads})
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%d %d %d %s %.4f %.3f %.7f %t\n", res.N, res.NB, res.Threads, res.Kernel,
			res.Time.Seconds(), res.Gflops, res.Residual, res.Passed())
		if !res.Passed() {
			failed = checkFailed{res.Residual}
		}
	}
	return failed
}
