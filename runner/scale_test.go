package runner

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
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

// machineTree is a provenance tree of a machine: boot id, hostname and the
// namespaces machineKey reads (any other file is absent, and its fields
// stay empty).
func machineTree(t *testing.T, boot, hostname string) string {
	t.Helper()
	root := t.TempDir()
	for path, data := range map[string]string{
		"proc/sys/kernel/random/boot_id": boot + "\n",
		"proc/sys/kernel/hostname":       hostname + "\n",
	} {
		if err := os.MkdirAll(filepath.Join(root, filepath.Dir(path)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, path), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ns := filepath.Join(root, "proc/self/ns")
	if err := os.MkdirAll(ns, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"net", "mnt", "uts"} {
		if err := os.Symlink(n+":[4026531840]", filepath.Join(ns, n)); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// TestProvenanceOncePerNode: 4 nodes of 3 ranks. Nodes n1 and n2 are one
// machine (two fake nodes, as sbench local makes them), n3 another, and
// n4's machine cannot be told (no boot id). Rank 0 describes n1 and its
// description stands for n2, whose ranks send none; n3 and n4 are
// described by their local rank 0 only. Each description says who wrote
// it (its modules are that rank's LOADEDMODULES), and the local ranks 0
// of n2, n3 and n4 join last, so that a description sent by another rank
// would be the first to arrive, and win.
func TestProvenanceOncePerNode(t *testing.T) {
	s := newStep(t, []string{"n1", "n2", "n3", "n4"}, 3, "barrier", map[string]string{"iterations": "2"})
	machineA := machineTree(t, "aaaa-boot", "host-a")
	machineB := machineTree(t, "bbbb-boot", "host-b")
	unknown := t.TempDir()
	s.edit = func(rank int, cfg *Config) {
		cfg.Root = []string{machineA, machineA, machineB, unknown}[rank/3]
		cfg.Getenv = func(name string) string {
			if name == "LOADEDMODULES" {
				return fmt.Sprintf("by-rank-%d", rank)
			}
			return ""
		}
	}
	s.delay = map[int]time.Duration{3: 300 * time.Millisecond, 6: 300 * time.Millisecond, 9: 300 * time.Millisecond}
	res := s.run()
	for r, rr := range res {
		if rr.err != nil {
			t.Fatalf("rank %d: %v\n%s", r, rr.err, rr.stderr)
		}
	}
	b := s.bundle(res)
	want := []struct {
		node, hostname, by string
		ranks              []int
	}{
		{"n1", "host-a", "by-rank-0", []int{0, 1, 2}},
		{"n2", "host-a", "by-rank-0", []int{3, 4, 5}},
		{"n3", "host-b", "by-rank-6", []int{6, 7, 8}},
		{"n4", "", "by-rank-9", []int{9, 10, 11}},
	}
	if len(b.Hosts) != len(want) {
		t.Fatalf("%d hosts: %+v", len(b.Hosts), b.Hosts)
	}
	for i, w := range want {
		h := b.Hosts[i]
		if h.NodeName != w.node || h.Hostname != w.hostname || !slices.Equal(h.Modules, []string{w.by}) || !slices.Equal(h.Ranks, w.ranks) {
			t.Errorf("host %d: node %s, hostname %q, described %v, ranks %v; want %s, %q, %s, %v",
				i, h.NodeName, h.Hostname, h.Modules, h.Ranks, w.node, w.hostname, w.by, w.ranks)
		}
	}
}

// TestBootstrap256Processes: 256 ranks, each a process of the static
// sbench-runner started as sbench local starts them (2 per fake node,
// provenance from this machine), meet and pass the final barrier; the
// bundle has every node once, with its ranks, all described by rank 0
// (one machine). Timing is BenchmarkBootstrapProcesses' business.
func TestBootstrap256Processes(t *testing.T) {
	if testing.Short() {
		t.Skip("256 processes: not in -short")
	}
	dir := t.TempDir()
	s := processStep(runnerBinary(t), dir, 256)
	var stderr bytes.Buffer
	s.Stderr = &syncWriter{w: &stderr}
	if err := s.Run(context.Background()); err != nil {
		t.Fatalf("%v\n%s", err, firstLines(stderr.String(), 20))
	}
	b, err := results.ReadFile(BundlePath(dir, Identity{JobID: s.JobID, StepID: "0"}, "boot"))
	if err != nil {
		t.Fatal(err)
	}
	if b.Status != results.StatusOK || b.Job.Tasks != 256 || len(b.Hosts) != 128 {
		t.Fatalf("status %s %s, %d tasks, %d hosts", b.Status, b.Error, b.Job.Tasks, len(b.Hosts))
	}
	first := b.Hosts[0]
	for i, h := range b.Hosts {
		if h.NodeName != s.Nodes[i] || !slices.Equal(h.Ranks, []int{2 * i, 2*i + 1}) {
			t.Errorf("host %d: node %s, ranks %v", i, h.NodeName, h.Ranks)
		}
		if h.Hostname != first.Hostname || h.CPUModel != first.CPUModel || h.MemoryBytes != first.MemoryBytes {
			t.Errorf("host %d (%s): %s, %q, %d bytes; node 1: %s, %q, %d bytes", i, h.NodeName,
				h.Hostname, h.CPUModel, h.MemoryBytes, first.Hostname, first.CPUModel, first.MemoryBytes)
		}
	}
	if first.Hostname == "" || first.MemoryBytes == 0 {
		t.Errorf("rank 0 did not describe its node: %+v", first)
	}
}
