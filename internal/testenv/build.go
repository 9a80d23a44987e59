package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// built is one command compiled by Build.
type built struct {
	once sync.Once
	path string
	err  error
}

var (
	buildMu sync.Mutex
	builds  = map[string]*built{} // by directory and flags
)

// Build compiles the Go command in dir (relative to the test's package) as
// the Makefile ships it — CGO_ENABLED=0, with Go's own resolver and user
// lookup (tags netgo,osusergo) — plus the extra go build flags, once per
// test binary. It returns the binary's path: named after dir, alone in a
// directory of its own. Without a go command the test cannot run
// (Require). The package's TestMain calls RemoveBuilt after m.Run.
func Build(t testing.TB, dir string, flags ...string) string {
	t.Helper()
	goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(goTool); err != nil {
		if goTool, err = exec.LookPath("go"); err != nil {
			Require(t, "no go command to build "+dir)
		}
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	key := strings.Join(append([]string{abs}, flags...), "\x00")
	buildMu.Lock()
	b := builds[key]
	if b == nil {
		b = new(built)
		builds[key] = b
	}
	buildMu.Unlock()
	b.once.Do(func() {
		tmp, err := os.MkdirTemp("", "sbench-build")
		if err != nil {
			b.err = err
			return
		}
		b.path = filepath.Join(tmp, filepath.Base(abs))
		args := append(append([]string{"build", "-tags", "netgo,osusergo", "-o", b.path}, flags...), abs)
		cmd := exec.Command(goTool, args...)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			b.err = fmt.Errorf("%w\n%s", err, out)
		}
	})
	if b.err != nil {
		t.Fatalf("build %s: %v", dir, b.err)
	}
	return b.path
}

// RemoveBuilt removes the binaries Build compiled.
func RemoveBuilt() {
	buildMu.Lock()
	defer buildMu.Unlock()
	for _, b := range builds {
		if b.path != "" {
			os.RemoveAll(filepath.Dir(b.path))
		}
	}
}
