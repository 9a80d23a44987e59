package reports

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/sbench/sbench/results"
	"github.com/sbench/sbench/screen"
	"github.com/sbench/sbench/sizes"
	"github.com/sbench/sbench/slurm/hostlist"
)

// Rows of the screening section's ranked tables.
const (
	worstNodeRows = 15
	worstPairRows = 15
)

// screeningSection draws the screening's verdict (package screen, as sbench
// screen prints it): the limits, what each check measured, the findings
// with their evidence, the nodes and the pairs ranked worst first, the
// links to the reference node that are off, the drain list, the transient
// links and the warnings.
func (r *Report) screeningSection(d *content) {
	v := r.screen
	if v == nil {
		return
	}
	d.heading("Screening", h1Size, 120)
	d.para(r.screen.Summary()+".", "B", bodySize, redIf(v.Flagged()))
	ck := ""
	if v.LatencyFactor == 2.1 && v.BandwidthFraction == 0.93 {
		ck = " (NVIDIA ClusterKit's)"
	}
	d.para(fmt.Sprintf("%d nodes (%s). A pair is outside tolerance when its latency is above %s× the lowest of the matrix or its bandwidth below %s of the highest%s; "+
		"it is bad when it stays outside on every re-test and in every run, transient when it came back. A node is bad when more than half of its links from it and "+
		"more than half of those to it are bad, both its links to the reference node are, its STREAM triad or HPL is below %s of the node median, or its provenance "+
		"differs from most nodes'; one-way when more than half of its links one way are bad and the others fine (its port or cable, not the node).",
		len(v.Nodes), hostlist.Compress(v.Nodes), strconv.FormatFloat(v.LatencyFactor, 'f', -1, 64), percent(v.BandwidthFraction), ck, percent(v.NodeFraction)), "", smallSize, grey)
	d.space(4)
	r.screenChecks(d, v)
	r.screenFindings(d, v)
	r.worstNodes(d, v)
	r.worstPairs(d, v)
	r.referenceLinks(d, v)
	r.drainList(d, v)
	if len(v.Transient) > 0 {
		d.heading("Transient links", h2Size, 40)
		var parts []string
		for _, l := range v.Transient {
			parts = append(parts, l.Name())
		}
		d.para(fmt.Sprintf("%d link%s outside tolerance once and within when measured again (a re-test, another run, or the matrix for a link to the reference): %s. Not flagged.",
			len(v.Transient), results.Plural(len(v.Transient)), strings.Join(parts, ", ")), "", smallSize, black)
	}
	if len(v.Warnings) > 0 {
		d.warningBox("The screening could not judge everything:", v.Warnings)
	}
	d.space(8)
}

// screenChecks is one row per check: what it measured, its reference and
// limit.
func (r *Report) screenChecks(d *content, v *screen.Verdict) {
	t := d.table([]column{{title: "Check", width: 70}, {title: "Runs", width: 60}, {title: "Measured", width: 130},
		{title: "Reference and limit"}, {title: "Flagged", width: 60, right: true}})
	if m := v.Matrix; m != nil {
		what := fmt.Sprintf("%d of %d ordered pairs", m.Pairs, m.Nodes*(m.Nodes-1))
		if m.Schedule != "" {
			what += ", " + m.Schedule
		}
		ref := fmt.Sprintf("latency min %s µs, limit %s; bandwidth max %s MB/s, limit %s", formatValue(m.MinLatency), formatValue(m.LatencyLimit),
			formatValue(m.MaxBandwidth), formatValue(m.BandwidthLimit))
		flagged := fmt.Sprintf("%d bad", m.Bad)
		if m.Retested > 0 {
			what += fmt.Sprintf("; %d re-tested", m.Retested)
		}
		t.row([]string{screen.CheckMatrix, runIDs(m.Runs), what, ref, flagged}, black, nil)
	}
	if rc := v.Reference; rc != nil {
		bad := countFunc(rc.Links, func(l *screen.Link) bool { return l.Status() == screen.Bad })
		what := fmt.Sprintf("%d links to and from %s; latency at %s, bandwidth at %s", len(rc.Links), rc.Node, sizes.Label(rc.LatencySize), sizes.Label(rc.BandwidthSize))
		ref := fmt.Sprintf("latency min %s µs, limit %s; bandwidth max %s MB/s, limit %s", formatValue(rc.MinLatency), formatValue(rc.LatencyLimit),
			formatValue(rc.MaxBandwidth), formatValue(rc.BandwidthLimit))
		t.row([]string{screen.CheckReference, runIDs(rc.Runs), what, ref, fmt.Sprintf("%d bad", bad)}, black, nil)
	}
	for _, c := range v.NodeValues {
		name := screen.CheckName(c.Check)
		t.row([]string{c.Check, runIDs(c.Runs), fmt.Sprintf("%s on %d nodes", name, len(c.Values)),
			fmt.Sprintf("node median %s %s, limit %s", formatValue(c.Median), c.Unit, formatValue(c.Limit)), fmt.Sprintf("%d low", len(c.Low))}, black, nil)
	}
	odd := 0
	for _, fc := range v.Provenance {
		if fc.Majority != "" {
			odd += len(fc.Odd)
		}
	}
	t.row([]string{screen.CheckProvenance, "", fmt.Sprintf("%d field%s differ", len(v.Provenance), results.Plural(len(v.Provenance))), "the value most nodes have",
		fmt.Sprintf("%d node%s", odd, results.Plural(odd))}, black, nil)
	d.space(8)
}

var kindTitles = map[screen.Kind]string{screen.KindNode: "node", screen.KindOneWay: "one-way", screen.KindLink: "link", screen.KindRun: "not ok:"}

// screenFindings lists every finding with its evidence.
func (r *Report) screenFindings(d *content, v *screen.Verdict) {
	if !subsection(d, "Findings", len(v.Findings), "Nothing flagged.") {
		return
	}
	t := d.table([]column{{title: "Finding", width: 90}, {title: "Evidence"}, {title: "Drain", width: 50}})
	t.maxLines = 12
	for _, f := range v.Findings {
		subject := kindTitles[f.Kind] + " " + f.Subject
		drain := ""
		if f.Drain {
			drain = "yes"
		}
		c := redIf(f.Kind == screen.KindNode || f.Kind == screen.KindRun)
		for i, e := range f.Evidence {
			if i > 0 {
				subject, drain = "", ""
			}
			t.row([]string{subject, e.Check + ": " + e.Text, drain}, c, nil)
		}
	}
	d.space(8)
}

// worstNodes ranks the nodes, the worst first.
func (r *Report) worstNodes(d *content, v *screen.Verdict) {
	if len(v.NodeStats) == 0 {
		return
	}
	n := min(worstNodeRows, len(v.NodeStats))
	d.heading(fmt.Sprintf("Nodes, the worst %d of %d", n, len(v.NodeStats)), h2Size, 60)
	t := d.table([]column{{title: "Node", width: 70}, {title: "Verdict", width: 60}, {title: "Bad from", width: 62, right: true},
		{title: "Bad to", width: 62, right: true}, {title: "Mean MB/s", width: 80, right: true},
		{title: "STREAM MB/s", width: 80, right: true}, {title: "HPL Gflops", right: true}})
	for _, st := range v.NodeStats[:n] {
		c := redIf(st.Status == screen.Bad)
		verdict := string(st.Status)
		if st.Finding == screen.KindOneWay {
			verdict = "one-way"
		}
		t.row([]string{st.Node, verdict, ratio(st.BadOut, st.OutLinks), ratio(st.BadIn, st.InLinks),
			valueOrDash(st.MeanBandwidth), valueOrDash(st.Stream), valueOrDash(st.HPL)}, c, nil)
	}
	d.space(8)
}

// worstPairs ranks the matrix's pairs by how far below the best pair they
// are, flagged or not.
func (r *Report) worstPairs(d *content, v *screen.Verdict) {
	m := v.Matrix
	if m == nil {
		return
	}
	// A bad node's links would fill the table, and a one-way node's: their
	// findings list them.
	covered := map[string]bool{}
	var by []string
	for _, f := range v.Findings {
		if (f.Kind == screen.KindNode || f.Kind == screen.KindOneWay) && len(f.Links) > 0 {
			by = append(by, f.Subject)
			for _, l := range f.Links {
				covered[l] = true
			}
		}
	}
	var worst []*screen.Link
	for _, l := range m.Worst(m.Pairs) {
		if len(worst) == worstPairRows {
			break
		}
		if !covered[l.Name()] {
			worst = append(worst, l)
		}
	}
	d.heading(fmt.Sprintf("Node pairs, the worst %d of %d", len(worst), m.Pairs), h2Size, 60)
	note := "Ranked by their shortfall from the best pair, in latency or bandwidth, whichever is worse."
	if len(by) > 0 {
		note = fmt.Sprintf("Ranked by their shortfall from the best pair, in latency or bandwidth, whichever is worse; without the %d links that the findings on %s list.",
			len(covered), strings.Join(by, ", "))
	}
	d.para(note, "", smallSize, grey)
	t := d.table([]column{{title: "Pair", width: 90}, {title: "Latency (µs)", width: 66, right: true}, {title: "× min", width: 40, right: true},
		{title: "MB/s", width: 70, right: true}, {title: "of max", width: 44, right: true}, {title: "Verdict", width: 60},
		{title: "Re-tests"}})
	for _, l := range worst {
		var re []string
		for _, rt := range l.Retests {
			s := "pass " + rt.Pass
			if rt.Bandwidth > 0 {
				s += " " + formatValue(rt.Bandwidth) + " MB/s"
			}
			if rt.Latency > 0 {
				s += " " + formatValue(rt.Latency) + " µs"
			}
			re = append(re, s)
		}
		c := redIf(l.Status() == screen.Bad)
		t.row([]string{l.Name(), valueOrDash(l.Latency), factor(l.Latency, m.MinLatency), valueOrDash(l.Bandwidth), share(l.Bandwidth, m.MaxBandwidth),
			string(l.Status()), orDash(strings.Join(re, "; "))}, c, nil)
	}
	d.space(8)
}

// referenceLinks lists the links to and from the reference node that are
// not within tolerance (the others are summed up in one line).
func (r *Report) referenceLinks(d *content, v *screen.Verdict) {
	rc := v.Reference
	if rc == nil {
		return
	}
	var off []screen.Link
	for _, l := range rc.Links {
		if l.Status() != screen.OK {
			off = append(off, l)
		}
	}
	d.heading("Links to the reference node "+rc.Node, h2Size, 50)
	d.para(fmt.Sprintf("%d links, %d within tolerance.", len(rc.Links), len(rc.Links)-len(off)), "", smallSize, black)
	if len(off) == 0 {
		d.space(6)
		return
	}
	t := d.table([]column{{title: "Link", width: 90}, {title: "Latency (µs)", width: 70, right: true}, {title: "× min", width: 44, right: true},
		{title: "MB/s", width: 74, right: true}, {title: "of max", width: 50, right: true}, {title: "Verdict"}})
	for _, l := range off {
		verdict := string(l.Status())
		if l.Note != "" {
			verdict += " (" + l.Note + ")"
		}
		t.row([]string{l.Name(), valueOrDash(l.Latency), factor(l.Latency, rc.MinLatency), valueOrDash(l.Bandwidth), share(l.Bandwidth, rc.MaxBandwidth), verdict}, black, nil)
	}
	d.space(8)
}

// drainList prints the scontrol lines that drain the bad nodes.
func (r *Report) drainList(d *content, v *screen.Verdict) {
	if !subsection(d, "Drain list", len(v.Drain), "No node to drain.") {
		return
	}
	d.para("To drain the bad nodes (sbench never runs these; sbench screen --drain prints them):", "", smallSize, black)
	// Two lines each, joined by the shell's line continuation, to fit.
	var lines []string
	for _, dr := range v.Drain {
		head, reason, _ := strings.Cut(dr.Command, " Reason=")
		lines = append(lines, head+` \`, "    Reason="+reason)
	}
	if h := float64(len(lines))*monoSize*1.22 + 3; h < contentBottom-contentTop {
		d.need(h)
	}
	d.mono(lines, len(lines), 0, black)
}

// subsection heads a list of n entries, or says none when n is 0; it
// reports whether the list follows.
func subsection(d *content, title string, n int, none string) bool {
	d.heading(title, h2Size, 40)
	if n == 0 {
		d.para(none, "", bodySize, black)
		d.space(6)
	}
	return n > 0
}

func ratio(bad, all int) string {
	if all == 0 {
		return "—"
	}
	return fmt.Sprintf("%d / %d", bad, all)
}

func valueOrDash(v float64) string {
	if v <= 0 {
		return "—"
	}
	return formatValue(v)
}

func factor(v, min float64) string {
	if v <= 0 || min <= 0 {
		return "—"
	}
	return strconv.FormatFloat(v/min, 'f', 2, 64) + "×"
}

func share(v, max float64) string {
	if v <= 0 || max <= 0 {
		return "—"
	}
	return percent(v / max)
}

func percent(x float64) string { return strconv.FormatFloat(100*x, 'f', 0, 64) + "%" }
