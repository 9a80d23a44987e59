package screen

import (
	"bufio"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/sbench/sbench/results"
	"github.com/sbench/sbench/sizes"
	"github.com/sbench/sbench/slurm/hostlist"
	"github.com/sbench/sbench/store"
)

// WriteText writes the verdict for a terminal: what was screened and the
// limits, each check's references, the findings with their evidence, the
// transient links, the warnings, and a last line that sums it up. what
// names the selection.
func (v *Verdict) WriteText(w io.Writer, what string) error {
	bw := bufio.NewWriter(w)
	p := func(format string, args ...any) { fmt.Fprintf(bw, format+"\n", args...) }
	p("screening of %s: %d node%s %s, runs %s", what, len(v.Nodes), results.Plural(len(v.Nodes)), dashIfEmpty(hostlist.Compress(v.Nodes)), dashIfEmpty(store.FormatRunIDs(v.Runs)))
	p("limits: latency ≤ %s× the minimum, bandwidth ≥ %s of the maximum%s; STREAM triad and HPL ≥ %s of the node median",
		ftoa(v.LatencyFactor), pct(v.BandwidthFraction), clusterKit(v), pct(v.NodeFraction))
	p("")
	p("checks")
	if m := v.Matrix; m != nil {
		sched := ""
		if m.Schedule != "" {
			sched = ", " + m.Schedule
		}
		p("  matrix      %s, %d of %d pairs%s: latency min %s %s (limit %s), bandwidth max %s %s (limit %s); %d outside tolerance, %d re-tested, %d bad, %d transient",
			runList(m.Runs), m.Pairs, m.Nodes*(m.Nodes-1), sched, ftoa(m.MinLatency), m.LatencyUnit, ftoa(m.LatencyLimit),
			ftoa(m.MaxBandwidth), m.BandwidthUnit, ftoa(m.BandwidthLimit), m.Suspects, m.Retested, m.Bad, m.Transient)
	}
	if r := v.Reference; r != nil {
		bad := 0
		for i := range r.Links {
			if r.Links[i].Status() == Bad {
				bad++
			}
		}
		p("  reference   %s, %d links to and from %s: latency at %s min %s %s (limit %s), bandwidth at %s max %s %s (limit %s); %d bad",
			runList(r.Runs), len(r.Links), r.Node, sizes.Label(r.LatencySize), ftoa(r.MinLatency), r.LatencyUnit, ftoa(r.LatencyLimit),
			sizes.Label(r.BandwidthSize), ftoa(r.MaxBandwidth), r.BandwidthUnit, ftoa(r.BandwidthLimit), bad)
	}
	for _, c := range v.NodeValues {
		ranks := ""
		if c.Ranks != "" {
			ranks = fmt.Sprintf(", %d rank%s per node", atoi(c.Ranks), results.Plural(atoi(c.Ranks)))
		}
		p("  %-11s %s, %d node%s%s: node median %s %s (limit %s); %d low", c.Check, runList(c.Runs), len(c.Values), results.Plural(len(c.Values)), ranks,
			ftoa(c.Median), c.Unit, ftoa(c.Limit), len(c.Low))
	}
	odd := 0
	for _, fc := range v.Provenance {
		if fc.Majority != "" {
			odd += len(fc.Odd)
		}
	}
	p("  provenance  %d field(s) differ, %d node(s) from the majority", len(v.Provenance), odd)
	p("")
	if len(v.Findings) == 0 {
		p("findings: none")
	} else {
		p("findings")
	}
	for _, f := range v.Findings {
		head := "  " + kindHeads[f.Kind] + " " + f.Subject
		if f.Drain {
			head += " (drain)"
		}
		if f.Kind == KindOneWay && len(f.Links) > 0 {
			head += ": " + linkList(f.Links)
		}
		p("%s", head)
		for _, e := range f.Evidence {
			p("    %s: %s", e.Check, e.Text)
		}
	}
	if len(v.Transient) > 0 {
		p("")
		p("transient (outside tolerance once, within when measured again — a re-test, another run, the matrix; not flagged)")
		for _, l := range v.Transient {
			p("  %s", transientText(l))
		}
	}
	if len(v.Warnings) > 0 {
		p("")
		p("warnings")
		for _, w := range v.Warnings {
			p("  %s", w)
		}
	}
	p("")
	p("verdict: %s", v.Summary())
	return bw.Flush()
}

var kindHeads = map[Kind]string{KindNode: "NODE", KindOneWay: "ONE-WAY", KindLink: "LINK", KindRun: "NOT OK"}

// Summary is the verdict in one sentence.
func (v *Verdict) Summary() string {
	counts := map[Kind][]string{}
	for _, f := range v.Findings {
		counts[f.Kind] = append(counts[f.Kind], f.Subject)
	}
	if len(v.Findings) == 0 {
		s := fmt.Sprintf("nothing flagged on %d node%s", len(v.Nodes), results.Plural(len(v.Nodes)))
		if len(v.Transient) > 0 {
			s += fmt.Sprintf(" (%d transient link%s recovered on a re-test)", len(v.Transient), results.Plural(len(v.Transient)))
		}
		return s
	}
	var parts []string
	add := func(k Kind, one, many string) {
		if n := len(counts[k]); n > 0 {
			what := one
			if n > 1 {
				what = many
			}
			parts = append(parts, fmt.Sprintf("%d %s (%s)", n, what, strings.Join(counts[k], ", ")))
		}
	}
	add(KindNode, "bad node", "bad nodes")
	add(KindOneWay, "one-way node link", "one-way node links")
	add(KindLink, "bad link", "bad links")
	add(KindRun, "failed or invalid run", "failed or invalid runs")
	s := strings.Join(parts, ", ")
	if len(v.Drain) > 0 {
		var ns []string
		for _, d := range v.Drain {
			ns = append(ns, d.Node)
		}
		s += "; drain " + hostlist.Compress(ns)
	}
	return s
}

// WriteDrain writes the scontrol line of every node to drain.
func (v *Verdict) WriteDrain(w io.Writer) error {
	bw := bufio.NewWriter(w)
	for _, d := range v.Drain {
		fmt.Fprintln(bw, d.Command)
	}
	return bw.Flush()
}

func clusterKit(v *Verdict) string {
	if v.LatencyFactor == 2.1 && v.BandwidthFraction == 0.93 {
		return " (ClusterKit's)"
	}
	return ""
}

func transientText(l Link) string {
	var parts []string
	if l.LatencyStatus == Transient {
		parts = append(parts, "latency "+ftoa(l.Latency)+" us")
	}
	if l.BandwidthStatus == Transient {
		parts = append(parts, "bandwidth "+ftoa(l.Bandwidth)+" MB/s")
	}
	var re []string
	for _, r := range l.Retests {
		var vals []string
		if l.LatencyStatus == Transient && r.Latency > 0 {
			vals = append(vals, ftoa(r.Latency)+" us")
		}
		if l.BandwidthStatus == Transient && r.Bandwidth > 0 {
			vals = append(vals, ftoa(r.Bandwidth)+" MB/s")
		}
		if len(vals) > 0 {
			re = append(re, "pass "+r.Pass+" "+strings.Join(vals, ", "))
		}
	}
	s := l.Name() + ": " + strings.Join(parts, ", ")
	if l.Runs > 1 {
		s += fmt.Sprintf(" (the median of %d runs); bad in %d of them", l.Runs, l.BadRuns)
	}
	if len(re) > 0 {
		s += "; re-test " + strings.Join(re, "; ")
	}
	if l.Note != "" {
		s += " (" + l.Note + ")"
	}
	return s
}

// linkList writes links compactly: those from one node as
// "n5→n[1-4,6-8]", those to one node as "n[1-4]→n5".
func linkList(links []string) string {
	from := map[string][]string{}
	to := map[string][]string{}
	for _, l := range links {
		a, b, _ := strings.Cut(l, "→")
		from[a] = append(from[a], b)
		to[b] = append(to[b], a)
	}
	if len(to) == 1 && len(from) > 1 {
		for b, as := range to {
			slices.SortFunc(as, hostlist.Compare)
			return hostlist.Compress(as) + "→" + b
		}
	}
	var parts []string
	for _, a := range slices.SortedFunc(maps.Keys(from), hostlist.Compare) {
		bs := from[a]
		slices.SortFunc(bs, hostlist.Compare)
		parts = append(parts, a+"→"+hostlist.Compress(bs))
	}
	return strings.Join(parts, ", ")
}

func runList(ids []int64) string {
	if len(ids) == 1 {
		return fmt.Sprintf("run %d", ids[0])
	}
	return "runs " + store.FormatRunIDs(ids)
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}
