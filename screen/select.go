package screen

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/sbench/sbench/compare"
	"github.com/sbench/sbench/results"
	"github.com/sbench/sbench/store"
)

// Archive is what Select and Load read.
type Archive interface {
	LatestRun(ctx context.Context, f store.Filter, kernels ...string) (store.Run, error)
	Jobs(ctx context.Context, campaign string) ([]store.Job, error)
	Runs(ctx context.Context, f store.Filter) ([]store.Run, error)
	Samples(ctx context.Context, f store.Filter) ([]store.Sample, error)
}

// ErrNoScreening is returned (wrapped) when the archive holds no run a
// screening starts from.
var ErrNoScreening = errors.New("no screening run")

// Latest is the default selection of sbench screen: the screening the
// newest ok matrix run that f selects belongs to — the other runs of the
// same submission of its campaign (sbench submit or local: the matrix,
// STREAM and reference steps of examples/screen.toml), else of its job,
// else that run alone — within f. Without a matrix run, the newest run
// with a reference label starts it the same way, then the newest stream
// or hpl run. The description says what was chosen, for the output's
// first line.
func Latest(ctx context.Context, a Archive, f store.Filter) (store.Filter, string, error) {
	start, err := a.LatestRun(ctx, f, "matrix")
	if errors.Is(err, store.ErrNotFound) {
		start, err = latestLabelled(ctx, a, f)
	}
	if errors.Is(err, store.ErrNotFound) {
		start, err = a.LatestRun(ctx, f, "stream", "hpl")
	}
	if errors.Is(err, store.ErrNotFound) {
		return store.Filter{}, "", fmt.Errorf("%w: the selection holds no ok matrix, reference, stream or hpl run (examples/screen.toml makes them)", ErrNoScreening)
	}
	if err != nil {
		return store.Filter{}, "", err
	}
	if start.Campaign != "" && start.JobID != "" {
		jobs, err := a.Jobs(ctx, start.Campaign)
		if err != nil {
			return store.Filter{}, "", err
		}
		for i, sub := range compare.Submissions(jobs) {
			var ids []string
			for _, j := range sub {
				ids = append(ids, j.SlurmID)
			}
			if slices.Contains(ids, start.JobID) {
				what := fmt.Sprintf("campaign:%s@%d (the submission of run %d, the newest %s run)", start.Campaign, i+1, start.ID, start.Kernel)
				if i == 0 {
					what = fmt.Sprintf("campaign:%s@latest (run %d, the newest %s run, and the runs submitted with it)", start.Campaign, start.ID, start.Kernel)
				}
				return f.And(store.Filter{Campaign: start.Campaign, JobIDs: ids}), what, nil
			}
		}
	}
	if start.JobID != "" {
		return f.And(store.Filter{JobIDs: []string{start.JobID}}), fmt.Sprintf("job:%s (run %d, the newest %s run)", start.JobID, start.ID, start.Kernel), nil
	}
	return f.And(store.Filter{RunIDs: []int64{start.ID}}), fmt.Sprintf("run:%d (the newest %s run)", start.ID, start.Kernel), nil
}

var okOnly = []results.Status{results.StatusOK}

// latestLabelled finds the newest ok run with a reference label, whatever
// its value (a label filter matches one value only).
func latestLabelled(ctx context.Context, a Archive, f store.Filter) (store.Run, error) {
	runs, err := a.Runs(ctx, f.And(store.Filter{Statuses: okOnly}))
	if err != nil {
		return store.Run{}, err
	}
	for i := len(runs) - 1; i >= 0; i-- {
		if runs[i].Labels[LabelReference] != "" {
			return runs[i], nil
		}
	}
	return store.Run{}, store.ErrNotFound
}

// Load reads the runs and samples f selects.
func Load(ctx context.Context, a Archive, f store.Filter) (Input, error) {
	runs, err := a.Runs(ctx, f)
	if err != nil {
		return Input{}, err
	}
	samples, err := a.Samples(ctx, f)
	if err != nil {
		return Input{}, err
	}
	return Input{Runs: runs, Samples: samples}, nil
}
