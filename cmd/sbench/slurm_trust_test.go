package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sbench/sbench/internal/testenv"
	"github.com/sbench/sbench/store"
)

// archivedRuns reads the runs of an archive as sbench runs --json shows them.
func archivedRuns(t *testing.T, db string) []map[string]any {
	t.Helper()
	out, errs, code := sbench(t, "runs", "--db", db, "--json")
	if code != 0 {
		t.Fatalf("runs: %s", errs)
	}
	var runs []map[string]any
	if err := json.Unmarshal([]byte(out), &runs); err != nil {
		t.Fatalf("runs --json: %v\n%s", err, out)
	}
	return runs
}

func runOfBenchmark(runs []map[string]any, name string) []map[string]any {
	var out []map[string]any
	for _, r := range runs {
		if r["benchmark"] == name {
			out = append(out, r)
		}
	}
	return out
}

// slurmDir prepares a test directory for a campaign on the test cluster.
func slurmDir(t *testing.T, campaign string) (dir, camp, db string) {
	t.Helper()
	dir = slurmWorkDir(t)
	camp = filepath.Join(dir, "campaign.toml")
	if err := os.WriteFile(camp, []byte(campaign), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, camp, filepath.Join(dir, "archive.db")
}

// TestSlurmLaunchersThatFailBeforeTheRunner is item 4 (and 10) on a real
// Slurm: an mpirun given a bad option, an srun that refuses its step and a
// launcher that hangs never start sbench-runner, so they write no bundle.
// Every planned step still ends in the archive: the ok one as itself, the
// three others as failed runs saying what their launcher printed, the hung
// one ended at its step's limit.
func TestSlurmLaunchersThatFailBeforeTheRunner(t *testing.T) {
	hang := filepath.Join(t.TempDir(), "hang.sh")
	if err := os.WriteFile(hang, []byte("#!/bin/sh\nexec sleep 600\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, camp, db := slurmDir(t, `
[campaign]
name = "launchers"
[slurm]
nodes = 1
ntasks_per_node = 2
time = "2"
[[benchmark]]
name = "ok"
kernel = "latency"
params = { sizes = "1", iterations = 50 }
[[benchmark]]
name = "badmpi"
kernel = "latency"
launcher = { type = "mpirun", args = ["--no-such-option"] }
[[benchmark]]
name = "badsrun"
kernel = "latency"
launcher = { type = "srun", args = ["--no-such-option"] }
[[benchmark]]
name = "hung"
kernel = "latency"
slurm = { time = "0:05" }
launcher = { type = "mpirun", command = "`+hang+`" }
`)
	if _, errs, code := sbench(t, "submit", camp, "--db", db); code != 0 {
		t.Fatalf("submit: %s", errs)
	}
	out, errs, code := slurmWait(t, slurmWaitLimit, db)
	if code != 1 {
		t.Fatalf("status: exit %d, want 1 (the job failed)\n%s%s", code, out, errs)
	}
	if !strings.Contains(out, "4 run(s) added") || !strings.Contains(out, "3 planned step(s) left no bundle") {
		t.Errorf("status --ingest does not account for every planned step:\n%s", out)
	}
	runs := archivedRuns(t, db)
	if len(runs) != 4 {
		t.Fatalf("%d runs archived, want 4: %v", len(runs), runs)
	}
	for name, want := range map[string][]string{
		"ok":      nil,
		"badmpi":  {"before sbench-runner wrote a bundle", "it printed:"},
		"badsrun": {"before sbench-runner wrote a bundle", "unrecognized option"},
		"hung":    {"timed out", "limit of 5s", "rc=124"},
	} {
		rs := runOfBenchmark(runs, name)
		if len(rs) != 1 {
			t.Errorf("%s: %d runs", name, len(rs))
			continue
		}
		r := rs[0]
		if want == nil {
			if r["status"] != "ok" {
				t.Errorf("%s: %v", name, r)
			}
			continue
		}
		msg, _ := r["error"].(string)
		if r["status"] != "failed" {
			t.Errorf("%s: status %v", name, r["status"])
		}
		for _, w := range want {
			if !strings.Contains(msg, w) {
				t.Errorf("%s: error %q lacks %q", name, msg, w)
			}
		}
	}
	// Ingesting again adds nothing: the failed runs are not made twice.
	if out, _, _ := sbench(t, "status", "--db", db, "--all", "--ingest"); !strings.Contains(out, "0 run(s) added") {
		t.Errorf("second ingest:\n%s", out)
	}
}

// TestSlurmFailedDependency is item 8: a job waiting (afterok) for one that
// failed pends for ever with DependencyNeverSatisfied; status --wait reports
// it and returns, and its step is archived as never run.
func TestSlurmFailedDependency(t *testing.T) {
	_, camp, db := slurmDir(t, `
[campaign]
name = "deps"
mode = "jobs"
[slurm]
nodes = 1
ntasks_per_node = 1
time = "2"
[[benchmark]]
name = "first"
per_rank = { "0" = ["sh", "-c", "echo broken >&2; exit 1"] }
parser = "osu"
[[benchmark]]
name = "second"
after = "first"
kernel = "stream"
params = { array_size = 100000, iterations = 2 }
`)
	out, errs, code := sbench(t, "submit", camp, "--db", db)
	if code != 0 {
		t.Fatalf("submit: %s", errs)
	}
	ids := strings.Fields(out)
	t.Cleanup(func() { exec.Command("scancel", ids...).Run() })
	// Slurm keeps such a job pending forever: the wait must see that.
	out, errs, code = slurmWait(t, 90*time.Second, db)
	if code != 1 || !strings.Contains(errs, "DependencyNeverSatisfied") || !strings.Contains(errs, "will never start") {
		t.Errorf("status: exit %d, want 1 and the reason\n%s%s", code, out, errs)
	}
	second := runOfBenchmark(archivedRuns(t, db), "second")
	if len(second) != 1 || second[0]["status"] != "failed" || !strings.Contains(second[0]["error"].(string), "never ran") {
		t.Errorf("the dependent job's step: %v", second)
	}
}

// TestSlurmRequeueKeepsBothAttempts is item 5: a node dies (its slurmd is
// killed) while a job runs its second step; Slurm requeues the job, which
// runs again on the other node. The first attempt's result of the first
// step is not overwritten: both attempts are archived, status says the job
// was requeued as it happens, and so does the report.
func TestSlurmRequeueKeepsBothAttempts(t *testing.T) {
	lab := os.Getenv("SBENCH_LAB")
	if lab == "" {
		testenv.Require(t, "SBENCH_LAB is not set (make test-slurm sets it)")
	}
	dir, camp, db := slurmDir(t, `
[campaign]
name = "requeue"
[slurm]
nodes = 1
ntasks_per_node = 1
time = "2"
[[benchmark]]
name = "short"
per_rank = { "0" = ["sh", "-c", "`+osuLikeTOML+`"] }
parser = "osu"
[[benchmark]]
name = "slow"
per_rank = { "0" = ["sh", "-c", "sleep 30; `+osuLikeTOML+`"] }
parser = "osu"
`)
	out, errs, code := sbench(t, "submit", camp, "--db", db)
	if code != 0 {
		t.Fatalf("submit: %s", errs)
	}
	id := strings.TrimSpace(out)
	var status, statusErr string
	var statusCode int
	done := make(chan struct{})
	go func() {
		defer close(done)
		status, statusErr, statusCode = slurmWait(t, slurmWaitLimit, db)
	}()
	logFile := filepath.Join(dir, "sbench-runs", "requeue", "requeue-steps-"+id+".out")
	defer func() {
		if t.Failed() {
			data, _ := os.ReadFile(logFile)
			t.Logf("%s:\n%s", logFile, data)
		}
	}()
	// The second step's task runs: its node launched it, and it lives on
	// without its slurmd, as on a real node whose daemon died.
	waitFor(t, "the second step's task to run", func() bool {
		return exec.Command("pgrep", "-f", "^sleep 30$").Run() == nil
	})
	nodeOut, _ := exec.Command("squeue", "-h", "-j", id, "-o", "%N").Output()
	node := strings.TrimSpace(string(nodeOut))
	if node != "n1" && node != "n2" {
		t.Fatalf("job %s runs on %q", id, node)
	}
	pidFile := filepath.Join(lab, "run", "slurmd-"+node+".pid")
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	var pid int
	fmt.Sscan(strings.TrimSpace(string(data)), &pid)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd := exec.Command("slurmd", "-f", os.Getenv("SLURM_CONF"), "-N", node)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("restart slurmd %s: %v\n%s", node, err, out)
		}
		// The cluster is whole again for the tests that follow.
		var state string
		for deadline := time.Now().Add(90 * time.Second); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
			out, _ := exec.Command("sinfo", "-h", "-n", node, "-o", "%T").Output()
			// Responding again: idle, or busy with the first attempt's
			// orphaned step, which it now reports.
			if state = strings.TrimSpace(string(out)); state == "idle" || state == "mixed" || state == "allocated" {
				return
			}
		}
		t.Errorf("%s is %q, not back in service after 90 s", node, state)
	})
	// Slurm notices the node within SlurmdTimeout (10 s) and requeues,
	// before the step (30 s) ends.
	waitForLong(t, "the job to be requeued", 60*time.Second, func() bool {
		out, _ := exec.Command("scontrol", "show", "job", "-o", id).Output()
		return strings.Contains(string(out), "Restarts=1")
	})
	// A requeued job is held two minutes (BeginTime): let it go to the
	// other node at once. (Its own node refuses it until the first
	// attempt's credential expires.)
	exec.Command("scontrol", "update", "JobId="+id, "StartTime=now").Run()
	select {
	case <-done:
	case <-time.After(3 * time.Minute):
		t.Fatal("status --wait did not end")
	}
	if statusCode != 0 {
		t.Errorf("status: exit %d\n%s%s", statusCode, status, statusErr)
	}
	if !strings.Contains(statusErr, "REQUEUED") || !strings.Contains(status, "requeued 1×") {
		t.Errorf("status did not say the job was requeued:\n%s%s", status, statusErr)
	}
	first := filepath.Join(dir, "sbench-runs", "requeue", id+".0.short.json")
	second := filepath.Join(dir, "sbench-runs", "requeue", id+".r1.0.short.json")
	for _, f := range []string{first, second} {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("bundle of an attempt: %v", err)
		}
	}
	var attempts []string
	for _, r := range storedRuns(t, db, store.Filter{}) {
		attempts = append(attempts, fmt.Sprintf("%s/%d/%s", r.Benchmark, r.Restart, r.Status))
	}
	slices.Sort(attempts)
	// The first attempt's slow step lives on without its slurmd and may
	// finish (and write its bundle) or not, as the timing goes: either
	// way it is a run of attempt 0, ok or failed (issue 26 item 2).
	n := len(attempts)
	attempts = slices.DeleteFunc(attempts, func(a string) bool { return a == "slow/0/ok" || a == "slow/0/failed" })
	if n-len(attempts) != 1 {
		t.Errorf("attempt 0's slow step left %d runs, want 1", n-len(attempts))
	}
	if want := []string{"short/0/ok", "short/1/ok", "slow/1/ok"}; !slices.Equal(attempts, want) {
		t.Errorf("archived runs %v, want %v", attempts, want)
	}
	pdf := filepath.Join(dir, "r.pdf")
	if _, errs, code := sbench(t, "report", "--db", db, "-o", pdf); code != 0 {
		t.Fatalf("report: %s", errs)
	}
	checkPDF(t, pdf, []string{"requeued"})
}

func waitForLong(t *testing.T, what string, limit time.Duration, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(limit); !cond(); time.Sleep(250 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// TestSlurmInterruptedSubmit is item 6 on a real Slurm: SIGINT in the middle
// of submitting 30 jobs. Every job Slurm accepted (found by the comment
// sbench gives it) is in the archive under its id.
func TestSlurmInterruptedSubmit(t *testing.T) {
	// A campaign name of its own: squeue still lists the jobs of earlier
	// runs for MinJobAge, with their comments.
	name := fmt.Sprintf("many%d", time.Now().UnixNano()%1e9)
	text := strings.Replace(manyJobs, "[slurm]", "[slurm]\ntime = \"1\"", 1)
	_, camp, db := slurmDir(t, strings.Replace(text, `name = "many"`, `name = "`+name+`"`, 1))
	p := startSbench(t, nil, nil, "submit", camp, "--db", db) // slurmDir changed to dir
	waitFor(t, "five jobs submitted", func() bool { return strings.Count(p.stdout.String(), "\n") >= 5 })
	p.cmd.Process.Signal(syscall.SIGINT)
	if code := p.exit(t, 30*time.Second); code != 130 {
		t.Errorf("submit: exit %d, want 130\n%s", code, p.stderr)
	}
	out, err := exec.Command("squeue", "-h", "-t", "all", "-o", "%i|%k").Output()
	if err != nil {
		t.Fatal(err)
	}
	var accepted []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		id, comment, _ := strings.Cut(l, "|")
		if strings.HasPrefix(comment, "sbench:"+name+":") {
			accepted = append(accepted, id)
		}
	}
	t.Cleanup(func() { exec.Command("scancel", accepted...).Run() })
	s, err := store.OpenReadOnly(db)
	if err != nil {
		t.Fatal(err)
	}
	jobs, err := s.Jobs(context.Background(), name)
	s.Close()
	if err != nil {
		t.Fatal(err)
	}
	var recorded []string
	for _, j := range jobs {
		recorded = append(recorded, j.SlurmID)
	}
	slices.Sort(accepted)
	slices.Sort(recorded)
	if len(accepted) < 5 || len(accepted) == 30 || !slices.Equal(accepted, recorded) {
		t.Errorf("Slurm accepted %q, the archive has %q", accepted, recorded)
	}
}
