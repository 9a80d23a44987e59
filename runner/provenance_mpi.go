package runner

import (
	"bytes"
	"context"
	"os/exec"
	"runtime/debug"
	"strings"
	"time"
)

// mpiProbeTimeout bounds how long a node's description waits for the MPI
// library to name itself: a launcher that hangs (a broken module, a dead
// NFS mount) must not hold up the run.
const mpiProbeTimeout = 2 * time.Second

// mpiCommand runs a probe and returns its standard output (and error).
type mpiCommand func(ctx context.Context, argv ...string) ([]byte, error)

// runProbe runs argv if it is installed; a command that is not found
// says nothing.
func runProbe(ctx context.Context, argv ...string) ([]byte, error) {
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, path, argv[1:]...)
	// Open MPI refuses to run as root unless told it may; it only prints
	// its version here.
	cmd.Env = append(cmd.Environ(), "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")
	cmd.WaitDelay = 100 * time.Millisecond
	var out bytes.Buffer
	cmd.Stdout = &out
	err = cmd.Run()
	return out.Bytes(), err
}

// MPIVersion names the MPI library on this node, e.g. "Open MPI 4.1.4",
// "MPICH 4.0.2" or Intel MPI's own line, or "" when there is none. It asks
// the launcher in PATH first (mpirun --version, else mpiexec), since that
// is the MPI a job would use; Hydra names only itself, so then MPICH's
// mpichversion is asked for the library. Without a launcher, ompi_info
// and mpichversion. Every probe shares a 2-second budget.
func MPIVersion(ctx context.Context) string {
	ctx, cancel := context.WithTimeout(ctx, mpiProbeTimeout)
	defer cancel()
	return mpiVersion(ctx, runProbe)
}

func mpiVersion(ctx context.Context, run mpiCommand) string {
	ask := func(argv ...string) string {
		out, err := run(ctx, argv...)
		if len(out) == 0 && err != nil {
			return ""
		}
		return parseMPIVersion(argv[0], out)
	}
	for _, launcher := range []string{"mpirun", "mpiexec"} {
		v := ask(launcher, "--version")
		if v == "" {
			continue
		}
		if strings.HasPrefix(v, "MPICH (Hydra)") {
			if lib := ask("mpichversion"); lib != "" {
				return lib
			}
		}
		return v
	}
	if v := ask("ompi_info", "--parsable", "--version"); v != "" {
		return v
	}
	return ask("mpichversion")
}

// parseMPIVersion reads what tool printed about its version:
//
//	mpirun (Open MPI) 4.1.4                      → Open MPI 4.1.4
//	Open MPI v4.1.4 (ompi_info --version)        → Open MPI 4.1.4
//	ompi:version:full:4.1.4 (ompi_info --parsable) → Open MPI 4.1.4
//	MPICH Version:  4.0.2 (mpichversion)          → MPICH 4.0.2
//	HYDRA build details: … Version: 4.0           → MPICH (Hydra) 4.0
//	Intel(R) MPI Library for Linux* OS, Version 2021.10 Build … → as is
//
// Anything else gives its first line, so that an unknown MPI still says
// what it is; nothing printed gives "".
func parseMPIVersion(tool string, out []byte) string {
	var lines []string
	for _, l := range strings.Split(string(out), "\n") {
		if l = printable(l, 1000); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		return ""
	}
	first := lines[0]
	field := func(line, key string) (string, bool) {
		k, v, ok := strings.Cut(line, ":")
		if !ok || strings.TrimSpace(k) != key {
			return "", false
		}
		v = strings.TrimSpace(v)
		return v, v != ""
	}
	var v string
	switch {
	case strings.HasPrefix(first, "HYDRA build details"):
		v = "MPICH (Hydra)"
		for _, l := range lines[1:] {
			if ver, ok := field(l, "Version"); ok {
				v += " " + ver
				break
			}
		}
	case strings.Contains(first, "(Open MPI)") || strings.Contains(first, "(OpenRTE)") || strings.HasPrefix(first, "Open MPI v"):
		f := strings.Fields(first)
		v = "Open MPI " + strings.TrimPrefix(f[len(f)-1], "v")
	case strings.HasPrefix(first, "ompi:version:full:"):
		v = "Open MPI " + strings.TrimPrefix(first, "ompi:version:full:")
	default:
		// mpichversion: "MPICH Version:    4.0.2", MVAPICH2's likewise.
		if name, ver, ok := strings.Cut(first, " Version:"); ok && !strings.ContainsAny(name, ":,") {
			if ver = strings.TrimSpace(ver); ver != "" {
				v = strings.TrimSpace(name) + " " + ver
				break
			}
		}
		v = first
	}
	return printable(v, 200)
}

// printable keeps at most n bytes of s, without control characters or
// invalid UTF-8: it goes into every bundle.
func printable(s string, n int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f {
			return -1
		}
		return r
	}, s)
	if len(s) > n {
		s = strings.ToValidUTF8(s[:n], "")
	}
	return strings.TrimSpace(s)
}

// RunnerRevision is the version control revision the runner was built
// from, with "-dirty" when the tree had changes, or "" when the build did
// not record one (go build outside a checkout, go test). The Makefile's
// version (git describe) may be a tag alone; this is the exact commit.
func RunnerRevision() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	return revisionOf(info.Settings)
}

func revisionOf(settings []debug.BuildSetting) string {
	var rev string
	dirty := false
	for _, s := range settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev != "" && dirty {
		rev += "-dirty"
	}
	return rev
}
