package store

import (
	"context"
	"database/sql"
	"testing"

	"github.com/sbench/sbench/results"
)

// undoV7 takes a v7 archive back to v6.
const undoV7 = `ALTER TABLE runs DROP COLUMN note;
`

// A v6 archive holds what a v5 one does; its runs know their tool's
// benchmark.
func init() {
	seeds[6] = func(t *testing.T, tx *sql.Tx) {
		seeds[5](t, tx)
		if _, err := tx.Exec(`UPDATE runs SET tool_benchmark = benchmark WHERE kind = 'tool' AND kernel != 'exec'`); err != nil {
			t.Fatal(err)
		}
	}
}

// An ok run's note (NPtcp's receiver exited 3 after a complete curve) is
// archived with it, for the views to show; a run without one has none.
func TestRunNote(t *testing.T) {
	ctx := context.Background()
	db := openTemp(t)
	noted, plain := osuBundle("np", "ib", "1", 3), osuBundle("np", "ib", "2", 3)
	noted.Note = "rank 1 (node n2): NPtcp exited with status 3: NetPIPE: error writing or reading synchronization string: Connection reset by peer"
	ingest(t, db, "a.json", noted, plain)
	runs, err := db.Runs(ctx, Filter{Campaign: "np"})
	if err != nil || len(runs) != 2 {
		t.Fatalf("%d runs, %v", len(runs), err)
	}
	if runs[0].Note != noted.Note || runs[0].Status != results.StatusOK || runs[1].Note != "" {
		t.Errorf("notes %q and %q", runs[0].Note, runs[1].Note)
	}
	if b, err := db.Bundle(ctx, runs[0].ID); err != nil || b.Note != noted.Note {
		t.Errorf("bundle's note %q, %v", b.Note, err)
	}
}

// TestMigrateV6ToV7 opens an archive as a v6 sbench left it: every row
// stays, no run has a note, and a noted run can be added.
func TestMigrateV6ToV7(t *testing.T) {
	ctx := context.Background()
	db := openTemp(t)
	ingest(t, db, "a.json", osuBundle("acc", "ib", "1", 3), osuBundle("acc", "tcp", "2", 3))
	db = downgradeAndMigrate(t, db, undoV9+undoV8+undoV7+"PRAGMA user_version = 6", v3Tables)
	runs, err := db.Runs(ctx, Filter{})
	if err != nil || len(runs) != 2 || runs[0].Note != "" || runs[1].Note != "" {
		t.Fatalf("runs after migration %+v, %v", runs, err)
	}
	b := osuBundle("acc", "ib", "3", 3)
	b.Note = "rank 1 (node n2): NPtcp exited with status 3"
	res := ingest(t, db, "b.json", b)
	if runs, err := db.Runs(ctx, Filter{RunIDs: res.Added}); err != nil || len(runs) != 1 || runs[0].Note != b.Note {
		t.Errorf("the noted run after migration: %+v, %v", runs, err)
	}
}
