package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/sbench/sbench/results"
	"github.com/sbench/sbench/store"
)

// newToken makes the per-job secret that authenticates the runner's ranks to
// each other. It travels in the job's environment only, never in a script.
func newToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("make job token: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// selfDir is the directory of the running sbench binary; sbench-runner is
// looked for there first, since the two are built and installed together.
func selfDir() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	if r, err := filepath.EvalSymlinks(exe); err == nil {
		exe = r
	}
	return filepath.Dir(exe)
}

// findRunner returns the sbench-runner to start for local runs.
func findRunner(name string) (string, error) {
	if strings.ContainsRune(name, '/') {
		return name, nil
	}
	if d := selfDir(); d != "" {
		p := filepath.Join(d, name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	p, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("%s not found next to sbench or in PATH (build it with make build)", name)
	}
	return p, nil
}

// pathWithSelf puts sbench's own directory first in PATH, so that jobs find
// the sbench-runner installed beside it.
func pathWithSelf(path string) string {
	d := selfDir()
	if d == "" {
		return path
	}
	return d + string(os.PathListSeparator) + path
}

// jobBundles lists the bundles a job's runner wrote: JOBID.STEP.BENCHMARK.json,
// and for the tasks of a job array JOBID_TASK.STEP.BENCHMARK.json.
func jobBundles(dir, jobID string) ([]string, error) {
	var all []string
	for _, pattern := range []string{globEscape(jobID) + ".*.json", globEscape(jobID) + "_*.json"} {
		matches, err := filepath.Glob(filepath.Join(dir, pattern))
		if err != nil {
			return nil, err
		}
		all = append(all, matches...)
	}
	slices.SortFunc(all, results.NaturalCompare)
	return all, nil
}

func globEscape(s string) string {
	r := strings.NewReplacer(`*`, `\*`, `?`, `\?`, `[`, `\[`, `\`, `\\`)
	return r.Replace(s)
}

// archiveJob ingests the bundles a finished job wrote, adding their counts
// to total, then archives every planned step that left none as a failed
// run (recordMissingRuns, with outs), and returns how many those were.
func archiveJob(ctx context.Context, e *env, db *store.DB, j store.Job, outs map[string]map[string]*stepOutcome, total *ingestSummary) (int, error) {
	files, err := jobBundles(j.ResultsDir, j.SlurmID)
	if err != nil {
		return 0, err
	}
	archived, err := archivedFiles(ctx, db, j)
	if err != nil {
		return 0, err
	}
	var ins []ingestInput
	for _, f := range files {
		if n := archived[f]; n > 0 {
			total.files++
			total.skipped += n
			continue
		}
		ins = append(ins, fileInput(f, false))
	}
	if outs == nil {
		outs = planOutcomes(j)
	}
	// Each attempt of a requeued job is reconciled on its own, and a run
	// Slurm ended quotes how (attempts.go).
	last := lastAttempt(j, nil, outs)
	ends := attemptEnds(ctx, j, last)
	sum, err := ingestFiles(ctx, e, db, ins, ingestOptions{format: "bundle", amend: amendByAttempt(j, last, ends)})
	total.files += sum.files
	total.added += sum.added
	total.skipped += sum.skipped
	if err != nil {
		return 0, err
	}
	return recordMissingRuns(ctx, db, j, outs, ends)
}
