package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sbench/sbench/results"
)

// step describes an in-process job step: n ranks as goroutines, laid out by
// block over nodes.
type step struct {
	t            *testing.T
	jobID        string
	nodes        []string
	tasksPerNode int
	kernel       string
	params       map[string]string
	results      string
	rundir       string
	token        string
	bootTimeout  time.Duration
	ioTimeout    time.Duration
	hooks        *testHooks
	// skip lists ranks that are never started; delay, ranks started late.
	skip  map[int]bool
	delay map[int]time.Duration
	// ctx gives a rank its context; nil for context.Background().
	ctx func(rank int) context.Context
	// edit changes a rank's configuration last.
	edit func(rank int, cfg *Config)
	// root is the provenance tree; empty for an empty one per rank.
	root string
	// ended, if set, is called when a rank's Run has returned.
	ended func(rank int)
}

var jobSeq atomic.Int64

func newStep(t *testing.T, nodes []string, tasksPerNode int, kernel string, params map[string]string) *step {
	dir := t.TempDir()
	return &step{
		t: t, jobID: fmt.Sprint(1000 + jobSeq.Add(1)), nodes: nodes, tasksPerNode: tasksPerNode,
		kernel: kernel, params: params,
		results: filepath.Join(dir, "results"), rundir: filepath.Join(dir, "run"),
		token: "s3cret", bootTimeout: 10 * time.Second, ioTimeout: 10 * time.Second,
	}
}

func (s *step) size() int { return len(s.nodes) * s.tasksPerNode }

func (s *step) identity(rank int) Identity {
	node := rank / s.tasksPerNode
	tpn := fmt.Sprint(s.tasksPerNode)
	if len(s.nodes) > 1 {
		tpn += fmt.Sprintf("(x%d)", len(s.nodes))
	}
	return Identity{
		Launcher: "srun", Rank: rank, Size: s.size(), LocalRank: rank % s.tasksPerNode, NodeIndex: node,
		NodeName: s.nodes[node], Nodes: s.nodes, TasksPerNode: tpn, Distribution: "block",
		JobID: s.jobID, StepID: "0", JobName: "test", Partition: "debug", Cluster: "lab",
	}
}

func (s *step) config(rank int) Config {
	kp, err := ParseKernelParams(s.kernel, s.params)
	if err != nil {
		panic(err) // a mistake in the test itself
	}
	root := s.root
	if root == "" {
		root = s.t.TempDir()
	}
	cfg := Config{
		Campaign: "camp", Variant: "v1", Benchmark: "bench", Kernel: kp,
		Params: map[string]string{"transport": "tcp"}, Labels: map[string]string{"site": "lab"},
		ResultsDir: s.results, RunDir: s.rundir, Bind: "127.0.0.1",
		BootstrapTimeout: s.bootTimeout, Timeout: time.Minute, IOTimeout: s.ioTimeout,
		Token: []byte(s.token), Identity: s.identity(rank), Command: []string{"sbench-runner", "run"},
		Root: root, Getenv: func(string) string { return "" },
		hooks: s.hooks,
	}
	if s.edit != nil {
		s.edit(rank, &cfg)
	}
	return cfg
}

type rankResult struct {
	path   string
	err    error
	stdout string
	stderr string
	took   time.Duration
}

// run starts every rank and waits for all of them.
func (s *step) run() []rankResult {
	out := make([]rankResult, s.size())
	var wg sync.WaitGroup
	for r := 0; r < s.size(); r++ {
		if s.skip[r] {
			continue
		}
		wg.Add(1)
		go func(r int) {
			defer wg.Done()
			time.Sleep(s.delay[r])
			ctx := context.Background()
			if s.ctx != nil {
				ctx = s.ctx(r)
			}
			var stdout, stderr bytes.Buffer
			cfg := s.config(r)
			cfg.Stdout, cfg.Stderr = &stdout, &syncWriter{w: &stderr}
			start := time.Now()
			path, err := Run(ctx, cfg)
			out[r] = rankResult{path: path, err: err, stdout: stdout.String(), stderr: stderr.String(), took: time.Since(start)}
			if s.ended != nil {
				s.ended(r)
			}
		}(r)
	}
	wg.Wait()
	return out
}

type syncWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.w.Write(p)
}

// runOK runs the step and returns its bundle, failing the test unless
// the run succeeded.
func (s *step) runOK(t *testing.T) *results.Bundle {
	t.Helper()
	b := s.bundle(s.run())
	if b.Status != results.StatusOK {
		t.Fatalf("status %s: %s", b.Status, b.Error)
	}
	return b
}

func (s *step) bundle(res []rankResult) *results.Bundle {
	s.t.Helper()
	if res[0].path == "" {
		s.t.Fatalf("rank 0 wrote no bundle: %v", res[0].err)
	}
	b, err := results.ReadFile(res[0].path)
	if err != nil {
		s.t.Fatal(err)
	}
	return b
}

func checkSamples(t *testing.T, b *results.Bundle, metric, unit string, sizes []int) {
	t.Helper()
	if len(b.Samples) != len(sizes) {
		t.Fatalf("%d samples, want %d", len(b.Samples), len(sizes))
	}
	for i, s := range b.Samples {
		if s.Metric != metric || s.Unit != unit || s.XUnit != results.UnitBytes {
			t.Errorf("sample %d: %s in %s over %s, want %s in %s over bytes", i, s.Metric, s.Unit, s.XUnit, metric, unit)
		}
		if s.X == nil || *s.X != float64(sizes[i]) {
			t.Errorf("sample %d: x = %v, want %d", i, s.X, sizes[i])
		}
		if !(s.Value > 0) || s.Min == nil || s.Max == nil || s.P50 == nil || s.P99 == nil {
			t.Errorf("sample %d: value %v and statistics %v %v %v %v", i, s.Value, s.Min, s.Max, s.P50, s.P99)
			continue
		}
		if !(*s.Min <= *s.P50 && *s.P50 <= *s.P99 && *s.P99 <= *s.Max) {
			t.Errorf("sample %d: min %v p50 %v p99 %v max %v out of order", i, *s.Min, *s.P50, *s.P99, *s.Max)
		}
		if len(s.Pair) != 2 || s.Pair[0] != 0 || s.Pair[1] != 1 {
			t.Errorf("sample %d: pair %v, want [0 1]", i, s.Pair)
		}
	}
}

func TestKernels(t *testing.T) {
	sizes := []int{1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536}
	for _, tt := range []struct {
		name         string
		nodes        []string
		tasksPerNode int
		kernel       string
		metric, unit string
	}{
		{"latency/2 ranks on 2 nodes", []string{"n1", "n2"}, 1, "latency", "latency", "us"},
		{"latency/4 ranks on 2 nodes", []string{"n1", "n2"}, 2, "latency", "latency", "us"},
		{"bw/2 ranks on 1 node", []string{"n1"}, 2, "bw", "bandwidth", "MB/s"},
		{"bw/4 ranks on 4 nodes", []string{"a1", "a2", "a3", "a4"}, 1, "bw", "bandwidth", "MB/s"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := newStep(t, tt.nodes, tt.tasksPerNode, tt.kernel,
				map[string]string{"sizes": "1-65536", "iterations": "20", "warmup": "2"})
			res := s.run()
			for r, rr := range res {
				if rr.err != nil {
					t.Fatalf("rank %d: %v\n%s", r, rr.err, rr.stderr)
				}
			}
			if strings.TrimSpace(res[0].stdout) != res[0].path {
				t.Errorf("rank 0 printed %q, want the bundle path %q", res[0].stdout, res[0].path)
			}
			if res[1].stdout != "" {
				t.Errorf("rank 1 printed %q; only rank 0 prints", res[1].stdout)
			}
			b := s.bundle(res)
			if b.Status != results.StatusOK {
				t.Fatalf("status %s: %s", b.Status, b.Error)
			}
			checkSamples(t, b, tt.metric, tt.unit, sizes)
			if b.Samples[0].Iterations != 20 {
				t.Errorf("iterations %d, want 20", b.Samples[0].Iterations)
			}
			if len(b.Hosts) != len(tt.nodes) {
				t.Fatalf("%d hosts, want %d", len(b.Hosts), len(tt.nodes))
			}
			for i, h := range b.Hosts {
				if h.NodeName != tt.nodes[i] || len(h.Ranks) != tt.tasksPerNode || h.Ranks[0] != i*tt.tasksPerNode {
					t.Errorf("host %d: node %s ranks %v", i, h.NodeName, h.Ranks)
				}
			}
			want := results.Job{ID: s.jobID, Step: "0", Name: "test", Partition: "debug", Cluster: "lab", Nodes: tt.nodes,
				Tasks: len(tt.nodes) * tt.tasksPerNode, TasksPerNode: s.identity(0).TasksPerNode}
			if fmt.Sprint(b.Job) != fmt.Sprint(want) {
				t.Errorf("job %+v, want %+v", b.Job, want)
			}
			if b.Benchmark.Kind != "native" || b.Benchmark.Kernel != tt.kernel || b.Params["transport"] != "tcp" || b.Labels["site"] != "lab" {
				t.Errorf("benchmark %+v params %v labels %v", b.Benchmark, b.Params, b.Labels)
			}
			if _, err := os.Stat(filepath.Join(s.rundir, s.jobID+".0.addr")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the address file is left behind: %v", err)
			}
		})
	}
}

func TestZeroSizeAndSingleSize(t *testing.T) {
	s := newStep(t, []string{"n1", "n2"}, 1, "latency", map[string]string{"sizes": "0-4", "iterations": "5"})
	b := s.bundle(s.run())
	if b.Status != results.StatusOK || len(b.Samples) != 4 || *b.Samples[0].X != 0 || *b.Samples[1].X != 1 {
		t.Fatalf("status %s %s, samples %+v", b.Status, b.Error, b.Samples)
	}
}

func TestCorruptionIsDetected(t *testing.T) {
	for _, tt := range []struct {
		kernel   string
		rank     int // the rank whose received data is corrupted
		size     int
		iter     int
		byteAt   int
		wantText string
	}{
		{"latency", 1, 4096, 7, 100, "data from rank 0 (node n1) corrupted: 4096-byte message, iteration 7: byte 100"},
		{"latency", 0, 64, 3, 63, "data from rank 1 (node n2) corrupted: 64-byte message, iteration 3: byte 63"},
		// Iteration 40 gets only the first/last byte check at 64 KiB…
		{"bw", 1, 65536, 40, 65535, "data from rank 0 (node n1) corrupted: 65536-byte message, iteration 40: byte 65535"},
		// …and iteration 48 (a multiple of 16) the full check.
		{"bw", 1, 65536, 48, 30000, "iteration 48: byte 30000"},
	} {
		t.Run(fmt.Sprintf("%s/rank %d/byte %d", tt.kernel, tt.rank, tt.byteAt), func(t *testing.T) {
			params := map[string]string{"sizes": "1-65536", "iterations": "10"}
			if tt.kernel == "bw" {
				params["window"] = "8"
			}
			s := newStep(t, []string{"n1", "n2"}, 1, tt.kernel, params)
			s.hooks = &testHooks{received: func(rank, size, iter int, buf []byte) {
				if rank == tt.rank && size == tt.size && iter == tt.iter {
					buf[tt.byteAt] ^= 0x40
				}
			}}
			res := s.run()
			b := s.bundle(res)
			if b.Status != results.StatusFailed || !strings.Contains(b.Error, tt.wantText) {
				t.Fatalf("status %s, error %q; want failed with %q", b.Status, b.Error, tt.wantText)
			}
			for r, rr := range res {
				if rr.err == nil || !strings.Contains(rr.err.Error(), "corrupted") {
					t.Errorf("rank %d: error %v, want the corruption", r, rr.err)
				}
			}
			// Sizes before the corrupted one were measured and are kept.
			if len(b.Samples) == 0 || *b.Samples[len(b.Samples)-1].X >= float64(tt.size) {
				t.Errorf("%d samples kept", len(b.Samples))
			}
		})
	}
}

func TestMissingRankFailsWithinTheTimeout(t *testing.T) {
	s := newStep(t, []string{"n1", "n2"}, 2, "latency", map[string]string{"sizes": "1"})
	s.bootTimeout = 700 * time.Millisecond
	s.skip = map[int]bool{2: true}
	res := s.run()
	b := s.bundle(res)
	want := "1 of 4 ranks did not join within 700ms: rank 2 (node n2)"
	if b.Status != results.StatusFailed || !strings.Contains(b.Error, want) {
		t.Fatalf("status %s, error %q; want failed with %q", b.Status, b.Error, want)
	}
	if res[0].took > s.bootTimeout+2*time.Second {
		t.Errorf("rank 0 took %s with a bootstrap timeout of %s", res[0].took, s.bootTimeout)
	}
	for _, r := range []int{1, 3} {
		err := res[r].err
		if err == nil || !strings.Contains(err.Error(), "rank 0 aborted the run") || !strings.Contains(err.Error(), "rank 2 (node n2)") {
			t.Errorf("rank %d: %v; want rank 0's abort naming rank 2", r, err)
		}
		if strings.Contains(err.Error(), "\n") {
			t.Errorf("rank %d: error is not one line: %q", r, err)
		}
	}
	// Ranks that joined are recorded; the missing one is not.
	var ranks []int
	for _, h := range b.Hosts {
		ranks = append(ranks, h.Ranks...)
	}
	if fmt.Sprint(ranks) != "[0 1 3]" {
		t.Errorf("hosts record ranks %v, want [0 1 3]", ranks)
	}
}

func TestRankZeroNeverPublishes(t *testing.T) {
	s := newStep(t, []string{"n1", "n2"}, 1, "latency", map[string]string{"sizes": "1"})
	s.bootTimeout = 300 * time.Millisecond
	s.skip = map[int]bool{0: true}
	res := s.run()
	want := fmt.Sprintf("rank 1 (node n2): bootstrap: rank 0 (node n1) did not publish its address in %s within 300ms", s.rundir)
	if res[1].err == nil || res[1].err.Error() != want {
		t.Fatalf("rank 1: %v\nwant: %s", res[1].err, want)
	}
	if res[1].took > 2*time.Second {
		t.Errorf("rank 1 took %s", res[1].took)
	}
}

func TestBadTokenIsRefusedAndTheRunGoesOn(t *testing.T) {
	s := newStep(t, []string{"n1", "n2"}, 1, "latency", map[string]string{"sizes": "1-1024", "iterations": "10"})
	// Rank 1 starts only after an intruder has tried its luck on rank 0.
	intruded := make(chan error, 1)
	s.ctx = func(rank int) context.Context {
		if rank == 1 {
			if err := <-intruded; err != nil {
				t.Errorf("intruder: %v", err)
			}
		}
		return context.Background()
	}
	go func() {
		path := filepath.Join(s.rundir, s.jobID+".0.addr")
		var data []byte
		for i := 0; i < 200; i++ {
			var err error
			if data, err = os.ReadFile(path); err == nil {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		f, err := parseAddrFile(data)
		if err != nil {
			intruded <- err
			return
		}
		conn, err := net.Dial("tcp", f.Addrs[0])
		if err != nil {
			intruded <- err
			return
		}
		defer conn.Close()
		err = dialHandshake(conn, []byte("wrong"), s.jobID+".0", "join", 1)
		if !errors.Is(err, errRefused) {
			intruded <- fmt.Errorf("handshake with a wrong token: %v, want refusal", err)
			return
		}
		intruded <- nil
	}()
	res := s.run()
	for r, rr := range res {
		if rr.err != nil {
			t.Fatalf("rank %d: %v", r, rr.err)
		}
	}
	if !strings.Contains(res[0].stderr, "refused connection from 127.0.0.1:") || !strings.Contains(res[0].stderr, "bad token") {
		t.Errorf("rank 0 did not log the refusal; stderr:\n%s", res[0].stderr)
	}
	if b := s.bundle(res); b.Status != results.StatusOK || len(b.Samples) != 11 {
		t.Errorf("status %s %s, %d samples", b.Status, b.Error, len(b.Samples))
	}
}

// TestRequeueIgnoresTheFirstAttemptsAddress: the first attempt's rank 0
// died with its node and left its address file. The requeued attempt's
// ranks must not take it for their rank 0's, even when they look before
// their rank 0 has published.
func TestRequeueIgnoresTheFirstAttemptsAddress(t *testing.T) {
	s := newStep(t, []string{"n1", "n2"}, 1, "latency", map[string]string{"sizes": "1", "iterations": "10"})
	s.edit = func(rank int, cfg *Config) { cfg.Identity.Restart = 1 }
	s.delay = map[int]time.Duration{0: 300 * time.Millisecond}
	decoy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer decoy.Close()
	var dialed atomic.Int64
	go func() {
		for {
			conn, err := decoy.Accept()
			if err != nil {
				return
			}
			dialed.Add(1)
			conn.Close()
		}
	}()
	stale := addrFile{Schema: rendezvousSchema, Session: s.jobID + ".0", Node: "n1", Addrs: []string{decoy.Addr().String()}}
	if err := os.MkdirAll(s.rundir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := publishAddr(filepath.Join(s.rundir, s.jobID+".0.addr"), stale); err != nil {
		t.Fatal(err)
	}
	res := s.run()
	for r, rr := range res {
		if rr.err != nil {
			t.Fatalf("rank %d: %v", r, rr.err)
		}
	}
	if n := dialed.Load(); n > 0 {
		t.Errorf("the first attempt's address was dialled %d times", n)
	}
	if want := filepath.Join(s.results, s.jobID+".r1.0.bench.json"); res[0].path != want {
		t.Errorf("bundle %s, want %s", res[0].path, want)
	}
	if b := s.bundle(res); b.Status != results.StatusOK || b.Job.Restart != 1 {
		t.Errorf("status %s, restart %d", b.Status, b.Job.Restart)
	}
}

func TestMismatchedTokensFailFast(t *testing.T) {
	s := newStep(t, []string{"n1", "n2"}, 1, "latency", map[string]string{"sizes": "1"})
	s.edit = func(rank int, cfg *Config) {
		if rank == 1 {
			cfg.Token = []byte("other")
		}
	}
	s.bootTimeout = time.Second
	res := s.run()
	if err := res[1].err; err == nil || !strings.Contains(err.Error(), "authentication failed") {
		t.Errorf("rank 1: %v, want an authentication failure", err)
	}
	if res[1].took > time.Second {
		t.Errorf("rank 1 took %s to notice", res[1].took)
	}
	if b := s.bundle(res); !strings.Contains(b.Error, "rank 1 (node n2) (1 connection was refused for a bad token") {
		t.Errorf("rank 0: %s", b.Error)
	}
}

func TestMismatchedConfigurationFailsTheBootstrap(t *testing.T) {
	s := newStep(t, []string{"n1", "n2"}, 1, "latency", map[string]string{"sizes": "1"})
	s.edit = func(rank int, cfg *Config) {
		if rank == 1 {
			cfg.Kernel.Sizes = []int{2}
		}
	}
	res := s.run()
	b := s.bundle(res)
	if !strings.Contains(b.Error, "rank 1 (node n2) was started with a different configuration") {
		t.Errorf("bundle error %q", b.Error)
	}
	if res[1].err == nil || !strings.Contains(res[1].err.Error(), "different configuration") {
		t.Errorf("rank 1: %v", res[1].err)
	}
}

func TestRankDyingMidKernel(t *testing.T) {
	for _, kernel := range []string{"latency", "bw"} {
		t.Run(kernel, func(t *testing.T) {
			s := newStep(t, []string{"n1", "n2"}, 2, kernel, map[string]string{"sizes": "1-4096", "iterations": "50"})
			s.hooks = &testHooks{die: func(rank, size, iter int) bool { return rank == 1 && size == 256 && iter == 10 }}
			res := s.run()
			b := s.bundle(res)
			if b.Status != results.StatusFailed || !strings.Contains(b.Error, "rank 1 (node n1)") {
				t.Fatalf("status %s, error %q; want failed naming rank 1", b.Status, b.Error)
			}
			if !strings.Contains(b.Error, "connection closed (the process exited or was killed)") {
				t.Errorf("error %q does not say the rank went away", b.Error)
			}
			if len(b.Samples) != 8 {
				t.Errorf("%d samples kept, want the 8 sizes below 256", len(b.Samples))
			}
			for _, r := range []int{2, 3} {
				if err := res[r].err; err == nil || !strings.Contains(err.Error(), "rank 0 aborted the run") {
					t.Errorf("rank %d: %v", r, err)
				}
			}
		})
	}
}

func TestSignalOnRankZeroWritesAFailedBundle(t *testing.T) {
	s := newStep(t, []string{"n1", "n2"}, 1, "latency", map[string]string{"sizes": "1-4096", "iterations": "10000000"})
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	s.ctx = func(rank int) context.Context {
		if rank == 0 {
			return ctx
		}
		return context.Background()
	}
	s.hooks = &testHooks{received: func(rank, size, iter int, buf []byte) {
		if rank == 0 && iter == 100 {
			cancel(errors.New("interrupted by SIGTERM"))
		}
	}}
	res := s.run()
	b := s.bundle(res)
	if b.Status != results.StatusFailed || b.Error != "interrupted by SIGTERM" {
		t.Fatalf("status %s, error %q", b.Status, b.Error)
	}
	if err := res[1].err; err == nil || !strings.Contains(err.Error(), "rank 0 aborted the run: interrupted by SIGTERM") {
		t.Errorf("rank 1: %v", err)
	}
}

func TestRunTimeout(t *testing.T) {
	// Every rank has the deadline, counted from its own start: whichever
	// rank hits it first, the run timed out, and no rank is to blame.
	for _, late := range []int{-1, 0, 1} {
		t.Run(fmt.Sprintf("late rank %d", late), func(t *testing.T) {
			s := newStep(t, []string{"n1", "n2"}, 1, "bw", map[string]string{"sizes": "1", "iterations": "10000000"})
			s.edit = func(rank int, cfg *Config) { cfg.Timeout = 300 * time.Millisecond }
			s.delay = map[int]time.Duration{late: 200 * time.Millisecond}
			res := s.run()
			b := s.bundle(res)
			if b.Status != results.StatusFailed || b.Error != "the run exceeded its 300ms timeout" {
				t.Errorf("status %s, error %q", b.Status, b.Error)
			}
			for r, rr := range res {
				if rr.took > 3*time.Second {
					t.Errorf("rank %d took %s", r, rr.took)
				}
			}
		})
	}
}

func TestSingleRankStepFails(t *testing.T) {
	s := newStep(t, []string{"n1"}, 1, "latency", map[string]string{"sizes": "1"})
	b := s.bundle(s.run())
	if b.Status != results.StatusFailed || b.Error != "the latency kernel needs 2 ranks; the step has 1" {
		t.Errorf("status %s, error %q", b.Status, b.Error)
	}
}

func TestHostsFromProvenance(t *testing.T) {
	s := newStep(t, []string{"n1", "n2"}, 2, "latency", map[string]string{"sizes": "1", "iterations": "2"})
	roots := map[int]string{0: fakeTree(t, "host-a", "Xeon A"), 2: fakeTree(t, "host-b", "Xeon B")}
	s.edit = func(rank int, cfg *Config) {
		cfg.Root = roots[rank]
		cfg.Getenv = func(k string) string {
			if k == "LOADEDMODULES" {
				return "gcc/13:openmpi/5"
			}
			return ""
		}
		if rank%2 == 1 {
			cfg.Root = "/nonexistent" // not a local rank 0: never read
		}
	}
	b := s.bundle(s.run())
	if len(b.Hosts) != 2 {
		t.Fatalf("%d hosts", len(b.Hosts))
	}
	for i, want := range []struct{ host, node, cpu, ranks string }{{"host-a", "n1", "Xeon A", "[0 1]"}, {"host-b", "n2", "Xeon B", "[2 3]"}} {
		h := b.Hosts[i]
		if h.Hostname != want.host || h.NodeName != want.node || h.CPUModel != want.cpu || fmt.Sprint(h.Ranks) != want.ranks || len(h.Modules) != 2 {
			t.Errorf("host %d: %+v", i, h)
		}
	}
}

func TestDerivedTokenWarns(t *testing.T) {
	s := newStep(t, []string{"n1", "n2"}, 1, "latency", map[string]string{"sizes": "1", "iterations": "2"})
	s.token = ""
	res := s.run()
	if res[0].err != nil || res[1].err != nil {
		t.Fatalf("errors: %v, %v", res[0].err, res[1].err)
	}
	if !strings.Contains(res[0].stderr, "warning: SBENCH_TOKEN is not set") {
		t.Errorf("no warning; stderr:\n%s", res[0].stderr)
	}
	other := s.identity(0)
	other.StepID = "1"
	if bytes.Equal(DerivedToken(s.identity(0)), DerivedToken(other)) {
		t.Error("two steps derive the same token")
	}
}

func TestUnsafeNames(t *testing.T) {
	for _, name := range []string{"", "../x", "a/b", ".hidden", "a b", "a..b", strings.Repeat("x", 129)} {
		if CheckBenchmarkName(name) == nil {
			t.Errorf("benchmark name %q accepted", name)
		}
	}
	for _, name := range []string{"pingpong", "osu_bw-2", "hpl.v2", "N+1"} {
		if err := CheckBenchmarkName(name); err != nil {
			t.Errorf("benchmark name %q: %v", name, err)
		}
	}
}

func TestIdleRanksWaitForALongKernel(t *testing.T) {
	// The kernel runs far longer than the I/O timeout: ranks 2 and 3, idle
	// at the final barrier all along, must not give up on it.
	s := newStep(t, []string{"n1", "n2"}, 2, "latency", map[string]string{"sizes": "1", "iterations": "10000000"})
	// The busy pair, ranks 0 and 1, is held to the timeout too: 200ms
	// without a message between them was seen at load 20. A second is
	// far from that, and the idle ranks still wait three of them.
	s.ioTimeout = time.Second
	var start time.Time
	s.hooks = &testHooks{received: func(rank, size, iter int, buf []byte) {
		if rank != 0 {
			return
		}
		if iter == 0 {
			start = time.Now()
		}
		if time.Since(start) > 3*s.ioTimeout {
			buf[0] ^= 1 // end the run the quick way
		}
	}}
	res := s.run()
	b := s.bundle(res)
	if !strings.Contains(b.Error, "latency kernel: data from rank 1 (node n1) corrupted") {
		t.Fatalf("error %q, want the corruption that ended the kernel after 3s", b.Error)
	}
	for _, r := range []int{2, 3} {
		if err := res[r].err; err == nil || !strings.Contains(err.Error(), "rank 0 aborted the run: latency kernel: data from rank 1") {
			t.Errorf("rank %d: %v, want rank 0's abort for the corruption", r, err)
		}
	}
}

func TestManyRanks(t *testing.T) {
	nodes := make([]string, 16)
	for i := range nodes {
		nodes[i] = fmt.Sprintf("cn%02d", i+1)
	}
	s := newStep(t, nodes, 4, "latency", map[string]string{"sizes": "1-8", "iterations": "5"})
	res := s.run()
	for r, rr := range res {
		if rr.err != nil {
			t.Fatalf("rank %d: %v", r, rr.err)
		}
	}
	b := s.bundle(res)
	if b.Status != results.StatusOK || len(b.Hosts) != 16 || b.Job.Tasks != 64 {
		t.Fatalf("status %s %s, %d hosts, %d tasks", b.Status, b.Error, len(b.Hosts), b.Job.Tasks)
	}
	for i, h := range b.Hosts {
		if h.NodeName != nodes[i] || fmt.Sprint(h.Ranks) != fmt.Sprint([]int{4 * i, 4*i + 1, 4*i + 2, 4*i + 3}) {
			t.Errorf("host %d: %s %v", i, h.NodeName, h.Ranks)
		}
	}
}
