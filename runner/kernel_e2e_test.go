package runner

import (
	"bytes"
	"context"
	"debug/buildinfo"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sbench/sbench/internal/testenv"
	"github.com/sbench/sbench/results"
)

// TestEndToEndMeshKernels runs the mesh kernels (kernel_mesh.go) as sbench
// local does: the built binary, one process per rank, 2 nodes × 2 ranks
// with srun's environment.
func TestEndToEndMeshKernels(t *testing.T) {
	bin := runnerBinary(t)
	for _, tt := range []struct {
		kernel string
		params []string
		check  func(t *testing.T, b *results.Bundle)
	}{
		{"pairs", []string{"sizes=1-65536", "iterations=10", "window=8"}, func(t *testing.T, b *results.Bundle) {
			m := byMetric(b)
			// Ranks 0-1 on local1, 2-3 on local2: pairs (0,2) and (1,3).
			if len(m["bandwidth"]) != 2*17 || len(m["aggregate_bandwidth"]) != 17 || len(m["message_rate"]) != 17 ||
				fmt.Sprint(m["bandwidth"][1].Pair) != "[1 3]" || m["bandwidth"][1].Tags["placement"] != "inter-node" ||
				m["bandwidth"][1].Tags["from"] != "local1" || m["bandwidth"][1].Tags["to"] != "local2" {
				t.Errorf("samples %+v", b.Samples)
			}
		}},
		{"matrix", []string{"bandwidth_size=256K", "iterations=50"}, func(t *testing.T, b *results.Bundle) {
			m := byMetric(b)
			lat, bw := m["matrix_latency"], m["matrix_bandwidth"]
			if len(lat) != 2 || len(bw) != 2 || fmt.Sprint(lat[0].Pair, lat[1].Pair) != "[0 2] [2 0]" ||
				lat[1].Tags["from"] != "local2" || lat[1].Tags["to"] != "local1" || bw[0].X != nil {
				t.Errorf("samples %+v", b.Samples)
			}
		}},
		{"allreduce", []string{"sizes=8-262144", "iterations=20"}, func(t *testing.T, b *results.Bundle) {
			if len(b.Samples) != 16 || b.Samples[0].Metric != "latency" || *b.Samples[15].X != 262144 {
				t.Errorf("samples %+v", b.Samples)
			}
		}},
		{"stream", []string{"array_size=100000", "iterations=3"}, func(t *testing.T, b *results.Bundle) {
			m := byMetric(b)
			if len(m["stream_triad"]) != 4 || len(m["node_stream_triad"]) != 2 || m["stream_triad"][3].Tags["node"] != "local2" {
				t.Errorf("samples %+v", b.Samples)
			}
		}},
	} {
		t.Run(tt.kernel, func(t *testing.T) {
			dir := t.TempDir()
			args := []string{"run", "--campaign", "e2e", "--variant", "tcp", "--benchmark", tt.kernel,
				"--kernel", tt.kernel, "--results", dir, "--label", "site=lab"}
			for _, p := range tt.params {
				args = append(args, "--param", p)
			}
			var stdout, stderr bytes.Buffer
			s := LocalStep{Runner: bin, Args: args, Nodes: []string{"local1", "local2"}, TasksPerNode: 2,
				JobID: "4712", StepID: "0", JobName: "e2e",
				Env:    []string{"SBENCH_TOKEN=e2e-secret", "SBENCH_BIND=127.0.0.1", "SBENCH_BOOTSTRAP_TIMEOUT=20s"},
				Stdout: &stdout, Stderr: &stderr}
			if err := s.Run(context.Background()); err != nil {
				t.Fatalf("%v\nstderr:\n%s", err, stderr.String())
			}
			path := filepath.Join(dir, "4712.0."+tt.kernel+".json")
			b := rank0Bundle(t, stdout.String(), path)
			checkStats(t, b.Samples)
			tt.check(t, b)
			if b.Job.Tasks != 4 || b.Job.TasksPerNode != "2(x2)" || b.Benchmark.Kernel != tt.kernel || b.Benchmark.Launcher != "local" ||
				b.RunnerVersion != "e2e-test" || len(b.Hosts) != 2 || fmt.Sprint(b.Hosts[1].Ranks) != "[2 3]" || b.Hosts[1].Kernel == "" {
				t.Errorf("job %+v, benchmark %+v, runner %s, hosts %+v", b.Job, b.Benchmark, b.RunnerVersion, b.Hosts)
			}
			if !strings.Contains(strings.Join(b.Benchmark.Command, " "), "--kernel "+tt.kernel) {
				t.Errorf("command %q", b.Benchmark.Command)
			}
			// Each host records the commit its binary was stamped with (none
			// under -buildvcs=false).
			info, err := buildinfo.ReadFile(bin)
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range b.Hosts {
				if rev := h.Extra["runner_revision"]; rev != revisionOf(info.Settings) {
					t.Errorf("host %s: runner revision %q, want %q", h.NodeName, rev, revisionOf(info.Settings))
				}
			}
		})
	}
}

// runLocal runs benchmark (args saying what it runs) on nodes, one rank
// each, as sbench local does, and reads its bundle.
func runLocal(t *testing.T, bin string, nodes []string, jobID, benchmark string, args ...string) *results.Bundle {
	t.Helper()
	dir := t.TempDir()
	var stderr bytes.Buffer
	s := LocalStep{Runner: bin, Nodes: nodes, TasksPerNode: 1, JobID: jobID, StepID: "0", Stderr: &stderr,
		Args: append(append([]string{"run", "--campaign", "e2e", "--variant", "v", "--benchmark", benchmark}, args...),
			"--results", dir),
		Env: []string{"SBENCH_TOKEN=t", "SBENCH_BIND=127.0.0.1"}}
	if err := s.Run(context.Background()); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	b, err := results.ReadFile(filepath.Join(dir, jobID+".0."+benchmark+".json"))
	if err != nil {
		t.Fatal(err)
	}
	checkDeclared(t, b)
	return b
}

// TestEndToEndRunnerRevision builds the runner with the checkout's commit
// stamped in (the flag overrides a -buildvcs=false in GOFLAGS) and finds it
// in the bundle's hosts.
func TestEndToEndRunnerRevision(t *testing.T) {
	if testing.Short() {
		t.Skip("builds sbench-runner once more")
	}
	head, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		testenv.Require(t, "no git checkout: "+err.Error())
	}
	bin := testenv.Build(t, "../cmd/sbench-runner", "-buildvcs=true")
	b := runLocal(t, bin, []string{"n1"}, "4713", "rev", "--kernel", "stream", "--param", "array_size=1000", "--param", "iterations=2")
	rev := b.Hosts[0].Extra["runner_revision"]
	if want := strings.TrimSpace(string(head)); rev != want && rev != want+"-dirty" {
		t.Errorf("runner revision %q, want %s (or -dirty)", rev, want)
	}
}

// TestEndToEndExecRecordsMPI: when the exec kernel wraps a tool, each
// node's description names the MPI installed there.
func TestEndToEndExecRecordsMPI(t *testing.T) {
	want := MPIVersion(context.Background())
	if want == "" {
		testenv.Require(t, "no MPI installed")
	}
	bin := runnerBinary(t)
	b := runLocal(t, bin, []string{"n1", "n2"}, "4714", "lat", "--kernel", "exec",
		"--exec", jsonArgv(t, "sh", "-c", "if [ {rank} = 0 ]; then "+osuLatency+"; fi"), "--parser", "osu")
	if len(b.Hosts) != 2 || b.Hosts[0].MPI != want || b.Hosts[1].MPI != want {
		t.Errorf("hosts %+v, want MPI %q on each", b.Hosts, want)
	}
}
