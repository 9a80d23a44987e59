package screen

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/sbench/sbench/compare"
	"github.com/sbench/sbench/kernels"
	"github.com/sbench/sbench/results"
	"github.com/sbench/sbench/store"
)

// Archive is what Latest and Load read.
type Archive interface {
	Jobs(ctx context.Context, campaign string) ([]store.Job, error)
	Runs(ctx context.Context, f store.Filter) ([]store.Run, error)
	Samples(ctx context.Context, f store.Filter) ([]store.Sample, error)
}

// ErrNoScreening is returned (wrapped) when the archive holds no run a
// screening starts from.
var ErrNoScreening = errors.New("no screening run")

// Screening reports whether a run is one of a screening's: the runner's
// matrix, STREAM or HPL kernel (not xhpl's output, which the hpl parser
// reads: it has no per-node figure), or a run of a reference placement
// (pairs = "reference").
func Screening(r *store.Run) bool {
	return nodeFigures(r) || matrixRun(r) || referenceRun(r)
}

func matrixRun(r *store.Run) bool { return r.Kind == "native" && r.Kernel == kernels.KernelMatrix }

func referenceRun(r *store.Run) bool { return r.Labels[LabelReference] != "" }

func nodeFigures(r *store.Run) bool {
	return r.Kind == "native" && (r.Kernel == kernels.KernelStream || r.Kernel == kernels.KernelHPL)
}

// starts are the runs a screening starts from, the first kind there is.
var starts = []func(*store.Run) bool{matrixRun, referenceRun, nodeFigures}

// Selection is one screening: the runs of the submission (sbench submit
// or local: the matrix, STREAM and reference steps of examples/screen.toml)
// of Start's campaign, else of its job, else Start alone.
type Selection struct {
	// Start is the newest ok run of the first kind there is (matrix,
	// reference, STREAM or HPL); Starts reports whether a run is of its kind.
	Start  store.Run
	Starts func(*store.Run) bool
	// Campaign and JobIDs are the submission's, else the job's (Slurm
	// numbers jobs per cluster: a job id alone may name another
	// campaign's job).
	Campaign string
	JobIDs   []string
	// What says what was chosen, for the output's first line.
	What string
}

// Newest is the newest screening among runs: the submission (else the
// job) of the newest ok matrix run, else of the newest ok run of a
// reference placement, else of the newest ok STREAM or HPL run; jobs are
// the archive's jobs of the start's campaign (or more). ok is false when
// runs hold no start.
func Newest(runs []store.Run, jobs []store.Job) (s Selection, ok bool) {
	var start *store.Run
	for _, s.Starts = range starts {
		for i := range runs {
			r := &runs[i]
			if r.Status != results.StatusOK || !s.Starts(r) {
				continue
			}
			if start == nil || r.Start.After(start.Start) || r.Start.Equal(start.Start) && r.ID > start.ID {
				start = r
			}
		}
		if start != nil {
			break
		}
	}
	if start == nil {
		return Selection{}, false
	}
	s.Start = *start
	if start.Campaign != "" && start.JobID != "" {
		var campaign []store.Job
		for _, j := range jobs {
			if j.Campaign == start.Campaign {
				campaign = append(campaign, j)
			}
		}
		for i, sub := range compare.Submissions(campaign) {
			var ids []string
			for _, j := range sub {
				ids = append(ids, j.SlurmID)
			}
			if slices.Contains(ids, start.JobID) {
				s.Campaign, s.JobIDs = start.Campaign, ids
				s.What = fmt.Sprintf("campaign:%s@%d (the submission of run %d, the newest %s run)", start.Campaign, i+1, start.ID, start.Kernel)
				if i == 0 {
					s.What = fmt.Sprintf("campaign:%s@latest (run %d, the newest %s run, and the runs submitted with it)", start.Campaign, start.ID, start.Kernel)
				}
				return s, true
			}
		}
	}
	if start.JobID != "" {
		s.Campaign, s.JobIDs = start.Campaign, []string{start.JobID}
		s.What = fmt.Sprintf("job:%s (run %d, the newest %s run)", start.JobID, start.ID, start.Kernel)
		return s, true
	}
	s.What = fmt.Sprintf("run:%d (the newest %s run)", start.ID, start.Kernel)
	return s, true
}

// Filter selects the screening's runs.
func (s Selection) Filter() store.Filter {
	if len(s.JobIDs) == 0 {
		return store.Filter{RunIDs: []int64{s.Start.ID}}
	}
	return store.Filter{Campaign: s.Campaign, JobIDs: s.JobIDs}
}

// Holds reports whether r is one of the screening's runs (what Filter
// selects).
func (s Selection) Holds(r *store.Run) bool {
	if len(s.JobIDs) == 0 {
		return r.ID == s.Start.ID
	}
	return r.Campaign == s.Campaign && slices.Contains(s.JobIDs, r.JobID)
}

var okOnly = []results.Status{results.StatusOK}

// Latest is the default selection of sbench screen: Newest among the ok
// runs f selects, within f. The description says what was chosen, for the
// output's first line.
func Latest(ctx context.Context, a Archive, f store.Filter) (store.Filter, string, error) {
	runs, err := a.Runs(ctx, f.And(store.Filter{Statuses: okOnly}))
	if err != nil {
		return store.Filter{}, "", err
	}
	var jobs []store.Job
	if s, ok := Newest(runs, nil); ok && s.Start.Campaign != "" && s.Start.JobID != "" {
		if jobs, err = a.Jobs(ctx, s.Start.Campaign); err != nil {
			return store.Filter{}, "", err
		}
	}
	s, ok := Newest(runs, jobs)
	if !ok {
		return store.Filter{}, "", fmt.Errorf("%w: the selection holds no ok matrix, reference, stream or hpl run (examples/screen.toml makes them)", ErrNoScreening)
	}
	return f.And(s.Filter()), s.What, nil
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
