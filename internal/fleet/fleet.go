// Package fleet makes the result bundles of a synthetic screening
// (examples/screen.toml's matrix, STREAM, HPL and reference steps) of a
// partition of any size, with the faults a test asks for — a slow node, a
// node slow one way, a bad link, links that recover on re-test, a low
// STREAM or HPL node, a different firmware, a port at half rate — and a
// seeded noise, so that the screen analysis, sbench screen and the
// report's fleet-size pages are tested on what the runner writes, at 64 to
// 256 nodes, without a cluster of that size.
package fleet

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"time"

	"github.com/sbench/sbench/kernels"
	"github.com/sbench/sbench/results"
)

// Spec describes the partition and its faults.
type Spec struct {
	Nodes int
	// Prefix names the nodes: Prefix1 … PrefixN (default "n").
	Prefix string
	Seed   uint64
	// Noise is the relative spread of every value (default 0.02).
	Noise float64
	// Campaign and Job name the screening (defaults "screen", "4242").
	Campaign, Job string
	// Start is when the screening ran (default 2026-12-01 08:00 UTC).
	Start time.Time

	// SlowNodes send and receive at a third of the rate, with three times
	// the latency.
	SlowNodes []string
	// SlowSenders send at half the rate; what they receive is fine.
	SlowSenders []string
	// BadLinks are single directions at 60% of the rate.
	BadLinks [][2]string
	// Transient are directions at 60% in the first pass, fine on re-test.
	Transient [][2]string
	// LowStream and LowHPL are nodes at 70% of the others' figure.
	LowStream, LowHPL []string
	// OddFirmware nodes run another HCA firmware; HalfRate nodes' ports
	// run at half rate (2X instead of 4X).
	OddFirmware, HalfRate []string
	// RefHiccups are directions the reference step measures at 30% (a
	// hiccup during its one measurement); the matrix finds them fine.
	RefHiccups [][2]string
	// NoMatrix, NoReference and NoHPL leave those steps out.
	NoMatrix, NoReference, NoHPL bool
}

// Typical figures of an EDR InfiniBand node.
const (
	latencyUS  = 1.6
	bandwidth  = 12000.0 // MB/s
	streamMBps = 180000.0
	hplGflops  = 2400.0
)

// Node returns the name of node k (1-based).
func (s Spec) Node(k int) string { return s.prefix() + strconv.Itoa(k) }

func (s Spec) prefix() string {
	if s.Prefix == "" {
		return "n"
	}
	return s.Prefix
}

// Bundles returns the screening's bundles: the matrix (with re-tests of
// its suspect pairs), STREAM, HPL, then the reference pairs, latency and
// bandwidth, the first node to every other and back.
func Bundles(s Spec) []*results.Bundle {
	if s.Noise == 0 {
		s.Noise = 0.02
	}
	if s.Campaign == "" {
		s.Campaign = "screen"
	}
	if s.Job == "" {
		s.Job = "4242"
	}
	if s.Start.IsZero() {
		s.Start = time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)
	}
	g := &gen{Spec: s, rng: rand.New(rand.NewPCG(s.Seed, 0x5c4ee7)), t: s.Start}
	for i := 0; i < s.Nodes; i++ {
		g.nodes = append(g.nodes, s.Node(i+1))
	}
	var out []*results.Bundle
	// The matrix is made (and draws its noise) even when left out, so
	// that the other bundles do not change with NoMatrix.
	if mb := g.matrix(); !s.NoMatrix {
		out = append(out, mb)
	}
	out = append(out, g.stream())
	if !s.NoHPL {
		out = append(out, g.hpl())
	}
	if !s.NoReference && len(g.nodes) > 1 {
		out = append(out, g.reference()...)
	}
	return out
}

// gen makes a Spec's bundles, one step after the other, with the noise of
// one random stream.
type gen struct {
	Spec
	rng   *rand.Rand
	nodes []string
	t     time.Time
}

func (g *gen) noisy(v float64) float64 { return v * (1 + g.Noise*(2*g.rng.Float64()-1)) }

// next is the span of a step of d after the one before.
func (g *gen) next(d time.Duration) [2]time.Time {
	start := g.t
	g.t = g.t.Add(d)
	return [2]time.Time{start, g.t}
}

// link is a direction's true rate and latency.
func (g *gen) link(a, b string, retest bool) (lat, bw float64) {
	lat, bw = latencyUS, bandwidth
	if slices.Contains(g.SlowNodes, a) || slices.Contains(g.SlowNodes, b) {
		lat, bw = 3*lat, bw/3
	}
	if slices.Contains(g.SlowSenders, a) {
		bw /= 2
	}
	if slices.Contains(g.BadLinks, [2]string{a, b}) || (!retest && slices.Contains(g.Transient, [2]string{a, b})) {
		bw *= 0.6
	}
	return g.noisy(lat), g.noisy(bw)
}

// matrix is the matrix kernel's bundle, in the rounds of the runner's
// round-robin schedule, with two passes of re-tests of its suspect pairs:
// what recovers leaves.
func (g *gen) matrix() *results.Bundle {
	nodes := g.nodes
	mb := g.bundle("matrix", "matrix", nodes, g.next(time.Duration(g.Nodes)*time.Second))
	mb.Params = map[string]string{"latency_size": "8", "bandwidth_size": "1MiB",
		"latency_tolerance": "2.1", "bandwidth_tolerance": "0.93"}
	rank := map[string]int{}
	for i, n := range nodes {
		rank[n] = i
	}
	suspects := map[[2]string]bool{}
	for r, round := range kernels.MatrixRounds(len(nodes)) {
		for _, p := range round {
			for _, dir := range [][2]int{{p[0], p[1]}, {p[1], p[0]}} {
				a, b := nodes[dir[0]], nodes[dir[1]]
				lat, bw := g.link(a, b, false)
				tags := map[string]string{"from": a, "to": b, "round": strconv.Itoa(r + 1), "schedule": "rounds"}
				mb.Samples = append(mb.Samples,
					results.Sample{Metric: kernels.MetricMatrixLatency, Unit: results.UnitMicroseconds, Value: round3(lat), Iterations: 100,
						Pair: []int{dir[0], dir[1]}, Tags: tags},
					results.Sample{Metric: kernels.MetricMatrixBandwidth, Unit: results.UnitMBps, Value: round3(bw), Iterations: 32,
						Pair: []int{dir[0], dir[1]}, Tags: tags})
				if bw < 0.9*bandwidth || lat > 1.8*latencyUS {
					suspects[[2]string{a, b}] = true
				}
			}
		}
	}
	for pass := 1; pass <= 2; pass++ {
		for _, a := range nodes {
			for _, b := range nodes {
				k := [2]string{a, b}
				if !suspects[k] {
					continue
				}
				lat, bw := g.link(a, b, true)
				tags := map[string]string{"from": a, "to": b, "pass": strconv.Itoa(pass), "schedule": "rounds"}
				mb.Samples = append(mb.Samples,
					results.Sample{Metric: kernels.MetricMatrixRetestLatency, Unit: results.UnitMicroseconds, Value: round3(lat), Iterations: 50,
						Pair: []int{rank[a], rank[b]}, Tags: tags},
					results.Sample{Metric: kernels.MetricMatrixRetestBandwidth, Unit: results.UnitMBps, Value: round3(bw), Iterations: 16,
						Pair: []int{rank[a], rank[b]}, Tags: tags})
				if bw >= 0.9*bandwidth && lat <= 1.8*latencyUS {
					delete(suspects, k)
				}
			}
		}
	}
	return mb
}

// stream is the STREAM kernel's bundle: per node and per rank.
func (g *gen) stream() *results.Bundle {
	sb := g.bundle("stream", "stream", g.nodes, g.next(20*time.Second))
	for i, n := range g.nodes {
		v := streamMBps
		if slices.Contains(g.LowStream, n) {
			v *= 0.7
		}
		sb.Samples = append(sb.Samples, results.Sample{Metric: kernels.MetricNodeStreamTriad, Unit: results.UnitMBps, Value: round3(g.noisy(v)),
			Iterations: 10, Tags: map[string]string{"node": n, "ranks": "1"}},
			results.Sample{Metric: "stream_triad", Unit: results.UnitMBps, Value: round3(g.noisy(v)),
				Iterations: 10, Tags: map[string]string{"node": n, "rank": strconv.Itoa(i)}})
	}
	return sb
}

// hpl is the HPL kernel's bundle: per node.
func (g *gen) hpl() *results.Bundle {
	hb := g.bundle("hpl", "hpl", g.nodes, g.next(60*time.Second))
	for _, n := range g.nodes {
		v := hplGflops
		if slices.Contains(g.LowHPL, n) {
			v *= 0.7
		}
		hb.Samples = append(hb.Samples, results.Sample{Metric: kernels.MetricNodeHPLGflops, Unit: "Gflops", Value: round3(g.noisy(v)),
			Iterations: 1, Tags: map[string]string{"node": n, "ranks": "1"}})
	}
	return hb
}

// reference is the reference pairs' bundles: latency, then bandwidth,
// from the first node to every other and back.
func (g *gen) reference() []*results.Bundle {
	var out []*results.Bundle
	ref := g.nodes[0]
	for _, kernel := range []string{"latency", "bw"} {
		for _, x := range g.nodes[1:] {
			for _, ab := range [][2]string{{ref, x}, {x, ref}} {
				b := g.bundle("ref-"+kernel, kernel, []string{ab[0], ab[1]}, g.next(2*time.Second))
				b.Labels["pair"] = ab[0] + "->" + ab[1]
				b.Labels["reference"] = ref
				b.Job.Step += "-" + ab[0] + "-" + ab[1]
				lat, bw := g.link(ab[0], ab[1], true)
				if slices.Contains(g.RefHiccups, ab) {
					bw *= 0.3
				}
				if kernel == "latency" {
					x := 8.0
					b.Samples = []results.Sample{{Metric: "latency", Unit: results.UnitMicroseconds, X: &x, XUnit: results.UnitBytes,
						Value: round3(lat * 1.05), P50: results.F(round3(lat)), Iterations: 1000}}
				} else {
					x := float64(1 << 20)
					b.Samples = []results.Sample{{Metric: "bandwidth", Unit: results.UnitMBps, X: &x, XUnit: results.UnitBytes,
						Value: round3(bw), Iterations: 20}}
				}
				out = append(out, b)
			}
		}
	}
	return out
}

// bundle is an ok bundle of one step on nodes (hosts from the partition).
func (s Spec) bundle(benchmark, kernel string, nodes []string, span [2]time.Time) *results.Bundle {
	b := results.New()
	b.Campaign, b.Variant = s.Campaign, "default"
	b.Labels = map[string]string{"fabric": "ib"}
	step := map[string]string{"matrix": "0", "stream": "1", "hpl": "2", "ref-latency": "3", "ref-bw": "4"}[benchmark]
	b.Job = results.Job{ID: s.Job, Step: step, Name: "screen", Partition: "batch", Nodes: nodes, Tasks: len(nodes), TasksPerNode: fmt.Sprintf("1(x%d)", len(nodes))}
	b.Start, b.End = span[0], span[1]
	b.RunnerVersion = "synthetic"
	b.Benchmark = results.Benchmark{Name: benchmark, Kind: "native", Kernel: kernel}
	for i, n := range nodes {
		b.Hosts = append(b.Hosts, s.host(n, i))
	}
	return b
}

// host is the provenance of a node: alike but for the faults asked for.
func (s Spec) host(n string, rank int) results.Host {
	h := results.Host{Hostname: n + ".cluster", NodeName: n, Ranks: []int{rank}, CPUModel: "AMD EPYC 7763 64-Core Processor",
		Sockets: 2, Cores: 128, Threads: 256, MemoryBytes: 512 << 30, NUMANodes: 8, Kernel: "5.14.0-427.el9.x86_64",
		OS: "Rocky Linux 9.4", MPI: "Open MPI 4.1.6", Governor: "performance",
		IB:  []results.IBPort{{Device: "mlx5_0", Port: 1, State: "4: ACTIVE", Rate: "100 Gb/sec (4X EDR)", RateGbps: 100, LinkLayer: "InfiniBand", Firmware: "16.35.2000"}},
		Net: []results.NetIf{{Name: "eno1", SpeedMbps: 25000, MTU: 1500, State: "up"}}}
	if slices.Contains(s.OddFirmware, n) {
		h.IB[0].Firmware = "16.28.1002"
	}
	if slices.Contains(s.HalfRate, n) {
		h.IB[0].Rate, h.IB[0].RateGbps = "50 Gb/sec (2X EDR)", 50
	}
	return h
}

func round3(v float64) float64 {
	p := 1000.0
	return float64(int64(v*p+0.5)) / p
}
