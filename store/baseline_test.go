package store

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestBaselineSetGetListReplaceDelete(t *testing.T) {
	db := openTemp(t)
	ctx := context.Background()
	a := ingest(t, db, "a.json", osuBundle("acc", "ib", "1", 3), osuBundle("acc", "eth", "2", 3))
	b := ingest(t, db, "b.json", osuBundle("acc", "ib", "3", 4))

	replaced, err := db.SetBaseline(ctx, Baseline{Name: "pre-upgrade", Selection: "campaign:acc", Note: "before OFED", RunIDs: []int64{a.Added[1], a.Added[0], a.Added[0]}})
	if err != nil || replaced {
		t.Fatalf("SetBaseline = %v, %v", replaced, err)
	}
	got, err := db.Baseline(ctx, "pre-upgrade")
	if err != nil {
		t.Fatal(err)
	}
	want := Baseline{Name: "pre-upgrade", Selection: "campaign:acc", Note: "before OFED", Created: clock, RunIDs: []int64{a.Added[0], a.Added[1]}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Baseline = %+v, want %+v (ids sorted, deduplicated; created stamped)", got, want)
	}

	// Setting it again replaces it whole.
	later := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	replaced, err = db.SetBaseline(ctx, Baseline{Name: "pre-upgrade", Selection: "run:3", Created: later, RunIDs: b.Added})
	if err != nil || !replaced {
		t.Fatalf("SetBaseline again = %v, %v", replaced, err)
	}
	if _, err := db.SetBaseline(ctx, Baseline{Name: "another", RunIDs: a.Added[:1]}); err != nil {
		t.Fatal(err)
	}
	all, err := db.Baselines(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 2 || all[0].Name != "another" || all[1].Name != "pre-upgrade" ||
		!reflect.DeepEqual(all[1].RunIDs, b.Added) || !all[1].Created.Equal(later) || all[1].Note != "" {
		t.Errorf("Baselines = %+v", all)
	}

	if err := db.DeleteBaseline(ctx, "another"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Baseline(ctx, "another"); !errors.Is(err, ErrNotFound) {
		t.Errorf("deleted baseline: err %v, want ErrNotFound", err)
	}
	if err := db.DeleteBaseline(ctx, "another"); !errors.Is(err, ErrNotFound) {
		t.Errorf("deleting twice: err %v, want ErrNotFound", err)
	}
	if n := count(t, db, "baseline_runs"); n != len(b.Added) {
		t.Errorf("%d baseline_runs rows after the delete, want %d (the other baseline's went with it)", n, len(b.Added))
	}
}

func TestBaselineRefusesBadInput(t *testing.T) {
	db := openTemp(t)
	ctx := context.Background()
	res := ingest(t, db, "a.json", osuBundle("acc", "ib", "1", 2))
	for _, c := range []struct {
		b    Baseline
		want string
	}{
		{Baseline{Name: "", RunIDs: res.Added}, "name is empty"},
		{Baseline{Name: "two words", RunIDs: res.Added}, "no spaces"},
		{Baseline{Name: "a,b", RunIDs: res.Added}, "commas"},
		{Baseline{Name: "empty"}, "no runs"},
		{Baseline{Name: "ghost", RunIDs: []int64{res.Added[0], 999}}, "run 999"},
	} {
		_, err := db.SetBaseline(ctx, c.b)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("SetBaseline(%+v) = %v, want an error about %q", c.b, err, c.want)
		}
	}
	if _, err := db.SetBaseline(ctx, Baseline{Name: "ghost", RunIDs: []int64{999}}); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown run: %v, want ErrNotFound", err)
	}
	if n := count(t, db, "baselines"); n != 0 {
		t.Errorf("%d baselines stored by refused calls", n)
	}
}

func TestBaselineRunCannotBeDeletedBehindItsBack(t *testing.T) {
	db := openTemp(t)
	ctx := context.Background()
	res := ingest(t, db, "a.json", osuBundle("acc", "ib", "1", 2))
	if _, err := db.SetBaseline(ctx, Baseline{Name: "ref", RunIDs: res.Added}); err != nil {
		t.Fatal(err)
	}
	// Not through prune, and not through SQL either: the foreign key holds.
	if _, err := db.w.Exec("DELETE FROM runs WHERE id = ?", res.Added[0]); err == nil {
		t.Error("deleting a run a baseline holds succeeded")
	}
	if n := count(t, db, "runs"); n != 1 {
		t.Errorf("%d runs, want 1", n)
	}
}
