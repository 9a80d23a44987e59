package jobs

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sbench/sbench/results"
	"github.com/sbench/sbench/slurm"
	"github.com/sbench/sbench/store"
)

// requeuedJob is job 1 of testdata/lab-requeued-steps.out, the output of a
// real Slurm job (TestSlurmEveryAttemptsLaunches): the slurmd of n2 was
// killed during step 0; step 1's launch failed on n2, step 2 ran on n1
// until Slurm requeued the job (NODE_FAIL); attempt 1 ran every step.
func requeuedJob() store.Job {
	return store.Job{SlurmID: "1", Campaign: "attempts", Name: "attempts-steps", State: "COMPLETED", ExitCode: "0:0",
		NodeList: "n[1-2]", Restarts: 1, Start: time.Unix(1796373617, 0),
		Plan: []store.PlannedStep{
			{Step: "0", Benchmark: "hold", Kind: "tool", Kernel: "exec", Variant: "default", Ranks: 2, Nodes: 2},
			{Step: "1", Benchmark: "spread", Kind: "tool", Kernel: "exec", Variant: "default", Ranks: 2, Nodes: 2},
			{Step: "2", Benchmark: "long", Kind: "tool", Kernel: "exec", Variant: "default", Ranks: 1, Nodes: 1},
		}}
}

func labOutcomes(t *testing.T) Outcomes {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "lab-requeued-steps.out"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	return Outcomes{"": ReadOutcomes(f)}
}

// Every launch keeps its attempts: step 1 began in attempt 0 and failed
// (rc 233, srun's launch failure on n2), and ran again in attempt 1.
func TestOutcomesKeepEveryAttempt(t *testing.T) {
	outs := labOutcomes(t)[""]
	byAttempt := launches(outs["1"])
	first, second := byAttempt[0], byAttempt[1]
	if first == nil || second == nil {
		t.Fatalf("step 1's launches by attempt: %v", byAttempt)
	}
	if !first.Ended || first.RC != 233 || !strings.Contains(first.Tail, "failed on node n2") {
		t.Errorf("attempt 0 of step 1: %+v", first)
	}
	if !second.Ended || second.RC != 0 || strings.Contains(second.Tail, "n2") {
		t.Errorf("attempt 1 of step 1: %+v", second)
	}
	if o := launches(outs["2"])[0]; o == nil || o.Ended {
		t.Errorf("attempt 0 of step 2 did not end (Slurm requeued the job under it): %+v", o)
	}
}

// A launch that failed in attempt 0 is a failed run of attempt 0 whatever
// attempt 1 did, and its reason quotes how Slurm ended the attempt.
func TestMissingRunsPerAttempt(t *testing.T) {
	j := requeuedJob()
	have := []store.Run{{Step: "0", Restart: 0}, {Step: "0", Restart: 1}, {Step: "2", Restart: 0, Status: results.StatusFailed},
		{Step: "1", Restart: 1}, {Step: "2", Restart: 1}}
	ends := map[int]AttemptEnd{0: {State: "NODE_FAIL", ExitCode: "0:0"}, 1: {State: "COMPLETED", ExitCode: "0:0"}}
	got := MissingRuns(j, have, labOutcomes(t), ends)
	if len(got) != 1 {
		t.Fatalf("%d runs made, want attempt 0's step 1: %v", len(got), got)
	}
	b := got[0]
	if b.Job.Step != "1" || b.Job.Restart != 0 || b.Status != results.StatusFailed || b.Benchmark.Name != "spread" {
		t.Errorf("run %+v, want step 1 of attempt 0, failed", b.Job)
	}
	for _, w := range []string{"launcher exited 233", "Task launch for StepId=1.1 failed on node n2", "Slurm ended attempt 0: NODE_FAIL", "requeued"} {
		if !strings.Contains(b.Error, w) {
			t.Errorf("error %q lacks %q", b.Error, w)
		}
	}
	if err := b.Validate(); err != nil {
		t.Error(err)
	}
	// Without the runner's bundle, attempt 0's step 2 is a failed run
	// that Slurm ended under it.
	got = MissingRuns(j, have[:2], labOutcomes(t), ends)
	var step2 *results.Bundle
	for _, b := range got {
		if b.Job.Step == "2" && b.Job.Restart == 0 {
			step2 = b
		}
	}
	if step2 == nil || !strings.Contains(step2.Error, "did not end: Slurm ended attempt 0 under it (NODE_FAIL 0:0)") {
		t.Errorf("attempt 0's step 2: %+v", step2)
	}
	// An attempt's launch it never began is no run of that attempt; the
	// last attempt must leave every planned launch.
	var names []string
	for _, b := range got {
		names = append(names, store.LaunchName(b.Job.ID, "", b.Job.Step, b.Job.Restart))
	}
	slices.Sort(names)
	if want := []string{"1.1", "1.1 r1", "1.2", "1.2 r1"}; !slices.Equal(names, want) {
		t.Errorf("runs made %v, want %v", names, want)
	}
}

// The runner's failed bundle of an attempt Slurm ended says Slurm's state,
// not the runner's guess at who sent SIGTERM.
func TestAmendByAttempt(t *testing.T) {
	j := requeuedJob()
	ends := map[int]AttemptEnd{0: {State: "NODE_FAIL", ExitCode: "0:0"}, 1: {State: "CANCELLED", Reason: "CANCELLED by 1000"}}
	amend := AmendByAttempt(j, 1, ends)
	mk := func(restart int, status results.Status, msg string) *results.Bundle {
		b := results.New()
		b.Status, b.Error = status, msg
		b.Job = results.Job{ID: "1", Step: "2", Restart: restart}
		amend(b)
		return b
	}
	if b := mk(0, results.StatusFailed, "interrupted by SIGTERM (a time limit, scancel or Ctrl-C)"); b.Error != "interrupted by SIGTERM; Slurm ended attempt 0: NODE_FAIL 0:0" {
		t.Errorf("attempt 0: %q", b.Error)
	}
	if b := mk(1, results.StatusFailed, "rank 0 (node n1): sh was killed by signal SIGTERM"); !strings.HasSuffix(b.Error, "; Slurm ended attempt 1: CANCELLED, CANCELLED by 1000") {
		t.Errorf("attempt 1: %q", b.Error)
	}
	if b := mk(0, results.StatusFailed, "rank 0: exit 3"); b.Error != "rank 0: exit 3" {
		t.Errorf("a failure of its own is left alone: %q", b.Error)
	}
	if b := mk(0, results.StatusOK, ""); b.Error != "" {
		t.Errorf("an ok run is left alone: %q", b.Error)
	}
	done := mk(0, results.StatusFailed, "interrupted by SIGTERM (a time limit, scancel or Ctrl-C)")
	again := done.Error
	amend(done)
	if done.Error != again {
		t.Errorf("amended twice: %q", done.Error)
	}
	// A job Slurm ran once and ended at its time limit.
	j.Restarts = 0
	b := results.New()
	b.Status, b.Error = results.StatusFailed, "interrupted by SIGTERM (a time limit, scancel or Ctrl-C)"
	b.Job = results.Job{ID: "1", Step: "2"}
	AmendByAttempt(j, 0, map[int]AttemptEnd{0: {State: "TIMEOUT", ExitCode: "0:0"}})(b)
	if b.Error != "interrupted by SIGTERM; Slurm ended the job: TIMEOUT 0:0" {
		t.Errorf("a job ended at its limit: %q", b.Error)
	}
}

// attempter is a Slurm that tells how attempts ended.
type attempter func(ctx context.Context, id string, restarts int) ([]slurm.Attempt, string)

func (f attempter) Attempts(ctx context.Context, id string, restarts int) ([]slurm.Attempt, string) {
	return f(ctx, id, restarts)
}

// AttemptEnds takes the last attempt from the job's record and the earlier
// ones from Slurm.
func TestAttemptEnds(t *testing.T) {
	var asked []string
	sl := attempter(func(_ context.Context, id string, restarts int) ([]slurm.Attempt, string) {
		asked = append(asked, id)
		return []slurm.Attempt{{Restart: 0, State: "NODE_FAIL", ExitCode: "0:0"}, {Restart: 1, State: "COMPLETED"}}, ""
	})
	ends := AttemptEnds(context.Background(), sl, requeuedJob(), 1)
	if ends[0].State != "NODE_FAIL" || ends[1].State != "COMPLETED" || ends[1].ExitCode != "0:0" {
		t.Errorf("ends %+v", ends)
	}
	j := requeuedJob()
	j.Restarts = 0
	asked = nil
	if ends := AttemptEnds(context.Background(), sl, j, 0); len(asked) != 0 || ends[0].State != "COMPLETED" {
		t.Errorf("a job run once asks Slurm nothing: asked %v, ends %+v", asked, ends)
	}
}

// Archive of a requeued job: the runner's bundle of attempt 0 says
// NODE_FAIL, attempt 0's launch that left no bundle is archived, and
// archiving again once Slurm has forgotten the attempt (a rotated jobcomp
// log) adds nothing: the file is not read again, so it cannot hash
// otherwise and be archived twice.
func TestArchiveEveryAttempt(t *testing.T) {
	sl := attempter(func(context.Context, string, int) ([]slurm.Attempt, string) {
		return []slurm.Attempt{{Restart: 0, State: "NODE_FAIL", ExitCode: "0:0"}, {Restart: 1, State: "COMPLETED", ExitCode: "0:0"}}, ""
	})
	dir := t.TempDir()
	out := filepath.Join(dir, "attempts-steps-1.out")
	data, err := os.ReadFile(filepath.Join("testdata", "lab-requeued-steps.out"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(out, data, 0o644); err != nil {
		t.Fatal(err)
	}
	j := requeuedJob()
	j.ResultsDir, j.Error = dir, filepath.Join(dir, "attempts-steps-%j.out")
	for _, c := range []struct {
		name, step string
		restart    int
		status     results.Status
		msg        string
	}{
		{"1.0.hold.json", "0", 0, results.StatusOK, ""},
		{"1.2.long.json", "2", 0, results.StatusFailed, "interrupted by SIGTERM (a time limit, scancel or Ctrl-C)"},
		{"1.r1.0.hold.json", "0", 1, results.StatusOK, ""},
		{"1.r1.1.spread.json", "1", 1, results.StatusOK, ""},
		{"1.r1.2.long.json", "2", 1, results.StatusOK, ""},
	} {
		b := results.New()
		b.Campaign, b.Variant, b.Status, b.Error = "attempts", "default", c.status, c.msg
		b.Job = results.Job{ID: "1", Step: c.step, Restart: c.restart, Nodes: []string{"n1"}, Tasks: 1}
		b.Benchmark = results.Benchmark{Name: "lat", Kind: "native", Kernel: "latency"}
		b.Start = time.Unix(1796373586, 0).UTC()
		if c.status == results.StatusOK {
			b.Samples = []results.Sample{{Metric: "latency", Unit: "us", X: results.F(1), XUnit: "bytes", Value: 1.5}}
		}
		if err := results.WriteFile(filepath.Join(dir, c.name), b); err != nil {
			t.Fatal(err)
		}
	}
	db, err := store.Open(filepath.Join(dir, "a.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	a := &Archiver{DB: db, Slurm: sl}
	made, err := a.Archive(context.Background(), j, nil)
	if err != nil {
		t.Fatal(err)
	}
	if made != 1 || a.Total.Added != 5 {
		t.Errorf("archived %d bundles' runs and made %d, want 5 and attempt 0's step 1", a.Total.Added, made)
	}
	runs, err := db.Runs(context.Background(), store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	errs := map[string]string{}
	for _, r := range runs {
		errs[r.Launch()] = r.Error
	}
	if len(runs) != 6 || !strings.Contains(errs["1.1"], "Slurm ended attempt 0: NODE_FAIL") ||
		errs["1.2"] != "interrupted by SIGTERM; Slurm ended attempt 0: NODE_FAIL 0:0" {
		t.Errorf("runs %v", errs)
	}
	a = &Archiver{DB: db, Slurm: attempter(func(context.Context, string, int) ([]slurm.Attempt, string) {
		return nil, "sacct: no record; jobcomp: not in it"
	})}
	made, err = a.Archive(context.Background(), j, nil)
	if err != nil {
		t.Fatal(err)
	}
	if made != 0 || a.Total.Added != 0 || a.Total.Skipped != 5 {
		t.Errorf("archiving again added %d, made %d, skipped %d; want 0, 0, 5", a.Total.Added, made, a.Total.Skipped)
	}
}

// RunnerSignalText is the runner's own words: were they to change, amended
// reasons would keep the runner's guess beside Slurm's state.
func TestRunnerSignalTextIsTheRunners(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "cmd", "sbench-runner", "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(src), `"interrupted by SIGTERM`+RunnerSignalText+`"`) {
		t.Errorf("cmd/sbench-runner/main.go no longer says %q", "interrupted by SIGTERM"+RunnerSignalText)
	}
}
