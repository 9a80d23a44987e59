package slurm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"syscall"
	"time"
)

// Runner runs one command; argv[0] is the program. env is the command's whole
// environment (nil: this process's), dir its working directory ("": ours).
// err is non-nil when the command could not start, exited non-zero or was
// cancelled; stdout and stderr hold what it wrote either way.
//
// Exec is the real one; tests use a fake replaying captured outputs.
type Runner interface {
	Run(ctx context.Context, argv []string, env []string, dir string) (stdout, stderr []byte, err error)
}

// Exec runs commands with os/exec. argv is passed as is — never through a
// shell, never split on spaces — so job names and paths with spaces or
// quotes are safe.
type Exec struct{}

// ExitError is returned by Exec when the command ran and exited non-zero.
type ExitError struct {
	Prog string
	Code int // -1 when killed by a signal
}

func (e *ExitError) Error() string {
	return fmt.Sprintf("%s exited with status %d", e.Prog, e.Code)
}

// Run implements Runner. Cancelling ctx kills the command; the error then
// wraps ctx.Err().
func (Exec) Run(ctx context.Context, argv []string, env []string, dir string) ([]byte, []byte, error) {
	if len(argv) == 0 || argv[0] == "" {
		return nil, nil, errors.New("run: empty command")
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env, cmd.Dir = env, dir
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// A Slurm command that forks a child holding our pipes (srun --pty does)
	// must not keep Run waiting after it was killed.
	cmd.WaitDelay = 5 * time.Second
	// Its own process group: a Ctrl-C at the terminal reaches sbench, which
	// decides (an sbatch already sent finishes, so that its job id is
	// recorded), not the Slurm command behind its back.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err := cmd.Run()
	if ctx.Err() != nil {
		return stdout.Bytes(), stderr.Bytes(), fmt.Errorf("run %s: %w", argv[0], ctx.Err())
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return stdout.Bytes(), stderr.Bytes(), &ExitError{Prog: argv[0], Code: ee.ExitCode()}
	}
	if err != nil {
		return stdout.Bytes(), stderr.Bytes(), fmt.Errorf("run %s: %w", argv[0], err)
	}
	return stdout.Bytes(), stderr.Bytes(), nil
}
