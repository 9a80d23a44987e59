package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sbench/sbench/store"
)

// fakeSbatch is an sbatch that accepts a job (logs its id, as Slurm would
// have it queued), then takes a moment to answer: the window in which an
// interrupted sbench used to lose the job.
const fakeSbatch = `#!/bin/sh
dir=$(dirname "$0")
n=$(cat "$dir/next" 2>/dev/null || echo 100)
echo $((n + 1)) > "$dir/next"
comment=
for a in "$@"; do case $a in --comment=*) comment=${a#--comment=} ;; esac; done
echo "$n|$comment" >> "$dir/accepted"
sleep 0.4
echo "$n"
`

// manyJobs is a campaign of 30 jobs.
const manyJobs = `
[campaign]
name = "many"
mode = "jobs"
[slurm]
nodes = 1
ntasks_per_node = 2
[[benchmark]]
name = "lat"
kernel = "latency"
[sweep]
"param.iterations" = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30]
`

// TestSubmitInterruptedKeepsEveryAcceptedJob is item 6: SIGINT during a
// submit of 30 jobs left a job Slurm had accepted unknown to the archive.
// Now the job in flight is submitted and recorded, the rest are not, and
// sbench says so.
func TestSubmitInterruptedKeepsEveryAcceptedJob(t *testing.T) {
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "sbatch"), []byte(fakeSbatch), 0o755); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	camp := filepath.Join(dir, "many.toml")
	os.WriteFile(camp, []byte(manyJobs), 0o644)
	db := filepath.Join(dir, "a.db")
	t.Chdir(dir) // where submit writes sbench-runs/
	p := startSbench(t, nil, []string{"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH")}, "submit", camp, "--db", db)
	waitFor(t, "three jobs submitted", func() bool { return strings.Count(p.stdout.String(), "\n") >= 3 })
	time.Sleep(150 * time.Millisecond) // inside the fourth sbatch
	p.cmd.Process.Signal(syscall.SIGINT)
	code := p.exit(t, 10*time.Second)
	if code != 130 {
		t.Errorf("exit %d, want 130\n%s", code, p.stderr)
	}
	if !strings.Contains(p.stderr.String(), "submit interrupted") {
		t.Errorf("stderr does not say the submission was interrupted:\n%s", p.stderr)
	}
	accepted, err := os.ReadFile(filepath.Join(bin, "accepted"))
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, l := range strings.Split(strings.TrimSpace(string(accepted)), "\n") {
		id, comment, _ := strings.Cut(l, "|")
		ids = append(ids, id)
		if !strings.HasPrefix(comment, "sbench:many:") {
			t.Errorf("job %s submitted with comment %q, want sbench:many:…", id, comment)
		}
	}
	if len(ids) < 4 || len(ids) == 30 {
		t.Fatalf("%d jobs accepted: the interrupt came too late or too early for the test", len(ids))
	}
	s, err := store.OpenReadOnly(db)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	jobs, err := s.Jobs(context.Background(), "many")
	if err != nil {
		t.Fatal(err)
	}
	var recorded []string
	for _, j := range jobs {
		recorded = append(recorded, j.SlurmID)
		if j.Intent != "" || len(j.Plan) != 1 {
			t.Errorf("job %s: intent %q, %d planned steps; want resolved, 1", j.SlurmID, j.Intent, len(j.Plan))
		}
	}
	if !slices.Equal(recorded, ids) {
		t.Errorf("Slurm accepted %q, the archive has %q", ids, recorded)
	}
	if printed := strings.Fields(p.stdout.String()); !slices.Equal(printed, ids) {
		t.Errorf("printed %q, accepted %q", printed, ids)
	}
}

// intentSlurm knows one job, 55, submitted with a comment.
type intentSlurm struct{ fakeSlurm }

func (f *intentSlurm) Run(ctx context.Context, argv, env []string, dir string) ([]byte, []byte, error) {
	if argv[0] == "squeue" && slices.Contains(argv, "--name") {
		return []byte("54|other\n55|sbench:c:feed\n"), nil, nil
	}
	return f.fakeSlurm.Run(ctx, argv, env, dir)
}

// TestStatusFindsAJobByItsSubmitComment: sbench killed outright while
// sbatch ran leaves the job recorded under its intent only; status finds
// its id by the comment sbatch was given, and follows it from then on.
func TestStatusFindsAJobByItsSubmitComment(t *testing.T) {
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "s.db")
	recordJobs(t, dbPath,
		store.Job{SlurmID: "intent-feed", Intent: "sbench:c:feed", Campaign: "c", Name: "c-job", State: "SUBMITTING"},
		store.Job{SlurmID: "intent-dead", Intent: "sbench:c:dead", Campaign: "c", Name: "c-job2", State: "SUBMITTING"})
	useSlurm(t, &intentSlurm{fakeSlurm{jobs: map[string]string{
		"55": "JobId=55 JobName=c-job JobState=COMPLETED Reason=None ExitCode=0:0 StartTime=2026-11-30T00:24:23 EndTime=2026-11-30T00:24:24 NodeList=n1",
	}}})
	out, errs, code := sbench(t, "status", "--db", dbPath, "--all")
	if code != 0 {
		t.Fatalf("status: exit %d\n%s", code, errs)
	}
	if !strings.Contains(errs, "Slurm accepted it as job 55") || !strings.Contains(errs, "knows no job with comment sbench:c:dead") {
		t.Errorf("stderr:\n%s", errs)
	}
	if !strings.Contains(out, "55 ") || !strings.Contains(out, "UNKNOWN") {
		t.Errorf("status:\n%s", out)
	}
}
