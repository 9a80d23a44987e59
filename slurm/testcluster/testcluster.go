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
)

//go:embed start.sh stop.sh
var scripts embed.FS

// Lab is a running test cluster.
type Lab struct {
	Dir   string // LABDIR: everything the cluster owns lives here
	Conf  string // its slurm.conf; every Slurm command needs SLURM_CONF=Conf
	Nodes int
}

// Env is what a Slurm command needs to reach the lab.
func (l *Lab) Env() []string { return []string{"SLURM_CONF=" + l.Conf} }

// Available says why a lab cannot start here, or nil: the Slurm and munge
// daemons must be installed (start.sh installs them with apt-get only when
// run by hand as root) and we must be root, as the daemons run jobs as
// their submitter.
func Available() error {
	var missing []string
	for _, prog := range []string{"slurmctld", "slurmd", "munged", "munge", "sinfo", "sbatch", "srun"} {
		if _, err := lookPath(prog); err != nil {
			missing = append(missing, prog)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("test cluster: not installed: %s (apt-get install slurm-wlm munge)", strings.Join(missing, ", "))
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
// the scripts' output, including the tails of the daemons' logs.
func Start(ctx context.Context, dir string, nodes int) (*Lab, error) {
	if err := Available(); err != nil {
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
	for _, name := range []string{"start.sh", "stop.sh"} {
		b, err := scripts.ReadFile(name)
		if err != nil {
			return nil, fmt.Errorf("start test cluster: %w", err)
		}
		if err := os.WriteFile(filepath.Join(bin, name), b, 0o755); err != nil {
			return nil, fmt.Errorf("start test cluster: %w", err)
		}
	}
	if _, err := runScript(ctx, filepath.Join(bin, "start.sh"), abs, fmt.Sprint(nodes)); err != nil {
		return nil, fmt.Errorf("start test cluster in %s: %w", abs, err)
	}
	return &Lab{Dir: abs, Conf: filepath.Join(abs, "etc", "slurm.conf"), Nodes: nodes}, nil
}

// Stop cancels the lab's jobs and stops its daemons by their pid files.
func (l *Lab) Stop(ctx context.Context) error {
	if _, err := runScript(ctx, filepath.Join(l.Dir, "bin", "stop.sh"), l.Dir); err != nil {
		return fmt.Errorf("stop test cluster in %s: %w", l.Dir, err)
	}
	return nil
}

func runScript(ctx context.Context, script string, args ...string) (string, error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "bash", append([]string{script}, args...)...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("%s: %w\n%s", filepath.Base(script), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}
