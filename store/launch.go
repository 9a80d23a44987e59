package store

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// LaunchName is how sbench names the launch a run came from: Slurm's name
// of the job step (1234.0, an array task's 1234_7.0, the job alone when
// the run has no step), then " rN" for a run of the job's attempt N, N
// being Slurm's restart count (SLURM_RESTART_COUNT) of that attempt: a
// job Slurm requeued after a node failure or a preemption runs its steps
// again, and 1234.0 and 1234.0 r1 are two launches of step 0. The first
// attempt (restart count 0) has no suffix. "" for a run of no job.
func LaunchName(job, task, step string, restart int) string {
	if job == "" {
		return ""
	}
	s := job
	if task != "" && !strings.Contains(s, "_") {
		s += "_" + task
	}
	if step != "" {
		s += "." + step
	}
	if restart > 0 {
		s += " r" + strconv.Itoa(restart)
	}
	return s
}

// Launch is LaunchName of the run.
func (r *Run) Launch() string { return LaunchName(r.JobID, r.ArrayIndex, r.Step, r.Restart) }

// JobRef is a job, or part of it, as --job and the job: selector take it:
//
//	4242        every run of job 4242 (every task, step and attempt)
//	4242_7      the runs of task 7 of array 4242
//	4242.3      the runs of step 3, of every attempt
//	4242.3r1    step 3 of attempt 1 (restart count 1), shown 4242.3 r1
//	4242r1      every step of attempt 1
//	4242.3r0    step 3 of the first attempt only
//
// The attempt is written without the space runs shows, so that a list
// stays one word: job:4242.3r1,4242.3r2.
type JobRef struct {
	Job  string // the job id, an array's id for a task
	Task string // the array task, "" for any
	Step string // the step (launch id), "" for any
	// Restart is the attempt's restart count, -1 for any.
	Restart int
}

// attemptSuffix is the attempt at the end of a job reference.
var attemptSuffix = regexp.MustCompile(`^(.+?)r([0-9]+)$`)

// jobRefRE is what a job id, a task and a step are made of: Slurm's and
// sbench local's ids (letters, digits, '_', '+', '-') and launch ids
// (3, 3-n1-n2, 3-intra).
var jobRefRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_+-]*$`)

// ParseJobRef reads a job reference (see JobRef). A reference that is
// only a job id (or an array task) has Restart -1 and no Step: Plain
// says so.
func ParseJobRef(s string) (JobRef, error) {
	ref := JobRef{Restart: -1}
	rest := strings.TrimSpace(s)
	if m := attemptSuffix.FindStringSubmatch(rest); m != nil && (strings.Contains(m[1], ".") || isDigits(m[1]) || isArrayTask(m[1])) {
		n, err := strconv.Atoi(m[2])
		if err != nil || n > 1<<31-1 {
			return JobRef{}, fmt.Errorf("job %q: attempt r%s is out of range", s, m[2])
		}
		rest, ref.Restart = m[1], n
	}
	job, step, hasStep := strings.Cut(rest, ".")
	if hasStep {
		if !jobRefRE.MatchString(step) {
			return JobRef{}, fmt.Errorf("job %q: step %q: want a step such as 3 or 3-n1-n2", s, step)
		}
		ref.Step = step
	}
	if !jobRefRE.MatchString(job) {
		return JobRef{}, fmt.Errorf("job %q: want a Slurm job id (4242, 4242_7) or a local one (local-…), then .STEP and rN if wanted (4242.3r1)", s)
	}
	ref.Job = job
	if isArrayTask(job) {
		i := strings.LastIndexByte(job, '_')
		ref.Job, ref.Task = job[:i], job[i+1:]
	}
	return ref, nil
}

// Plain reports whether the reference names a whole job or array task:
// no step and no attempt.
func (r JobRef) Plain() bool { return r.Step == "" && r.Restart < 0 }

// String is the reference as ParseJobRef reads it.
func (r JobRef) String() string {
	s := r.Job
	if r.Task != "" {
		s += "_" + r.Task
	}
	if r.Step != "" {
		s += "." + r.Step
	}
	if r.Restart >= 0 {
		s += "r" + strconv.Itoa(r.Restart)
	}
	return s
}

func isDigits(s string) bool { return s != "" && strings.Trim(s, "0123456789") == "" }

// isArrayTask reports whether id names an array task: ID_N, N digits.
func isArrayTask(id string) bool {
	i := strings.LastIndexByte(id, '_')
	return i > 0 && isDigits(id[i+1:])
}

// launchCond is the SQL condition selecting the runs of any of refs.
func launchCond(refs []JobRef) (string, []any) {
	if len(refs) == 0 {
		return "1", nil
	}
	var parts []string
	var args []any
	for _, r := range refs {
		c := []string{"r.job_id = ?"}
		args = append(args, r.Job)
		if r.Task != "" {
			c = append(c, "r.array_index = ?")
			args = append(args, r.Task)
		}
		if r.Step != "" {
			c = append(c, "r.step = ?")
			args = append(args, r.Step)
		}
		if r.Restart >= 0 {
			c = append(c, "r.restart = ?")
			args = append(args, r.Restart)
		}
		parts = append(parts, "("+strings.Join(c, " AND ")+")")
	}
	return "(" + strings.Join(parts, " OR ") + ")", args
}

// jobRefs is the filter's JobIDs and Launches as one list.
func (f Filter) jobRefs() []JobRef {
	refs := slices.Clone(f.Launches)
	for _, id := range f.JobIDs {
		refs = append(refs, JobRef{Job: id, Restart: -1})
	}
	return refs
}
