package store

import (
	"time"

	"github.com/sbench/sbench/results"
)

// Run is one archived benchmark run (one ingested bundle).
type Run struct {
	ID       int64
	Hash     string
	Campaign string
	Variant  string
	Params   map[string]string
	Labels   map[string]string

	Benchmark string // campaign's benchmark name, e.g. "pingpong"
	Kind      string // "native" or "tool"
	Kernel    string // kernel or parser name, e.g. "latency", "osu"
	Command   []string
	Launcher  string
	Tool      string
	ToolVer   string

	Status results.Status
	Error  string

	JobID        string
	Step         string
	ArrayIndex   string
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
}

// Filter selects runs; zero fields select everything.
type Filter struct {
	Campaign  string
	RunIDs    []int64
	Benchmark string
	Labels    map[string]string
	Since     time.Time
	Until     time.Time
}

// IngestResult says what one Ingest call did.
type IngestResult struct {
	Added   []int64 // ids of runs added
	Skipped []int64 // ids of runs already in the archive (same content hash)
}
