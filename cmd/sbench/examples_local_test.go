package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sbench/sbench/internal/testenv"
	"github.com/sbench/sbench/store"
)

// TestLocalExamples runs the application examples as they are with sbench
// local, as a user trying them on a workstation does: examples/command.toml
// (a plain command, wall_time only: 6 ok runs, its reference passes) and
// examples/lammps.toml (Debian's LAMMPS, srun --mpi=pmix run under mpirun
// here, 1, 2 and 4 ranks, 3 repeats: 9 ok runs with the three figures its
// patterns read, and sbench check judging its reference on the 3 one-rank
// runs). A minute or two on two cores: make test-long's.
func TestLocalExamples(t *testing.T) {
	testenv.Long(t)
	testenv.LookPath(t, "lmp", "lammps")
	testenv.LookPath(t, "mpirun", "openmpi-bin")
	root := repoRoot(t)
	buildBinaries(t)
	dir := t.TempDir()
	t.Chdir(dir)
	if os.Geteuid() == 0 {
		t.Setenv("OMPI_ALLOW_RUN_AS_ROOT", "1")
		t.Setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
	}
	t.Setenv("SBENCH_SITE", "none")

	db := filepath.Join(dir, "command.db")
	if out, errs, code := sbench(t, "local", filepath.Join(root, "examples/command.toml"), "--db", db); code != 0 || !strings.Contains(out, "6 run(s)") {
		t.Fatalf("local command.toml: exit %d\n%s\n%s", code, out, errs)
	}
	if out, errs, code := sbench(t, "check", "campaign:command", "--db", db); code != 0 || strings.Count(out, "\nPASS ") != 2 {
		t.Errorf("check command: exit %d\n%s\n%s", code, out, errs)
	}

	db = filepath.Join(dir, "lammps.db")
	if out, errs, code := sbench(t, "local", filepath.Join(root, "examples/lammps.toml"), "--db", db); code != 0 || !strings.Contains(out, "9 run(s)") {
		t.Fatalf("local lammps.toml: exit %d\n%s\n%s", code, out, errs)
	}
	byRanks := map[int]int{}
	figures := map[int64]map[string]bool{}
	for _, s := range storedSamples(t, db, store.Filter{Campaign: "lammps"}) {
		if figures[s.RunID] == nil {
			figures[s.RunID] = map[string]bool{}
		}
		figures[s.RunID][s.Metric] = s.Value > 0
	}
	for _, r := range storedRuns(t, db, store.Filter{Campaign: "lammps"}) {
		f := figures[r.ID]
		if r.Status != "ok" || !f["timesteps_per_s"] || !f["tau_per_day"] || !f["loop_time"] || !f["wall_time"] {
			t.Errorf("run %d (%d ranks): %s %s, figures %v", r.ID, r.Tasks, r.Status, r.Error, f)
			continue
		}
		byRanks[r.Tasks]++
	}
	if got := fmt.Sprint(byRanks); got != "map[1:3 2:3 4:3]" {
		t.Errorf("ok runs with figures by rank count: %s, want 3 each of 1, 2 and 4", got)
	}
	// The reference's verdict depends on this machine; that it is judged
	// on the 3 one-rank runs does not.
	out, errs, code := sbench(t, "check", "campaign:lammps", "--db", db)
	line := ""
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "timesteps_per_s") && !strings.HasPrefix(l, " ") {
			line = l
		}
	}
	if code > 1 || !(strings.HasPrefix(line, "PASS") || strings.HasPrefix(line, "FAIL")) || !strings.Contains(line, " 3 ") {
		t.Errorf("check lammps: exit %d, the reference's line %q\n%s\n%s", code, line, out, errs)
	}
}
