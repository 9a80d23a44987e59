package main

import (
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/sbench/sbench/store"
)

func newPruneCmd(e *env) *cobra.Command {
	var f filterFlags
	var before string
	var yes bool
	c := &cobra.Command{
		Use:   "prune [filters] [--before DATE] [--status failed,invalid] [--yes]",
		Short: "Delete runs from the archive (lists them; deletes only with --yes)",
		Long: `Prune deletes the runs the filters select, with their bundles, samples,
scalars and checks, and the host descriptions no other run shares.

It always prints the list first, and deletes nothing without --yes: run it
once to see, then again with --yes. At least one filter is required. Runs a
baseline holds are never deleted (they are listed as kept): remove the
baseline first. --until DATE selects runs that started before that day
(UTC); runs with no start time (files ingested by hand that do not say when
they ran) are not selected by --since or --until.`,
		Example: `  sbench prune --status failed,invalid
  sbench prune --campaign scratch --until 2024-01-01 --yes`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if before != "" {
				// --before is --until's old name.
				if f.until != "" {
					return usagef("prune: --before is --until: give one")
				}
				if _, err := parseWhen("--before", before, time.Now()); err != nil {
					return err
				}
				f.until = before
			}
			flt, err := f.filter()
			if err != nil {
				return err
			}
			if f.empty() {
				return usagef("prune: give at least one filter (--campaign, --benchmark, --run, --job, --label, --status, --since, --until); prune never deletes everything")
			}
			// Without --yes prune only shows its plan: it reads, and must
			// work on a read-only archive and never create one.
			open := openDBRead
			if yes {
				open = openDB
			}
			db, err := open(e)
			if err != nil {
				return err
			}
			defer db.Close()
			ctx := cmd.Context()
			plan, err := db.PlanPrune(ctx, flt)
			if err != nil {
				return err
			}
			if len(plan.Delete)+len(plan.Kept) == 0 {
				return noRuns(ctx, db, "prune", flt)
			}
			printPrunePlan(e, plan)
			if len(plan.Delete) == 0 {
				fmt.Fprintln(e.stdout, "nothing to delete")
				return nil
			}
			if !yes {
				fmt.Fprintf(e.stdout, "%d run(s) would be deleted; nothing deleted: run again with --yes to delete them\n", len(plan.Delete))
				return nil
			}
			res, err := db.Prune(ctx, plan.IDs())
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "deleted %d run(s) and %d host description(s) from %s\n", res.Runs, res.Hosts, e.db)
			return nil
		},
	}
	f.add(c)
	c.Flags().StringVar(&before, "before", "", "only runs that started before this time (--until's old name)")
	c.Flags().MarkHidden("before")
	c.Flags().BoolVar(&yes, "yes", false, "really delete the listed runs")
	return c
}

func printPrunePlan(e *env, plan store.PrunePlan) {
	if len(plan.Delete)+len(plan.Kept) == 0 {
		return
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ACTION\tID\tWHEN\tCAMPAIGN\tBENCHMARK\tJOB/SOURCE\tSTATUS")
	row := func(action string, r store.Run) {
		job := r.JobID
		if job == "" {
			job = r.Source
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\n", action, r.ID, when(r), dash(r.Campaign), r.Benchmark, dash(job), r.Status)
	}
	for _, r := range plan.Delete {
		row("delete", r)
	}
	for _, k := range plan.Kept {
		row("keep (baseline "+strings.Join(k.Baselines, ", ")+")", k.Run)
	}
	tw.Flush()
}
