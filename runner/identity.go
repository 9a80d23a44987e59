package runner

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/sbench/sbench/slurm"
)

// Launchers, as Identity.Launcher and the bundle's Benchmark.Launcher name
// them.
const (
	LauncherSrun   = "srun"
	LauncherMpirun = "mpirun"
	LauncherLocal  = "local"
)

// LocalStepVar marks the ranks LocalStep starts: their SLURM_* variables
// are LocalStep's imitation of srun's, and the bundle says so.
const LocalStepVar = "SBENCH_LOCAL_STEP"

// Identity is who this process is in its job step, whatever launched it.
// The runner reads launcher variables nowhere else.
type Identity struct {
	// Launcher is LauncherSrun, LauncherMpirun or LauncherLocal.
	Launcher string
	// MPI names the MPI launcher's family under mpirun ("Open MPI",
	// "Hydra/PMI", "PMIx"), for messages.
	MPI       string
	Rank      int
	Size      int
	LocalRank int // -1 when the launcher does not say
	// NodeIndex is this node's position in Nodes; -1 until the bootstrap
	// when the launcher gives no node list (mpirun).
	NodeIndex int
	// NodeName is the launcher's name for the node: SLURMD_NODENAME under
	// srun (fake nodes of `sbench local` share one hostname but not a node
	// name), the hostname under mpirun.
	NodeName string
	// Nodes lists the step's nodes in the launcher's order. Under mpirun
	// the bootstrap fills it: nodes in order of first appearance by rank.
	Nodes []string
	// TasksPerNode is Slurm's compact form ("2(x2)"), kept for the bundle.
	TasksPerNode string
	// Distribution is how ranks were laid out on Nodes: "block" or "cyclic";
	// empty when the launcher does not say.
	Distribution string

	JobID      string
	StepID     string
	ArrayIndex string
	JobName    string
	Partition  string
	// Cluster is the Slurm cluster's name (SLURM_CLUSTER_NAME): the system
	// the run is archived under.
	Cluster string

	// Namespace is the MPI launcher's name for this run (Open MPI's job id,
	// the PMIx namespace), made safe for file names; it tells apart two
	// mpiruns of one job.
	Namespace string
	// SessionID, when set (--session), names the rendezvous instead of the
	// job and step ids.
	SessionID string
	// Restart is Slurm's restart count (SLURM_RESTART_COUNT): 0 on a job's
	// first run, k after k requeues.
	Restart int
}

// IdentityFromEnv reads this process's identity from its environment. An
// MPI launcher's variables win over Slurm's: under mpirun inside a batch
// job, SLURM_PROCID is the batch step's (0 on every rank), or the rank of
// the daemon mpirun started with srun, never the MPI rank. In order:
//
//   - Open MPI's mpirun: OMPI_COMM_WORLD_RANK, _SIZE, _LOCAL_RANK;
//     namespace OMPI_MCA_ess_base_jobid (4.x) or PMIX_NAMESPACE (5.x).
//   - MPICH/Intel MPI's Hydra and other PMI-1 launchers: PMI_RANK (PMI_ID
//     in Hydra's PMI_PORT mode), PMI_SIZE, MPI_LOCALRANKID. Slurm's
//     mpi/pmi2 plugin sets PMI_RANK too, with PMI_JOBID, which Hydra never
//     sets: that task was started by srun. Hydra exports no job name.
//   - A PMIx launcher: PMIX_RANK and PMIX_NAMESPACE, unless the namespace
//     is Slurm's ("slurm.pmix.JOB.STEP": srun --mpi=pmix). PMIx exports no
//     job size; without one the identity is an error.
//   - srun: SLURM_PROCID and the rest of SLURM_* (LauncherLocal when
//     LocalStepVar says LocalStep set them).
func IdentityFromEnv(getenv func(string) string) (Identity, error) {
	var id Identity
	var err error
	if l, ok := detectMPI(getenv); ok {
		id, err = mpiIdentity(getenv, l)
	} else {
		id, err = slurmIdentity(getenv)
	}
	// A task of a job array has its own SLURM_JOB_ID, but users (and sbench
	// submit) know the array by the id sbatch printed: record that one,
	// with the task index beside it.
	if a := strings.TrimSpace(getenv("SLURM_ARRAY_JOB_ID")); err == nil && a != "" && id.ArrayIndex != "" && safeID(a) {
		id.JobID = a
	}
	if err == nil {
		// Under mpirun too: a batch job is requeued whatever launches its
		// steps.
		id.Restart, err = restartCount(getenv)
	}
	return id, err
}

// restartCount reads SLURM_RESTART_COUNT, which Slurm sets in a requeued
// job: absent or 0 on the first attempt, k after k requeues. A value that
// is no count is refused rather than read as 0: attempt 0's bundles would
// be overwritten.
func restartCount(getenv func(string) string) (int, error) {
	v := strings.TrimSpace(getenv("SLURM_RESTART_COUNT"))
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || n > maxRestart {
		return 0, fmt.Errorf("%w: SLURM_RESTART_COUNT=%q is not a non-negative integer", ErrRestartCount, v)
	}
	return n, nil
}

// ErrRestartCount is IdentityFromEnv's error for a SLURM_RESTART_COUNT that
// is not a count: the launcher is known, its environment is wrong.
var ErrRestartCount = errors.New("bad restart count")

// mpiLauncher names the variables of one MPI launcher family.
type mpiLauncher struct {
	family    string
	rank      []string
	size      []string
	localRank []string
	namespace []string
}

var (
	openMPI = mpiLauncher{family: "Open MPI",
		rank: []string{"OMPI_COMM_WORLD_RANK"}, size: []string{"OMPI_COMM_WORLD_SIZE"},
		localRank: []string{"OMPI_COMM_WORLD_LOCAL_RANK"},
		namespace: []string{"OMPI_MCA_ess_base_jobid", "PMIX_NAMESPACE"}}
	hydraPMI = mpiLauncher{family: "Hydra/PMI",
		rank: []string{"PMI_RANK", "PMI_ID"}, size: []string{"PMI_SIZE"},
		localRank: []string{"MPI_LOCALRANKID"}}
	pmix = mpiLauncher{family: "PMIx",
		rank: []string{"PMIX_RANK"}, namespace: []string{"PMIX_NAMESPACE"}}
)

func detectMPI(getenv func(string) string) (mpiLauncher, bool) {
	set := func(name string) bool { return strings.TrimSpace(getenv(name)) != "" }
	switch {
	case set("OMPI_COMM_WORLD_RANK"):
		return openMPI, true
	case set("MPI_LOCALRANKID") && (set("PMI_RANK") || set("PMI_ID")),
		set("PMI_RANK") && !set("PMI_JOBID"):
		return hydraPMI, true
	case set("PMIX_RANK") && !strings.HasPrefix(strings.TrimSpace(getenv("PMIX_NAMESPACE")), "slurm.pmix."):
		return pmix, true
	}
	return mpiLauncher{}, false
}

func mpiIdentity(getenv func(string) string, l mpiLauncher) (Identity, error) {
	var errs []string
	// num returns the first of names that is set, or -1 when none is.
	num := func(names []string) int {
		n, set, err := slurm.EnvCount(getenv, names...)
		if err != nil {
			errs = append(errs, err.Error())
		}
		if err != nil || !set {
			return -1
		}
		return n
	}
	id := Identity{
		Launcher: LauncherMpirun, MPI: l.family,
		Rank: num(l.rank), Size: num(l.size), LocalRank: num(l.localRank), NodeIndex: -1,
		JobID:      slurm.FirstEnv(getenv, "SLURM_JOB_ID", "SLURM_JOBID"),
		ArrayIndex: slurm.FirstEnv(getenv, "SLURM_ARRAY_TASK_ID"),
		JobName:    slurm.FirstEnv(getenv, "SLURM_JOB_NAME"),
		Partition:  slurm.FirstEnv(getenv, "SLURM_JOB_PARTITION"),
		Cluster:    slurm.FirstEnv(getenv, "SLURM_CLUSTER_NAME"),
		Namespace:  safeName(slurm.FirstEnv(getenv, l.namespace...)),
	}
	if id.Rank < 0 && len(errs) == 0 {
		errs = append(errs, l.rank[0]+" is not set")
	}
	if id.Size < 0 && len(errs) == 0 {
		if len(l.size) == 0 {
			errs = append(errs, fmt.Sprintf("%s launcher exports PMIX_RANK but no job size (PMIx passes it through its API, not the environment): start the runner with Open MPI's mpirun, mpiexec.hydra or srun", l.family))
		} else {
			errs = append(errs, l.size[0]+" is not set")
		}
	}
	if len(errs) == 0 {
		if id.Size == 0 {
			errs = append(errs, l.size[0]+" is 0")
		} else if id.Rank >= id.Size {
			errs = append(errs, fmt.Sprintf("%s=%d is not below %s=%d", l.rank[0], id.Rank, l.size[0], id.Size))
		}
	}
	// The hostname, not SLURMD_NODENAME: Hydra passes the launching node's
	// whole environment to every rank, SLURMD_NODENAME included.
	host, err := os.Hostname()
	if err != nil || host == "" {
		errs = append(errs, fmt.Sprintf("no hostname: %v", err))
	}
	id.NodeName = host
	if len(errs) > 0 {
		return Identity{}, fmt.Errorf("%s environment: %s", l.family, strings.Join(errs, "; "))
	}
	return id, nil
}

func slurmIdentity(getenv func(string) string) (Identity, error) {
	sid, err := slurm.IdentityFromEnv(getenv)
	if err != nil {
		return Identity{}, err
	}
	id := Identity{
		Launcher:     LauncherSrun,
		Rank:         sid.Rank,
		Size:         sid.Size,
		LocalRank:    sid.LocalRank,
		NodeIndex:    sid.NodeIndex,
		NodeName:     sid.NodeName,
		Nodes:        sid.Nodes,
		TasksPerNode: sid.TasksPerNode,
		Distribution: "block",
		JobID:        sid.JobID,
		StepID:       sid.StepID,
		ArrayIndex:   sid.ArrayTask,
		JobName:      strings.TrimSpace(getenv("SLURM_JOB_NAME")),
		Partition:    strings.TrimSpace(getenv("SLURM_JOB_PARTITION")),
		Cluster:      strings.TrimSpace(getenv("SLURM_CLUSTER_NAME")),
	}
	if getenv(LocalStepVar) == "1" {
		id.Launcher = LauncherLocal
	}
	// SLURM_DISTRIBUTION is "block", "cyclic", "cyclic:block", "plane=4" …;
	// only the node level (before ':') places ranks on nodes.
	if d, _, _ := strings.Cut(getenv("SLURM_DISTRIBUTION"), ":"); strings.TrimSpace(d) == "cyclic" {
		id.Distribution = "cyclic"
	}
	if err := id.Validate(); err != nil {
		return Identity{}, err
	}
	return id, nil
}

// safeName makes a launcher's namespace fit in a file name: PMIx writes
// "prterun-host-1234@1", which must not bring '@' or '/' along.
func safeName(s string) string {
	if s == "" {
		return ""
	}
	b := []byte(s)
	for i, c := range b {
		if !idChar(c) {
			b[i] = '-'
		}
	}
	if len(b) > 64 {
		b = b[len(b)-64:] // the tail: launchers put the counter there
	}
	return string(b)
}

// safeID reports whether a job or step id may appear in file names.
// (Not a regexp: compiling one at init costs a millisecond of every rank's
// start.)
func safeID(s string) bool {
	return s != "" && len(s) <= 64 && !strings.ContainsFunc(s, func(c rune) bool { return c > 0x7f || !idChar(byte(c)) })
}

// idChar reports whether c may appear in a job or step id.
func idChar(c byte) bool { return isAlnum(c) || c == '_' || c == '+' || c == '-' }

// CheckSession refuses a session id (--session) that is unsafe in a file
// name: 1 to 128 letters, digits, '_', '+', '-' and '.', starting with a
// letter or digit, without "..". A requeued job's session (Identity.Session)
// adds ".r<k>" to it, within the same rules but for the length.
func CheckSession(s string) error {
	return checkSession(s, maxSession)
}

const (
	maxSession = 128
	maxRestart = 1<<31 - 1 // Slurm's restart count is a uint32
)

func checkSession(s string, max int) error {
	if !safeFileName(s, max) {
		return fmt.Errorf("session %q: use 1 to %d letters, digits, '_', '+', '-' or '.', starting with a letter or digit", s, max)
	}
	return nil
}

// restartSuffix is ".r<k>" for attempt k of a requeued job, "" for the
// first attempt, whose names stay as they always were.
func restartSuffix(k int) string {
	if k <= 0 {
		return ""
	}
	return ".r" + strconv.Itoa(k)
}

// safeFileName reports whether s is 1 to max letters, digits, '_', '+',
// '-' and '.', starting with a letter or digit, without "..".
func safeFileName(s string, max int) bool {
	return s != "" && len(s) <= max && isAlnum(s[0]) && !strings.Contains(s, "..") &&
		!strings.ContainsFunc(s, func(c rune) bool { return c > 0x7f || !idChar(byte(c)) && c != '.' })
}

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// Validate checks what the runner will put in file names, and that the
// ranks can agree on a session.
func (id Identity) Validate() error {
	if id.JobID != "" && !safeID(id.JobID) || id.JobID == "" && id.Launcher != LauncherMpirun {
		return fmt.Errorf("job id %q: only letters, digits, '_', '+' and '-' are allowed", id.JobID)
	}
	if id.StepID != "" && !safeID(id.StepID) {
		return fmt.Errorf("step id %q: only letters, digits, '_', '+' and '-' are allowed", id.StepID)
	}
	if id.SessionID == "" && id.Launcher == LauncherMpirun && id.Namespace == "" {
		return errors.New(id.MPI + " exports no job namespace the ranks could meet under: pass --session ID, the same on every rank")
	}
	if id.Restart < 0 || id.Restart > maxRestart {
		return fmt.Errorf("restart count %d is out of range", id.Restart)
	}
	if id.SessionID != "" {
		// The user's part, at the user's limit.
		if err := CheckSession(id.SessionID); err != nil {
			return err
		}
	}
	return checkSession(id.Session(), maxSession+len(restartSuffix(maxRestart)))
}

// Step returns the step id as it appears in file names: --step, else
// Slurm's step id, or "batch" for a task started outside any srun step.
func (id Identity) Step() string {
	if id.StepID == "" {
		return "batch"
	}
	return id.StepID
}

// job is the job id as it appears in file names: "mpirun" outside Slurm.
func (id Identity) job() string {
	switch {
	case id.JobID == "":
		return "mpirun"
	case id.ArrayIndex != "":
		return id.JobID + "_" + id.ArrayIndex // Slurm's own name of an array task
	}
	return id.JobID
}

// Session names the run, e.g. "4242.0": the rendezvous file is named after
// it and connections are bound to it. --session sets it; else srun's job
// and step ids, or under mpirun the job id and the launcher's namespace.
// Attempt k of a requeued job appends ".r<k>" ("4242.0.r1"), --session or
// not: the ranks of a rerun must neither read the address file a dead
// attempt left behind nor meet its stragglers.
func (id Identity) Session() string {
	var s string
	switch {
	case id.SessionID != "":
		s = id.SessionID
	case id.Launcher == LauncherMpirun:
		s = id.job() + "." + id.Namespace
	default:
		s = id.job() + "." + id.Step()
	}
	return s + restartSuffix(id.Restart)
}

// fileStem is what bundle names start with: job (with the attempt of a
// requeued job) and step ids, or the session under an mpirun given no
// --step.
func (id Identity) fileStem() string {
	if id.Launcher == LauncherMpirun && id.StepID == "" {
		return id.Session()
	}
	return id.job() + restartSuffix(id.Restart) + "." + id.Step()
}

// ExpectedNode returns the node the launcher places rank on, from the node
// list, the tasks per node and the distribution, or "?" when they do not
// say. It is how rank 0 names the node of a rank that never showed up.
func (id Identity) ExpectedNode(rank int) string {
	if id.Distribution == "" {
		return "?"
	}
	idx := nodeOfRank(rank, id.Size, id.Nodes, id.TasksPerNode, id.Distribution)
	if idx < 0 {
		return "?"
	}
	return id.Nodes[idx]
}

// nodeOfRank is the index in nodes of the node holding rank, or -1.
func nodeOfRank(rank, size int, nodes []string, tasksPerNode, distribution string) int {
	if rank < 0 || rank >= size || len(nodes) == 0 {
		return -1
	}
	counts, err := slurm.ExpandTasksPerNode(tasksPerNode)
	if err != nil || len(counts) != len(nodes) || sum(counts) != size {
		// Without a usable count, assume srun's default: as even as possible,
		// the first nodes taking one more.
		counts = make([]int, len(nodes))
		for i := range counts {
			counts[i] = size / len(nodes)
			if i < size%len(nodes) {
				counts[i]++
			}
		}
	}
	if distribution == "cyclic" {
		left := slices.Clone(counts)
		r := 0
		for {
			progress := false
			for i := range left {
				if left[i] == 0 {
					continue
				}
				if r == rank {
					return i
				}
				left[i]--
				r++
				progress = true
			}
			if !progress {
				return -1
			}
		}
	}
	for i, c := range counts {
		if rank < c {
			return i
		}
		rank -= c
	}
	return -1
}

func sum(xs []int) int {
	s := 0
	for _, x := range xs {
		s += x
	}
	return s
}
