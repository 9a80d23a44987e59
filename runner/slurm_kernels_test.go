package runner

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sbench/sbench/results"
)

// slurmKernel runs a native kernel under srun on the test cluster's fake
// nodes n1 and n2, 2 ranks each, and returns rank 0's bundle.
func slurmKernel(t *testing.T, kernel string, params ...string) *results.Bundle {
	t.Helper()
	requireSlurm(t)
	bin := runnerBinary(t)
	dir := slurmDir(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	argv := []string{"srun", "-N2", "-n4", "--ntasks-per-node=2", bin, "run", "--campaign", "lab", "--variant", "tcp",
		"--benchmark", kernel, "--kernel", kernel, "--results", dir}
	for _, p := range params {
		argv = append(argv, "--param", p)
	}
	out, err := slurmCommand(ctx, dir, argv...).Output()
	if err != nil {
		t.Fatalf("%v\n%s\n%s", err, out, stderrOf(err))
	}
	b, err := results.ReadFile(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatalf("%v (srun printed %q)", err, out)
	}
	if b.Status != results.StatusOK || b.Benchmark.Launcher != "srun" || strings.Join(b.Job.Nodes, " ") != "n1 n2" ||
		b.Job.Tasks != 4 || b.Job.TasksPerNode != "2(x2)" || len(b.Hosts) != 2 || fmt.Sprint(b.Hosts[1].Ranks) != "[2 3]" {
		t.Fatalf("status %s %s, benchmark %+v, job %+v, hosts %+v", b.Status, b.Error, b.Benchmark, b.Job, b.Hosts)
	}
	return b
}

// TestSlurmPairs: srun places ranks 0-1 on n1 and 2-3 on n2 (block), and
// each placement pairs them as the node IDs Slurm gave say.
func TestSlurmPairs(t *testing.T) {
	for _, tt := range []struct{ placement, pairs, kind string }{
		{"half", "[0 2] [1 3]", "inter-node"},
		{"intra", "[0 1] [2 3]", "intra-node"},
		{"inter", "[0 2] [1 3]", "inter-node"},
	} {
		t.Run(tt.placement, func(t *testing.T) {
			b := slurmKernel(t, "pairs", "placement="+tt.placement, "sizes=1-65536", "iterations=10", "window=8")
			m := byMetric(b)
			var pairs []string
			for _, s := range m["bandwidth"][:2] {
				pairs = append(pairs, fmt.Sprint(s.Pair))
			}
			if strings.Join(pairs, " ") != tt.pairs || len(m["bandwidth"]) != 34 || len(m["aggregate_bandwidth"]) != 17 {
				t.Fatalf("pairs %v, %d pair samples, %d aggregates", pairs, len(m["bandwidth"]), len(m["aggregate_bandwidth"]))
			}
			for _, s := range m["bandwidth"] {
				if s.Tags["placement"] != tt.kind || !(s.Value > 0) {
					t.Errorf("sample %+v", s)
				}
			}
		})
	}
}

// TestSlurmMatrix: the lowest rank of n1 and of n2 measure both ways, in
// the one round of 2 nodes; the bundle names the tolerance its re-tests
// (if any) were judged by.
func TestSlurmMatrix(t *testing.T) {
	b := slurmKernel(t, "matrix", "bandwidth_size=256K", "iterations=50")
	m := byMetric(b)
	lat, bw := m["matrix_latency"], m["matrix_bandwidth"]
	if len(lat) != 2 || len(bw) != 2 {
		t.Fatalf("samples %+v", b.Samples)
	}
	for i, want := range []struct{ pair, from, to string }{{"[0 2]", "n1", "n2"}, {"[2 0]", "n2", "n1"}} {
		for _, s := range []results.Sample{lat[i], bw[i]} {
			if fmt.Sprint(s.Pair) != want.pair || s.Tags["from"] != want.from || s.Tags["to"] != want.to ||
				s.Tags["round"] != "1" || s.Tags["schedule"] != "rounds" || !(s.Value > 0) {
				t.Errorf("%s sample %d: %+v", s.Metric, i, s)
			}
		}
	}
	if b.Params["schedule"] != "rounds" || b.Params["retests"] != "3" || b.Params["latency_tolerance"] != "2.1" || b.Params["bandwidth_tolerance"] != "0.93" {
		t.Errorf("params %v", b.Params)
	}
}
