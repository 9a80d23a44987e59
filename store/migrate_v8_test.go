package store

import (
	"context"
	"database/sql"
	"slices"
	"testing"
)

// undoV8 takes a v8 archive back to v7.
const undoV8 = `ALTER TABLE jobs DROP COLUMN submission;
ALTER TABLE jobs DROP COLUMN after_ok;
`

// A v7 archive holds what a v6 one does; its runs may carry a note.
func init() {
	seeds[7] = func(t *testing.T, tx *sql.Tx) {
		seeds[6](t, tx)
		if _, err := tx.Exec(`UPDATE runs SET note = ''`); err != nil {
			t.Fatal(err)
		}
	}
}

// A job keeps the submission it was recorded with and the jobs it waits
// for; one recorded without either has none.
func TestJobSubmissionAndDependencies(t *testing.T) {
	ctx := context.Background()
	db := openTemp(t)
	for _, j := range []Job{
		{SlurmID: "11", Campaign: "chain", Submission: "submit-20261204T083000.000-a1b2c3", State: "PENDING"},
		{SlurmID: "12", Campaign: "chain", Submission: "submit-20261204T083000.000-a1b2c3", After: []string{"11"}, State: "PENDING"},
		{SlurmID: "13", Campaign: "chain", Submission: "submit-20261204T083000.000-a1b2c3", After: []string{"11", "12"}, State: "PENDING"},
		{SlurmID: "14", Campaign: "chain", State: "PENDING"},
	} {
		if _, err := db.RecordJob(ctx, j); err != nil {
			t.Fatal(err)
		}
	}
	jobs, err := db.Jobs(ctx, "chain")
	if err != nil || len(jobs) != 4 {
		t.Fatalf("%d jobs, %v", len(jobs), err)
	}
	for i, want := range [][]string{nil, {"11"}, {"11", "12"}, nil} {
		if !slices.Equal(jobs[i].After, want) {
			t.Errorf("job %s waits for %q, want %q", jobs[i].SlurmID, jobs[i].After, want)
		}
	}
	if jobs[0].Submission != "submit-20261204T083000.000-a1b2c3" || jobs[2].Submission != jobs[0].Submission || jobs[3].Submission != "" {
		t.Errorf("submissions %q %q %q", jobs[0].Submission, jobs[2].Submission, jobs[3].Submission)
	}
	// A state update keeps both.
	jobs[1].State, jobs[1].Reason = "PENDING", "DependencyNeverSatisfied"
	if err := db.UpdateJob(ctx, jobs[1]); err != nil {
		t.Fatal(err)
	}
	if again, _ := db.Jobs(ctx, "chain"); !slices.Equal(again[1].After, []string{"11"}) || again[1].Submission != jobs[0].Submission {
		t.Errorf("after an update: %+v", again[1])
	}
}

// TestMigrateV7ToV8 opens an archive as a v7 sbench left it: every row
// stays, the old jobs have no submission id and no dependencies (their
// submissions are inferred, as before), and new jobs keep both.
func TestMigrateV7ToV8(t *testing.T) {
	ctx := context.Background()
	db := openTemp(t)
	ingest(t, db, "a.json", osuBundle("acc", "ib", "1", 3))
	for _, id := range []string{"1", "2"} {
		if _, err := db.RecordJob(ctx, Job{SlurmID: id, Campaign: "acc", Variants: []string{"ib"}, State: "COMPLETED", Script: "s/20261204T080000.000/" + id + ".sbatch"}); err != nil {
			t.Fatal(err)
		}
	}
	db = downgradeAndMigrate(t, db, undoV9+undoV8+"PRAGMA user_version = 7", v3Tables)
	jobs, err := db.Jobs(ctx, "acc")
	if err != nil || len(jobs) != 2 {
		t.Fatalf("jobs after migration: %+v, %v", jobs, err)
	}
	for _, j := range jobs {
		if j.Submission != "" || j.After != nil {
			t.Errorf("job %s after migration: submission %q, after %q; want none", j.SlurmID, j.Submission, j.After)
		}
	}
	if _, err := db.RecordJob(ctx, Job{SlurmID: "3", Campaign: "acc", Submission: "s2", After: []string{"2"}, State: "PENDING"}); err != nil {
		t.Fatal(err)
	}
	jobs, _ = db.Jobs(ctx, "acc")
	if len(jobs) != 3 || jobs[2].Submission != "s2" || !slices.Equal(jobs[2].After, []string{"2"}) {
		t.Errorf("a job recorded after migration: %+v", jobs)
	}
}
