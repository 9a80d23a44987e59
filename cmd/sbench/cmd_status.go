package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

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
			return runStatus(cmd.Context(), o, e)
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

func runStatus(ctx context.Context, o statusOptions, e *env) error {
	campaign, wait, ingest, all, every := o.campaign, o.wait, o.ingest, o.all, o.every
	if every <= 0 {
		return usagef("status: --interval must be positive")
	}
	db, err := openDBExisting(e)
	if err != nil {
		return err
	}
	defer db.Close()
	client := slurmClient()
	if err := resolveIntents(ctx, e, db, client, campaign); err != nil {
		return err
	}
	jobs, err := db.Jobs(ctx, campaign)
	if err != nil {
		return err
	}
	if len(jobs) == 0 {
		fmt.Fprintln(e.stderr, "no jobs recorded; submit a campaign with sbench submit")
		if o.json {
			return writeStatusJSON(e, nil, nil)
		}
		return nil
	}
	// What the archive already knows strands a job: a status --wait
	// ended before it saw the chain settle left it to this one.
	found, err := markStranded(ctx, db, jobs)
	if err != nil {
		return err
	}
	if wait {
		announceStranded(e.stderr, found)
	}
	byID := map[string]*store.Job{}
	var open []string
	for i := range jobs {
		j := &jobs[i]
		byID[j.SlurmID] = j
		if !jobSettled(*j) && !isLocalJob(j.SlurmID) && j.Intent == "" {
			open = append(open, j.SlurmID)
		}
	}
	apply := func(info slurm.JobInfo) error {
		j := byID[info.ID]
		if j == nil {
			return nil
		}
		stranded, why := isStranded(*j) && info.State == "PENDING", j.Reason
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
		return db.UpdateJob(ctx, *j)
	}
	if len(open) > 0 && !wait {
		infos, err := client.Jobs(ctx, open)
		if err != nil {
			return err
		}
		for _, id := range open {
			if err := apply(infos[id]); err != nil {
				return err
			}
		}
		if _, err := markStranded(ctx, db, jobs); err != nil {
			return err
		}
	}
	if wait && len(open) > 0 {
		var applyErr error
		progress := map[string]string{}
		stranded := func(info slurm.JobInfo) bool { return byID[info.ID] != nil && isStranded(*byID[info.ID]) }
		_, err := client.WaitUntil(ctx, open, every, func(info slurm.JobInfo, changed bool) {
			prevRestarts := 0
			if j := byID[info.ID]; j != nil {
				prevRestarts = j.Restarts
			}
			if err := apply(info); err != nil && applyErr == nil {
				applyErr = err
			}
			now := time.Now().Format("15:04:05")
			if changed {
				if info.State != "PENDING" || !stranded(info) { // that one said why it never starts
					fmt.Fprintf(e.stderr, "%s job %s: %s\n", now, info.ID, describeState(info, prevRestarts))
				}
				// A job that ends badly may strand those waiting for it.
				found, err := markStranded(ctx, db, jobs)
				if err != nil && applyErr == nil {
					applyErr = err
				}
				announceStranded(e.stderr, found)
			}
			if info.State == "RUNNING" {
				if line := runningStep(*byID[info.ID], time.Now()); line != "" && line != progress[info.ID] {
					progress[info.ID] = line
					fmt.Fprintf(e.stderr, "%s job %s: %s\n", now, info.ID, line)
				}
			}
		}, stranded)
		if err != nil {
			return err
		}
		if applyErr != nil {
			return applyErr
		}
	}
	if o.cancelStranded {
		if err := cancelStranded(ctx, e, db, client, jobs); err != nil {
			return err
		}
	}
	// --ingest looks at every job, not only those shown: a job that
	// settled while no status was there to ingest it (a status --wait
	// killed before its ingest) has its runs archived now.
	recorded := jobs
	if !all {
		// Show what this call was about: the jobs that were open, or
		// everything when nothing was.
		if len(open) > 0 {
			var shown []store.Job
			for _, id := range open {
				shown = append(shown, *byID[id])
			}
			jobs = shown
		}
	}
	if !o.json {
		printJobs(e.stdout, jobs)
	}
	var ingested *statusIngestJSON
	if ingest {
		if ingested, err = ingestSettled(ctx, e, db, recorded, o.json); err != nil {
			return err
		}
	}
	if o.json {
		if err := writeStatusJSON(e, jobs, ingested); err != nil {
			return err
		}
	}
	if wait {
		bad := 0
		for _, j := range jobs {
			if j.State != "COMPLETED" {
				bad++
			}
		}
		if bad > 0 {
			return exitError{code: exitGate, msg: fmt.Sprintf("%d of %d job(s) did not complete", bad, len(jobs))}
		}
	}
	return nil
}

// ingestSettled archives the runs of every settled job of jobs (status
// --ingest): their bundles, and a failed run for every planned step that
// left none. Jobs whose runs are all archived are skipped. It says what it
// added, or with asJSON returns it for the JSON output.
func ingestSettled(ctx context.Context, e *env, db *store.DB, jobs []store.Job, asJSON bool) (*statusIngestJSON, error) {
	var total ingestSummary
	planned := 0
	for _, j := range jobs {
		if !jobSettled(j) && j.State != slurm.StateUnknown {
			continue
		}
		if done, err := jobArchived(ctx, db, j); err != nil || done {
			if err != nil {
				return nil, err
			}
			continue
		}
		n, err := archiveJob(ctx, e, db, j, nil, &total)
		if err != nil {
			return nil, err
		}
		planned += n
	}
	if asJSON {
		return &statusIngestJSON{Added: total.added + planned, AlreadyArchived: total.skipped, Bundles: total.files, Missing: planned}, nil
	}
	fmt.Fprintf(e.stdout, "%d run(s) added, %d already archived, from %d bundle(s)\n", total.added+planned, total.skipped, total.files)
	if planned > 0 {
		fmt.Fprintf(e.stdout, "%d planned step(s) left no bundle: archived as failed runs, with why (sbench runs --status failed)\n", planned)
	}
	return nil, nil
}

// jobSettled reports whether a recorded job's state will not change by
// waiting (slurm.JobInfo.Settled).
func jobSettled(j store.Job) bool {
	return (slurm.JobInfo{State: j.State, Reason: j.Reason}.Settled() || isStranded(j)) && j.State != slurm.StateUnknown
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
	outs := jobOutcomes(j, tasks)[""]
	var id string
	var cur *stepOutcome
	for k, o := range outs {
		if !o.ended && o.attempt == j.Restarts && (cur == nil || o.begin.After(cur.begin)) {
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
	return fmt.Sprintf("%s running for %s", what, now.Sub(cur.begin).Truncate(time.Minute))
}

// resolveIntents finds the Slurm id of jobs recorded before sbatch answered
// (an interrupted submit) by the comment sbatch gave them.
func resolveIntents(ctx context.Context, e *env, db *store.DB, client *slurm.Client, campaign string) error {
	jobs, err := db.Jobs(ctx, campaign)
	if err != nil {
		return err
	}
	for _, j := range jobs {
		if j.Intent == "" {
			continue
		}
		id, found, err := client.FindByComment(ctx, j.Name, j.Intent)
		if err != nil {
			return err
		}
		if !found {
			if j.State != slurm.StateUnknown {
				j.State, j.Reason = slurm.StateUnknown, "its submission was interrupted and Slurm has no job with comment "+j.Intent
				if err := db.UpdateJob(ctx, j); err != nil {
					return err
				}
			}
			fmt.Fprintf(e.stderr, "job %s of campaign %s: submission interrupted, and Slurm knows no job with comment %s (never accepted, or ended long ago)\n", j.Name, j.Campaign, j.Intent)
			continue
		}
		if err := db.ResolveIntent(ctx, j.Campaign, j.Intent, id); err != nil {
			return err
		}
		fmt.Fprintf(e.stderr, "job %s of campaign %s: its submission was interrupted; Slurm accepted it as job %s\n", j.Name, j.Campaign, id)
	}
	return nil
}

func isLocalJob(id string) bool { return len(id) > 6 && id[:6] == "local-" }

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
	stamp := func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.UTC().Format(time.RFC3339)
	}
	out := struct {
		Jobs   []jobJSON         `json:"jobs"`
		Ingest *statusIngestJSON `json:"ingest,omitempty"`
	}{Jobs: []jobJSON{}, Ingest: ingested}
	for _, j := range jobs {
		out.Jobs = append(out.Jobs, jobJSON{j.SlurmID, j.Campaign, j.Variants, j.State, j.Reason, j.ExitCode, j.NodeList,
			j.Restarts, stamp(j.Submitted), stamp(j.Start), stamp(j.End), len(j.Plan)})
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
