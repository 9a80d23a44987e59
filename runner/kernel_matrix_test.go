package runner

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sbench/sbench/kernels"
	"github.com/sbench/sbench/results"
)

// matrixLink is a directed link of a matrix bundle, by node names.
type matrixLink struct{ from, to string }

// TestMatrix runs the kernel on 2 to 5 nodes, 1 or 2 ranks each, in both
// schedules: every ordered pair of nodes once, measured between the
// lowest ranks of the nodes, tagged with its round; the rounds of the
// round-robin are n-1 (n for odd n) of n/2 pairs; sequential's are one
// pair each. With retests=0 nothing is re-tested.
func TestMatrix(t *testing.T) {
	for _, tt := range []struct {
		nodes        []string
		tasksPerNode int
		schedule     string
	}{
		{[]string{"a", "b"}, 1, "rounds"},
		{[]string{"n1", "n2", "n3"}, 2, "rounds"},
		{[]string{"cn01", "cn02", "cn03", "cn04"}, 1, "rounds"},
		{[]string{"n1", "n2", "n3", "n4"}, 2, "rounds"},
		{[]string{"n1", "n2", "n3", "n4", "n5"}, 1, "rounds"},
		{[]string{"n1", "n2", "n3", "n4"}, 2, "sequential"},
		{[]string{"n1", "n2", "n3", "n4", "n5"}, 1, "sequential"},
	} {
		t.Run(fmt.Sprintf("%d nodes × %d/%s", len(tt.nodes), tt.tasksPerNode, tt.schedule), func(t *testing.T) {
			s := newStep(t, tt.nodes, tt.tasksPerNode, "matrix", map[string]string{"bandwidth_size": "64K", "iterations": "20",
				"window": "4", "schedule": tt.schedule, "retests": "0"})
			nn := len(tt.nodes)
			var conc *concurrency
			if tt.schedule == "rounds" {
				conc = newConcurrency(nn, tt.tasksPerNode, 8)
				s.hooks = &testHooks{received: conc.hook}
			}
			b := runOK(t, s)
			if conc != nil {
				conc.check(t)
			}
			// The step's own params (transport) stay; the streams wrote
			// (the default send), which a bundle does not say.
			want := map[string]string{"schedule": tt.schedule, "retests": "0", "latency_tolerance": "2.1", "bandwidth_tolerance": "0.93", "transport": "tcp"}
			if !maps.Equal(b.Params, want) {
				t.Errorf("params %v, want %v", b.Params, want)
			}
			m := byMetric(b)
			lat, bw := m["matrix_latency"], m["matrix_bandwidth"]
			if len(lat) != nn*(nn-1) || len(bw) != nn*(nn-1) || len(b.Samples) != 2*nn*(nn-1) {
				t.Fatalf("%d latency and %d bandwidth samples, want %d of each", len(lat), len(bw), nn*(nn-1))
			}
			checkStats(t, b.Samples)
			seen := map[matrixLink]bool{}
			byRound := map[int][]matrixLink{}
			last := 0
			for i, s := range lat {
				if s.X != nil || s.Unit != "us" || s.Iterations != 20 || bw[i].X != nil || bw[i].Unit != "MB/s" {
					t.Errorf("sample %d: %+v / %+v", i, s, bw[i])
				}
				from, to := s.Tags["from"], s.Tags["to"]
				// The lowest rank of each node measures.
				if from == to || s.Pair[0] != indexOf(tt.nodes, from)*tt.tasksPerNode || s.Pair[1] != indexOf(tt.nodes, to)*tt.tasksPerNode {
					t.Errorf("sample %d: pair %v from %s to %s", i, s.Pair, from, to)
				}
				if fmt.Sprint(bw[i].Pair) != fmt.Sprint(s.Pair) || !maps.Equal(bw[i].Tags, s.Tags) {
					t.Errorf("sample %d: bandwidth %v %v, latency %v %v", i, bw[i].Pair, bw[i].Tags, s.Pair, s.Tags)
				}
				r, err := strconv.Atoi(s.Tags["round"])
				if err != nil || r < last || s.Tags["schedule"] != tt.schedule || len(s.Tags) != 4 {
					t.Errorf("sample %d: tags %v after round %d", i, s.Tags, last)
				}
				last = r
				l := matrixLink{from, to}
				if seen[l] {
					t.Errorf("%s to %s measured twice", from, to)
				}
				seen[l] = true
				byRound[r] = append(byRound[r], l)
			}
			if len(seen) != nn*(nn-1) {
				t.Errorf("%d distinct ordered pairs, want %d", len(seen), nn*(nn-1))
			}
			wantRounds, perRound := nn-1+nn%2, nn/2
			if tt.schedule == "sequential" {
				wantRounds, perRound = nn*(nn-1)/2, 1
			}
			if len(byRound) != wantRounds {
				t.Errorf("%d rounds, want %d", len(byRound), wantRounds)
			}
			for r := 1; r <= wantRounds; r++ {
				checkRound(t, r, byRound[r], perRound)
			}
		})
	}
}

// checkRound checks one round's directed links: pairs of nodes both
// ways, a to b first, no node in two pairs.
func checkRound(t *testing.T, r int, links []matrixLink, pairs int) {
	t.Helper()
	if len(links) != 2*pairs {
		t.Errorf("round %d: %v, want %d pairs both ways", r, links, pairs)
		return
	}
	in := map[string]bool{}
	for i := 0; i < len(links); i += 2 {
		ab, ba := links[i], links[i+1]
		if ab.from != ba.to || ab.to != ba.from || in[ab.from] || in[ab.to] {
			t.Errorf("round %d: %v", r, links)
		}
		in[ab.from], in[ab.to] = true, true
	}
}

// concurrency holds every pair of a round at its first message until all
// of the round's pairs have reached theirs: a schedule that measured the
// pairs of a round one after the other would wait there in vain.
type concurrency struct {
	tasksPerNode int
	latencySize  int
	mu           sync.Mutex
	events       map[int][][2]int // per leader rank: (round, first direction's receiver?) of each first message it reads
	next         map[int]int
	arrived      map[int]int // per round
	all          map[int]chan struct{}
	want         map[int]int
	failures     []string
}

func newConcurrency(nodes, tasksPerNode, latencySize int) *concurrency {
	c := &concurrency{tasksPerNode: tasksPerNode, latencySize: latencySize, events: map[int][][2]int{}, next: map[int]int{},
		arrived: map[int]int{}, all: map[int]chan struct{}{}, want: map[int]int{}}
	for r, round := range kernels.MatrixRounds(nodes) {
		c.all[r] = make(chan struct{})
		c.want[r] = len(round)
		for _, pr := range round {
			a, b := pr[0]*tasksPerNode, pr[1]*tasksPerNode
			// a to b: b reads a's first ping, then a b's echo; b to a the
			// other way round.
			c.events[a] = append(c.events[a], [2]int{r, 0}, [2]int{r, 0})
			c.events[b] = append(c.events[b], [2]int{r, 1}, [2]int{r, 0})
		}
	}
	return c
}

func (c *concurrency) hook(rank, size, iter int, buf []byte) {
	if size != c.latencySize || iter != 0 {
		return
	}
	c.mu.Lock()
	i := c.next[rank]
	c.next[rank]++
	if i >= len(c.events[rank]) {
		c.failures = append(c.failures, fmt.Sprintf("rank %d read more first messages than its schedule has", rank))
		c.mu.Unlock()
		return
	}
	ev := c.events[rank][i]
	r := ev[0]
	if ev[1] == 0 {
		c.mu.Unlock()
		return
	}
	c.arrived[r]++
	if c.arrived[r] == c.want[r] {
		close(c.all[r])
	}
	c.mu.Unlock()
	select {
	case <-c.all[r]:
	case <-time.After(10 * time.Second):
		c.mu.Lock()
		c.failures = append(c.failures, fmt.Sprintf("round %d: %d of %d pairs started within 10s", r+1, c.arrived[r], c.want[r]))
		c.mu.Unlock()
	}
}

func (c *concurrency) check(t *testing.T) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, f := range c.failures {
		t.Error(f)
	}
	for r, ch := range c.all {
		select {
		case <-ch:
		default:
			t.Errorf("round %d: %d of %d pairs seen", r+1, c.arrived[r], c.want[r])
		}
	}
}

func TestMatrixNeedsTwoNodes(t *testing.T) {
	s := newStep(t, []string{"n1"}, 2, "matrix", nil)
	b := s.bundle(s.run())
	if b.Status != results.StatusFailed || b.Error != "the matrix kernel needs ranks on 2 nodes; the step has 1 node" {
		t.Errorf("status %s, error %q", b.Status, b.Error)
	}
}

func TestMatrixCounts(t *testing.T) {
	p, _ := ParseKernelParams("matrix", nil)
	li, lw, bwn, bww := matrixCounts(p)
	// 1 MiB × 8 per window: 4 windows make 32 MiB.
	if li != 100 || lw != 10 || bwn != 4 || bww != 1 {
		t.Errorf("counts %d %d %d %d", li, lw, bwn, bww)
	}
	p, _ = ParseKernelParams("matrix", map[string]string{"bandwidth_size": "8", "iterations": "7", "warmup": "0"})
	if li, lw, bwn, _ = matrixCounts(p); li != 7 || lw != 0 || bwn != 100 {
		t.Errorf("counts %d %d %d", li, lw, bwn)
	}
}

// TestMatrixRetest injects a slow link between n2 and n4 (every measured
// message delayed, in every pass) and a transient one between n3 and n5
// (the first pass only), on 5 nodes: each re-test pass measures exactly
// the links the pass before left outside tolerance — judged here from
// the bundle, by the tolerance its params name — with half the
// repetitions, in rounds of disjoint pairs, tagged with the pass; the
// slow link stays in every pass, the transient one leaves after the
// first re-test.
func TestMatrixRetest(t *testing.T) {
	nodes := []string{"n1", "n2", "n3", "n4", "n5"}
	for _, schedule := range []string{"rounds", "sequential"} {
		t.Run(schedule, func(t *testing.T) {
			// Tolerances far from ClusterKit's, so that only the injected
			// delays, not a loaded test machine, can put a link outside.
			s := newStep(t, nodes, 1, "matrix", map[string]string{"latency_size": "8", "bandwidth_size": "4M", "window": "1",
				"iterations": "10", "warmup": "1", "schedule": schedule, "latency_tolerance": "50", "bandwidth_tolerance": "0.01"})
			var mu sync.Mutex
			maxPass := 0
			s.hooks = &testHooks{slow: func(rank, peer, pass int) time.Duration {
				mu.Lock()
				maxPass = max(maxPass, pass)
				mu.Unlock()
				switch {
				case min(rank, peer) == 1 && max(rank, peer) == 3:
					return 5 * time.Millisecond
				case min(rank, peer) == 2 && max(rank, peer) == 4 && pass == 0:
					return 5 * time.Millisecond
				}
				return 0
			}}
			b := runOK(t, s)
			if b.Params["retests"] != "3" || b.Params["latency_tolerance"] != "50" || b.Params["bandwidth_tolerance"] != "0.01" || b.Params["schedule"] != schedule {
				t.Fatalf("params %v", b.Params)
			}
			tol := kernels.Tolerance{LatencyFactor: 50, BandwidthFraction: 0.01}
			passes := matrixPasses(t, b, schedule)
			if len(passes[0].links) != 20 {
				t.Fatalf("first pass: %d links, want 20", len(passes[0].links))
			}
			first := tol.Judge(passes[0].measures)
			v := first
			for k := 1; k <= 3; k++ {
				var want []matrixLink
				for _, i := range v.Suspects() {
					want = append(want, passes[k-1].links[i])
				}
				if len(want) == 0 {
					if k < len(passes) {
						t.Fatalf("re-test %d ran with no link outside tolerance", k)
					}
					break
				}
				if k >= len(passes) {
					t.Fatalf("re-test %d missing: want %v", k, want)
				}
				got := slices.Clone(passes[k].links)
				sortLinks(want)
				sortLinks(got)
				if !slices.Equal(got, want) {
					t.Fatalf("re-test %d measured %v, want the links outside tolerance %v", k, got, want)
				}
				t.Logf("re-test %d: %v", k, got)
				for _, it := range passes[k].iterations {
					// 32 MiB in 4 MiB windows: 8 in the first pass.
					if it != [2]int{max(10>>k, 1), max(8>>k, 1)} {
						t.Errorf("re-test %d: %d round trips, %d windows; want %d, %d", k, it[0], it[1], max(10>>k, 1), max(8>>k, 1))
					}
				}
				v = tol.JudgeAgainst(passes[k].measures, first.MinLatency, first.MaxBandwidth)
			}
			if len(passes) > 4 {
				t.Errorf("%d re-tests, want at most 3", len(passes)-1)
			}
			slow := []matrixLink{{"n2", "n4"}, {"n4", "n2"}}
			transient := []matrixLink{{"n3", "n5"}, {"n5", "n3"}}
			for k := 1; k <= 3; k++ {
				if k >= len(passes) {
					t.Fatalf("%d re-tests, want 3 (the slow link stays slow)", len(passes)-1)
				}
				for _, l := range slow {
					if !slices.Contains(passes[k].links, l) {
						t.Errorf("re-test %d lacks the slow link %v", k, l)
					}
				}
				for _, l := range transient {
					if slices.Contains(passes[k].links, l) != (k == 1) {
						t.Errorf("re-test %d: transient link %v: %v", k, l, passes[k].links)
					}
				}
			}
			if maxPass != 3 {
				t.Errorf("the hook saw passes up to %d, want 3", maxPass)
			}
		})
	}
}

// matrixPassLinks is one pass of a matrix bundle: its directed links in
// order, their measures and repetitions (round trips, windows).
type matrixPassLinks struct {
	links      []matrixLink
	measures   []kernels.LinkMeasure
	iterations [][2]int
}

// matrixPasses reads a matrix bundle's samples by pass (0 the first),
// checking their contract on the way: latency and bandwidth in pairs,
// tags from, to, round, schedule (and pass for re-tests), no node twice
// in a round, one pair per round when sequential.
func matrixPasses(t *testing.T, b *results.Bundle, schedule string) []matrixPassLinks {
	t.Helper()
	var out []matrixPassLinks
	if len(b.Samples)%2 != 0 {
		t.Fatalf("%d samples: not latency and bandwidth in pairs", len(b.Samples))
	}
	inRound := map[[2]string]map[string]bool{}
	for i := 0; i < len(b.Samples); i += 2 {
		ls, bs := b.Samples[i], b.Samples[i+1]
		k := 0
		latMetric, bwMetric, ntags := "matrix_latency", "matrix_bandwidth", 4
		if p, ok := ls.Tags["pass"]; ok {
			k, _ = strconv.Atoi(p)
			latMetric, bwMetric, ntags = "matrix_retest_latency", "matrix_retest_bandwidth", 5
			if k < 1 {
				t.Fatalf("sample %d: pass %q", i, p)
			}
		}
		if ls.Metric != latMetric || bs.Metric != bwMetric || ls.Unit != "us" || bs.Unit != "MB/s" ||
			!maps.Equal(ls.Tags, bs.Tags) || len(ls.Tags) != ntags || ls.Tags["schedule"] != schedule || fmt.Sprint(ls.Pair) != fmt.Sprint(bs.Pair) {
			t.Fatalf("samples %d, %d: %+v, %+v", i, i+1, ls, bs)
		}
		for len(out) <= k {
			out = append(out, matrixPassLinks{})
		}
		if len(out) != k+1 {
			t.Fatalf("sample %d of pass %d after pass %d", i, k, len(out)-1)
		}
		l := matrixLink{ls.Tags["from"], ls.Tags["to"]}
		p := &out[k]
		if slices.Contains(p.links, l) {
			t.Fatalf("pass %d measures %v twice", k, l)
		}
		p.links = append(p.links, l)
		p.measures = append(p.measures, kernels.LinkMeasure{Latency: ls.Value, Bandwidth: bs.Value})
		p.iterations = append(p.iterations, [2]int{ls.Iterations, bs.Iterations})
		key := [2]string{strconv.Itoa(k), ls.Tags["round"]}
		if inRound[key] == nil {
			inRound[key] = map[string]bool{}
		}
		inRound[key][min(l.from, l.to)+"-"+max(l.from, l.to)] = true
	}
	// No node in two pairs of a round.
	for key, pairs := range inRound {
		nodes := map[string]int{}
		for pr := range pairs {
			a, b, _ := strings.Cut(pr, "-")
			nodes[a]++
			nodes[b]++
		}
		for node, n := range nodes {
			if n > 1 {
				t.Errorf("pass %s round %s: %s in %d pairs (%v)", key[0], key[1], node, n, slices.Sorted(maps.Keys(pairs)))
			}
		}
		if schedule == "sequential" && len(pairs) != 1 {
			t.Errorf("pass %s round %s: %d pairs, sequential has one", key[0], key[1], len(pairs))
		}
	}
	return out
}

func sortLinks(ls []matrixLink) {
	slices.SortFunc(ls, func(a, b matrixLink) int {
		return strings.Compare(a.from+" "+a.to, b.from+" "+b.to)
	})
}
