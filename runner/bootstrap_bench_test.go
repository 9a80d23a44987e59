package runner

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/sbench/sbench/results"
)

// bootstrapSizes are the step sizes of the bootstrap benchmarks: up to 512
// ranks, to show how the bootstrap grows (O(n) connections and messages
// at rank 0; the table it sends each rank grows with n too).
var bootstrapSizes = []int{2, 8, 32, 64, 128, 256, 512}

// BenchmarkBootstrap measures a whole step with a trivial kernel, ranks as
// goroutines of one process: the bootstrap (publish, n-1 joins, table,
// barrier) and the final barrier. ns/rank is the time per op over n: flat
// when the bootstrap is linear.
func BenchmarkBootstrap(b *testing.B) {
	for _, n := range bootstrapSizes {
		b.Run(fmt.Sprintf("ranks=%d", n), func(b *testing.B) {
			nodes := make([]string, n/2)
			for i := range nodes {
				nodes[i] = fmt.Sprintf("n%d", i)
			}
			root := b.TempDir()
			for i := 0; i < b.N; i++ {
				s := &step{jobID: fmt.Sprint(1000 + jobSeq.Add(1)), nodes: nodes, tasksPerNode: 2,
					kernel: "latency", params: map[string]string{"sizes": "1", "iterations": "1", "warmup": "0"},
					results: b.TempDir(), rundir: b.TempDir(), token: "t", bootTimeout: time.Minute, ioTimeout: time.Minute,
					root: root}
				for r, rr := range s.run() {
					if rr.err != nil {
						b.Fatalf("rank %d: %v", r, rr.err)
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/rank")
		})
	}
}

// BenchmarkBootstrapProcesses is BenchmarkBootstrap with every rank a
// process of the static sbench-runner, started by LocalStep as `sbench
// local` starts them (2 ranks per fake node, provenance read from this
// machine): process start-up included, which dominates on few cores.
func BenchmarkBootstrapProcesses(b *testing.B) {
	bin := benchRunnerBinary(b)
	for _, n := range bootstrapSizes {
		b.Run(fmt.Sprintf("ranks=%d", n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				dir := b.TempDir()
				s := processStep(bin, dir, n)
				if err := s.Run(context.Background()); err != nil {
					b.Fatal(err)
				}
				bundle, err := results.ReadFile(BundlePath(dir, Identity{JobID: s.JobID, StepID: "0"}, "boot"))
				if err != nil {
					b.Fatal(err)
				}
				if bundle.Status != results.StatusOK || bundle.Job.Tasks != n {
					b.Fatalf("status %s %s, %d tasks", bundle.Status, bundle.Error, bundle.Job.Tasks)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/rank")
		})
	}
}

// processStep is a step of n ranks, processes of bin on n/2 fake nodes,
// with a trivial kernel whose bundle goes to dir: what
// BenchmarkBootstrapProcesses times and TestBootstrap256Processes checks.
func processStep(bin, dir string, n int) LocalStep {
	nodes := make([]string, (n+1)/2)
	for i := range nodes {
		nodes[i] = fmt.Sprintf("local%d", i+1)
	}
	return LocalStep{
		Runner: bin,
		Args: []string{"run", "--campaign", "bench", "--variant", "v", "--benchmark", "boot",
			"--kernel", "latency", "--param", "sizes=1", "--param", "iterations=1", "--param", "warmup=0",
			"--results", dir},
		Nodes: nodes, TasksPerNode: 2, Ranks: n, JobID: fmt.Sprint(2000 + jobSeq.Add(1)), StepID: "0", JobName: "bench",
		Env: []string{"SBENCH_TOKEN=bench", "SBENCH_BIND=127.0.0.1", "SBENCH_BOOTSTRAP_TIMEOUT=5m"},
	}
}

// benchRunnerBinary builds cmd/sbench-runner as shipped (static,
// stripped), for the benchmark's lifetime.
func benchRunnerBinary(b *testing.B) string {
	b.Helper()
	bin := filepath.Join(b.TempDir(), "sbench-runner")
	cmd := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "build", "-tags", "netgo,osusergo", "-trimpath", "-ldflags", "-s -w",
		"-o", bin, "../cmd/sbench-runner")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("build sbench-runner: %v\n%s", err, out)
	}
	return bin
}
