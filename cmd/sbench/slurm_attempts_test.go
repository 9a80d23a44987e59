package main

import (
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
)

// TestSlurmEveryAttemptsLaunches is issue 26's item 2 on a real Slurm: the
// slurmd of n2 is killed while a job of three steps runs its first. The
// second step's launch then fails on n2 ("Task launch … failed on node
// n2"), the third runs on n1 until Slurm declares n2 down and requeues the
// job (NODE_FAIL); the second attempt runs every step. Every launch of both
// attempts is archived: attempt 0's second and third steps as failed runs
// of attempt 0 (whatever attempt 1 did) whose reason quotes NODE_FAIL, and
// sbench runs tells the attempts apart (J.S and J.S r1).
// It needs the cluster to itself while n2 is down: run-tests.sh runs the
// packages one at a time, and no Slurm test is parallel.
func TestSlurmEveryAttemptsLaunches(t *testing.T) {
	lab := os.Getenv("SBENCH_LAB")
	if lab == "" {
		testenv.Require(t, "SBENCH_LAB is not set (make test-slurm sets it)")
	}
	flag := filepath.Join(t.TempDir(), "slurmd-killed")
	// The first attempt's first step waits (bounded) until n2's slurmd is
	// dead; its third step runs until Slurm ends the attempt. The second
	// attempt runs straight through.
	hold := `if [ x$SLURM_RESTART_COUNT = x ] || [ x$SLURM_RESTART_COUNT = x0 ]; then i=0; while [ ! -e ` + flag + ` ] && [ $i -lt 600 ]; do sleep 0.2; i=$((i+1)); done; fi; ` + osuLikeTOML
	long := `if [ x$SLURM_RESTART_COUNT = x ] || [ x$SLURM_RESTART_COUNT = x0 ]; then sleep 200; fi; ` + osuLikeTOML
	dir, camp, db := slurmDir(t, `
[campaign]
name = "attempts"
[slurm]
nodes = 2
ntasks_per_node = 1
time = "6"
[[benchmark]]
name = "hold"
per_rank = { "0" = ["sh", "-c", "`+hold+`"] }
parser = "osu"
[[benchmark]]
name = "spread"
per_rank = { "0" = ["sh", "-c", "`+osuLikeTOML+`"] }
parser = "osu"
[[benchmark]]
name = "long"
slurm = { nodes = 1 }
per_rank = { "0" = ["sh", "-c", "`+long+`"] }
parser = "osu"
`)
	out, errs, code := sbench(t, "submit", camp, "--db", db)
	if code != 0 {
		t.Fatalf("submit: %s", errs)
	}
	id := strings.TrimSpace(out)
	t.Cleanup(func() { exec.Command("scancel", id).Run() })
	logFile := filepath.Join(dir, "sbench-runs", "attempts", "attempts-steps-"+id+".out")
	defer func() {
		if t.Failed() {
			data, _ := os.ReadFile(logFile)
			t.Logf("%s:\n%s", logFile, data)
			logSlurmState(t)
		}
	}()
	var status, statusErr string
	var statusCode int
	done := make(chan struct{})
	go func() {
		defer close(done)
		status, statusErr, statusCode = slurmWait(t, 5*time.Minute, db)
	}()
	// Both ranks of the first step run (they met): its task on n2 lives
	// on without its slurmd, as on a real node whose daemon died.
	waitForLong(t, "the first step's ranks to meet", 2*time.Minute, func() bool {
		data, _ := os.ReadFile(logFile)
		return strings.Contains(string(data), "2 ranks on 2 nodes joined")
	})
	data, err := os.ReadFile(filepath.Join(lab, "run", "slurmd-n2.pid"))
	if err != nil {
		t.Fatal(err)
	}
	var pid int
	fmt.Sscan(strings.TrimSpace(string(data)), &pid)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	restarted := false
	restart := func() {
		if restarted {
			return
		}
		restarted = true
		cmd := exec.Command("slurmd", "-f", os.Getenv("SLURM_CONF"), "-N", "n2")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("restart slurmd n2: %v\n%s", err, out)
		}
	}
	t.Cleanup(func() {
		restart()
		// The cluster is whole again for the tests that follow.
		waitForLong(t, "n2 back in service", 90*time.Second, func() bool {
			out, _ := exec.Command("sinfo", "-h", "-n", "n2", "-o", "%T").Output()
			s := strings.TrimSpace(string(out))
			return s == "idle" || s == "mixed" || s == "allocated"
		})
	})
	if err := os.WriteFile(flag, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	// Slurm notices n2 within SlurmdTimeout (10 s) and requeues the job
	// while its third step sleeps.
	waitForLong(t, "the job to be requeued", 90*time.Second, func() bool {
		out, _ := exec.Command("scontrol", "show", "job", "-o", id).Output()
		return strings.Contains(string(out), "Restarts=1")
	})
	restart()
	waitForLong(t, "n2 to respond again", 90*time.Second, func() bool {
		out, _ := exec.Command("sinfo", "-h", "-n", "n2", "-o", "%T").Output()
		s := strings.TrimSpace(string(out))
		return s == "idle" || s == "mixed" || s == "allocated"
	})
	// Slurm holds a requeued job two minutes (BeginTime) and is left to:
	// released at once, its credential may still be revoked on n2, whose
	// slurmd learns of the first attempt's end only now ("Job credential
	// revoked"), and the second attempt's first launch fails.
	<-done
	if statusCode != 0 {
		t.Errorf("status: exit %d\n%s%s", statusCode, status, statusErr)
	}
	runs := archivedRuns(t, db)
	var got []string
	for _, r := range runs {
		restart, _ := r["restart"].(float64)
		got = append(got, fmt.Sprintf("%s/%d/%s", r["benchmark"], int(restart), r["status"]))
	}
	slices.Sort(got)
	want := []string{"hold/0/ok", "hold/1/ok", "long/0/failed", "long/1/ok", "spread/0/failed", "spread/1/ok"}
	if !slices.Equal(got, want) {
		t.Errorf("archived runs %v, want %v", got, want)
	}
	for _, r := range runs {
		restart, _ := r["restart"].(float64)
		if restart != 0 || r["status"] != "failed" {
			continue
		}
		msg, _ := r["error"].(string)
		t.Logf("%s of attempt 0: %s", r["benchmark"], msg)
		if !strings.Contains(msg, "NODE_FAIL") {
			t.Errorf("%s of attempt 0: error %q does not say NODE_FAIL", r["benchmark"], msg)
		}
		if strings.Contains(msg, "SIGTERM") && !strings.Contains(msg, "Slurm") {
			t.Errorf("%s of attempt 0: error %q blames a signal, not Slurm", r["benchmark"], msg)
		}
		if r["benchmark"] == "spread" && !strings.Contains(msg, "n2") {
			t.Errorf("spread of attempt 0: error %q does not name n2", msg)
		}
	}
	table, errs, code := sbench(t, "runs", "--db", db)
	if code != 0 {
		t.Fatalf("runs: %s", errs)
	}
	t.Logf("sbench runs:\n%s", table)
	for _, step := range []string{"0", "1", "2"} {
		first, second := id+"."+step+" ", id+"."+step+" r1"
		if !strings.Contains(table, first) || !strings.Contains(table, second) {
			t.Errorf("runs does not show %q and %q:\n%s", first, second, table)
		}
	}
	sel, errs, code := sbench(t, "runs", "--db", db, "--job", id+".1r1", "--json")
	if code != 0 {
		t.Fatalf("runs --job %s.1r1: %s", id, errs)
	}
	if n := strings.Count(sel, `"benchmark": "spread"`); n != 1 || strings.Count(sel, `"benchmark"`) != 1 {
		t.Errorf("runs --job %s.1r1 selects:\n%s", id, sel)
	}
}
