package runner

import (
	"fmt"
	"testing"
	"time"

	"github.com/sbench/sbench/results"
)

// BenchmarkKernelFigures runs each mesh kernel (kernel_mesh.go) as a whole
// in-process step (ranks as goroutines over loopback) and reports the
// kernel's own figure as the benchmark's metric, averaged over b.N steps:
//
//	go test -run XXX -bench KernelFigures -benchtime 3x ./runner
//
// The ranks share this machine's cores: figures with more ranks than cores
// measure the scheduler as much as the kernel.
func BenchmarkKernelFigures(b *testing.B) {
	for _, bb := range []struct {
		name         string
		nodes        int
		tasksPerNode int
		kernel       string
		params       map[string]string
		metric       string // of the sample reported
		x            float64
		unit         string
	}{
		{"barrier/2", 2, 1, "barrier", map[string]string{"iterations": "2000"}, "latency", -1, "us"},
		{"barrier/8", 4, 2, "barrier", map[string]string{"iterations": "2000"}, "latency", -1, "us"},
		{"allreduce-8B/2", 2, 1, "allreduce", map[string]string{"sizes": "8", "iterations": "1000"}, "latency", 8, "us"},
		{"allreduce-8B/8", 4, 2, "allreduce", map[string]string{"sizes": "8", "iterations": "1000"}, "latency", 8, "us"},
		{"allreduce-1MiB/8", 4, 2, "allreduce", map[string]string{"sizes": "1M", "iterations": "50"}, "latency", 1 << 20, "us"},
		{"bcast-8B/8", 4, 2, "bcast", map[string]string{"sizes": "8", "iterations": "1000"}, "latency", 8, "us"},
		{"alltoall-8B/8", 4, 2, "alltoall", map[string]string{"sizes": "8", "iterations": "1000"}, "latency", 8, "us"},
		{"bibw-4MiB/2", 2, 1, "bibw", map[string]string{"sizes": "4M", "iterations": "10", "window": "16"}, "bidirectional_bandwidth", 4 << 20, "MB/s"},
		{"pairs-1MiB/4", 2, 2, "pairs", map[string]string{"sizes": "1M", "iterations": "20", "window": "16"}, "aggregate_bandwidth", 1 << 20, "MB/s"},
		{"matrix/8nodes", 8, 1, "matrix", map[string]string{}, "matrix_bandwidth", -1, "MB/s"},
		{"stream-triad/1", 1, 1, "stream", map[string]string{}, "stream_triad", -1, "MB/s"},
		{"stream-triad/2", 1, 2, "stream", map[string]string{}, "node_stream_triad", -1, "MB/s"},
	} {
		b.Run(bb.name, func(b *testing.B) {
			nodes := make([]string, bb.nodes)
			for i := range nodes {
				nodes[i] = fmt.Sprintf("n%d", i+1)
			}
			var sum float64
			var took time.Duration
			for i := 0; i < b.N; i++ {
				s := &step{jobID: fmt.Sprint(1000 + jobSeq.Add(1)), nodes: nodes, tasksPerNode: bb.tasksPerNode,
					kernel: bb.kernel, params: bb.params, results: b.TempDir(), rundir: b.TempDir(), token: "t",
					bootTimeout: time.Minute, ioTimeout: time.Minute, root: b.TempDir()}
				start := time.Now()
				res := s.run()
				took += time.Since(start)
				for r, rr := range res {
					if rr.err != nil {
						b.Fatalf("rank %d: %v", r, rr.err)
					}
				}
				bundle, err := results.ReadFile(res[0].path)
				if err != nil {
					b.Fatal(err)
				}
				v, ok := figure(bundle, bb.metric, bb.x)
				if !ok {
					b.Fatalf("no %s sample at %v in %+v", bb.metric, bb.x, bundle.Samples)
				}
				sum += v
			}
			b.ReportMetric(sum/float64(b.N), bb.unit)
			b.ReportMetric(took.Seconds()/float64(b.N), "s/step")
			b.ReportMetric(0, "ns/op") // a step's wall time is above; ns/op would repeat it
		})
	}
}

// figure is the first sample of metric at x (any x when x < 0), or the
// mean of all of them for per-pair and per-rank metrics.
func figure(b *results.Bundle, metric string, x float64) (float64, bool) {
	var sum float64
	n := 0
	for _, s := range b.Samples {
		if s.Metric != metric || x >= 0 && (s.X == nil || *s.X != x) {
			continue
		}
		sum += s.Value
		n++
	}
	return sum / float64(max(n, 1)), n > 0
}
