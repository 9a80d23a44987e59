// Package jobs reconciles Slurm's view of a campaign's jobs — their
// attempts, their steps' launches, how each ended — with the plan recorded
// at submit and the runs in the archive: every planned launch ends as a
// run, whether or not its bundle was written.
package jobs

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sbench/sbench/campaign"
	"github.com/sbench/sbench/results"
	"github.com/sbench/sbench/slurm"
	"github.com/sbench/sbench/slurm/hostlist"
	"github.com/sbench/sbench/store"
)

// PlannedSteps is what a job of the plan must leave in the archive: one
// entry per step (per array task), with what its runs' bundles would say.
func PlannedSteps(c *campaign.Campaign, j campaign.Job) []store.PlannedStep {
	var out []store.PlannedStep
	add := func(task string, st campaign.Step) {
		b := st.Benchmark
		ps := store.PlannedStep{Task: task, Step: strconv.Itoa(st.Index), Pairs: b.Pairs, Benchmark: b.Name,
			Kind: "tool", Kernel: "exec", Variant: st.Name, Ranks: st.Ranks, Nodes: st.Nodes, Limit: st.Limit}
		if b.Kernel != "" {
			ps.Kind, ps.Kernel = "native", b.Kernel
		}
		params := map[string]string{}
		for _, s := range append(append([]campaign.Setting(nil), st.Variant.Settings...), st.BenchSettings...) {
			params[s.Key] = s.Text()
		}
		if c.Repeats(b) > 1 {
			params["repeat"] = strconv.Itoa(st.Repeat)
		}
		if len(params) > 0 {
			ps.Params = params
		}
		if len(st.Config.Labels) > 0 {
			ps.Labels = st.Config.Labels
		}
		out = append(out, ps)
	}
	for _, st := range j.Steps {
		add("", st)
	}
	for i, task := range j.Tasks {
		for _, st := range task {
			add(strconv.Itoa(i), st)
		}
	}
	return out
}

// Outcome is what is known of one launch of a step: from the markers
// the job script writes around it (Slurm), or from watching it (sbench
// local).
type Outcome struct {
	Attempt    int
	Begin, End time.Time
	Ended      bool
	RC         int
	// Tail is the end of what the launch printed.
	Tail string
	// earlier are the launches of the same id in the job's earlier
	// attempts (a requeued job runs its steps again), oldest first.
	earlier []*Outcome
}

// Outcomes are the outcomes of a job's launches by array task ("" for
// a job that is no array), then launch id.
type Outcomes = map[string]map[string]*Outcome

// again returns the outcome of a launch in attempt, keeping prev's
// launches of other attempts as its earlier ones.
func again(prev *Outcome, attempt int) *Outcome {
	o := &Outcome{Attempt: attempt}
	if prev != nil {
		o.earlier = append(prev.earlier, prev)
		prev.earlier = nil
	}
	return o
}

// ReadOutcomes reads the step markers (campaign.StepMarker) of a job's output
// and keeps, per launch id, its last attempt (with those before it) and
// the lines it printed between them (at most the last TailLines).
func ReadOutcomes(r io.Reader) map[string]*Outcome {
	out := map[string]*Outcome{}
	var cur *Outcome
	var lines []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, campaign.StepMarker+" "); ok {
			f := strings.Fields(rest)
			if len(f) >= 4 {
				id, what := f[0], f[1]
				kv := map[string]string{}
				for _, p := range f[2:] {
					if k, v, ok := strings.Cut(p, "="); ok {
						kv[k] = v
					}
				}
				attempt, _ := strconv.Atoi(kv["attempt"])
				at := unixTime(kv["at"])
				switch what {
				case "begin":
					prev := out[id]
					if prev != nil && prev.Attempt == attempt {
						// The same launch begun again: the last wins.
						cur = &Outcome{Attempt: attempt, earlier: prev.earlier}
					} else {
						cur = again(prev, attempt)
					}
					cur.Begin, lines = at, nil
					out[id] = cur
				case "end":
					o := out[id]
					if o == nil || o.Attempt != attempt {
						o = again(o, attempt)
						out[id] = o
					}
					o.End, o.Ended = at, true
					o.RC, _ = strconv.Atoi(kv["rc"])
					if o == cur {
						o.Tail = strings.Join(lines, "\n")
					}
					cur, lines = nil, nil
				}
				continue
			}
		}
		if cur != nil {
			lines = append(lines, line)
			if len(lines) > TailLines {
				lines = lines[1:]
			}
			cur.Tail = strings.Join(lines, "\n")
		}
	}
	return out
}

// TailLines is how much of a failed step's output its run keeps.
const TailLines = 20

func unixTime(s string) time.Time {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		return time.Time{}
	}
	return time.Unix(n, 0).UTC()
}

// outputFile resolves a job's --output (or --error) pattern, which submit
// records as an absolute path, as Slurm does for the letters sbench's
// scripts use: %j job id, %x job name, %A array id, %a task, %u user, %%
// a percent sign. A pattern with letters it does not know gives "".
func outputFile(pattern string, j store.Job, task string) string {
	if pattern == "" {
		return ""
	}
	var b strings.Builder
	for i := 0; i < len(pattern); i++ {
		c := pattern[i]
		if c != '%' || i+1 == len(pattern) {
			b.WriteByte(c)
			continue
		}
		i++
		// Slurm allows a zero-padding width: %3j.
		for i < len(pattern) && pattern[i] >= '0' && pattern[i] <= '9' {
			i++
		}
		if i == len(pattern) {
			return ""
		}
		switch pattern[i] {
		case 'j':
			if task != "" {
				return "" // the task's own job id is not known
			}
			b.WriteString(j.SlurmID)
		case 'A':
			b.WriteString(j.SlurmID)
		case 'a':
			b.WriteString(task)
		case 'x':
			b.WriteString(j.Name)
		case 'u':
			b.WriteString(os.Getenv("USER"))
		case '%':
			b.WriteByte('%')
		default:
			return ""
		}
	}
	return b.String()
}

// JobOutcomes reads the step markers of a job's output files (every array
// task's), keyed by task, then launch id.
func JobOutcomes(j store.Job, tasks []string) Outcomes {
	out := Outcomes{}
	for _, task := range tasks {
		pattern := j.Error
		if pattern == "" {
			pattern = j.Output
		}
		path := outputFile(pattern, j, task)
		if path == "" {
			continue
		}
		data, err := readTail(path, 4<<20)
		if err != nil {
			continue
		}
		out[task] = ReadOutcomes(bytes.NewReader(data))
	}
	return out
}

// readTail reads the last max bytes of a file: a job log can be large,
// and the steps that matter are the last ones.
func readTail(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	if st.Size() > max {
		if _, err := f.Seek(st.Size()-max, io.SeekStart); err != nil {
			return nil, err
		}
	}
	return io.ReadAll(io.LimitReader(f, max))
}

// MissingRuns makes a failed run for every launch of j's plan that left
// no run in the archive: the plan is the source of truth for what should
// exist. Each attempt of a requeued job is a launch of its own: the last
// attempt must leave a run of every planned launch, an earlier one of
// every launch its output shows it began, whatever a later attempt did.
// outs are the launches' outcomes by task and launch id (nil when
// unknown); have are the job's archived runs; ends say how Slurm ended
// each attempt.
func MissingRuns(j store.Job, have []store.Run, outs Outcomes, ends map[int]AttemptEnd) []*results.Bundle {
	type launch struct {
		task, id string
		attempt  int
	}
	done := map[launch]bool{}
	for _, r := range have {
		done[launch{r.ArrayIndex, r.Step, r.Restart}] = true
	}
	last := LastAttempt(j, have, outs)
	nodes, _ := hostlist.Expand(j.NodeList)
	var out []*results.Bundle
	for _, ps := range j.Plan {
		ids := campaign.LaunchIDs(ps.Step, ps.Pairs, nodes)
		if len(ids) == 0 {
			ids = []string{ps.Step} // a pairs step of a job that never got nodes
		}
		for _, id := range ids {
			byAttempt := launches(outs[ps.Task][id])
			for a := 0; a <= last; a++ {
				o := byAttempt[a]
				if done[launch{ps.Task, id, a}] || a < last && o == nil {
					continue
				}
				out = append(out, failedRun(j, ps, id, nodes, o, a, last, ends[a]))
			}
		}
	}
	return out
}

// failedRun is the run of a launch that wrote no bundle, made from what is
// known: the plan, Slurm's view of the job, and the launch's outcome.
func failedRun(j store.Job, ps store.PlannedStep, id string, nodes []string, o *Outcome, attempt, last int, end AttemptEnd) *results.Bundle {
	b := results.New()
	b.Status = results.StatusFailed
	b.Campaign, b.Variant = j.Campaign, ps.Variant
	b.Params = ps.Params
	b.Labels = ps.Labels
	if a, c, ok := pairOf(id, ps, nodes); ok {
		b.Labels = mergeLabels(b.Labels, map[string]string{"pair": a + "->" + c})
		if strings.HasSuffix(id, "-intra") {
			b.Labels["placement"] = "intra-node"
		} else if strings.HasSuffix(id, "-inter") {
			b.Labels["placement"] = "inter-node"
		}
	}
	b.Benchmark = results.Benchmark{Name: ps.Benchmark, Kind: ps.Kind, Kernel: ps.Kernel}
	b.Job = results.Job{ID: j.SlurmID, Step: id, ArrayIndex: ps.Task, Name: j.Name, Tasks: ps.Ranks, Restart: attempt}
	if len(nodes) > 0 && ps.Pairs == "" {
		b.Job.Nodes = nodes[:min(len(nodes), max(ps.Nodes, 1))]
	}
	b.Source = "sbench: planned step " + id + " of job " + j.SlurmID + ", no bundle"
	state := end.text()
	if !end.known() {
		state = (AttemptEnd{State: j.State, ExitCode: j.ExitCode, Reason: j.Reason}).text()
		if attempt < last {
			state = "requeued; how Slurm ended it is no longer known"
		}
	}
	var why string
	neverRan, stranded := strandedWhy(j)
	switch {
	case o == nil && stranded:
		why = neverRan
	case o == nil && (j.State == "PENDING" || j.Start.IsZero()):
		why = "never ran: the job ended without starting (" + state + ")"
		if j.Reason == slurm.ReasonDependencyNeverSatisfied {
			why = "never ran: the job it waits for (--dependency=afterok) failed, so Slurm will never start it (" + state + ")"
		}
	case o == nil:
		why = "never started: the job ended before this step (" + state + "), or its output has no marker for it"
	case !o.Ended && end.bySlurm():
		why = fmt.Sprintf("started at %s and did not end: Slurm ended %s under it (%s)", o.Begin.Format(time.RFC3339), attemptName(attempt, last), state)
	case !o.Ended:
		why = fmt.Sprintf("started at %s and did not end: the job ended under it (%s)", o.Begin.Format(time.RFC3339), state)
	case o.RC == 124 || o.RC == 137 && ps.Limit > 0:
		why = fmt.Sprintf("timed out: the launcher was ended at the step's limit of %s (rc=%d)", formatLimit(ps.Limit), o.RC)
	default:
		why = fmt.Sprintf("the launcher exited %d before sbench-runner wrote a bundle", o.RC)
	}
	switch {
	case attempt < last && o.Ended && end.bySlurm():
		why += "; " + slurmEndedText(attempt, last, end) + ", and requeued the job"
	case attempt < last:
		why += fmt.Sprintf("; Slurm requeued the job after attempt %d", attempt)
	case last > 0:
		why += fmt.Sprintf("; the job was requeued %d time(s)", last)
	}
	b.Error = "no result: " + why
	if o != nil {
		b.Start, b.End = o.Begin, o.End
		if o.Tail != "" {
			b.Error += "; it printed: " + telltale(o.Tail)
			b.Raw = o.Tail
		}
	}
	if b.Start.IsZero() {
		b.Start, b.End = j.Start.UTC(), j.End.UTC()
	}
	if !b.End.IsZero() && b.End.Before(b.Start) {
		b.End = b.Start
	}
	return b
}

func formatLimit(d time.Duration) string {
	if d == 0 {
		return campaign.DefaultStepLimit.String()
	}
	return d.String()
}

// pairOf returns the nodes of a pairs launch id (STEP-A-B, A and B of
// the job's nodes, which may hold '-' themselves); for the intra-inter
// placement, the first two nodes.
func pairOf(id string, ps store.PlannedStep, nodes []string) (a, b string, ok bool) {
	switch {
	case ps.Pairs == "":
		return "", "", false
	case ps.Pairs == "intra-inter":
		if len(nodes) < 2 {
			return "", "", false
		}
		if strings.HasSuffix(id, "-intra") {
			return nodes[0], nodes[0], true
		}
		return nodes[0], nodes[1], true
	}
	rest, ok := strings.CutPrefix(id, ps.Step+"-")
	if !ok {
		return "", "", false
	}
	for _, a := range nodes {
		if b, ok := strings.CutPrefix(rest, a+"-"); ok && slices.Contains(nodes, b) {
			return a, b, true
		}
	}
	return "", "", false
}

func mergeLabels(a, b map[string]string) map[string]string {
	out := maps.Clone(a)
	if out == nil {
		out = map[string]string{}
	}
	maps.Copy(out, b)
	return out
}

// telltale is the line of a failed launch's output that says most: the
// last that names an error, else the last line ("Type 'mpirun --help'"
// says less than "mpirun: Error: unknown option").
var telltaleWords = []string{"error", "fail", "abort", "unknown", "unrecognized", "invalid", "not found", "no such",
	"denied", "refused", "killed", "cancelled", "cannot", "unable", "time limit"}

// Slurm's own words for why it ended or refused a step say most of all.
var telltaleSlurm = []string{"task launch for", "due to node failure", "due to preemption", "due to time limit"}

func telltale(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		low := strings.ToLower(lines[i])
		if slices.ContainsFunc(telltaleSlurm, func(w string) bool { return strings.Contains(low, w) }) {
			return clipLine(strings.TrimSpace(lines[i]))
		}
	}
	pick := ""
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimSpace(lines[i])
		if l == "" {
			continue
		}
		if pick == "" {
			pick = l
		}
		low := strings.ToLower(l)
		if slices.ContainsFunc(telltaleWords, func(w string) bool { return strings.Contains(low, w) }) {
			pick = l
			break
		}
	}
	return clipLine(pick)
}

func clipLine(s string) string {
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

// RecordMissingRuns archives a failed run for every planned launch of j
// that has none, and returns how many it added.
func RecordMissingRuns(ctx context.Context, db *store.DB, j store.Job, outs Outcomes, ends map[int]AttemptEnd) (int, error) {
	if len(j.Plan) == 0 {
		return 0, nil // a job recorded before plans were
	}
	have, err := db.JobRuns(ctx, j.Campaign, j.SlurmID)
	if err != nil {
		return 0, err
	}
	missing := MissingRuns(j, have, outs, ends)
	if len(missing) == 0 {
		return 0, nil
	}
	res, err := db.Ingest(ctx, "plan:"+j.Campaign+"/"+j.SlurmID, missing)
	if err != nil {
		return 0, fmt.Errorf("record the runs job %s left no bundle for: %w", j.SlurmID, err)
	}
	return len(res.Added), nil
}
