package main

import (
	"context"
	"fmt"
	"io"
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

// isStranded reports whether status found that j can never start.
func isStranded(j store.Job) bool { return strings.HasPrefix(j.Reason, strandedPrefix) }

// strandedWhy is why a stranded job's planned steps never ran, for their
// failed runs; ok is false for a job that is not stranded.
func strandedWhy(j store.Job) (why string, ok bool) {
	because, ok := strings.CutPrefix(j.Reason, strandedPrefix)
	if !ok {
		return "", false
	}
	return "never ran: its job could never start (" + j.State + "), " + because, true
}

// markStranded finds the pending jobs whose afterok chain reaches one that
// ended without completing (slurm.Stranded, from the jobs' recorded
// dependencies and states), records why in their reason, and returns those
// it found now, in the order of jobs. A stranded job keeps its reason
// whatever Slurm says of it while pending ("Dependency").
func markStranded(ctx context.Context, db *store.DB, jobs []store.Job) ([]*store.Job, error) {
	deps := make([]slurm.DepJob, 0, len(jobs))
	byID := map[string]*store.Job{}
	for i := range jobs {
		j := &jobs[i]
		byID[j.SlurmID] = j
		deps = append(deps, slurm.DepJob{ID: j.SlurmID, After: j.After, State: j.State, Reason: j.Reason})
	}
	strands := slurm.Stranded(deps)
	var found []*store.Job
	for i := range jobs {
		j := &jobs[i]
		s, ok := strands[j.SlurmID]
		if !ok || isStranded(*j) {
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

// announceStranded says, as --wait says every change, that a job will
// never start, and why.
func announceStranded(w io.Writer, found []*store.Job) {
	now := time.Now().Format("15:04:05")
	for _, j := range found {
		because, _ := strings.CutPrefix(j.Reason, strandedPrefix)
		fmt.Fprintf(w, "%s job %s: it will never start (%s): Slurm would keep it pending forever, %s (scancel %s, or sbench status --cancel-stranded, removes it)\n",
			now, j.SlurmID, slurm.ReasonDependencyNeverSatisfied, because, j.SlurmID)
	}
}

// cancelStranded scancels the jobs of jobs that can never start and
// records what Slurm then says of them, keeping the reason why.
func cancelStranded(ctx context.Context, e *env, db *store.DB, client *slurm.Client, jobs []store.Job) error {
	var ids []string
	for _, j := range jobs {
		if isStranded(j) && !slurm.IsTerminal(j.State) {
			ids = append(ids, j.SlurmID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	if err := client.Cancel(ctx, ids); err != nil {
		return err
	}
	infos, err := client.Jobs(ctx, ids)
	if err != nil {
		return err
	}
	for i := range jobs {
		j := &jobs[i]
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
			return err
		}
	}
	fmt.Fprintf(e.stderr, "cancelled %d job(s) that can never start: %s\n", len(ids), strings.Join(ids, " "))
	return nil
}

// jobArchived reports whether a settled job's runs are in the archive, so
// that status --ingest, which looks at every job, need not read its
// bundles again: every planned launch has its run, or for a job recorded
// before plans were (which says nothing of its launches), any run.
func jobArchived(ctx context.Context, db *store.DB, j store.Job) (bool, error) {
	have, err := db.JobRuns(ctx, j.Campaign, j.SlurmID)
	if err != nil || len(have) == 0 {
		return false, err
	}
	return len(j.Plan) == 0 || len(missingRuns(j, have, nil, nil)) == 0, nil
}
