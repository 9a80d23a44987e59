package compare

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/sbench/sbench/results"
	"github.com/sbench/sbench/sizes"
	"github.com/sbench/sbench/store"
)

// WriteText writes the comparison as benchstat-style tables: per benchmark,
// metric and configuration, one row per x with the median of each side's
// runs (± the largest distance of a run from it), the change, the p-value
// and its adjusted q, and the run counts, and a geometric-mean line; then
// the warnings and a verdict line. Output is deterministic.
func (r *Result) WriteText(w io.Writer) error {
	ew := &errWriter{w: w}
	fmt.Fprintf(ew, "old: %s (%s)\n", r.Old.Name, runList(r.Old.Runs))
	fmt.Fprintf(ew, "new: %s (%s)\n", r.New.Name, runList(r.New.Runs))
	fmt.Fprintf(ew, "%s\n", r.Method())
	for _, t := range r.Tables {
		fmt.Fprintf(ew, "\n%s\n", t.Heading())
		header, rows := r.Cells(t)
		writeTable(ew, append([][]string{header}, rows...))
		if line := r.PairLine(t); line != "" {
			fmt.Fprintln(ew, line)
		}
	}
	if r.Untested() {
		fmt.Fprintf(ew, "\n* %s\n", strings.Replace(r.UntestedNote(), " (at 0.05 it takes", " (at 0.05 it\n  takes", 1))
	}
	if len(r.Warnings) > 0 {
		fmt.Fprintln(ew)
		for _, wn := range r.Warnings {
			fmt.Fprintf(ew, "warning: %s\n", wn)
		}
	}
	fmt.Fprintf(ew, "\n%s\n", r.Verdict())
	return ew.err
}

// Method says how rows are judged, the line under the sides: "threshold
// 5%, alpha 0.05, Benjamini–Hochberg over 80 tested rows".
func (r *Result) Method() string {
	s := fmt.Sprintf("threshold %s, alpha %s, ", pct(r.Threshold), strconv.FormatFloat(r.Alpha, 'f', -1, 64))
	if r.Family == 0 {
		s += fmt.Sprintf("no row tested (it takes %d runs a side)", RunsNeeded(r.Alpha))
	} else {
		s += fmt.Sprintf("Benjamini–Hochberg over %d tested row%s", r.Family, results.Plural(r.Family))
	}
	if r.ThresholdOnly {
		s += "; rows too few to test judged by the change alone (--threshold-only)"
	}
	return s
}

// Verdict is the comparison's last line: the regressions, or that there
// are none, and how many rows had too few runs to be judged at all.
func (r *Result) Verdict() string {
	rows, better, untestable := r.RowCount(), r.Count(Better), r.Untestable()
	var s string
	if n := r.Regressions(); n > 0 {
		s = fmt.Sprintf("REGRESSION: %d of %d row(s) worse by more than %s", n, rows, pct(r.Threshold))
		// Worse without a test: judged by the change alone (ThresholdOnly).
		if m := r.judged(func(row Row) bool { return !row.Tested && row.Change == Worse }); m > 0 {
			s += fmt.Sprintf(" (%d of them untested, by the change alone)", m)
		}
		s += fmt.Sprintf("; %d better", better)
	} else {
		s = fmt.Sprintf("no regression beyond %s in %d row(s); %d better", pct(r.Threshold), rows, better)
	}
	if untestable > 0 && !r.ThresholdOnly {
		s += fmt.Sprintf("; %d row(s) with too few runs to judge (repeat ≥ %d× to test them)", untestable, RunsNeeded(r.Alpha))
	}
	return s
}

// WriteJSON writes the comparison as one indented JSON document.
func (r *Result) WriteJSON(w io.Writer) error { return writeJSON(w, r) }

// writeJSON writes v indented, with <, > and & as they are: the document
// is read by people and tools, never embedded in HTML.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// Cells returns a table as the text output shows it, for a report to lay
// out its own way: the header (x, old side, new side, change, verdict) and
// one row of cells per row, then the geometric-mean row. A change cell
// ending in "*" had no test (see Untested). A table of node pairs has a
// pair column first, lists the pairs measured on both sides (PairLine
// counts the others), then a row per size comparing all the pairs of each
// side.
func (r *Result) Cells(t Table) (header []string, rows [][]string) {
	header = []string{xHeader(t.XUnit), r.Old.Name, r.New.Name, "vs " + r.Old.Name, ""}
	withX := true
	if t.Pairs != nil {
		withX = false
		for _, row := range t.Rows {
			withX = withX || row.X != nil
		}
		header = append([]string{"pair"}, header...)
		if !withX {
			header = append(header[:1], header[2:]...)
		}
	}
	listed(t, func(first string, row Row) {
		delta, _ := r.deltaCell(row)
		c := []string{formatX(row.X, t.XUnit), summaryCell(row.Old), summaryCell(row.New), delta, verdictCells[row.Change]}
		switch {
		case t.Pairs == nil:
		case withX:
			c = append([]string{first}, c...)
		default:
			c = append([]string{first}, c[1:]...)
		}
		rows = append(rows, c)
	})
	if g := t.GeoMean; g != nil && len(t.Rows) > 1 {
		c := []string{"geomean", formatValue(g.Old), formatValue(g.New), signedPct(g.Delta), ""}
		if t.Pairs != nil {
			c = append([]string{"geomean"}, c[1:]...)
			if withX {
				c = append(c[:1], append([]string{""}, c[1:]...)...)
			}
		}
		rows = append(rows, c)
	}
	return header, rows
}

// Changes are the verdicts of the rows Cells returns, in its order ("" for
// the geometric-mean row), for a report to colour them.
func (r *Result) Changes(t Table) []Change {
	var out []Change
	listed(t, func(_ string, row Row) { out = append(out, row.Change) })
	if t.GeoMean != nil && len(t.Rows) > 1 {
		out = append(out, "")
	}
	return out
}

// listed calls fn with the rows Cells lists, in its order, and the pair
// column's cell of each: of a table of node pairs, the pairs measured on
// both sides, then the rows of all pairs taken together.
func listed(t Table, fn func(first string, row Row)) {
	for _, row := range t.Rows {
		if t.Pairs == nil || row.Change != Missing {
			fn(row.Pair.String(), row)
		}
	}
	if t.Pairs != nil {
		for _, row := range t.Pairs.All {
			fn("all pairs", row)
		}
	}
}

// PairLine is the summary line of a table of node pairs ("" for other
// tables): how many pairs were compared and how many got worse or better,
// the worst, and the rows of one side only, which Cells leaves out.
func (r *Result) PairLine(t Table) string {
	p := t.Pairs
	if p == nil {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "pairs: %d", p.Pairs)
	if p.Rows != p.Pairs {
		fmt.Fprintf(&b, " (%d rows)", p.Rows)
	}
	switch {
	case p.Both == 0:
		fmt.Fprintf(&b, "; none measured on both sides, so the sides are compared by their pairs taken together (all pairs)")
	default:
		fmt.Fprintf(&b, "; %d on both sides: %d worse, %d better", p.Both, p.Worse, p.Better)
		if w := p.Worst; w != nil && w.Delta != nil {
			at := ""
			if w.X != nil {
				at = " at " + formatX(w.X, t.XUnit)
			}
			fmt.Fprintf(&b, "; worst %s%s (%s)", w.Pair, at, signedPct(*w.Delta))
		}
	}
	if p.OnlyOld+p.OnlyNew > 0 {
		fmt.Fprintf(&b, "; %d only in %s, %d only in %s (not listed; --json has them)", p.OnlyOld, r.Old.Name, p.OnlyNew, r.New.Name)
	}
	return b.String()
}

// RowCount is the number of rows the verdict counts: every row, but for
// node pairs that no side shares, the rows of the pairs taken together
// (PairSummary.Judges).
func (r *Result) RowCount() int {
	n := 0
	for _, t := range r.Tables {
		if t.Pairs.Judges() {
			n += len(t.Pairs.All)
		} else {
			n += len(t.Rows)
		}
	}
	return n
}

// judged is how many rows the verdict counts (see RowCount), measured on
// both sides, keep accepts.
func (r *Result) judged(keep func(Row) bool) int {
	n := 0
	for _, t := range r.Tables {
		rows := t.Rows
		if t.Pairs.Judges() {
			rows = t.Pairs.All
		}
		for _, row := range rows {
			if row.Change != Missing && keep(row) {
				n++
			}
		}
	}
	return n
}

// Untestable is how many of the rows the verdict counts were measured on
// both sides with too few runs to test: "~" in the text, never a
// regression unless ThresholdOnly.
func (r *Result) Untestable() int { return r.judged(func(row Row) bool { return !row.Tested }) }

// Untested reports whether some row was judged by its change alone
// (ThresholdOnly, too few runs to test), which the text output marks "*"
// and explains in a footnote (UntestedNote).
func (r *Result) Untested() bool {
	marked := false
	for _, t := range r.Tables {
		listed(t, func(_ string, row Row) {
			_, mark := r.deltaCell(row)
			marked = marked || mark
		})
	}
	return marked
}

// UntestedNote explains the "*" of rows judged by the change alone.
func (r *Result) UntestedNote() string {
	return fmt.Sprintf("no p-value: too few runs for a Mann-Whitney test to reach alpha %s (at 0.05 it takes 4+4); --threshold-only judged these rows by the change alone, with no evidence behind it: on a noisy machine identical re-runs differ by more than %s.",
		strconv.FormatFloat(r.Alpha, 'f', -1, 64), pct(r.Threshold))
}

// Heading is a table's title line: "osu_bw · bandwidth (MB/s, higher is
// better) · variant=x"; matched by family, with what measured each side:
// "point-to-point · latency (us, lower is better) · variant=intra ·
// sbench-runner 0.9.0 latency vs osu-micro-benchmarks 7.4 (osu_latency)".
func (t Table) Heading() string {
	s := t.Benchmark + " · " + t.Metric
	switch {
	case t.Better != "" && t.Unit != "":
		s += " (" + t.Unit + ", " + t.Better + " is better)"
	case t.Unit != "":
		s += " (" + t.Unit + ", no direction)"
	}
	if len(t.Config) > 0 {
		s += " · " + strings.Join(t.Config, " ")
	}
	if len(t.OldTools)+len(t.NewTools) > 0 {
		s += " · " + orDashList(t.OldTools) + " vs " + orDashList(t.NewTools)
	}
	return s
}

func orDashList(s []string) string {
	if len(s) == 0 {
		return "-"
	}
	return strings.Join(s, "; ")
}

func xHeader(unit string) string {
	switch unit {
	case results.UnitBytes:
		return "size"
	case "":
		return " "
	}
	return unit
}

// formatX writes a position: sizes in bytes the way OSU users say them
// (1 KiB, 4 MiB) when they are whole binary multiples (sizes.Label).
func formatX(x *float64, unit string) string {
	if x == nil {
		return "-"
	}
	v := *x
	if unit == results.UnitBytes {
		return sizes.Label(v)
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// formatValue writes four significant digits without an exponent for the
// values benchmarks give, so columns stay readable and stable.
func formatValue(v float64) string {
	prec := 4
	switch a := math.Abs(v); {
	case a == 0:
		return "0"
	case a >= 1e9 || a < 1e-3:
		return strconv.FormatFloat(v, 'g', 4, 64)
	case a >= 1000:
		prec = 0
	case a >= 100:
		prec = 1
	case a >= 10:
		prec = 2
	case a >= 1:
		prec = 3
	}
	return strconv.FormatFloat(v, 'f', prec, 64)
}

func summaryCell(s *Summary) string {
	if s == nil {
		return "-"
	}
	if s.N < 2 || s.Median == 0 {
		return formatValue(s.Median)
	}
	spread := math.Max(s.Max-s.Median, s.Median-s.Min) / math.Abs(s.Median)
	return fmt.Sprintf("%s ± %.0f%%", formatValue(s.Median), spread*100)
}

// deltaCell writes the change column: the change with its p-value, its
// adjusted q and the run counts; "~" for a row whose change is not
// significant, as benchstat does, or that had too few runs to test, with
// the reason. mark says the cell carries the footnote of a row judged by
// the change alone (ThresholdOnly).
func (r *Result) deltaCell(row Row) (cell string, mark bool) {
	if row.Change == Missing {
		if row.Old == nil {
			return "only new", false
		}
		return "only old", false
	}
	n := fmt.Sprintf("n=%d+%d", row.Old.N, row.New.N)
	switch {
	case row.Tested:
		pq := probability("p", *row.P)
		if row.Q != nil {
			pq += " " + probability("q", *row.Q)
		}
		if !row.Significant(r.Alpha) {
			return fmt.Sprintf("~ (%s %s)", pq, n), false
		}
		return fmt.Sprintf("%s (%s %s)", deltaText(row), pq, n), false
	case r.ThresholdOnly:
		return fmt.Sprintf("%s (%s)*", deltaText(row), n), true
	case row.Note != "":
		return "~ " + row.Note, false
	}
	return "~ (" + n + ")", false
}

// probability writes a p-value named name to three decimals, "p=0.008",
// or "p<0.001" below them: never "p=0.000", which no test gives.
func probability(name string, p float64) string {
	if p < 0.0005 {
		return name + "<0.001"
	}
	return name + "=" + strconv.FormatFloat(p, 'f', 3, 64)
}

func deltaText(r Row) string {
	if r.Delta == nil {
		return "?"
	}
	return signedPct(*r.Delta)
}

// verdictCells are the verdict column's texts: none for the same and
// the missing.
var verdictCells = map[Change]string{Worse: "REGRESSION", Better: "better", Changed: "changed"}

func signedPct(f float64) string { return SignedPercent(f, 2) }

// SignedPercent writes a ratio less one as a signed percentage with prec
// decimals ("+4.20%", "-0.31%"), a rounded zero without its sign.
func SignedPercent(f float64, prec int) string {
	s := strconv.FormatFloat(f*100, 'f', prec, 64)
	if strings.Trim(s, "-0.") == "" {
		s = strings.TrimPrefix(s, "-")
	}
	if !strings.HasPrefix(s, "-") {
		s = "+" + s
	}
	return s + "%"
}

func pct(f float64) string {
	return strconv.FormatFloat(f*100, 'f', -1, 64) + "%"
}

func runList(ids []int64) string {
	if len(ids) == 1 {
		return "run " + store.FormatRunIDs(ids)
	}
	return "runs " + store.FormatRunIDs(ids)
}

// writeTable writes rows of cells in aligned columns, two spaces apart,
// with no trailing blanks.
func writeTable(w io.Writer, rows [][]string) {
	var buf bytes.Buffer
	tw := tabwriter.NewWriter(&buf, 0, 4, 2, ' ', 0)
	for _, cells := range rows {
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	tw.Flush()
	for _, line := range strings.SplitAfter(buf.String(), "\n") {
		if line != "" {
			io.WriteString(w, strings.TrimRight(line, " \n")+"\n")
		}
	}
}

// errWriter keeps the first write error, so that rendering code can print
// freely and check once.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}

// WriteText writes a history as a table of its runs (value, range of
// repeats, control band, "outside" marks) followed by the steps found, each
// with what changed in the runs' provenance.
func (h *History) WriteText(w io.Writer) error {
	ew := &errWriter{w: w}
	title := h.Benchmark + " · " + h.Metric
	if h.Unit != "" {
		dir := "no direction"
		if h.Better != "" {
			dir = h.Better + " is better"
		}
		title += " (" + h.Unit + ", " + dir + ")"
	}
	if h.X != nil {
		title += " at " + formatX(h.X, h.XUnit)
	}
	if h.Variant != "" {
		title += " · variant " + h.Variant
	}
	fmt.Fprintln(ew, title)
	fmt.Fprintf(ew, "%d run(s); control band: mean ± 3σ of up to %d earlier runs of the same level\n\n", len(h.Points), h.Window)
	table := [][]string{{"RUN", "WHEN", "JOB", "VALUE", "REPEATS", "BAND", ""}}
	steps := map[int]bool{}
	for _, c := range h.Changes {
		steps[c.Index] = true
	}
	for i, p := range h.Points {
		rep := "-"
		if p.N > 1 {
			rep = fmt.Sprintf("%d: %s–%s", p.N, formatValue(p.Min), formatValue(p.Max))
		}
		band := "-"
		if p.Band != nil {
			band = formatValue(p.Band.Lo) + "–" + formatValue(p.Band.Hi)
		}
		var marks []string
		if steps[i] {
			marks = append(marks, "step")
		}
		if p.Outside {
			marks = append(marks, "OUTSIDE")
		}
		table = append(table, []string{strconv.FormatInt(p.Run, 10), p.When.UTC().Format("2006-01-02 15:04"), orDash(p.Job),
			formatValue(p.Value), rep, band, strings.Join(marks, " ")})
	}
	writeTable(ew, table)
	fmt.Fprintln(ew)
	switch {
	case !h.Tested:
		fmt.Fprintf(ew, "no step tested: %d run(s), and a change of level takes %d to be tested at alpha %s\n", len(h.Points),
			MinStepRuns(h.Alpha), strconv.FormatFloat(h.Alpha, 'f', -1, 64))
	case len(h.Changes) == 0:
		fmt.Fprintf(ew, "no step at alpha %s\n", strconv.FormatFloat(h.Alpha, 'f', -1, 64))
	}
	for _, c := range h.Changes {
		job := ""
		if c.Job != "" {
			job = ", job " + c.Job
		}
		verdict := map[Change]string{Worse: "REGRESSION", Better: "improvement", Changed: "change", Same: "within " + pct(h.Threshold)}[c.Change]
		fmt.Fprintf(ew, "step at run %d (%s%s): %s → %s (%s, %s) %s\n", c.Run, c.When.UTC().Format("2006-01-02 15:04"), job,
			formatValue(c.Before), formatValue(c.After), signedPct(c.Delta), probability("p", c.P), verdict)
		if len(c.Provenance) == 0 {
			fmt.Fprintln(ew, "  provenance: nothing recorded differs between the runs either side")
		}
		for _, d := range c.Provenance {
			fmt.Fprintf(ew, "  %s: %s → %s\n", d.Field, d.Before, d.After)
		}
	}
	for _, wn := range h.Warnings {
		fmt.Fprintf(ew, "warning: %s\n", wn)
	}
	return ew.err
}

// WriteJSON writes a history as one indented JSON document.
func (h *History) WriteJSON(w io.Writer) error { return writeJSON(w, h) }
