package reports

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/sbench/sbench/expect/judge"
	"github.com/sbench/sbench/results"
	"github.com/sbench/sbench/store"
)

// HPLRow is one HPL test (one T/V row of HPL's output) with its checks.
type HPLRow struct {
	Run    int64
	Config string
	// TV is HPL's code of the variant that ran (WR10R2C4).
	TV           string
	N, NB, P, Q  int
	Time, Gflops float64
	// Rpeak is the machine's theoretical peak (Gflops) and Efficiency
	// Gflops as a percentage of it; both 0 when Rpeak is unknown.
	Rpeak, Efficiency float64
	// Valid is false for a run that failed or failed a check: its Gflops
	// are shown struck through and are never a result.
	Valid  bool
	Checks []store.Check
	// Failed names the checks that failed.
	Failed []string
	// Error is the run's error text, for an invalid run with no failed
	// check recorded.
	Error string
	// RpeakHow says where Rpeak comes from, or why it is unknown.
	RpeakHow string
}

// hplRow reads an HPL test from a run's scalars: HPL's gflops with N, NB, P
// and Q as the hpl parser and the runner's LU kernel record them.
func (r *Report) hplRow(run *store.Run, scalars []store.Scalar) (HPLRow, bool) {
	row := HPLRow{Run: run.ID, Config: r.configs.ofRun[run.ID], TV: run.Params["tv"], Valid: !bad(run)}
	found := false
	for _, s := range scalars {
		switch strings.ToLower(s.Name) {
		case "gflops":
			row.Gflops, found = s.Value, true
		case "n":
			row.N = int(s.Value)
		case "nb":
			row.NB = int(s.Value)
		case "p":
			row.P = int(s.Value)
		case "q":
			row.Q = int(s.Value)
		case "time_s", "time":
			row.Time = s.Value
		case "rpeak", "rpeak_gflops":
			row.Rpeak = s.Value
		}
	}
	if !found || (row.N == 0 && row.P == 0) {
		return row, false
	}
	if r.opts.rpeak > 0 {
		row.Rpeak = r.opts.rpeak
	} else if row.Rpeak == 0 {
		row.Rpeak = judge.RpeakLabel(run)
	}
	if row.Rpeak == 0 {
		row.Rpeak, row.RpeakHow = judge.NodesRpeak(run)
	} else {
		row.RpeakHow = "given"
	}
	if row.Rpeak > 0 {
		row.Efficiency = 100 * row.Gflops / row.Rpeak
	}
	for _, c := range r.checks[run.ID] {
		row.Checks = append(row.Checks, c)
		if !c.Passed {
			row.Failed = append(row.Failed, c.Name)
		}
	}
	if !row.Valid && len(row.Failed) == 0 {
		row.Error = strings.TrimSpace(run.Error)
		if row.Error == "" {
			row.Error = string(run.Status)
		}
	}
	return row, true
}

// formatHPLTime and formatHPLGflops print as HPL does (%.2f, %.3e), so a
// row can be found in the tool's output as it is.
func formatHPLTime(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }

func formatHPLGflops(v float64) string { return fmt.Sprintf("%.3e", v) }

// hplSection writes HPL's results in HPL's own layout (T/V, N, NB, P, Q,
// Time, Gflops), with the efficiency against Rpeak and the residual
// checks. An invalid row is struck through in red and followed by the
// checks it failed, so its Gflops cannot be mistaken for a result.
func (r *Report) hplSection(d *content, f *familyResult) {
	d.heading("HPL results", h2Size, 60)
	rows := f.hpl
	if len(rows) > maxHPLRows {
		rows = r.hplSummary(d, f)
	}
	cols := []column{
		runColumn,
		{title: "Configuration", width: 80},
		{title: "T/V", width: 64},
		{title: "N", width: 46, right: true},
		{title: "NB", width: 30, right: true},
		{title: "P", width: 22, right: true},
		{title: "Q", width: 22, right: true},
		{title: "Time (s)", width: 54, right: true},
		{title: "Gflops", width: 60, right: true},
		{title: "% Rpeak", width: 52, right: true},
		{title: "Result"},
	}
	d.need(rowHeight * float64(2+min(len(rows), 20)))
	t := d.table(cols)
	rpeakKnown := false
	for _, row := range rows {
		eff := "—"
		if row.Rpeak > 0 {
			eff = strconv.FormatFloat(row.Efficiency, 'f', 1, 64)
			rpeakKnown = true
		}
		result, c, style := "valid", black, ""
		if !row.Valid {
			result, c, style = "INVALID", failedRed, "S"
		}
		tr := t.rowStyled([]string{
			strconv.FormatInt(row.Run, 10), row.Config, orDash(row.TV),
			strconv.Itoa(row.N), strconv.Itoa(row.NB), gridDim(row.P), gridDim(row.Q),
			formatHPLTime(row.Time), formatHPLGflops(row.Gflops), eff, result,
		}, c, nil, style, len(cols)-1)
		if !row.Valid {
			var why []string
			for _, ck := range row.Checks {
				if !ck.Passed {
					why = append(why, checkText(ck))
				}
			}
			if len(why) == 0 {
				why = append(why, row.Error)
			}
			explain(tr, strings.Join(why, "\n"), 4, failedRed, false)
		}
	}
	d.space(4)
	notes := []string{"Time and Gflops as HPL prints them; % Rpeak is Gflops over the theoretical peak of the nodes used."}
	// One note per way Rpeak was worked out, naming its runs: a hundred
	// rows of one machine need one line, not a hundred.
	hows := map[string][]int64{}
	for _, row := range rows {
		if row.Rpeak > 0 {
			how := fmt.Sprintf("Rpeak %s Gflops, %s", formatValue(row.Rpeak), row.RpeakHow)
			hows[how] = append(hows[how], row.Run)
		}
	}
	byRuns := slices.Collect(maps.Keys(hows))
	slices.SortFunc(byRuns, func(a, b string) int { return cmp.Compare(slices.Min(hows[a]), slices.Min(hows[b])) })
	for _, how := range byRuns {
		ids := slices.Compact(slices.Sorted(slices.Values(hows[how])))
		notes = append(notes, fmt.Sprintf("run%s %s: %s.", results.Plural(len(ids)), runIDs(ids), how))
	}
	if !rpeakKnown {
		why := ""
		if len(rows) > 0 && rows[0].RpeakHow != "" {
			why = " (" + rows[0].RpeakHow + ")"
		}
		notes = append(notes, "Rpeak is unknown for these runs"+why+"; give it with --rpeak GFLOPS, or an rpeak label, to see the efficiency.")
	}
	d.para(strings.Join(notes, " "), "", smallSize, grey)
	d.space(6)
	residualChecks(d, rows)
}

// residualChecks lists the rows' residual checks, as HPL lists them under
// each row.
func residualChecks(d *content, rows []HPLRow) {
	if !slices.ContainsFunc(rows, func(row HPLRow) bool { return len(row.Checks) > 0 }) {
		return
	}
	d.heading("Residual checks", bodySize+1, 40)
	d.need(rowHeight * 3)
	ct := d.table([]column{
		runColumn,
		{title: "Check", width: 246},
		{title: "Value", width: 80, right: true},
		{title: "Must be", width: 70, right: true},
		{title: "Result"},
	})
	for _, row := range rows {
		for _, ck := range row.Checks {
			must := "—"
			if ck.Op != "" {
				must = ck.Op + " " + strconv.FormatFloat(ck.Threshold, 'g', -1, 64)
			}
			res, c := "PASSED", black
			if !ck.Passed {
				res, c = "FAILED", failedRed
			}
			ct.row([]string{strconv.FormatInt(row.Run, 10), ck.Name, strconv.FormatFloat(ck.Value, 'f', 7, 64), must, res}, c, nil)
		}
	}
	d.space(6)
}

// maxHPLRows is the most HPL rows a report lists: a year of nightly HPL
// runs is summed up per configuration, with the best valid run of each and
// the newest invalid ones listed.
const maxHPLRows = 30

// hplSummary sums up a family's HPL runs per configuration — valid runs,
// best, median and latest Gflops, invalid runs — and returns the rows to
// list: each configuration's best valid run, and the newest invalid ones.
func (r *Report) hplSummary(d *content, f *familyResult) []HPLRow {
	type conf struct {
		valid, invalid []HPLRow
	}
	confs := map[string]*conf{}
	for _, row := range f.hpl {
		c := confs[row.Config]
		if c == nil {
			c = &conf{}
			confs[row.Config] = c
		}
		if row.Valid {
			c.valid = append(c.valid, row)
		} else {
			c.invalid = append(c.invalid, row)
		}
	}
	t := d.table([]column{
		{title: "Configuration", width: 130},
		{title: "Valid runs", width: 56, right: true},
		{title: "Best Gflops", width: 78, right: true},
		{title: "Median", width: 70, right: true},
		{title: "Latest", width: 70, right: true},
		{title: "Invalid", right: true},
	})
	var list []HPLRow
	var invalid []HPLRow
	for _, name := range r.configOrder(slices.Sorted(maps.Keys(confs))) {
		c := confs[name]
		best, med, latest := "—", "—", "—"
		if len(c.valid) > 0 {
			top := slices.MaxFunc(c.valid, func(a, b HPLRow) int { return cmp.Compare(a.Gflops, b.Gflops) })
			gf := make([]float64, len(c.valid))
			for i, v := range c.valid {
				gf[i] = v.Gflops
			}
			best = fmt.Sprintf("%s (run %d)", formatHPLGflops(top.Gflops), top.Run)
			med = formatHPLGflops(median(gf))
			latest = formatHPLGflops(c.valid[len(c.valid)-1].Gflops)
			list = append(list, top)
		}
		invalid = append(invalid, c.invalid...)
		col := redIf(len(c.valid) == 0)
		t.row([]string{orDash(name), strconv.Itoa(len(c.valid)), best, med, latest, strconv.Itoa(len(c.invalid))}, col, nil)
	}
	slices.SortFunc(invalid, func(a, b HPLRow) int { return cmp.Compare(a.Run, b.Run) })
	shownInvalid := invalid[max(0, len(invalid)-maxHPLRows/2):]
	list = append(list, shownInvalid...)
	slices.SortFunc(list, func(a, b HPLRow) int { return cmp.Compare(a.Run, b.Run) })
	d.space(4)
	d.para(fmt.Sprintf("%d HPL runs, summed up per configuration; listed below: the best valid run of each configuration and the newest %d of the %d invalid runs. "+
		"sbench export --benchmark %s lists every row.", len(f.hpl), len(shownInvalid), len(invalid), f.name), "", smallSize, grey)
	d.space(4)
	return list
}

// gridDim is P or Q for the table: "—" for the runner's hpl kernel, whose
// ranks each solve their own system on no process grid.
func gridDim(v int) string {
	if v == 0 {
		return "—"
	}
	return strconv.Itoa(v)
}
