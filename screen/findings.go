package screen

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/sbench/sbench/slurm/hostlist"
)

// builder gathers the checks' evidence into findings: every check adds
// what it blames, finish merges what blames one node into one finding.
type builder struct {
	v *Verdict
	o Options

	seen         map[string]bool
	nodeEvidence map[string][]Evidence
	nodeSeverity map[string]float64
	nodeLinks    map[string][]string
	oneWay       map[[2]string]*Finding // node, "out" or "in"
	links        []Finding
	stats        map[string]*NodeStat
}

func (b *builder) warnf(format string, args ...any) {
	w := fmt.Sprintf(format, args...)
	if !slices.Contains(b.v.Warnings, w) {
		b.v.Warnings = append(b.v.Warnings, w)
	}
}

func (b *builder) see(node string) { b.seen[node] = true }

func (b *builder) stat(node string) *NodeStat {
	st := b.stats[node]
	if st == nil {
		st = &NodeStat{Node: node, Status: OK}
		b.stats[node] = st
	}
	b.see(node)
	return st
}

// nodeFinding blames node, for the evidence (about the links ls, if
// any).
func (b *builder) nodeFinding(node string, ev []Evidence, ls ...*Link) {
	if len(ev) == 0 {
		return
	}
	b.nodeLinks[node] = addLinks(b.nodeLinks[node], ls...)
	b.nodeEvidence[node] = append(b.nodeEvidence[node], ev...)
	b.nodeSeverity[node] = max(b.nodeSeverity[node], severity(ev))
	b.see(node)
}

// oneWayFinding blames what node sends (dir "out") or receives ("in").
func (b *builder) oneWayFinding(node, dir string, ls []*Link, ev []Evidence) {
	k := [2]string{node, dir}
	f := b.oneWay[k]
	if f == nil {
		subject := node + "→*"
		if dir == "in" {
			subject = "*→" + node
		}
		f = &Finding{Kind: KindOneWay, Subject: subject, Nodes: []string{node}}
		b.oneWay[k] = f
	}
	f.Links = addLinks(f.Links, ls...)
	f.Evidence = append(f.Evidence, ev...)
	f.severity = max(f.severity, severity(ev))
}

// addLinks adds to names the names of ls it does not hold yet.
func addLinks(names []string, ls ...*Link) []string {
	for _, l := range ls {
		if !slices.Contains(names, l.Name()) {
			names = append(names, l.Name())
		}
	}
	return names
}

// linkFinding blames one pair (subject "a→b" or "a↔b").
func (b *builder) linkFinding(subject string, ls []*Link, ev []Evidence) {
	f := Finding{Kind: KindLink, Subject: subject, Evidence: ev, severity: severity(ev)}
	for _, l := range ls {
		f.Links = append(f.Links, l.Name())
		for _, n := range []string{l.From, l.To} {
			if !slices.Contains(f.Nodes, n) {
				f.Nodes = append(f.Nodes, n)
			}
		}
	}
	b.links = append(b.links, f)
}

// severity is how far beyond its limit the worst evidence is: the limit
// over the value for a rate, the value over the limit for a time; 1 for
// evidence without numbers (a provenance mismatch).
func severity(ev []Evidence) float64 {
	s := 0.0
	for _, e := range ev {
		x := 1.0
		switch {
		case e.Value <= 0 || e.Limit <= 0:
		case e.Metric == "latency":
			x = e.Value / e.Limit
		default:
			x = e.Limit / e.Value
		}
		s = max(s, x)
	}
	return s
}

// finish orders the findings, makes the drain list and the node table.
func (b *builder) finish() {
	v := b.v
	var nodes []Finding
	for _, n := range slices.SortedFunc(maps.Keys(b.nodeEvidence), hostlist.Compare) {
		f := Finding{Kind: KindNode, Subject: n, Nodes: []string{n}, Drain: true, Evidence: b.nodeEvidence[n], severity: b.nodeSeverity[n],
			Links: b.nodeLinks[n]}
		// What a check saw of one direction of a bad node is part of it.
		for _, dir := range []string{"out", "in"} {
			if ow := b.oneWay[[2]string{n, dir}]; ow != nil {
				f.Evidence = append(f.Evidence, ow.Evidence...)
				for _, l := range ow.Links {
					if !slices.Contains(f.Links, l) {
						f.Links = append(f.Links, l)
					}
				}
				delete(b.oneWay, [2]string{n, dir})
			}
		}
		nodes = append(nodes, f)
		b.stat(n).Status = Bad
		b.stat(n).Finding = KindNode
		v.Drain = append(v.Drain, drainOf(f))
	}
	bySeverity := func(a, b Finding) int { return cmp.Compare(b.severity, a.severity) }
	slices.SortStableFunc(nodes, bySeverity)
	var oneWay []Finding
	for _, k := range slices.SortedFunc(maps.Keys(b.oneWay), func(a, b [2]string) int {
		return cmp.Or(hostlist.Compare(a[0], b[0]), strings.Compare(b[1], a[1]))
	}) {
		oneWay = append(oneWay, *b.oneWay[k])
		b.stat(k[0]).Finding = KindOneWay
	}
	slices.SortStableFunc(oneWay, bySeverity)
	slices.SortStableFunc(b.links, bySeverity)
	runs := v.Findings // failed runs, found first, shown last
	v.Findings = append(append(append(append([]Finding{}, nodes...), oneWay...), b.links...), runs...)

	for _, n := range v.Nodes {
		b.stat(n)
	}
	maxMean := 0.0
	for _, st := range b.stats {
		maxMean = max(maxMean, st.MeanBandwidth)
	}
	for _, st := range b.stats {
		if all := st.OutLinks + st.InLinks; all > 0 {
			st.score = float64(st.BadOut+st.BadIn) / float64(all)
		}
		if st.MeanBandwidth > 0 && maxMean > 0 {
			st.score += (1 - st.MeanBandwidth/maxMean) / 100
		}
		if st.Status == Bad {
			st.score += 10
		}
		v.NodeStats = append(v.NodeStats, *st)
	}
	slices.SortFunc(v.NodeStats, func(a, b NodeStat) int {
		return cmp.Or(cmp.Compare(b.score, a.score), hostlist.Compare(a.Node, b.Node))
	})
}

// NodeOrder is the nodes of the matrix ordered by the mean of their links'
// metric ("bandwidth" or "latency"), best first, so that a bad node's row
// and column end up last, next to each other; nodes without links come
// after, by name.
func (v *Verdict) NodeOrder(metric string) []string {
	stats := slices.Clone(v.NodeStats)
	val := func(s NodeStat) float64 {
		if metric == "latency" {
			return s.MeanLatency
		}
		return s.MeanBandwidth
	}
	slices.SortFunc(stats, func(a, b NodeStat) int {
		va, vb := val(a), val(b)
		switch {
		case va == 0 && vb == 0:
			return hostlist.Compare(a.Node, b.Node)
		case va == 0:
			return 1
		case vb == 0:
			return -1
		}
		c := cmp.Compare(vb, va)
		if metric == "latency" {
			c = -c
		}
		return cmp.Or(c, hostlist.Compare(a.Node, b.Node))
	})
	out := make([]string, len(stats))
	for i, s := range stats {
		out[i] = s.Node
	}
	return out
}

// maxReason bounds a drain reason: sinfo -R shows it in a line, and the
// scontrol line should fit a terminal.
const maxReason = 90

// drainOf is the drain entry of a node finding: the reason in ASCII (it
// ends up in slurmctld's state files and in sinfo's columns), one short
// clause per check and value; the matrix's say what the reference's
// would.
func drainOf(f Finding) Drain {
	var clauses []string
	matrix := map[string]bool{}
	for _, e := range f.Evidence {
		if e.Check == CheckMatrix {
			matrix[e.Metric] = true
		}
	}
	for _, e := range f.Evidence {
		if e.Check == CheckReference && matrix[e.Metric] {
			continue
		}
		c := reasonClause(e)
		if c != "" && !slices.Contains(clauses, c) {
			clauses = append(clauses, c)
		}
	}
	reason := "sbench: " + strings.Join(clauses, "; ")
	if len(reason) > maxReason {
		reason = reason[:maxReason-3] + "..."
	}
	node := f.Subject
	return Drain{Node: node, Reason: reason,
		Command: "scontrol update NodeName=" + ShellQuote(node) + " State=DRAIN Reason=" + ShellQuote(reason)}
}

// reasonClause is one piece of evidence as a drain reason says it.
func reasonClause(e Evidence) string {
	switch e.Check {
	case CheckMatrix, CheckReference:
		what := "links"
		if e.Check == CheckReference {
			what = "links to the reference"
		}
		if e.Metric == "latency" {
			return fmt.Sprintf("%s latency %s %s = %sx min", what, ftoa(e.Value), asciiUnit(e.Unit), strconv.FormatFloat(e.Value/e.Reference, 'f', 1, 64))
		}
		return fmt.Sprintf("%s bandwidth %s %s = %s of max", what, ftoa(e.Value), asciiUnit(e.Unit), pct(e.Value/e.Reference))
	case CheckStream, CheckHPL:
		return fmt.Sprintf("%s %s %s = %s of node median", e.Check, ftoa(e.Value), asciiUnit(e.Unit), pct(e.Value/e.Reference))
	case CheckProvenance:
		return fmt.Sprintf("%s %s, not %s", strings.TrimPrefix(e.Metric, "InfiniBand "), e.Found, e.Expected)
	}
	return ""
}

func asciiUnit(u string) string {
	if u == "us" || u == "µs" {
		return "us"
	}
	return u
}

// ShellQuote quotes s as one word for a POSIX shell: as is when it holds
// nothing the shell reads, else in double quotes with \, ", $ and `
// escaped, or, when it holds a ! (history expansion in an interactive
// bash, even within double quotes), in single quotes.
func ShellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_-.,:/=+@%", r))
	}) < 0 {
		return s
	}
	if strings.ContainsRune(s, '!') {
		return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
	}
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "$", `\$`, "`", "\\`")
	return `"` + r.Replace(s) + `"`
}

// ftoa writes a figure with four significant digits at most, without
// exponent: 0.93, 2.1, 117.3, 1034, 41230.
func ftoa(x float64) string {
	prec := 3
	switch a := math.Abs(x); {
	case a >= 1000:
		prec = 0
	case a >= 100:
		prec = 1
	case a >= 10:
		prec = 2
	}
	return trimZeros(strconv.FormatFloat(x, 'f', prec, 64))
}

func trimZeros(s string) string {
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// times writes a factor: 2.1×, 3.12×.
func times(x float64) string { return trimZeros(strconv.FormatFloat(x, 'f', 2, 64)) + "×" }

// pct writes a share as a whole percentage: 0.93 is "93%".
func pct(x float64) string { return strconv.FormatFloat(x*100, 'f', 0, 64) + "%" }
