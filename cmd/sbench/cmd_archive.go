package main

import (
	"bufio"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sbench/sbench/ingest"
	"github.com/sbench/sbench/results"
	"github.com/sbench/sbench/store"
)

func newArchiveCmd(e *env) *cobra.Command {
	c := &cobra.Command{
		Use:   "archive export|import",
		Short: "Move runs between archives as bundles",
		Long: `Archive moves runs between archives — another site, a laptop, a support
ticket — with nothing lost: "export" writes the selected runs' result bundles
exactly as ingested, each with the file it came from and when; "import"
stores them in another archive. Content already there is skipped (same
content hash), so importing the same file twice adds nothing.

The file is JSON lines (` + store.ArchiveSchema + `): a header, then one run
per line; gzipped when its name ends in .gz. A baseline travels with its runs:
an export that carries every run of a baseline carries the baseline too
(` + store.ArchiveSchemaBaselines + `), naming its runs by content hash, and the
import sets it. So do the acceptance references recorded for the exported
runs' campaigns (` + store.ArchiveSchemaExpectations + `): sbench check campaign:NAME
judges the same expectations in the other archive. Both read and write one
run at a time, so moving years of runs costs no more memory than moving one.`,
		Example: `  sbench archive export --campaign acceptance -o acceptance.sbench.gz
  sbench archive import --db site-b.db acceptance.sbench.gz
  sbench archive export --label fabric=ib | ssh other sbench archive import -`,
		Args: cobra.NoArgs,
	}
	c.RunE = needSubcommand
	addSubcommands(c, newArchiveExportCmd(e), newArchiveImportCmd(e))
	return c
}

// archiveExportOptions are archive export's flags.
type archiveExportOptions struct {
	filter filterFlags
	out    string
	json   bool
}

func newArchiveExportCmd(e *env) *cobra.Command {
	var o archiveExportOptions
	c := &cobra.Command{
		Use:   "export [filters] [-o FILE|-] [--json]",
		Short: "Write the selected runs as an archive file",
		Long: `Export writes the runs the filters select (all runs with none) to FILE, or
to standard output with "-" or no -o. A FILE ending in .gz is gzipped. The
file is written as it is made, to a temporary name that becomes FILE once
complete; the output is the same bytes for the same runs. Every baseline all
of whose runs are exported goes with them; those that would lose runs are
left out, and said so on standard error. The expectations recorded for the
exported runs' campaigns (by sbench submit or local: the campaign's own and
each site profile's, what sbench check campaign:NAME judges) go with them
too, each set with the time it was recorded. With --json (and -o FILE) the
summary is JSON on standard output: {"file": FILE, "runs": N,
"baselines": [names], "baselines_left_out": [why], "expectations": [sets]},
a set named by its campaign, and site profile: "acc (site hpc1)".`,
		Example: `  sbench archive export --campaign acceptance -o acceptance.sbench.gz
  sbench archive export --run 12,14 > two-runs.sbench
  sbench archive export --label fabric=ib -o ib.sbench.gz --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runArchiveExport(cmd.Context(), e, o)
		},
	}
	o.filter.add(c)
	c.Flags().StringVarP(&o.out, "output", "o", "", "file to write (.gz to compress); - or none for standard output")
	c.Flags().BoolVar(&o.json, "json", false, "print the summary as JSON (needs -o FILE)")
	return c
}

// runArchiveExport writes the selected runs, and the baselines that go
// with them, as an archive file.
func runArchiveExport(ctx context.Context, e *env, o archiveExportOptions) error {
	if o.json && (o.out == "" || o.out == "-") {
		return usagef("archive export: --json prints the summary on standard output: give -o FILE for the archive")
	}
	db, flt, err := openFiltered(e, o.filter)
	if err != nil {
		return err
	}
	defer db.Close()
	if err := requireRuns(ctx, db, "archive export", flt); err != nil {
		return err
	}
	w := e.stdout
	var file *results.AtomicFile
	if o.out != "" && o.out != "-" {
		if file, err = results.CreateAtomic(o.out, 0o644); err != nil {
			return err
		}
		defer file.Abort()
		w = file
	}
	var zw *gzip.Writer
	if strings.HasSuffix(o.out, ".gz") {
		zw = gzip.NewWriter(w)
		w = zw
	}
	res, err := db.ExportArchive(ctx, w, flt)
	if err != nil {
		return err
	}
	if zw != nil {
		if err := zw.Close(); err != nil {
			return err
		}
	}
	if file != nil {
		if err := file.Commit(); err != nil {
			return err
		}
	}
	for _, l := range res.Left {
		fmt.Fprintf(e.stderr, "sbench: archive export: %s: left out\n", l)
	}
	if o.json {
		return writeJSON(e, struct {
			File         string   `json:"file"`
			Runs         int      `json:"runs"`
			Baselines    []string `json:"baselines"`
			Left         []string `json:"baselines_left_out,omitempty"`
			Expectations []string `json:"expectations"`
		}{o.out, res.Runs, nonNil(res.Baselines), res.Left, nonNil(res.Expectations)})
	}
	parts := []string{fmt.Sprintf("%d run(s)", res.Runs)}
	if len(res.Baselines) > 0 {
		parts = append(parts, fmt.Sprintf("%d baseline(s) (%s)", len(res.Baselines), strings.Join(res.Baselines, ", ")))
	}
	if len(res.Expectations) > 0 {
		parts = append(parts, fmt.Sprintf("%d expectation set(s) (%s)", len(res.Expectations), strings.Join(res.Expectations, ", ")))
	}
	last := len(parts) - 1
	msg := parts[last]
	if last > 0 {
		msg = strings.Join(parts[:last], ", ") + " and " + msg
	}
	fmt.Fprintln(e.stderr, "exported "+msg)
	return nil
}

// archiveImportOptions are archive import's flags.
type archiveImportOptions struct {
	json bool
}

func newArchiveImportCmd(e *env) *cobra.Command {
	var o archiveImportOptions
	c := &cobra.Command{
		Use:   "import [--json] FILE...|-",
		Short: "Store the runs of archive files in this archive",
		Long: `Import stores the runs of archive files written by "sbench archive export"
(plain or gzipped; "-" reads standard input). Each file is imported whole or
not at all; runs already in the archive are skipped. With --json the summary
is one JSON object: {"archive", "files": [{"source", "added",
"already_archived", "baselines", "baselines_known", "expectations",
"expectations_known", "expectations_kept", "error"}], "run_ids"}.
Each file is decoded and stored as it is read (a bar shows the runs stored on
a terminal); a file bad anywhere, even at its end, stores nothing. A
baseline the file carries is set, unless this archive has one of that name:
with the same runs it is left as it is, with other runs the file is refused.
An expectation set the file carries (a campaign's own, or a site profile's)
is recorded unless this archive's set of the same campaign and site was
recorded at the same time (already here) or later (kept): the newer
recording wins, whichever archive holds it.`,
		Example: `  sbench archive import --db site-b.db acceptance.sbench.gz
  sbench archive export --db a.db | sbench archive import --db b.db -
  sbench archive import --json a.sbench.gz | jq -r .run_ids`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runArchiveImport(cmd.Context(), e, o, args)
		},
	}
	c.Flags().BoolVar(&o.json, "json", false, "print the summary as JSON")
	return c
}

// runArchiveImport stores the runs of the archive files args, each file
// whole or not at all.
func runArchiveImport(ctx context.Context, e *env, o archiveImportOptions, args []string) error {
	db, err := openDB(e)
	if err != nil {
		return err
	}
	defer db.Close()
	failed := 0
	var files []ingest.FileReport
	var ids []int64
	for _, name := range args {
		var r io.Reader
		if name == "-" {
			r = e.stdin
		} else {
			fh, err := os.Open(name)
			if err != nil {
				return usageError{err}
			}
			defer fh.Close()
			r = bufio.NewReader(fh)
		}
		bar := newProgressBar(e, "import "+name, 0, true)
		res, err := db.ImportArchive(ctx, r, name, store.ImportOptions{Progress: func(done, total int) {
			bar.ChangeMax(total)
			bar.Set(done)
		}})
		bar.Finish()
		if err != nil && ctx.Err() != nil {
			// Interrupted: nothing of this file was stored,
			// and the files after it are not read.
			return ctx.Err()
		}
		if err != nil {
			fmt.Fprintf(e.stderr, "sbench: %v\n", err)
			failed++
			files = append(files, ingest.FileReport{Source: name, Added: []int64{}, Already: []int64{}, Error: err.Error()})
			continue
		}
		files = append(files, ingest.FileReport{Source: name, Added: nonNil(res.Added), Already: nonNil(res.Skipped),
			Baselines: nonNil(res.Baselines), BaselinesKnown: nonNil(res.Known),
			Expectations: res.Expectations, ExpectationsKnown: res.ExpectationsKnown, ExpectationsKept: res.ExpectationsKept})
		ids = append(ids, res.Added...)
		if !o.json {
			msg := fmt.Sprintf("%s: %d run(s) added, %d already archived", name, len(res.Added), len(res.Skipped))
			if len(res.Baselines)+len(res.Known) > 0 {
				msg += fmt.Sprintf("; baselines set: %s, already here: %s", orNone(res.Baselines), orNone(res.Known))
			}
			if len(res.Expectations)+len(res.ExpectationsKnown)+len(res.ExpectationsKept) > 0 {
				msg += fmt.Sprintf("; expectation sets recorded: %s, already here: %s, kept as recorded here later: %s",
					countNamed(res.Expectations), countNamed(res.ExpectationsKnown), countNamed(res.ExpectationsKept))
			}
			fmt.Fprintln(e.stdout, msg)
		}
	}
	if o.json {
		if err := writeJSON(e, struct {
			Archive string              `json:"archive"`
			Files   []ingest.FileReport `json:"files"`
			RunIDs  string              `json:"run_ids"`
		}{e.db, files, store.FormatRunIDs(ids)}); err != nil {
			return err
		}
	}
	if failed > 0 {
		return exitError{code: exitUsage, msg: fmt.Sprintf("archive import: %d of %d file(s) failed, nothing from them was stored", failed, len(args))}
	}
	return nil
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

// countNamed is how many s holds, and which: "0", "2 (a, b)".
func countNamed(s []string) string {
	if len(s) == 0 {
		return "0"
	}
	return fmt.Sprintf("%d (%s)", len(s), strings.Join(s, ", "))
}

// nonNil is s, or an empty list for JSON's [] rather than null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
