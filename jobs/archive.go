package jobs

import (
	"context"
	"path/filepath"
	"slices"
	"strings"

	"github.com/sbench/sbench/ingest"
	"github.com/sbench/sbench/results"
	"github.com/sbench/sbench/store"
)

// Bundles lists the bundles a job's runner wrote: JOBID.STEP.BENCHMARK.json,
// and for the tasks of a job array JOBID_TASK.STEP.BENCHMARK.json.
func Bundles(dir, jobID string) ([]string, error) {
	var all []string
	for _, pattern := range []string{GlobEscape(jobID) + ".*.json", GlobEscape(jobID) + "_*.json"} {
		matches, err := filepath.Glob(filepath.Join(dir, pattern))
		if err != nil {
			return nil, err
		}
		all = append(all, matches...)
	}
	slices.SortFunc(all, results.NaturalCompare)
	return all, nil
}

// GlobEscape quotes s for filepath.Glob: a job id in a pattern matches
// itself only.
func GlobEscape(s string) string {
	r := strings.NewReplacer(`*`, `\*`, `?`, `\?`, `[`, `\[`, `\`, `\\`)
	return r.Replace(s)
}

// Archiver archives what finished jobs left: their bundles, and a failed
// run for every planned launch that left none.
type Archiver struct {
	DB *store.DB
	// Slurm says how the earlier attempts of a requeued job ended.
	Slurm Attempter
	// Ingest are the options the bundles are ingested with.
	Ingest ingest.Options
	// Total counts what the bundles' ingests did, over every job.
	Total ingest.Summary
}

// Archive ingests the bundles a finished job wrote, adding their counts
// to a.Total, then archives every planned step that left none as a failed
// run (RecordMissingRuns, with outs: read from the job's output when
// nil), and returns how many those were.
func (a *Archiver) Archive(ctx context.Context, j store.Job, outs Outcomes) (int, error) {
	files, err := Bundles(j.ResultsDir, j.SlurmID)
	if err != nil {
		return 0, err
	}
	archived, err := archivedFiles(ctx, a.DB, j)
	if err != nil {
		return 0, err
	}
	var ins []ingest.Input
	for _, f := range files {
		if n := archived[f]; n > 0 {
			a.Total.Files++
			a.Total.Skipped += n
			continue
		}
		ins = append(ins, ingest.File(f, false))
	}
	if outs == nil {
		outs = PlanOutcomes(j)
	}
	// Each attempt of a requeued job is reconciled on its own, and a run
	// Slurm ended quotes how (attempts.go).
	last := LastAttempt(j, nil, outs)
	ends := AttemptEnds(ctx, a.Slurm, j, last)
	o := a.Ingest
	o.Format, o.Amend = "bundle", AmendByAttempt(j, last, ends)
	sum, err := ingest.Files(ctx, a.DB, ins, o)
	a.Total.Files += sum.Files
	a.Total.Added += sum.Added
	a.Total.Skipped += sum.Skipped
	if err != nil {
		return 0, err
	}
	return RecordMissingRuns(ctx, a.DB, j, outs, ends)
}

// IsLocal reports whether id is the id of a job of sbench local
// (local-STAMP-N), which Slurm never ran.
func IsLocal(id string) bool { return len(id) > 6 && id[:6] == "local-" }
