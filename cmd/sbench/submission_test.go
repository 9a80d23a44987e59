package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sbench/sbench/compare"
	"github.com/sbench/sbench/store"
)

// archivedJobs reads the jobs of campaign from the archive at dbPath.
func archivedJobs(t *testing.T, dbPath, campaign string) []store.Job {
	t.Helper()
	db, err := store.OpenReadOnly(dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	jobs, err := db.Jobs(context.Background(), campaign)
	if err != nil {
		t.Fatal(err)
	}
	return jobs
}

// submissionIDs lists the jobs of each submission, newest first.
func submissionIDs(jobs []store.Job) [][]string {
	var out [][]string
	for _, s := range compare.Submissions(jobs) {
		var ids []string
		for _, j := range s {
			ids = append(ids, j.SlurmID)
		}
		out = append(out, ids)
	}
	return out
}

// TestSubmitsSecondsApartAreTwoSubmissions is item 6 of issue 26: each
// sbench submit stamps its own submission id on every job it records, and
// records what each job waits for (afterok): two submits of a campaign
// seconds apart are two submissions, campaign:NAME@2 the first.
func TestSubmitsSecondsApartAreTwoSubmissions(t *testing.T) {
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "sbatch"), []byte(fakeSbatch), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	dir := t.TempDir()
	t.Chdir(dir)
	camp := filepath.Join(dir, "chain.toml")
	os.WriteFile(camp, []byte(`
[campaign]
name = "chain"
mode = "jobs"
[slurm]
nodes = 1
ntasks_per_node = 1
[[benchmark]]
name = "first"
kernel = "stream"
[[benchmark]]
name = "second"
after = "first"
kernel = "stream"
`), 0o644)
	db := filepath.Join(dir, "a.db")
	var printed [][]string
	for range 2 {
		out, errs, code := sbench(t, "submit", camp, "--db", db)
		if code != 0 {
			t.Fatalf("submit: exit %d: %s", code, errs)
		}
		printed = append(printed, strings.Fields(out))
	}
	jobs := archivedJobs(t, db, "chain")
	if len(jobs) != 4 {
		t.Fatalf("%d jobs recorded, want 4", len(jobs))
	}
	if got, want := submissionIDs(jobs), [][]string{printed[1], printed[0]}; !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("submissions %q, want %q (newest first)", got, want)
	}
	for i, j := range jobs {
		if !strings.HasPrefix(j.Submission, "submit-") || j.Submission != jobs[i/2*2].Submission {
			t.Errorf("job %s recorded with submission %q", j.SlurmID, j.Submission)
		}
	}
	if jobs[0].Submission == jobs[2].Submission {
		t.Errorf("two submits recorded one submission id %q", jobs[0].Submission)
	}
	for i, want := range [][]string{nil, {jobs[0].SlurmID}, nil, {jobs[2].SlurmID}} {
		if !slices.Equal(jobs[i].After, want) {
			t.Errorf("job %s recorded as waiting for %q, want %q", jobs[i].SlurmID, jobs[i].After, want)
		}
	}
}

// TestLocalResumeContinuesItsSubmission: the jobs of sbench local --resume
// carry the submission of the run they resume; another sbench local is
// another submission.
func TestLocalResumeContinuesItsSubmission(t *testing.T) {
	dir := endToEndDir(t, "runs a campaign locally, then resumes it")
	db := filepath.Join(dir, "a.db")
	data, err := os.ReadFile(filepath.Join(packageDir, "..", "..", "parsers", "testdata", "003-osu_latency-v7.5-2node.txt"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile("LAT", data, 0o644)
	os.WriteFile("c.toml", []byte(`
[campaign]
name = "resumed"
[[benchmark]]
name = "flaky"
command = ["sh", "-c", "[ -e `+filepath.Join(dir, "OK")+` ] || exit 1; cat `+filepath.Join(dir, "LAT")+`"]
parser = "osu"
`), 0o644)
	if _, errs, code := sbench(t, "local", "c.toml", "--db", db); code != exitGate {
		t.Fatalf("local: exit %d, want %d (the step fails)\n%s", code, exitGate, errs)
	}
	os.WriteFile("OK", nil, 0o644)
	if _, errs, code := sbench(t, "local", "c.toml", "--db", db, "--resume"); code != 0 {
		t.Fatalf("local --resume: exit %d\n%s", code, errs)
	}
	if _, errs, code := sbench(t, "local", "c.toml", "--db", db); code != 0 {
		t.Fatalf("local again: exit %d\n%s", code, errs)
	}
	jobs := archivedJobs(t, db, "resumed")
	if len(jobs) != 3 {
		t.Fatalf("%d jobs, want 3 (run, resume, run again)", len(jobs))
	}
	first, resumed, again := jobs[0], jobs[1], jobs[2]
	if !strings.HasPrefix(first.Submission, "local-") || !strings.HasPrefix(first.SlurmID, first.Submission+"-") ||
		resumed.Submission != first.Submission || again.Submission == first.Submission || again.Submission == "" {
		t.Errorf("submissions: run %q, its resume %q, the next run %q", first.Submission, resumed.Submission, again.Submission)
	}
	if got := submissionIDs(jobs); len(got) != 2 || !slices.Equal(got[1], []string{first.SlurmID, resumed.SlurmID}) {
		t.Errorf("submissions %q", got)
	}
}
