package main

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// smallCampaign is one quick native step (plus whatever extra adds).
const smallCampaign = `
[campaign]
name = "small"

[slurm]
nodes = 1
ntasks_per_node = 2

[[benchmark]]
name = "latency"
kernel = "latency"
params = { sizes = "1,1024", iterations = 100, warmup = 10 }
`

// runStatuses returns run -> status of an archive, from its CSV export.
func runStatuses(t *testing.T, db string) map[string]string {
	t.Helper()
	got := map[string]string{}
	for _, r := range exportRows(t, db) {
		got[r["run"]] = r["status"]
	}
	return got
}

// TestLocalRunsInTheSameSecond: two sbench local runs of one campaign
// started together get different job ids; both archive their runs, and
// neither's bundles overwrite the other's.
func TestLocalRunsInTheSameSecond(t *testing.T) {
	dir := endToEndDir(t, "runs a campaign twice at once")
	os.WriteFile("small.toml", []byte(smallCampaign), 0o644)
	db := filepath.Join(dir, "a.db")
	var wg sync.WaitGroup
	codes := make([]int, 2)
	errs := make([]string, 2)
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i], codes[i] = sbench(t, "local", "small.toml", "--db", db)
		}()
	}
	wg.Wait()
	for i := range 2 {
		if codes[i] != 0 {
			t.Fatalf("run %d: exit %d\n%s", i, codes[i], errs[i])
		}
	}
	out, _, _ := sbench(t, "status", "--db", db, "--all")
	if n := strings.Count(out, "local-"); n != 2 {
		t.Errorf("%d local jobs recorded, want 2:\n%s", n, out)
	}
	bundles, _ := filepath.Glob("sbench-runs/small/local-*.json")
	if len(bundles) != 2 {
		t.Errorf("%d bundles in the results directory, want one per run: %q", len(bundles), bundles)
	}
	if got := runStatuses(t, db); len(got) != 2 {
		t.Errorf("archived runs %v, want 2", got)
	}
}

// TestLocalLauncherFailsBeforeTheRunner: an MPI launcher that refuses its
// options never starts sbench-runner, so no bundle is written; the step
// must still end in the archive, as a failed run saying what the launcher
// printed — and the other step of the job as the run it was.
func TestLocalLauncherFailsBeforeTheRunner(t *testing.T) {
	dir := endToEndDir(t, "runs a campaign")
	// Open MPI's mpirun answers a bad option so; a script stands in for it
	// so that the test needs no MPI.
	mpirun := filepath.Join(dir, "mpirun")
	os.WriteFile(mpirun, []byte("#!/bin/sh\necho 'mpirun: Error: unknown option \"--bogus\"' >&2\necho \"Type 'mpirun --help' for usage.\" >&2\nexit 1\n"), 0o755)
	os.WriteFile("small.toml", []byte(smallCampaign+`
[[benchmark]]
name = "broken"
kernel = "latency"
params = { sizes = "1", iterations = 10 }
launcher = { type = "mpirun", command = "`+mpirun+`", args = ["--bogus"] }
`), 0o644)
	db := filepath.Join(dir, "a.db")
	out, errs, code := sbench(t, "local", "small.toml", "--db", db)
	if code != 1 || !strings.Contains(errs, "1 step(s) failed") {
		t.Fatalf("local: exit %d, want 1 naming the failed step\n%s\n%s", code, out, errs)
	}
	if !strings.Contains(out, "2 run(s)") || !strings.Contains(out, "1 of them failed before sbench-runner wrote a bundle") {
		t.Errorf("summary does not count the failed step's run:\n%s", out)
	}
	runs, _, code := sbench(t, "runs", "--db", db)
	if code != 0 || strings.Count(runs, "\n") < 3 {
		t.Fatalf("runs: %s", runs)
	}
	if !strings.Contains(runs, "failed") || !strings.Contains(runs, "broken") {
		t.Errorf("the broken step is not archived as failed:\n%s", runs)
	}
	js, _, _ := sbench(t, "runs", "--db", db, "--json")
	if !strings.Contains(js, `unknown option`) || !strings.Contains(js, "exited 1 before sbench-runner wrote a bundle") {
		t.Errorf("the failed run does not say what the launcher printed:\n%s", js)
	}
}
