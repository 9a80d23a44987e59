package store

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestJobsLifecycle(t *testing.T) {
	db := openTemp(t)
	ctx := context.Background()
	sub := time.Date(2024, 5, 1, 8, 0, 0, 0, time.UTC)
	submitted := Job{
		SlurmID: "4242", Campaign: "ib-acceptance", Variants: []string{"ib/osu_bw", "tcp/osu_bw"},
		Name: "sbench-ib-acceptance-0", Script: "/scratch/run/job-0.sbatch", ResultsDir: "/scratch/run/results",
		Submitted: sub, State: "PENDING", Reason: "Priority",
	}
	id, err := db.RecordJob(ctx, submitted)
	if err != nil {
		t.Fatal(err)
	}
	// Another campaign reuses the Slurm id (cluster reinstalled): allowed.
	otherID, err := db.RecordJob(ctx, Job{SlurmID: "4242", Campaign: "upgrade", Submitted: sub.Add(time.Hour), State: "PENDING"})
	if err != nil {
		t.Fatal(err)
	}
	// Submitted earlier, recorded later: listed first.
	early, err := db.RecordJob(ctx, Job{SlurmID: "4000", Campaign: "ib-acceptance", Submitted: sub.Add(-time.Hour), State: "COMPLETED"})
	if err != nil {
		t.Fatal(err)
	}

	jobs, err := db.Jobs(ctx, "ib-acceptance")
	if err != nil {
		t.Fatal(err)
	}
	want := submitted
	want.ID, want.Updated = id, clock
	if len(jobs) != 2 || jobs[0].ID != early || !reflect.DeepEqual(jobs[1], want) {
		t.Fatalf("Jobs =\n%+v\nwant job %d then\n%+v", jobs, early, want)
	}

	// sacct describes the finished job …
	start, end := sub.Add(5*time.Minute), sub.Add(9*time.Minute)
	db.now = func() time.Time { return clock.Add(time.Hour) }
	if err := db.UpdateJob(ctx, Job{SlurmID: "4242", Campaign: "ib-acceptance", State: "FAILED", ExitCode: "1:0",
		Start: start, End: end, NodeList: "n[01-02]"}); err != nil {
		t.Fatal(err)
	}
	// … then a late squeue view, which knows less, must not erase it.
	if err := db.UpdateJob(ctx, Job{SlurmID: "4242", Campaign: "ib-acceptance", State: "FAILED", ExitCode: "1:0",
		Updated: clock.Add(2 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	jobs, err = db.Jobs(ctx, "ib-acceptance")
	if err != nil {
		t.Fatal(err)
	}
	want.State, want.Reason, want.ExitCode = "FAILED", "", "1:0"
	want.Start, want.End, want.NodeList, want.Updated = start, end, "n[01-02]", clock.Add(2*time.Hour)
	if !reflect.DeepEqual(jobs[1], want) {
		t.Errorf("updated job =\n%+v\nwant\n%+v", jobs[1], want)
	}

	all, err := db.Jobs(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	var order []int64
	for _, j := range all {
		order = append(order, j.ID)
	}
	if w := []int64{early, id, otherID}; !reflect.DeepEqual(order, w) {
		t.Errorf("Jobs(\"\") ids %v, want %v", order, w)
	}
	if none, err := db.Jobs(ctx, "nope"); err != nil || none != nil {
		t.Errorf("Jobs(nope) = %v, %v", none, err)
	}
}

func TestJobErrors(t *testing.T) {
	db := openTemp(t)
	ctx := context.Background()
	for _, c := range []string{"a", "b"} {
		if _, err := db.RecordJob(ctx, Job{SlurmID: "7", Campaign: c}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.RecordJob(ctx, Job{SlurmID: "8", Campaign: "a"}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		run  func() error
		is   error
		want string
	}{
		{"record twice", func() error { _, err := db.RecordJob(ctx, Job{SlurmID: "7", Campaign: "a"}); return err }, ErrExists, "job 7 of campaign a"},
		{"record without id", func() error { _, err := db.RecordJob(ctx, Job{Campaign: "a"}); return err }, nil, "slurm id is empty"},
		{"record without campaign", func() error { _, err := db.RecordJob(ctx, Job{SlurmID: "9"}); return err }, nil, "campaign is empty"},
		{"update unknown", func() error { return db.UpdateJob(ctx, Job{SlurmID: "9", Campaign: "a", State: "RUNNING"}) }, ErrNotFound, "job 9 of campaign a"},
		{"update in wrong campaign", func() error { return db.UpdateJob(ctx, Job{SlurmID: "8", Campaign: "b", State: "RUNNING"}) }, ErrNotFound, "job 8"},
		{"update ambiguous", func() error { return db.UpdateJob(ctx, Job{SlurmID: "7", State: "RUNNING"}) }, nil, "2 campaigns"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.run()
			if err == nil {
				t.Fatal("no error")
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("error %v is not %v", err, tt.is)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not contain %q", err, tt.want)
			}
		})
	}
	// An unambiguous id needs no campaign.
	if err := db.UpdateJob(ctx, Job{SlurmID: "8", State: "RUNNING"}); err != nil {
		t.Fatal(err)
	}
	jobs, _ := db.Jobs(ctx, "a")
	for _, j := range jobs {
		if want := map[string]string{"7": "", "8": "RUNNING"}[j.SlurmID]; j.State != want {
			t.Errorf("job %s state %q, want %q", j.SlurmID, j.State, want)
		}
	}
}

// TestJobPlanIntentAndRuns: a job recorded before sbatch answered (its
// intent) gets its id later; its plan, output files and restarts are kept;
// JobRuns finds its runs and its array tasks'.
func TestJobPlanIntentAndRuns(t *testing.T) {
	db := openTemp(t)
	ctx := context.Background()
	plan := []PlannedStep{{Step: "0", Benchmark: "lat", Kind: "native", Kernel: "latency", Variant: "v",
		Params: map[string]string{"repeat": "0"}, Ranks: 2, Nodes: 2, Limit: 10 * time.Minute},
		{Task: "1", Step: "0", Pairs: "all", Benchmark: "bw", Kind: "tool", Variant: "w", Ranks: 2, Nodes: 2}}
	if _, err := db.RecordJob(ctx, Job{SlurmID: "intent-ab12", Intent: "sbench:ab12", Campaign: "c", State: "SUBMITTING",
		Plan: plan, Output: "out/%x-%j.out", Error: "out/%x-%j.err"}); err != nil {
		t.Fatal(err)
	}
	if err := db.ResolveIntent(ctx, "c", "sbench:ab12", "41"); err != nil {
		t.Fatal(err)
	}
	if err := db.ResolveIntent(ctx, "c", "sbench:nope", "42"); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown intent: %v", err)
	}
	if err := db.UpdateJob(ctx, Job{SlurmID: "41", Campaign: "c", State: "PENDING", Restarts: 1}); err != nil {
		t.Fatal(err)
	}
	// A later view without the count does not forget it.
	if err := db.UpdateJob(ctx, Job{SlurmID: "41", Campaign: "c", State: "COMPLETED"}); err != nil {
		t.Fatal(err)
	}
	jobs, err := db.Jobs(ctx, "c")
	if err != nil || len(jobs) != 1 {
		t.Fatalf("jobs %+v, %v", jobs, err)
	}
	j := jobs[0]
	if j.SlurmID != "41" || j.Intent != "" || j.Restarts != 1 || !reflect.DeepEqual(j.Plan, plan) || j.Output != "out/%x-%j.out" || j.Error != "out/%x-%j.err" {
		t.Errorf("job %+v", j)
	}
	b1, b2, other := osuBundle("c", "v", "41", 2), osuBundle("c", "w", "41", 2), osuBundle("c", "v", "410", 2)
	b2.Job.ArrayIndex, b2.Job.Restart = "1", 1
	ingest(t, db, "x", b1, b2, other)
	runs, err := db.JobRuns(ctx, "c", "41")
	if err != nil || len(runs) != 2 || runs[1].ArrayIndex != "1" || runs[1].Restart != 1 {
		t.Errorf("JobRuns = %+v, %v; want the job's two runs, not job 410's", runs, err)
	}
}
