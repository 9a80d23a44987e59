package main

import (
	"context"
	"encoding/csv"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sbench/sbench/results"
	"github.com/sbench/sbench/store"
)

// requireSlurm skips (or, in CI, fails) unless a test cluster is up:
// make test-slurm starts one and exports SLURM_CONF.
func requireSlurm(t *testing.T) {
	t.Helper()
	if os.Getenv("SLURM_CONF") == "" {
		requireIntegration(t, "SLURM_CONF is not set (run make test-slurm)")
	}
	if _, err := exec.LookPath("sbatch"); err != nil {
		requireIntegration(t, "sbatch is not installed")
	}
}

// TestSlurmQuickstart is the walking skeleton on a real Slurm: submit the
// quickstart, wait, ingest, report. The test cluster has fake nodes n1 and
// n2 on one host.
func TestSlurmQuickstart(t *testing.T) {
	requireSlurm(t)
	buildBinaries(t)
	root := repoRoot(t)
	dir := t.TempDir()
	t.Chdir(dir)
	// Ranks of the test cluster talk over loopback only.
	t.Setenv("SBENCH_BIND", "127.0.0.1")
	db := filepath.Join(dir, "s.db")
	campaign := filepath.Join(root, "examples/quickstart.toml")

	stdout, stderr, code := sbench(t, "submit", campaign, "--db", db)
	if code != 0 {
		t.Fatalf("submit: exit %d: %s", code, stderr)
	}
	ids := strings.Fields(stdout)
	if len(ids) != 2 {
		t.Fatalf("submit printed %q, want two job ids", stdout)
	}
	stdout, stderr, code = sbench(t, "status", "--db", db, "--campaign", "quickstart", "--wait", "--interval", "500ms", "--ingest")
	if code != 0 {
		logs, _ := filepath.Glob("sbench-runs/quickstart/*.out")
		for _, l := range logs {
			data, _ := os.ReadFile(l)
			t.Logf("%s:\n%s", l, data)
		}
		t.Fatalf("status --wait: exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, id := range ids {
		if !strings.Contains(stdout, id) || !strings.Contains(stdout, "COMPLETED") {
			t.Errorf("status output lacks job %s COMPLETED:\n%s", id, stdout)
		}
	}
	if !strings.Contains(stdout, "4 run(s) added") {
		t.Errorf("status --ingest did not add 4 runs:\n%s", stdout)
	}

	// Every variant has samples; the inter-node one ran on n1 and n2.
	out, _, _ := sbench(t, "runs", "--db", db, "--json")
	for _, want := range []string{`"variant": "ntasks_per_node=1"`, `"variant": "ntasks_per_node=2"`, `"n1"`, `"n2"`} {
		if !strings.Contains(out, want) {
			t.Errorf("runs --json lacks %s:\n%s", want, out)
		}
	}
	checkInterNodeHosts(t, db)
	csvText, _, _ := sbench(t, "export", "--db", db, "--format", "csv")
	rows, err := csv.NewReader(strings.NewReader(csvText)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	perVariant := map[string]int{}
	vcol := -1
	for i, h := range rows[0] {
		if h == "variant" {
			vcol = i
		}
	}
	for _, r := range rows[1:] {
		perVariant[r[vcol]]++
	}
	if perVariant["ntasks_per_node=1"] < 46 || perVariant["ntasks_per_node=2"] < 46 {
		t.Errorf("samples per variant %v, want ≥ 46 each", perVariant)
	}
	// The jobs table knows the final state and nodes.
	out, _, _ = sbench(t, "status", "--db", db, "--all")
	if strings.Count(out, "COMPLETED") != 2 || !strings.Contains(out, "n[1-2]") {
		t.Errorf("status --all:\n%s", out)
	}
	pdf := filepath.Join(dir, "r.pdf")
	if _, stderr, code := sbench(t, "report", "--db", db, "-o", pdf); code != 0 {
		t.Fatalf("report: %s", stderr)
	}
	checkPDF(t, pdf, []string{"bandwidth", "latency", "COMPLETED", "n[1-2]"})
}

// checkInterNodeHosts checks that in the one-task-per-node variant rank 0 ran
// on n1 and rank 1 on n2, and in the two-per-node variant both on n1.
func checkInterNodeHosts(t *testing.T, dbPath string) {
	t.Helper()
	db, err := store.Open(dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	runs, err := db.Runs(context.Background(), store.Filter{Campaign: "quickstart"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]map[int]string{
		"ntasks_per_node=1": {0: "n1", 1: "n2"},
		"ntasks_per_node=2": {0: "n1", 1: "n1"},
	}
	for _, r := range runs {
		if r.Status != results.StatusOK {
			t.Errorf("run %d (%s %s): status %s: %s", r.ID, r.Variant, r.Benchmark, r.Status, r.Error)
		}
		node := map[int]string{}
		for _, h := range r.Hosts {
			for _, rank := range h.Ranks {
				node[rank] = h.NodeName
			}
		}
		for rank, n := range want[r.Variant] {
			if node[rank] != n {
				t.Errorf("run %d (%s %s): rank %d on %q, want %q (hosts %+v)", r.ID, r.Variant, r.Benchmark, rank, node[rank], n, r.Hosts)
			}
		}
		if r.JobID == "" || r.Step == "" {
			t.Errorf("run %d has no Slurm job/step: %q.%q", r.ID, r.JobID, r.Step)
		}
	}
}
