package slurm

import (
	"bufio"
	"os"
	"reflect"
	"strings"
	"testing"
)

// rankEnvs reads the per-rank environments captured from a real srun
// on the test lab (testdata/srun-env.txt; docs/test-cluster.md).
func rankEnvs(t *testing.T, path string) map[string]map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	envs := map[string]map[string]string{}
	sc := bufio.NewScanner(f)
	inRanks := false
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "== srun per-rank env") {
			inRanks = true
			continue
		}
		if !inRanks {
			continue
		}
		rank, kv, ok := strings.Cut(line, ": ")
		if !ok {
			continue
		}
		k, v, _ := strings.Cut(kv, "=")
		if envs[rank] == nil {
			envs[rank] = map[string]string{}
		}
		envs[rank][k] = v
	}
	return envs
}

func TestIdentityFromRealSrunEnv(t *testing.T) {
	envs := rankEnvs(t, "testdata/srun-env.txt")
	if len(envs) != 4 {
		t.Fatalf("fixture holds %d ranks, want 4", len(envs))
	}
	want := map[string]Identity{
		"0": {Rank: 0, Size: 4, LocalRank: 0, NodeIndex: 0, NodeName: "n1"},
		"1": {Rank: 1, Size: 4, LocalRank: 1, NodeIndex: 0, NodeName: "n1"},
		"2": {Rank: 2, Size: 4, LocalRank: 0, NodeIndex: 1, NodeName: "n2"},
		"3": {Rank: 3, Size: 4, LocalRank: 1, NodeIndex: 1, NodeName: "n2"},
	}
	for rank, env := range envs {
		id, err := IdentityFromEnv(func(k string) string { return env[k] })
		if err != nil {
			t.Fatalf("rank %s: %v", rank, err)
		}
		w := want[rank]
		w.JobID, w.StepID, w.Nodes, w.TasksPerNode = "7", "0", []string{"n1", "n2"}, "2(x2)"
		if !reflect.DeepEqual(id, w) {
			t.Errorf("rank %s: got %+v, want %+v", rank, id, w)
		}
	}
}

func TestIdentityFromEnvErrors(t *testing.T) {
	base := map[string]string{
		"SLURM_PROCID": "1", "SLURM_NTASKS": "2", "SLURM_LOCALID": "0", "SLURM_NODEID": "1",
		"SLURM_JOB_ID": "42", "SLURM_STEP_ID": "0", "SLURM_STEP_NODELIST": "n[1-2]",
	}
	if _, err := IdentityFromEnv(func(k string) string { return base[k] }); err != nil {
		t.Fatalf("base env: %v", err)
	}
	tests := []struct {
		key, val, want string
	}{
		{"SLURM_PROCID", "", "SLURM_PROCID is not set"},
		{"SLURM_PROCID", "x", `SLURM_PROCID="x"`},
		{"SLURM_PROCID", "2", "not below SLURM_NTASKS=2"},
		{"SLURM_NODEID", "2", "outside SLURM_STEP_NODELIST"},
		{"SLURM_STEP_NODELIST", "n[1-", "SLURM_STEP_NODELIST"},
		{"SLURM_JOB_ID", "", "SLURM_JOB_ID is not set"},
	}
	for _, tt := range tests {
		env := map[string]string{}
		for k, v := range base {
			env[k] = v
		}
		env[tt.key] = tt.val
		_, err := IdentityFromEnv(func(k string) string { return env[k] })
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s=%q: error %v, want it to mention %q", tt.key, tt.val, err, tt.want)
		}
	}
}

func TestExpandTasksPerNode(t *testing.T) {
	tests := map[string][]int{"2(x2)": {2, 2}, "3,1": {3, 1}, "4(x3),1": {4, 4, 4, 1}, "1": {1}}
	for in, want := range tests {
		got, err := ExpandTasksPerNode(in)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("ExpandTasksPerNode(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "x", "2(x0)", "2(x", "-1"} {
		if _, err := ExpandTasksPerNode(in); err == nil {
			t.Errorf("ExpandTasksPerNode(%q): want an error", in)
		}
	}
}
