package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sbench/sbench/internal/testenv"
	"github.com/sbench/sbench/store"
)

// chainSlurm is a Slurm without slurmdbd that holds the chain first
// (FAILED) ← second ← third, as a real one does: second pends
// DependencyNeverSatisfied, third "Dependency" forever. scancel cancels a
// pending job.
type chainSlurm struct {
	fakeSlurm
	cancelled []string
}

func newChainSlurm() *chainSlurm {
	return &chainSlurm{fakeSlurm: fakeSlurm{jobs: map[string]string{
		"21": "JobId=21 JobName=chain-first JobState=FAILED Reason=NonZeroExitCode ExitCode=1:0 StartTime=2026-12-04T08:00:00 EndTime=2026-12-04T08:00:01 NodeList=n1",
		"22": "JobId=22 JobName=chain-second JobState=PENDING Reason=DependencyNeverSatisfied Dependency=afterok:21(failed) ExitCode=0:0 StartTime=Unknown EndTime=Unknown",
		"23": "JobId=23 JobName=chain-third JobState=PENDING Reason=Dependency Dependency=afterok:22(unfulfilled) ExitCode=0:0 StartTime=Unknown EndTime=Unknown",
	}}}
}

func (f *chainSlurm) Run(ctx context.Context, argv, env []string, dir string) ([]byte, []byte, error) {
	if argv[0] == "scancel" {
		f.calls = append(f.calls, strings.Join(argv, " "))
		for _, id := range argv[2:] {
			f.cancelled = append(f.cancelled, id)
			f.jobs[id] = "JobId=" + id + " JobName=chain JobState=CANCELLED Reason=Dependency ExitCode=0:0 StartTime=Unknown EndTime=2026-12-04T08:01:00"
		}
		return nil, nil, nil
	}
	return f.fakeSlurm.Run(ctx, argv, env, dir)
}

// recordChain records the three jobs as submit does: each with its plan,
// its submission and the job it waits for.
func recordChain(t *testing.T, dbPath, dir string) {
	t.Helper()
	job := func(id, bench string, after ...string) store.Job {
		return store.Job{SlurmID: id, Campaign: "chain", Name: "chain-" + bench, ResultsDir: dir, Submitted: time.Now(), State: "PENDING",
			Submission: "submit-20261204T080000.000-abcdef", After: after,
			Plan: []store.PlannedStep{{Step: "0", Benchmark: bench, Kind: "native", Kernel: "stream", Variant: "default", Ranks: 1, Nodes: 1}}}
	}
	recordJobs(t, dbPath, job("21", "first"), job("22", "second", "21"), job("23", "third", "22"))
}

// statusWithin runs sbench status and fails the test if it has not
// returned within limit: the hang this is about.
func statusWithin(t *testing.T, limit time.Duration, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	stdout, stderr, code = testenv.CLI(ctx, run, exitCode, append([]string{"status"}, args...)...)
	if ctx.Err() != nil {
		t.Fatalf("sbench status %s still waiting after %s (Slurm keeps a job of the chain pending forever)\n%s", strings.Join(args, " "), limit, stderr)
	}
	return stdout, stderr, code
}

// TestStatusWaitReturnsOnAStrandedChain is item 1 of issue 26: first
// (fails) ← second ← third. Slurm marks second DependencyNeverSatisfied
// and keeps third pending on "Dependency" forever; status --wait used to
// wait for it forever. It now says third will never start, and why,
// returns, and archives every planned step: second's and third's as never
// run because first failed.
func TestStatusWaitReturnsOnAStrandedChain(t *testing.T) {
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "s.db")
	recordChain(t, dbPath, dir)
	useSlurm(t, newChainSlurm())
	out, errs, code := statusWithin(t, 30*time.Second, "--db", dbPath, "--wait", "--interval", "10ms", "--ingest")
	if code != exitGate {
		t.Errorf("exit %d, want %d (no job completed)\n%s%s", code, exitGate, out, errs)
	}
	if !strings.Contains(errs, "job 23: it will never start (DependencyNeverSatisfied)") || !strings.Contains(errs, "because job 21 (benchmark first) failed") {
		t.Errorf("status --wait does not say why job 23 never starts:\n%s", errs)
	}
	if !strings.Contains(out, "3 run(s) added") {
		t.Errorf("status --ingest:\n%s", out)
	}
	runs := archivedRuns(t, dbPath)
	if len(runs) != 3 {
		t.Fatalf("%d runs archived, want 3: %v", len(runs), runs)
	}
	for _, name := range []string{"second", "third"} {
		rs := runOfBenchmark(runs, name)
		msg, _ := rs[0]["error"].(string)
		if rs[0]["status"] != "failed" || !strings.Contains(msg, "never ran") || !strings.Contains(msg, "because job 21 (benchmark first) failed (FAILED 1:0)") {
			t.Errorf("%s: %s %q", name, rs[0]["status"], msg)
		}
	}
	if msg, _ := runOfBenchmark(runs, "third")[0]["error"].(string); !strings.Contains(msg, "through job 22 (benchmark second)") {
		t.Errorf("third's run does not name the job between: %q", msg)
	}
	// The archive remembers: a later status asks Slurm about none of them.
	db, err := store.Open(dbPath)
	if err != nil {
		t.Fatal(err)
	}
	jobs, _ := db.Jobs(context.Background(), "chain")
	db.Close()
	for _, j := range jobs[1:] {
		if !jobSettled(j) || !strings.Contains(j.Reason, "job 21") {
			t.Errorf("job %s recorded as %s %q", j.SlurmID, j.State, j.Reason)
		}
	}
}

// TestStatusCancelStranded: --cancel-stranded scancels the jobs that can
// never start, and only those; their runs say why they never ran.
func TestStatusCancelStranded(t *testing.T) {
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "s.db")
	recordChain(t, dbPath, dir)
	fake := newChainSlurm()
	useSlurm(t, fake)
	out, errs, _ := statusWithin(t, 30*time.Second, "--db", dbPath, "--cancel-stranded", "--ingest")
	if !slices.Equal(fake.cancelled, []string{"22", "23"}) {
		t.Errorf("cancelled %q, want 22 and 23\n%s%s", fake.cancelled, out, errs)
	}
	if !strings.Contains(errs, "cancelled 2 job(s) that can never start: 22 23") {
		t.Errorf("stderr:\n%s", errs)
	}
	db, err := store.Open(dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	jobs, _ := db.Jobs(context.Background(), "chain")
	for _, j := range jobs[1:] {
		if j.State != "CANCELLED" || !strings.Contains(j.Reason, "because job 21 (benchmark first) failed") {
			t.Errorf("job %s recorded as %s %q", j.SlurmID, j.State, j.Reason)
		}
	}
	if runs := archivedRuns(t, dbPath); len(runs) != 3 {
		t.Errorf("%d runs, want 3", len(runs))
	}
}

// TestStatusIngestFindsEveryJob: a status --wait killed before its ingest
// leaves jobs settled in the archive; a later status --ingest (without
// --all) used to look only at the jobs still open, and added 0 runs.
func TestStatusIngestFindsEveryJob(t *testing.T) {
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "s.db")
	plan := []store.PlannedStep{{Step: "0", Benchmark: "b", Kind: "native", Kernel: "stream", Variant: "default", Ranks: 1, Nodes: 1}}
	recordJobs(t, dbPath,
		store.Job{SlurmID: "31", Campaign: "c", ResultsDir: dir, State: "FAILED", ExitCode: "1:0", Plan: plan,
			Start: time.Now().Add(-time.Minute), End: time.Now()},
		store.Job{SlurmID: "32", Campaign: "c", ResultsDir: dir, State: "PENDING", Plan: plan})
	useSlurm(t, &fakeSlurm{jobs: map[string]string{
		"32": "JobId=32 JobName=c JobState=PENDING Reason=Resources ExitCode=0:0 StartTime=Unknown EndTime=Unknown",
	}})
	out, errs, code := sbench(t, "status", "--db", dbPath, "--ingest")
	if code != 0 || !strings.Contains(out, "1 run(s) added") {
		t.Errorf("status --ingest: exit %d\n%s%s", code, out, errs)
	}
	if out, _, _ := sbench(t, "status", "--db", dbPath, "--ingest"); !strings.Contains(out, "0 run(s) added") {
		t.Errorf("a second ingest:\n%s", out)
	}
}

// TestStatusNeverCreatesAnArchive is item 8: status with a mistyped --db,
// or where there is no archive, says so as the reading commands do and
// leaves no file behind.
func TestStatusNeverCreatesAnArchive(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	t.Setenv("SBENCH_DB", "")
	useSlurm(t, &fakeSlurm{})
	typo := filepath.Join(dir, "sbnech.db")
	for _, args := range [][]string{
		{"status", "--db", typo},
		{"status", "--db", typo, "--wait", "--ingest"},
		{"status"},
	} {
		_, stderr, code := sbench(t, args...)
		path := typo
		if len(args) == 1 {
			path = "sbench.db"
		}
		if code != exitUsage || !strings.HasPrefix(stderr, "sbench: no archive at "+path) || !strings.Contains(stderr, "$SBENCH_DB") {
			t.Errorf("sbench %s: exit %d, stderr %q; want exit 2 and \"no archive at %s\"", strings.Join(args, " "), code, stderr, path)
		}
		for _, p := range []string{typo, filepath.Join(dir, "sbench.db")} {
			if _, err := os.Stat(p); err == nil {
				t.Fatalf("sbench %s created %s", strings.Join(args, " "), p)
			}
		}
	}
}
