package results

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Schema names the version of the bundle format this package writes. A reader
// refuses any other value, so an incompatible change must bump it.
const Schema = "sbench.result/v1"

// Status of a run.
type Status string

const (
	// StatusOK means the benchmark ran and every check passed.
	StatusOK Status = "ok"
	// StatusFailed means the benchmark did not complete (a rank died, the tool
	// exited non-zero, a deadline passed); whatever was measured is kept.
	StatusFailed Status = "failed"
	// StatusInvalid means the benchmark completed but its result must not be
	// trusted (an HPL residual check failed, an OSU validation failed).
	StatusInvalid Status = "invalid"
)

// Valid reports whether s is one of the known statuses.
func (s Status) Valid() bool {
	return s == StatusOK || s == StatusFailed || s == StatusInvalid
}

// Bundle is one benchmark run: one job step of a campaign, or one run found
// in a tool's output file that a user ingested by hand. A field added to
// v1, here or in the types a bundle holds, is omitted when empty
// (omitempty), so that bundles without it are unchanged and v1 readers
// and writers agree.
type Bundle struct {
	Schema   string            `json:"schema"`
	Campaign string            `json:"campaign,omitempty"`
	Variant  string            `json:"variant,omitempty"`
	Params   map[string]string `json:"params,omitempty"`
	Labels   map[string]string `json:"labels,omitempty"`

	Job Job `json:"job"`

	Start time.Time `json:"start"`
	End   time.Time `json:"end"`

	RunnerVersion string `json:"runner_version,omitempty"`
	Hosts         []Host `json:"hosts,omitempty"`

	Benchmark Benchmark `json:"benchmark"`

	Status Status `json:"status"`
	Error  string `json:"error,omitempty"`
	// Note says what a reader of an ok run must know that does not make
	// it fail: a rank whose command exited non-zero after the reporting
	// rank's output was complete (NetPIPE's receiver, which exits 3 on
	// its closing handshake).
	Note string `json:"note,omitempty"`

	Samples []Sample `json:"samples,omitempty"`
	Scalars []Scalar `json:"scalars,omitempty"`
	Checks  []Check  `json:"checks,omitempty"`

	// Source names where the run came from when it was not written by the
	// runner: the ingested file and, for files holding several runs, the
	// section (e.g. "use erdma for osu_lat").
	Source string `json:"source,omitempty"`
	// Raw is the tool's output (or an excerpt of it), kept so every number
	// can be traced back to what the tool printed; a wrapped tool's is
	// followed by the tails of its ranks' standard error, each under a
	// line that starts with StderrTailMark (ToolOutput leaves them out).
	Raw string `json:"raw,omitempty"`
}

// Job places a run in Slurm.
type Job struct {
	ID         string `json:"id,omitempty"`
	Step       string `json:"step,omitempty"`
	ArrayIndex string `json:"array_index,omitempty"`
	Name       string `json:"name,omitempty"`
	Partition  string `json:"partition,omitempty"`
	// Cluster is the Slurm cluster the job ran on (SLURM_CLUSTER_NAME):
	// the system the run belongs to, so that one archive holds a site's
	// clusters.
	Cluster string   `json:"cluster,omitempty"`
	Nodes   []string `json:"nodes,omitempty"`
	Tasks   int      `json:"tasks,omitempty"`
	// TasksPerNode is Slurm's compact form, e.g. "2(x2)" or "3,1".
	TasksPerNode string `json:"tasks_per_node,omitempty"`
	// Restart is Slurm's restart count (SLURM_RESTART_COUNT) of the attempt
	// that wrote the bundle: 0 for the first run of the job, k after k
	// requeues. A requeued job reruns its steps, and each attempt's bundle
	// is a run of its own.
	Restart int `json:"restart,omitempty"`
}

// Host is what one node of a run was.
type Host struct {
	Hostname    string   `json:"hostname"`
	NodeName    string   `json:"node_name,omitempty"`
	Ranks       []int    `json:"ranks,omitempty"`
	CPUModel    string   `json:"cpu_model,omitempty"`
	Sockets     int      `json:"sockets,omitempty"`
	Cores       int      `json:"cores,omitempty"`
	Threads     int      `json:"threads,omitempty"`
	CPUFlags    []string `json:"cpu_flags,omitempty"`
	Governor    string   `json:"governor,omitempty"`
	MemoryBytes uint64   `json:"memory_bytes,omitempty"`
	NUMANodes   int      `json:"numa_nodes,omitempty"`
	Kernel      string   `json:"kernel,omitempty"`
	OS          string   `json:"os,omitempty"`
	// MPI is the MPI the node's launcher in PATH names (mpirun --version).
	MPI string `json:"mpi,omitempty"`
	// MPILibrary is the MPI library the wrapped tool loads on this node,
	// as the dynamic loader resolves it (e.g. "Open MPI 4.1.4"), and
	// MPILibraryPath where it found it: what ran, which may not be the
	// launcher's. Empty for native kernels and tools without MPI; a
	// library whose version sbench cannot read has a path alone.
	MPILibrary     string            `json:"mpi_library,omitempty"`
	MPILibraryPath string            `json:"mpi_library_path,omitempty"`
	Modules        []string          `json:"modules,omitempty"`
	IB             []IBPort          `json:"ib,omitempty"`
	Net            []NetIf           `json:"net,omitempty"`
	Extra          map[string]string `json:"extra,omitempty"`
	// Traffic names the network interfaces this node's ranks' connections
	// to other ranks crossed in this run, as Net names them: the local
	// end's interface, or the loopback interface (lo, which Net leaves
	// out) for a connection to a rank on the same machine, which Linux
	// routes through it whatever address it dialled. The runner's native kernels record it;
	// a report quotes a link rate only for these interfaces (no rate for
	// loopback). Empty when not recorded (a wrapped tool's own traffic,
	// an ingested run, a runner before it) or when this node's ranks
	// exchanged no data.
	Traffic []string `json:"traffic,omitempty"`
}

// IBPort is one InfiniBand/RoCE port as /sys/class/infiniband describes it.
type IBPort struct {
	Device    string  `json:"device"`
	Port      int     `json:"port"`
	State     string  `json:"state,omitempty"`
	Rate      string  `json:"rate,omitempty"`
	RateGbps  float64 `json:"rate_gbps,omitempty"`
	LinkLayer string  `json:"link_layer,omitempty"`
	Firmware  string  `json:"firmware,omitempty"`
}

// NetIf is one network interface as /sys/class/net describes it.
type NetIf struct {
	Name      string `json:"name"`
	SpeedMbps int    `json:"speed_mbps,omitempty"`
	MTU       int    `json:"mtu,omitempty"`
	State     string `json:"state,omitempty"`
}

// Benchmark says what ran: a native runner kernel or a wrapped tool.
type Benchmark struct {
	// Name is the campaign's name for the benchmark (e.g. "pingpong"); for
	// a tool's output ingested from a file, the parser's name for the run,
	// as ToolBenchmark.
	Name string `json:"name"`
	// Kind is "native" for a runner kernel, "tool" for a wrapped command or an
	// ingested tool output.
	Kind string `json:"kind"`
	// Kernel names the native kernel or the parser (e.g. "latency", "osu");
	// "exec" for a tool the runner wrapped.
	Kernel   string   `json:"kernel,omitempty"`
	Command  []string `json:"command,omitempty"`
	Launcher string   `json:"launcher,omitempty"`
	// Tool is the program or suite that printed the output, as its parser
	// names it ("IMB-MPI1", "osu-micro-benchmarks", "hpcc", "NetPIPE",
	// "ib_write_bw"): the same for a run the runner wrapped and for its
	// output ingested from a file. Runners before ToolBenchmark existed
	// wrote the tool's benchmark here; Normalized reads their bundles.
	Tool string `json:"tool,omitempty"`
	// ToolBenchmark is the benchmark the tool ran, as its parser names it
	// ("IMB-MPI1 PingPong", "osu_latency", "hpcc-hpl", "NPtcp"). One
	// output can hold several (IMB's "# Benchmarking" tables, an OSU
	// suite's log, HPCC's HPL and its summary), each a run of its own and
	// a configuration of its own whatever the campaign's benchmark is
	// called. Empty for a native kernel.
	ToolBenchmark string `json:"tool_benchmark,omitempty"`
	ToolVersion   string `json:"tool_version,omitempty"`
	// Extract is the campaign's user-defined metrics and sanity patterns
	// the run's output was read with, kept so that it can be read again
	// (sbench ingest --reparse).
	Extract *Extract `json:"extract,omitempty"`
}

// Normalized returns b with Tool and ToolBenchmark as this sbench writes
// them, for a bundle of any sbench: the archive reads bundles written
// before ToolBenchmark existed through it, at ingest and in the migration
// that gave runs their tool benchmark, so that an old run and a new one
// of the same output are the same configuration.
//
//   - A bundle that names its ToolBenchmark is read as written.
//   - A tool the runner wrapped (Kind "tool", Kernel "exec") had the
//     parser's name for the run in Tool: that is the tool's benchmark, and
//     the tool is the one that name belongs to ("IMB-MPI1 PingPong" was
//     run by IMB-MPI1, "osu_latency" by osu-micro-benchmarks).
//   - Any other tool run is an output ingested from a file, which its
//     parser named: Name is the tool's benchmark.
//   - A native kernel ran no tool.
//
// These rules read bundles already written and must never change.
func (b Benchmark) Normalized() Benchmark {
	switch {
	case b.ToolBenchmark != "" || b.Kind != "tool":
	case b.Kernel == "exec":
		b.ToolBenchmark, b.Tool = b.Tool, legacyTool(b.Tool)
	default:
		b.ToolBenchmark = b.Name
	}
	return b
}

// legacyTool is the tool whose parser names a run name, for the bundles
// of runners that wrote that name as the tool: the parsers' names as they
// were when ToolBenchmark was added (parsers' TestToolOfEveryRun checks
// every fixture against it). A name of no known tool (perftest's
// programs, which are their own tool) is its own tool.
func legacyTool(name string) string {
	switch {
	case strings.HasPrefix(name, "IMB"):
		tool, _, _ := strings.Cut(name, " ")
		return tool
	case strings.HasPrefix(name, "osu_") || strings.HasPrefix(name, "OSU "):
		return "osu-micro-benchmarks"
	case name == "hpl":
		return "xhpl"
	case name == "hpcc" || name == "hpcc-hpl":
		return "hpcc"
	case name == "sockperf latency" || name == "sockperf throughput":
		return "sockperf"
	case name == "perf_main" || strings.HasPrefix(name, "perf_main "):
		return "perf_main"
	case strings.HasPrefix(name, "NP") || name == "netpipe":
		return "NetPIPE"
	}
	return name
}

// Sample is one measured point: a metric at a position x (message size in
// bytes, rank count …), or a value with no x.
type Sample struct {
	Metric string `json:"metric"`
	Unit   string `json:"unit"`
	// X is the position on the sample's axis; nil for a point with none.
	X     *float64 `json:"x,omitempty"`
	XUnit string   `json:"x_unit,omitempty"`
	Value float64  `json:"value"`

	Min        *float64 `json:"min,omitempty"`
	Max        *float64 `json:"max,omitempty"`
	P50        *float64 `json:"p50,omitempty"`
	P99        *float64 `json:"p99,omitempty"`
	Iterations int      `json:"iterations,omitempty"`
	// Repeat numbers repetitions of the same measurement, from 0.
	Repeat int `json:"repeat,omitempty"`
	// Pair is the (from, to) rank pair of a point-to-point measurement.
	Pair []int `json:"pair,omitempty"`
	// Tags qualify a sample further (e.g. "direction": "n1->n2").
	Tags map[string]string `json:"tags,omitempty"`
}

// Scalar is one named figure of a run (HPL's N, Gflops, residual …).
type Scalar struct {
	Name  string  `json:"name"`
	Unit  string  `json:"unit,omitempty"`
	Value float64 `json:"value"`
}

// Check is one validity check of a run.
type Check struct {
	Name      string  `json:"name"`
	Value     float64 `json:"value"`
	Threshold float64 `json:"threshold"`
	// Op is the comparison that must hold for the check to pass: value Op threshold.
	Op     string `json:"op,omitempty"`
	Passed bool   `json:"passed"`
}

// Units used across sbench. MB/s is 10^6 bytes per second, as OSU prints it.
const (
	UnitMicroseconds = "us"
	UnitMBps         = "MB/s"
	UnitBytes        = "bytes"
	UnitRanks        = "ranks"
	UnitSeconds      = "s"
)

// MetricWallTime is the wall-clock time of a wrapped command that has no
// parser (parser "none"), in UnitSeconds: its one figure, lower is better
// (BetterFor), as any time is.
const MetricWallTime = "wall_time"

// Better says in which direction a metric improves.
type Better int

const (
	// BetterUnknown is for figures with no direction (a count, a size).
	BetterUnknown Better = iota
	// BetterHigher is for throughput-like figures.
	BetterHigher
	// BetterLower is for time-like figures.
	BetterLower
)

// BetterFor returns the direction of improvement for a unit, so that compare
// and history never guess it from a metric's name.
func BetterFor(unit string) Better {
	switch strings.ToLower(unit) {
	case "us", "ms", "s", "ns", "usec", "sec", "seconds":
		return BetterLower
	case "mb/s", "mib/s", "gb/s", "gbps", "mbps", "bps", "gflops", "tflops", "gups", "msg/s", "messages/s",
		"mbytes/sec", "mpps", "transactions/s", "bit/s", "pkt/s", "packets/s":
		return BetterHigher
	}
	if IsRate(unit) {
		return BetterHigher
	}
	return BetterUnknown
}

// F returns a pointer to v, for the optional fields of Sample.
func F(v float64) *float64 { return &v }

// New returns a bundle with the schema set.
func New() *Bundle { return &Bundle{Schema: Schema, Status: StatusOK} }

// FieldError is a problem with one field of a bundle.
type FieldError struct {
	Field string
	Msg   string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Msg }

// Validate checks a bundle's invariants; it returns every problem found,
// joined, so that a user sees them all at once.
func (b *Bundle) Validate() error {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, &FieldError{Field: field, Msg: fmt.Sprintf(format, args...)})
	}
	if b.Schema != Schema {
		bad("schema", "is %q, want %q", b.Schema, Schema)
	}
	if !b.Status.Valid() {
		bad("status", "is %q, want ok, failed or invalid", b.Status)
	}
	if b.Benchmark.Name == "" {
		bad("benchmark.name", "is empty")
	}
	if b.Status == StatusFailed && b.Error == "" {
		bad("error", "is empty for a failed run")
	}
	if b.Job.Restart < 0 {
		bad("job.restart", "is %d, want 0 or more", b.Job.Restart)
	}
	if !b.End.IsZero() && b.End.Before(b.Start) {
		bad("end", "%s is before start %s", b.End.Format(time.RFC3339), b.Start.Format(time.RFC3339))
	}
	// A NUL in a key is never a name, and SQLite's JSON functions, which
	// the archive reads labels and parameters back with, end a key there:
	// the label would come back under another name (found by
	// store's FuzzIngestRoundTrip).
	for _, f := range []struct {
		name string
		m    map[string]string
	}{{"labels", b.Labels}, {"params", b.Params}} {
		for _, k := range slices.Sorted(maps.Keys(f.m)) {
			if strings.IndexByte(k, 0) >= 0 {
				bad(f.name, "key %q contains a NUL byte", k)
			}
		}
	}
	for i, s := range b.Samples {
		f := fmt.Sprintf("samples[%d]", i)
		if s.Metric == "" {
			bad(f+".metric", "is empty")
		}
		if !finite(s.Value) {
			bad(f+".value", "is not a finite number")
		}
		if s.X != nil && !finite(*s.X) {
			bad(f+".x", "is not a finite number")
		}
		for _, o := range []*float64{s.Min, s.Max, s.P50, s.P99} {
			if o != nil && !finite(*o) {
				bad(f, "has a statistic that is not a finite number")
				break
			}
		}
	}
	for i, s := range b.Scalars {
		if s.Name == "" {
			bad(fmt.Sprintf("scalars[%d].name", i), "is empty")
		}
		if !finite(s.Value) {
			bad(fmt.Sprintf("scalars[%d].value", i), "is not a finite number")
		}
	}
	for i, c := range b.Checks {
		if c.Name == "" {
			bad(fmt.Sprintf("checks[%d].name", i), "is empty")
		}
	}
	return errors.Join(errs...)
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// Marshal returns the JSON encoding of b, ending in a newline.
func Marshal(b *Bundle) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(b); err != nil {
		return nil, fmt.Errorf("encode bundle: %w", err)
	}
	return buf.Bytes(), nil
}

// Decode reads one bundle, refusing unknown fields and other schema versions.
func Decode(r io.Reader) (*Bundle, error) {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	var b Bundle
	if err := dec.Decode(&b); err != nil {
		return nil, fmt.Errorf("decode bundle: %w", err)
	}
	if dec.More() {
		return nil, errors.New("decode bundle: trailing data after the bundle")
	}
	if err := b.Validate(); err != nil {
		return nil, fmt.Errorf("invalid bundle: %w", err)
	}
	return &b, nil
}

// ReadFile decodes the bundle stored in path.
func ReadFile(path string) (*Bundle, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := Decode(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return b, nil
}

// Canonical returns b as it is hashed and archived: without a
// ToolBenchmark that says only what a reader of the bundle without it
// takes (Benchmark.Normalized: an ingested output's Name), which is no
// content of its own. A tool's output ingested before parsers named its
// tool benchmark and again after is one run, which the archive skips the
// second time. b is not changed; it is returned when nothing is left out.
func Canonical(b *Bundle) *Bundle {
	tb := b.Benchmark.ToolBenchmark
	if tb == "" {
		return b
	}
	without := b.Benchmark
	without.ToolBenchmark = ""
	if n := without.Normalized(); n.ToolBenchmark != tb || n.Tool != b.Benchmark.Tool {
		return b
	}
	c := *b
	c.Benchmark = without
	return &c
}

// Hash returns a content hash of b: two bundles with the same content have
// the same hash, whatever file they were read from. It hashes b's
// Canonical form.
func Hash(b *Bundle) (string, error) {
	b = Canonical(b)
	data, err := json.Marshal(b)
	if err != nil {
		return "", fmt.Errorf("hash bundle: %w", err)
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:]), nil
}

// WriteFile writes b to path atomically: into a temporary file in the same
// directory, synced, then renamed over path. A reader never sees a partial
// bundle, and a crash leaves either the old file or the new one.
func WriteFile(path string, b *Bundle) error {
	if err := b.Validate(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	data, err := Marshal(b)
	if err != nil {
		return err
	}
	return WriteAtomic(path, data, 0o644)
}

// WriteAtomic writes data to path through a temporary file and a rename.
func WriteAtomic(path string, data []byte, perm os.FileMode) error {
	f, err := CreateAtomic(path, perm)
	if err != nil {
		return err
	}
	defer f.Abort()
	if _, err := f.Write(data); err != nil {
		return err
	}
	return f.Commit()
}

// AtomicFile is a file being written to a temporary name beside its own:
// Commit gives it its name, complete, or Abort removes it. A reader never
// sees part of it, and a writer that stops half way leaves the old file as
// it was. It lets a large file (a report, an archive export) be written as
// it is made rather than held in memory first.
type AtomicFile struct {
	path string
	perm os.FileMode
	tmp  *os.File
	done bool
}

// CreateAtomic starts writing path.
func CreateAtomic(path string, perm os.FileMode) (*AtomicFile, error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return nil, fmt.Errorf("write %s: %w", path, err)
	}
	return &AtomicFile{path: path, perm: perm, tmp: tmp}, nil
}

func (f *AtomicFile) Write(p []byte) (int, error) {
	n, err := f.tmp.Write(p)
	if err != nil {
		return n, fmt.Errorf("write %s: %w", f.path, err)
	}
	return n, nil
}

// Commit syncs the file and renames it to its path.
func (f *AtomicFile) Commit() error {
	if f.done {
		return fmt.Errorf("write %s: already committed or aborted", f.path)
	}
	for _, step := range []func() error{func() error { return f.tmp.Chmod(f.perm) }, f.tmp.Sync, f.tmp.Close} {
		if err := step(); err != nil {
			f.Abort()
			return fmt.Errorf("write %s: %w", f.path, err)
		}
	}
	if err := os.Rename(f.tmp.Name(), f.path); err != nil {
		f.Abort()
		return fmt.Errorf("write %s: %w", f.path, err)
	}
	f.done = true
	if d, err := os.Open(filepath.Dir(f.path)); err == nil {
		d.Sync() // best effort: make the rename durable
		d.Close()
	}
	return nil
}

// Abort removes the temporary file, unless Commit named it; it may be
// deferred.
func (f *AtomicFile) Abort() {
	if f.done {
		return
	}
	f.done = true
	f.tmp.Close()
	os.Remove(f.tmp.Name())
}

// StderrTailMark starts the line over a rank's standard error that the
// runner appends to a wrapped tool's output in Raw:
// "==> standard error of rank 1: NPtcp … <==".
const StderrTailMark = "==> standard error of rank "

// ToolOutput is the tool's output in a run's Raw, without the tails of the
// ranks' standard error after it.
func ToolOutput(raw string) string {
	if strings.HasPrefix(raw, StderrTailMark) {
		return ""
	}
	if i := strings.Index(raw, "\n"+StderrTailMark); i >= 0 {
		return raw[:i+1]
	}
	return raw
}
