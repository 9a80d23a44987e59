package reports

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/sbench/sbench/sizes"
)

// computeVerdict writes the report's verdict: for each benchmark the
// sentences an engineer would write after reading its figures — peak
// bandwidth and where it is reached, its share of the link, latency at the
// smallest size, ratios between configurations, the slowest node pair, the
// best valid HPL result — every number taken from the summaries, none
// typed by hand.
func (r *Report) computeVerdict() []string {
	var out []string
	for _, f := range r.families {
		out = append(out, r.familyVerdict(f)...)
	}
	out = append(out, r.overviewVerdict()...)
	failed := 0
	for i := range r.runs {
		if bad(&r.runs[i]) {
			failed++
		}
	}
	if failed > 0 {
		out = append(out, fmt.Sprintf("%d of %d runs failed or are invalid; their numbers are left out of every figure and summary (see Runs and the appendix).",
			failed, len(r.runs)))
	}
	if diffs := fieldsOf(r.mismatches()); len(diffs) > 0 {
		out = append(out, fmt.Sprintf("Warning: the nodes of a run differ in %s (see System); results between them may differ for that reason.",
			joinAnd(diffs)))
	}
	if len(out) == 0 {
		out = append(out, "No successful run has samples to summarise.")
	}
	return out
}

// familyVerdict is the verdict on one benchmark.
func (r *Report) familyVerdict(f *familyResult) []string {
	var out []string
	for _, g := range f.groups {
		switch {
		case g.kind == KindBandwidth:
			out = append(out, bandwidthVerdict(g)...)
		case g.kind == KindLatency && g.collective:
			out = append(out, collectiveVerdict(g))
		case g.kind == KindLatency:
			out = append(out, latencyVerdict(g))
		}
	}
	for _, m := range f.matrices {
		out = append(out, matrixVerdict(m))
	}
	if len(f.hpl) > 0 {
		out = append(out, hplVerdict(f))
	}
	return out
}

func label(config string, ranks int) string {
	return Series{Config: config, Ranks: ranks}.Label()
}

func bandwidthVerdict(g *sizeGroup) []string {
	sums := append([]BandwidthSummary(nil), g.bandwidth...)
	sort.SliceStable(sums, func(i, j int) bool { return sums[i].Peak > sums[j].Peak })
	best := sums[0]
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s reached %s MB/s at %s", g.title(), label(best.Config, best.Ranks), formatValue(best.Peak), proseSize(best.PeakAt))
	if best.PercentOfLink > 0 {
		fmt.Fprintf(&b, " (%s%% of the %s link)", formatPercent(best.PercentOfLink), formatRate(best.LinkRate))
	}
	switch {
	case len(sums) == 2:
		o := sums[1]
		cmp := formatRatio(best.Peak, o.Peak)
		if best.Peak < 1.02*o.Peak {
			cmp = "on par with"
		}
		fmt.Fprintf(&b, ", %s %s (%s MB/s at %s)", cmp, label(o.Config, o.Ranks), formatValue(o.Peak), proseSize(o.PeakAt))
	case len(sums) > 2:
		o := sums[len(sums)-1]
		fmt.Fprintf(&b, "; the slowest of %d configurations, %s, peaked at %s MB/s (%s less)",
			len(sums), label(o.Config, o.Ranks), formatValue(o.Peak), formatRatio(best.Peak, o.Peak))
	}
	b.WriteString(".")
	out := []string{b.String()}
	if len(sums) >= 2 {
		if s := widestGap(g, sums[0], sums[len(sums)-1]); s != "" {
			out = append(out, s)
		}
	}
	for _, s := range g.bandwidth {
		if s.LargestAt > s.PeakAt && s.Largest < 0.8*s.Peak {
			out = append(out, fmt.Sprintf("%s: beyond its peak, %s falls to %s MB/s at %s (%s%% of its peak).",
				g.title(), label(s.Config, s.Ranks), formatValue(s.Largest), proseSize(s.LargestAt), formatPercent(100*s.Largest/s.Peak)))
		}
	}
	return out
}

// widestGap finds the size where two bandwidth curves differ most, and
// says so when that tells more than their peaks do: eRDMA's 3.6× TCP at
// 32 KiB where their peaks differ by 2×, or a direction twice as slow as
// the other at 256 B where both peak alike.
func widestGap(g *sizeGroup, a, b BandwidthSummary) string {
	sa, sb := g.seriesOf(a.Config, a.Ranks), g.seriesOf(b.Config, b.Ranks)
	if sa == nil || sb == nil {
		return ""
	}
	at := map[float64]float64{}
	for _, p := range sb.Points {
		at[p.X] = p.Y
	}
	var x, va, vb, ratio float64
	for _, p := range sa.Points {
		w, ok := at[p.X]
		if !ok || w <= 0 || p.Y <= 0 {
			continue
		}
		r := max(p.Y/w, w/p.Y)
		if r > ratio {
			x, va, vb, ratio = p.X, p.Y, w, r
		}
	}
	peak := max(a.Peak/b.Peak, b.Peak/a.Peak)
	if ratio < 1.25 || ratio < 1.15*peak {
		return ""
	}
	return fmt.Sprintf("%s: the curves differ most at %s, where %s has %s MB/s and %s %s MB/s (%s).",
		g.title(), proseSize(x), label(a.Config, a.Ranks), formatValue(va), label(b.Config, b.Ranks), formatValue(vb),
		formatRatio(max(va, vb), min(va, vb)))
}

func latencyVerdict(g *sizeGroup) string {
	sums := comparable(g.latency)
	if len(sums) == 0 {
		s := g.latency[0]
		return fmt.Sprintf("%s: %s has %s µs latency at %s.", g.title(), label(s.Config, s.Ranks), formatValue(s.Smallest), proseSize(s.SmallestAt))
	}
	best := sums[0]
	var b strings.Builder
	fmt.Fprintf(&b, "%s: at %s, %s has %s µs latency", g.title(), proseSize(best.CommonAt), label(best.Config, best.Ranks), formatValue(best.AtCommon))
	if len(sums) >= 2 {
		o := sums[len(sums)-1]
		fmt.Fprintf(&b, " vs %s µs for %s (%s lower)", formatValue(o.AtCommon), label(o.Config, o.Ranks), formatRatio(o.AtCommon, best.AtCommon))
	}
	b.WriteString(".")
	return b.String()
}

// comparable are the latency summaries measured at the common size, best
// first.
func comparable(ls []LatencySummary) []LatencySummary {
	var sums []LatencySummary
	for _, l := range ls {
		if l.AtCommon > 0 {
			sums = append(sums, l)
		}
	}
	sort.SliceStable(sums, func(i, j int) bool { return sums[i].AtCommon < sums[j].AtCommon })
	return sums
}

func collectiveVerdict(g *sizeGroup) string {
	var parts []string
	for _, s := range g.latency {
		parts = append(parts, fmt.Sprintf("%s %s µs at %s and %s µs at %s", label(s.Config, s.Ranks),
			formatValue(s.Smallest), proseSize(s.SmallestAt), formatValue(s.Largest), proseSize(s.LargestAt)))
	}
	head := g.title()
	if g.ranks > 0 {
		head += fmt.Sprintf(" (%d ranks)", g.ranks)
	}
	return head + ": " + strings.Join(capList(parts, verdictItems, "configurations in the section's table"), "; ") + "."
}

// verdictItems is the most configurations or runs one sentence of the
// verdict lists: a year of a site's runs must not make a page of one.
const verdictItems = 6

// capList keeps the first n items, and says how many more there are and
// where.
func capList(items []string, n int, where string) []string {
	if len(items) <= n {
		return items
	}
	return append(items[:n:n], fmt.Sprintf("%d more %s", len(items)-n, where))
}

func matrixVerdict(m *matrixGroup) string {
	s := m.summary
	unit := unitLabel(s.Unit)
	var b strings.Builder
	what := "bandwidth"
	if !m.higherBetter() {
		what = "latency"
	}
	fmt.Fprintf(&b, "%s, %s (%s): %d node pairs, median %s %s", m.family, what, s.Config, s.Pairs, formatValue(s.Median), unit)
	if len(s.Worst) > 0 && s.Median > 0 {
		w := s.Worst[0]
		dev := math.Abs(w.Value-s.Median) / s.Median
		word := "slowest"
		if !m.higherBetter() {
			word = "highest"
		}
		if dev >= 0.1 {
			fmt.Fprintf(&b, "; %s pair %s → %s at %s %s (%s%% of the median)", word, w.From, w.To, formatValue(w.Value), unit, formatPercent(100*w.Value/s.Median))
		} else {
			b.WriteString("; every pair is within 10% of the median")
		}
	}
	if s.Asymmetry >= 0.2 {
		p := s.AsymmetryPair
		fmt.Fprintf(&b, "; %s → %s and back differ by %s%%", p.From, p.To, formatPercent(100*s.Asymmetry))
	}
	b.WriteString(".")
	return b.String()
}

func hplVerdict(f *familyResult) string {
	var valid, invalid []HPLRow
	for _, row := range f.hpl {
		if row.Valid {
			valid = append(valid, row)
		} else {
			invalid = append(invalid, row)
		}
	}
	var b strings.Builder
	if len(valid) > 0 {
		best := valid[0]
		for _, row := range valid[1:] {
			if row.Gflops > best.Gflops {
				best = row
			}
		}
		grid := fmt.Sprintf(", P×Q=%d×%d", best.P, best.Q)
		if best.P == 0 || best.Q == 0 {
			// The runner's hpl kernel: every rank its own system, no grid.
			grid = ", one system per rank"
		}
		fmt.Fprintf(&b, "%s: best valid result %s Gflops with %s (N=%d, NB=%d%s)", f.name, formatValue(best.Gflops), best.Config, best.N, best.NB, grid)
		if best.Rpeak > 0 {
			fmt.Fprintf(&b, ", %s%% of Rpeak %s Gflops", formatPercent(best.Efficiency), formatValue(best.Rpeak))
		}
		b.WriteString(".")
	} else {
		fmt.Fprintf(&b, "%s: no valid result.", f.name)
	}
	if len(invalid) > 0 {
		var parts []string
		for _, row := range invalid {
			why := "invalid: " + firstLine(row.Error)
			if len(row.Failed) > 0 {
				why = fmt.Sprintf("FAILED %d of %d residual checks", len(row.Failed), len(row.Checks))
			}
			parts = append(parts, fmt.Sprintf("%s %s Gflops (%s)", row.Config, formatValue(row.Gflops), why))
		}
		fmt.Fprintf(&b, " Not results: %s.", strings.Join(capList(parts, verdictItems, "in the HPL table"), "; "))
	}
	return b.String()
}

// formatValue writes measured values with two decimals, as OSU prints them,
// so the report's numbers can be found in the tool's own output.
func formatValue(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }

// formatPercent writes a percentage with no decimals from 10% up, one
// below.
func formatPercent(p float64) string {
	if p >= 10 {
		return strconv.FormatFloat(p, 'f', 0, 64)
	}
	return strconv.FormatFloat(p, 'f', 1, 64)
}

// formatRatio writes a/b as "3.62×".
func formatRatio(a, b float64) string {
	if b == 0 {
		return "—"
	}
	return strconv.FormatFloat(a/b, 'f', 2, 64) + "×"
}

// proseSize writes a message size for sentences: "1 B", "32 KiB", "4 MiB"
// (sizes.Label); a size just off a power of two, as NetPIPE perturbs them,
// gets the power it is near too: "8388605 B ≈ 8 MiB".
func proseSize(b float64) string {
	if p := math.Exp2(math.Round(math.Log2(b))); b >= 1024 && b != p && math.Abs(b-p) <= 8 {
		return strconv.FormatFloat(b, 'f', 0, 64) + " B ≈ " + sizes.Label(p)
	}
	return sizes.Label(b)
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return l
}

func joinAnd(items []string) string {
	switch len(items) {
	case 0:
		return ""
	case 1:
		return items[0]
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}
