package reports

import (
	"strconv"
	"strings"

	"github.com/sbench/sbench/expect/judge"
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

// runLink is what the report knows of the link a run's traffic crossed.
type runLink struct {
	rate  float64 // Gb/s; 0 when unknown or when none applies
	local string  // judge.LocalLoopback or judge.LocalOneMachine when none applies
}

// linkOf is the theoretical rate of the link a run's traffic crossed, in
// Gb/s: the --link-rate override, else what judge.RunLink reads from the
// run's label and provenance.
func (r *Report) linkOf(run *store.Run) runLink {
	if r.opts.linkRate > 0 {
		return runLink{rate: r.opts.linkRate}
	}
	rate, local := judge.RunLink(run)
	return runLink{rate: rate, local: local}
}

// seriesLink is the link a series' runs share: the lowest of their
// rates, 0 when any is unknown; and why none applies when none does to
// any of them (judge.LocalLoopback when the runner saw that of every run).
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
	case locals[judge.LocalLoopback] == len(ids):
		out.local = judge.LocalLoopback
	case locals[judge.LocalLoopback]+locals[judge.LocalOneMachine] == len(ids):
		out.local = judge.LocalOneMachine
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
