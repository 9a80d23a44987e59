package store

import (
	"context"
	"database/sql"
	"testing"
)

// A v3 archive holds what a v2 one does, and a baseline.
func init() {
	seeds[3] = func(t *testing.T, tx *sql.Tx) {
		seedV1(t, tx)
		for _, q := range []string{
			`INSERT INTO baselines (name, selection, note, created) VALUES ('pre', 'run:1', '', '2023-01-04T00:00:00.000000000Z')`,
			`INSERT INTO baseline_runs (baseline, run_id) VALUES ('pre', 1)`,
		} {
			if _, err := tx.Exec(q); err != nil {
				t.Fatalf("seed v3: %v\n%s", err, q)
			}
		}
	}
}

// TestMigrateV3ToV4 takes a full archive back to v3 and opens it: every row
// of every v3 table stays, old runs are first attempts, old jobs have no
// plan, and the new columns work.
func TestMigrateV3ToV4(t *testing.T) {
	ctx := context.Background()
	db := openTemp(t)
	ingest(t, db, "a.json", osuBundle("acc", "ib", "1", 23), osuBundle("acc", "eth", "2", 5))
	if _, err := db.RecordJob(ctx, Job{SlurmID: "1", Campaign: "acc", Variants: []string{"ib"}, State: "COMPLETED"}); err != nil {
		t.Fatal(err)
	}
	db = downgradeAndMigrate(t, db, undoV9+undoV8+undoV7+undoV6+undoV5+undoV4+"PRAGMA user_version = 3", v3Tables)
	runs, _ := db.Runs(ctx, Filter{})
	for _, r := range runs {
		if r.Restart != 0 {
			t.Errorf("run %d: restart %d after migration, want 0", r.ID, r.Restart)
		}
	}
	jobs, _ := db.Jobs(ctx, "acc")
	if len(jobs) != 1 || jobs[0].Plan != nil || jobs[0].Restarts != 0 {
		t.Errorf("jobs after migration %+v", jobs)
	}
}
