package slurm

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/sbench/sbench/slurm/hostlist"
)

// Identity is where one task of a job step runs, as Slurm tells it through
// the environment of every task that srun starts.
type Identity struct {
	Rank      int    // SLURM_PROCID: global rank in the step
	Size      int    // SLURM_NTASKS (or SLURM_STEP_NUM_TASKS): ranks in the step
	LocalRank int    // SLURM_LOCALID: rank among the step's tasks on this node
	NodeIndex int    // SLURM_NODEID: index of this node in the step's node list
	JobID     string // SLURM_JOB_ID
	StepID    string // SLURM_STEP_ID
	ArrayTask string // SLURM_ARRAY_TASK_ID, empty outside job arrays
	NodeName  string // SLURMD_NODENAME: the node's Slurm name (fake nodes share a hostname)
	// Nodes is SLURM_STEP_NODELIST expanded, in Slurm's order.
	Nodes []string
	// TasksPerNode is SLURM_STEP_TASKS_PER_NODE as Slurm writes it ("2(x2)", "3,1").
	TasksPerNode string
}

// IdentityFromEnv reads a task's identity from its environment. getenv is
// os.Getenv in production and a map lookup in tests. Every missing or
// malformed variable is reported, naming it.
func IdentityFromEnv(getenv func(string) string) (Identity, error) {
	var id Identity
	var errs []string
	num := func(names ...string) int {
		n, set, err := EnvCount(getenv, names...)
		if err != nil {
			errs = append(errs, err.Error())
		} else if !set {
			errs = append(errs, names[0]+" is not set")
		}
		return n
	}
	str := func(names ...string) string { return FirstEnv(getenv, names...) }
	id.Rank = num("SLURM_PROCID")
	id.Size = num("SLURM_STEP_NUM_TASKS", "SLURM_NTASKS")
	id.LocalRank = num("SLURM_LOCALID")
	id.NodeIndex = num("SLURM_NODEID")
	id.JobID = str("SLURM_JOB_ID", "SLURM_JOBID")
	if id.JobID == "" {
		errs = append(errs, "SLURM_JOB_ID is not set")
	}
	id.StepID = str("SLURM_STEP_ID", "SLURM_STEPID")
	id.ArrayTask = str("SLURM_ARRAY_TASK_ID")
	id.NodeName = str("SLURMD_NODENAME")
	id.TasksPerNode = str("SLURM_STEP_TASKS_PER_NODE", "SLURM_TASKS_PER_NODE")
	nodelist := str("SLURM_STEP_NODELIST", "SLURM_JOB_NODELIST", "SLURM_NODELIST")
	if nodelist == "" {
		errs = append(errs, "SLURM_STEP_NODELIST is not set")
	} else if nodes, err := hostlist.Expand(nodelist); err != nil {
		errs = append(errs, "SLURM_STEP_NODELIST: "+err.Error())
	} else {
		id.Nodes = nodes
	}
	if len(errs) == 0 {
		if id.Size == 0 {
			errs = append(errs, "SLURM_NTASKS is 0")
		} else if id.Rank >= id.Size {
			errs = append(errs, fmt.Sprintf("SLURM_PROCID=%d is not below SLURM_NTASKS=%d", id.Rank, id.Size))
		}
		if id.NodeIndex >= len(id.Nodes) {
			errs = append(errs, fmt.Sprintf("SLURM_NODEID=%d is outside SLURM_STEP_NODELIST (%d nodes)", id.NodeIndex, len(id.Nodes)))
		} else if id.NodeName == "" {
			id.NodeName = id.Nodes[id.NodeIndex]
		}
	}
	if len(errs) > 0 {
		return Identity{}, fmt.Errorf("slurm environment: %s", strings.Join(errs, "; "))
	}
	return id, nil
}

// ExpandTasksPerNode expands Slurm's tasks-per-node form ("2(x2),1" -> 2 2 1).
func ExpandTasksPerNode(s string) ([]int, error) {
	var out []int
	for _, part := range strings.Split(strings.TrimSpace(s), ",") {
		count, rep := part, "1"
		if i := strings.Index(part, "(x"); i >= 0 && strings.HasSuffix(part, ")") {
			count, rep = part[:i], part[i+2:len(part)-1]
		}
		c, err1 := strconv.Atoi(count)
		r, err2 := strconv.Atoi(rep)
		if err1 != nil || err2 != nil || c < 0 || r < 1 || r > hostlist.Max || len(out)+r > hostlist.Max {
			return nil, fmt.Errorf("tasks per node %q: bad item %q", s, part)
		}
		for i := 0; i < r; i++ {
			out = append(out, c)
		}
	}
	return out, nil
}

// FirstEnv returns the value of the first of names that is set (not
// blank) in getenv, trimmed; "" when none is.
func FirstEnv(getenv func(string) string, names ...string) string {
	for _, name := range names {
		if v := strings.TrimSpace(getenv(name)); v != "" {
			return v
		}
	}
	return ""
}

// EnvCount reads the first of names that is set in getenv as a
// non-negative integer; set is false when none is. A value that is not
// one is an error naming its variable.
func EnvCount(getenv func(string) string, names ...string) (n int, set bool, err error) {
	for _, name := range names {
		v := strings.TrimSpace(getenv(name))
		if v == "" {
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return 0, true, fmt.Errorf("%s=%q is not a non-negative integer", name, v)
		}
		return n, true, nil
	}
	return 0, false, nil
}
