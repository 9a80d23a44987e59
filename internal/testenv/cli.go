package testenv

import (
	"bytes"
	"context"
	"io"
	"strings"
)

// CLI runs a command in-process as its main does: run is the command's
// run(ctx, args, stdin, stdout, stderr), given an empty standard input, and
// exitCode maps its error to the exit status, writing what main would
// print on standard error. It returns both outputs and that status, for
// tests that check a command as a user sees it.
func CLI(ctx context.Context, run func(context.Context, []string, io.Reader, io.Writer, io.Writer) error,
	exitCode func(error, io.Writer) int, args ...string) (stdout, stderr string, code int) {
	var out, errb bytes.Buffer
	err := run(ctx, args, strings.NewReader(""), &out, &errb)
	code = exitCode(err, &errb)
	return out.String(), errb.String(), code
}
