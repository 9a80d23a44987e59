package reports

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sbench/sbench/results"
	"github.com/sbench/sbench/store"
)

// runsSection lists the runs: where each ran, what it ran, how it ended.
// A failed or invalid run is set in red with its error below it, so
// nobody mistakes its numbers for a result. A report of more than
// maxListed runs sums them up per system and benchmark instead, and lists
// its newest failed and invalid runs.
func (r *Report) runsSection(d *content) {
	d.heading("Runs", h1Size, 60)
	if len(r.runs) == 0 {
		d.para("The report has no runs.", "", bodySize, black)
		return
	}
	nbad := r.badRuns()
	summarised := len(r.listedRuns) < len(r.runs)
	// The runs' state comes first: after the table it could be left alone
	// on a page of its own.
	switch {
	case nbad == 0:
		d.para("All runs completed and passed their checks.", "", smallSize, grey)
	case summarised && len(r.listedRuns) < nbad:
		d.para(fmt.Sprintf("%d of %d runs failed or are invalid: the %d newest are listed (red), with their errors; sbench runs --status failed,invalid lists them all. "+
			"Their results are never plotted or summarised.", nbad, len(r.runs), len(r.listedRuns)), "", smallSize, grey)
	default:
		d.para(fmt.Sprintf("%d of %d runs failed or are invalid (red): their results are listed but never plotted or summarised; the appendix has their whole error text.", nbad, len(r.runs)), "", smallSize, grey)
	}
	d.space(2)
	if summarised {
		r.runsSummary(d)
		d.space(6)
		if len(r.listedRuns) > 0 {
			d.heading("Failed and invalid runs", h2Size, 60)
		}
	}
	r.runsTable(d, r.listedRuns)
	d.space(6)
	if note := r.requeueNote(); note != "" {
		d.para(note, "", smallSize, black)
		d.space(2)
	}
	if n := r.notedRuns(); n > 0 {
		what := fmt.Sprintf("%d ok runs carry a note", n)
		if n == 1 {
			what = "1 ok run carries a note"
		}
		d.para(what+" (under its row when listed, and in the appendix): a rank's command exited non-zero after the run's output was complete, "+
			"which does not fail the run (NetPIPE's receiver exits 3 on its closing handshake).", "", smallSize, grey)
		d.space(2)
	}
}

// notedRuns counts the ok runs with a note.
func (r *Report) notedRuns() int {
	return countFunc(r.runs, func(run *store.Run) bool { return !bad(run) && run.Note != "" })
}

// runsTable lists the runs of the given indexes.
func (r *Report) runsTable(d *content, idx []int) {
	if len(idx) == 0 {
		return
	}
	// The job column is one line whatever the id: a local job's id
	// (local-20261201T110323508-56164d-1) is cut in the middle, where it
	// is least telling; the appendix has it whole.
	t := d.table([]column{
		runColumn,
		{title: "Job", width: 100, middle: true},
		{title: "Benchmark", width: 78},
		{title: "Configuration", width: 110},
		{title: "Nodes", width: 84},
		{title: "Tasks", width: 40, right: true},
		{title: "Status"},
	})
	for _, i := range idx {
		run := &r.runs[i]
		failed := bad(run)
		c := redIf(failed)
		cfg := r.configs.ofRun[run.ID]
		msg, msgColor := "", failedRed
		switch {
		case failed:
			msg = r.failureText(run)
		case run.Note != "":
			// What an ok run's reader must know: a rank's command
			// exited non-zero after the run's output was complete.
			msg, msgColor = "Note: "+run.Note, grey
		}
		tr := t.row([]string{
			strconv.FormatInt(run.ID, 10),
			jobLabel(run),
			family(run),
			cfg,
			nodesLabel(run),
			tasksLabel(run.Tasks),
			// The run's own status, not its job's Slurm state: a job that
			// FAILED at its last step leaves its earlier steps ok, and
			// "FAILED / ok" reads as a contradiction. Where the job's state
			// explains a failure, failureText says it; a requeued job's
			// attempt is in the job column (1234.0 r1).
			orDash(string(run.Status)),
		}, c, nil)
		if msg != "" {
			// The error is under the row it explains, on the same page.
			explain(tr, msg, failureLines, msgColor, true)
		}
	}
}

// failureLines is how many lines of a failed run's error the runs table
// shows; the appendix has it whole.
const failureLines = 3

// runsSummary counts the runs per system and benchmark: how many, how
// they ended, when the first and the last ran.
func (r *Report) runsSummary(d *content) {
	counts := map[[2]string]*store.Tally{}
	for i := range r.runs {
		run := &r.runs[i]
		k := [2]string{run.System, family(run)}
		c := counts[k]
		if c == nil {
			c = &store.Tally{}
			counts[k] = c
		}
		c.Add(run)
	}
	d.para(fmt.Sprintf("The report's %d runs, per system and benchmark (sbench runs --group-by system or --group-by benchmark lists the same).", len(r.runs)), "", smallSize, grey)
	d.space(2)
	t := d.table([]column{
		{title: "System", width: 80},
		{title: "Benchmark", width: 110},
		{title: "Runs", width: 44, right: true},
		{title: "ok", width: 44, right: true},
		{title: "Failed", width: 44, right: true},
		{title: "Invalid", width: 44, right: true},
		{title: "First", width: 72, right: true},
		{title: "Last", right: true},
	})
	keys := slices.SortedFunc(maps.Keys(counts), func(a, b [2]string) int { return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1])) })
	for _, k := range keys {
		c := counts[k]
		day := func(t time.Time) string {
			if t.IsZero() {
				return "—"
			}
			return t.UTC().Format("2006-01-02")
		}
		t.row([]string{orDash(k[0]), k[1], strconv.Itoa(c.Runs), strconv.Itoa(c.OK), strconv.Itoa(c.Failed), strconv.Itoa(c.Invalid), day(c.First), day(c.Last)}, black, nil)
	}
}

// jobLabel is Slurm's name for the run's job step, 1234, 1234_7 or
// 1234.0, then " r1" for a run of a requeued job's attempt 1 (store.LaunchName).
func jobLabel(run *store.Run) string {
	if run.JobID == "" {
		return "—"
	}
	return run.Launch()
}

// runNodes are the nodes a run used, by the name Slurm knows them by.
func runNodes(run *store.Run) []string {
	if len(run.Hosts) > 0 {
		names := make([]string, 0, len(run.Hosts))
		for _, h := range run.Hosts {
			names = append(names, NodeName(h))
		}
		return names
	}
	return run.Nodes
}

func nodesLabel(run *store.Run) string {
	names := runNodes(run)
	list := compressHosts(names)
	if list == "" {
		return "—"
	}
	return fmt.Sprintf("%d: %s", distinct(names), list)
}

func distinct(names []string) int {
	set := map[string]bool{}
	for _, n := range names {
		if n != "" {
			set[n] = true
		}
	}
	return len(set)
}

func tasksLabel(n int) string {
	if n <= 0 {
		return "—"
	}
	return strconv.Itoa(n)
}

// requeueNote says which jobs Slurm requeued (after a node failure or a
// preemption), and which runs each attempt left: a job's results may come
// from two attempts, and a reader must know.
func (r *Report) requeueNote() string {
	type job struct {
		restarts int
		runs     map[int][]int64
	}
	jobs := map[string]*job{}
	var order []string
	for i := range r.runs {
		run := &r.runs[i]
		if run.JobID == "" {
			continue
		}
		restarts := run.Restart
		if j := r.jobOf(run); j != nil {
			restarts = max(restarts, j.Restarts)
		}
		// Every run of the job is kept, its first attempt's too: only a
		// later run (or the job's record) may tell that it was requeued.
		key := jobLabel(&store.Run{JobID: run.JobID, ArrayIndex: run.ArrayIndex})
		if jobs[key] == nil {
			jobs[key] = &job{runs: map[int][]int64{}}
			order = append(order, key)
		}
		jobs[key].restarts = max(jobs[key].restarts, restarts)
		jobs[key].runs[run.Restart] = append(jobs[key].runs[run.Restart], run.ID)
	}
	var parts []string
	for _, key := range order {
		j := jobs[key]
		if j.restarts == 0 {
			continue
		}
		var attempts []string
		for a := 0; a <= j.restarts; a++ {
			if ids := j.runs[a]; len(ids) > 0 {
				name := key // the first attempt, as the runs table names it
				if a > 0 {
					name += fmt.Sprintf(" r%d", a)
				}
				attempts = append(attempts, fmt.Sprintf("%s: run%s %s", name, results.Plural(len(ids)), runIDs(ids)))
			}
		}
		parts = append(parts, fmt.Sprintf("Job %s was requeued by Slurm %d time%s (a node failure or a preemption); the runs of every attempt are kept (%s).",
			key, j.restarts, results.Plural(j.restarts), strings.Join(attempts, "; ")))
	}
	return strings.Join(parts, " ")
}

// failureText says why a run failed: its error, and for an invalid run the
// checks that did not pass.
func (r *Report) failureText(run *store.Run) string {
	return FailureText(run, r.jobOf(run), r.checks[run.ID])
}

// FailureText says why a run failed, as the report does under its row:
// its error, how Slurm saw its job j end (nil: not recorded), and for an
// invalid run the checks (of any run's, those of run are picked) that did
// not pass. It is "" for a run that did not fail.
func FailureText(run *store.Run, j *store.Job, checks []store.Check) string {
	var parts []string
	if e := strings.TrimSpace(run.Error); e != "" {
		parts = append(parts, e)
	}
	if js := jobState(j); js != "" && run.Status == results.StatusFailed {
		parts = append(parts, js)
	}
	for _, c := range checks {
		// A parser's error usually names the checks that failed already.
		if c.RunID == run.ID && !c.Passed && !strings.Contains(run.Error, c.Name) {
			parts = append(parts, checkText(c))
		}
	}
	if len(parts) == 0 && run.Status == results.StatusInvalid {
		parts = append(parts, "invalid (no failed check recorded)")
	}
	return strings.Join(parts, "\n")
}

// jobState says how Slurm saw the run's job end, when not COMPLETED: the
// TIMEOUT, OUT_OF_MEMORY or NODE_FAIL behind a failed step.
func jobState(j *store.Job) string {
	if j == nil || j.State == "" || j.State == "COMPLETED" {
		return ""
	}
	s := "Slurm job " + j.SlurmID + ": " + j.State
	if j.ExitCode != "" && j.ExitCode != "0:0" {
		s += ", exit " + j.ExitCode
	}
	if j.Reason != "" && j.Reason != "None" {
		s += " (" + j.Reason + ")"
	}
	return s
}

func checkText(c store.Check) string {
	v, t := strconv.FormatFloat(c.Value, 'g', 6, 64), strconv.FormatFloat(c.Threshold, 'g', 6, 64)
	if c.Op == "" {
		return fmt.Sprintf("check %s FAILED: %s (threshold %s)", c.Name, v, t)
	}
	return fmt.Sprintf("check %s FAILED: %s (must be %s %s)", c.Name, v, c.Op, t)
}
