package reports

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/sbench/sbench/store"
)

// ParseLinkRate reads a link rate as people write it — "100Gbps",
// "100 Gb/s", "25G", "800 Mbps", "12500 MB/s" — and returns it in Gb/s.
// A bare number is in Gb/s. Case tells bytes from bits only in MB/s and
// GB/s (and MBps, GBps), the way the tools print them.
func ParseLinkRate(s string) (float64, error) {
	m := linkRateRE.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return 0, fmt.Errorf("link rate %q: want a rate such as 100Gbps, 25 Gb/s, 800Mbps or 12500MB/s", s)
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil || v <= 0 {
		return 0, fmt.Errorf("link rate %q: want a positive number", s)
	}
	unit := strings.ReplaceAll(m[2], " ", "")
	switch unit {
	case "MB/s", "MBps", "MByte/s", "MBytes/s":
		return v * 8 / 1000, nil
	case "GB/s", "GBps", "GByte/s", "GBytes/s":
		return v * 8, nil
	}
	switch strings.ToLower(unit) {
	case "", "g", "gbps", "gb/s", "gbit/s", "gbits/s", "gbit":
		return v, nil
	case "m", "mbps", "mb/s", "mbit/s", "mbits/s", "mbit":
		return v / 1000, nil
	case "t", "tbps", "tb/s", "tbit/s":
		return v * 1000, nil
	}
	return 0, fmt.Errorf("link rate %q: unknown unit %q (want Gbps, Mbps, Gb/s, MB/s or GB/s)", s, m[2])
}

var linkRateRE = regexp.MustCompile(`^([0-9]+(?:\.[0-9]*)?)\s*([A-Za-z/ ]*)$`)

// ParseLinkRateFlag reads the --link-rate flag: "auto" (or empty) for the
// rate the runs' provenance gives, which is returned as 0.
func ParseLinkRateFlag(s string) (float64, error) {
	if t := strings.ToLower(strings.TrimSpace(s)); t == "" || t == "auto" {
		return 0, nil
	}
	return ParseLinkRate(s)
}

// linkRateOf is the theoretical rate of the link a run used, in Gb/s: the
// --link-rate override; else its link_rate label; else the slowest node's
// fastest active InfiniBand/RoCE port; else the slowest node's fastest
// network interface; 0 when none says.
func (r *Report) linkRateOf(run *store.Run) float64 {
	if r.opts.linkRate > 0 {
		return r.opts.linkRate
	}
	if v, ok := run.Labels["link_rate"]; ok {
		if g, err := ParseLinkRate(v); err == nil {
			return g
		}
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
		return ib
	}
	return slowestFastest(run, func(h int) []float64 {
		var rates []float64
		for _, n := range run.Hosts[h].Net {
			if n.Name == "lo" || n.SpeedMbps <= 0 {
				continue
			}
			if n.State != "" && !strings.EqualFold(n.State, "up") {
				continue
			}
			rates = append(rates, float64(n.SpeedMbps)/1000)
		}
		return rates
	})
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

// seriesLinkRate is the link rate shared by a series' runs: the lowest of
// them, 0 when any is unknown.
func (r *Report) seriesLinkRate(ids []int64) float64 {
	out := 0.0
	for _, id := range ids {
		g := r.linkRateOf(r.byID[id])
		if g == 0 {
			return 0
		}
		if out == 0 || g < out {
			out = g
		}
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
