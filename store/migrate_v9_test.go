package store

import (
	"context"
	"database/sql"
	"testing"

	"github.com/sbench/sbench/expect"
)

// undoV9 takes a v9 archive back to v8.
const undoV9 = `DROP TABLE expectations;`

// A v8 archive holds what a v7 one does; its jobs may carry a submission.
func init() {
	seeds[8] = func(t *testing.T, tx *sql.Tx) {
		seeds[7](t, tx)
	}
}

// A campaign's expectations are recorded whole, replaced by the next
// recording, and read back in their order; another campaign's stay.
func TestExpectations(t *testing.T) {
	ctx := context.Background()
	db := openTemp(t)
	first := []expect.Ref{
		{Benchmark: "bw", Metric: "bandwidth", At: "4MiB", Bound: ">= 24 GB/s", Where: "ntasks_per_node=1", Source: "campaign q (q.toml:30)"},
		{Name: "lat", Benchmark: "latency", Metric: "latency", At: "8", Bound: "<= 3 us", System: "hpc1"},
	}
	if err := db.SetExpectations(ctx, "q", "", first); err != nil {
		t.Fatal(err)
	}
	if err := db.SetExpectations(ctx, "other", "", first[:1]); err != nil {
		t.Fatal(err)
	}
	got, err := db.Expectations(ctx, "q")
	if err != nil || len(got) != 1 || len(got[0].Refs) != 2 || got[0].Refs[0] != first[0] || got[0].Refs[1] != first[1] || got[0].Recorded.IsZero() {
		t.Fatalf("Expectations(q) = %+v, %v", got, err)
	}
	if err := db.SetExpectations(ctx, "q", "", first[1:]); err != nil {
		t.Fatal(err)
	}
	all, err := db.Expectations(ctx, "")
	if err != nil || len(all) != 2 || all[0].Campaign != "other" || all[1].Campaign != "q" || len(all[1].Refs) != 1 || all[1].Refs[0] != first[1] {
		t.Fatalf("Expectations() = %+v, %v", all, err)
	}
	// A site profile's are kept apart: recording the campaign under
	// profile beta leaves alpha's, and the campaign's own, as they were.
	alpha := []expect.Ref{{Name: "alpha floor", Benchmark: "lj", Metric: "timesteps_per_s", Bound: ">= 1 timesteps/s", System: "alpha"}}
	beta := []expect.Ref{{Name: "beta promise", Benchmark: "lj", Metric: "timesteps_per_s", Bound: ">= 9 timesteps/s", System: "beta"}}
	for _, set := range []struct {
		site string
		refs []expect.Ref
	}{{"alpha", alpha}, {"beta", beta}, {"beta", beta}} {
		if err := db.SetExpectations(ctx, "q", set.site, set.refs); err != nil {
			t.Fatal(err)
		}
	}
	got, err = db.Expectations(ctx, "q")
	if err != nil || len(got) != 1 || len(got[0].Refs) != 3 || got[0].Refs[0] != first[1] || got[0].Refs[1] != alpha[0] || got[0].Refs[2] != beta[0] {
		t.Fatalf("Expectations(q) under two profiles = %+v, %v", got, err)
	}
}

// TestMigrateV8ToV9 opens an archive as a v8 sbench left it: every run
// stays, no campaign has expectations, and they can be recorded.
func TestMigrateV8ToV9(t *testing.T) {
	ctx := context.Background()
	db := openTemp(t)
	ingest(t, db, "a.json", osuBundle("acc", "ib", "1", 3))
	db = downgradeAndMigrate(t, db, undoV9+"PRAGMA user_version = 8", v3Tables)
	if got, err := db.Expectations(ctx, ""); err != nil || len(got) != 0 {
		t.Fatalf("expectations after migration: %+v, %v", got, err)
	}
	if n, err := db.CountRuns(ctx, Filter{Campaign: "acc"}); err != nil || n == 0 {
		t.Fatalf("runs after migration: %d, %v", n, err)
	}
	if err := db.SetExpectations(ctx, "acc", "", []expect.Ref{{Benchmark: "osu_bw", Metric: "bandwidth", Bound: ">= 1 MB/s"}}); err != nil {
		t.Fatal(err)
	}
}
