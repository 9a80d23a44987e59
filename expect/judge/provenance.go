package judge

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/sbench/sbench/hpl"
	"github.com/sbench/sbench/results"
	"github.com/sbench/sbench/sizes"
	"github.com/sbench/sbench/store"
)

// Why no link rate applies to a run: its traffic stayed on one machine.
const (
	// LocalLoopback: the runner saw every connection of the run cross the
	// loopback interface (results.Host.Traffic): sbench local's fake
	// nodes, ranks of one node.
	LocalLoopback = "loopback"
	// LocalOneMachine: every rank of the run was on one machine (one host,
	// or hosts of one hostname, as sbench local's fake nodes are), whatever
	// a wrapped tool used between them: shared memory or loopback.
	LocalOneMachine = "one machine"
)

// runLink is what is known of the link a run's traffic crossed.
type runLink struct {
	rate  float64 // Gb/s; 0 when unknown or when none applies
	local string  // LocalLoopback or LocalOneMachine when none applies
}

// RunLink is the theoretical rate of the link a run's traffic crossed, in
// Gb/s: its link_rate label; else, for a
// run whose runner recorded the interfaces its connections crossed
// (results.Host.Traffic), the slowest of those nodes' fastest such
// interface, and none (LocalLoopback) when they all were loopback; else
// none (LocalOneMachine) when every rank was on one machine; else, for a
// run that could have crossed any of its nodes' links (a wrapped tool, an
// older runner), the slowest node's fastest active InfiniBand/RoCE port,
// else the slowest node's fastest network interface; 0 when none says.
// local says why none applies (LocalLoopback, LocalOneMachine), or is "".
func RunLink(run *store.Run) (gbps float64, local string) {
	if v, ok := run.Labels["link_rate"]; ok {
		if g, err := sizes.ParseLinkRate(v); err == nil {
			return g, ""
		}
	}
	if l, ok := trafficLink(run); ok {
		return l.rate, l.local
	}
	if oneMachine(run) {
		return 0, LocalOneMachine
	}
	ib := slowestFastest(run, func(h int) []float64 {
		var rates []float64
		for _, p := range run.Hosts[h].IB {
			if p.State != "" && !strings.Contains(strings.ToUpper(p.State), "ACTIVE") {
				continue
			}
			g := p.RateGbps
			if g == 0 {
				g = leadingNumber(p.Rate)
			}
			if g > 0 {
				rates = append(rates, g)
			}
		}
		return rates
	})
	if ib > 0 {
		return ib, ""
	}
	return slowestFastest(run, func(h int) []float64 {
		var rates []float64
		for _, n := range run.Hosts[h].Net {
			if rate := netRate(n); rate > 0 {
				rates = append(rates, rate)
			}
		}
		return rates
	}), ""
}

// netRate is an interface's rate in Gb/s: 0 for loopback, an interface
// that is not up, or one whose speed is unknown.
func netRate(n results.NetIf) float64 {
	if n.Name == "lo" || n.SpeedMbps <= 0 {
		return 0
	}
	if n.State != "" && !strings.EqualFold(n.State, "up") {
		return 0
	}
	return float64(n.SpeedMbps) / 1000
}

// trafficLink is the link of a run whose runner recorded the interfaces
// its nodes' connections crossed: per node that crossed one other than
// loopback, the fastest of those; the slowest node's. Nodes that recorded
// nothing had no part in the traffic. A TCP kernel crossed no InfiniBand
// port but through an IPoIB interface, whose speed is the port's. ok is
// false when nothing was recorded.
func trafficLink(run *store.Run) (l runLink, ok bool) {
	rate, crossed, unknown := 0.0, false, false
	for _, h := range run.Hosts {
		best, here := 0.0, false
		for _, name := range h.Traffic {
			ok = true
			if name == "lo" {
				continue
			}
			here = true
			for _, n := range h.Net {
				if n.Name == name {
					best = max(best, netRate(n))
				}
			}
		}
		if !here {
			continue
		}
		crossed = true
		if best == 0 {
			unknown = true
		}
		if rate == 0 || best < rate {
			rate = best
		}
	}
	switch {
	case !ok:
		return runLink{}, false
	case !crossed:
		return runLink{local: LocalLoopback}, true
	case unknown:
		return runLink{}, true
	}
	return runLink{rate: rate}, true
}

// oneMachine reports whether every rank of a run was on one machine: one
// host, or hosts that share a hostname (sbench local's fake nodes are
// described by the machine they share).
func oneMachine(run *store.Run) bool {
	if len(run.Hosts) == 0 || run.Hosts[0].Hostname == "" {
		return false
	}
	for _, h := range run.Hosts[1:] {
		if h.Hostname != run.Hosts[0].Hostname {
			return false
		}
	}
	return true
}

// slowestFastest is the minimum over a run's hosts of each host's largest
// rate: the link the slowest node can drive.
func slowestFastest(run *store.Run, rates func(h int) []float64) float64 {
	out := 0.0
	for h := range run.Hosts {
		best := 0.0
		for _, v := range rates(h) {
			best = max(best, v)
		}
		if best == 0 {
			return 0 // a node without such a link: the rate is unknown
		}
		if out == 0 || best < out {
			out = best
		}
	}
	return out
}

func leadingNumber(s string) float64 {
	f := strings.Fields(s)
	if len(f) == 0 {
		return 0
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return 0
	}
	return v
}

// NodesRpeak is the theoretical peak of the nodes a run used, from their
// provenance (cores, clock, vector width; see hpl.Rpeak), and how it was
// worked out; 0 and the reason when a node lacks what it takes.
func NodesRpeak(run *store.Run) (float64, string) {
	if len(run.Hosts) == 0 {
		return 0, "Rpeak unknown: the run carries no host provenance"
	}
	total := 0.0
	hows := map[string]int{}
	for _, h := range run.Hosts {
		g, how := hpl.Rpeak(h, hpl.PeakSpec{})
		if g == 0 {
			return 0, how
		}
		total += g
		hows[how]++
	}
	var parts []string
	for _, how := range slices.Sorted(maps.Keys(hows)) {
		parts = append(parts, fmt.Sprintf("%d × (%s)", hows[how], how))
	}
	return total, strings.Join(parts, " + ")
}

// RpeakLabel is a run's rpeak label in Gflops ("1843.2", "1843.2 Gflops"),
// 0 when it has none that reads.
func RpeakLabel(run *store.Run) float64 {
	v, ok := run.Labels["rpeak"]
	if !ok {
		return 0
	}
	g, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "Gflops")), 64)
	if err != nil || !(g > 0) {
		return 0
	}
	return g
}

// RunRpeak is the theoretical peak of a run's nodes in Gflops, as the HPL
// report computes it: its rpeak label, else its nodes' provenance
// (NodesRpeak); how says which, or why it is unknown.
func RunRpeak(run *store.Run) (float64, string) {
	if g := RpeakLabel(run); g > 0 {
		return g, "label rpeak"
	}
	return NodesRpeak(run)
}
