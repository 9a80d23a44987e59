package slurm

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sbench/sbench/slurm/hostlist"
)

// StateUnknown is the State of a job that no source knows any more: it
// finished more than MinJobAge ago (or never existed) and neither a jobcomp
// log nor accounting recorded it.
const StateUnknown = "UNKNOWN"

// Where a JobInfo came from.
const (
	SourceSqueue   = "squeue"
	SourceScontrol = "scontrol"
	SourceJobComp  = "jobcomp"
	SourceSacct    = "sacct"
)

// JobInfo is what Slurm says about one job.
type JobInfo struct {
	ID   string
	Name string
	// State is Slurm's base state in capitals: PENDING, RUNNING,
	// COMPLETED, FAILED, CANCELLED… or StateUnknown. sacct's
	// "CANCELLED by 0" becomes CANCELLED, with the full text in Reason.
	State string
	// Reason is Slurm's reason (Resources, NonZeroExitCode, TimeLimit…),
	// "" for Slurm's "None"; for StateUnknown it says where we looked.
	Reason string
	// ExitCode is Slurm's "status:signal" ("3:0" exited 3, "0:11" SIGSEGV);
	// "" while squeue is the source (it does not show one).
	ExitCode string
	NodeList string // Slurm hostlist, "" before nodes are allocated
	// Submit, Start and End are in the local time zone, zero when unknown.
	// Start is zero while PENDING and End while not terminal: Slurm shows
	// its forecasts there, which are not facts.
	Submit, Start, End time.Time
	// Source is where the state came from: SourceSqueue, SourceScontrol,
	// SourceJobComp, SourceSacct; "" for StateUnknown.
	Source string
	// Restarts is how often Slurm requeued the job (after a node failure,
	// a preemption, scontrol requeue); scontrol's Restarts, 0 elsewhere.
	Restarts int
	// StdOut and StdErr are the job's output files as Slurm resolved them,
	// Comment is sbatch's --comment (scontrol only).
	StdOut, StdErr, Comment string
}

// ReasonDependencyNeverSatisfied is the reason of a job whose dependency
// failed: Slurm keeps it pending forever (unless kill_invalid_depend).
const ReasonDependencyNeverSatisfied = "DependencyNeverSatisfied"

// Settled reports whether the job's state will not change by waiting: it
// ended, nothing knows it any more, or it is pending with a reason that
// never clears by itself (a dependency that failed).
func (j JobInfo) Settled() bool {
	return j.Terminal() || j.State == StateUnknown || j.NeverRuns()
}

// NeverRuns reports whether the job is pending on something that cannot
// happen any more.
func (j JobInfo) NeverRuns() bool {
	return j.State == "PENDING" && j.Reason == ReasonDependencyNeverSatisfied
}

// Terminal reports whether the job has ended and its state will not change.
func (j JobInfo) Terminal() bool { return IsTerminal(j.State) }

// IsTerminal reports whether a Slurm job state is final: COMPLETED, FAILED,
// CANCELLED (also sacct's "CANCELLED by 0" and its truncated "CANCELLED+"),
// TIMEOUT, NODE_FAIL, OUT_OF_MEMORY, PREEMPTED, BOOT_FAIL, DEADLINE.
// StateUnknown is not terminal: nothing says how the job ended.
func IsTerminal(state string) bool {
	switch baseState(state) {
	case "COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL",
		"OUT_OF_MEMORY", "PREEMPTED", "BOOT_FAIL", "DEADLINE":
		return true
	}
	return false
}

// baseState reduces "CANCELLED by 0" and "CANCELLED+" to CANCELLED.
func baseState(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, ' '); i >= 0 {
		s = s[:i]
	}
	return strings.ToUpper(strings.TrimRight(s, "+"))
}

// Jobs returns what Slurm knows about each job, keyed by id; every id asked
// for is in the map. Several ids are first asked of squeue in one command;
// scontrol then gives the exit code of those that ended, and the state of a
// single job (both work for MinJobAge after the end, without slurmdbd). Jobs
// scontrol no longer knows are looked up in the jobcomp/filetxt log (the last
// line per JobId wins), then with sacct; a job found nowhere is reported with
// State StateUnknown and a Reason saying so, never dropped.
//
// An error means Slurm could not be asked (controller down, bad id), not
// that a job is missing.
func (c *Client) Jobs(ctx context.Context, ids []string) (map[string]JobInfo, error) {
	ids, err := cleanIDs(ids)
	if err != nil {
		return nil, err
	}
	out := make(map[string]JobInfo, len(ids))
	todo := ids
	if len(ids) > 1 {
		// One squeue for all: polling N jobs should not cost N commands
		// (squeue reports an unknown id only when asked for one job).
		queued, err := c.squeue(ctx, ids)
		if err != nil {
			return nil, err
		}
		todo = nil
		for _, id := range ids {
			if j, ok := queued[id]; ok && !j.Terminal() {
				out[id] = j
			} else {
				todo = append(todo, id)
			}
		}
	}
	var gone []string
	for _, id := range todo {
		j, ok, err := c.scontrolJob(ctx, id)
		if err != nil {
			return nil, err
		}
		if ok {
			out[id] = j
		} else {
			gone = append(gone, id)
		}
	}
	notes := []string{"scontrol no longer knows it (ended more than MinJobAge ago, or never existed)"}
	for _, src := range []struct {
		name string
		look func(context.Context, []string) (map[string]JobInfo, string)
	}{{"jobcomp", c.jobComp}, {"sacct", c.sacct}} {
		if len(gone) == 0 {
			return out, nil
		}
		found, note := src.look(ctx, gone)
		if note != "" {
			notes = append(notes, src.name+": "+note)
		}
		gone = slices.DeleteFunc(gone, func(id string) bool {
			j, ok := found[id]
			if ok {
				out[id] = j
			}
			return ok
		})
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("job state: %w", err)
	}
	for _, id := range gone {
		out[id] = JobInfo{ID: id, State: StateUnknown,
			Reason: "job left Slurm's memory: " + strings.Join(notes, "; ")}
	}
	return out, nil
}

// squeueFormat puts the name last: it is the one field that may hold the
// separator.
const squeueFormat = "%i|%T|%r|%N|%V|%S|%e|%j"

func (c *Client) squeue(ctx context.Context, ids []string) (map[string]JobInfo, error) {
	argv := []string{"squeue", "-h", "-t", "all", "-j", strings.Join(ids, ","), "-o", squeueFormat}
	stdout, stderr, err := c.run(ctx, argv, nil, "")
	if err != nil {
		return nil, cmdError(ctx, "squeue", stdout, stderr, err)
	}
	return parseSqueue(stdout), nil
}

func parseSqueue(out []byte) map[string]JobInfo {
	jobs := make(map[string]JobInfo)
	for _, l := range strings.Split(string(out), "\n") {
		f := strings.SplitN(strings.TrimRight(l, "\r"), "|", 8)
		if len(f) != 8 || !validJobID(f[0]) {
			continue
		}
		j := JobInfo{ID: f[0], State: f[1], Reason: f[2], NodeList: f[3], Name: f[7],
			Submit: parseTime(f[4]), Start: parseTime(f[5]), End: parseTime(f[6]), Source: SourceSqueue}
		jobs[j.ID] = j.normal()
	}
	return jobs
}

func (c *Client) scontrolJob(ctx context.Context, id string) (JobInfo, bool, error) {
	stdout, stderr, err := c.run(ctx, []string{"scontrol", "show", "job", "-o", id}, nil, "")
	if err != nil {
		// "slurm_load_jobs error: Invalid job id specified", exit 1.
		if ctx.Err() == nil && (bytes.Contains(stderr, []byte("Invalid job id")) || bytes.Contains(stdout, []byte("Invalid job id"))) {
			return JobInfo{}, false, nil
		}
		return JobInfo{}, false, cmdError(ctx, "scontrol show job "+id, stdout, stderr, err)
	}
	sc := NewRecordScanner(bytes.NewReader(stdout), "scontrol show job "+id)
	var tasks []JobInfo // the tasks of a job array whose id was asked
	for sc.Scan() {
		rec, bad := sc.Record()
		if bad != nil {
			continue
		}
		switch task := rec.Value("ArrayTaskId"); {
		case rec.Value("ArrayJobId") == id && task != "":
			tasks = append(tasks, jobFromRecord(rec, SourceScontrol))
		case rec.Value("ArrayJobId")+"_"+task == id, rec.Value("JobId") == id:
			j := jobFromRecord(rec, SourceScontrol)
			j.ID = id
			return j, true, nil
		}
	}
	if len(tasks) > 0 {
		return arrayJob(id, tasks), true, nil
	}
	return JobInfo{}, false, nil
}

// arrayJob sums up the tasks of a job array as one job, as sbench submitted
// it: still running while any task is; else failed (with that task's
// state, reason and exit code) if any task did not complete; the earliest
// start, the latest end and every node.
func arrayJob(id string, tasks []JobInfo) JobInfo {
	j := JobInfo{ID: id, Name: tasks[0].Name, State: "COMPLETED", ExitCode: "0:0", Source: tasks[0].Source}
	var nodes []string
	for _, t := range tasks {
		switch {
		case !t.Terminal():
			if j.Terminal() || t.State == "RUNNING" {
				j.State, j.Reason, j.ExitCode = t.State, t.Reason, ""
			}
		case t.State != "COMPLETED" && j.Terminal():
			if j.State == "COMPLETED" {
				j.State, j.Reason, j.ExitCode = t.State, t.Reason, t.ExitCode
			}
		}
		if !t.Start.IsZero() && (j.Start.IsZero() || t.Start.Before(j.Start)) {
			j.Start = t.Start
		}
		if t.End.After(j.End) {
			j.End = t.End
		}
		if !t.Submit.IsZero() && (j.Submit.IsZero() || t.Submit.Before(j.Submit)) {
			j.Submit = t.Submit
		}
		if t.NodeList != "" {
			nodes = append(nodes, t.NodeList)
		}
	}
	if !j.Terminal() {
		j.End = time.Time{}
	}
	j.NodeList = mergeNodeLists(nodes)
	return j
}

// mergeNodeLists joins hostlists, each name once, in order of appearance.
func mergeNodeLists(lists []string) string {
	var names []string
	seen := map[string]bool{}
	for _, l := range lists {
		expanded, err := hostlist.Expand(l)
		if err != nil {
			expanded = []string{l}
		}
		for _, n := range expanded {
			if !seen[n] {
				seen[n] = true
				names = append(names, n)
			}
		}
	}
	return hostlist.Compress(names)
}

// jobFromRecord reads a `scontrol show job` record or a jobcomp/filetxt
// line; they share most keys (the name is JobName in one, Name in the other).
func jobFromRecord(rec Record, source string) JobInfo {
	name, ok := rec.Get("JobName")
	if !ok {
		name = rec.Value("Name")
	}
	j := JobInfo{
		ID:       rec.Value("JobId"),
		Name:     name,
		State:    rec.Value("JobState"),
		Reason:   rec.Value("Reason"),
		ExitCode: rec.Value("ExitCode"),
		NodeList: rec.Value("NodeList"),
		StdOut:   rec.Value("StdOut"),
		StdErr:   rec.Value("StdErr"),
		Comment:  rec.Value("Comment"),
		Submit:   parseTime(rec.Value("SubmitTime")),
		Start:    parseTime(rec.Value("StartTime")),
		End:      parseTime(rec.Value("EndTime")),
		Source:   source,
	}
	if n, err := strconv.Atoi(rec.Value("Restarts")); err == nil && n > 0 {
		j.Restarts = n
	}
	return j.normal()
}

// normal maps Slurm's placeholders to "" and drops forecasts.
func (j JobInfo) normal() JobInfo {
	blank := func(s string) string {
		switch s = strings.TrimSpace(s); s {
		case "None", "(null)", "None assigned", "N/A":
			return ""
		}
		return s
	}
	if raw := strings.TrimSpace(j.State); strings.Contains(raw, " ") && blank(j.Reason) == "" {
		j.Reason = raw // "CANCELLED by 0": who cancelled is worth keeping
	}
	j.State = baseState(j.State)
	j.Name, j.Reason, j.NodeList, j.ExitCode = blank(j.Name), blank(j.Reason), blank(j.NodeList), blank(j.ExitCode)
	j.StdOut, j.StdErr, j.Comment = blank(j.StdOut), blank(j.StdErr), blank(j.Comment)
	if j.State == "PENDING" {
		j.Start = time.Time{}
	}
	if !j.Terminal() {
		j.End = time.Time{}
	}
	return j
}

// parseTime reads Slurm's local timestamps; "Unknown", "None" and anything
// unreadable give the zero time.
func parseTime(s string) time.Time {
	t, err := time.ParseInLocation("2006-01-02T15:04:05", strings.TrimSpace(s), time.Local)
	if err != nil {
		return time.Time{}
	}
	return t
}

// jobComp looks ids up in the jobcomp/filetxt log. note says why it could
// not answer, if it could not.
func (c *Client) jobComp(ctx context.Context, ids []string) (map[string]JobInfo, string) {
	loc, note := c.jobCompLoc(ctx)
	if loc == "" {
		return nil, note
	}
	f, err := os.Open(loc)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Sprintf("%s does not exist (yet)", loc)
	}
	if err != nil {
		return nil, err.Error()
	}
	defer f.Close()
	want := make(map[string]bool, len(ids))
	for _, id := range ids {
		want[id] = true
	}
	found := make(map[string]JobInfo)
	// The log grows by a line per job, forever: look at the JobId first and
	// parse only the lines asked for.
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), MaxRecordLine)
	for sc.Scan() {
		text := sc.Bytes()
		if !bytes.HasPrefix(text, []byte("JobId=")) {
			continue
		}
		id, _, _ := bytes.Cut(text[len("JobId="):], []byte(" "))
		if !want[string(id)] {
			continue
		}
		rec, err := ParseRecord(string(text))
		if err != nil {
			continue // one torn line must not hide the others
		}
		// Slurm appends a line per end; a requeued job ends more than once
		// and the last line is the truth.
		found[string(id)] = jobFromRecord(rec, SourceJobComp)
	}
	if err := sc.Err(); err != nil {
		return found, fmt.Sprintf("read %s: %v", loc, err)
	}
	for _, id := range ids {
		if _, ok := found[id]; !ok {
			return found, "not in " + loc
		}
	}
	return found, ""
}

// jobCompLoc returns the jobcomp log to read: Client.JobCompLoc, else the
// one `scontrol show config` names, asked once.
func (c *Client) jobCompLoc(ctx context.Context) (loc, note string) {
	if c.JobCompLoc != "" {
		return c.JobCompLoc, ""
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.configRead {
		stdout, stderr, err := c.run(ctx, []string{"scontrol", "show", "config"}, nil, "")
		if err != nil {
			return "", "scontrol show config: " + errorText(stderr, stdout)
		}
		c.configRead = true
		conf := parseConfig(stdout)
		if conf["JobCompType"] == "jobcomp/filetxt" {
			c.configLoc = conf["JobCompLoc"]
		}
	}
	if c.configLoc == "" {
		return "", "JobCompType is not jobcomp/filetxt"
	}
	return c.configLoc, ""
}

// parseConfig reads `scontrol show config`'s "Key = Value" lines.
func parseConfig(out []byte) map[string]string {
	conf := make(map[string]string)
	for _, l := range strings.Split(string(out), "\n") {
		k, v, ok := strings.Cut(l, "=")
		if !ok {
			continue
		}
		conf[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	return conf
}

// sacctFields puts the name last: it is the one field that may hold "|".
const sacctFields = "JobID,State,ExitCode,Start,End,NodeList,JobName"

// sacct asks accounting; without slurmdbd it answers "Slurm accounting
// storage is disabled" (exit 1), which is no answer rather than an error.
func (c *Client) sacct(ctx context.Context, ids []string) (map[string]JobInfo, string) {
	argv := []string{"sacct", "-P", "-n", "-j", strings.Join(ids, ","), "-o", sacctFields}
	stdout, stderr, err := c.run(ctx, argv, nil, "")
	if err != nil {
		return nil, errorText(stderr, stdout)
	}
	found := make(map[string]JobInfo)
	for _, l := range strings.Split(string(stdout), "\n") {
		f := strings.SplitN(strings.TrimRight(l, "\r"), "|", 7)
		// Steps (1234.batch, 1234.0) carry their own states; the job's
		// line is the one without a dot.
		if len(f) != 7 || !validJobID(f[0]) {
			continue
		}
		j := JobInfo{ID: f[0], State: f[1], ExitCode: f[2], Start: parseTime(f[3]),
			End: parseTime(f[4]), NodeList: f[5], Name: f[6], Source: SourceSacct}
		found[j.ID] = j.normal()
	}
	for _, id := range ids {
		if _, ok := found[id]; !ok {
			return found, "no record"
		}
	}
	return found, ""
}

// DefaultWaitInterval is Wait's polling interval when none is given.
const DefaultWaitInterval = 2 * time.Second

// waitRetries is how many polls in a row may fail before Wait gives up: a
// controller restart (scontrol reconfigure, failover) takes seconds and must
// not end a campaign's wait.
const waitRetries = 3

// Wait polls the jobs every interval (DefaultWaitInterval if every <= 0)
// until each is settled (JobInfo.Settled: terminal, StateUnknown, or
// pending on a dependency that failed), or ctx is done. onChange, if not
// nil, is called with a job's first state and whenever its State, Reason
// or Restarts changes (a requeue), in the order of ids. Wait returns the
// last state of every job, also with the error that ended it.
func (c *Client) Wait(ctx context.Context, ids []string, every time.Duration, onChange func(JobInfo)) (map[string]JobInfo, error) {
	var each func(JobInfo, bool)
	if onChange != nil {
		each = func(j JobInfo, changed bool) {
			if changed {
				onChange(j)
			}
		}
	}
	return c.WaitUntil(ctx, ids, every, each, nil)
}

// WaitUntil is Wait calling onPoll, if not nil, with every job's state at
// every poll, changed saying whether it is the first or differs from the
// last (State, Reason or Restarts): what a caller that also follows a
// running job's progress needs. It takes the caller's word on when a job
// is settled: besides the jobs JobInfo.Settled says are, a job for which
// settled (if not nil) returns true (called after onPoll has seen its
// state, in the order of ids) is no longer waited for: sbench status's
// jobs stranded behind a failed one, which Slurm keeps pending forever.
func (c *Client) WaitUntil(ctx context.Context, ids []string, every time.Duration, onPoll func(j JobInfo, changed bool), settled func(JobInfo) bool) (map[string]JobInfo, error) {
	ids, err := cleanIDs(ids)
	if err != nil {
		return nil, err
	}
	if every <= 0 {
		every = DefaultWaitInterval
	}
	last := make(map[string]JobInfo, len(ids))
	pending := ids
	failures := 0
	timer := time.NewTimer(0)
	defer timer.Stop()
	for len(pending) > 0 {
		select {
		case <-ctx.Done():
			return last, fmt.Errorf("wait for jobs %s: %w", strings.Join(pending, ","), ctx.Err())
		case <-timer.C:
		}
		got, err := c.Jobs(ctx, pending)
		if err != nil {
			if failures++; failures >= waitRetries || ctx.Err() != nil {
				return last, fmt.Errorf("wait for jobs %s: %w", strings.Join(pending, ","), err)
			}
			timer.Reset(every)
			continue
		}
		failures = 0
		var still []string
		for _, id := range pending {
			j := got[id]
			if onPoll != nil {
				prev, seen := last[id]
				onPoll(j, !seen || prev.State != j.State || prev.Reason != j.Reason || prev.Restarts != j.Restarts)
			}
			last[id] = j
			if !j.Settled() && (settled == nil || !settled(j)) {
				still = append(still, id)
			}
		}
		pending = still
		timer.Reset(every)
	}
	return last, nil
}

// FindByComment returns the id of the job named name whose comment is
// comment (sbatch --comment), as long as Slurm remembers it (squeue shows
// ended jobs for MinJobAge); found is false when there is none.
func (c *Client) FindByComment(ctx context.Context, name, comment string) (id string, found bool, err error) {
	argv := []string{"squeue", "-h", "-t", "all", "--name", name, "-o", "%i|%k"}
	stdout, stderr, err := c.run(ctx, argv, nil, "")
	if err != nil {
		return "", false, fmt.Errorf("squeue --name %s: %s (%w)", name, errorText(stderr, stdout), err)
	}
	for _, l := range strings.Split(string(stdout), "\n") {
		jid, k, ok := strings.Cut(strings.TrimSpace(l), "|")
		if ok && k == comment && validJobID(jid) {
			return jid, true, nil
		}
	}
	return "", false, nil
}
