// Package testenv is what tests need of the machine they run on, as Go's
// own internal/testenv is: the rule that turns an integration test's skip
// into a failure in CI, directories made read-only for real, a FUSE
// mount, and free TCP ports.
package testenv

import (
	"context"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Require skips the test for why — a tool, a service, a privilege it
// needs and the machine lacks — unless SBENCH_REQUIRE_INTEGRATION=1, as CI
// sets it: there a skip would hide a test that never ran, so it fails.
func Require(t testing.TB, why string) {
	t.Helper()
	if os.Getenv("SBENCH_REQUIRE_INTEGRATION") == "1" {
		t.Fatalf("SBENCH_REQUIRE_INTEGRATION=1 but %s", why)
	}
	t.Skip(why)
}

// Long stops a test that takes minutes — an integration comparison that
// make test leaves to make test-long — unless SBENCH_LONG=1, as make
// test-long sets it. It stops it as Require does: under
// SBENCH_REQUIRE_INTEGRATION=1 a long test run without SBENCH_LONG fails,
// so make test does not run these tests at all (its -skip names them).
func Long(t testing.TB) {
	t.Helper()
	if os.Getenv("SBENCH_LONG") != "1" {
		Require(t, "a long test: make test-long runs it (SBENCH_LONG=1)")
	}
}

// LookPath returns the path of the program tool, or stops the test as
// Require does when it is not installed. pkg is the package that installs
// it, for the message ("" if there is nothing useful to say).
func LookPath(t testing.TB, tool, pkg string) string {
	t.Helper()
	p, err := exec.LookPath(tool)
	if err != nil {
		why := tool + " is not installed"
		if pkg != "" {
			why += " (package " + pkg + ")"
		}
		Require(t, why)
	}
	return p
}

// ReadOnlyDir returns an empty directory and a function that makes it
// read-only to this process and returns the reason sbench should give.
// Root ignores permission bits, so as root the directory is a tmpfs of its
// own, remounted read-only (what a read-only NFS or squashfs mount looks
// like to SQLite); otherwise it is plain permission bits. Without either
// the test cannot run (Require).
func ReadOnlyDir(t testing.TB) (dir string, freeze func() string) {
	t.Helper()
	dir = t.TempDir()
	if os.Geteuid() != 0 {
		// chmod sets the mode of every directory under dir, and of every
		// file when fileMode is not 0.
		chmod := func(dirMode, fileMode os.FileMode) {
			filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
				switch {
				case err != nil:
					return err
				case d.IsDir():
					return os.Chmod(p, dirMode)
				case fileMode != 0:
					return os.Chmod(p, fileMode)
				}
				return nil
			})
		}
		t.Cleanup(func() { chmod(0o755, 0) }) // so that TempDir can remove it
		return dir, func() string {
			chmod(0o555, 0o444)
			return "no write permission"
		}
	}
	if err := syscall.Mount("sbench-test", dir, "tmpfs", 0, "size=16m,mode=0755"); err != nil {
		Require(t, "cannot mount a tmpfs as root ("+err.Error()+"), and permission bits do not bind root")
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	return dir, func() string {
		if err := syscall.Mount("", dir, "", syscall.MS_REMOUNT|syscall.MS_RDONLY, ""); err != nil {
			t.Fatalf("remount %s read-only: %v", dir, err)
		}
		return "read-only file system"
	}
}

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago, for
// a tool under test to listen on.
func FreePort(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}

// FUSEDir returns an empty directory on a FUSE file system — a bindfs
// mount of src, which it returns too — for a test of what sbench does on
// one (sshfs, GlusterFS and the like are FUSE to statfs). The mount goes
// when the test ends; what the test opened there must be closed by
// then, by cleanups registered after this call. Without bindfs or
// /dev/fuse the test cannot run (Require); a mount that fails otherwise
// fails it.
func FUSEDir(t testing.TB) (dir, src string) {
	t.Helper()
	bindfs := LookPath(t, "bindfs", "bindfs")
	if _, err := os.Stat("/dev/fuse"); err != nil {
		Require(t, "no /dev/fuse to mount a FUSE file system: "+err.Error())
	}
	src, dir = t.TempDir(), t.TempDir()
	if out, err := exec.Command(bindfs, src, dir).CombinedOutput(); err != nil {
		t.Fatalf("bindfs %s %s: %v\n%s", src, dir, err, out)
	}
	t.Cleanup(func() {
		var errs []string
		for _, argv := range [][]string{{"fusermount3", "-u", dir}, {"fusermount", "-u", dir}, {"umount", dir}} {
			out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
			if err == nil {
				return
			}
			errs = append(errs, fmt.Sprintf("%s: %v: %s", argv[0], err, out))
		}
		t.Errorf("unmount %s: %s", dir, strings.Join(errs, "; "))
	})
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil || st.Type != 0x65735546 {
		t.Fatalf("bindfs mounted %s, but statfs says type %#x (%v), not FUSE", dir, st.Type, err)
	}
	return dir, src
}

// Context is for a test that runs an outside program which could hang (an
// MPI job, a benchmark): it ends with the test, or a minute before go
// test's -timeout would end the whole package, so a hang fails this test
// by name. A fixed limit of its own would be a timing assertion: a busy
// machine makes an MPI job slow, not wrong.
func Context(t testing.TB) context.Context {
	ctx := context.Background()
	var cancel context.CancelFunc
	if d, ok := t.(interface{ Deadline() (time.Time, bool) }); ok {
		if end, ok := d.Deadline(); ok {
			ctx, cancel = context.WithDeadline(ctx, end.Add(-time.Minute))
			t.Cleanup(cancel)
		}
	}
	return ctx
}
