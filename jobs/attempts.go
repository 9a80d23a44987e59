package jobs

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/sbench/sbench/results"
	"github.com/sbench/sbench/slurm"
	"github.com/sbench/sbench/store"
)

// AttemptEnd is how Slurm ended one attempt of a job (Slurm runs a requeued
// job again under its id; attempt N is the run with restart count N).
type AttemptEnd struct {
	State, ExitCode, Reason string
}

// known reports whether anything says how the attempt ended.
func (a AttemptEnd) known() bool { return a.State != "" }

// text is the state as runs quote it: NODE_FAIL, TIMEOUT 0:15,
// CANCELLED by 1000.
func (a AttemptEnd) text() string {
	s := a.State
	if a.ExitCode != "" {
		s += " " + a.ExitCode
	}
	if a.Reason != "" {
		s += ", " + a.Reason
	}
	return s
}

// byslurm reports whether Slurm, not the job's script, ended the attempt:
// a node failure, a preemption, a time limit, a cancel or a requeue.
func (a AttemptEnd) bySlurm() bool {
	switch a.State {
	case "NODE_FAIL", "PREEMPTED", "TIMEOUT", "CANCELLED", "REQUEUED", "BOOT_FAIL", "DEADLINE", "OUT_OF_MEMORY":
		return true
	}
	return false
}

// Attempter asks Slurm how each attempt of a requeued job ended
// (slurm.Client).
type Attempter interface {
	Attempts(ctx context.Context, id string, restarts int) ([]slurm.Attempt, string)
}

// LastAttempt is the job's last attempt: its restart count, or more when
// its output or its runs say so (the count of a job that left Slurm's
// memory is not known).
func LastAttempt(j store.Job, have []store.Run, outs Outcomes) int {
	last := j.Restarts
	for _, r := range have {
		last = max(last, r.Restart)
	}
	for _, byID := range outs {
		for _, o := range byID {
			last = max(last, o.Attempt)
		}
	}
	return last
}

// AttemptEnds says how each attempt of j up to last ended: the last as the
// job's record says, the earlier ones as Slurm remembers them (accounting
// or the jobcomp log); an attempt nothing remembers is left out.
func AttemptEnds(ctx context.Context, sl Attempter, j store.Job, last int) map[int]AttemptEnd {
	ends := map[int]AttemptEnd{}
	if slurm.IsTerminal(j.State) {
		ends[last] = AttemptEnd{State: j.State, ExitCode: j.ExitCode, Reason: j.Reason}
	}
	if last == 0 || IsLocal(j.SlurmID) || j.SlurmID == "" || sl == nil {
		return ends
	}
	as, _ := sl.Attempts(ctx, j.SlurmID, last)
	for _, a := range as {
		if a.Restart >= last {
			continue // the job's record has the last one
		}
		// sacct's REQUEUED says who did it in the reason; jobcomp writes
		// the state that made Slurm requeue (NODE_FAIL, PREEMPTED).
		ends[a.Restart] = AttemptEnd{State: a.State, ExitCode: a.ExitCode, Reason: a.Reason}
	}
	return ends
}

// slurmEndedText is what a failed run of attempt a adds when Slurm ended
// that attempt: "Slurm ended attempt 0: NODE_FAIL", or of a job Slurm ran
// once (last 0) "Slurm ended the job: TIMEOUT".
func slurmEndedText(a, last int, end AttemptEnd) string {
	return fmt.Sprintf("Slurm ended %s: %s", attemptName(a, last), end.text())
}

// attemptName is "attempt 1" of a job Slurm requeued, "the job" of one it
// ran once.
func attemptName(a, last int) string {
	if last == 0 {
		return "the job"
	}
	return fmt.Sprintf("attempt %d", a)
}

// RunnerSignalText is the runner's guess at who sent the SIGTERM that
// interrupted it; Slurm's state replaces it when Slurm is known to have.
const RunnerSignalText = " (a time limit, scancel or Ctrl-C)"

// AmendByAttempt returns what Archive does to the bundles of job j
// before they are archived: a failed run that a signal ended, in an
// attempt Slurm ended, says Slurm's state (NODE_FAIL, PREEMPTED, TIMEOUT,
// CANCELLED by UID) rather than the runner's guess at who sent the signal.
func AmendByAttempt(j store.Job, last int, ends map[int]AttemptEnd) func(*results.Bundle) {
	return func(b *results.Bundle) {
		if b.Status != results.StatusFailed || b.Job.ID != j.SlurmID {
			return
		}
		end, ok := ends[b.Job.Restart]
		if !ok || !end.bySlurm() || !strings.Contains(b.Error, "SIGTERM") && !strings.Contains(b.Error, "SIGKILL") {
			return
		}
		if strings.Contains(b.Error, "; Slurm ended ") {
			return
		}
		b.Error = strings.Replace(b.Error, RunnerSignalText, "", 1) + "; " + slurmEndedText(b.Job.Restart, last, end)
	}
}

// launches is every launch of one id the job's output shows, by attempt.
func launches(o *Outcome) map[int]*Outcome {
	out := map[int]*Outcome{}
	if o == nil {
		return out
	}
	for _, e := range o.earlier {
		out[e.Attempt] = e
	}
	out[o.Attempt] = o
	return out
}

// PlanOutcomes reads the step markers of every task of j's plan.
func PlanOutcomes(j store.Job) Outcomes {
	var tasks []string
	for _, ps := range j.Plan {
		if !slices.Contains(tasks, ps.Task) {
			tasks = append(tasks, ps.Task)
		}
	}
	return JobOutcomes(j, tasks)
}

// archivedFiles counts the runs of job j already archived, by the file
// they were ingested from. Archive does not read such a file again: its
// bundles were amended (AmendByAttempt) with what Slurm then said of the
// attempt, and Slurm may have forgotten since (a rotated jobcomp log), so
// the file read again could hash differently and be archived twice.
func archivedFiles(ctx context.Context, db *store.DB, j store.Job) (map[string]int, error) {
	out := map[string]int{}
	flt := store.Filter{Campaign: j.Campaign, JobIDs: []string{j.SlurmID}}
	err := db.EachRun(ctx, flt, store.RunOptions{Detail: store.RunLabels}, func(r *store.Run) error {
		out[r.Source]++
		return nil
	})
	return out, err
}
