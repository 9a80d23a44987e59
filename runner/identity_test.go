package runner

import (
	"strings"
	"testing"
)

func TestIdentityFromEnv(t *testing.T) {
	env := map[string]string{
		"SLURM_PROCID": "3", "SLURM_STEP_NUM_TASKS": "4", "SLURM_LOCALID": "1", "SLURM_NODEID": "1",
		"SLURM_JOB_ID": "4242", "SLURM_STEP_ID": "2", "SLURM_STEP_NODELIST": "cn[01-02]",
		"SLURM_STEP_TASKS_PER_NODE": "2(x2)", "SLURMD_NODENAME": "cn02", "SLURM_ARRAY_TASK_ID": "5",
		"SLURM_JOB_NAME": "fabric", "SLURM_JOB_PARTITION": "compute", "SLURM_DISTRIBUTION": "cyclic:block",
	}
	id, err := IdentityFromEnv(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if id.Launcher != "slurm" || id.Rank != 3 || id.Size != 4 || id.LocalRank != 1 || id.NodeIndex != 1 ||
		id.NodeName != "cn02" || strings.Join(id.Nodes, " ") != "cn01 cn02" || id.TasksPerNode != "2(x2)" ||
		id.JobID != "4242" || id.StepID != "2" || id.ArrayIndex != "5" || id.JobName != "fabric" ||
		id.Partition != "compute" || id.Distribution != "cyclic" {
		t.Errorf("identity %+v", id)
	}
	if id.Session() != "4242.2" {
		t.Errorf("session %q", id.Session())
	}

	env["SLURM_JOB_ID"] = "42/../../etc"
	if _, err := IdentityFromEnv(func(k string) string { return env[k] }); err == nil || !strings.Contains(err.Error(), "job id") {
		t.Errorf("an unsafe job id gave %v", err)
	}
	delete(env, "SLURM_PROCID")
	if _, err := IdentityFromEnv(func(k string) string { return env[k] }); err == nil || !strings.Contains(err.Error(), "SLURM_PROCID is not set") {
		t.Errorf("a missing SLURM_PROCID gave %v", err)
	}
}

func TestStepOutsideSrun(t *testing.T) {
	id := Identity{JobID: "7"}
	if id.Step() != "batch" || id.Session() != "7.batch" {
		t.Errorf("step %q, session %q", id.Step(), id.Session())
	}
}

func TestExpectedNode(t *testing.T) {
	nodes := []string{"n1", "n2", "n3"}
	for _, tt := range []struct {
		size         int
		tasksPerNode string
		distribution string
		want         string // node of each rank
	}{
		{6, "2(x3)", "block", "n1 n1 n2 n2 n3 n3"},
		{6, "2(x3)", "cyclic", "n1 n2 n3 n1 n2 n3"},
		{5, "3,1,1", "block", "n1 n1 n1 n2 n3"},
		{5, "3,1,1", "cyclic", "n1 n2 n3 n1 n1"},
		// Unusable counts: spread as evenly as srun would.
		{5, "", "block", "n1 n1 n2 n2 n3"},
		{4, "9(x3)", "block", "n1 n1 n2 n3"},
	} {
		id := Identity{Size: tt.size, Nodes: nodes, TasksPerNode: tt.tasksPerNode, Distribution: tt.distribution}
		var got []string
		for r := 0; r < tt.size; r++ {
			got = append(got, id.ExpectedNode(r))
		}
		if strings.Join(got, " ") != tt.want {
			t.Errorf("%d ranks, %q, %s: %v, want %s", tt.size, tt.tasksPerNode, tt.distribution, got, tt.want)
		}
		if n := id.ExpectedNode(tt.size); n != "?" {
			t.Errorf("rank past the end: %q", n)
		}
	}
}
