package main

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/sbench/sbench/slurm"
	"github.com/sbench/sbench/store"
)

func newStatusCmd(e *env) *cobra.Command {
	var campaign string
	var wait, ingest, all bool
	var every time.Duration
	c := &cobra.Command{
		Use:   "status [--campaign NAME] [--wait] [--ingest]",
		Short: "Follow submitted jobs until they finish",
		Long: `Status asks Slurm for the state of the archive's unfinished jobs (all
campaigns, or --campaign NAME), records it and prints a table. It works
without slurmdbd: scontrol while Slurm remembers the job, then the
jobcomp/filetxt log, then sacct when accounting is on; a job found nowhere is
shown as UNKNOWN, never dropped.

--wait polls until every job reaches a terminal state (COMPLETED, FAILED,
CANCELLED, TIMEOUT, NODE_FAIL, OUT_OF_MEMORY, PREEMPTED …), printing each
change; with it, the exit status is 1 when any job did not complete.
--ingest then loads the bundles the finished jobs wrote.`,
		Example: `  sbench status
  sbench status --campaign quickstart --wait --ingest
  sbench status --all`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if every <= 0 {
				return usagef("status: --interval must be positive")
			}
			db, err := openDB(e)
			if err != nil {
				return err
			}
			defer db.Close()
			ctx := cmd.Context()
			jobs, err := db.Jobs(ctx, campaign)
			if err != nil {
				return err
			}
			if len(jobs) == 0 {
				fmt.Fprintln(e.stderr, "no jobs recorded; submit a campaign with sbench submit")
				return nil
			}
			byID := map[string]*store.Job{}
			var open []string
			for i := range jobs {
				j := &jobs[i]
				byID[j.SlurmID] = j
				if !slurm.IsTerminal(j.State) && !isLocalJob(j.SlurmID) {
					open = append(open, j.SlurmID)
				}
			}
			client := slurmClient()
			apply := func(info slurm.JobInfo) error {
				j := byID[info.ID]
				if j == nil {
					return nil
				}
				j.State, j.Reason, j.ExitCode, j.NodeList = info.State, info.Reason, info.ExitCode, info.NodeList
				if !info.Start.IsZero() {
					j.Start = info.Start
				}
				if !info.End.IsZero() {
					j.End = info.End
				}
				j.Updated = time.Now()
				return db.UpdateJob(ctx, *j)
			}
			if len(open) > 0 {
				infos, err := client.Jobs(ctx, open)
				if err != nil {
					return err
				}
				for _, info := range infos {
					if err := apply(info); err != nil {
						return err
					}
				}
			}
			if wait && len(open) > 0 {
				var applyErr error
				_, err := client.Wait(ctx, open, every, func(info slurm.JobInfo) {
					if err := apply(info); err != nil && applyErr == nil {
						applyErr = err
					}
					fmt.Fprintf(e.stderr, "%s job %s: %s %s\n", time.Now().Format("15:04:05"), info.ID, info.State, info.Reason)
				})
				if err != nil {
					return err
				}
				if applyErr != nil {
					return applyErr
				}
			}
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
			printJobs(e.stdout, jobs)
			if ingest {
				var total ingestSummary
				for _, j := range jobs {
					if !slurm.IsTerminal(j.State) && j.State != slurm.StateUnknown {
						continue
					}
					sum, err := ingestJobBundles(ctx, e, db, j)
					total.added += sum.added
					total.skipped += sum.skipped
					total.files += sum.files
					if err != nil {
						return err
					}
				}
				fmt.Fprintf(e.stdout, "%d run(s) added, %d already archived, from %d bundle(s)\n", total.added, total.skipped, total.files)
			}
			if wait {
				bad := 0
				for _, j := range jobs {
					if j.State != "COMPLETED" {
						bad++
					}
				}
				if bad > 0 {
					return exitError{code: exitFailure, msg: fmt.Sprintf("%d of %d job(s) did not complete", bad, len(jobs))}
				}
			}
			return nil
		},
	}
	c.Flags().StringVar(&campaign, "campaign", "", "only jobs of this campaign")
	c.Flags().BoolVar(&wait, "wait", false, "poll until every job has finished")
	c.Flags().BoolVar(&ingest, "ingest", false, "ingest the bundles of finished jobs")
	c.Flags().BoolVar(&all, "all", false, "list every recorded job, not only the unfinished ones")
	c.Flags().DurationVar(&every, "interval", 2*time.Second, "how often to poll Slurm with --wait")
	return c
}

func isLocalJob(id string) bool { return len(id) > 6 && id[:6] == "local-" }

func printJobs(w io.Writer, jobs []store.Job) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "JOB\tCAMPAIGN\tVARIANT\tSTATE\tEXIT\tNODES\tREASON")
	for _, j := range jobs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", j.SlurmID, j.Campaign, dash(variantsText(j)), dash(j.State), dash(j.ExitCode), dash(j.NodeList), dash(j.Reason))
	}
	tw.Flush()
}
