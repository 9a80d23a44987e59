package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sbench/sbench/slurm"
	"github.com/sbench/sbench/store"
)

// fakeSlurm answers scontrol from a table of one-line job records, as a
// Slurm without slurmdbd does; jobs not in the table are unknown to it.
type fakeSlurm struct {
	jobs  map[string]string // id -> scontrol show job -o line
	calls []string
}

func (f *fakeSlurm) Run(ctx context.Context, argv, env []string, dir string) ([]byte, []byte, error) {
	f.calls = append(f.calls, strings.Join(argv, " "))
	switch {
	case len(argv) >= 5 && argv[0] == "scontrol" && argv[2] == "job":
		if line, ok := f.jobs[argv[4]]; ok {
			return []byte(line + "\n"), nil, nil
		}
		return nil, []byte("slurm_load_jobs error: Invalid job id specified\n"), &slurm.ExitError{Prog: "scontrol", Code: 1}
	case len(argv) >= 3 && argv[0] == "scontrol" && argv[2] == "config":
		return []byte("JobCompType             = jobcomp/none\n"), nil, nil
	case argv[0] == "squeue": // with -t all it would list them; here it has forgotten them
		return nil, nil, nil
	case argv[0] == "sacct":
		return nil, []byte("Slurm accounting storage is disabled\n"), &slurm.ExitError{Prog: "sacct", Code: 1}
	}
	return nil, nil, errors.New("fake slurm: unexpected command " + strings.Join(argv, " "))
}

// useSlurm makes sbench's commands ask r instead of a real Slurm until the
// test ends.
func useSlurm(t *testing.T, r slurm.Runner) {
	old := slurmClient
	slurmClient = func() *slurm.Client { return &slurm.Client{R: r} }
	t.Cleanup(func() { slurmClient = old })
}

// recordJobs records jobs in the archive at dbPath (made if missing), as
// submit would have.
func recordJobs(t *testing.T, dbPath string, jobs ...store.Job) {
	t.Helper()
	db, err := store.Open(dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, j := range jobs {
		if _, err := db.RecordJob(context.Background(), j); err != nil {
			t.Fatal(err)
		}
	}
}

func TestStatusWaitRecordsStates(t *testing.T) {
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "s.db")
	var pending []store.Job
	for _, id := range []string{"7", "8", "9"} {
		pending = append(pending, store.Job{SlurmID: id, Campaign: "c", Variants: []string{"v" + id}, ResultsDir: dir, Submitted: time.Now(), State: "PENDING"})
	}
	recordJobs(t, dbPath, pending...)
	fake := &fakeSlurm{jobs: map[string]string{
		"7": "JobId=7 JobName=c-v7 JobState=COMPLETED Reason=None ExitCode=0:0 StartTime=2026-11-30T00:24:23 EndTime=2026-11-30T00:24:24 NodeList=n[1-2]",
		"8": "JobId=8 JobName=c-v8 JobState=FAILED Reason=NonZeroExitCode ExitCode=3:0 StartTime=2026-11-30T00:24:34 EndTime=2026-11-30T00:24:35 NodeList=n1",
		// 9 left Slurm's memory with no jobcomp log and no accounting.
	}}
	useSlurm(t, fake)

	stdout, stderr, code := sbench(t, "status", "--db", dbPath, "--wait", "--interval", "10ms")
	if code != exitGate {
		t.Errorf("exit %d, want %d: two jobs did not complete\n%s\n%s", code, exitGate, stdout, stderr)
	}
	if !strings.Contains(stderr, "2 of 3 job(s) did not complete") {
		t.Errorf("stderr %q", stderr)
	}
	for _, want := range []string{"COMPLETED", "FAILED", "3:0", "NonZeroExitCode", "UNKNOWN"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("status table lacks %q:\n%s", want, stdout)
		}
	}
	db, _ := store.Open(dbPath)
	defer db.Close()
	jobs, _ := db.Jobs(context.Background(), "c")
	got := map[string]string{}
	for _, j := range jobs {
		got[j.SlurmID] = j.State
	}
	if got["7"] != "COMPLETED" || got["8"] != "FAILED" || got["9"] != slurm.StateUnknown {
		t.Errorf("archived states %v", got)
	}
	// Finished jobs are not asked about again.
	fake.calls = nil
	stdout, _, code = sbench(t, "status", "--db", dbPath)
	for _, c := range fake.calls {
		if strings.HasSuffix(c, " 7") || strings.HasSuffix(c, " 8") {
			t.Errorf("asked Slurm about a finished job again: %s", c)
		}
	}
	if code != 0 {
		t.Errorf("plain status exit %d", code)
	}
}

// TestStatusWaitSaysWhichStepRuns: while a job runs, status --wait names
// the step its output's markers say is running — benchmark, variant and
// limit — and for how long; a step that ended, or one of an earlier
// attempt, is not it.
func TestStatusWaitSaysWhichStepRuns(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	began := now.Add(-3*time.Minute - 10*time.Second)
	out := filepath.Join(dir, "job-7.out")
	log := fmt.Sprintf("sbench-step: 0 begin attempt=0 at=%d\nsbench-step: 0 end attempt=0 at=%d rc=0\n"+
		"sbench-step: 1 begin attempt=0 at=%d\nsome output\nsbench-step: 2 begin attempt=1 at=%d\n",
		began.Add(-time.Hour).Unix(), began.Add(-time.Minute).Unix(), began.Unix(), began.Add(-2*time.Hour).Unix())
	if err := os.WriteFile(out, []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	plan := []store.PlannedStep{
		{Step: "0", Benchmark: "latency", Kind: "native", Kernel: "latency", Variant: "v"},
		{Step: "1", Benchmark: "osu_bw", Kind: "tool", Variant: "tcp", Limit: 10 * time.Minute},
	}
	j := store.Job{SlurmID: "7", Campaign: "c", Output: filepath.Join(dir, "job-%j.out"), Plan: plan}
	if got, want := runningStep(j, now), "step 1 (osu_bw, variant tcp, limit 10m0s) running for 3m0s"; got != want {
		t.Errorf("runningStep = %q, want %q", got, want)
	}
	j.Restarts = 1 // a requeued job's second attempt runs step 2
	if got := runningStep(j, now); !strings.HasPrefix(got, "step 2 running for") {
		t.Errorf("second attempt: runningStep = %q", got)
	}

	dbPath := filepath.Join(dir, "s.db")
	j.Restarts = 0
	j.ResultsDir, j.Submitted, j.State = dir, now, "PENDING"
	recordJobs(t, dbPath, j)
	running := "JobId=7 JobName=c-v JobState=RUNNING Reason=None ExitCode=0:0 StartTime=2026-11-30T00:24:34 EndTime=Unknown NodeList=n1"
	fake := &fakeSlurm{jobs: map[string]string{"7": running}}
	polls := 0
	useSlurm(t, runFunc(func(ctx context.Context, argv, env []string, dir string) ([]byte, []byte, error) {
		if argv[0] == "scontrol" && len(argv) > 2 && argv[2] == "job" {
			if polls++; polls > 2 {
				fake.jobs["7"] = strings.NewReplacer("RUNNING", "COMPLETED", "EndTime=Unknown", "EndTime=2026-11-30T00:30:00").Replace(running)
			}
		}
		return fake.Run(ctx, argv, env, dir)
	}))
	_, stderr, code := sbench(t, "status", "--db", dbPath, "--wait", "--interval", "10ms")
	if code != 0 || !strings.Contains(stderr, "job 7: step 1 (osu_bw, variant tcp, limit 10m0s) running for 3m0s") {
		t.Errorf("status --wait: exit %d, want the running step named:\n%s", code, stderr)
	}
}

// runFunc is a slurm.Runner from a function.
type runFunc func(ctx context.Context, argv, env []string, dir string) ([]byte, []byte, error)

func (f runFunc) Run(ctx context.Context, argv, env []string, dir string) ([]byte, []byte, error) {
	return f(ctx, argv, env, dir)
}
