package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	_ "github.com/sbench/sbench/hpl" // registers the hpl and hpcc formats
	"github.com/sbench/sbench/parsers"
	"github.com/sbench/sbench/results"
	"github.com/sbench/sbench/store"
	"github.com/schollz/progressbar/v3"
)

// maxInput caps one input file: benchmark outputs are kilobytes, a job log
// a few megabytes; anything far larger is not what the user meant.
const maxInput = 256 << 20

// ingestInput is one file (or stdin) to load.
type ingestInput struct {
	name string
	// found is set for files met while walking a directory: those that are
	// not benchmark output are skipped, not errors.
	found bool
	open  func() (io.ReadCloser, error)
}

func fileInput(path string, found bool) ingestInput {
	return ingestInput{name: path, found: found, open: func() (io.ReadCloser, error) { return openRegular(path) }}
}

// openRegular opens a file to ingest, and refuses anything else. Opening a
// named pipe blocks until something writes to it, which may be never, and
// no signal ends the wait; O_NONBLOCK makes that open return at once (for a
// regular file it changes nothing), and the check on what was opened, not
// on a Stat before, holds even if the path changed in between.
func openRegular(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if err := checkRegular(path, st.Mode()); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// checkRegular refuses what is not a regular file, naming what it is.
func checkRegular(path string, m fs.FileMode) error {
	var what string
	switch {
	case m.IsRegular():
		return nil
	case m&fs.ModeNamedPipe != 0:
		what = "a named pipe"
	case m&fs.ModeSocket != 0:
		what = "a socket"
	case m&fs.ModeCharDevice != 0:
		what = "a character device"
	case m&fs.ModeDevice != 0:
		what = "a block device"
	case m.IsDir():
		what = "a directory"
	default:
		what = "not a regular file (" + m.Type().String() + ")"
	}
	return usagef("%s is %s, not a file: use - to read from standard input", path, what)
}

// expandInputs turns the command line into inputs: directories are walked
// (hidden entries skipped), "-" is stdin. A file named on the command line
// must be a regular file; what a walk finds that is not is skipped.
func expandInputs(ctx context.Context, e *env, args []string) ([]ingestInput, error) {
	var ins []ingestInput
	for _, a := range args {
		if a == "-" {
			ins = append(ins, ingestInput{name: "stdin", open: func() (io.ReadCloser, error) { return io.NopCloser(e.stdin), nil }})
			continue
		}
		st, err := os.Stat(a)
		if err != nil {
			return nil, usageError{err}
		}
		if !st.IsDir() {
			if err := checkRegular(a, st.Mode()); err != nil {
				return nil, err
			}
			ins = append(ins, fileInput(a, false))
			continue
		}
		var found []string
		err = filepath.WalkDir(a, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if err := ctx.Err(); err != nil {
				return err // a walk of a large tree on a slow file system
			}
			if p != a && d.IsDir() && sbenchDir(p) {
				return filepath.SkipDir
			}
			hidden := p != a && strings.HasPrefix(d.Name(), ".")
			switch {
			case d.IsDir() && hidden:
				return filepath.SkipDir // rendezvous files and temporaries
			case d.Type().IsRegular() && !hidden:
				found = append(found, p)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		slices.SortFunc(found, results.NaturalCompare)
		for _, p := range found {
			ins = append(ins, fileInput(p, true))
		}
	}
	return ins, nil
}

// scriptsStamp names the folder "sbench submit" renders a submission's
// scripts into: RESULTS/scripts/STAMP/.
const scriptsStamp = "20060102T150405.000"

// sbenchDir reports whether a directory met in a walk holds only files
// sbench wrote, none of them a run: a submission's scripts
// (RESULTS/scripts/STAMP), or the exec kernels' work directories
// (RESULTS/work/SESSION, beside the runner's RESULTS/.rendezvous), where
// the tool wrote the output its bundle already holds, and the runner the
// tool's input files. Parsing them would fail (a script's comments name
// tools) or store a run twice.
func sbenchDir(path string) bool {
	parent := filepath.Dir(path)
	switch filepath.Base(path) {
	case "work":
		st, err := os.Stat(filepath.Join(parent, ".rendezvous"))
		return err == nil && st.IsDir()
	default:
		_, err := time.Parse(scriptsStamp, filepath.Base(path))
		return err == nil && filepath.Base(parent) == "scripts"
	}
}

// skipped is a file met in a directory walk that is not ingested. Files
// sbench wrote (own) are skipped silently: they are expected there. Others
// are counted as "not benchmark output".
type skipped struct {
	name, why string
	own       bool
}

func (s skipped) Error() string { return s.name + ": " + s.why }

// ingestOptions are what the user says about the inputs.
type ingestOptions struct {
	format string
	labels map[string]string
	// amend, if set, is applied to every bundle before it is archived.
	amend func(*results.Bundle)
}

// ingestSummary counts what an ingest did.
type ingestSummary struct {
	files, added, skipped, ignored int
	own                            int // files sbench wrote, skipped silently
	failed                         int
	// perFile is what became of each input that was benchmark output, in
	// input order: for ingest --json.
	perFile []ingestedFile
}

// ingestedFile is what became of one input.
type ingestedFile struct {
	Source  string  `json:"source"`
	Added   []int64 `json:"added"`
	Already []int64 `json:"already_archived"`
	// Baselines and BaselinesKnown are archive import's: the baselines a
	// file carried that were set, and those already here.
	Baselines      []string `json:"baselines,omitempty"`
	BaselinesKnown []string `json:"baselines_known,omitempty"`
	Error          string   `json:"error,omitempty"`
}

// batchFiles is how many files share one SQLite transaction, each file in a
// savepoint of its own so that it is still stored whole or not at all. A
// commit per file costs about 20 page writes; batching makes ingesting a
// directory of thousands of logs about 2× faster. A crash loses at most the
// uncommitted batch, never part of a file.
var batchFiles = 500

// batchBytes bounds a batch by what its bundles weigh too: 500 matrix runs
// of a large fleet, each with its hosts and thousands of samples, must not
// be held at once.
const batchBytes = 8 << 20

// parsed is one input, read, parsed and encoded for the store.
type parsed struct {
	in   ingestInput
	file store.File
	err  error
}

// parseAhead reads, parses and encodes (store.File.Prepare: hashes, JSON)
// the inputs ahead of the store, on one goroutine per core, and hands them
// on in input order: the run ids ingest gives follow the files' order
// whatever finishes first. On two cores the parsers' work and SQLite's
// overlap, and the store's goroutine only inserts.
func parseAhead(ctx context.Context, ins []ingestInput, o ingestOptions) <-chan parsed {
	type job struct {
		in  ingestInput
		res chan parsed
	}
	const ahead = 16
	out := make(chan parsed, ahead)
	futures := make(chan chan parsed, ahead)
	work := make(chan job, ahead)
	go func() {
		defer close(futures)
		defer close(work)
		for _, in := range ins {
			res := make(chan parsed, 1)
			select {
			case futures <- res:
			case <-ctx.Done():
				return
			}
			select {
			case work <- job{in, res}:
			case <-ctx.Done():
				return
			}
		}
	}()
	for range max(1, runtime.GOMAXPROCS(0)) {
		go func() {
			for j := range work {
				p := parsed{in: j.in}
				p.file.Source = j.in.name
				if p.file.Bundles, p.err = readInput(ctx, j.in, o); p.err == nil {
					p.file.Prepare()
				}
				j.res <- p
			}
		}()
	}
	go func() {
		defer close(out)
		for res := range futures {
			select {
			case p := <-res:
				select {
				case out <- p:
				case <-ctx.Done():
					return
				}
			case <-ctx.Done():
				return
			}
		}
	}()
	return out
}

// ingestFiles reads, parses and stores each input. A bad file is reported
// and stored not at all; the others still load. The returned error says
// how many failed.
//
// Three stages overlap: parseAhead reads and parses on every core, this
// goroutine gathers what it hands on into batches, and a store goroutine
// inserts one batch while the next is gathered. With the batch stored
// here, in line, the parsers stopped a few files into every batch's
// inserts and the store then waited for the next batch to be parsed: the
// two took turns instead of overlapping (BenchmarkIngest).
func ingestFiles(ctx context.Context, e *env, db *store.DB, ins []ingestInput, o ingestOptions) (ingestSummary, error) {
	freeHeap()
	var sum ingestSummary // the store goroutine's until it has finished
	bar := newProgressBar(e, "ingest", len(ins), len(ins) > 3)
	defer bar.Finish()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // stops parseAhead and the store when we return early
	batches := make(chan []parsed, 1)
	stored := make(chan error, 1)
	go func() {
		var err error
		for batch := range batches {
			if err == nil {
				if err = storeBatch(ctx, e, db, batch, o.format == "auto", &sum, bar); err != nil {
					cancel() // gathering more is in vain
				}
			}
		}
		stored <- err
	}()
	var batch []parsed
	files, size := 0, 0
	parsedInputs := parseAhead(ctx, ins, o)
gather:
	for {
		// Not a bare range: reading an input (a standard input that never
		// ends) does not watch ctx, so the wait for it must.
		select {
		case p, more := <-parsedInputs:
			if !more {
				break gather
			}
			bar.Add(1)
			batch = append(batch, p)
			if p.err != nil {
				continue
			}
			if files, size = files+1, size+p.file.Size(); files < batchFiles && size < batchBytes {
				continue
			}
		case <-ctx.Done():
			break gather
		}
		select {
		case batches <- batch:
			batch, files, size = nil, 0, 0
		case <-ctx.Done():
			break gather
		}
	}
	if ctx.Err() == nil && len(batch) > 0 {
		batches <- batch // the store goroutine drains batches to the end: this send returns
	}
	close(batches)
	if err := <-stored; err != nil {
		return sum, err
	}
	if err := ctx.Err(); err != nil {
		return sum, err
	}
	if sum.failed > 0 {
		return sum, exitError{code: exitUsage, msg: fmt.Sprintf("ingest: %d of %d file(s) failed, nothing from them was stored", sum.failed, len(ins)-sum.ignored-sum.own)}
	}
	return sum, nil
}

// storeBatch stores a batch's parsed files in one transaction and accounts
// for every input of it, in input order, those that failed to parse too.
func storeBatch(ctx context.Context, e *env, db *store.DB, batch []parsed, auto bool, sum *ingestSummary, bar *progressbar.ProgressBar) error {
	var files []store.File
	for _, p := range batch {
		if p.err == nil {
			files = append(files, p.file)
		}
	}
	var res []store.FileResult
	if len(files) > 0 {
		var err error
		if res, err = db.IngestFiles(ctx, files); err != nil {
			return err
		}
	}
	fail := func(source string, err error) {
		bar.Clear()
		fmt.Fprintf(e.stderr, "sbench: %v\n", err)
		sum.failed++
		sum.perFile = append(sum.perFile, ingestedFile{Source: source, Error: err.Error()})
	}
	for _, p := range batch {
		var skip skipped
		switch {
		case errors.As(p.err, &skip) && skip.own:
			sum.own++
			continue
		case errors.As(p.err, &skip):
			sum.ignored++
			continue
		case p.err != nil && p.in.found && auto && notBenchmarkOutput(p.err):
			sum.ignored++ // a script or log met in a directory
			continue
		case p.err != nil:
			fail(p.in.name, p.err)
			continue
		}
		r := res[0]
		res = res[1:]
		if r.Err != nil {
			fail(r.Source, r.Err)
			continue
		}
		sum.perFile = append(sum.perFile, ingestedFile{Source: r.Source, Added: r.Added, Already: r.Skipped})
		sum.files++
		sum.added += len(r.Added)
		sum.skipped += len(r.Skipped)
		if len(r.Added) == 0 {
			bar.Clear()
			fmt.Fprintf(e.stderr, "%s: already in the archive (%d run(s)), nothing added\n", r.Source, len(r.Skipped))
		} else if len(r.Skipped) > 0 {
			bar.Clear()
			fmt.Fprintf(e.stderr, "%s: added %d run(s), %d already archived\n", r.Source, len(r.Added), len(r.Skipped))
		}
	}
	return nil
}

// notBenchmarkOutput reports an input no format recognised at all.
func notBenchmarkOutput(err error) bool {
	var se parsers.SyntaxErrors
	if !errors.As(err, &se) || len(se) != 1 {
		return false
	}
	msg := se[0].Msg
	return strings.HasPrefix(msg, "not output of any known tool") || msg == "empty input" || strings.HasPrefix(msg, "binary data")
}

// ctxReader stops a read of many chunks (a large file, a stream) between
// chunks once ctx is done; a single read blocked in the kernel is for the
// caller to stop waiting for.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// readInput parses one input into bundles and applies the user's labels.
func readInput(ctx context.Context, in ingestInput, o ingestOptions) ([]*results.Bundle, error) {
	r, err := in.open()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	data, err := io.ReadAll(io.LimitReader(ctxReader{ctx, r}, maxInput+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", in.name, err)
	}
	if len(data) > maxInput {
		return nil, fmt.Errorf("%s: larger than %d MiB; not a benchmark output", in.name, maxInput>>20)
	}
	if in.found {
		// Whatever --format says: a script's comments name tools ("# OSU
		// Micro-Benchmarks …"), and no tool writes a batch script or a
		// rendezvous file.
		if why, ok := parsers.SbenchWritten(in.name, data); ok {
			return nil, skipped{name: in.name, why: why, own: true}
		}
		switch filepath.Ext(in.name) {
		case ".sbatch":
			return nil, skipped{name: in.name, why: "a batch script"}
		case ".addr":
			return nil, skipped{name: in.name, why: "a rendezvous address file"}
		}
	}
	bundles, err := parsers.Parse(in.name, o.format, data)
	if err != nil {
		return nil, err
	}
	for _, b := range bundles {
		if len(o.labels) > 0 && b.Labels == nil {
			b.Labels = map[string]string{}
		}
		for k, v := range o.labels {
			b.Labels[k] = v
		}
		if o.amend != nil {
			o.amend(b)
		}
	}
	return bundles, nil
}

// ingestCmdOptions are ingest's flags.
type ingestCmdOptions struct {
	format, system string
	labels         []string
	json           bool
}

func newIngestCmd(e *env) *cobra.Command {
	var o ingestCmdOptions
	c := &cobra.Command{
		Use:   "ingest [--format auto|FORMAT] [--label KEY=VALUE]... [--system NAME] [--json] PATH...|-",
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
and each file's added and already-archived run ids or its error.`,
		Example: `  sbench ingest sbench-runs/quickstart
  sbench ingest --label fabric=ib --label mpi=mvapich2 osu_bw.txt osu_latency.txt
  sbench ingest --system cluster-a --format hpl HPL.out
  srun ./osu_latency | sbench ingest --label fabric=roce -
  sbench ingest --json results/ | jq -r .run_ids`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runIngest(cmd.Context(), o, e, args)
		},
	}
	c.Flags().StringVar(&o.format, "format", "auto", "input format: auto, or one of "+strings.Join(parsers.Names(), ", "))
	c.Flags().StringArrayVar(&o.labels, "label", nil, "label every run KEY=VALUE (repeatable)")
	c.Flags().StringVar(&o.system, "system", "", "name of the system (cluster) the runs come from: their system, and label system=NAME")
	c.Flags().BoolVar(&o.json, "json", false, "print the summary as JSON")
	return c
}

func runIngest(ctx context.Context, o ingestCmdOptions, e *env, args []string) error {
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
	ins, err := expandInputs(ctx, e, args)
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
	sum, err := ingestFiles(ctx, e, db, ins, ingestOptions{format: o.format, labels: labels})
	if o.json {
		if jerr := writeIngestJSON(e, sum); jerr != nil && err == nil {
			err = jerr
		}
	} else {
		fmt.Fprintf(e.stdout, "%d run(s) added, %d already archived, from %d file(s) into %s\n", sum.added, sum.skipped, sum.files, e.db)
	}
	if sum.ignored > 0 {
		fmt.Fprintf(e.stderr, "%d file(s) skipped: not benchmark output\n", sum.ignored)
	}
	return err
}

// writeIngestJSON prints ingest's summary as JSON.
func writeIngestJSON(e *env, sum ingestSummary) error {
	var ids []int64
	files := sum.perFile
	if files == nil {
		files = []ingestedFile{}
	}
	for i := range files {
		ids = append(ids, files[i].Added...)
		files[i].Added, files[i].Already = nonNil(files[i].Added), nonNil(files[i].Already)
	}
	return writeJSON(e, struct {
		Archive         string         `json:"archive"`
		Files           int            `json:"files"`
		Added           int            `json:"added"`
		AlreadyArchived int            `json:"already_archived"`
		NotOutput       int            `json:"skipped_not_output"`
		Failed          int            `json:"failed"`
		RunIDs          string         `json:"run_ids"`
		PerFile         []ingestedFile `json:"per_file"`
	}{e.db, sum.files, sum.added, sum.skipped, sum.ignored, sum.failed, store.FormatRunIDs(ids), files})
}
