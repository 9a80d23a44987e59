package store

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
)

// Schema version 2 added only indexes: what a v2 sbench wrote is what v1
// wrote, so its seed is v1's.
func init() { seeds[2] = seedV1 }

// undoV4 takes a v4 archive back to v3.
const undoV4 = `DROP INDEX runs_job;
ALTER TABLE runs DROP COLUMN restart;
ALTER TABLE jobs DROP COLUMN plan;
ALTER TABLE jobs DROP COLUMN output;
ALTER TABLE jobs DROP COLUMN error;
ALTER TABLE jobs DROP COLUMN restarts;
ALTER TABLE jobs DROP COLUMN intent;
`

// v3Tables are the tables of a v3 archive: what v4 and v5 must keep.
var v3Tables = append(append([]string{}, dataTables...), "jobs", "baselines", "baseline_runs")

// downgradeAndMigrate takes the archive db back with undo, closes it and
// opens it again, which migrates it; it fails the test unless the archive
// ends at the latest version with every row of tables as it was. It
// returns the migrated archive, closed with the test.
func downgradeAndMigrate(t *testing.T, db *DB, undo string, tables []string) *DB {
	t.Helper()
	return downgradeAndMigrateKeeping(t, db, undo, tables, map[string]string{})
}

// downgradeAndMigrateKeeping is downgradeAndMigrate comparing only the
// columns cols names of a table ("*" or all, when it names none): those a
// migration must keep, where it rewrites others.
func downgradeAndMigrateKeeping(t *testing.T, db *DB, undo string, tables []string, cols map[string]string) *DB {
	t.Helper()
	if _, err := db.w.Exec(undo); err != nil {
		t.Fatal(err)
	}
	before := dumpTables(t, db, tables, cols)
	db.Close()
	db = openAt(t, db.Path())
	if v, _ := db.SchemaVersion(context.Background()); v != LatestSchemaVersion() {
		t.Fatalf("schema version %d after migration, want %d", v, LatestSchemaVersion())
	}
	if after := dumpTables(t, db, tables, cols); !reflect.DeepEqual(before, after) {
		for _, table := range tables {
			if !reflect.DeepEqual(before[table], after[table]) {
				t.Errorf("table %s changed in migration:\nbefore %q\nafter  %q", table, before[table], after[table])
			}
		}
	}
	return db
}

// dumpTables returns every row of the given tables as text, in a fixed
// order: two dumps are equal when nothing was lost or changed.
// dumpTables reads every row of tables, each as one string of the columns
// the table had when first dumped (cols, filled on first use): columns a
// later migration adds do not make a row differ.
func dumpTables(t *testing.T, db *DB, tables []string, cols map[string]string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, table := range tables {
		if cols[table] == "" {
			cols[table] = "*"
			if rows, err := db.r.Query("SELECT * FROM " + table + " LIMIT 0"); err == nil {
				names, _ := rows.Columns()
				rows.Close()
				cols[table] = strings.Join(names, ", ")
			}
		}
		rows, err := db.r.Query("SELECT " + cols[table] + " FROM " + table + " ORDER BY 1, 2")
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			for i, v := range vals {
				if i > 0 {
					b.WriteString(" | ")
				}
				if bs, ok := v.([]byte); ok {
					v = string(bs)
				}
				fmt.Fprintf(&b, "%v", v)
			}
			out[table] = append(out[table], b.String())
		}
		rows.Close()
	}
	return out
}

// TestMigrateV2ArchiveWithManyRuns builds a v2 archive the way a v2 sbench
// left it — today's ingest wrote the same rows into the same tables, so a
// full archive is taken back to v2 by removing what v3 added — fills it
// with varied runs and jobs, opens it with this sbench and checks that
// every row of every v2 table is still there, unchanged, and that the v3
// tables work.
func TestMigrateV2ArchiveWithManyRuns(t *testing.T) {
	ctx := context.Background()
	db := openTemp(t)
	big := osuBundle("acc", "ib", "1", 23)
	big.Raw = strings.Repeat("x", 2*compressAbove) // stored gzipped
	ingest(t, db, "a.json", big, osuBundle("acc", "eth", "2", 5))
	ingest(t, db, "hpl.txt", hplBundle("acc", "3", time.Date(2024, 5, 2, 0, 0, 0, 0, time.UTC)))
	if _, err := db.RecordJob(ctx, Job{SlurmID: "1", Campaign: "acc", Variants: []string{"ib"}, State: "COMPLETED"}); err != nil {
		t.Fatal(err)
	}
	if n := count(t, db, "samples"); n != 23+5+2 {
		t.Errorf("the v2 archive had %d samples, want 30: the test checks too little", n)
	}
	v2Tables := append(append([]string{}, dataTables...), "jobs")
	db = downgradeAndMigrate(t, db, undoV9+undoV8+undoV7+undoV6+undoV5+undoV4+"DROP TABLE baseline_runs; DROP TABLE baselines; PRAGMA user_version = 2", v2Tables)
	runs, _ := db.Runs(ctx, Filter{})
	if _, err := db.SetBaseline(ctx, Baseline{Name: "ref", RunIDs: []int64{runs[0].ID}}); err != nil {
		t.Errorf("baselines do not work after migration: %v", err)
	}
	b, err := db.Bundle(ctx, runs[0].ID)
	if err != nil || len(b.Samples) == 0 {
		t.Errorf("bundle after migration: %v", err)
	}
}
