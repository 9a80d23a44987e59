package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sbench/sbench/internal/testenv"
	"github.com/sbench/sbench/store"
)

// labProfiles are two site profiles of the test cluster, as two systems:
// alpha promises what any machine reaches, beta what none does.
var labProfiles = map[string]string{
	"alpha": `[site]
name = "alpha"
description = "the test cluster, as system alpha"

[slurm]
partition = "debug"
env = { SBENCH_LAB_SYSTEM = "alpha" }

[fabric]
link_rate = "10Gbps"

[[expect]]
name = "alpha one-rank floor"
benchmark = "lj"
metric = "timesteps_per_s"
where = "ntasks_per_node=1"
bound = ">= 0.001 timesteps/s"
`,
	"beta": `[site]
name = "beta"
description = "the test cluster, as system beta"

[slurm]
partition = "debug"
env = { SBENCH_LAB_SYSTEM = "beta" }

[fabric]
link_rate = "25Gbps"

[[expect]]
name = "beta impossible promise"
benchmark = "lj"
metric = "timesteps_per_s"
bound = ">= 1000000000 timesteps/s"
`,
}

// TestSlurmLAMMPS is issue 27 on a real Slurm: examples/lammps.toml as it
// is (Debian's LAMMPS on its bundled LJ melt input, srun --mpi=pmix, 1, 2
// and 4 ranks, 3 repeats) submitted once under each of two site profiles.
// Every run is ok with its timesteps/s, tau/day and loop time read by the
// campaign's patterns; each records the profile that shaped it (name and
// hash) and its system; sbench check judges the campaign's reference and
// each profile's on its own system's runs, and exits 1 naming the one that
// is missed.
func TestSlurmLAMMPS(t *testing.T) {
	requireSlurm(t)
	testenv.LookPath(t, "lmp", "lammps")
	root := repoRoot(t)
	dir := slurmWorkDir(t)
	db := filepath.Join(dir, "archive.db")
	hashes := map[string]string{}
	for _, name := range []string{"alpha", "beta"} {
		path := filepath.Join(dir, name+".toml")
		if err := os.WriteFile(path, []byte(labProfiles[name]), 0o644); err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256([]byte(labProfiles[name]))
		hashes[name] = "sha256:" + hex.EncodeToString(sum[:])
		out, errs, code := sbench(t, "submit", filepath.Join(root, "examples/lammps.toml"), "--site", path, "--db", db)
		if code != 0 {
			t.Fatalf("submit under %s: exit %d\n%s\n%s", name, code, out, errs)
		}
		status, errs, code := slurmWait(t, slurmWaitLimit, db, "--campaign", "lammps")
		if code != 0 || !strings.Contains(status, "9 run(s) added") {
			logSlurmState(t)
			t.Fatalf("status --wait --ingest under %s: exit %d, want 9 runs added\n%s\n%s", name, code, status, errs)
		}
	}

	runs := storedRuns(t, db, store.Filter{Campaign: "lammps"})
	if len(runs) != 18 {
		t.Fatalf("%d runs archived, want 18", len(runs))
	}
	perSystem := map[string]map[int]int{} // system → ranks → ok runs with a figure
	samples := storedSamples(t, db, store.Filter{Campaign: "lammps"})
	figures := map[int64]map[string]float64{}
	for _, s := range samples {
		if figures[s.RunID] == nil {
			figures[s.RunID] = map[string]float64{}
		}
		figures[s.RunID][s.Metric] = s.Value
	}
	for _, r := range runs {
		sys := r.Labels["system"]
		if r.Status != "ok" || r.Labels["site_profile"] != sys+" "+hashes[sys] {
			t.Errorf("run %d: status %s (%s), system %q, site_profile %q (want %q)", r.ID, r.Status, r.Error, sys,
				r.Labels["site_profile"], sys+" "+hashes[sys])
			continue
		}
		f := figures[r.ID]
		if !(f["timesteps_per_s"] > 0) || !(f["tau_per_day"] > 0) || !(f["loop_time"] > 0) || !(f["wall_time"] > 0) {
			t.Errorf("run %d (%s, %d ranks): figures %v", r.ID, sys, r.Tasks, f)
			continue
		}
		if perSystem[sys] == nil {
			perSystem[sys] = map[int]int{}
		}
		perSystem[sys][r.Tasks]++
	}
	for _, sys := range []string{"alpha", "beta"} {
		if got := fmt.Sprint(perSystem[sys]); got != "map[1:3 2:3 4:3]" {
			t.Errorf("system %s: ok runs with figures by rank count %s, want 3 each of 1, 2 and 4", sys, got)
		}
	}

	// The campaign's reference (>= 10 timesteps/s on one rank) depends
	// on this machine's load, so it may PASS or FAIL; alpha's floor must
	// PASS, beta's promise must FAIL, and the exit status says so.
	out, errs, code := sbench(t, "check", "campaign:lammps", "--db", db)
	if code != 1 {
		t.Fatalf("check: exit %d, want 1 (beta's promise is missed)\n%s\n%s", code, out, errs)
	}
	lines := map[string]string{}
	for _, l := range strings.Split(out, "\n") {
		for _, name := range []string{"alpha one-rank floor", "beta impossible promise"} {
			if strings.Contains(l, name) && !strings.HasPrefix(l, " ") { // not a note under the table
				lines[name] += l + "\n"
			}
		}
	}
	if l := lines["alpha one-rank floor"]; !strings.HasPrefix(l, "PASS") || strings.Count(l, "\n") != 1 {
		t.Errorf("alpha's expectation: %q, want one PASS line\n%s", l, out)
	}
	if l := lines["beta impossible promise"]; !strings.HasPrefix(l, "FAIL") {
		t.Errorf("beta's expectation: %q, want FAIL\n%s", l, out)
	}
}

// TestSlurmCommandExample: examples/command.toml as it is — a plain
// command with no parser, 1 and 4 ranks, 3 repeats — gives six ok runs
// with their wall time, and its reference (<= 60 s) passes.
func TestSlurmCommandExample(t *testing.T) {
	requireSlurm(t)
	root := repoRoot(t)
	_, db, _, _ := slurmRun(t, filepath.Join(root, "examples/command.toml"), "command", 1, 6)
	for _, s := range storedSamples(t, db, store.Filter{Campaign: "command"}) {
		if s.Metric != "wall_time" || !(s.Value > 0) {
			t.Errorf("run %d: sample %s = %v, want only wall_time > 0", s.RunID, s.Metric, s.Value)
		}
	}
	out, errs, code := sbench(t, "check", "campaign:command", "--db", db)
	if code != 0 || !strings.HasPrefix(out, "STATUS") || strings.Count(out, "\nPASS ") != 2 || strings.Contains(out, "\nFAIL ") {
		t.Errorf("check: exit %d\n%s\n%s", code, out, errs)
	}
}
