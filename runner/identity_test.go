package runner

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestIdentityFromEnv(t *testing.T) {
	env := map[string]string{
		"SLURM_PROCID": "3", "SLURM_STEP_NUM_TASKS": "4", "SLURM_LOCALID": "1", "SLURM_NODEID": "1",
		"SLURM_JOB_ID": "4242", "SLURM_STEP_ID": "2", "SLURM_STEP_NODELIST": "cn[01-02]",
		"SLURM_STEP_TASKS_PER_NODE": "2(x2)", "SLURMD_NODENAME": "cn02", "SLURM_ARRAY_TASK_ID": "5", "SLURM_ARRAY_JOB_ID": "4240",
		"SLURM_JOB_NAME": "fabric", "SLURM_JOB_PARTITION": "compute", "SLURM_DISTRIBUTION": "cyclic:block",
	}
	id, err := IdentityFromEnv(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if id.Launcher != "srun" || id.Rank != 3 || id.Size != 4 || id.LocalRank != 1 || id.NodeIndex != 1 ||
		id.NodeName != "cn02" || strings.Join(id.Nodes, " ") != "cn01 cn02" || id.TasksPerNode != "2(x2)" ||
		id.JobID != "4240" || id.StepID != "2" || id.ArrayIndex != "5" || id.JobName != "fabric" ||
		id.Partition != "compute" || id.Distribution != "cyclic" {
		t.Errorf("identity %+v", id)
	}
	// An array task is named by the array's id and its index, as Slurm does.
	if id.Session() != "4240_5.2" || id.fileStem() != "4240_5.2" {
		t.Errorf("session %q, file stem %q", id.Session(), id.fileStem())
	}
	env[LocalStepVar] = "1"
	if id, _ := IdentityFromEnv(func(k string) string { return env[k] }); id.Launcher != "local" {
		t.Errorf("LocalStep's ranks: launcher %q", id.Launcher)
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

// loadEnv merges testdata/env files, later ones over earlier ones.
func loadEnv(t *testing.T, files ...string) map[string]string {
	t.Helper()
	env := map[string]string{}
	for _, name := range files {
		f, err := os.Open(filepath.Join("testdata", "env", name))
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			line := sc.Text()
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			k, v, ok := strings.Cut(line, "=")
			if !ok {
				t.Fatalf("%s: %q is not NAME=value", name, line)
			}
			env[k] = v
		}
		f.Close()
	}
	return env
}

// TestIdentityUnderLaunchers reads identities from what real launchers
// set (testdata/env/README.md says where each file comes from).
func TestIdentityUnderLaunchers(t *testing.T) {
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name  string
		files []string
		extra map[string]string
		// want, for a valid identity
		launcher, mpi        string
		rank, size, local    int
		node, job, namespace string
		session, stem        string
		// wantErr, for an error
		wantErr string
	}{
		{name: "Open MPI 4.1 mpirun, rank 0", files: []string{"openmpi-4.1.4-mpirun-np2-rank0.env"},
			launcher: "mpirun", mpi: "Open MPI", rank: 0, size: 2, local: 0, node: host, namespace: "123994113",
			session: "mpirun.123994113", stem: "mpirun.123994113"},
		{name: "Open MPI 4.1 mpirun, rank 1", files: []string{"openmpi-4.1.4-mpirun-np2-rank1.env"},
			launcher: "mpirun", mpi: "Open MPI", rank: 1, size: 2, local: 1, node: host, namespace: "123994113",
			session: "mpirun.123994113", stem: "mpirun.123994113"},
		// The trap: in a batch script SLURM_PROCID is 0 on every rank, and
		// SLURMD_NODENAME is the batch node's. mpirun's variables win, the
		// job's id stays.
		{name: "Open MPI mpirun inside sbatch", files: []string{"slurm-22.05-batch.env", "openmpi-4.1.4-mpirun-np2-rank1.env"},
			launcher: "mpirun", mpi: "Open MPI", rank: 1, size: 2, local: 1, node: host, job: "7", namespace: "123994113",
			session: "7.123994113", stem: "7.123994113"},
		// mpirun starts its daemons with srun: a rank inherits the daemon's
		// step (SLURM_STEP_ID, SLURM_PROCID = the daemon's).
		{name: "Open MPI mpirun inside sbatch, daemon's step", files: []string{"slurm-22.05-srun-rank2.env", "openmpi-4.1.4-mpirun-np2-rank0.env"},
			launcher: "mpirun", mpi: "Open MPI", rank: 0, size: 2, local: 0, node: host, job: "7", namespace: "123994113",
			session: "7.123994113", stem: "7.123994113"},
		// For real: mpirun -np 4 in salloc -N2 -n4 gives ranks 0, 1, 2 the
		// SLURM_PROCID 0 of the daemon srun started on n1.
		{name: "Open MPI mpirun in salloc, rank 2", files: []string{"openmpi-4.1.4-salloc-N2-n4-mpirun-np4-rank2.env"},
			launcher: "mpirun", mpi: "Open MPI", rank: 2, size: 4, local: 2, node: host, job: "4", namespace: "2032992257",
			session: "4.2032992257", stem: "4.2032992257"},
		{name: "Open MPI mpirun in salloc, rank 3", files: []string{"openmpi-4.1.4-salloc-N2-n4-mpirun-np4-rank3.env"},
			launcher: "mpirun", mpi: "Open MPI", rank: 3, size: 4, local: 0, node: host, job: "4", namespace: "2032992257",
			session: "4.2032992257", stem: "4.2032992257"},
		{name: "Open MPI mpirun in salloc, with --session and --step", files: []string{"openmpi-4.1.4-salloc-N2-n4-mpirun-np4-rank1.env"},
			extra:    map[string]string{"session": "4.2-inter", "step": "2-inter"},
			launcher: "mpirun", mpi: "Open MPI", rank: 1, size: 4, local: 1, node: host, job: "4", namespace: "2032992257",
			session: "4.2-inter", stem: "4.2-inter"},
		{name: "Open MPI 5 mpirun", files: []string{"openmpi-5-rank1-of-2.env"},
			launcher: "mpirun", mpi: "Open MPI", rank: 1, size: 2, local: 1, node: host, namespace: "prterun-cn01-81532-1",
			session: "mpirun.prterun-cn01-81532-1", stem: "mpirun.prterun-cn01-81532-1"},
		{name: "Hydra inside sbatch, with --session and --step", files: []string{"slurm-22.05-batch.env", "hydra-mpich-4-rank3-of-4.env"},
			extra:    map[string]string{"session": "7.3", "step": "3"},
			launcher: "mpirun", mpi: "Hydra/PMI", rank: 3, size: 4, local: 1, node: host, job: "7",
			session: "7.3", stem: "7.3"},
		{name: "Hydra without --session", files: []string{"hydra-mpich-4-rank3-of-4.env"},
			wantErr: "Hydra/PMI exports no job namespace the ranks could meet under: pass --session ID"},
		{name: "Hydra in PMI_PORT mode", files: []string{"hydra-mpich-4-pmi-port.env"},
			wantErr: "Hydra/PMI environment: PMI_SIZE is not set"},
		{name: "srun --mpi=pmi2", files: []string{"slurm-22.05-srun-rank2.env", "slurm-pmi2-task.env"},
			launcher: "srun", rank: 2, size: 4, local: 0, node: "n2", job: "7", session: "7.0", stem: "7.0"},
		{name: "srun --mpi=pmix", files: []string{"slurm-22.05-srun-rank2.env", "slurm-pmix-task.env"},
			launcher: "srun", rank: 2, size: 4, local: 0, node: "n2", job: "7", session: "7.0", stem: "7.0"},
		{name: "srun with --step", files: []string{"slurm-22.05-srun-rank2.env"}, extra: map[string]string{"step": "4"},
			launcher: "srun", rank: 2, size: 4, local: 0, node: "n2", job: "7", session: "7.4", stem: "7.4"},
		{name: "PMIx launcher", files: []string{"pmix-prterun-rank1.env"},
			wantErr: "PMIx launcher exports PMIX_RANK but no job size"},
		// Outside any srun step (the runner started by the batch script
		// itself) Slurm's variables describe the job: step "batch".
		{name: "batch script alone", files: []string{"slurm-22.05-batch.env"},
			launcher: "srun", rank: 0, size: 4, local: 0, node: "n1", job: "7", session: "7.batch", stem: "7.batch"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			env := loadEnv(t, tt.files...)
			id, err := IdentityFromEnv(func(k string) string { return env[k] })
			if err == nil {
				id.SessionID = tt.extra["session"]
				if s := tt.extra["step"]; s != "" {
					id.StepID = s
				}
				err = id.Validate()
			}
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("got %v, want an error with %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if id.Launcher != tt.launcher || id.MPI != tt.mpi || id.Rank != tt.rank || id.Size != tt.size ||
				id.LocalRank != tt.local || id.NodeName != tt.node || id.JobID != tt.job || id.Namespace != tt.namespace {
				t.Errorf("identity %+v", id)
			}
			if id.Session() != tt.session || id.fileStem() != tt.stem {
				t.Errorf("session %q, file stem %q; want %q, %q", id.Session(), id.fileStem(), tt.session, tt.stem)
			}
			if tt.launcher == "mpirun" && (id.NodeIndex != -1 || id.Nodes != nil || id.ExpectedNode(0) != "?") {
				t.Errorf("under mpirun the nodes come from the bootstrap, not the environment: %+v", id)
			}
		})
	}
}

func TestSafeName(t *testing.T) {
	for in, want := range map[string]string{
		"1027932161":                   "1027932161",
		"prterun-vm-1234@1":            "prterun-vm-1234-1",
		"a/../b":                       "a----b",
		"":                             "",
		strings.Repeat("x", 70) + "@9": strings.Repeat("x", 62) + "-9",
	} {
		if got := safeName(in); got != want {
			t.Errorf("safeName(%q) = %q, want %q", in, got, want)
		}
	}
	for _, s := range []string{"7.1", "mpirun.123-4", "a_b+c"} {
		if err := CheckSession(s); err != nil {
			t.Errorf("session %q: %v", s, err)
		}
	}
	for _, s := range []string{"", ".hidden", "a/b", "a..b", "a b", strings.Repeat("x", 129)} {
		if CheckSession(s) == nil {
			t.Errorf("session %q accepted", s)
		}
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

// A task of a job array is known by the array's id and its index: bundles
// are named 14_0.STEP… and record job 14, array index 0.
func TestIdentityOfArrayTask(t *testing.T) {
	env := map[string]string{
		"SLURM_PROCID": "0", "SLURM_NTASKS": "2", "SLURM_LOCALID": "0", "SLURM_NODEID": "0",
		"SLURM_JOB_ID": "15", "SLURM_STEP_ID": "0", "SLURM_STEP_NODELIST": "n[1-2]",
		"SLURM_ARRAY_JOB_ID": "14", "SLURM_ARRAY_TASK_ID": "0",
	}
	id, err := IdentityFromEnv(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if id.JobID != "14" || id.ArrayIndex != "0" || id.Session() != "14_0.0" {
		t.Errorf("identity: job %q index %q session %q", id.JobID, id.ArrayIndex, id.Session())
	}
	if p := BundlePath("r", id, "lat"); p != "r/14_0.0.lat.json" {
		t.Errorf("bundle path %q", p)
	}
}

// A requeued job's attempt k reads SLURM_RESTART_COUNT=k; the first attempt
// has none, or 0.
func TestRestartCount(t *testing.T) {
	base := map[string]string{
		"SLURM_PROCID": "0", "SLURM_NTASKS": "2", "SLURM_LOCALID": "0", "SLURM_NODEID": "0",
		"SLURM_JOB_ID": "7", "SLURM_STEP_ID": "0", "SLURM_STEP_NODELIST": "n[1-2]",
	}
	mpi := map[string]string{"OMPI_COMM_WORLD_RANK": "0", "OMPI_COMM_WORLD_SIZE": "2", "OMPI_MCA_ess_base_jobid": "99", "SLURM_JOB_ID": "7"}
	for _, tt := range []struct {
		env     map[string]string
		count   string
		want    int
		wantErr string
	}{
		{base, "", 0, ""},
		{base, "0", 0, ""},
		{base, " 2 ", 2, ""},
		{mpi, "3", 3, ""},
		{base, "one", 0, `SLURM_RESTART_COUNT="one" is not a non-negative integer`},
		{base, "-1", 0, `SLURM_RESTART_COUNT="-1" is not a non-negative integer`},
		{mpi, "1.5", 0, `SLURM_RESTART_COUNT="1.5" is not a non-negative integer`},
	} {
		env := map[string]string{"SLURM_RESTART_COUNT": tt.count}
		for k, v := range tt.env {
			env[k] = v
		}
		id, err := IdentityFromEnv(func(k string) string { return env[k] })
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%q: %v, want an error with %q", tt.count, err, tt.wantErr)
			}
			continue
		}
		if err != nil || id.Restart != tt.want {
			t.Errorf("%q: restart %d, %v; want %d", tt.count, id.Restart, err, tt.want)
		}
	}
}

// Every attempt of a requeued job has its own bundles and rendezvous: the
// first attempt's names are unchanged, attempt k puts ".r<k>" after the job
// part of bundle names (so "JOBID.*.json" finds every attempt) and at the
// end of the session.
func TestNamesPerAttempt(t *testing.T) {
	srun := Identity{Launcher: LauncherSrun, JobID: "7", StepID: "0"}
	array := Identity{Launcher: LauncherSrun, JobID: "14", ArrayIndex: "3", StepID: "2"}
	sbatch := Identity{Launcher: LauncherSrun, JobID: "7", StepID: "1", SessionID: "7.1"} // --session "$SLURM_JOB_ID.1"
	ompi := Identity{Launcher: LauncherMpirun, JobID: "7", Namespace: "99"}
	for _, tt := range []struct {
		id                  Identity
		restart             int
		session, addr       string
		bundle, second, job string
	}{
		{srun, 0, "7.0", "run/7.0.addr", "res/7.0.lat.json", "res/7.0.lat-1.json", "7"},
		{srun, 1, "7.0.r1", "run/7.0.r1.addr", "res/7.r1.0.lat.json", "res/7.r1.0.lat-1.json", "7"},
		{srun, 12, "7.0.r12", "run/7.0.r12.addr", "res/7.r12.0.lat.json", "res/7.r12.0.lat-1.json", "7"},
		{array, 0, "14_3.2", "run/14_3.2.addr", "res/14_3.2.lat.json", "res/14_3.2.lat-1.json", "14_3"},
		{array, 2, "14_3.2.r2", "run/14_3.2.r2.addr", "res/14_3.r2.2.lat.json", "res/14_3.r2.2.lat-1.json", "14_3"},
		{sbatch, 0, "7.1", "run/7.1.addr", "res/7.1.lat.json", "res/7.1.lat-1.json", "7"},
		{sbatch, 1, "7.1.r1", "run/7.1.r1.addr", "res/7.r1.1.lat.json", "res/7.r1.1.lat-1.json", "7"},
		{ompi, 1, "7.99.r1", "run/7.99.r1.addr", "res/7.99.r1.lat.json", "res/7.99.r1.lat-1.json", "7"},
	} {
		id := tt.id
		id.Restart = tt.restart
		got := []string{id.Session(), addrPath("run", id), BundlePath("res", id, "lat"), bundlePath("res", id, "lat", 1)}
		want := []string{tt.session, tt.addr, tt.bundle, tt.second}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("%+v:\n got %q\nwant %q", id, got, want)
		}
		if err := CheckSession(id.Session()); err != nil {
			t.Errorf("%+v: %v", id, err)
		}
		if err := id.Validate(); err != nil && !strings.Contains(err.Error(), "namespace") {
			t.Errorf("%+v: %v", id, err)
		}
		for _, p := range got[2:] {
			if ok, _ := filepath.Match("res/"+tt.job+".*.json", p); !ok {
				t.Errorf("%s does not match %s.*.json", p, tt.job)
			}
		}
	}
	// Attempts of one step never share a session, and so neither the
	// rendezvous file nor a handshake nor a derived token.
	a0, a1 := srun, srun
	a1.Restart = 1
	if string(DerivedToken(a0)) == string(DerivedToken(a1)) {
		t.Error("attempts 0 and 1 derive the same token")
	}
	// The longest --session a user may give still validates on attempt k.
	long := Identity{Launcher: LauncherSrun, JobID: "7", StepID: "0", SessionID: strings.Repeat("s", 128), Restart: 99}
	if err := long.Validate(); err != nil {
		t.Errorf("128-character session on attempt 99: %v", err)
	}
	long.SessionID += "s"
	if err := long.Validate(); err == nil {
		t.Error("a 129-character session was accepted")
	}
	if err := (Identity{Launcher: LauncherSrun, JobID: "7", Restart: -1}).Validate(); err == nil {
		t.Error("a negative restart count was accepted")
	}
}

// TestIdentityCluster reads the Slurm cluster's name, which the bundle
// carries as the run's system, from what srun and mpirun under salloc set;
// outside Slurm there is none.
func TestIdentityCluster(t *testing.T) {
	for _, tt := range []struct {
		files []string
		want  string
	}{
		{[]string{"slurm-22.05-srun-rank2.env"}, "lab"},
		{[]string{"openmpi-4.1.4-salloc-N2-n4-mpirun-np4-rank2.env"}, "sbenchlab"},
		{[]string{"openmpi-4.1.4-mpirun-np2-rank0.env"}, ""},
	} {
		env := loadEnv(t, tt.files...)
		id, err := IdentityFromEnv(func(k string) string { return env[k] })
		if err != nil {
			t.Fatal(err)
		}
		if id.Cluster != tt.want {
			t.Errorf("%s: cluster %q, want %q", tt.files[0], id.Cluster, tt.want)
		}
	}
}
