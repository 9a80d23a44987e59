package runner

import (
	"fmt"
	"strings"

	"github.com/sbench/sbench/slurm"
)

// Identity is who this process is in its job step, whatever launched it.
// Slurm's srun is the only launcher today; mpirun (OMPI_COMM_WORLD_RANK,
// PMI_RANK, PMIX_RANK) is meant to fill the same struct, which is why the
// runner never reads SLURM_* variables outside IdentityFromEnv.
type Identity struct {
	// Launcher names where the identity came from ("slurm").
	Launcher  string
	Rank      int
	Size      int
	LocalRank int
	// NodeIndex is this node's position in Nodes.
	NodeIndex int
	// NodeName is the launcher's name for the node; fake nodes of
	// `sbench local` share one hostname but not a node name.
	NodeName string
	// Nodes lists the step's nodes in the launcher's order.
	Nodes []string
	// TasksPerNode is Slurm's compact form ("2(x2)"), kept for the bundle.
	TasksPerNode string
	// Distribution is how ranks were laid out on Nodes: "block" or "cyclic".
	Distribution string

	JobID      string
	StepID     string
	ArrayIndex string
	JobName    string
	Partition  string
}

// IdentityFromEnv reads this process's identity from its environment.
func IdentityFromEnv(getenv func(string) string) (Identity, error) {
	sid, err := slurm.IdentityFromEnv(getenv)
	if err != nil {
		return Identity{}, err
	}
	id := Identity{
		Launcher:     "slurm",
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
	}
	// SLURM_DISTRIBUTION is "block", "cyclic", "cyclic:block", "plane=4" …;
	// only the node level (before ':') places ranks on nodes.
	if d, _, _ := strings.Cut(getenv("SLURM_DISTRIBUTION"), ":"); strings.TrimSpace(d) == "cyclic" {
		id.Distribution = "cyclic"
	}
	if err := id.check(); err != nil {
		return Identity{}, err
	}
	return id, nil
}

// safeID reports whether a job or step id may appear in file names.
// (Not a regexp: compiling one at init costs a millisecond of every rank's
// start.)
func safeID(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, c := range []byte(s) {
		if !isAlnum(c) && c != '_' && c != '+' && c != '-' {
			return false
		}
	}
	return true
}

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

func (id Identity) check() error {
	if !safeID(id.JobID) {
		return fmt.Errorf("job id %q: only letters, digits, '_', '+' and '-' are allowed", id.JobID)
	}
	if id.StepID != "" && !safeID(id.StepID) {
		return fmt.Errorf("step id %q: only letters, digits, '_', '+' and '-' are allowed", id.StepID)
	}
	return nil
}

// Step returns the step id as it appears in file names: Slurm's name for
// the step, or "batch" for a task started outside any srun step.
func (id Identity) Step() string {
	if id.StepID == "" {
		return "batch"
	}
	return id.StepID
}

// Session names the job step, e.g. "4242.0"; connections are bound to it.
func (id Identity) Session() string { return id.JobID + "." + id.Step() }

// ExpectedNode returns the node the launcher places rank on, from the node
// list, the tasks per node and the distribution, or "?" when they do not
// say. It is how rank 0 names the node of a rank that never showed up.
func (id Identity) ExpectedNode(rank int) string {
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
		left := append([]int(nil), counts...)
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
