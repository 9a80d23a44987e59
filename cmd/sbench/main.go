// Command sbench runs HPC benchmark campaigns on Slurm, archives every result
// in SQLite and writes comparison reports. Run "sbench help" for the commands.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/sbench/sbench/ingest"
)

// heapLimit is the soft limit sbench puts on its Go heap unless GOMEMLIMIT
// says otherwise. The archive commands stream what they read and keep
// little that lives long, but the collector's default lets the heap grow
// to twice that and more, so that peak memory would follow the archive's
// size; under this limit it stays about the same from a campaign to a
// site's years. A command that needs more still gets it.
const heapLimit = 64 << 20

// freeHeap lifts heapLimit (unless GOMEMLIMIT set one) for work whose heap
// is mostly short-lived and bounded by design — ingest's batches of parsed
// files — and lets it grow to three times what is live before collecting
// (unless GOGC says otherwise).
func freeHeap() {
	raiseHeap(math.MaxInt64)
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(200)
	}
}

// compareHeapLimit is heapLimit for compare, which keeps a row per node
// pair and x of the two selections: under 64 MiB its collector ran every
// few MB of the samples it decodes, while peak memory stays flat at this.
const compareHeapLimit = 96 << 20

// reportHeapLimit is heapLimit for report, which decodes every sample of
// what it reports into short-lived values: under 64 MiB its collector ran
// so often that the report used 40 % more CPU time. The figures behind this
// and the other limits: docs/report.md, "Reports of a site's years".
const reportHeapLimit = 128 << 20

// siteHeapLimit is heapLimit for site, which draws a history chart per
// page on every core: under 64 MiB the collector ran all the time.
const siteHeapLimit = 192 << 20

// raiseHeap sets the soft heap limit to limit unless GOMEMLIMIT set one.
func raiseHeap(limit int64) {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(limit)
	}
}

func main() {
	raiseHeap(heapLimit)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := make(chan int, 1)
	go func() { code <- exitCode(run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr), os.Stderr) }()
	select {
	case c := <-code:
		stop()
		os.Exit(c)
	case <-ctx.Done():
	}
	// A second signal ends sbench at once, as it would any program.
	stop()
	// Work that must not be cut (an sbatch Slurm may already have accepted,
	// and the recording of its job id) runs to its end first.
	finished := make(chan struct{})
	go func() { critical.Wait(); close(finished) }()
	select {
	case c := <-code:
		os.Exit(c)
	case <-finished:
	}
	// The command has a moment to stop cleanly (roll back, kill its
	// children, say what it did). What cannot watch ctx, and would keep
	// sbench running, is not waited for: a read of a terminal or pipe that
	// never ends, SQLite's wait for another writer's lock (its busy
	// handler ignores interrupts, up to store's busy timeout). Nothing is
	// lost: every store write is one SQLite transaction, every output
	// file is written atomically.
	select {
	case c := <-code:
		os.Exit(c)
	case <-time.After(unwindGrace):
		fmt.Fprintf(os.Stderr, "sbench: %v\n", interruptedError{cause: context.Cause(ctx)})
		os.Exit(exitInterrupted)
	}
}

// critical counts the work in progress that a signal must not cut short;
// main waits for it before it gives the command unwindGrace to stop.
var critical sync.WaitGroup

// unwindGrace is how long sbench waits, after SIGINT or SIGTERM, for the
// command to stop by itself.
const unwindGrace = time.Second

// Exit statuses, one table for every command (listed in each one's help
// and in README.md), as restic keeps one.
const (
	exitOK = 0
	// exitGate: the command did its job and found what a gate looks for —
	// a regression, jobs or steps that did not complete, flagged nodes.
	exitGate = 1
	// exitUsage: bad arguments, unreadable input (a malformed file, a
	// campaign that does not validate), or a selection with no runs.
	exitUsage = 2
	// exitFailed: the command could not do its job — the archive (read-only,
	// locked, damaged), Slurm, a file it had to write.
	exitFailed = 3
	// exitInterrupted: SIGINT or SIGTERM: 128+SIGINT, what shells report
	// for a command ^C stopped.
	exitInterrupted = 130
)

// interruptedError is what a command returns when SIGINT or SIGTERM ended
// it: cause is the signal (context.Cause), err what the command returned,
// often only the cancellation.
type interruptedError struct{ cause, err error }

func (e interruptedError) Error() string {
	msg := "interrupted"
	if e.cause != nil {
		msg += " (" + e.cause.Error() + ")"
	}
	// What the command said of its interruption ("3 of 30 jobs
	// submitted"), less the bare cancellation it wraps.
	if e.err != nil {
		if what := strings.TrimSuffix(e.err.Error(), ": "+context.Canceled.Error()); what != context.Canceled.Error() {
			msg += ": " + what
		}
	}
	return msg
}

func (e interruptedError) Unwrap() error { return e.err }

// usageError marks errors in how the command was called.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}

// exitError carries a specific exit status with a message (which may be
// empty when the command already said everything it had to say).
type exitError struct {
	code int
	msg  string
}

func (e exitError) Error() string { return e.msg }

// exitCode maps an error to the process's exit status and prints it as one
// line (or the lines of a multi-problem error) on stderr.
func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return exitOK
	}
	// Before exitError: a command cut short by a signal failed because of
	// it, whatever else it returned.
	var ie interruptedError
	if errors.As(err, &ie) {
		fmt.Fprintln(stderr, "sbench: "+oneLine(ie.Error()))
		return exitInterrupted
	}
	if errors.Is(err, context.Canceled) {
		fmt.Fprintln(stderr, "sbench: interrupted")
		return exitInterrupted
	}
	var ee exitError
	if errors.As(err, &ee) {
		if ee.msg != "" {
			fmt.Fprintln(stderr, "sbench: "+ee.msg)
		}
		return ee.code
	}
	fmt.Fprintln(stderr, "sbench: "+oneLine(err.Error()))
	var ue usageError
	var fe ingest.FailedError
	var bad ingest.InputError
	if errors.As(err, &ue) || errors.As(err, &fe) || errors.As(err, &bad) {
		return exitUsage
	}
	return exitFailed
}

// oneLine prefixes each line of a multi-problem message with "sbench: ".
func oneLine(msg string) string {
	return strings.ReplaceAll(strings.TrimSpace(msg), "\n", "\nsbench: ")
}
