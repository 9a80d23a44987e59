package slurm

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sbench/sbench/internal/testenv"
)

// argv reaches the program as is: no shell, no splitting on spaces.
func TestExecPassesArgvAsIs(t *testing.T) {
	printf := testenv.LookPath(t, "printf", "")
	args := []string{"a b", "'quoted'", "$HOME", "x;y", "*"}
	stdout, stderr, err := Exec{}.Run(context.Background(), append([]string{printf, "[%s]"}, args...), nil, "")
	if err != nil {
		t.Fatalf("%v: %s", err, stderr)
	}
	if got, want := string(stdout), "[a b]['quoted'][$HOME][x;y][*]"; got != want {
		t.Errorf("stdout %q, want %q", got, want)
	}
}

func TestExecEnvDirAndExitStatus(t *testing.T) {
	sh := testenv.LookPath(t, "sh", "")
	dir := t.TempDir()
	stdout, _, err := Exec{}.Run(context.Background(), []string{sh, "-c", `echo "$SBENCH_X"; pwd -P; echo oops >&2; exit 3`},
		[]string{"SBENCH_X=42"}, dir)
	var ee *ExitError
	if !errors.As(err, &ee) || ee.Code != 3 || ee.Prog != sh {
		t.Fatalf("err = %v, want exit status 3", err)
	}
	lines := strings.Split(strings.TrimSpace(string(stdout)), "\n")
	if len(lines) != 2 || lines[0] != "42" || !strings.HasSuffix(lines[1], dir[strings.LastIndex(dir, "/"):]) {
		t.Errorf("stdout %q (dir %s)", stdout, dir)
	}
	if _, _, err := (Exec{}).Run(context.Background(), []string{"/nonexistent/sbatch"}, nil, ""); err == nil || errors.As(err, &ee) {
		t.Errorf("missing program: %v", err)
	}
	if _, _, err := (Exec{}).Run(context.Background(), nil, nil, ""); err == nil {
		t.Error("empty argv did not fail")
	}
}

func TestExecCancel(t *testing.T) {
	sleep := testenv.LookPath(t, "sleep", "")
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, _, err := Exec{}.Run(ctx, []string{sleep, "10"}, nil, "")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want the context's", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("cancel took %v", d)
	}
}
