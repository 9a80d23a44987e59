package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/sbench/sbench/jobs"
	"github.com/sbench/sbench/slurm"
	"github.com/sbench/sbench/store"
)

// statusOptions are status's flags.
type statusOptions struct {
	campaign                string
	wait, ingest, all, json bool
	every                   time.Duration
	// cancelStranded scancels the jobs that can never start.
	cancelStranded bool
}

func newStatusCmd(e *env) *cobra.Command {
	var o statusOptions
	c := &cobra.Command{
		Use:   "status [--campaign NAME] [--wait] [--ingest] [--cancel-stranded] [--json]",
		Short: "Follow submitted jobs until they finish",
		Long: `Status asks Slurm for the state of the archive's unfinished jobs (all
campaigns, or --campaign NAME), records it and prints a table. It works
without slurmdbd: scontrol while Slurm remembers the job, then the
jobcomp/filetxt log, then sacct when accounting is on; a job found nowhere is
shown as UNKNOWN, never dropped. A job whose submission was interrupted
before its id was recorded is found by the comment sbench gave it.

--wait polls until every job is settled: ended (COMPLETED, FAILED,
CANCELLED, TIMEOUT, NODE_FAIL, OUT_OF_MEMORY, PREEMPTED …), or never to
start. It prints each change as it happens — a requeue after a node failure
included — and, for a running job, which step runs and for how long. With
--wait, the exit status is 1 when any job did not complete.

A job that waits for others (a benchmark's "after": --dependency=afterok)
never starts once one of them, or one they wait for in turn, ended without
completing. Slurm marks only the first level (DependencyNeverSatisfied) and
keeps the jobs further down the chain pending on "Dependency" forever;
status knows every job's afterok dependencies (submit records them),
follows the chain and reports such a job as never starting, with the job
that did it ("because job 12 (benchmark first) failed"). --cancel-stranded
scancels those jobs. On the cluster's side, kill_invalid_depend in
SchedulerParameters (slurm.conf) makes Slurm cancel them itself.

--ingest then loads the bundles the settled jobs wrote — every settled job
of the archive (of --campaign), not only those shown — and archives every
planned step that left none as a failed run, with the job's state and what
the step printed: every planned step ends as a run (a job that never
started: "never ran", and why).

Status reads the archive and never creates one: where there is none it
says "no archive at PATH"; submit and local create it.

With --json the final table is one JSON object on standard output,
{"jobs": [...], "ingest": {...}}; the changes --wait follows still go to
standard error as they happen.`,
		Example: `  sbench status
  sbench status --campaign quickstart --wait --ingest
  sbench status --campaign chain --wait --cancel-stranded --ingest
  sbench status --all --json | jq -r '.jobs[] | select(.state != "COMPLETED") | .id'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runStatus(cmd.Context(), e, o)
		},
	}
	c.Flags().StringVar(&o.campaign, "campaign", "", "only jobs of this campaign")
	c.Flags().BoolVar(&o.wait, "wait", false, "poll until every job has finished")
	c.Flags().BoolVar(&o.ingest, "ingest", false, "ingest the bundles of finished jobs")
	c.Flags().BoolVar(&o.all, "all", false, "list every recorded job, not only the unfinished ones")
	c.Flags().DurationVar(&o.every, "interval", 2*time.Second, "how often to poll Slurm with --wait")
	c.Flags().BoolVar(&o.json, "json", false, "print the jobs (and what --ingest added) as JSON")
	c.Flags().BoolVar(&o.cancelStranded, "cancel-stranded", false, "scancel the jobs that can never start (their afterok chain reaches a job that did not complete)")
	return c
}

func runStatus(ctx context.Context, e *env, o statusOptions) error {
	if o.every <= 0 {
		return usagef("status: --interval must be positive")
	}
	db, err := openDBExisting(e)
	if err != nil {
		return err
	}
	defer db.Close()
	client := slurmClient()
	if err := jobs.ResolveIntents(ctx, db, client, o.campaign, e.stderr); err != nil {
		return err
	}
	all, err := db.Jobs(ctx, o.campaign)
	if err != nil {
		return err
	}
	if len(all) == 0 {
		fmt.Fprintln(e.stderr, "no jobs recorded; submit a campaign with sbench submit")
		if o.json {
			return writeStatusJSON(e, nil, nil)
		}
		return nil
	}
	// What the archive already knows strands a job: a status --wait
	// ended before it saw the chain settle left it to this one.
	found, err := jobs.MarkStranded(ctx, db, all)
	if err != nil {
		return err
	}
	if o.wait {
		announceStranded(e.stderr, found)
	}
	t := &jobTracker{db: db, jobs: all, byID: map[string]*store.Job{}}
	var open []string
	for i := range all {
		j := &all[i]
		t.byID[j.SlurmID] = j
		if !jobSettled(*j) && !jobs.IsLocal(j.SlurmID) && j.Intent == "" {
			open = append(open, j.SlurmID)
		}
	}
	switch {
	case len(open) > 0 && !o.wait:
		err = t.refresh(ctx, client, open)
	case len(open) > 0:
		err = t.follow(ctx, e, client, open, o.every)
	}
	if err != nil {
		return err
	}
	if o.cancelStranded {
		ids, err := jobs.CancelStranded(ctx, db, client, all)
		if err != nil {
			return err
		}
		if len(ids) > 0 {
			fmt.Fprintf(e.stderr, "cancelled %d job(s) that can never start: %s\n", len(ids), strings.Join(ids, " "))
		}
	}
	// Show what this call was about: the jobs that were open, or
	// everything when nothing was.
	shown := all
	if !o.all && len(open) > 0 {
		shown = nil
		for _, id := range open {
			shown = append(shown, *t.byID[id])
		}
	}
	// --ingest looks at every job, not only those shown: a job that
	// settled while no status was there to ingest it (a status --wait
	// killed before its ingest) has its runs archived now.
	return showStatus(ctx, e, db, o, shown, all)
}

// jobTracker records what Slurm says of the archive's jobs.
type jobTracker struct {
	db   *store.DB
	jobs []store.Job
	byID map[string]*store.Job
}

// apply records info in its job.
func (t *jobTracker) apply(ctx context.Context, info slurm.JobInfo) error {
	j := t.byID[info.ID]
	if j == nil {
		return nil
	}
	stranded, why := jobs.IsStranded(*j) && info.State == "PENDING", j.Reason
	j.State, j.Reason, j.ExitCode, j.NodeList = info.State, info.Reason, info.ExitCode, info.NodeList
	if stranded {
		j.Reason = why // Slurm says "Dependency" forever
	}
	if !info.Start.IsZero() {
		j.Start = info.Start
	}
	if !info.End.IsZero() {
		j.End = info.End
	}
	j.Restarts = max(j.Restarts, info.Restarts)
	j.Updated = time.Now()
	return t.db.UpdateJob(ctx, *j)
}

// refresh asks Slurm once for the open jobs.
func (t *jobTracker) refresh(ctx context.Context, client *slurm.Client, open []string) error {
	infos, err := client.Jobs(ctx, open)
	if err != nil {
		return err
	}
	for _, id := range open {
		if err := t.apply(ctx, infos[id]); err != nil {
			return err
		}
	}
	_, err = jobs.MarkStranded(ctx, t.db, t.jobs)
	return err
}

// follow polls Slurm until the open jobs are settled (--wait), saying
// every change, and which step of a running job runs.
func (t *jobTracker) follow(ctx context.Context, e *env, client *slurm.Client, open []string, every time.Duration) error {
	var applyErr error
	progress := map[string]string{}
	stranded := func(info slurm.JobInfo) bool { return t.byID[info.ID] != nil && jobs.IsStranded(*t.byID[info.ID]) }
	_, err := client.WaitUntil(ctx, open, every, func(info slurm.JobInfo, changed bool) {
		prevRestarts := 0
		if j := t.byID[info.ID]; j != nil {
			prevRestarts = j.Restarts
		}
		if err := t.apply(ctx, info); err != nil && applyErr == nil {
			applyErr = err
		}
		now := time.Now().Format("15:04:05")
		if changed {
			if info.State != "PENDING" || !stranded(info) { // that one said why it never starts
				fmt.Fprintf(e.stderr, "%s job %s: %s\n", now, info.ID, describeState(info, prevRestarts))
			}
			// A job that ends badly may strand those waiting for it.
			found, err := jobs.MarkStranded(ctx, t.db, t.jobs)
			if err != nil && applyErr == nil {
				applyErr = err
			}
			announceStranded(e.stderr, found)
		}
		if info.State == "RUNNING" {
			if line := runningStep(*t.byID[info.ID], time.Now()); line != "" && line != progress[info.ID] {
				progress[info.ID] = line
				fmt.Fprintf(e.stderr, "%s job %s: %s\n", now, info.ID, line)
			}
		}
	}, stranded)
	if err != nil {
		return err
	}
	return applyErr
}

// showStatus prints the jobs shown, archives the runs of the recorded
// ones with --ingest, and with --wait fails when a shown job did not
// complete.
func showStatus(ctx context.Context, e *env, db *store.DB, o statusOptions, shown, recorded []store.Job) error {
	if !o.json {
		printJobs(e.stdout, shown)
	}
	var ingested *statusIngestJSON
	if o.ingest {
		var err error
		if ingested, err = ingestSettled(ctx, e, db, recorded, o.json); err != nil {
			return err
		}
	}
	if o.json {
		if err := writeStatusJSON(e, shown, ingested); err != nil {
			return err
		}
	}
	if o.wait {
		bad := 0
		for _, j := range shown {
			if j.State != "COMPLETED" {
				bad++
			}
		}
		if bad > 0 {
			return exitError{code: exitGate, msg: fmt.Sprintf("%d of %d job(s) did not complete", bad, len(shown))}
		}
	}
	return nil
}

// announceStranded says, as --wait says every change, that a job will
// never start, and why.
func announceStranded(w io.Writer, found []*store.Job) {
	now := time.Now().Format("15:04:05")
	for _, j := range found {
		fmt.Fprintf(w, "%s job %s: it will never start (%s): Slurm would keep it pending forever, %s (scancel %s, or sbench status --cancel-stranded, removes it)\n",
			now, j.SlurmID, slurm.ReasonDependencyNeverSatisfied, jobs.StrandedBecause(*j), j.SlurmID)
	}
}

// ingestSettled archives the runs of every settled job of recorded (status
// --ingest): their bundles, and a failed run for every planned step that
// left none. Jobs whose runs are all archived are skipped. It says what it
// added, or with asJSON returns it for the JSON output.
func ingestSettled(ctx context.Context, e *env, db *store.DB, recorded []store.Job, asJSON bool) (*statusIngestJSON, error) {
	a := &jobs.Archiver{DB: db, Slurm: slurmClient(), Ingest: ingestPipeline(e, "bundle")}
	planned := 0
	for _, j := range recorded {
		if !jobSettled(j) && j.State != slurm.StateUnknown {
			continue
		}
		if done, err := jobs.Archived(ctx, db, j); err != nil || done {
			if err != nil {
				return nil, err
			}
			continue
		}
		n, err := a.Archive(ctx, j, nil)
		if err != nil {
			return nil, err
		}
		planned += n
	}
	if asJSON {
		return &statusIngestJSON{Added: a.Total.Added + planned, AlreadyArchived: a.Total.Skipped, Bundles: a.Total.Files, Missing: planned}, nil
	}
	fmt.Fprintf(e.stdout, "%d run(s) added, %d already archived, from %d bundle(s)\n", a.Total.Added+planned, a.Total.Skipped, a.Total.Files)
	if planned > 0 {
		fmt.Fprintf(e.stdout, "%d planned step(s) left no bundle: archived as failed runs, with why (sbench runs --status failed)\n", planned)
	}
	return nil, nil
}

// jobSettled reports whether a recorded job's state will not change by
// waiting (slurm.JobInfo.Settled).
func jobSettled(j store.Job) bool {
	return (slurm.JobInfo{State: j.State, Reason: j.Reason}.Settled() || jobs.IsStranded(j)) && j.State != slurm.StateUnknown
}

// describeState says what a change of a job's state means.
func describeState(info slurm.JobInfo, prevRestarts int) string {
	s := info.State
	if info.Reason != "" {
		s += " " + info.Reason
	}
	switch {
	case info.Restarts > prevRestarts:
		s = fmt.Sprintf("NODE_FAIL or preemption: REQUEUED by Slurm (attempt %d), now %s; the first attempt's results are kept", info.Restarts+1, s)
	case info.NeverRuns():
		s += fmt.Sprintf(" — it will never start: a job it waits for failed (scancel %s removes it)", info.ID)
	}
	if info.ExitCode != "" && info.Terminal() {
		s += " exit " + info.ExitCode
	}
	return s
}

// runningStep says which step of a running job runs and for how long, from
// the step markers of its output; "" when its output says nothing yet.
func runningStep(j store.Job, now time.Time) string {
	tasks := []string{""}
	outs := jobs.JobOutcomes(j, tasks)[""]
	var id string
	var cur *jobs.Outcome
	for k, o := range outs {
		if !o.Ended && o.Attempt == j.Restarts && (cur == nil || o.Begin.After(cur.Begin)) {
			id, cur = k, o
		}
	}
	if cur == nil {
		return ""
	}
	what := "step " + id
	for _, ps := range j.Plan {
		if ps.Task == "" && (ps.Step == id || strings.HasPrefix(id, ps.Step+"-")) {
			what += fmt.Sprintf(" (%s, variant %s", ps.Benchmark, ps.Variant)
			if ps.Limit > 0 {
				what += ", limit " + ps.Limit.String()
			}
			what += ")"
			break
		}
	}
	// Minutes are what matter to someone waiting; the line changes when
	// the step or the minute does.
	return fmt.Sprintf("%s running for %s", what, now.Sub(cur.Begin).Truncate(time.Minute))
}

// statusIngestJSON is what status --ingest --json says it archived.
type statusIngestJSON struct {
	Added           int `json:"added"`
	AlreadyArchived int `json:"already_archived"`
	Bundles         int `json:"bundles"`
	// Missing is how many planned steps left no bundle and were archived
	// as failed runs (counted in Added too).
	Missing int `json:"missing_archived_failed"`
}

// writeStatusJSON prints the jobs status shows, and what --ingest did.
func writeStatusJSON(e *env, jobs []store.Job, ingested *statusIngestJSON) error {
	type jobJSON struct {
		ID        string   `json:"id"`
		Campaign  string   `json:"campaign"`
		Variants  []string `json:"variants,omitempty"`
		State     string   `json:"state"`
		Reason    string   `json:"reason,omitempty"`
		ExitCode  string   `json:"exit_code,omitempty"`
		Nodes     string   `json:"nodes,omitempty"`
		Restarts  int      `json:"restarts"`
		Submitted string   `json:"submitted,omitempty"`
		Start     string   `json:"start,omitempty"`
		End       string   `json:"end,omitempty"`
		Steps     int      `json:"planned_steps"`
	}
	out := struct {
		Jobs   []jobJSON         `json:"jobs"`
		Ingest *statusIngestJSON `json:"ingest,omitempty"`
	}{Jobs: []jobJSON{}, Ingest: ingested}
	for _, j := range jobs {
		out.Jobs = append(out.Jobs, jobJSON{j.SlurmID, j.Campaign, j.Variants, j.State, j.Reason, j.ExitCode, j.NodeList,
			j.Restarts, rfc3339(j.Submitted), rfc3339(j.Start), rfc3339(j.End), len(j.Plan)})
	}
	return writeJSON(e, out)
}

func printJobs(w io.Writer, jobs []store.Job) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "JOB\tCAMPAIGN\tVARIANT\tSTATE\tEXIT\tNODES\tREASON")
	for _, j := range jobs {
		state := dash(j.State)
		if j.Restarts > 0 {
			state += fmt.Sprintf(" (requeued %d×)", j.Restarts)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", j.SlurmID, j.Campaign, dash(variantsText(j)), state, dash(j.ExitCode), dash(j.NodeList), dash(j.Reason))
	}
	tw.Flush()
}
