package store

import (
	"maps"
	"slices"
	"time"

	"github.com/sbench/sbench/results"
)

// Run is one archived benchmark run (one ingested bundle).
type Run struct {
	ID   int64
	Hash string
	// System is the cluster the run came from: its "system" label when it
	// has one (sbench ingest --system, a campaign label), else the Slurm
	// cluster the runner recorded (results.Job.Cluster); "" when neither
	// says. One archive holds a site's clusters, told apart by it. Labels
	// carries it too, as "system": it is a label, whoever gave it.
	System   string
	Campaign string
	Variant  string
	Params   map[string]string
	Labels   map[string]string

	Benchmark string // campaign's benchmark name, e.g. "pingpong"
	Kind      string // "native" or "tool"
	Kernel    string // kernel or parser name, e.g. "latency", "osu"
	Command   []string
	Launcher  string
	// Tool is the program or suite that printed the run's output
	// ("IMB-MPI1", "osu-micro-benchmarks"), ToolBenchmark the benchmark
	// it ran ("IMB-MPI1 PingPong"; "" for a native kernel), both as
	// results.Benchmark.Normalized reads the bundle: the same for a run
	// of any sbench, wrapped or ingested from a file.
	Tool          string
	ToolBenchmark string
	ToolVer       string

	Status results.Status
	Error  string
	// Note is what an ok run says that did not fail it
	// (results.Bundle.Note); "" for most runs.
	Note string

	JobID      string
	Step       string
	ArrayIndex string
	// Restart is the job's restart count when the run was made: 0 for its
	// first attempt, k after Slurm requeued it k times.
	Restart      int
	Nodes        []string
	Tasks        int
	TasksPerNode string
	Hosts        []results.Host

	Start, End    time.Time
	RunnerVersion string
	Source        string // file the run was ingested from (Ingest's source)
	Origin        string // the bundle's own Source, e.g. the section of a multi-run file
	IngestedAt    time.Time
}

// Sample is one archived sample with the run it belongs to.
type Sample struct {
	RunID int64
	results.Sample
}

// Scalar is one archived scalar with the run it belongs to.
type Scalar struct {
	RunID int64
	results.Scalar
}

// Check is one archived validity check with the run it belongs to.
type Check struct {
	RunID int64
	results.Check
}

// Job is one submitted Slurm job of a campaign.
type Job struct {
	ID         int64 // archive's own id
	SlurmID    string
	Campaign   string
	Variants   []string // variants the job runs (one per step in steps mode)
	Name       string
	Script     string // path of the sbatch script that was submitted
	ResultsDir string // where the job's runner writes its bundles
	Submitted  time.Time
	State      string // Slurm job state, e.g. PENDING, RUNNING, COMPLETED, FAILED
	Reason     string
	ExitCode   string // Slurm's "code:signal"
	Start, End time.Time
	NodeList   string
	Updated    time.Time
	// Restarts is how often Slurm requeued the job (scontrol's Restarts).
	Restarts int
	// Output and Error are the job's output files as sbatch was given them
	// (patterns with %j, %x …; Error "" when stderr goes to Output).
	Output, Error string
	// Plan is what the job was submitted to run, one entry per step.
	Plan []PlannedStep
	// Intent is the comment sbatch was given, by which a job whose id was
	// never recorded (an interrupted submit) is found again; "" once it is.
	Intent string
	// Submission is the id sbench submit or sbench local gave every job it
	// recorded (sbench local --resume keeps the one it resumes); "" for
	// jobs recorded before submissions were (schema v8).
	Submission string
	// After are the Slurm ids of the jobs this one waits for
	// (--dependency=afterok): it starts only when all of them completed.
	After []string
}

// PlannedStep is one step a job was submitted to run: what must end in the
// archive as a run (or several, for node-pair placements), with a bundle
// or, failing that, as a failed run made from what is known.
type PlannedStep struct {
	// Task is the array task index, "" outside arrays; Step the step's
	// index in its job (or task), as the runner's --step starts.
	Task string `json:"task,omitempty"`
	Step string `json:"step"`
	// Pairs is the node-pair placement ("all", "both-directions",
	// "reference", "intra-inter"), which makes one launch per pair.
	Pairs     string `json:"pairs,omitempty"`
	Benchmark string `json:"benchmark"`
	Kind      string `json:"kind"`             // "native" or "tool"
	Kernel    string `json:"kernel,omitempty"` // native kernel
	Variant   string `json:"variant"`
	// Params and Labels are those the run's bundle would carry.
	Params map[string]string `json:"params,omitempty"`
	Labels map[string]string `json:"labels,omitempty"`
	Ranks  int               `json:"ranks"`
	Nodes  int               `json:"nodes"`
	// Limit is the step's time limit.
	Limit time.Duration `json:"limit,omitempty"`
}

// Filter selects runs; zero fields select everything. Lists select any of
// their values; fields select together (all must hold).
type Filter struct {
	Campaign string
	// Systems selects runs of any of these systems (Run.System). A label
	// "system" in Labels selects the same way: the system is the label.
	Systems []string
	RunIDs  []int64
	// Benchmark and Benchmarks select runs of any of these benchmarks.
	Benchmark  string
	Benchmarks []string
	// Labels selects runs whose every KEY has VALUE: a label, else a
	// parameter (a sweep's value: buf=16384, or param.buf=16384), else a
	// setting the variant's name gives (ntasks_per_node=2 of a sweep of
	// Slurm's ntasks_per_node); see Run.Setting.
	Labels map[string]string
	// Statuses selects runs with any of these statuses (ok, failed,
	// invalid).
	Statuses []results.Status
	// JobIDs selects the runs of these Slurm (or local) jobs.
	JobIDs []string
	// Launches selects the runs of any of these tasks, steps or attempts
	// of jobs (JobRef: 4242.3r1); with JobIDs, a run of either is
	// selected.
	Launches []JobRef
	// andLaunches are further Launches that must hold too (And of two
	// filters that both name launches).
	andLaunches [][]JobRef
	// ExcludeRunIDs leaves these runs out, whatever else selects them.
	ExcludeRunIDs []int64
	Since         time.Time
	Until         time.Time

	// nothing is set by And when the two filters cannot both hold.
	nothing bool
}

// And returns the filter selecting the runs both f and g select: a
// selector's runs narrowed by the filter flags, say.
func (f Filter) And(g Filter) Filter {
	out := f
	out.nothing = f.nothing || g.nothing
	switch {
	case g.Campaign == "":
	case f.Campaign == "":
		out.Campaign = g.Campaign
	case f.Campaign != g.Campaign:
		out.nothing = true
	}
	out.Benchmark, out.Benchmarks = "", intersect(f.benchmarks(), g.benchmarks(), &out.nothing)
	out.Systems = intersect(f.Systems, g.Systems, &out.nothing)
	switch {
	case len(f.Launches) > 0 && len(g.Launches)+len(g.JobIDs) > 0,
		len(g.Launches) > 0 && len(f.JobIDs) > 0:
		// Launches and job ids of both sides: each side's must hold.
		out.JobIDs, out.Launches = nil, nil
		out.andLaunches = append(append(slices.Clone(f.andLaunches), g.andLaunches...), f.jobRefs(), g.jobRefs())
	default:
		out.JobIDs = intersect(f.JobIDs, g.JobIDs, &out.nothing)
		out.Launches = append(slices.Clone(f.Launches), g.Launches...)
		out.andLaunches = append(slices.Clone(f.andLaunches), g.andLaunches...)
	}
	out.Statuses = intersect(f.Statuses, g.Statuses, &out.nothing)
	out.RunIDs = intersect(f.RunIDs, g.RunIDs, &out.nothing)
	if len(g.Labels) > 0 {
		out.Labels = maps.Clone(f.Labels)
		if out.Labels == nil {
			out.Labels = map[string]string{}
		}
		for k, v := range g.Labels {
			if w, ok := out.Labels[k]; ok && w != v {
				out.nothing = true
			}
			out.Labels[k] = v
		}
	}
	out.ExcludeRunIDs = append(slices.Clone(f.ExcludeRunIDs), g.ExcludeRunIDs...)
	if g.Since.After(f.Since) {
		out.Since = g.Since
	}
	if !g.Until.IsZero() && (f.Until.IsZero() || g.Until.Before(f.Until)) {
		out.Until = g.Until
	}
	return out
}

// intersect is what two lists of a filter select together: the other's
// values when one is empty, else those in both (none sets *nothing).
func intersect[T comparable](a, b []T, nothing *bool) []T {
	if len(a) == 0 || len(b) == 0 {
		return append(slices.Clone(a), b...)
	}
	var in []T
	for _, v := range a {
		if slices.Contains(b, v) {
			in = append(in, v)
		}
	}
	if len(in) == 0 {
		*nothing = true
	}
	return in
}

// benchmarks is every benchmark the filter names.
func (f Filter) benchmarks() []string {
	if f.Benchmark == "" {
		return f.Benchmarks
	}
	return append([]string{f.Benchmark}, f.Benchmarks...)
}

// IngestResult says what one Ingest call did.
type IngestResult struct {
	Added   []int64 // ids of runs added
	Skipped []int64 // ids of runs already in the archive (same content hash)
}

// Tally counts runs by how they ended, and when the first and the last of
// them started: what a summary of many runs says about them (sbench runs
// --group-by, a report's runs section).
type Tally struct {
	Runs, OK, Failed, Invalid int
	// First and Last are the earliest and latest start; zero when no run
	// says when it started.
	First, Last time.Time
}

// Add counts r.
func (t *Tally) Add(r *Run) {
	t.Runs++
	switch r.Status {
	case results.StatusFailed:
		t.Failed++
	case results.StatusInvalid:
		t.Invalid++
	default:
		t.OK++
	}
	if s := r.Start; !s.IsZero() {
		if t.First.IsZero() || s.Before(t.First) {
			t.First = s
		}
		if s.After(t.Last) {
			t.Last = s
		}
	}
}
