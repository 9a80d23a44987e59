package main

import (
	"os"
	"strings"
	"testing"
)

// TestPruneReclaims: prune --yes gives the deleted runs' space back to the
// disk and says how much; --no-vacuum leaves it inside the file, saying
// so and how to reclaim it.
func TestPruneReclaims(t *testing.T) {
	for _, noVacuum := range []bool{false, true} {
		db := twoSystems(t)
		before, _ := os.Stat(db)
		args := []string{"prune", "--db", db, "--system", "alpha", "--yes"}
		if noVacuum {
			args = append(args, "--no-vacuum")
		}
		out, _ := mustSbench(t, 0, args...)
		after, _ := os.Stat(db)
		switch {
		case !strings.Contains(out, "deleted 2 run(s)"):
			t.Errorf("prune %q:\n%s", args, out)
		case noVacuum && !strings.Contains(out, "free inside the archive, for new runs; sbench prune without --no-vacuum, or sqlite3 "+db+" VACUUM"):
			t.Errorf("--no-vacuum does not say what is left to reclaim:\n%s", out)
		case !noVacuum && (!strings.Contains(out, "reclaimed ") || after.Size() >= before.Size()):
			t.Errorf("prune --yes: %d → %d bytes:\n%s", before.Size(), after.Size(), out)
		}
		if out, _ := mustSbench(t, 0, "runs", "--db", db); strings.Count(out, "\n") != 3 {
			t.Errorf("after prune:\n%s", out)
		}
	}
}
