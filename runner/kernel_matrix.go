package runner

import (
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/sbench/sbench/kernels"
	"github.com/sbench/sbench/results"
)

// runMatrix measures every ordered pair of nodes between the lowest rank
// of each node (the node's leader; the other ranks only wait for the end),
// then re-tests the links found outside tolerance.
//
// The first pass follows the schedule parameter: rounds of n/2 disjoint
// pairs (kernels.MatrixRounds), each after a barrier of its participants,
// or one pair per round after a barrier of every leader (sequential, for
// fabrics where concurrent pairs share links). A pair (a, b) measures a to
// b, then b to a: the latency at latency_size (ping-pong, the median of
// the round trips' halves) and the bandwidth at bandwidth_size (windows,
// as bw). The measuring ("from") side keeps its summary; every leader
// sends rank 0 what it measured every matrixDrainEvery rounds and at the
// end of the pass.
//
// Rank 0 then judges the pass (kernels.Tolerance) and, while links are
// outside and fewer than retests passes have run, broadcasts them to the
// leaders, which re-test only those directions (kernels.PackRounds), with
// half the repetitions of the pass before, judged against the first
// pass's lowest latency and highest bandwidth. Whether a link is bad is
// sbench screen's call: the kernel measures and tags.
//
// Samples have no x: they fill a heatmap, from row to column, with tags
// from, to, round (1-based, within its pass) and schedule; the matrix_*
// metrics from the first pass, matrix_retest_* (tag pass, from 1) from
// the re-tests.
func runMatrix(ctx context.Context, c *comm, p KernelParams, hooks *testHooks) ([]results.Sample, error) {
	nodes := ranksByNode(c.nodeOfRanks())
	if len(nodes) < 2 {
		return nil, fmt.Errorf("the matrix kernel needs ranks on 2 nodes; the step has %d node%s", len(nodes), results.Plural(len(nodes)))
	}
	if err := p.Tolerance.Check(); err != nil {
		return nil, fmt.Errorf("matrix kernel: %w (a bug in sbench-runner: the parameters are checked before)", err)
	}
	x := &matrixRun{ctx: ctx, c: c, p: p, leaders: make([]int, len(nodes)), me: -1}
	for i, ranks := range nodes {
		x.leaders[i] = ranks[0]
		if ranks[0] == c.id.Rank {
			x.me = i
		}
		if ranks[0] == 0 {
			x.root = i
		}
	}
	if x.me < 0 {
		return nil, nil
	}
	m, err := openMesh(ctx, c, p.Kernel, hooks, x.leaders)
	if err != nil {
		return nil, err
	}
	defer m.close()
	m.sendMode = p.Send
	x.m = m
	return x.run()
}

// matrixDrainEvery is how many rounds the leaders' summaries wait before
// they go to rank 0: a few KiB per connection, which socket buffers hold,
// so that no leader waits for rank 0 to read; and a failure late in a
// long pass keeps what was measured before it.
const matrixDrainEvery = 64

// matrixRun is one leader's part of the matrix kernel.
type matrixRun struct {
	ctx     context.Context
	c       *comm
	p       KernelParams
	m       *mesh
	leaders []int // each node's leader, by node index
	me      int   // this leader's node index
	root    int   // rank 0's node index
	// rounds and drains count what every leader has passed, the same on
	// all: they number the barriers and the reports.
	rounds, drains int
	// pending are this leader's measurements not yet sent to rank 0.
	pending []float64
	// got are rank 0's measurements of the pass, by directed link.
	got map[[2]int]linkResult
}

// matrixMatch is one pair of a round: nodes a < b, and the directions
// measured, a to b first.
type matrixMatch struct {
	a, b int
	dirs uint8 // dirAB, dirBA
}

const (
	dirAB uint8 = 1 << iota
	dirBA
)

// matrixPass is one pass over some links.
type matrixPass struct {
	k                                    int // 0 for the first pass, then the re-test's number
	rounds                               [][]matrixMatch
	latIters, latWarm, bwWindows, bwWarm int
}

// linkResult is one directed link's measurement: its round (0-based) and
// its latency and bandwidth summaries, as the measuring side made them.
type linkResult struct {
	round   int
	lat, bw results.Sample
}

func (x *matrixRun) run() ([]results.Sample, error) {
	n := len(x.leaders)
	var rounds [][][2]int
	if x.p.Schedule == kernels.ScheduleSequential {
		rounds = kernels.SequentialRounds(n)
	} else {
		rounds = kernels.MatrixRounds(n)
	}
	pass := matrixPass{rounds: make([][]matrixMatch, len(rounds))}
	for r, round := range rounds {
		for _, pr := range round {
			pass.rounds[r] = append(pass.rounds[r], matrixMatch{pr[0], pr[1], dirAB | dirBA})
		}
	}
	pass.latIters, pass.latWarm, pass.bwWindows, pass.bwWarm = matrixCounts(x.p)
	var samples []results.Sample
	var ref kernels.Verdict
	for {
		links, err := x.runPass(pass)
		if x.c.id.Rank == 0 {
			samples = append(samples, x.samples(pass)...)
		}
		if err != nil {
			return samples, err
		}
		if pass.k == x.p.Retests {
			return samples, nil
		}
		// Rank 0 judges and tells the others what comes next; an empty
		// list ends the kernel.
		var suspects [][2]int
		if x.c.id.Rank == 0 {
			measures := make([]kernels.LinkMeasure, len(links))
			for i, l := range links {
				r := x.got[l]
				measures[i] = kernels.LinkMeasure{Latency: r.lat.Value, Bandwidth: r.bw.Value}
			}
			var v kernels.Verdict
			if pass.k == 0 {
				v = x.p.Tolerance.Judge(measures)
				ref = v
			} else {
				v = x.p.Tolerance.JudgeAgainst(measures, ref.MinLatency, ref.MaxBandwidth)
			}
			for _, i := range v.Suspects() {
				suspects = append(suspects, links[i])
			}
		}
		if suspects, err = x.broadcastLinks(pass.k+1, suspects); err != nil {
			return samples, err
		}
		if len(suspects) == 0 {
			return samples, nil
		}
		pass = x.retestPass(pass, suspects)
	}
}

// retestPass is the pass after prev over links: half its repetitions,
// rounds of disjoint pairs (one pair each when sequential).
func (x *matrixRun) retestPass(prev matrixPass, links [][2]int) matrixPass {
	next := matrixPass{k: prev.k + 1,
		latIters: max(prev.latIters/2, 1), latWarm: (prev.latWarm + 1) / 2,
		bwWindows: max(prev.bwWindows/2, 1), bwWarm: prev.bwWarm}
	dirs := map[[2]int]uint8{}
	var pairs [][2]int
	for _, l := range links {
		pr, d := [2]int{l[0], l[1]}, dirAB
		if l[0] > l[1] {
			pr, d = [2]int{l[1], l[0]}, dirBA
		}
		if dirs[pr] == 0 {
			pairs = append(pairs, pr)
		}
		dirs[pr] |= d
	}
	slices.SortFunc(pairs, func(p, q [2]int) int { return cmp.Or(p[0]-q[0], p[1]-q[1]) })
	var rounds [][][2]int
	if x.p.Schedule == kernels.ScheduleSequential {
		for _, pr := range pairs {
			rounds = append(rounds, [][2]int{pr})
		}
	} else {
		rounds = kernels.PackRounds(len(x.leaders), pairs)
	}
	next.rounds = make([][]matrixMatch, len(rounds))
	for r, round := range rounds {
		for _, pr := range round {
			next.rounds[r] = append(next.rounds[r], matrixMatch{pr[0], pr[1], dirs[pr]})
		}
	}
	return next
}

// runPass runs one pass on this leader. On rank 0 it returns the pass's
// directed links in schedule order, their measurements in x.got.
func (x *matrixRun) runPass(ps matrixPass) ([][2]int, error) {
	x.m.pass = ps.k
	x.got = map[[2]int]linkResult{}
	var links [][2]int
	for r, round := range ps.rounds {
		for _, mt := range round {
			if mt.dirs&dirAB != 0 {
				links = append(links, [2]int{mt.a, mt.b})
			}
			if mt.dirs&dirBA != 0 {
				links = append(links, [2]int{mt.b, mt.a})
			}
		}
		seq := x.rounds
		x.rounds++
		if err := x.round(ps, r, round, seq); err != nil {
			return links, err
		}
		if (r+1)%matrixDrainEvery == 0 || r == len(ps.rounds)-1 {
			if err := x.drain(); err != nil {
				return links, err
			}
		}
	}
	if len(ps.rounds) == 0 {
		return links, x.drain()
	}
	return links, nil
}

// round runs this leader's part of round r of a pass: the barrier of the
// round's participants (of every leader when sequential), then its pair's
// measurements, if it has a pair.
func (x *matrixRun) round(ps matrixPass, r int, round []matrixMatch, seq int) error {
	var group []int // node indices, ascending
	if x.p.Schedule == kernels.ScheduleSequential {
		group = allRanks(len(x.leaders))
	} else {
		for _, mt := range round {
			group = append(group, mt.a, mt.b)
		}
		slices.Sort(group)
	}
	idx, in := slices.BinarySearch(group, x.me)
	if !in {
		return nil
	}
	ranks := make([]int, len(group))
	for i, g := range group {
		ranks[i] = x.leaders[g]
	}
	if err := x.m.barrier(ranks, idx, seq); err != nil {
		return x.where(r, -1, -1, err)
	}
	for _, mt := range round {
		if mt.a != x.me && mt.b != x.me {
			continue
		}
		for _, d := range []uint8{dirAB, dirBA} {
			if mt.dirs&d == 0 {
				continue
			}
			from, to := mt.a, mt.b
			if d == dirBA {
				from, to = to, from
			}
			if err := x.measure(ps, r, from, to); err != nil {
				return err
			}
		}
	}
	return nil
}

// measure measures the link from node from to node to, on both of them;
// the from side keeps the summaries for rank 0.
func (x *matrixRun) measure(ps matrixPass, r, from, to int) error {
	mine := x.me == from
	peer := x.leaders[to]
	if !mine {
		peer = x.leaders[from]
	}
	lat, err := x.m.pingPong(peer, x.p.LatencySize, ps.latIters, ps.latWarm, mine)
	if err != nil {
		return x.where(r, from, to, err)
	}
	bw, err := x.m.streamWindows(peer, x.p.BandwidthSize, ps.bwWindows, ps.bwWarm, x.p.Window, mine)
	if err != nil {
		return x.where(r, from, to, err)
	}
	if !mine {
		return nil
	}
	ls := oneWayLatency(lat)
	if ls.P50 != nil {
		// The median: of 100 round trips, one scheduler hiccup of a few
		// ms would move the mean enough to colour a cell.
		ls.Value = *ls.P50
	}
	bs := rateSample("", x.p.BandwidthSize, float64(x.p.BandwidthSize)*float64(x.p.Window), bw)
	bs.X, bs.XUnit = nil, ""
	res := linkResult{round: r, lat: ls, bw: bs}
	if x.c.id.Rank == 0 {
		x.got[[2]int{from, to}] = res
		return nil
	}
	x.pending = append(x.pending, float64(r), float64(to))
	x.pending = append(x.pending, summaryValues(ls)...)
	x.pending = append(x.pending, summaryValues(bs)...)
	return nil
}

// where places an error of round r (of the link from, to; -1 for the
// round's barrier), unless it is the run's cause.
func (x *matrixRun) where(r, from, to int, err error) error {
	if x.ctx.Err() != nil {
		return context.Cause(x.ctx)
	}
	if err == errDied {
		return err
	}
	what := fmt.Sprintf("round %d's barrier", r+1)
	if from >= 0 {
		what = fmt.Sprintf("%s to %s", x.c.node(x.leaders[from]), x.c.node(x.leaders[to]))
	}
	if x.m.pass > 0 {
		return fmt.Errorf("matrix kernel, re-test %d, %s: %w", x.m.pass, what, err)
	}
	return fmt.Errorf("matrix kernel, %s: %w", what, err)
}

// A measurement in a report: its round and the node it went to, then the
// latency's and the bandwidth's summaries.
const (
	summaryLen    = 6
	reportItemLen = 2 + 2*summaryLen
)

// summaryValues are a summary's numbers for a report: value, min, max,
// p50, p99 (NaN when absent) and the iterations.
func summaryValues(s results.Sample) []float64 {
	opt := func(p *float64) float64 {
		if p == nil {
			return math.NaN()
		}
		return *p
	}
	return []float64{s.Value, opt(s.Min), opt(s.Max), opt(s.P50), opt(s.P99), float64(s.Iterations)}
}

// summarySample is summaryValues read back.
func summarySample(v []float64) results.Sample {
	opt := func(x float64) *float64 {
		if math.IsNaN(x) {
			return nil
		}
		return results.F(x)
	}
	return results.Sample{Value: v[0], Min: opt(v[1]), Max: opt(v[2]), P50: opt(v[3]), P99: opt(v[4]), Iterations: int(v[5])}
}

// drain brings every leader's pending measurements to rank 0.
func (x *matrixRun) drain() error {
	tag := x.drains
	x.drains++
	if x.c.id.Rank != 0 {
		vals := x.pending
		x.pending = x.pending[:0]
		if err := x.m.report(tag, vals); err != nil {
			return x.fail(err)
		}
		return nil
	}
	for from, rank := range x.leaders {
		if from == x.me {
			continue
		}
		vals, err := x.m.collect(rank, tag)
		if err != nil {
			return x.fail(err)
		}
		if len(vals)%reportItemLen != 0 {
			return fmt.Errorf("matrix kernel: %s reported %d values, not a whole number of measurements", x.c.who(rank), len(vals))
		}
		for ; len(vals) > 0; vals = vals[reportItemLen:] {
			r, to := int(vals[0]), int(vals[1])
			if to < 0 || to >= len(x.leaders) || to == from || float64(r) != vals[0] || float64(to) != vals[1] {
				return fmt.Errorf("matrix kernel: %s reported a measurement of round %v to node %v", x.c.who(rank), vals[0], vals[1])
			}
			x.got[[2]int{from, to}] = linkResult{round: r,
				lat: summarySample(vals[2 : 2+summaryLen]), bw: summarySample(vals[2+summaryLen : reportItemLen])}
		}
	}
	return nil
}

func (x *matrixRun) fail(err error) error {
	if x.ctx.Err() != nil {
		return context.Cause(x.ctx)
	}
	return err
}

// samples are rank 0's samples of a pass, in schedule order: round by
// round, pair by pair, a to b then b to a, latency then bandwidth.
func (x *matrixRun) samples(ps matrixPass) []results.Sample {
	latMetric, bwMetric := kernels.MetricMatrixLatency, kernels.MetricMatrixBandwidth
	if ps.k > 0 {
		latMetric, bwMetric = kernels.MetricMatrixRetestLatency, kernels.MetricMatrixRetestBandwidth
	}
	var out []results.Sample
	for r, round := range ps.rounds {
		for _, mt := range round {
			for _, l := range [][2]int{{mt.a, mt.b}, {mt.b, mt.a}} {
				res, ok := x.got[l]
				if !ok || res.round != r {
					continue // not measured (yet): a failed run
				}
				ra, rb := x.leaders[l[0]], x.leaders[l[1]]
				tags := func() map[string]string {
					t := map[string]string{"from": x.c.node(ra), "to": x.c.node(rb),
						"round": strconv.Itoa(r + 1), "schedule": x.p.Schedule}
					if ps.k > 0 {
						t["pass"] = strconv.Itoa(ps.k)
					}
					return t
				}
				ls, bs := res.lat, res.bw
				ls.Metric, ls.Unit = latMetric, results.UnitMicroseconds
				bs.Metric, bs.Unit = bwMetric, results.UnitMBps
				ls.Pair, ls.Tags = []int{ra, rb}, tags()
				bs.Pair, bs.Tags = []int{ra, rb}, tags()
				out = append(out, ls, bs)
			}
		}
	}
	return out
}

// broadcastLinks brings rank 0's list of directed links (node indices)
// for re-test k to every leader, down a binomial tree rooted at rank 0's
// node: a count, then each link as two 32-bit node indices. Every leader
// returns the list.
func (x *matrixRun) broadcastLinks(k int, links [][2]int) ([][2]int, error) {
	n := len(x.leaders)
	rel := (x.me - x.root + n) % n
	parent, children := binomial(rel, n)
	leader := func(rel int) int { return x.leaders[(rel+x.root)%n] }
	var buf []byte
	if parent < 0 {
		buf = make([]byte, 16+8*len(links))
		binary.LittleEndian.PutUint64(buf, uint64(k))
		binary.LittleEndian.PutUint64(buf[8:], uint64(len(links)))
		for i, l := range links {
			binary.LittleEndian.PutUint32(buf[16+8*i:], uint32(l[0]))
			binary.LittleEndian.PutUint32(buf[20+8*i:], uint32(l[1]))
		}
	} else {
		from := leader(parent)
		var hdr [16]byte
		if err := x.m.recv(from, hdr[:]); err != nil {
			return nil, x.fail(err)
		}
		gotK, count := binary.LittleEndian.Uint64(hdr[:]), binary.LittleEndian.Uint64(hdr[8:])
		if gotK != uint64(k) || count > uint64(n)*uint64(n-1) {
			return nil, fmt.Errorf("matrix kernel: %s sent re-test %d's list of %d links, want re-test %d's", x.c.who(from), gotK, count, k)
		}
		buf = make([]byte, 16+8*count)
		copy(buf, hdr[:])
		if err := x.m.recv(from, buf[16:]); err != nil {
			return nil, x.fail(err)
		}
		links = make([][2]int, count)
		seen := map[[2]int]bool{}
		for i := range links {
			a, b := int(binary.LittleEndian.Uint32(buf[16+8*i:])), int(binary.LittleEndian.Uint32(buf[20+8*i:]))
			l := [2]int{a, b}
			if a >= n || b >= n || a == b || seen[l] {
				return nil, fmt.Errorf("matrix kernel: %s sent re-test %d's link %d to %d, not a link of %d nodes or twice", x.c.who(from), k, a, b, n)
			}
			seen[l] = true
			links[i] = l
		}
	}
	for _, ch := range children {
		if err := x.m.send(leader(ch), buf); err != nil {
			return nil, x.fail(err)
		}
	}
	return links, nil
}

// oneWayLatency summarizes round trips as one-way latencies in us: half
// the round trip.
func oneWayLatency(times []time.Duration) results.Sample {
	us := make([]float64, len(times))
	for i, d := range times {
		us[i] = float64(d.Nanoseconds()) / 2 / 1e3
	}
	return summarize(us)
}

// matrixCounts are the matrix kernel's repetitions: round trips at the
// latency size, windows at the bandwidth size. Each of the n(n-1)
// measurements is kept short: 100 round trips (10 warm-up), and about
// 32 MiB streamed (one window of warm-up).
func matrixCounts(p KernelParams) (latIters, latWarm, bwWindows, bwWarm int) {
	latIters, latWarm = 100, 10
	if p.Iterations >= 0 {
		latIters = p.Iterations
	}
	if p.Warmup >= 0 {
		latWarm = p.Warmup
	}
	perWindow := max(wireLen(p.BandwidthSize)*max(p.Window, 1), 1)
	bwWindows = min(max((32<<20)/perWindow, 2), 100)
	return latIters, latWarm, bwWindows, 1
}

// finishMatrix adds to the matrix kernel's bundle's params the schedule
// and the tolerance rule it re-tested by, so that sbench screen can say
// which it judged against.
func finishMatrix(b *results.Bundle, p KernelParams) {
	b.Params = merge(b.Params, map[string]string{
		"schedule":            p.Schedule,
		"retests":             strconv.Itoa(p.Retests),
		"latency_tolerance":   strconv.FormatFloat(p.Tolerance.LatencyFactor, 'g', -1, 64),
		"bandwidth_tolerance": strconv.FormatFloat(p.Tolerance.BandwidthFraction, 'g', -1, 64),
	})
}
