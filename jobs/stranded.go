package jobs

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/sbench/sbench/slurm"
	"github.com/sbench/sbench/store"
)

// strandedPrefix begins the reason status records for a job that waits
// (--dependency=afterok), directly or through other jobs, for one that
// ended without completing: Slurm keeps it pending forever, unless the
// cluster sets kill_invalid_depend in SchedulerParameters. The rest of the
// reason says which job, "because job 12 (benchmark first) failed …".
const strandedPrefix = slurm.ReasonDependencyNeverSatisfied + ": "

// IsStranded reports whether status found that j can never start.
func IsStranded(j store.Job) bool { return strings.HasPrefix(j.Reason, strandedPrefix) }

// strandedWhy is why a stranded job's planned steps never ran, for their
// failed runs; ok is false for a job that is not stranded.
func strandedWhy(j store.Job) (why string, ok bool) {
	because, ok := strings.CutPrefix(j.Reason, strandedPrefix)
	if !ok {
		return "", false
	}
	return "never ran: its job could never start (" + j.State + "), " + because, true
}

// MarkStranded finds the pending jobs whose afterok chain reaches one that
// ended without completing (slurm.Stranded, from the jobs' recorded
// dependencies and states), records why in their reason, and returns those
// it found now, in the order of js. A stranded job keeps its reason
// whatever Slurm says of it while pending ("Dependency").
func MarkStranded(ctx context.Context, db *store.DB, js []store.Job) ([]*store.Job, error) {
	deps := make([]slurm.DepJob, 0, len(js))
	byID := map[string]*store.Job{}
	for i := range js {
		j := &js[i]
		byID[j.SlurmID] = j
		deps = append(deps, slurm.DepJob{ID: j.SlurmID, After: j.After, State: j.State, Reason: j.Reason})
	}
	strands := slurm.Stranded(deps)
	var found []*store.Job
	for i := range js {
		j := &js[i]
		s, ok := strands[j.SlurmID]
		if !ok || IsStranded(*j) {
			continue
		}
		j.Reason = strandedPrefix + strandBecause(s, byID)
		j.Updated = time.Now()
		if err := db.UpdateJob(ctx, *j); err != nil {
			return found, err
		}
		found = append(found, j)
	}
	return found, nil
}

// strandBecause says which job keeps a stranded one from starting, and
// through which jobs it waits for it.
func strandBecause(s slurm.Strand, byID map[string]*store.Job) string {
	root := byID[s.Root]
	var b strings.Builder
	fmt.Fprintf(&b, "because %s %s", jobWithBenchmark(root), endedHow(root))
	if len(s.Via) > 0 {
		vias := make([]string, len(s.Via))
		for i, id := range s.Via {
			vias[i] = jobWithBenchmark(byID[id])
		}
		fmt.Fprintf(&b, ", which it waits for (afterok) through %s", strings.Join(vias, ", then "))
	}
	return b.String()
}

// jobWithBenchmark names a job by its id and what it runs: "job 12
// (benchmark first)".
func jobWithBenchmark(j *store.Job) string {
	var names []string
	for _, ps := range j.Plan {
		if !slices.Contains(names, ps.Benchmark) {
			names = append(names, ps.Benchmark)
		}
	}
	switch {
	case len(names) == 1:
		return fmt.Sprintf("job %s (benchmark %s)", j.SlurmID, names[0])
	case len(names) > 1:
		return fmt.Sprintf("job %s (benchmarks %s)", j.SlurmID, strings.Join(names, ", "))
	case j.Name != "":
		return fmt.Sprintf("job %s (%s)", j.SlurmID, j.Name)
	}
	return "job " + j.SlurmID
}

// endedHow says how a job that keeps others from starting ended: "failed
// (FAILED 1:0)", "was cancelled (CANCELLED by 1000)" …
func endedHow(j *store.Job) string {
	state := j.State
	if j.ExitCode != "" && slurm.IsTerminal(j.State) {
		state += " " + j.ExitCode
	}
	verb := "ended"
	switch base, _, _ := strings.Cut(j.State, " "); strings.TrimRight(base, "+") {
	case "FAILED", "NODE_FAIL", "BOOT_FAIL":
		verb = "failed"
	case "CANCELLED":
		verb = "was cancelled"
	case "TIMEOUT", "DEADLINE":
		verb = "timed out"
	case "OUT_OF_MEMORY":
		verb = "ran out of memory"
	case "PREEMPTED":
		verb = "was preempted"
	case "PENDING":
		return "can never start (" + state + ", " + j.Reason + ")"
	}
	return verb + " (" + state + ")"
}

// CancelStranded scancels the jobs of js that can never start and
// records what Slurm then says of them, keeping the reason why; it
// returns the ids it cancelled.
func CancelStranded(ctx context.Context, db *store.DB, client *slurm.Client, js []store.Job) ([]string, error) {
	var ids []string
	for _, j := range js {
		if IsStranded(j) && !slurm.IsTerminal(j.State) {
			ids = append(ids, j.SlurmID)
		}
	}
	if len(ids) == 0 {
		return nil, nil
	}
	if err := client.Cancel(ctx, ids); err != nil {
		return nil, err
	}
	infos, err := client.Jobs(ctx, ids)
	if err != nil {
		return nil, err
	}
	for i := range js {
		j := &js[i]
		info, ok := infos[j.SlurmID]
		if !ok {
			continue
		}
		j.State, j.ExitCode = info.State, info.ExitCode
		if !info.End.IsZero() {
			j.End = info.End
		}
		j.Updated = time.Now()
		if err := db.UpdateJob(ctx, *j); err != nil {
			return nil, err
		}
	}
	return ids, nil
}

// StrandedBecause says which job keeps a stranded job from starting
// ("because job 12 (benchmark first) failed …"), as MarkStranded
// recorded it.
func StrandedBecause(j store.Job) string {
	because, _ := strings.CutPrefix(j.Reason, strandedPrefix)
	return because
}

// Archived reports whether a settled job's runs are in the archive, so
// that status --ingest, which looks at every job, need not read its
// bundles again: every planned launch has its run, or for a job recorded
// before plans were (which says nothing of its launches), any run.
func Archived(ctx context.Context, db *store.DB, j store.Job) (bool, error) {
	have, err := db.JobRuns(ctx, j.Campaign, j.SlurmID)
	if err != nil || len(have) == 0 {
		return false, err
	}
	return len(j.Plan) == 0 || len(MissingRuns(j, have, nil, nil)) == 0, nil
}
