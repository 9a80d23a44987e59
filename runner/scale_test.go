package runner

import (
	"fmt"
	"testing"
	"time"

	"github.com/sbench/sbench/results"
)

// TestBootstrap512Ranks: a step of 512 ranks, goroutines of this process
// on 256 nodes, all started at once, meets and passes its barriers. With
// more ranks in their handshake at once than rank 0 admits
// unauthenticated, some are turned away and must come back; none may fail.
// Timing is BenchmarkBootstrap's business.
func TestBootstrap512Ranks(t *testing.T) {
	if testing.Short() {
		t.Skip("512 ranks: not in -short")
	}
	nodes := make([]string, 256)
	for i := range nodes {
		nodes[i] = fmt.Sprintf("n%d", i)
	}
	s := newStep(t, nodes, 2, "latency", map[string]string{"sizes": "1", "iterations": "1", "warmup": "0"})
	s.root = t.TempDir()
	s.bootTimeout = time.Minute
	res := s.run()
	for r, rr := range res {
		if rr.err != nil {
			t.Errorf("rank %d: %v", r, rr.err)
		}
	}
	if t.Failed() {
		t.FailNow()
	}
	b := s.bundle(res)
	if b.Status != results.StatusOK || b.Job.Tasks != 512 || len(b.Hosts) != 256 {
		t.Fatalf("status %s %s, %d tasks, %d hosts", b.Status, b.Error, b.Job.Tasks, len(b.Hosts))
	}
	for i, h := range b.Hosts {
		if h.NodeName != nodes[i] || len(h.Ranks) != 2 || h.Ranks[0] != 2*i || h.Ranks[1] != 2*i+1 {
			t.Errorf("host %d: node %s, ranks %v", i, h.NodeName, h.Ranks)
		}
	}
}
