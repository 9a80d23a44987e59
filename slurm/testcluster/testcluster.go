package testcluster

import (
	"bytes"
	"context"
	"embed"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

//go:embed start.sh stop.sh shape.sh
var scripts embed.FS

// Lab is a running test cluster.
type Lab struct {
	Dir   string // LABDIR: everything the cluster owns lives here
	Conf  string // its slurm.conf; every Slurm command needs SLURM_CONF=Conf
	Nodes int
	// Netns: every node has its own network namespace, address and link
	// (WithNetns).
	Netns bool

	// The netns lock (NetnsLock), held from Start to Stop: every netns
	// lab takes the same address range, so they run one at a time.
	mu   sync.Mutex
	lock *os.File
}

// NetnsLock is the file a netns lab's process holds locked (flock) while
// the lab runs. Netns labs all use 198.18.0.0/15, so only one can run on
// a machine; go test runs packages in parallel, and two of them start
// netns labs: Start waits its turn on this lock. start.sh, told by
// $SBENCH_NETNS_LOCKED that its caller holds it, knows that a lab it
// finds still holding the range, started under the lock, has lost its
// process (a test killed by go test's -timeout) and stops it; a lab
// started by hand, or while nobody held the lock, it refuses to touch.
func NetnsLock() string { return filepath.Join(os.TempDir(), "sbench-netns-lab.lock") }

// lockNetns takes NetnsLock, waiting for the lab that holds it until ctx
// ends.
func lockNetns(ctx context.Context) (*os.File, error) {
	f, err := os.OpenFile(NetnsLock(), os.O_RDWR|os.O_CREATE, 0o666)
	if err != nil {
		return nil, fmt.Errorf("netns lab lock: %w", err)
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return f, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("netns lab lock %s: %w", f.Name(), err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("wait for the netns lab that holds %s: %w", f.Name(), ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// unlock lets the next netns lab start; only the first call does anything.
func (l *Lab) unlock() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lock != nil {
		l.lock.Close() // closing the last descriptor releases the flock
		l.lock = nil
	}
}

// Option chooses how a lab is started.
type Option func(*config)

type config struct{ netns bool }

// WithNetns puts every fake node in its own network namespace, with its
// own address (nK is 198.18.0.(10+K)), hostname and veth link on one
// bridge, so that node pairs measure different paths and Shape can slow
// one node's link. It needs root and iproute2. Netns labs run one at a
// time on a machine: Start waits for the one that runs (NetnsLock).
func WithNetns() Option { return func(c *config) { c.netns = true } }

// Direction says which way Shape slows a node's link.
type Direction string

const (
	// Both slows what the node sends and what it receives: a slow port.
	Both Direction = "both"
	// Out slows what the node sends (its own end of the veth).
	Out Direction = "out"
	// In slows what the node receives (the bridge's end of the veth).
	In Direction = "in"
)

// NodeAddr is the address of node nK in a netns lab.
func NodeAddr(k int) string { return fmt.Sprintf("198.18.0.%d", 10+k) }

// Env is what a Slurm command needs to reach the lab.
func (l *Lab) Env() []string { return []string{"SLURM_CONF=" + l.Conf} }

// Available says why a lab cannot start here, or nil: the Slurm and munge
// daemons must be installed (start.sh installs them with apt-get only when
// run by hand as root) and we must be root, as the daemons run jobs as
// their submitter.
func Available() error {
	return available(nil)
}

// AvailableNetns says why a netns lab (WithNetns) cannot start here, or
// nil: it needs what Available does, and iproute2's ip and tc, and
// util-linux's nsenter and unshare.
func AvailableNetns() error {
	return available([]string{"ip", "tc", "nsenter", "unshare"})
}

func available(more []string) error {
	var missing []string
	for _, prog := range append([]string{"slurmctld", "slurmd", "munged", "munge", "sinfo", "sbatch", "srun"}, more...) {
		if _, err := lookPath(prog); err != nil {
			missing = append(missing, prog)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("test cluster: not installed: %s (apt-get install slurm-wlm munge iproute2)", strings.Join(missing, ", "))
	}
	if os.Geteuid() != 0 {
		return errors.New("test cluster: needs root")
	}
	return nil
}

// lookPath also looks in the sbin directories, which a non-login PATH may
// lack.
func lookPath(prog string) (string, error) {
	if p, err := exec.LookPath(prog); err == nil {
		return p, nil
	}
	for _, dir := range []string{"/usr/sbin", "/sbin", "/usr/local/sbin"} {
		p := filepath.Join(dir, prog)
		if fi, err := os.Stat(p); err == nil && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", exec.ErrNotFound
}

// Start starts a lab of nodes fake nodes in dir (created if needed; a lab
// already running there is stopped first) and returns when every node is
// idle. The scripts are written to dir/bin. On failure the error carries
// the scripts' output, including the tails of the daemons' logs, and
// whatever was started or made is gone again.
func Start(ctx context.Context, dir string, nodes int, opts ...Option) (*Lab, error) {
	var cfg config
	for _, o := range opts {
		o(&cfg)
	}
	check := Available
	if cfg.netns {
		check = AvailableNetns
	}
	if err := check(); err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("start test cluster: %w", err)
	}
	bin := filepath.Join(abs, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		return nil, fmt.Errorf("start test cluster: %w", err)
	}
	for _, name := range []string{"start.sh", "stop.sh", "shape.sh"} {
		b, err := scripts.ReadFile(name)
		if err != nil {
			return nil, fmt.Errorf("start test cluster: %w", err)
		}
		if err := os.WriteFile(filepath.Join(bin, name), b, 0o755); err != nil {
			return nil, fmt.Errorf("start test cluster: %w", err)
		}
	}
	lab := &Lab{Dir: abs, Conf: filepath.Join(abs, "etc", "slurm.conf"), Nodes: nodes, Netns: cfg.netns}
	args := []string{abs, fmt.Sprint(nodes)}
	var env []string
	if cfg.netns {
		args = append(args, "--netns")
		if lab.lock, err = lockNetns(ctx); err != nil {
			return nil, fmt.Errorf("start test cluster in %s: %w", abs, err)
		}
		env = []string{"SBENCH_NETNS_LOCKED=1"}
	}
	if _, err := runScript(ctx, env, filepath.Join(bin, "start.sh"), args...); err != nil {
		lab.unlock()
		return nil, fmt.Errorf("start test cluster in %s: %w", abs, err)
	}
	return lab, nil
}

// Searchable makes dir and the directory above it searchable by all
// (mode 0755), as munged wants of every directory above its socket: a
// test's t.TempDir() is 0700, its parent too.
func Searchable(dir string) error {
	for _, d := range []string{filepath.Dir(dir), dir} {
		if err := os.Chmod(d, 0o755); err != nil {
			return fmt.Errorf("make %s searchable for munged: %w", d, err)
		}
	}
	return nil
}

// Shape slows node's link to rate (tc's units: "1gbit", "500mbit") in
// the direction d, or takes the shaping off with rate "off". Only a netns
// lab has links to shape.
func (l *Lab) Shape(ctx context.Context, node, rate string, d Direction) error {
	if !l.Netns {
		return fmt.Errorf("shape %s: the lab in %s has no links of its own (start it WithNetns)", node, l.Dir)
	}
	args := []string{l.Dir, node, rate}
	if rate != "off" {
		args = append(args, string(d))
	}
	if _, err := runScript(ctx, nil, filepath.Join(l.Dir, "bin", "shape.sh"), args...); err != nil {
		return fmt.Errorf("shape %s in %s: %w", node, l.Dir, err)
	}
	return nil
}

// Stop cancels the lab's jobs and stops its daemons by their pid files;
// a netns lab also deletes its network and lets the next netns lab start.
// Stopping a stopped lab does nothing.
func (l *Lab) Stop(ctx context.Context) error {
	defer l.unlock()
	if _, err := runScript(ctx, nil, filepath.Join(l.Dir, "bin", "stop.sh"), l.Dir); err != nil {
		return fmt.Errorf("stop test cluster in %s: %w", l.Dir, err)
	}
	return nil
}

// runScript runs script with bash, env added to the environment.
func runScript(ctx context.Context, env []string, script string, args ...string) (string, error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "bash", append([]string{script}, args...)...)
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("%s: %w\n%s", filepath.Base(script), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}
