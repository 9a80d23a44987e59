package main

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/sbench/sbench/results"
	"github.com/sbench/sbench/store"
)

// addSubcommands adds children to parent with what the root gives its own
// commands: the exit statuses in the help, usage errors for bad arguments.
func addSubcommands(parent *cobra.Command, children ...*cobra.Command) {
	for _, c := range children {
		c.Long = strings.TrimSpace(c.Long) + "\n" + exitStatuses
		c.Args = wrapArgs(c.Args)
		parent.AddCommand(c)
	}
}

func newBaselineCmd(e *env) *cobra.Command {
	c := &cobra.Command{
		Use:   "baseline set|list|rm",
		Short: "Name a set of runs as a reference to compare with",
		Long: `A baseline is a named reference point: the runs of an acceptance test, or of
the last campaign before an upgrade. "sbench compare baseline:NAME …" and
"sbench report --baseline NAME" compare with it.

A baseline records the runs its selection found when it was set, not the
selection: runs ingested later never join it. Runs a baseline holds are
never pruned.`,
		Example: `  sbench baseline set pre-upgrade campaign:acceptance@2024-06-01
  sbench baseline list
  sbench compare baseline:pre-upgrade campaign:acceptance@2024-07-15`,
		Args: cobra.NoArgs,
	}
	c.RunE = needSubcommand
	addSubcommands(c, newBaselineSetCmd(e), newBaselineListCmd(e), newBaselineRmCmd(e))
	return c
}

// needSubcommand is the RunE of a command that only groups others: called
// bare, it is a usage error (and with an unknown subcommand, its NoArgs
// says so), rather than help text and exit status 0 that a script would
// take for success.
func needSubcommand(c *cobra.Command, args []string) error {
	var names []string
	for _, s := range c.Commands() {
		names = append(names, s.Name())
	}
	return usagef("%s: want a subcommand: %s (see %s --help)", c.CommandPath(), strings.Join(names, ", "), c.CommandPath())
}

// baselineSetOptions are baseline set's flags.
type baselineSetOptions struct {
	note string
}

func newBaselineSetCmd(e *env) *cobra.Command {
	var o baselineSetOptions
	c := &cobra.Command{
		Use:   "set NAME SELECTION",
		Short: "Record the runs SELECTION finds as baseline NAME",
		Long: `Set records the ok runs SELECTION finds (a selector as sbench compare takes
them: KEY=VALUE[,…], run:ID[,…], campaign:NAME[@DATE] or baseline:NAME) under
NAME, replacing a baseline of that name. Failed and invalid runs are left
out.`,
		Example: `  sbench baseline set pre-upgrade fabric=ib,stage=acceptance
  sbench baseline set --note "before OFED 24.04" ofed-23 run:1-40`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runBaselineSet(cmd.Context(), e, o, args)
		},
	}
	c.Flags().StringVar(&o.note, "note", "", "what the baseline is (shown by list)")
	return c
}

// runBaselineSet records the ok runs of selector args[1] as baseline args[0].
func runBaselineSet(ctx context.Context, e *env, o baselineSetOptions, args []string) error {
	name := args[0]
	if err := store.CheckBaselineName(name); err != nil {
		return usagef("baseline set: %v", err)
	}
	sels, err := parseSelectors("baseline set", args[1:])
	if err != nil {
		return err
	}
	db, err := openDB(e)
	if err != nil {
		return err
	}
	defer db.Close()
	f, err := sels[0].Filter(ctx, db)
	if err != nil {
		return dataError(fmt.Errorf("baseline set: %w", err))
	}
	runs, err := db.Runs(ctx, f)
	if err != nil {
		return err
	}
	var ids []int64
	left := 0
	for _, r := range runs {
		if r.Status == results.StatusOK {
			ids = append(ids, r.ID)
		} else {
			left++
		}
	}
	if len(ids) == 0 {
		return usagef("baseline set: %s finds no ok run in %s (%d run(s) not ok)", sels[0], e.db, left)
	}
	replaced, err := db.SetBaseline(ctx, store.Baseline{Name: name, Selection: sels[0].String(), Note: o.note, RunIDs: ids})
	if err != nil {
		return err
	}
	verb := "set"
	if replaced {
		verb = "replaced"
	}
	fmt.Fprintf(e.stdout, "baseline %s %s: %d run(s) (run:%s) from %s\n", name, verb, len(ids), store.FormatRunIDs(ids), sels[0])
	if left > 0 {
		fmt.Fprintf(e.stderr, "baseline %s: %d run(s) left out: not ok\n", name, left)
	}
	return nil
}

// baselineListOptions are baseline list's flags.
type baselineListOptions struct {
	json bool
}

func newBaselineListCmd(e *env) *cobra.Command {
	var o baselineListOptions
	c := &cobra.Command{
		Use:     "list [--json]",
		Short:   "List the baselines",
		Long:    `List prints every baseline: name, when it was set, its runs, the selection it was set from and its note.`,
		Example: `  sbench baseline list --json`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runBaselineList(cmd.Context(), e, o)
		},
	}
	c.Flags().BoolVar(&o.json, "json", false, "print JSON instead of a table")
	return c
}

// runBaselineList prints the baselines.
func runBaselineList(ctx context.Context, e *env, o baselineListOptions) error {
	db, err := openDBRead(e)
	if err != nil {
		return err
	}
	defer db.Close()
	bls, err := db.Baselines(ctx)
	if err != nil {
		return err
	}
	if o.json {
		type row struct {
			Name      string  `json:"name"`
			Created   string  `json:"created"`
			Selection string  `json:"selection"`
			Note      string  `json:"note,omitempty"`
			Runs      []int64 `json:"runs"`
		}
		out := make([]row, len(bls))
		for i, b := range bls {
			out[i] = row{b.Name, b.Created.UTC().Format(time.RFC3339), b.Selection, b.Note, b.RunIDs}
		}
		return writeJSON(e, out)
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSET\tRUNS\tSELECTION\tNOTE")
	for _, b := range bls {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", b.Name, b.Created.Local().Format("2006-01-02 15:04"),
			"run:"+store.FormatRunIDs(b.RunIDs), dash(b.Selection), b.Note)
	}
	return tw.Flush()
}

func newBaselineRmCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:     "rm NAME",
		Short:   "Forget a baseline (its runs stay)",
		Long:    `Rm forgets a baseline. Its runs stay in the archive, and prune may then delete them.`,
		Example: `  sbench baseline rm ofed-23`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runBaselineRm(cmd.Context(), e, args)
		},
	}
}

// runBaselineRm forgets baseline args[0].
func runBaselineRm(ctx context.Context, e *env, args []string) error {
	db, err := openDB(e)
	if err != nil {
		return err
	}
	defer db.Close()
	if err := db.DeleteBaseline(ctx, args[0]); err != nil {
		return dataError(err)
	}
	fmt.Fprintf(e.stdout, "baseline %s removed\n", args[0])
	return nil
}
