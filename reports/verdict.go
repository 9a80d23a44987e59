package reports

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/sbench/sbench/compare"
	"github.com/sbench/sbench/expect/judge"
	"github.com/sbench/sbench/results"
	"github.com/sbench/sbench/sizes"
)

// computeVerdict writes the report's verdict: for each benchmark the
// sentences an engineer would write after reading its figures — peak
// bandwidth and where it is reached, its share of the link its traffic
// crossed, latency at the smallest size, ratios between configurations
// that their runs tell apart, the slowest node pair, the best valid HPL
// result — every number taken from the summaries, none typed by hand,
// each with the runs it pools.
func (r *Report) computeVerdict() []string {
	var out []string
	for _, f := range r.families {
		out = append(out, r.familyVerdict(f)...)
	}
	out = append(out, r.overviewVerdict()...)
	if failed := r.badRuns(); failed > 0 {
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
	if len(out) == 0 {
		// Nothing drawn against a size: an application's figures, a
		// command's wall time.
		out = capList(valuesVerdict(f), verdictItems, "metrics of "+f.name+" in its table")
	}
	return out
}

// valuesVerdict is a sentence per metric of f that has a direction and no
// size axis: its best and worst configuration's medians, and a factor
// between them only when their runs tell them apart.
func valuesVerdict(f *familyResult) []string {
	var metrics []string
	rows := map[string][]ValueRow{}
	for _, v := range f.values {
		if results.BetterFor(v.Unit) == results.BetterUnknown {
			continue // a count: shown in the table, not judged
		}
		if rows[v.Metric] == nil {
			metrics = append(metrics, v.Metric)
		}
		rows[v.Metric] = append(rows[v.Metric], v)
	}
	var out []string
	for _, m := range metrics {
		vs := rows[m]
		higher := results.BetterFor(vs[0].Unit) == results.BetterHigher
		sort.SliceStable(vs, func(i, j int) bool {
			if higher {
				return vs[i].Median > vs[j].Median
			}
			return vs[i].Median < vs[j].Median
		})
		spread := func(v ValueRow) string {
			if v.RunValues == nil {
				return fmt.Sprintf("%d samples of %d runs, %s–%s", v.N, len(v.Runs), formatNumber(v.Min), formatNumber(v.Max))
			}
			return figure{value: v.Median, runs: v.RunValues, samples: v.N}.spread()
		}
		unit := unitLabel(vs[0].Unit)
		best := vs[0]
		var b strings.Builder
		fmt.Fprintf(&b, "%s: %s %s %s (%s)", f.name, m, formatNumber(best.Median), unit, spread(best))
		if len(vs) >= 2 {
			worst, word, than := vs[len(vs)-1], "lowest", "higher"
			if higher {
				word, than = "highest", "lower"
			}
			fmt.Fprintf(&b, " for %s, the %s of %d configurations; %s %s %s (%s)", best.Config, word, len(vs), worst.Config,
				formatNumber(worst.Median), unit, spread(worst))
			if best.RunValues == nil || worst.RunValues == nil {
				b.WriteString("; runs that give several values each are not compared here")
			} else if sep := separate(best.RunValues, worst.RunValues, verdictAlpha); sep.apart {
				fmt.Fprintf(&b, ": %s %s for %s (every run apart, p = %s)", formatRatio(math.Max(best.Median, worst.Median), math.Min(best.Median, worst.Median)), than, worst.Config, formatP(sep.p))
			} else {
				b.WriteString("; " + sep.why)
			}
		}
		b.WriteString(".")
		out = append(out, b.String())
	}
	return out
}

func label(config string, ranks int) string {
	return Series{Config: config, Ranks: ranks}.Label()
}

// The verdict quotes each configuration's figure as the median of its
// runs, with how many runs it pools and their range, and states a factor
// between two configurations only when their runs tell them apart: every
// run of one beyond every run of the other, and an exact Mann-Whitney
// test of the runs at verdictAlpha, which non-overlapping runs pass from
// 4 runs each (p = 2/C(8,4) = 0.029; 3 and 3 give 0.10). One run has no
// known spread, and two identical configurations run twice each have
// non-overlapping runs one time in three. docs/report.md says so.
const verdictAlpha = 0.05

// figure is one configuration's figure at one size, as the verdict
// quotes it.
type figure struct {
	value   float64   // the point's median (or its runs' p50s')
	runs    []float64 // each run's value there
	samples int       // the samples the point pools
}

// figureAt is a series' figure at size x; with p50, of the samples' own
// medians (Point.RunP50), which the caller has checked are there.
func (g *sizeGroup) figureAt(config string, ranks int, x float64, p50 bool) figure {
	s := g.seriesOf(config, ranks)
	if s == nil {
		return figure{}
	}
	for _, p := range s.Points {
		if p.X != x {
			continue
		}
		if p50 {
			return figure{value: median(p.RunP50), runs: p.RunP50, samples: p.N}
		}
		return figure{value: p.Y, runs: p.RunValues, samples: p.N}
	}
	return figure{}
}

// spread says how many runs a figure pools and how far apart they are.
func (f figure) spread() string {
	n := len(f.runs)
	switch {
	case n == 0:
		return "no run"
	case n == 1 && f.samples > 1:
		return fmt.Sprintf("1 run, the median of its %d samples: no spread between runs known", f.samples)
	case n == 1:
		return "1 run: no spread known"
	}
	lo, hi := formatValue(slices.Min(f.runs)), formatValue(slices.Max(f.runs))
	rng := lo + "–" + hi
	if lo == hi {
		rng = "all " + lo
	}
	if f.samples > n {
		return fmt.Sprintf("%d samples of %d runs, the runs %s", f.samples, n, rng)
	}
	return fmt.Sprintf("median of %d runs, %s", n, rng)
}

// separation is what the runs of two configurations tell of their
// difference.
type separation struct {
	apart bool    // the factor may be stated
	p     float64 // the test's p-value, when there was one
	why   string  // otherwise, why not: a clause about "the two"
}

// separate compares the runs of two configurations at level alpha.
func separate(a, b []float64, alpha float64) separation {
	na, nb := len(a), len(b)
	switch {
	case na < 2 || nb < 2:
		return separation{why: fmt.Sprintf("with %s no factor is claimed: their spread is unknown", runsOf(na, nb))}
	case slices.Max(a) >= slices.Min(b) && slices.Max(b) >= slices.Min(a):
		return separation{why: fmt.Sprintf("the two are within their run-to-run spread (the ranges of their %s overlap)", runsOf(na, nb))}
	}
	u, err := compare.MannWhitney(a, b)
	if err != nil || u.P > alpha {
		return separation{p: u.P, why: fmt.Sprintf("the runs of the two do not overlap, but %s could by chance: p = %s, and %d runs each can tell",
			runsOf(na, nb), formatP(u.P), runsNeeded(alpha))}
	}
	return separation{apart: true, p: u.P}
}

// runsOf writes two run counts: "1 run each", "3 and 4 runs".
func runsOf(a, b int) string {
	switch {
	case a == b && a == 1:
		return "1 run each"
	case a == b:
		return fmt.Sprintf("%d runs each", a)
	}
	return fmt.Sprintf("%d and %d runs", a, b)
}

// runsNeeded is the fewest runs of each of two configurations whose
// ranges, apart, pass the test at alpha: 2/C(2n, n) ≤ alpha.
func runsNeeded(alpha float64) int {
	for n := 2; ; n++ {
		if 2/binomial(2*n, n) <= alpha {
			return n
		}
	}
}

func binomial(n, k int) float64 {
	c := 1.0
	for i := 1; i <= k; i++ {
		c = c * float64(n-k+i) / float64(i)
	}
	return c
}

// formatP writes a p-value with two significant digits.
func formatP(p float64) string { return strconv.FormatFloat(p, 'g', 2, 64) }

func bandwidthVerdict(g *sizeGroup) []string {
	sums := append([]BandwidthSummary(nil), g.bandwidth...)
	sort.SliceStable(sums, func(i, j int) bool { return sums[i].Peak > sums[j].Peak })
	best := sums[0]
	bf := g.figureAt(best.Config, best.Ranks, best.PeakAt, false)
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s reached %s MB/s at %s (%s", g.title(), label(best.Config, best.Ranks), formatValue(best.Peak), proseSize(best.PeakAt), bf.spread())
	if best.PercentOfLink > 0 {
		fmt.Fprintf(&b, "; %s%% of the %s link", formatPercent(best.PercentOfLink), formatRate(best.LinkRate))
	}
	b.WriteString(")")
	if len(sums) >= 2 {
		o := sums[len(sums)-1]
		of := g.figureAt(o.Config, o.Ranks, o.PeakAt, false)
		sep := separate(bf.runs, of.runs, verdictAlpha)
		switch {
		case len(sums) == 2 && sep.apart:
			fmt.Fprintf(&b, ", %s %s (%s MB/s at %s, %s; every run apart, p = %s)", formatRatio(best.Peak, o.Peak), label(o.Config, o.Ranks),
				formatValue(o.Peak), proseSize(o.PeakAt), of.spread(), formatP(sep.p))
		case len(sums) == 2:
			fmt.Fprintf(&b, "; %s %s MB/s at %s (%s): %s", label(o.Config, o.Ranks), formatValue(o.Peak), proseSize(o.PeakAt), of.spread(), sep.why)
		case sep.apart:
			fmt.Fprintf(&b, "; the slowest of %d configurations, %s, peaked at %s MB/s at %s (%s), %s less (every run apart, p = %s)",
				len(sums), label(o.Config, o.Ranks), formatValue(o.Peak), proseSize(o.PeakAt), of.spread(), formatRatio(best.Peak, o.Peak), formatP(sep.p))
		default:
			fmt.Fprintf(&b, "; the slowest of %d configurations, %s, peaked at %s MB/s at %s (%s): %s",
				len(sums), label(o.Config, o.Ranks), formatValue(o.Peak), proseSize(o.PeakAt), of.spread(), sep.why)
		}
	}
	b.WriteString(".")
	if s := localSentence(sums); s != "" {
		b.WriteString(" " + s)
	}
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

// localSentence says of the configurations whose traffic stayed on one
// machine that no link rate applies to them: the report knows their
// traffic crossed no link (linkOf), and a rate of one of the host's
// interfaces would be a share of nothing they used.
func localSentence(sums []BandwidthSummary) string {
	var names []string
	loopback := true
	for _, s := range sums {
		if s.Local != "" {
			names = append(names, label(s.Config, s.Ranks))
			loopback = loopback && s.Local == judge.LocalLoopback
		}
	}
	if len(names) == 0 {
		return ""
	}
	who := "The traffic"
	if len(names) < len(sums) {
		who = "The traffic of " + joinAnd(names)
	}
	how := "loopback"
	if !loopback {
		how = "every rank on one host: loopback or shared memory"
	}
	return fmt.Sprintf("%s stayed on one machine (%s): no link rate applies.", who, how)
}

// widestGap finds the size where two bandwidth curves differ most, and
// says so when that tells more than their peaks do: eRDMA's 3.6× TCP at
// 32 KiB where their peaks differ by 2×, or a direction twice as slow as
// the other at 256 B where both peak alike. The factor is stated when the
// runs at that size tell the two apart at verdictAlpha over the sizes
// compared (the size is the most different of them: Bonferroni).
func widestGap(g *sizeGroup, a, b BandwidthSummary) string {
	sa, sb := g.seriesOf(a.Config, a.Ranks), g.seriesOf(b.Config, b.Ranks)
	if sa == nil || sb == nil {
		return ""
	}
	at := map[float64]Point{}
	for _, p := range sb.Points {
		at[p.X] = p
	}
	var pa, pb Point
	ratio, compared := 0.0, 0
	for _, p := range sa.Points {
		q, ok := at[p.X]
		if !ok || q.Y <= 0 || p.Y <= 0 {
			continue
		}
		compared++
		if r := max(p.Y/q.Y, q.Y/p.Y); r > ratio {
			pa, pb, ratio = p, q, r
		}
	}
	peak := max(a.Peak/b.Peak, b.Peak/a.Peak)
	if ratio < 1.25 || ratio < 1.15*peak {
		return ""
	}
	s := fmt.Sprintf("%s: the curves differ most at %s, where %s has %s MB/s and %s %s MB/s", g.title(), proseSize(pa.X),
		label(a.Config, a.Ranks), formatValue(pa.Y), label(b.Config, b.Ranks), formatValue(pb.Y))
	if sep := separate(pa.RunValues, pb.RunValues, verdictAlpha/float64(compared)); sep.apart {
		s += fmt.Sprintf(" (%s; every run apart, p = %s, of %d sizes compared)", formatRatio(max(pa.Y, pb.Y), min(pa.Y, pb.Y)), formatP(sep.p), compared)
	} else {
		s += " (" + sep.why + ")"
	}
	return s + "."
}

func latencyVerdict(g *sizeGroup) string {
	sums := atCommonSize(g.latency)
	if len(sums) == 0 {
		s := g.latency[0]
		f := g.figureAt(s.Config, s.Ranks, s.SmallestAt, false)
		return fmt.Sprintf("%s: %s has %s µs latency at %s (%s).", g.title(), label(s.Config, s.Ranks), formatValue(s.Smallest), proseSize(s.SmallestAt), f.spread())
	}
	// The median of each run's iterations where every configuration
	// compared has it (the runner's latency kernel): its mean is pulled
	// up by a tail of slow round trips that says nothing of the link
	// (23.25 µs against a median of 4.29 µs on a busy 2-core VM).
	// Otherwise the tool's own figure (OSU's average), alike for all.
	at := sums[0].CommonAt
	p50 := true
	for _, l := range sums {
		if s := g.seriesOf(l.Config, l.Ranks); s == nil || !hasP50(s.Points, at) {
			p50 = false
		}
	}
	type quoted struct {
		l LatencySummary
		f figure
	}
	qs := make([]quoted, len(sums))
	for i, l := range sums {
		qs[i] = quoted{l, g.figureAt(l.Config, l.Ranks, at, p50)}
	}
	sort.SliceStable(qs, func(i, j int) bool { return qs[i].f.value < qs[j].f.value })
	// with says what a quoted figure pools, and the mean beside a median
	// that differs from it.
	with := func(q quoted) string {
		if p50 && math.Abs(q.l.AtCommon-q.f.value) >= 0.1*q.f.value {
			return fmt.Sprintf("iterations' mean %s µs; %s", formatValue(q.l.AtCommon), q.f.spread())
		}
		return q.f.spread()
	}
	best := qs[0]
	var b strings.Builder
	what := "latency"
	if p50 {
		what = "median latency"
	}
	fmt.Fprintf(&b, "%s: at %s, %s has %s µs %s (%s)", g.title(), proseSize(at), label(best.l.Config, best.l.Ranks), formatValue(best.f.value), what, with(best))
	if len(qs) >= 2 {
		o := qs[len(qs)-1]
		if len(qs) > 2 {
			fmt.Fprintf(&b, ", the lowest of %d configurations; the highest, %s, %s µs (%s)", len(qs), label(o.l.Config, o.l.Ranks), formatValue(o.f.value), with(o))
		} else {
			fmt.Fprintf(&b, ", %s %s µs (%s)", label(o.l.Config, o.l.Ranks), formatValue(o.f.value), with(o))
		}
		if sep := separate(best.f.runs, o.f.runs, verdictAlpha); sep.apart {
			fmt.Fprintf(&b, ": %s lower for %s (every run apart, p = %s)", formatRatio(o.f.value, best.f.value), label(best.l.Config, best.l.Ranks), formatP(sep.p))
		} else {
			b.WriteString("; " + sep.why)
		}
	}
	b.WriteString(".")
	return b.String()
}

// hasP50 reports whether a series' point at x has its runs' own medians.
func hasP50(pts []Point, x float64) bool {
	for _, p := range pts {
		if p.X == x {
			return len(p.RunP50) > 0
		}
	}
	return false
}

// atCommonSize are the latency summaries measured at the common size, best
// first.
func atCommonSize(ls []LatencySummary) []LatencySummary {
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
		n := "1 run"
		if len(s.Runs) != 1 {
			n = fmt.Sprintf("median of %d runs", len(s.Runs))
		}
		parts = append(parts, fmt.Sprintf("%s %s µs at %s and %s µs at %s (%s)", label(s.Config, s.Ranks),
			formatValue(s.Smallest), proseSize(s.SmallestAt), formatValue(s.Largest), proseSize(s.LargestAt), n))
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
