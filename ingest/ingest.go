// Package ingest loads runs into the archive: it reads the inputs (result
// bundles, tools' outputs, directories of them), parses them on every core
// and stores them in batches, each file whole or not at all.
package ingest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"

	"github.com/sbench/sbench/parsers"
	"github.com/sbench/sbench/results"
	"github.com/sbench/sbench/store"
)

// Options are what the user says about the inputs, and where ingest
// reports.
type Options struct {
	Format string
	Labels map[string]string
	// Amend, if set, is applied to every bundle before it is archived.
	Amend func(*results.Bundle)
	// Log receives a line per input that failed or was partly archived
	// already; nil discards them.
	Log io.Writer
	// NewBar makes the progress bar of n inputs; nil shows none.
	NewBar func(n int) Bar
}

// Bar is a progress bar (github.com/schollz/progressbar's).
type Bar interface {
	Add(int) error
	Clear() error
	Finish() error
}

type noBar struct{}

func (noBar) Add(int) error { return nil }
func (noBar) Clear() error  { return nil }
func (noBar) Finish() error { return nil }

// Summary counts what an ingest did.
type Summary struct {
	Files, Added, Skipped, Ignored int
	Own                            int // files sbench wrote, skipped silently
	Failed                         int
	// PerFile is what became of each input that was benchmark output, in
	// input order.
	PerFile []FileReport
}

// FileReport is what became of one input.
type FileReport struct {
	Source  string  `json:"source"`
	Added   []int64 `json:"added"`
	Already []int64 `json:"already_archived"`
	// Baselines and BaselinesKnown are archive import's: the baselines a
	// file carried that were set, and those already here.
	Baselines      []string `json:"baselines,omitempty"`
	BaselinesKnown []string `json:"baselines_known,omitempty"`
	// Expectations, ExpectationsKnown and ExpectationsKept are archive
	// import's too: the expectation sets recorded, those already here,
	// and those kept because this archive's were recorded later.
	Expectations      []string `json:"expectations,omitempty"`
	ExpectationsKnown []string `json:"expectations_known,omitempty"`
	ExpectationsKept  []string `json:"expectations_kept,omitempty"`
	Error             string   `json:"error,omitempty"`
}

// FailedError is an ingest some of whose inputs failed: nothing of those
// was stored, the others were.
type FailedError struct{ Failed, Of int }

func (e FailedError) Error() string {
	return fmt.Sprintf("ingest: %d of %d file(s) failed, nothing from them was stored", e.Failed, e.Of)
}

// batchFiles is how many files share one SQLite transaction, each file in a
// savepoint of its own so that it is still stored whole or not at all. A
// commit per file costs about 20 page writes; batching makes ingesting a
// directory of thousands of logs about 2× faster. A crash loses at most the
// uncommitted batch, never part of a file.
var batchFiles = 500

// batchBytes bounds a batch by what its bundles weigh too (their JSON, see
// store.File.Size): 500 matrix runs of a large fleet, each with its hosts
// and thousands of samples, must not be held at once. Decoded, a bundle
// weighs several times its JSON, and a batch is gathered while the one
// before it is stored; 4 MB bounds that memory at no cost in CPU time.
const batchBytes = 4 << 20

// parsed is one input, read, parsed and encoded for the store.
type parsed struct {
	in   Input
	file store.File
	err  error
}

// parseAhead reads, parses and encodes (store.File.Prepare: hashes, JSON)
// the inputs ahead of the store, on one goroutine per core, and hands them
// on in input order: the run ids ingest gives follow the files' order
// whatever finishes first. On two cores the parsers' work and SQLite's
// overlap, and the store's goroutine only inserts.
func parseAhead(ctx context.Context, ins []Input, o Options) <-chan parsed {
	type job struct {
		in  Input
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
				p.file.Source = j.in.Name
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

// Files reads, parses and stores each input. A bad file is reported
// and stored not at all; the others still load. The returned error says
// how many failed (FailedError).
//
// Three stages overlap: parseAhead reads and parses on every core, this
// goroutine gathers what it hands on into batches, and a store goroutine
// inserts one batch while the next is gathered, so that parsing and
// inserting overlap rather than take turns (BenchmarkIngest).
func Files(ctx context.Context, db *store.DB, ins []Input, o Options) (Summary, error) {
	if o.Log == nil {
		o.Log = io.Discard
	}
	var bar Bar = noBar{}
	if o.NewBar != nil {
		bar = o.NewBar(len(ins))
	}
	var sum Summary // the store goroutine's until it has finished
	defer bar.Finish()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // stops parseAhead and the store when we return early
	batches := make(chan []parsed, 1)
	stored := make(chan error, 1)
	go func() {
		var err error
		for batch := range batches {
			if err == nil {
				if err = storeBatch(ctx, db, batch, o, &sum, bar); err != nil {
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
	if sum.Failed > 0 {
		return sum, FailedError{sum.Failed, len(ins) - sum.Ignored - sum.Own}
	}
	return sum, nil
}

// storeBatch stores a batch's parsed files in one transaction and accounts
// for every input of it, in input order, those that failed to parse too.
func storeBatch(ctx context.Context, db *store.DB, batch []parsed, o Options, sum *Summary, bar Bar) error {
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
		fmt.Fprintf(o.Log, "sbench: %v\n", err)
		sum.Failed++
		sum.PerFile = append(sum.PerFile, FileReport{Source: source, Error: err.Error()})
	}
	for _, p := range batch {
		var skip skipped
		switch {
		case errors.As(p.err, &skip) && skip.own:
			sum.Own++
			continue
		case errors.As(p.err, &skip):
			sum.Ignored++
			continue
		case p.err != nil && p.in.found && o.Format == "auto" && notBenchmarkOutput(p.err):
			sum.Ignored++ // a script or log met in a directory
			continue
		case p.err != nil:
			fail(p.in.Name, p.err)
			continue
		}
		r := res[0]
		res = res[1:]
		if r.Err != nil {
			fail(r.Source, r.Err)
			continue
		}
		sum.PerFile = append(sum.PerFile, FileReport{Source: r.Source, Added: r.Added, Already: r.Skipped})
		sum.Files++
		sum.Added += len(r.Added)
		sum.Skipped += len(r.Skipped)
		if len(r.Added) == 0 {
			bar.Clear()
			fmt.Fprintf(o.Log, "%s: already in the archive (%d run(s)), nothing added\n", r.Source, len(r.Skipped))
		} else if len(r.Skipped) > 0 {
			bar.Clear()
			fmt.Fprintf(o.Log, "%s: added %d run(s), %d already archived\n", r.Source, len(r.Added), len(r.Skipped))
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
