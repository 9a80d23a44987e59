package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sbench/sbench/ingest"
	"github.com/sbench/sbench/parsers"
	"github.com/sbench/sbench/store"
)

// ingestPipeline is the ingest.Options of an ingest sbench runs: it reports
// on stderr, with a bar on a terminal. It lifts the heap limit for
// ingest's batches (freeHeap).
func ingestPipeline(e *env, format string) ingest.Options {
	freeHeap()
	return ingest.Options{Format: format, Log: e.stderr, NewBar: func(n int) ingest.Bar { return newProgressBar(e, "ingest", n, n > 3) }}
}

// ingestOptions are ingest's flags.
type ingestOptions struct {
	format, system string
	labels         []string
	json           bool
	// reparse reads archived runs again (cmd_reparse.go); campaign gives
	// it the definitions to read them with.
	reparse  bool
	campaign string
}

func newIngestCmd(e *env) *cobra.Command {
	var o ingestOptions
	c := &cobra.Command{
		Use:   "ingest [--format auto|FORMAT] [--label KEY=VALUE]... [--system NAME] [--json] PATH...|-\n  sbench ingest --reparse [--campaign FILE] [SELECTOR]",
		Short: "Load result bundles and tools' outputs into the archive",
		Long: `Ingest loads runs into the archive: sbench-runner's result bundles, and the
text output of OSU Micro-Benchmarks, NetPIPE, HPL, HPCC, IMB, perftest,
iperf3 (--json), perf_main and sockperf — from today's jobs or from years-old
logs, even pasted from an article.

--format auto (the default) recognises each input by its content. A file
holding several runs between "++++++ NAME: START" / "------ NAME: END"
markers (a job script running several benchmarks) gives one run per
section, labelled section=NAME. A directory is searched for every file in
it; files that are not benchmark output are skipped, and the files sbench
itself writes beside the results (scripts/, batch scripts, work
directories, rendezvous files) are never read as tool output. A file named
on the command line must be a regular file: to read a pipe, use - .

--label and --system tell configurations apart when the files do not
(fabric=ib, mpi=mvapich2 …); they appear in reports and filters. --system
names the cluster the runs came from (every command filters by it with
--system, and "sbench runs --group-by system" counts per cluster); the
runner's own bundles carry it already, from Slurm's cluster name.

Each file is stored whole or not at all: a file with a malformed table is
refused with its line number and nothing from it is stored. Content already
in the archive is not added again (and ingest says so). A progress bar
shows on a terminal when more than three files are given.

With --json the summary is one JSON object on standard output: the archive,
counts, the ids of the runs added ("run_ids", compressed as in run:1-4,9),
and each file's added and already-archived run ids or its error.` + reparseLong,
		Example: `  sbench ingest sbench-runs/quickstart
  sbench ingest --label fabric=ib --label mpi=mvapich2 osu_bw.txt osu_latency.txt
  sbench ingest --system cluster-a --format hpl HPL.out
  srun ./osu_latency | sbench ingest --label fabric=roce -
  sbench ingest --json results/ | jq -r .run_ids
  sbench ingest --reparse campaign:lammps
  sbench ingest --reparse --campaign lammps.toml`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.reparse {
				return runReparse(cmd.Context(), e, o, args)
			}
			if o.campaign != "" {
				return usagef("ingest: --campaign is for --reparse")
			}
			if len(args) == 0 {
				return usagef("ingest: no PATH given (or --reparse)")
			}
			return runIngest(cmd.Context(), e, o, args)
		},
	}
	c.Flags().StringVar(&o.format, "format", "auto", "input format: auto, or one of "+strings.Join(parsers.Names(), ", "))
	c.Flags().StringArrayVar(&o.labels, "label", nil, "label every run KEY=VALUE (repeatable)")
	c.Flags().StringVar(&o.system, "system", "", "name of the system (cluster) the runs come from: their system, and label system=NAME")
	c.Flags().BoolVar(&o.json, "json", false, "print the summary as JSON")
	c.Flags().BoolVar(&o.reparse, "reparse", false, "read archived runs (SELECTOR, default all) again: their user-defined metrics and sanity patterns, from their raw output")
	c.Flags().StringVar(&o.campaign, "campaign", "", "with --reparse: read with this campaign `FILE`'s current definitions instead of those the runs recorded")
	return c
}

func runIngest(ctx context.Context, e *env, o ingestOptions, args []string) error {
	if o.format != "auto" {
		if _, ok := parsers.Lookup(o.format); !ok {
			return usagef("ingest: --format %q: want auto or one of %s", o.format, strings.Join(parsers.Names(), ", "))
		}
	}
	labels, err := parseLabels("--label", o.labels)
	if err != nil {
		return err
	}
	if o.system != "" {
		if labels == nil {
			labels = map[string]string{}
		}
		labels["system"] = o.system
	}
	ins, err := ingest.Expand(ctx, e.stdin, args)
	if err != nil {
		return err
	}
	if len(ins) == 0 {
		return usagef("ingest: no files found in %s", strings.Join(args, " "))
	}
	db, err := openDB(e)
	if err != nil {
		return err
	}
	defer db.Close()
	po := ingestPipeline(e, o.format)
	po.Labels = labels
	sum, err := ingest.Files(ctx, db, ins, po)
	if o.json {
		if jerr := writeIngestJSON(e, sum); jerr != nil && err == nil {
			err = jerr
		}
	} else {
		fmt.Fprintf(e.stdout, "%d run(s) added, %d already archived, from %d file(s) into %s\n", sum.Added, sum.Skipped, sum.Files, e.db)
	}
	if sum.Ignored > 0 {
		fmt.Fprintf(e.stderr, "%d file(s) skipped: not benchmark output\n", sum.Ignored)
	}
	return err
}

// writeIngestJSON prints ingest's summary as JSON.
func writeIngestJSON(e *env, sum ingest.Summary) error {
	var ids []int64
	files := nonNil(sum.PerFile)
	for i := range files {
		ids = append(ids, files[i].Added...)
		files[i].Added, files[i].Already = nonNil(files[i].Added), nonNil(files[i].Already)
	}
	return writeJSON(e, struct {
		Archive         string              `json:"archive"`
		Files           int                 `json:"files"`
		Added           int                 `json:"added"`
		AlreadyArchived int                 `json:"already_archived"`
		NotOutput       int                 `json:"skipped_not_output"`
		Failed          int                 `json:"failed"`
		RunIDs          string              `json:"run_ids"`
		PerFile         []ingest.FileReport `json:"per_file"`
	}{e.db, sum.Files, sum.Added, sum.Skipped, sum.Ignored, sum.Failed, store.FormatRunIDs(ids), files})
}
