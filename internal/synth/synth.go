// Package synth makes the result bundles of a synthetic site: several
// clusters measured every day for years with osu_bw and osu_latency, two
// configurations each, repeats that disagree a little, a kernel upgrade
// that costs one cluster a fifth of its bandwidth, and the odd failed run.
// Tests and benchmarks of the views of an archive (the static site) need a
// history with something in it; this is one, deterministic for a seed.
package synth

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/sbench/sbench/results"
)

// Spec says what to make.
type Spec struct {
	// Systems are the clusters' names (the runs' system label).
	Systems []string
	// Start is the first day; Days the number of days, one campaign run
	// per system per day.
	Start time.Time
	Days  int
	// Configs is the number of configurations (ppn=1, ppn=2, …) per
	// benchmark; Sizes the number of message sizes, 1 B up by doubling.
	Configs, Sizes int
	// Repeats per run (samples per size).
	Repeats int
	// StepDay is the first day on which Systems[0] runs a newer kernel
	// whose osu_bw bandwidth is 20% lower; 0 for none.
	StepDay int
	// OutlierDay is a day on which the last system's osu_latency is twice
	// as slow (a noisy neighbour), that day only; 0 for none.
	OutlierDay int
	// FailEvery makes every n-th run a failed one; 0 for none.
	FailEvery int
	Seed      uint64
}

// Month is the site the static site's tests look at: a month of two
// clusters, two benchmarks and two configurations each, 240 runs; alpha's
// bandwidth 20% lower from day 18 (a kernel upgrade), beta's latency twice
// as high on day 26, every 23rd run failed.
var Month = Spec{Systems: []string{"alpha", "beta"}, Start: time.Date(2025, 3, 1, 2, 0, 0, 0, time.UTC), Days: 30,
	Configs: 2, Sizes: 20, Repeats: 2, StepDay: 18, OutlierDay: 26, FailEvery: 23, Seed: 1}

// Runs is the number of runs the spec makes.
func (s Spec) Runs() int { return len(s.Systems) * s.Days * 2 * s.Configs }

// All returns every bundle of s, in time order.
func All(s Spec) []*results.Bundle {
	var out []*results.Bundle
	Each(s, func(b *results.Bundle) error { out = append(out, b); return nil })
	return out
}

// Each calls fn with every bundle, in time order.
func Each(s Spec, fn func(*results.Bundle) error) error {
	rng := rand.New(rand.NewPCG(s.Seed, 7))
	n := 0
	for day := 0; day < s.Days; day++ {
		for si, sys := range s.Systems {
			for _, bench := range []string{"osu_bw", "osu_latency"} {
				for c := 1; c <= s.Configs; c++ {
					n++
					b := bundle(s, rng, n, day, si, sys, bench, c)
					if err := fn(b); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}

func bundle(s Spec, rng *rand.Rand, n, day, si int, sys, bench string, ppn int) *results.Bundle {
	start := s.Start.AddDate(0, 0, day).Add(time.Duration(si)*time.Hour + time.Duration(n%7)*time.Minute)
	kernel := "5.14.0-362.8.1.el9_3.x86_64"
	upgraded := si == 0 && s.StepDay > 0 && day >= s.StepDay
	if upgraded {
		kernel = "5.14.0-427.13.1.el9_4.x86_64"
	}
	nodes := []string{fmt.Sprintf("%s%03d", sys[:1], 1+n%16), fmt.Sprintf("%s%03d", sys[:1], 1+(n+5)%16)}
	var hosts []results.Host
	for _, nd := range nodes {
		hosts = append(hosts, results.Host{Hostname: nd, NodeName: nd, CPUModel: "Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz",
			Cores: 64, MemoryBytes: 256 << 30, OS: "Rocky Linux 9", Kernel: kernel, MPI: "Open MPI 4.1.5",
			IB: []results.IBPort{{Device: "mlx5_0", Port: 1, State: "ACTIVE", Rate: "100 Gb/sec (2X HDR)", RateGbps: 100, LinkLayer: "InfiniBand", Firmware: "20.39.1002"}}})
	}
	job := fmt.Sprint(100000 + n)
	b := &results.Bundle{
		Schema: results.Schema, Campaign: "nightly-" + sys, Variant: fmt.Sprintf("ppn=%d", ppn),
		Params: map[string]string{"ppn": fmt.Sprint(ppn)},
		Labels: map[string]string{"system": sys},
		Job:    results.Job{ID: job, Step: "0", Nodes: nodes, Tasks: 2 * ppn},
		Start:  start, End: start.Add(40 * time.Second), RunnerVersion: "0.9.0", Hosts: hosts,
		Benchmark: results.Benchmark{Name: bench, Kind: "tool", Kernel: "osu", Tool: "osu-micro-benchmarks", ToolVersion: "7.4",
			Command: []string{"srun", "--mpi=pmix", bench}},
		Status: results.StatusOK,
	}
	if s.FailEvery > 0 && n%s.FailEvery == 0 {
		b.Status, b.Error = results.StatusFailed, "srun: error: Node failure on "+nodes[1]
		b.Raw = "srun: error: Node failure on " + nodes[1] + "\n"
		return b
	}
	rate := 12000.0 * (1 + 0.03*float64(si)) / float64(ppn)
	if upgraded && bench == "osu_bw" {
		rate *= 0.8
	}
	lat0 := 1.6 + 0.2*float64(ppn-1) + 0.1*float64(si)
	if s.OutlierDay > 0 && day == s.OutlierDay && si == len(s.Systems)-1 && bench == "osu_latency" {
		lat0 *= 2
	}
	raw := fmt.Sprintf("# OSU MPI %s Test v7.4\n# Size   %s\n", map[string]string{"osu_bw": "Bandwidth", "osu_latency": "Latency"}[bench],
		map[string]string{"osu_bw": "Bandwidth (MB/s)", "osu_latency": "Avg Latency(us)"}[bench])
	for k := 0; k < s.Sizes; k++ {
		x := math.Ldexp(1, k)
		for rep := 0; rep < max(1, s.Repeats); rep++ {
			noise := 1 + 0.01*rng.NormFloat64()
			lat := (lat0 + x/rate) * noise
			if bench == "osu_bw" {
				v := x / (lat0/4 + x/rate) * noise
				b.Samples = append(b.Samples, results.Sample{Metric: "bandwidth", Unit: results.UnitMBps, X: results.F(x), XUnit: results.UnitBytes, Value: v, Repeat: rep})
				if rep == 0 {
					raw += fmt.Sprintf("%-10d%.2f\n", int64(x), v)
				}
				continue
			}
			b.Samples = append(b.Samples, results.Sample{Metric: "latency", Unit: results.UnitMicroseconds, X: results.F(x), XUnit: results.UnitBytes, Value: lat, Repeat: rep})
			if rep == 0 {
				raw += fmt.Sprintf("%-10d%.2f\n", int64(x), lat)
			}
		}
	}
	b.Raw = raw
	return b
}
