package main

import (
	"cmp"
	"context"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/sbench/sbench/store"
)

// pruneOptions are prune's flags.
type pruneOptions struct {
	filter   filterFlags
	before   string
	yes      bool
	json     bool
	noVacuum bool
}

func newPruneCmd(e *env) *cobra.Command {
	var o pruneOptions
	c := &cobra.Command{
		Use:   "prune [filters] [--status failed,invalid] [--yes] [--json]",
		Short: "Delete runs from the archive (lists them; deletes only with --yes)",
		Long: `Prune deletes the runs the filters select, with their bundles, samples,
scalars and checks, and the host descriptions no other run shares.

It always prints the list first, and deletes nothing without --yes: run it
once to see, then again with --yes. At least one filter is required. Runs a
baseline holds are never deleted (they are listed as kept): remove the
baseline first. --until DATE selects runs that started before that day
(UTC); runs with no start time (files ingested by hand that do not say when
they ran) are not selected by --since or --until.

Deleting frees space inside the archive file, which SQLite reuses for new runs
but does not give back to the file system; so after deleting, prune rewrites
the archive without it (SQLite's VACUUM: a few seconds for a large archive,
and it needs as much free disk as the archive's size while it runs) and says
how much it reclaimed. --no-vacuum leaves the space inside the file, for a
prune on a disk that is nearly full; "sqlite3 ARCHIVE VACUUM" reclaims it later.

With --json the plan (and, with --yes, what was deleted) is one JSON object:
{"delete": [runs], "kept": [{"run": run, "baselines": [names]}],
"deleted": {"runs": N, "hosts": N, "bytes_before": N, "bytes_after": N}};
"deleted" is absent without --yes, the sizes without a vacuum.`,
		Example: `  sbench prune --status failed,invalid
  sbench prune --campaign scratch --until 2024-01-01 --yes
  sbench prune --run 12-40 --json | jq '.delete[].id'
  sbench prune --system retired-cluster --yes --no-vacuum`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runPrune(cmd.Context(), e, o)
		},
	}
	o.filter.add(c)
	c.Flags().StringVar(&o.before, "before", "", "only runs that started before this time (--until's old name)")
	c.Flags().MarkHidden("before")
	c.Flags().BoolVar(&o.yes, "yes", false, "really delete the listed runs")
	c.Flags().BoolVar(&o.json, "json", false, "print the plan and what was deleted as JSON")
	c.Flags().BoolVar(&o.noVacuum, "no-vacuum", false, "with --yes: leave the freed space inside the archive file (no VACUUM)")
	return c
}

func runPrune(ctx context.Context, e *env, o pruneOptions) error {
	f := o.filter
	if o.before != "" {
		// --before is --until's old name.
		if f.until != "" {
			return usagef("prune: --before is --until: give one")
		}
		if _, err := parseWhen("--before", o.before, time.Now()); err != nil {
			return err
		}
		f.until = o.before
	}
	flt, err := f.filter()
	if err != nil {
		return err
	}
	if f.empty() {
		return usagef("prune: give at least one filter (--system, --campaign, --benchmark, --run, --job, --label, --status, --since, --until); prune never deletes everything")
	}
	// Without --yes prune only shows its plan: it reads, and must work on
	// a read-only archive. With --yes it deletes; neither creates an
	// archive (a mistyped --db is said, not made).
	open := openDBRead
	if o.yes {
		open = openDBExisting
	}
	db, err := open(e)
	if err != nil {
		return err
	}
	defer db.Close()
	plan, err := db.PlanPrune(ctx, flt)
	if err != nil {
		return err
	}
	if len(plan.Delete)+len(plan.Kept) == 0 {
		return noRuns(ctx, db, "prune", flt)
	}
	if !o.json {
		printPrunePlan(e, plan)
	}
	var res *store.PruneResult
	var vac *store.VacuumResult
	if o.yes && len(plan.Delete) > 0 {
		r, err := db.Prune(ctx, plan.IDs())
		if err != nil {
			return err
		}
		res = &r
		if !o.noVacuum {
			v, err := db.Vacuum(ctx)
			if err != nil {
				return err
			}
			vac = &v
		}
	}
	if o.json {
		return writePruneJSON(e, plan, res, vac)
	}
	switch {
	case len(plan.Delete) == 0:
		fmt.Fprintln(e.stdout, "nothing to delete")
	case res == nil:
		fmt.Fprintf(e.stdout, "%d run(s) would be deleted; nothing deleted: run again with --yes to delete them\n", len(plan.Delete))
	default:
		fmt.Fprintf(e.stdout, "deleted %d run(s) and %d host description(s) from %s\n", res.Runs, res.Hosts, e.db)
		if vac != nil {
			fmt.Fprintf(e.stdout, "reclaimed %s: the archive is now %s\n", megabytes(vac.Before-vac.After), megabytes(vac.After))
		} else if free, err := db.Free(ctx); err == nil && free > 0 {
			fmt.Fprintf(e.stdout, "%s are free inside the archive, for new runs; sbench prune without --no-vacuum, or sqlite3 %s VACUUM, gives them back to the disk\n", megabytes(free), e.db)
		}
	}
	return nil
}

// megabytes writes a size for people: "12.5 MB" (10^6 bytes), "812 kB".
func megabytes(n int64) string {
	switch {
	case n >= 1e6:
		return strconv.FormatFloat(float64(n)/1e6, 'f', 1, 64) + " MB"
	case n >= 1e3:
		return strconv.FormatInt(n/1e3, 10) + " kB"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}

func writePruneJSON(e *env, plan store.PrunePlan, res *store.PruneResult, vac *store.VacuumResult) error {
	type kept struct {
		Run       runJSON  `json:"run"`
		Baselines []string `json:"baselines"`
	}
	type deleted struct {
		Runs   int    `json:"runs"`
		Hosts  int    `json:"hosts"`
		Before *int64 `json:"bytes_before,omitempty"`
		After  *int64 `json:"bytes_after,omitempty"`
	}
	out := struct {
		Delete  []runJSON `json:"delete"`
		Kept    []kept    `json:"kept"`
		Deleted *deleted  `json:"deleted,omitempty"`
	}{Delete: []runJSON{}, Kept: []kept{}}
	for _, r := range plan.Delete {
		out.Delete = append(out.Delete, newRunJSON(r))
	}
	for _, k := range plan.Kept {
		out.Kept = append(out.Kept, kept{newRunJSON(k.Run), k.Baselines})
	}
	if res != nil {
		out.Deleted = &deleted{Runs: res.Runs, Hosts: res.Hosts}
		if vac != nil {
			out.Deleted.Before, out.Deleted.After = &vac.Before, &vac.After
		}
	}
	return writeJSON(e, out)
}

func printPrunePlan(e *env, plan store.PrunePlan) {
	if len(plan.Delete)+len(plan.Kept) == 0 {
		return
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ACTION\tID\tWHEN\tCAMPAIGN\tBENCHMARK\tJOB/SOURCE\tSTATUS")
	row := func(action string, r store.Run) {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\n", action, r.ID, when(r), dash(r.Campaign), r.Benchmark, dash(cmp.Or(r.JobID, r.Source)), r.Status)
	}
	for _, r := range plan.Delete {
		row("delete", r)
	}
	for _, k := range plan.Kept {
		row("keep (baseline "+strings.Join(k.Baselines, ", ")+")", k.Run)
	}
	tw.Flush()
}
