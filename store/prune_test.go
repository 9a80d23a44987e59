package store

import (
	"context"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/sbench/sbench/results"
)

func TestPrunePlanThenDelete(t *testing.T) {
	db := openTemp(t)
	ctx := context.Background()
	keep := ingest(t, db, "keep.json", osuBundle("acc", "ib", "1", 3))
	old := osuBundle("scratch", "eth", "2", 3)
	old.Hosts = []results.Host{osuHost("n09", 0)} // a host no other run has
	scratch := ingest(t, db, "scratch.json", old, hplBundle("scratch", "3", time.Date(2024, 5, 2, 0, 0, 0, 0, time.UTC)))
	held := ingest(t, db, "held.json", osuBundle("scratch", "ib", "4", 2))
	if _, err := db.SetBaseline(ctx, Baseline{Name: "ref", RunIDs: held.Added}); err != nil {
		t.Fatal(err)
	}
	before := counts(t, db)

	plan, err := db.PlanPrune(ctx, Filter{Campaign: "scratch"})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(plan.IDs(), scratch.Added) {
		t.Errorf("plan deletes %v, want %v", plan.IDs(), scratch.Added)
	}
	if len(plan.Kept) != 1 || plan.Kept[0].ID != held.Added[0] || !reflect.DeepEqual(plan.Kept[0].Baselines, []string{"ref"}) {
		t.Errorf("plan keeps %+v, want run %d held by ref", plan.Kept, held.Added[0])
	}
	// Planning deletes nothing.
	if got := counts(t, db); !reflect.DeepEqual(got, before) {
		t.Errorf("PlanPrune changed the archive: %v -> %v", before, got)
	}

	res, err := db.Prune(ctx, plan.IDs())
	if err != nil {
		t.Fatal(err)
	}
	// n09 went with its only run; n01/n02 stay for the runs left.
	if res.Runs != 2 || res.Hosts != 1 {
		t.Errorf("Prune = %+v, want 2 runs and 1 host", res)
	}
	runs, _ := db.Runs(ctx, Filter{})
	var ids []int64
	for _, r := range runs {
		ids = append(ids, r.ID)
	}
	if want := []int64{keep.Added[0], held.Added[0]}; !reflect.DeepEqual(ids, want) {
		t.Errorf("runs left %v, want %v", ids, want)
	}
	// Nothing of the deleted runs is left in any table.
	for _, table := range []string{"bundles", "run_labels", "run_params", "run_hosts", "samples", "scalars", "checks"} {
		var n int
		if err := db.r.QueryRow("SELECT count(*) FROM " + table + " WHERE run_id NOT IN (SELECT id FROM runs)").Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Errorf("%s keeps %d rows of deleted runs", table, n)
		}
	}
	if n := count(t, db, "hosts WHERE hostname LIKE 'n09%'"); n != 0 {
		t.Error("the pruned run's own host description is still there")
	}
	// A second prune of the same ids finds nothing to do.
	if res, err := db.Prune(ctx, plan.IDs()); err != nil || res.Runs != 0 {
		t.Errorf("second Prune = %+v, %v", res, err)
	}
}

func TestPruneRefusesBaselineRuns(t *testing.T) {
	db := openTemp(t)
	ctx := context.Background()
	res := ingest(t, db, "a.json", osuBundle("acc", "ib", "1", 2), osuBundle("acc", "eth", "2", 2))
	if _, err := db.SetBaseline(ctx, Baseline{Name: "ref", RunIDs: res.Added[1:]}); err != nil {
		t.Fatal(err)
	}
	before := counts(t, db)
	_, err := db.Prune(ctx, res.Added)
	if err == nil || !strings.Contains(err.Error(), "baseline ref") {
		t.Fatalf("Prune of a baseline's run: %v, want a refusal naming the baseline", err)
	}
	if got := counts(t, db); !reflect.DeepEqual(got, before) {
		t.Errorf("a refused prune deleted something: %v -> %v", before, got)
	}
}

// TestPruneThenVacuum: deleting runs frees pages inside the file; Vacuum
// gives them back to the file system, and what is left reads as before.
func TestPruneThenVacuum(t *testing.T) {
	db := openTemp(t)
	ctx := context.Background()
	bs := osuBundles("scratch", 200, 20)
	for _, b := range bs {
		b.Raw = strings.Repeat("a line of tool output\n", 200)
	}
	ingest(t, db, "scratch.json", bs...)
	ingest(t, db, "keep.json", osuBundle("keep", "ib", "k", 5))
	plan, err := db.PlanPrune(ctx, Filter{Campaign: "scratch"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Prune(ctx, plan.IDs()); err != nil {
		t.Fatal(err)
	}
	free, err := db.Free(ctx)
	if err != nil || free < 1<<20 {
		t.Fatalf("free after prune: %d, %v; want the deleted runs' pages", free, err)
	}
	res, err := db.Vacuum(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if res.Before-res.After < free*9/10 {
		t.Errorf("vacuum: %d → %d bytes, want about %d reclaimed", res.Before, res.After, free)
	}
	if st, err := os.Stat(db.Path()); err != nil || st.Size() != res.After {
		t.Errorf("file is %v bytes, want %d: %v", st.Size(), res.After, err)
	}
	if st, err := os.Stat(db.Path() + "-wal"); err == nil && st.Size() > 0 {
		t.Errorf("the write-ahead log holds %d bytes after vacuum", st.Size())
	}
	if free, _ := db.Free(ctx); free != 0 {
		t.Errorf("free after vacuum: %d", free)
	}
	if runs, err := db.Runs(ctx, Filter{}); err != nil || len(runs) != 1 || runs[0].Campaign != "keep" {
		t.Errorf("after vacuum: %d runs, %v", len(runs), err)
	}
}
