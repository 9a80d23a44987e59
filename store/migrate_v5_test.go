package store

import (
	"context"
	"database/sql"
	"reflect"
	"strings"
	"testing"
)

// undoV5 takes a v5 archive back to v4.
const undoV5 = `DROP INDEX runs_system;
DROP INDEX runs_status;
DROP INDEX run_hosts_host;
ALTER TABLE runs DROP COLUMN system;
`

// A v4 archive holds what a v3 one does; its runs know their attempt.
func init() {
	seeds[4] = func(t *testing.T, tx *sql.Tx) {
		seeds[3](t, tx)
		if _, err := tx.Exec(`UPDATE runs SET restart = 0`); err != nil {
			t.Fatal(err)
		}
	}
}

// TestMigrateV4ToV5 takes an archive of two systems back to v4, where the
// system was only a label, and opens it: every row stays, the runs
// labelled system=NAME are that system's, the others have none, and the
// system filters and the new indexes work.
func TestMigrateV4ToV5(t *testing.T) {
	ctx := context.Background()
	db := openTemp(t)
	alpha, beta, none := osuBundle("acc", "ib", "1", 23), osuBundle("acc", "ib", "2", 5), osuBundle("acc", "eth", "3", 7)
	alpha.Labels["system"], beta.Labels["system"] = "alpha", "beta"
	ingest(t, db, "a.json", alpha, beta, none)
	db = downgradeAndMigrate(t, db, undoV9+undoV8+undoV7+undoV6+undoV5+"PRAGMA user_version = 4", v3Tables)
	runs, err := db.Runs(ctx, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if systems, want := runSystems(runs), []string{"alpha", "beta", ""}; !reflect.DeepEqual(systems, want) {
		t.Errorf("systems after migration %q, want %q", systems, want)
	}
	for _, tt := range []struct {
		f    Filter
		want int
	}{
		{Filter{Systems: []string{"alpha"}}, 1},
		{Filter{Systems: []string{"alpha", "beta"}}, 2},
		{Filter{Labels: map[string]string{"system": "beta"}}, 1},
		{Filter{Systems: []string{"gamma"}}, 0},
	} {
		if n, err := db.CountRuns(ctx, tt.f); err != nil || n != tt.want {
			t.Errorf("CountRuns(%+v) = %d, %v; want %d", tt.f, n, err, tt.want)
		}
	}
	for query, index := range map[string]string{
		"SELECT id FROM runs WHERE system = 'alpha' ORDER BY start_time":  "runs_system",
		"SELECT id FROM runs WHERE status = 'failed' ORDER BY start_time": "runs_status",
		"SELECT run_id FROM run_hosts WHERE host_id = 1":                  "run_hosts_host",
	} {
		if plan := queryPlan(t, db, query); !strings.Contains(plan, index) {
			t.Errorf("%s: plan %q does not use %s", query, plan, index)
		}
	}
}
