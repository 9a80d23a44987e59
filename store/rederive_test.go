package store

import (
	"context"
	"errors"
	"testing"

	"github.com/sbench/sbench/results"
)

// Rederive replaces a run's samples, status, error, bundle and hash in
// place, keeping its id; an error in any run writes nothing.
func TestRederive(t *testing.T) {
	ctx := context.Background()
	db := openTemp(t)
	res := ingest(t, db, "a.json", osuBundle("c", "v", "1", 4), osuBundle("c", "v2", "2", 3))
	id, other := res.Added[0], res.Added[1]
	before := counts(t, db)

	changed, err := db.Rederive(ctx, []int64{id, other}, func(rid int64, b *results.Bundle) (bool, error) {
		if rid != id {
			return false, nil
		}
		b.Samples = append(b.Samples[:1], results.Sample{Metric: "steps_per_s", Unit: "steps/s", Value: 42})
		b.Status, b.Error = results.StatusInvalid, "sanity: the output lacks the required pattern \"x\""
		return true, nil
	})
	if err != nil || len(changed) != 1 || changed[0] != id {
		t.Fatalf("changed %v, %v", changed, err)
	}
	runs, err := db.Runs(ctx, Filter{RunIDs: []int64{id}})
	if err != nil || len(runs) != 1 {
		t.Fatal(runs, err)
	}
	if r := runs[0]; r.Status != results.StatusInvalid || r.Error == "" {
		t.Errorf("run %+v", r)
	}
	b, err := db.Bundle(ctx, id)
	if err != nil || len(b.Samples) != 2 || b.Samples[1].Metric != "steps_per_s" {
		t.Fatalf("bundle %+v %v", b, err)
	}
	hash, _ := results.Hash(b)
	if runs[0].Hash != hash {
		t.Errorf("hash %s, the bundle's %s", runs[0].Hash, hash)
	}
	samples, err := db.Samples(ctx, Filter{RunIDs: []int64{id}})
	if err != nil || len(samples) != 2 {
		t.Errorf("samples %+v %v", samples, err)
	}
	after := counts(t, db)
	if after["runs"] != before["runs"] || after["samples"] != before["samples"]-4+2 {
		t.Errorf("counts %v, before %v", after, before)
	}

	// A failure in the second run leaves the first unchanged too.
	_, err = db.Rederive(ctx, []int64{id, other}, func(rid int64, b *results.Bundle) (bool, error) {
		if rid == other {
			return false, errors.New("boom")
		}
		b.Samples = nil
		return true, nil
	})
	if err == nil {
		t.Fatal("no error")
	}
	if n := counts(t, db)["samples"]; n != after["samples"] {
		t.Errorf("%d samples after a failed rederive, want %d", n, after["samples"])
	}
}
