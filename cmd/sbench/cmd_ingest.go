package main

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sbench/sbench/results"
	"github.com/sbench/sbench/store"
)

func openDB(e *env) (*store.DB, error) {
	db, err := store.Open(e.db)
	if err != nil {
		return nil, fmt.Errorf("open archive: %w", err)
	}
	return db, nil
}

// ingestInput is one file (or stdin) to load.
type ingestInput struct {
	name string
	open func() (io.ReadCloser, error)
}

// expandInputs turns the command line into files: directories are walked for
// bundles (*.json), "-" is stdin.
func expandInputs(e *env, args []string) ([]ingestInput, error) {
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
			path := a
			ins = append(ins, ingestInput{name: path, open: func() (io.ReadCloser, error) { return os.Open(path) }})
			continue
		}
		var found []string
		err = filepath.WalkDir(a, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && p != a && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir // rendezvous files and temporaries
			}
			if !d.IsDir() && strings.HasSuffix(p, ".json") && !strings.HasPrefix(d.Name(), ".") {
				found = append(found, p)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		sort.Strings(found)
		for _, p := range found {
			path := p
			ins = append(ins, ingestInput{name: path, open: func() (io.ReadCloser, error) { return os.Open(path) }})
		}
	}
	return ins, nil
}

// ingestSummary counts what an ingest did.
type ingestSummary struct {
	files, added, skipped int
}

// ingestFiles loads each input in its own transaction. A bad file is
// reported and the others still load; the returned error says how many
// failed.
func ingestFiles(ctx context.Context, e *env, db *store.DB, ins []ingestInput) (ingestSummary, error) {
	var sum ingestSummary
	var failed []string
	for _, in := range ins {
		if err := ctx.Err(); err != nil {
			return sum, err
		}
		bundles, err := readBundles(in)
		if err == nil {
			var res store.IngestResult
			res, err = db.Ingest(ctx, in.name, bundles)
			if err == nil {
				sum.files++
				sum.added += len(res.Added)
				sum.skipped += len(res.Skipped)
				switch {
				case len(res.Added) == 0:
					fmt.Fprintf(e.stderr, "%s: already in the archive (%d run(s)), nothing added\n", in.name, len(res.Skipped))
				case len(res.Skipped) > 0:
					fmt.Fprintf(e.stderr, "%s: added %d run(s), %d already archived\n", in.name, len(res.Added), len(res.Skipped))
				}
				continue
			}
		}
		fmt.Fprintf(e.stderr, "sbench: %v\n", err)
		failed = append(failed, in.name)
	}
	if len(failed) > 0 {
		return sum, exitError{code: exitFailure, msg: fmt.Sprintf("ingest: %d of %d file(s) failed, nothing from them was stored", len(failed), len(ins))}
	}
	return sum, nil
}

func readBundles(in ingestInput) ([]*results.Bundle, error) {
	r, err := in.open()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	b, err := results.Decode(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", in.name, err)
	}
	return []*results.Bundle{b}, nil
}

func newIngestCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "ingest PATH...",
		Short: "Load result bundles into the archive",
		Long: `Ingest loads result bundles (the JSON files sbench-runner writes) into the
archive. A directory is searched for *.json bundles; "-" reads one bundle from
stdin. Each file is one transaction: it is stored whole or not at all. A
bundle already in the archive (same content) is not added again.`,
		Example: `  sbench ingest sbench-runs/quickstart
  sbench ingest --db site.db sbench-runs/quickstart/123.0.latency.json
  cat bundle.json | sbench ingest -`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ins, err := expandInputs(e, args)
			if err != nil {
				return err
			}
			if len(ins) == 0 {
				return usagef("ingest: no bundles found in %s", strings.Join(args, " "))
			}
			db, err := openDB(e)
			if err != nil {
				return err
			}
			defer db.Close()
			sum, err := ingestFiles(cmd.Context(), e, db, ins)
			fmt.Fprintf(e.stdout, "%d run(s) added, %d already archived, from %d file(s) into %s\n", sum.added, sum.skipped, sum.files, e.db)
			return err
		},
	}
}
