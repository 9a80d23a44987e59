package slurm

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sbench/sbench/internal/testenv"
)

// TestRealCluster runs the shared suite against the Slurm that SLURM_CONF
// names, e.g. one started with slurm/testcluster/start.sh:
//
//	eval "$(slurm/testcluster/start.sh /tmp/lab)"
//	go test -run RealCluster -v ./slurm/
//	slurm/testcluster/stop.sh /tmp/lab
func TestRealCluster(t *testing.T) {
	if os.Getenv("SLURM_CONF") == "" {
		testenv.Require(t, "SLURM_CONF is not set (start a lab with slurm/testcluster/start.sh)")
	}
	for _, tool := range []string{"sbatch", "squeue", "scontrol", "scancel", "sacct"} {
		testenv.LookPath(t, tool, "slurm-client")
	}
	// Slurm's daemons run the job scripts and write their output here: a
	// directory of ours under /tmp, readable by them.
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	nodes, err := (&Client{}).Nodes(ctx)
	if err != nil {
		t.Fatalf("is the cluster up? %v", err)
	}
	t.Logf("cluster has %d nodes: %+v", len(nodes), nodes)
	runSuite(t, cluster{
		New:     func(r Runner) *Client { return &Client{R: r} },
		Dir:     dir,
		Args:    []string{"--time=5", "-o", filepath.Join(dir, "%x-%j.out")},
		Poll:    200 * time.Millisecond,
		Timeout: 60 * time.Second,
	})
}
