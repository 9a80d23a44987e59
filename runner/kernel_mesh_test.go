package runner

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sbench/sbench/kernels"
	"github.com/sbench/sbench/results"
)

// layouts are the steps every kernel runs on: 2, 4 and 8 ranks.
var layouts = []struct {
	name         string
	nodes        []string
	tasksPerNode int
}{
	{"2 ranks on 2 nodes", []string{"n1", "n2"}, 1},
	{"4 ranks on 2 nodes", []string{"n1", "n2"}, 2},
	{"8 ranks on 4 nodes", []string{"n1", "n2", "n3", "n4"}, 2},
}

// runOK runs a step and returns rank 0's bundle, failing the test unless
// every rank succeeded.
func runOK(t *testing.T, s *step) *results.Bundle {
	t.Helper()
	res := s.run()
	for r, rr := range res {
		if rr.err != nil {
			t.Fatalf("rank %d: %v\n%s", r, rr.err, rr.stderr)
		}
	}
	b := s.bundle(res)
	if b.Status != results.StatusOK {
		t.Fatalf("status %s: %s", b.Status, b.Error)
	}
	if err := b.Validate(); err != nil {
		t.Fatalf("invalid bundle: %v", err)
	}
	return b
}

// byMetric groups samples by metric, in order.
func byMetric(b *results.Bundle) map[string][]results.Sample {
	out := map[string][]results.Sample{}
	for _, s := range b.Samples {
		out[s.Metric] = append(out[s.Metric], s)
	}
	return out
}

func xs(ss []results.Sample) string {
	var out []string
	for _, s := range ss {
		if s.X == nil {
			out = append(out, "nil")
			continue
		}
		out = append(out, fmt.Sprint(*s.X))
	}
	return strings.Join(out, " ")
}

// checkStats checks what every sample must hold: a positive value and
// ordered statistics, where given.
func checkStats(t *testing.T, ss []results.Sample) {
	t.Helper()
	for _, s := range ss {
		if !(s.Value > 0) || s.Iterations < 1 {
			t.Errorf("%s at %s: value %v, %d iterations", s.Metric, xs([]results.Sample{s}), s.Value, s.Iterations)
		}
		if s.Min != nil && s.Max != nil && !(*s.Min <= *s.Max) {
			t.Errorf("%s: min %v above max %v", s.Metric, *s.Min, *s.Max)
		}
		if s.P50 != nil && s.Min != nil && s.Max != nil && !(*s.Min <= *s.P50 && *s.P50 <= *s.Max) {
			t.Errorf("%s: p50 %v outside [%v, %v]", s.Metric, *s.P50, *s.Min, *s.Max)
		}
	}
}

func TestBibw(t *testing.T) {
	for _, l := range layouts {
		t.Run(l.name, func(t *testing.T) {
			s := newStep(t, l.nodes, l.tasksPerNode, "bibw", map[string]string{"sizes": "1-65536", "iterations": "5", "window": "8"})
			b := runOK(t, s)
			m := byMetric(b)
			got := m["bidirectional_bandwidth"]
			if len(b.Samples) != 17 || len(got) != 17 || xs(got[:3]) != "1 2 4" {
				t.Fatalf("samples %+v", b.Samples)
			}
			checkStats(t, got)
			for _, s := range got {
				if fmt.Sprint(s.Pair) != "[0 1]" || s.Iterations != 5 || s.Unit != "MB/s" || s.XUnit != "bytes" {
					t.Errorf("sample %+v", s)
				}
			}
		})
	}
}

func TestPairs(t *testing.T) {
	for _, l := range layouts {
		t.Run(l.name, func(t *testing.T) {
			s := newStep(t, l.nodes, l.tasksPerNode, "pairs", map[string]string{"sizes": "1,64,65536", "iterations": "5", "window": "4"})
			b := runOK(t, s)
			m := byMetric(b)
			n := len(l.nodes) * l.tasksPerNode
			bw, agg, rate := m["bandwidth"], m["aggregate_bandwidth"], m["message_rate"]
			if len(bw) != 3*n/2 || len(agg) != 3 || len(rate) != 3 || len(b.Samples) != 3*(n/2+2) {
				t.Fatalf("%d pair samples, %d aggregate, %d rate", len(bw), len(agg), len(rate))
			}
			checkStats(t, b.Samples)
			for i, s := range bw {
				from := i % (n / 2)
				to := from + n/2
				// Block layout: rank i+n/2 is on another node.
				if fmt.Sprint(s.Pair) != fmt.Sprint([]int{from, to}) || s.Tags["placement"] != "inter-node" ||
					s.Tags["from"] != l.nodes[from/l.tasksPerNode] || s.Tags["to"] != l.nodes[to/l.tasksPerNode] {
					t.Errorf("pair sample %d: pair %v tags %v", i, s.Pair, s.Tags)
				}
			}
			for i, a := range agg {
				var sum float64
				for _, s := range bw[i*n/2 : (i+1)*n/2] {
					sum += s.Value
				}
				if d := a.Value - sum; d > sum*1e-5 || d < -sum*1e-5 {
					t.Errorf("aggregate %v at %v is not the sum %v of its pairs", a.Value, *a.X, sum)
				}
				if a.Tags["pairs"] != fmt.Sprint(n/2) || a.Tags["placement"] != "inter-node" {
					t.Errorf("aggregate tags %v", a.Tags)
				}
				// Messages per second × bytes per message ≈ aggregate MB/s.
				if x := *rate[i].X; x >= 64 {
					if mbps := rate[i].Value * x / 1e6; mbps < a.Value*0.5 || mbps > a.Value*2 {
						t.Errorf("at %v bytes: %v messages/s make %v MB/s, aggregate says %v", x, rate[i].Value, mbps, a.Value)
					}
				}
			}
		})
	}
}

func TestPairPlacements(t *testing.T) {
	// 2 nodes × 2 ranks, by block: n1 has ranks 0 and 1, n2 ranks 2 and 3.
	block := []int{0, 0, 1, 1}
	// The same by cyclic: n1 has ranks 0 and 2.
	cyclic := []int{0, 1, 0, 1}
	for _, tt := range []struct {
		nodeOf    []int
		placement string
		want      string
	}{
		{block, kernels.PlacementHalf, "[{0 2} {1 3}]"},
		{block, kernels.PlacementIntra, "[{0 1} {2 3}]"},
		{block, kernels.PlacementInter, "[{0 2} {1 3}]"},
		{cyclic, kernels.PlacementHalf, "[{0 2} {1 3}]"}, // both intra-node there
		{cyclic, kernels.PlacementIntra, "[{0 2} {1 3}]"},
		{cyclic, kernels.PlacementInter, "[{0 1} {2 3}]"},
		{[]int{0, 0, 0, 1, 1, 2}, kernels.PlacementIntra, "[{0 1} {3 4}]"},          // rank 2 and node 2 sit out
		{[]int{0, 0, 1, 1, 2, 2, 3}, kernels.PlacementInter, "[{0 4} {1 5} {2 6}]"}, // node j with node j+2
		{[]int{0, 1, 2}, kernels.PlacementHalf, "[{0 1}]"},
	} {
		got, err := pairRanks(tt.nodeOf, tt.placement)
		if err != nil || fmt.Sprint(got) != tt.want {
			t.Errorf("pairRanks(%v, %s) = %v, %v; want %s", tt.nodeOf, tt.placement, got, err, tt.want)
		}
	}
	for _, tt := range []struct {
		nodeOf    []int
		placement string
		want      string
	}{
		{[]int{0}, kernels.PlacementHalf, "the pairs kernel needs 2 ranks; the step has 1"},
		{[]int{0, 1}, kernels.PlacementIntra, "placement=intra pairs ranks within a node, and no node of the step has 2 ranks"},
		{[]int{0, 0}, kernels.PlacementInter, "placement=inter pairs ranks of different nodes, and the step has 1 node"},
	} {
		if _, err := pairRanks(tt.nodeOf, tt.placement); err == nil || err.Error() != tt.want {
			t.Errorf("pairRanks(%v, %s): %v, want %q", tt.nodeOf, tt.placement, err, tt.want)
		}
	}
}

// TestPairsIntraInter runs both placements on 2 nodes × 2 ranks: the same
// ranks pair up differently, and the tags say where each pair is.
func TestPairsIntraInter(t *testing.T) {
	for _, tt := range []struct{ placement, pairs, kind string }{
		{"intra", "[0 1] [2 3]", "intra-node"},
		{"inter", "[0 2] [1 3]", "inter-node"},
	} {
		t.Run(tt.placement, func(t *testing.T) {
			s := newStep(t, []string{"n1", "n2"}, 2, "pairs", map[string]string{"sizes": "4096", "iterations": "3", "placement": tt.placement})
			b := runOK(t, s)
			m := byMetric(b)
			var pairs []string
			for _, s := range m["bandwidth"] {
				pairs = append(pairs, fmt.Sprint(s.Pair))
				if s.Tags["placement"] != tt.kind {
					t.Errorf("pair %v tagged %q, want %q", s.Pair, s.Tags["placement"], tt.kind)
				}
			}
			if strings.Join(pairs, " ") != tt.pairs || len(m["aggregate_bandwidth"]) != 1 || m["aggregate_bandwidth"][0].Tags["placement"] != tt.kind {
				t.Errorf("pairs %v, aggregate %+v", pairs, m["aggregate_bandwidth"])
			}
		})
	}
}

func indexOf(xs []string, x string) int {
	for i, y := range xs {
		if x == y {
			return i
		}
	}
	return -1
}

func TestAlltoallMemoryLimit(t *testing.T) {
	s := newStep(t, []string{"n1", "n2"}, 1, "alltoall", map[string]string{"sizes": "8,512M"})
	b := s.bundle(s.run())
	want := "param sizes: the alltoall kernel's receive buffer for 2 ranks × 536870912 bytes would take 1024 MiB on every rank, above the limit of 512 MiB; lower the largest size"
	if b.Status != results.StatusFailed || b.Error != want {
		t.Errorf("status %s, error %q", b.Status, b.Error)
	}
}

func TestCollectives(t *testing.T) {
	for _, l := range layouts {
		for _, tt := range []struct {
			kernel string
			sizes  string
		}{
			{"barrier", ""},
			// 128 KiB runs the ring.
			{"allreduce", "8,64,1024,131072"},
			{"alltoall", "1,64,4096,65536"},
			{"bcast", "1,64,4096,65536"},
		} {
			t.Run(l.name+"/"+tt.kernel, func(t *testing.T) {
				params := map[string]string{"iterations": "6", "warmup": "2"}
				if tt.sizes != "" {
					params["sizes"] = tt.sizes
				}
				s := newStep(t, l.nodes, l.tasksPerNode, tt.kernel, params)
				b := runOK(t, s)
				checkCollective(t, b, tt.sizes)
			})
		}
	}
}

func checkCollective(t *testing.T, b *results.Bundle, sizes string) {
	t.Helper()
	want := strings.ReplaceAll(sizes, ",", " ")
	if sizes == "" {
		want = "nil"
	}
	if got := xs(b.Samples); got != want {
		t.Fatalf("samples at %s, want %s", got, want)
	}
	checkStats(t, b.Samples)
	for _, s := range b.Samples {
		if s.Metric != "latency" || s.Unit != "us" || s.Min == nil || s.Max == nil || s.Iterations != 6 ||
			!(*s.Min <= s.Value && s.Value <= *s.Max) {
			t.Errorf("sample %+v", s)
		}
	}
}

// TestCollectivesOddRanks: recursive doubling folds the ranks beyond a
// power of two in, the ring and the binomial tree have uneven parts.
func TestCollectivesOddRanks(t *testing.T) {
	for _, n := range []int{3, 5, 6, 7} {
		nodes := make([]string, n)
		for i := range nodes {
			nodes[i] = fmt.Sprintf("n%d", i+1)
		}
		for _, tt := range []struct{ kernel, sizes string }{
			{"barrier", ""}, {"allreduce", "8,24,131072,131080"}, {"alltoall", "1,65536"}, {"bcast", "1,65536"},
		} {
			t.Run(fmt.Sprintf("%d ranks/%s", n, tt.kernel), func(t *testing.T) {
				params := map[string]string{"iterations": "6", "warmup": "1"}
				if tt.sizes != "" {
					params["sizes"] = tt.sizes
				}
				checkCollective(t, runOK(t, newStep(t, nodes, 1, tt.kernel, params)), tt.sizes)
			})
		}
	}
}

func TestRecursiveDoublingPeers(t *testing.T) {
	// Exchanges must be symmetric: r lists p iff p lists r.
	for n := 2; n <= 33; n++ {
		for r := 0; r < n; r++ {
			for _, p := range rdPeers(r, n) {
				if p < 0 || p >= n || p == r || !containsInt(rdPeers(p, n), r) {
					t.Fatalf("n=%d: rank %d lists %d, which does not list it back (%v)", n, r, p, rdPeers(p, n))
				}
			}
			parent, children := binomial(r, n)
			if (r == 0) != (parent < 0) {
				t.Fatalf("n=%d: rank %d has parent %d", n, r, parent)
			}
			for _, ch := range children {
				if p, _ := binomial(ch, n); p != r {
					t.Fatalf("n=%d: child %d of %d has parent %d", n, ch, r, p)
				}
			}
		}
	}
}

func containsInt(xs []int, x int) bool {
	for _, y := range xs {
		if x == y {
			return true
		}
	}
	return false
}

func TestStream(t *testing.T) {
	for _, l := range layouts {
		t.Run(l.name, func(t *testing.T) {
			s := newStep(t, l.nodes, l.tasksPerNode, "stream", map[string]string{"array_size": "20000", "iterations": "4"})
			b := runOK(t, s)
			m := byMetric(b)
			n := len(l.nodes) * l.tasksPerNode
			checkStats(t, b.Samples)
			for _, k := range []string{"copy", "scale", "add", "triad"} {
				ranks, nodes := m["stream_"+k], m["node_stream_"+k]
				if len(ranks) != n || len(nodes) != len(l.nodes) {
					t.Fatalf("%s: %d rank samples, %d node samples", k, len(ranks), len(nodes))
				}
				for r, s := range ranks {
					if s.Tags["rank"] != fmt.Sprint(r) || s.Tags["node"] != l.nodes[r/l.tasksPerNode] || s.X != nil ||
						s.Iterations != 3 || *s.Max != s.Value {
						t.Errorf("%s rank %d: %+v", k, r, s)
					}
				}
				for i, s := range nodes {
					var sum float64
					for r := i * l.tasksPerNode; r < (i+1)*l.tasksPerNode; r++ {
						sum += ranks[r].Value
					}
					if s.Tags["node"] != l.nodes[i] || s.Tags["ranks"] != fmt.Sprint(l.tasksPerNode) || round(sum) != s.Value {
						t.Errorf("%s node %d: %+v, sum of ranks %v", k, i, s, sum)
					}
				}
			}
		})
	}
}

func TestStreamOneRank(t *testing.T) {
	s := newStep(t, []string{"n1"}, 1, "stream", map[string]string{"array_size": "1000", "iterations": "1"})
	b := runOK(t, s)
	if len(b.Samples) != 8 || b.Samples[0].Iterations != 1 {
		t.Errorf("samples %+v", b.Samples)
	}
}

func TestStreamCheck(t *testing.T) {
	a := newStreamArrays(100)
	for i := 0; i < 5; i++ {
		for k := range streamKernels {
			a.run(k)
		}
	}
	if err := a.check(5); err != nil {
		t.Fatal(err)
	}
	if a.check(4) == nil {
		t.Error("the values of 5 iterations pass for 4")
	}
	a.c[37] *= 1 + 1e-9
	err := a.check(5)
	if err == nil || !strings.Contains(err.Error(), "array c: 1 of 100 elements wrong") || !strings.Contains(err.Error(), "element 37") {
		t.Errorf("corrupted element: %v", err)
	}
}

// TestKernelCorruptionIsDetected changes one byte a rank receives, on an
// iteration that gets a full check, and expects the run to fail saying so.
func TestKernelCorruptionIsDetected(t *testing.T) {
	for _, tt := range []struct {
		kernel string
		params map[string]string
		rank   int // whose received data is corrupted
		size   int
		iter   int
		byteAt int
		want   string
	}{
		// Element 1000 of the vector on a full-check iteration: only the
		// sum can tell.
		{"allreduce", map[string]string{"sizes": "64,8192", "iterations": "20"}, 1, 8192, 16, 8001,
			"wrong sum on rank"},
		// The ring's chunks, on the first and last checked elements.
		{"allreduce", map[string]string{"sizes": "131072", "iterations": "5"}, 3, 131072, 1, 0, "wrong sum on rank"},
		{"pairs", map[string]string{"sizes": "64,65536", "iterations": "10", "window": "4"}, 3, 65536, 32, 1000,
			"pairs kernel: data from rank 1 (node n1) corrupted: 65536-byte message, iteration 32: byte 1000"},
		{"bibw", map[string]string{"sizes": "4096", "iterations": "4", "window": "4"}, 0, 4096, 9, 4095,
			"bibw kernel: data from rank 1 (node n1) corrupted: 4096-byte message, iteration 9: byte 4095"},
		{"bcast", map[string]string{"sizes": "1024", "iterations": "10"}, 2, 1024, 4, 10,
			"bcast kernel: data from rank 0 (node n1) corrupted: 1024-byte message, iteration 4: byte 10"},
		{"alltoall", map[string]string{"sizes": "1024", "iterations": "10"}, 3, 1024, 4, 500,
			"alltoall kernel: data from rank"},
		{"matrix", map[string]string{"latency_size": "64", "bandwidth_size": "4096", "iterations": "10"}, 2, 64, 5, 7,
			"matrix kernel: data from rank 0 (node n1) corrupted: 64-byte message, iteration 5: byte 7"},
	} {
		t.Run(tt.kernel, func(t *testing.T) {
			s := newStep(t, []string{"n1", "n2"}, 2, tt.kernel, tt.params)
			var hit bool
			s.hooks = &testHooks{received: func(rank, size, iter int, buf []byte) {
				if rank == tt.rank && size == tt.size && iter == tt.iter && !hit && tt.byteAt < len(buf) {
					hit = true
					buf[tt.byteAt] ^= 0x40
				}
			}}
			res := s.run()
			b := s.bundle(res)
			if !hit {
				t.Fatal("the hook never corrupted anything")
			}
			if b.Status != results.StatusFailed || !strings.Contains(b.Error, tt.want) {
				t.Fatalf("status %s, error %q; want failed with %q", b.Status, b.Error, tt.want)
			}
			for r, rr := range res {
				if rr.err == nil {
					t.Errorf("rank %d succeeded", r)
				}
			}
		})
	}
}

// TestKernelStuckPeer: a rank that stops answering fails the run within
// the I/O timeout, whatever the others were waiting for.
func TestKernelStuckPeer(t *testing.T) {
	for _, tt := range []struct {
		kernel string
		params map[string]string
	}{
		{"pairs", map[string]string{"sizes": "1024", "iterations": "1000", "window": "4"}},
		{"allreduce", map[string]string{"sizes": "1024", "iterations": "1000"}},
		{"bcast", map[string]string{"sizes": "1024", "iterations": "1000"}},
		{"matrix", map[string]string{"iterations": "1000", "bandwidth_size": "1024"}},
	} {
		t.Run(tt.kernel, func(t *testing.T) {
			s := newStep(t, []string{"n1", "n2"}, 2, tt.kernel, tt.params)
			s.ioTimeout = 300 * time.Millisecond
			release := make(chan struct{})
			var once sync.Once
			unblock := func() { once.Do(func() { close(release) }) }
			defer unblock()
			s.hooks = &testHooks{received: func(rank, size, iter int, buf []byte) {
				if rank == 2 && iter == 50 {
					select { // stuck, until the test ends
					case <-release:
					case <-time.After(5 * time.Second):
					}
				}
			}}
			start := time.Now()
			res := make(chan []rankResult, 1)
			go func() { res <- s.run() }()
			// Rank 0 must give up within the I/O timeout (and a second of
			// grace for the reason to arrive), long before the hook returns.
			deadline := time.After(3 * time.Second)
			var r0 rankResult
			for r0.path == "" {
				select {
				case <-deadline:
					t.Fatal("rank 0 did not give up within 3s")
				case <-time.After(20 * time.Millisecond):
				}
				if p := bundlePath(s.results, s.identity(0), "bench", 0); fileExists(p) {
					r0.path = p
				}
			}
			took := time.Since(start)
			b, err := results.ReadFile(r0.path)
			if err != nil {
				t.Fatal(err)
			}
			if b.Status != results.StatusFailed || !strings.Contains(b.Error, "no progress for 300ms") {
				t.Errorf("status %s, error %q", b.Status, b.Error)
			}
			t.Logf("failed after %s: %s", took.Round(time.Millisecond), b.Error)
			unblock()
			<-res
		})
	}
}

func TestKernelRankDies(t *testing.T) {
	for _, kernel := range []string{"allreduce", "alltoall", "bcast", "pairs", "matrix"} {
		t.Run(kernel, func(t *testing.T) {
			params := map[string]string{"sizes": "64-4096", "iterations": "50"}
			if kernel == "matrix" {
				params = map[string]string{"latency_size": "256", "iterations": "50"}
			}
			s := newStep(t, []string{"n1", "n2"}, 2, kernel, params)
			s.hooks = &testHooks{die: func(rank, size, iter int) bool { return rank == 3 && size == 256 && iter == 10 }}
			if kernel == "matrix" { // rank 3 takes no part
				s.hooks.die = func(rank, size, iter int) bool { return rank == 2 && size == 256 && iter == 10 }
			}
			res := s.run()
			b := s.bundle(res)
			if b.Status != results.StatusFailed || !strings.Contains(b.Error, "(node n2)") ||
				!strings.Contains(b.Error, "connection closed (the process exited or was killed)") {
				t.Fatalf("status %s, error %q; want failed naming the rank that died", b.Status, b.Error)
			}
		})
	}
}

func fileExists(path string) bool {
	_, err := results.ReadFile(path)
	return err == nil
}

func TestMismatchedPlacementFailsTheBootstrap(t *testing.T) {
	s := newStep(t, []string{"n1", "n2"}, 1, "pairs", map[string]string{"sizes": "8"})
	s.edit = func(rank int, cfg *Config) {
		if rank == 1 {
			cfg.Kernel.Placement = kernels.PlacementInter
		}
	}
	res := s.run()
	if b := s.bundle(res); !strings.Contains(b.Error, "rank 1 (node n2) was started with a different configuration") {
		t.Errorf("bundle error %q", b.Error)
	}
}
