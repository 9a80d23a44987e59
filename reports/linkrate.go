package reports

import (
	"strconv"
	"strings"

	"github.com/sbench/sbench/results"
	"github.com/sbench/sbench/sizes"
	"github.com/sbench/sbench/store"
)

// ParseLinkRate reads a link rate as people write it and returns it in
// Gb/s: sizes.ParseLinkRate, which the campaign's site profiles use too.
func ParseLinkRate(s string) (float64, error) { return sizes.ParseLinkRate(s) }

// ParseLinkRateFlag reads the --link-rate flag: "auto" (or empty) for the
// rate the runs' provenance gives, which is returned as 0.
func ParseLinkRateFlag(s string) (float64, error) {
	if t := strings.ToLower(strings.TrimSpace(s)); t == "" || t == "auto" {
		return 0, nil
	}
	return ParseLinkRate(s)
}

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

// runLink is what the report knows of the link a run's traffic crossed.
type runLink struct {
	rate  float64 // Gb/s; 0 when unknown or when none applies
	local string  // LocalLoopback or LocalOneMachine when none applies
}

// linkOf is the theoretical rate of the link a run's traffic crossed, in
// Gb/s: the --link-rate override; else its link_rate label; else, for a
// run whose runner recorded the interfaces its connections crossed
// (results.Host.Traffic), the slowest of those nodes' fastest such
// interface, and none (LocalLoopback) when they all were loopback; else
// none (LocalOneMachine) when every rank was on one machine; else, for a
// run that could have crossed any of its nodes' links (a wrapped tool, an
// older runner), the slowest node's fastest active InfiniBand/RoCE port,
// else the slowest node's fastest network interface; 0 when none says.
func (r *Report) linkOf(run *store.Run) runLink {
	if r.opts.linkRate > 0 {
		return runLink{rate: r.opts.linkRate}
	}
	if v, ok := run.Labels["link_rate"]; ok {
		if g, err := ParseLinkRate(v); err == nil {
			return runLink{rate: g}
		}
	}
	if l, ok := trafficLink(run); ok {
		return l
	}
	if oneMachine(run) {
		return runLink{local: LocalOneMachine}
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
		return runLink{rate: ib}
	}
	return runLink{rate: slowestFastest(run, func(h int) []float64 {
		var rates []float64
		for _, n := range run.Hosts[h].Net {
			if rate := netRate(n); rate > 0 {
				rates = append(rates, rate)
			}
		}
		return rates
	})}
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

// seriesLink is the link a series' runs share: the lowest of their
// rates, 0 when any is unknown; and why none applies when none does to
// any of them (LocalLoopback when the runner saw that of every run).
func (r *Report) seriesLink(ids []int64) runLink {
	rate, unknown := 0.0, false
	locals := map[string]int{}
	for _, id := range ids {
		l := r.linkOf(r.byID[id])
		if l.local != "" {
			locals[l.local]++
		}
		switch {
		case l.rate == 0:
			unknown = true
		case rate == 0 || l.rate < rate:
			rate = l.rate
		}
	}
	out := runLink{}
	if !unknown {
		out.rate = rate
	}
	switch {
	case len(ids) == 0:
	case locals[LocalLoopback] == len(ids):
		out.local = LocalLoopback
	case locals[LocalLoopback]+locals[LocalOneMachine] == len(ids):
		out.local = LocalOneMachine
	}
	return out
}

// formatRate writes a link rate in Gb/s as people say it: 100 Gb/s,
// 1 Gb/s, 100 Mb/s.
func formatRate(gbps float64) string {
	if gbps < 1 {
		return strconv.FormatFloat(gbps*1000, 'f', -1, 64) + " Mb/s"
	}
	return strconv.FormatFloat(gbps, 'f', -1, 64) + " Gb/s"
}
