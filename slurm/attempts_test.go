package slurm

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

const sacctDuplicates = "sacct -P -n --duplicates -j 1 -o " + sacctFields

// Without accounting, the jobcomp log has a line per attempt's end: the
// lab's job 1 ended NODE_FAIL (slurmd of n2 killed), then COMPLETED.
func TestAttemptsFromJobComp(t *testing.T) {
	f := replay(t, map[string]reply{
		sacctDuplicates: {stderr: testdata(t, "lab-sacct-without-dbd.stderr"), exit: 1},
	})
	c := &Client{R: f, JobCompLoc: filepath.Join("testdata", "lab-jobcomp-requeued.txt")}
	got, note := c.Attempts(context.Background(), "1", 1)
	if note != "" || len(got) != 2 {
		t.Fatalf("attempts %+v, note %q; want 2", got, note)
	}
	if a := got[0]; a.Restart != 0 || a.State != "NODE_FAIL" || a.NodeList != "n[1-2]" || a.Source != SourceJobComp ||
		!a.End.Equal(local("2026-12-04T08:40:16")) {
		t.Errorf("attempt 0 = %+v", a)
	}
	if a := got[1]; a.Restart != 1 || a.State != "COMPLETED" || a.ExitCode != "0:0" || !a.Start.Equal(local("2026-12-04T08:40:17")) {
		t.Errorf("attempt 1 = %+v", a)
	}
	// Told the job ran once, only the last line is its: an earlier one
	// belongs to a job that had the id before.
	got, _ = c.Attempts(context.Background(), "1", 0)
	if len(got) != 1 || got[0].Restart != 0 || got[0].State != "COMPLETED" {
		t.Errorf("attempts of a job run once: %+v", got)
	}
}

// sacct --duplicates lists every attempt, each job line followed by its
// steps. The lab runs no slurmdbd, so this output is composed in the
// shape of the captured sacct-slurmdbd-rearranged.txt (same fields, same
// order), with the states Slurm gives a job it requeued.
func TestAttemptsFromSacctDuplicates(t *testing.T) {
	out := strings.Join([]string{
		"1|NODE_FAIL|0:0|2026-12-04T08:39:46|2026-12-04T08:40:16|n[1-2]|attempts-steps",
		"1.batch|CANCELLED|0:15|2026-12-04T08:39:46|2026-12-04T08:40:16|n1|batch",
		"1.0|COMPLETED|0:0|2026-12-04T08:39:46|2026-12-04T08:39:46|n[1-2]|sbench-runner",
		"1.1|FAILED|1:0|2026-12-04T08:39:46|2026-12-04T08:39:58|n[1-2]|sbench-runner",
		"1.2|NODE_FAIL|0:0|2026-12-04T08:39:58|2026-12-04T08:40:16|n1|sbench-runner",
		"1|COMPLETED|0:0|2026-12-04T08:40:17|2026-12-04T08:40:18|n[1-2]|attempts-steps",
		"1.batch|COMPLETED|0:0|2026-12-04T08:40:17|2026-12-04T08:40:18|n1|batch",
		"1.0|COMPLETED|0:0|2026-12-04T08:40:17|2026-12-04T08:40:18|n[1-2]|sbench-runner",
		"11|COMPLETED|0:0|2026-12-04T08:40:17|2026-12-04T08:40:18|n1|other",
		"",
	}, "\n")
	f := replay(t, map[string]reply{sacctDuplicates: {stdout: out}})
	got, note := (&Client{R: f}).Attempts(context.Background(), "1", 1)
	if note != "" || len(got) != 2 {
		t.Fatalf("attempts %+v, note %q; want 2", got, note)
	}
	if a := got[0]; a.Restart != 0 || a.State != "NODE_FAIL" || a.Source != SourceSacct ||
		a.Steps["2"].State != "NODE_FAIL" || a.Steps["1"].ExitCode != "1:0" || a.Steps["batch"].State != "CANCELLED" {
		t.Errorf("attempt 0 = %+v", a)
	}
	if a := got[1]; a.Restart != 1 || a.State != "COMPLETED" || len(a.Steps) != 2 {
		t.Errorf("attempt 1 = %+v", a)
	}
	if cmds := f.commands(); len(cmds) != 1 {
		t.Errorf("ran %q; sacct answered, the jobcomp log is not needed", cmds)
	}
}

// Neither source: no attempts, and a note that says why.
func TestAttemptsUnknown(t *testing.T) {
	f := replay(t, map[string]reply{
		sacctDuplicates:        {stderr: testdata(t, "lab-sacct-without-dbd.stderr"), exit: 1},
		"scontrol show config": {stdout: "JobCompType             = jobcomp/none\n"},
	})
	got, note := (&Client{R: f}).Attempts(context.Background(), "1", 1)
	if len(got) != 0 || !strings.Contains(note, "accounting storage is disabled") || !strings.Contains(note, "JobCompType is not jobcomp/filetxt") {
		t.Errorf("attempts %+v, note %q", got, note)
	}
	if _, note := (&Client{R: f}).Attempts(context.Background(), "1;rm", 1); !strings.Contains(note, "not a job id") {
		t.Errorf("a bad id: note %q", note)
	}
}
