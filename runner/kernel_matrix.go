package runner

import (
	"context"
	"fmt"
	"time"

	"github.com/sbench/sbench/results"
)

// runMatrix measures every ordered pair of nodes, one pair at a time: the
// lowest rank of each node takes part (the others only wait for the end),
// and for each pair (a, b) in node order, after a barrier of the
// participants, a's rank measures the latency to b's at the latency size
// (ping-pong, half the round trip) and the bandwidth from a to b at the
// bandwidth size (windows, as bw). n nodes make n(n-1) measurements of
// each, kept short (see matrixCounts). Samples have no x: they fill a
// heatmap, from row to column. A latency's value is the median of its
// round trips' halves, a bandwidth's all bytes over all time.
func runMatrix(ctx context.Context, c *comm, p KernelParams, hooks *testHooks) ([]results.Sample, error) {
	nodes := ranksByNode(c.nodeOfRanks())
	if len(nodes) < 2 {
		return nil, fmt.Errorf("the matrix kernel needs ranks on 2 nodes; the step has %s", plural(len(nodes), "node"))
	}
	leaders := make([]int, len(nodes))
	me := -1
	for i, ranks := range nodes {
		leaders[i] = ranks[0]
		if ranks[0] == c.id.Rank {
			me = i
		}
	}
	if me < 0 {
		return nil, nil
	}
	m, err := openMesh(ctx, c, p.Kernel, hooks, leaders)
	if err != nil {
		return nil, err
	}
	defer m.close()
	latIters, latWarm, bwWindows, bwWarm := matrixCounts(p)
	var samples []results.Sample
	seq := 0
	for a, ra := range leaders {
		for b, rb := range leaders {
			if a == b {
				continue
			}
			tag := seq
			where := func(err error) error {
				if ctx.Err() != nil {
					return context.Cause(ctx)
				}
				return fmt.Errorf("matrix kernel, %s to %s: %w", c.node(ra), c.node(rb), err)
			}
			if err := m.barrier(leaders, me, seq); err != nil {
				return samples, where(err)
			}
			seq++
			var lat, bw []time.Duration
			if me == a || me == b {
				peer := map[bool]int{true: rb, false: ra}[me == a]
				if lat, err = m.pingPong(peer, p.LatencySize, latIters, latWarm, me == a); err != nil {
					return samples, err
				}
				if bw, err = m.streamWindows(peer, p.BandwidthSize, bwWindows, bwWarm, p.Window, me == a); err != nil {
					return samples, err
				}
			}
			if me == a && ra != 0 {
				if err := m.report(tag, append([]float64{float64(len(lat))}, append(seconds(lat), seconds(bw)...)...)); err != nil {
					return nil, where(err)
				}
			}
			if c.id.Rank != 0 {
				continue
			}
			if ra != 0 {
				vals, err := m.collect(ra, tag)
				if err != nil {
					return samples, where(err)
				}
				if len(vals) == 0 || vals[0] < 0 || int(vals[0]) > len(vals)-1 {
					return samples, fmt.Errorf("matrix kernel: %s reported %d values for measurement %d", c.who(ra), len(vals), tag)
				}
				n := int(vals[0])
				lat, bw = durations(vals[1:1+n]), durations(vals[1+n:])
			}
			tags := func() map[string]string { return map[string]string{"from": c.node(ra), "to": c.node(rb)} }
			ls := oneWayLatency(lat)
			if ls.P50 != nil {
				// The median: of 100 round trips, one scheduler hiccup of a
				// few ms would move the mean enough to colour a cell.
				ls.Value = *ls.P50
			}
			ls.Metric, ls.Unit = "matrix_latency", results.UnitMicroseconds
			ls.Pair, ls.Tags = []int{ra, rb}, tags()
			bs := rateSample("matrix_bandwidth", p.BandwidthSize, float64(p.BandwidthSize)*float64(p.Window), bw)
			bs.X, bs.XUnit = nil, ""
			bs.Pair, bs.Tags = []int{ra, rb}, tags()
			samples = append(samples, ls, bs)
		}
	}
	return samples, nil
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
