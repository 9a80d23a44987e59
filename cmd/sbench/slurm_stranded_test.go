package main

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/sbench/sbench/internal/testenv"
	"github.com/sbench/sbench/jobs"
)

// strandedChain is first (fails) ← second ← third, one job each: Slurm
// marks second DependencyNeverSatisfied and keeps third pending on
// "Dependency" forever (the test cluster does not set kill_invalid_depend).
const strandedChain = `
[campaign]
name = "chain"
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
[[benchmark]]
name = "third"
after = "second"
kernel = "stream"
params = { array_size = 100000, iterations = 2 }
`

// submitChain submits strandedChain and returns the archive and the three
// job ids; the jobs are cancelled when the test ends.
func submitChain(t *testing.T) (db string, ids []string) {
	t.Helper()
	_, camp, db := slurmDir(t, strandedChain)
	out, errs, code := sbench(t, "submit", camp, "--db", db)
	if code != 0 {
		t.Fatalf("submit: %s", errs)
	}
	ids = strings.Fields(out)
	if len(ids) != 3 {
		t.Fatalf("submit printed %q, want 3 job ids", out)
	}
	t.Cleanup(func() { exec.Command("scancel", ids...).Run() })
	return db, ids
}

// statusWithinLimit runs sbench status with args and gives up after
// limit, logging what Slurm says, as slurmWait does.
func statusWithinLimit(t *testing.T, limit time.Duration, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	stdout, stderr, code = testenv.CLI(ctx, run, exitCode, append([]string{"status"}, args...)...)
	if ctx.Err() != nil {
		logSlurmState(t)
		t.Fatalf("sbench status %s: still waiting after %s\n%s", strings.Join(args, " "), limit, stderr)
	}
	return stdout, stderr, code
}

// TestSlurmStrandedChain is item 1 of issue 26 on a real Slurm: status
// --wait on the chain used to wait forever. It returns once the first job
// has failed (within 60 s of its end, the figure), saying why the
// third will never start; a later status --ingest, without --all, then
// archives 3 of 3 planned steps: first's failed, second's and third's
// never run because first failed.
func TestSlurmStrandedChain(t *testing.T) {
	db, ids := submitChain(t)
	out, errs, code := statusWithinLimit(t, slurmWaitLimit, "--db", db, "--wait", "--interval", "300ms")
	returned := time.Now()
	if code != 1 || !strings.Contains(errs, "job "+ids[2]+": it will never start") ||
		!strings.Contains(errs, "because job "+ids[0]+" (benchmark first) failed") {
		t.Errorf("status --wait: exit %d, want 1 and why job %s never starts\n%s%s", code, ids[2], out, errs)
	}
	recorded := archivedJobs(t, db, "chain")
	if len(recorded) != 3 || recorded[0].End.IsZero() {
		t.Fatalf("jobs %+v", recorded)
	}
	if after := returned.Sub(recorded[0].End); after > 60*time.Second {
		t.Errorf("status --wait returned %s after the first job ended, want < 60 s", after)
	}
	for _, j := range recorded[1:] {
		if j.State != "PENDING" || !jobs.IsStranded(j) {
			t.Errorf("job %s recorded %s %q, want pending and stranded", j.SlurmID, j.State, j.Reason)
		}
	}

	out, errs, code = statusWithinLimit(t, time.Minute, "--db", db, "--ingest")
	if code != 0 || !strings.Contains(out, "3 run(s) added") {
		t.Errorf("status --ingest: exit %d, want 3 runs added\n%s%s", code, out, errs)
	}
	runs := archivedRuns(t, db)
	if len(runs) != 3 {
		t.Fatalf("%d runs archived, want 3: %v", len(runs), runs)
	}
	for _, name := range []string{"first", "second", "third"} {
		rs := runOfBenchmark(runs, name)
		if len(rs) != 1 || rs[0]["status"] != "failed" {
			t.Errorf("%s: %v", name, rs)
			continue
		}
		msg, _ := rs[0]["error"].(string)
		if name != "first" && (!strings.Contains(msg, "never ran") || !strings.Contains(msg, "because job "+ids[0]+" (benchmark first) failed")) {
			t.Errorf("%s: error %q", name, msg)
		}
	}
	if msg, _ := runOfBenchmark(runs, "third")[0]["error"].(string); !strings.Contains(msg, "through job "+ids[1]+" (benchmark second)") {
		t.Errorf("third's run does not name the job between: %q", msg)
	}
}

// TestSlurmCancelStranded: status --wait --cancel-stranded scancels the
// jobs that can never start: no job of the chain is left pending.
func TestSlurmCancelStranded(t *testing.T) {
	db, ids := submitChain(t)
	out, errs, code := statusWithinLimit(t, slurmWaitLimit, "--db", db, "--wait", "--interval", "300ms", "--cancel-stranded", "--ingest")
	if code != 1 || !strings.Contains(errs, "cancelled 2 job(s) that can never start: "+ids[1]+" "+ids[2]) || !strings.Contains(out, "3 run(s) added") {
		t.Errorf("status --wait --cancel-stranded --ingest: exit %d\n%s%s", code, out, errs)
	}
	pending, err := exec.Command("squeue", "-h", "-t", "PENDING", "-j", strings.Join(ids, ","), "-o", "%i %T %r").CombinedOutput()
	if err != nil || strings.TrimSpace(string(pending)) != "" {
		t.Errorf("jobs still pending after --cancel-stranded (%v):\n%s", err, pending)
	}
	for _, j := range archivedJobs(t, db, "chain")[1:] {
		if j.State != "CANCELLED" || !jobs.IsStranded(j) {
			t.Errorf("job %s recorded %s %q, want CANCELLED with why", j.SlurmID, j.State, j.Reason)
		}
	}
}
