package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sbench/sbench/internal/testenv"
	"github.com/sbench/sbench/results"
	"github.com/sbench/sbench/slurm/testcluster"
	"github.com/sbench/sbench/store"
)

// placementCampaign runs a native kernel and a wrapped MPI tool (the OSU
// stand-in) at 2 nodes × 1 rank and 1 node × 2 ranks, launched by srun
// and by Open MPI's mpirun, all steps of one job, whose allocation is
// therefore 2 nodes × 2 tasks: where mpirun told only -np put both ranks
// of a 2-node step on n1. The two "wrong" variants plan 2 nodes × 1 rank
// and place both ranks on one node with their own launcher args.
const placementCampaign = `
[campaign]
name = "placement"

[slurm]
time = "00:03:00"

[runner]
bootstrap_timeout = "60s"

[[variant]]
name = "srun-2x1"
slurm = { nodes = 2, ntasks_per_node = 1 }
launcher = { type = "srun", mpi = "pmix" }

[[variant]]
name = "srun-1x2"
slurm = { nodes = 1, ntasks_per_node = 2 }
launcher = { type = "srun", mpi = "pmix" }

[[variant]]
name = "mpirun-2x1"
slurm = { nodes = 2, ntasks_per_node = 1 }
launcher = { type = "mpirun", flavor = "openmpi", args = ["--allow-run-as-root", "--bind-to", "none"] }

[[variant]]
name = "mpirun-1x2"
slurm = { nodes = 1, ntasks_per_node = 2 }
launcher = { type = "mpirun", flavor = "openmpi", args = ["--allow-run-as-root", "--bind-to", "none"] }

# Both ranks on one node, whatever the plan says: Open MPI's ppr by the
# user's args, srun's counts given again after sbench's (the last wins).
[[variant]]
name = "mpirun-wrong"
slurm = { nodes = 2, ntasks_per_node = 1 }
launcher = { type = "mpirun", flavor = "openmpi", args = ["--allow-run-as-root", "--bind-to", "none", "--map-by", "ppr:2:node"] }

[[variant]]
name = "srun-wrong"
slurm = { nodes = 2, ntasks_per_node = 1 }
launcher = { type = "srun", mpi = "pmix", args = ["--nodes=1", "--ntasks-per-node=2"] }

[[benchmark]]
name = "lat"
kernel = "latency"
params = { sizes = "1,1024", iterations = 200, warmup = 20 }

[[benchmark]]
name = "osu_latency"
command = ["osu_latency", "-m", "1:1024", "-i", "200", "-x", "20"]
parser = "osu"
`

// TestSlurmPlacement submits placementCampaign to a netns lab of two
// nodes, each its own network namespace with its own hostname (n1, n2):
// every run records the node each rank ran on, as Slurm names it under
// srun and as its hostname under mpirun. Every run placed as planned is
// ok, its hosts as planned (rank 0 on n1, rank 1 on n2, or both on n1);
// every wrongly placed one is archived invalid, both placements in its
// reason. The stand-in's runs say, per node, which MPI library it loaded:
// this machine's Open MPI, the one its mpirun is.
func TestSlurmPlacement(t *testing.T) {
	requireSlurm(t)
	if err := testcluster.AvailableNetns(); err != nil {
		testenv.Require(t, err.Error())
	}
	buildBinaries(t)
	buildOSUStandin(t)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	dir := t.TempDir()
	if err := testcluster.Searchable(dir); err != nil {
		t.Fatal(err)
	}
	lab, err := testcluster.Start(ctx, filepath.Join(dir, "lab"), 2, testcluster.WithNetns())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := lab.Stop(context.Background()); err != nil {
			t.Error(err)
		}
	})
	t.Setenv("SLURM_CONF", lab.Conf)
	// Ranks find each other on their namespace's address, not loopback.
	t.Setenv("SBENCH_BIND", "")
	// The stand-in, started by the runner under mpirun, finds it as root.
	t.Setenv("OMPI_ALLOW_RUN_AS_ROOT", "1")
	t.Setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
	t.Chdir(dir)
	camp := filepath.Join(dir, "placement.toml")
	if err := os.WriteFile(camp, []byte(placementCampaign), 0o644); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "archive.db")
	mustSbench(t, 0, "submit", camp, "--db", db)
	if out, stderr, code := slurmWait(t, slurmWaitLimit, db); code != 0 || !strings.Contains(out, "12 run(s) added") {
		logs, _ := filepath.Glob("sbench-runs/placement/*.out")
		for _, l := range logs {
			data, _ := os.ReadFile(l)
			t.Logf("%s:\n%s", l, tail(string(data), 80))
		}
		t.Fatalf("status --wait --ingest: exit %d, want every job COMPLETED and 12 runs\n%s\n%s", code, out, stderr)
	}

	want := map[string]struct {
		nodes  map[int]string // rank -> node
		reason string
	}{
		"srun-2x1":     {map[int]string{0: "n1", 1: "n2"}, ""},
		"srun-1x2":     {map[int]string{0: "n1", 1: "n1"}, ""},
		"mpirun-2x1":   {map[int]string{0: "n1", 1: "n2"}, ""},
		"mpirun-1x2":   {map[int]string{0: "n1", 1: "n1"}, ""},
		"mpirun-wrong": {map[int]string{0: "n1", 1: "n1"}, "placement: planned 2 nodes × 1 rank; ran on 1 node: n1 ranks 0,1"},
		"srun-wrong":   {map[int]string{0: "n1", 1: "n1"}, "placement: planned 2 nodes × 1 rank; ran on 1 node: n1 ranks 0,1"},
	}
	runs := storedRuns(t, db, store.Filter{Campaign: "placement"})
	samples := map[int64]int{}
	st, err := store.OpenReadOnly(db)
	if err != nil {
		t.Fatal(err)
	}
	all, err := st.Samples(ctx, store.Filter{Campaign: "placement"})
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range all {
		samples[s.RunID]++
	}
	seen := map[string]int{}
	for _, r := range runs {
		w, ok := want[r.Variant]
		if !ok {
			t.Errorf("run %d: variant %q is not the campaign's", r.ID, r.Variant)
			continue
		}
		seen[r.Variant+" "+r.Benchmark]++
		what := fmt.Sprintf("run %d (%s, %s)", r.ID, r.Variant, r.Benchmark)
		if got := rankNodes(r); fmt.Sprint(got) != fmt.Sprint(w.nodes) {
			t.Errorf("%s: ranks on %v, want %v", what, got, w.nodes)
		}
		switch {
		case w.reason == "" && r.Status != results.StatusOK:
			t.Errorf("%s: %s: %s", what, r.Status, r.Error)
		case w.reason != "" && (r.Status != results.StatusInvalid || r.Error != w.reason):
			t.Errorf("%s: %s %q, want invalid %q", what, r.Status, r.Error, w.reason)
		}
		// The misplaced runs were measured all the same.
		if samples[r.ID] == 0 {
			t.Errorf("%s: no samples", what)
		}
		launcher := "srun"
		if strings.HasPrefix(r.Variant, "mpirun") {
			launcher = "mpirun"
		}
		if r.Launcher != launcher {
			t.Errorf("%s: launcher %q, want %s", what, r.Launcher, launcher)
		}
		for _, h := range r.Hosts {
			// Each namespace is a node of its own, which described itself.
			if h.Hostname != h.NodeName {
				t.Errorf("%s: host %q recorded as node %q", what, h.Hostname, h.NodeName)
			}
			lib := r.Benchmark == "osu_latency"
			if lib != strings.HasPrefix(h.MPILibrary, "Open MPI ") || lib && (h.MPILibrary != h.MPI || !strings.Contains(h.MPILibraryPath, "libmpi.so")) {
				t.Errorf("%s on %s: MPI %q, library %q at %q", what, h.NodeName, h.MPI, h.MPILibrary, h.MPILibraryPath)
			}
		}
	}
	for v := range want {
		for _, b := range []string{"lat", "osu_latency"} {
			if seen[v+" "+b] != 1 {
				t.Errorf("%s %s: %d runs, want 1", v, b, seen[v+" "+b])
			}
		}
	}
	// The report warns of nothing: every node loaded its launcher's MPI.
	out, errs, code := sbench(t, "report", "--db", db, "-o", filepath.Join(dir, "r.pdf"))
	if code != 0 || strings.Contains(out+errs, "not the launcher's") {
		t.Errorf("report: exit %d\n%s%s", code, out, errs)
	}
}
