package expect

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
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
