package slurm

// DepJob is a job as Stranded sees it: its id, the jobs it waits for
// (--dependency=afterok) and Slurm's state of it.
type DepJob struct {
	ID            string
	After         []string
	State, Reason string
}

// Strand says why a pending job can never start.
type Strand struct {
	// Root is the job that makes it so: one that ended without completing
	// (FAILED, CANCELLED, TIMEOUT, NODE_FAIL …), or one Slurm itself says
	// will never start (DependencyNeverSatisfied) for a reason the jobs
	// given do not show.
	Root string
	// Via are the jobs between, nearest first: the job waits for Via[0],
	// which waits for Via[1] … which waits for Root; none when it waits
	// for Root itself.
	Via []string
}

// Stranded returns the pending jobs whose afterok dependencies reach,
// however many levels down, a job that ended without completing: Slurm
// keeps them PENDING forever. It marks only the first level itself
// (DependencyNeverSatisfied; the others stay "Dependency", waiting for a
// job that waits) unless the cluster sets kill_invalid_depend in
// SchedulerParameters, which cancels them instead.
//
// A dependency not among jobs, or in StateUnknown, is no reason: nothing
// says how it ended. Of several broken dependencies the first in After
// is named. A job Slurm already says never starts and whose dependencies
// the jobs do not explain is not in the result (JobInfo.NeverRuns
// settles it), but is the root of the jobs that wait for it.
func Stranded(jobs []DepJob) map[string]Strand {
	byID := make(map[string]DepJob, len(jobs))
	for _, j := range jobs {
		byID[j.ID] = j
	}
	out := map[string]Strand{}
	// broken[id] is the strand that keeps id from completing: for a job
	// that ended badly, itself.
	broken := map[string]*Strand{}
	visiting := map[string]bool{}
	var resolve func(id string) *Strand
	resolve = func(id string) *Strand {
		if s, ok := broken[id]; ok {
			return s
		}
		j, ok := byID[id]
		if !ok || visiting[id] {
			return nil
		}
		visiting[id] = true
		defer delete(visiting, id)
		var s *Strand
		switch {
		case IsTerminal(j.State):
			if baseState(j.State) != "COMPLETED" {
				s = &Strand{Root: id}
			}
		case baseState(j.State) == "PENDING":
			for _, d := range j.After {
				if ds := resolve(d); ds != nil {
					st := Strand{Root: ds.Root}
					if ds.Root != d {
						st.Via = append([]string{d}, ds.Via...)
					}
					out[id] = st
					s = &st
					break
				}
			}
			if s == nil && j.Reason == ReasonDependencyNeverSatisfied {
				s = &Strand{Root: id}
			}
		}
		broken[id] = s
		return s
	}
	for _, j := range jobs {
		resolve(j.ID)
	}
	return out
}
