// Command sbench runs HPC benchmark campaigns on Slurm, archives every result
// in SQLite and writes comparison reports. Run "sbench help" for the commands.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(exitCode(err, os.Stderr))
}

// Exit statuses, listed in every command's help.
const (
	exitOK      = 0
	exitFailure = 1 // the command could not do its job (or found what it looks for, e.g. a regression)
	exitUsage   = 2 // bad arguments or unreadable input
)

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
	var ee exitError
	if errors.As(err, &ee) {
		if ee.msg != "" {
			fmt.Fprintln(stderr, "sbench: "+ee.msg)
		}
		return ee.code
	}
	msg := strings.TrimSpace(err.Error())
	if strings.Contains(msg, "\n") {
		fmt.Fprintln(stderr, "sbench: "+strings.ReplaceAll(msg, "\n", "\nsbench: "))
	} else {
		fmt.Fprintln(stderr, "sbench: "+msg)
	}
	if errors.Is(err, context.Canceled) {
		return exitFailure
	}
	var ue usageError
	if errors.As(err, &ue) {
		return exitUsage
	}
	return exitFailure
}
