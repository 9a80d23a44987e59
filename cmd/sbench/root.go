package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

// env is what every command gets from its caller, so that tests can run the
// CLI in-process with their own streams and environment.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
	db             string // --db
}

const exitStatuses = `
Exit status: 0 success; 1 the gate tripped (a regression, jobs or steps that
did not complete, nodes or links screen flagged, an expectation check failed); 2 bad usage, unreadable input or a selection with no runs;
3 the command could not do its job (the archive, Slurm, a file to write); 130
interrupted (SIGINT/SIGTERM). The reason is printed on stderr.`

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	e := &env{stdin: stdin, stdout: stdout, stderr: stderr, getenv: os.Getenv}
	root := newRootCmd(e)
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	_, err := root.ExecuteContextC(ctx)
	if ctx.Err() != nil {
		// Whatever the command returned, a signal cut it short.
		return interruptedError{cause: context.Cause(ctx), err: err}
	}
	if err != nil && strings.HasPrefix(err.Error(), "unknown command") {
		return usageError{err}
	}
	return err
}

func newRootCmd(e *env) *cobra.Command {
	root := &cobra.Command{
		Use:   "sbench",
		Short: "Benchmark campaigns on Slurm, archived in SQLite, reported as PDF",
		Long: `sbench runs HPC benchmark campaigns on Slurm clusters, keeps every result in
a SQLite archive, and turns the archive into comparison plots and PDF reports.

A campaign (TOML) describes benchmarks and sweeps. "sbench render" writes the
sbatch scripts, "sbench submit" sends them to Slurm, "sbench status --wait
--ingest" follows the jobs and loads their results, "sbench report" writes the
PDF. "sbench local" runs a campaign on this machine with no Slurm at all.

The archive is $SBENCH_DB, else ./sbench.db; every command takes --db FILE.`,
		Example: `  sbench local examples/quickstart.toml && sbench report -o report.pdf
  sbench submit examples/quickstart.toml && sbench status --wait --ingest
  sbench export --format csv | head`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       version,
	}
	root.SetFlagErrorFunc(seeHelp)
	defaultDB := cmp.Or(os.Getenv("SBENCH_DB"), "sbench.db")
	root.PersistentFlags().StringVar(&e.db, "db", defaultDB, "SQLite archive (default $SBENCH_DB, else ./sbench.db)")
	// The usage says the default: pflag would add its own, the value of
	// $SBENCH_DB of whoever asks, as a second one.
	root.PersistentFlags().Lookup("db").DefValue = ""
	addSubcommands(root,
		newValidateCmd(e),
		newRenderCmd(e),
		newSubmitCmd(e),
		newStatusCmd(e),
		newLocalCmd(e),
		newIngestCmd(e),
		newRunsCmd(e),
		newExportCmd(e),
		newReportCmd(e),
		newHPLCmd(e),
		newCompareCmd(e),
		newBaselineCmd(e),
		newHistoryCmd(e),
		newCheckCmd(e),
		newSiteCmd(e),
		newScreenCmd(e),
		newArchiveCmd(e),
		newPruneCmd(e),
		newVersionCmd(e),
		newCompletionCmd(e),
		newGenDocsCmd(e),
	)
	completeFilterFlags(root)
	return root
}

// wrapArgs turns cobra's argument errors into usage errors (exit status 2).
func wrapArgs(check cobra.PositionalArgs) cobra.PositionalArgs {
	if check == nil {
		return nil
	}
	return func(c *cobra.Command, args []string) error {
		if err := check(c, args); err != nil {
			return seeHelp(c, err)
		}
		return nil
	}
}

// seeHelp is a usage error of command c, pointing to its help.
func seeHelp(c *cobra.Command, err error) error {
	return usageError{fmt.Errorf("%s: %w (see %s --help)", c.CommandPath(), err, c.CommandPath())}
}

func newVersionCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:     "version",
		Short:   "Print sbench's version",
		Long:    "Print sbench's version.",
		Example: "  sbench version",
		Args:    cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			fmt.Fprintln(e.stdout, "sbench", version)
			return nil
		},
	}
}
