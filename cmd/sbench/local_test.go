package main

import (
	"io"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/sbench/sbench/campaign"
	"github.com/sbench/sbench/store"
)

// smallCampaign is one quick native step (plus whatever extra adds).
const smallCampaign = `
[campaign]
name = "small"

[slurm]
nodes = 1
ntasks_per_node = 2

[[benchmark]]
name = "latency"
kernel = "latency"
params = { sizes = "1,1024", iterations = 100, warmup = 10 }
`

// runStatuses returns run -> status of an archive, from its CSV export.
func runStatuses(t *testing.T, db string) map[string]string {
	t.Helper()
	got := map[string]string{}
	for _, r := range exportRows(t, db) {
		got[r["run"]] = r["status"]
	}
	return got
}

// TestLocalRunsInTheSameSecond: two sbench local runs of one campaign
// started together get different job ids; both archive their runs, and
// neither's bundles overwrite the other's.
func TestLocalRunsInTheSameSecond(t *testing.T) {
	dir := endToEndDir(t, "runs a campaign twice at once")
	os.WriteFile("small.toml", []byte(smallCampaign), 0o644)
	db := filepath.Join(dir, "a.db")
	var wg sync.WaitGroup
	codes := make([]int, 2)
	errs := make([]string, 2)
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i], codes[i] = sbench(t, "local", "small.toml", "--db", db)
		}()
	}
	wg.Wait()
	for i := range 2 {
		if codes[i] != 0 {
			t.Fatalf("run %d: exit %d\n%s", i, codes[i], errs[i])
		}
	}
	out, _, _ := sbench(t, "status", "--db", db, "--all")
	if n := strings.Count(out, "local-"); n != 2 {
		t.Errorf("%d local jobs recorded, want 2:\n%s", n, out)
	}
	bundles, _ := filepath.Glob("sbench-runs/small/local-*.json")
	if len(bundles) != 2 {
		t.Errorf("%d bundles in the results directory, want one per run: %q", len(bundles), bundles)
	}
	if got := runStatuses(t, db); len(got) != 2 {
		t.Errorf("archived runs %v, want 2", got)
	}
}

// TestLocalLauncherFailsBeforeTheRunner: an MPI launcher that refuses its
// options never starts sbench-runner, so no bundle is written; the step
// must still end in the archive, as a failed run saying what the launcher
// printed — and the other step of the job as the run it was.
func TestLocalLauncherFailsBeforeTheRunner(t *testing.T) {
	dir := endToEndDir(t, "runs a campaign")
	// Open MPI's mpirun answers a bad option so; a script stands in for it
	// so that the test needs no MPI.
	mpirun := filepath.Join(dir, "mpirun")
	os.WriteFile(mpirun, []byte("#!/bin/sh\necho 'mpirun: Error: unknown option \"--bogus\"' >&2\necho \"Type 'mpirun --help' for usage.\" >&2\nexit 1\n"), 0o755)
	os.WriteFile("small.toml", []byte(smallCampaign+`
[[benchmark]]
name = "broken"
kernel = "latency"
params = { sizes = "1", iterations = 10 }
launcher = { type = "mpirun", command = "`+mpirun+`", args = ["--bogus"] }
`), 0o644)
	db := filepath.Join(dir, "a.db")
	out, errs, code := sbench(t, "local", "small.toml", "--db", db)
	if code != 1 || !strings.Contains(errs, "1 step(s) failed") {
		t.Fatalf("local: exit %d, want 1 naming the failed step\n%s\n%s", code, out, errs)
	}
	if !strings.Contains(out, "2 run(s)") || !strings.Contains(out, "1 of them failed before sbench-runner wrote a bundle") {
		t.Errorf("summary does not count the failed step's run:\n%s", out)
	}
	runs, _, code := sbench(t, "runs", "--db", db)
	if code != 0 || strings.Count(runs, "\n") < 3 {
		t.Fatalf("runs: %s", runs)
	}
	if !strings.Contains(runs, "failed") || !strings.Contains(runs, "broken") {
		t.Errorf("the broken step is not archived as failed:\n%s", runs)
	}
	js, _, _ := sbench(t, "runs", "--db", db, "--json")
	if !strings.Contains(js, `unknown option`) || !strings.Contains(js, "exited 1 before sbench-runner wrote a bundle") {
		t.Errorf("the failed run does not say what the launcher printed:\n%s", js)
	}
}

// imbLocalCampaign is IMB-MPI1 (the stand-in of testdata) under Open MPI's
// mpirun on 2 ranks, placed as on a cluster: 2 nodes × 1 (with the user's
// own mapping, one rank per node) and 1 node × 2.
const imbLocalCampaign = `[campaign]
name = "imb-local"

[slurm]
time = "00:03:00"

[launcher]
type = "mpirun"
flavor = "openmpi"
args = ["--map-by", "ppr:1:node"]

[[variant]]
name = "inter"
slurm = { nodes = 2, ntasks_per_node = 1 }

[[variant]]
name = "intra"
slurm = { nodes = 1, ntasks_per_node = 2 }

[[benchmark]]
name = "imb"
command = ["IMB-MPI1", "PingPong"]
parser = "imb"
`

// TestLocalIMBUnderMpirun: sbench local of an IMB campaign whose launcher
// is mpirun starts mpirun once per step with the planned ranks, all on
// this host, as the job script does, and archives ok runs. The user's
// mapping of one rank per node cannot hold on one host (Open MPI refuses 2
// ranks at ppr:1:node there) and is left out, with a note; as root,
// mpirun gets --allow-run-as-root, with a note. The real Open MPI runs it.
func TestLocalIMBUnderMpirun(t *testing.T) {
	buildIMBStandin(t)
	dir := endToEndDir(t, "runs an IMB campaign under mpirun")
	// Nothing of the caller's lets Open MPI run as root: sbench must.
	t.Setenv("OMPI_ALLOW_RUN_AS_ROOT", "")
	t.Setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "")
	os.WriteFile("imb.toml", []byte(imbLocalCampaign), 0o644)
	db := filepath.Join(dir, "a.db")
	out, errs, code := sbench(t, "local", "imb.toml", "--db", db)
	if code != 0 || !strings.Contains(out, "2 run(s) from 1 job(s)") {
		t.Fatalf("local: exit %d\n%s\n%s", code, out, errs)
	}
	if !strings.Contains(errs, "note: imb: launcher args --map-by ppr:1:node place ranks on the cluster's nodes, which cannot hold on this one host: sbench local leaves them out") {
		t.Errorf("no note of the mapping left out:\n%s", errs)
	}
	if root := strings.Contains(errs, "passes it --allow-run-as-root"); root != (os.Geteuid() == 0) {
		t.Errorf("the note of --allow-run-as-root: %v, running as uid %d:\n%s", root, os.Geteuid(), errs)
	}
	got := map[string]int{}
	host, _ := os.Hostname()
	for _, r := range storedRuns(t, db, store.Filter{Campaign: "imb-local"}) {
		got[r.Variant+" "+r.ToolBenchmark]++
		if r.Status != "ok" || r.Tool != "IMB-MPI1" || r.Params["processes"] != "2" || len(r.Nodes) != 1 || r.Nodes[0] != host {
			t.Errorf("run %d (%s %s): %s %q, tool %q, params %v, nodes %v", r.ID, r.Variant, r.ToolBenchmark, r.Status, r.Error, r.Tool, r.Params, r.Nodes)
		}
		if (r.Variant == "inter") != (r.Labels[localHostLabel] == host) {
			t.Errorf("run %d (%s): labels %v", r.ID, r.Variant, r.Labels)
		}
	}
	want := map[string]int{"inter IMB-MPI1 PingPong": 1, "intra IMB-MPI1 PingPong": 1}
	if !maps.Equal(got, want) {
		t.Errorf("runs %v, want %v", got, want)
	}
	if l, _ := filepath.Glob("sbench-runs/imb-local/.rendezvous/*"); len(l) > 0 {
		t.Errorf("left behind: %q", l)
	}
}

// TestLocalRefusesMPIUnderPlainSrun: an MPI program under srun without an
// MPI plugin would start on each rank alone ("Local abort before
// MPI_INIT", every run failed); sbench local refuses it before running
// anything, saying which launcher to use.
func TestLocalRefusesMPIUnderPlainSrun(t *testing.T) {
	buildIMBStandin(t)
	dir := endToEndDir(t, "checks a campaign of an MPI program")
	camp := strings.Replace(imbLocalCampaign, "[launcher]\ntype = \"mpirun\"\nflavor = \"openmpi\"\nargs = [\"--map-by\", \"ppr:1:node\"]\n", "", 1)
	os.WriteFile("imb.toml", []byte(camp), 0o644)
	db := filepath.Join(dir, "a.db")
	_, errs, code := sbench(t, "local", "imb.toml", "--db", db)
	for _, want := range []string{"imb (IMB-MPI1 loads libmpi.so", "an MPI program launched by srun without an MPI plugin", `launcher = { type = "mpirun", flavor = "openmpi" }`} {
		if code != exitUsage || !strings.Contains(errs, want) {
			t.Errorf("exit %d, want %d saying %q:\n%s", code, exitUsage, want, errs)
		}
	}
	if _, err := os.Stat(db); err == nil {
		t.Errorf("the refusal created the archive %s", db)
	}
}

// TestLocalMPILaunch: the command line sbench local starts an MPI launcher
// with, adapted to this one host.
func TestLocalMPILaunch(t *testing.T) {
	dir := t.TempDir()
	fake := func(name, version string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte("#!/bin/sh\necho '"+version+"'\n"), 0o755)
		return p
	}
	ompi := fake("ompi-mpirun", "mpirun (Open MPI) 4.1.4")
	hydra := fake("hydra-mpiexec", "HYDRA build details:")
	step := func(typ, command, flavor, mpi string, env map[string]string) campaign.Step {
		var st campaign.Step
		st.Benchmark = &campaign.Benchmark{Name: "b"}
		st.Config.Launcher = campaign.Launcher{Type: typ, Command: command, Flavor: flavor, MPI: mpi}
		st.Config.Env = env
		return st
	}
	root := ""
	if os.Geteuid() == 0 {
		root = " --allow-run-as-root"
	}
	allowed := map[string]string{"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
	for _, tt := range []struct {
		name  string
		st    campaign.Step
		ranks int
		want  string
	}{
		{"open mpi by flavor, ranks within the cores", step("mpirun", "", "openmpi", "", nil), 2, "mpirun -np 2 --map-by ppr:2:node" + root},
		{"more ranks than cores", step("mpirun", "", "openmpi", "", nil), 5, "mpirun -np 5 --map-by ppr:5:node --oversubscribe --bind-to none" + root},
		{"root allowed by the step's env", step("mpirun", "", "openmpi", "", allowed), 2, "mpirun -np 2 --map-by ppr:2:node"},
		{"open mpi by its --version", step("mpirun", ompi, "", "", nil), 2, ompi + " -np 2" + root},
		{"hydra", step("mpiexec", hydra, "", "", nil), 5, hydra + " -np 5"},
		{"mpich by flavor", step("mpiexec", "", "mpich", "", nil), 5, "mpiexec -np 5 -ppn 5"},
		{"srun --mpi=pmix", step("", "", "", "pmix", nil), 2, ompi + " -np 2" + root},
	} {
		l := &localRun{e: &env{stderr: io.Discard}, notes: map[string]bool{}, openMPI: map[string]bool{}, cores: 4, mpirun: ompi}
		argv, _ := l.mpiLaunch(tt.st, tt.ranks)
		if got := strings.Join(argv, " "); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
	// Cores not known: oversubscribe whatever the ranks.
	l := &localRun{e: &env{stderr: io.Discard}, notes: map[string]bool{}, openMPI: map[string]bool{}}
	if argv, _ := l.mpiLaunch(step("mpirun", "", "openmpi", "", allowed), 1); strings.Join(argv, " ") != "mpirun -np 1 --map-by ppr:1:node --oversubscribe --bind-to none" {
		t.Errorf("cores unknown: %q", argv)
	}
}
