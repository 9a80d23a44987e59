package slurm

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func local(s string) time.Time {
	t, err := time.ParseInLocation("2006-01-02T15:04:05", s, time.Local)
	if err != nil {
		panic(err)
	}
	return t
}

const invalidJob = "slurm_load_jobs error: Invalid job id specified\n"

func TestIsTerminal(t *testing.T) {
	tests := map[string]bool{
		"COMPLETED": true, "FAILED": true, "CANCELLED": true, "CANCELLED by 0": true,
		"CANCELLED+": true, "TIMEOUT": true, "NODE_FAIL": true, "OUT_OF_MEMORY": true,
		"PREEMPTED": true, "BOOT_FAIL": true, "DEADLINE": true, "completed": true,
		"PENDING": false, "RUNNING": false, "COMPLETING": false, "CONFIGURING": false,
		"SUSPENDED": false, "REQUEUED": false, "RESIZING": false, "STOPPED": false,
		"SPECIAL_EXIT": false, "REQUEUE_HOLD": false, StateUnknown: false, "": false,
	}
	for state, want := range tests {
		if got := IsTerminal(state); got != want {
			t.Errorf("IsTerminal(%q) = %v, want %v", state, got, want)
		}
		if got := (JobInfo{State: state}).Terminal(); got != want {
			t.Errorf("JobInfo{State: %q}.Terminal() = %v", state, got)
		}
	}
}

// Every job of the captured scontrol output, read back exactly.
func TestJobsFromScontrol(t *testing.T) {
	file := "scontrol-show-job-oneline.txt"
	table := map[string]reply{}
	for _, id := range []string{"1", "3", "4", "5"} {
		table["scontrol show job -o "+id] = reply{stdout: line(t, file, "JobId="+id+" ")}
	}
	table["scontrol show job -o 8"] = reply{stdout: line(t, "lab-scontrol-running-pending.txt", "JobId=8 ")}
	table["scontrol show job -o 9"] = reply{stdout: line(t, "lab-scontrol-running-pending.txt", "JobId=9 ")}
	table["scontrol show job -o 6"] = reply{stdout: line(t, "lab-scontrol-cancelled.txt", "JobId=6 ")}
	table["scontrol show job -o 7"] = reply{stdout: testdata(t, "lab-scontrol-long-name.txt")}
	want := map[string]JobInfo{
		"1": {ID: "1", Name: "true", State: "COMPLETED", ExitCode: "0:0", NodeList: "n[1-2]",
			Submit: local("2026-11-30T00:24:21"), Start: local("2026-11-30T00:24:21"), End: local("2026-11-30T00:24:21")},
		"3": {StdOut: "/scratch/lab/jobs/failer-3.out", StdErr: "/scratch/lab/jobs/failer-3.out", ID: "3", Name: "failer", State: "FAILED", Reason: "NonZeroExitCode", ExitCode: "3:0", NodeList: "n1",
			Submit: local("2026-11-30T00:24:33"), Start: local("2026-11-30T00:24:34"), End: local("2026-11-30T00:24:35")},
		"4": {StdOut: "/scratch/lab/jobs/sleeper-4.out", StdErr: "/scratch/lab/jobs/sleeper-4.out", ID: "4", Name: "sleeper", State: "TIMEOUT", Reason: "TimeLimit", ExitCode: "0:15", NodeList: "n1",
			Submit: local("2026-11-30T00:24:33"), Start: local("2026-11-30T00:24:34"), End: local("2026-11-30T00:25:50")},
		"5": {StdOut: "/scratch/lab/jobs/segv-5.out", StdErr: "/scratch/lab/jobs/segv-5.out", ID: "5", Name: "segv", State: "FAILED", Reason: "JobLaunchFailure", ExitCode: "0:11", NodeList: "n1",
			Submit: local("2026-11-30T00:24:33"), Start: local("2026-11-30T00:24:34"), End: local("2026-11-30T00:24:34")},
		// Running: EndTime=Unknown. Pending: StartTime is a forecast a year
		// ahead, which must not pass for a start.
		"8": {StdOut: "/tmp/sbjobs/slurm-8.out", StdErr: "/tmp/sbjobs/slurm-8.out", ID: "8", Name: "runner", State: "RUNNING", ExitCode: "0:0", NodeList: "n1",
			Submit: local("2026-11-30T01:50:59"), Start: local("2026-11-30T01:50:59")},
		"9": {StdOut: "/tmp/sbjobs/slurm-9.out", StdErr: "/tmp/sbjobs/slurm-9.out", ID: "9", Name: "waiter", State: "PENDING", Reason: "Resources", ExitCode: "0:0",
			Submit: local("2026-11-30T01:50:59")},
		// Cancelled while pending: Slurm keeps the pending reason.
		"6": {StdOut: "/tmp/sbjobs/slurm-6.out", StdErr: "/tmp/sbjobs/slurm-6.out", ID: "6", Name: "pend2", State: "CANCELLED", Reason: "Resources", ExitCode: "0:0",
			Submit: local("2026-11-30T01:48:52"), Start: local("2026-11-30T01:48:53"), End: local("2026-11-30T01:48:53")},
		"7": {StdOut: "/tmp/sbjobs/slurm-7.out", StdErr: "/tmp/sbjobs/slurm-7.out", ID: "7", Name: "a very long job name with | pipes and spaces that goes on and on", State: "COMPLETED",
			ExitCode: "0:0", NodeList: "n1",
			Submit: local("2026-11-30T01:49:11"), Start: local("2026-11-30T01:49:12"), End: local("2026-11-30T01:49:12")},
	}
	for id, w := range want {
		f := replay(t, table)
		got, err := (&Client{R: f}).Jobs(context.Background(), []string{id})
		if err != nil {
			t.Fatal(err)
		}
		w.Source = SourceScontrol
		if !reflect.DeepEqual(got, map[string]JobInfo{id: w}) {
			t.Errorf("Jobs(%s) =\n%+v\nwant\n%+v", id, got[id], w)
		}
		if cmds := f.commands(); len(cmds) != 1 {
			t.Errorf("Jobs(%s) ran %q, want one scontrol", id, cmds)
		}
	}
}

// Some Slurm versions or wrappers answer in the multi-line form: same job.
func TestJobsFromScontrolMultiLine(t *testing.T) {
	one := &Client{R: replay(t, map[string]reply{"scontrol show job -o 3": {stdout: line(t, "scontrol-show-job-oneline.txt", "JobId=3 ")}})}
	multi := &Client{R: replay(t, map[string]reply{"scontrol show job -o 3": {stdout: testdata(t, "scontrol-show-job-3.txt")}})}
	a, err1 := one.Jobs(context.Background(), []string{"3"})
	b, err2 := multi.Jobs(context.Background(), []string{"3"})
	if err1 != nil || err2 != nil || !reflect.DeepEqual(a, b) || a["3"].State != "FAILED" {
		t.Errorf("one-line %+v (%v) != multi-line %+v (%v)", a, err1, b, err2)
	}
}

// Several jobs: one squeue for all, then scontrol only for those that ended
// (squeue shows no exit code).
func TestJobsSeveralAskSqueueFirst(t *testing.T) {
	f := replay(t, map[string]reply{
		"squeue -h -t all -j 8,9,3,7 -o " + squeueFormat: {stdout: testdata(t, "lab-squeue-t-all.txt")},
		"scontrol show job -o 3":                         {stdout: line(t, "scontrol-show-job-oneline.txt", "JobId=3 ")},
		"scontrol show job -o 7":                         {stdout: testdata(t, "lab-scontrol-long-name.txt")},
	})
	got, err := (&Client{R: f}).Jobs(context.Background(), []string{"8", "9", "3", "7", "8"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]JobInfo{
		"8": {ID: "8", Name: "runner", State: "RUNNING", NodeList: "n1", Source: SourceSqueue,
			Submit: local("2026-11-30T01:50:59"), Start: local("2026-11-30T01:50:59")},
		"9": {ID: "9", Name: "waiter", State: "PENDING", Reason: "Resources", Source: SourceSqueue,
			Submit: local("2026-11-30T01:50:59")},
	}
	for id, w := range want {
		if got[id] != w {
			t.Errorf("job %s =\n%+v\nwant\n%+v", id, got[id], w)
		}
	}
	if j := got["3"]; j.Source != SourceScontrol || j.ExitCode != "3:0" {
		t.Errorf("job 3 = %+v, want scontrol's exit code", j)
	}
	if j := got["7"]; j.Name != "a very long job name with | pipes and spaces that goes on and on" {
		t.Errorf("job 7 name %q", j.Name)
	}
	if len(got) != 4 {
		t.Errorf("got %d jobs, want 4", len(got))
	}
	if want := []string{
		"squeue -h -t all -j 8,9,3,7 -o " + squeueFormat, "scontrol show job -o 3", "scontrol show job -o 7",
	}; !reflect.DeepEqual(f.commands(), want) {
		t.Errorf("ran\n%q\nwant\n%q", f.commands(), want)
	}
}

func TestJobsFallBackToJobComp(t *testing.T) {
	f := replay(t, map[string]reply{
		"scontrol show job -o 4": {stderr: invalidJob, exit: 1},
	})
	c := &Client{R: f, JobCompLoc: filepath.Join("testdata", "jobcomp-filetxt.txt")}
	got, err := c.Jobs(context.Background(), []string{"4"})
	if err != nil {
		t.Fatal(err)
	}
	want := JobInfo{ID: "4", Name: "sleeper", State: "TIMEOUT", ExitCode: "0:0", NodeList: "n1", Source: SourceJobComp,
		Submit: local("2026-11-30T00:24:33"), Start: local("2026-11-30T00:24:34"), End: local("2026-11-30T00:25:50")}
	if got["4"] != want {
		t.Errorf("job 4 =\n%+v\nwant\n%+v", got["4"], want)
	}
	if cmds := f.commands(); len(cmds) != 1 {
		t.Errorf("ran %q; the jobcomp log answered, sacct is not needed", cmds)
	}
}

// A requeued job ends more than once: the last line of the log is the truth.
func TestJobCompLastLineWins(t *testing.T) {
	log := filepath.Join(t.TempDir(), "jobcomp.txt")
	text := "JobId=7 Name=bench JobState=NODE_FAIL NodeList=n1 ExitCode=0:0\n" +
		"this line was torn by a full disk\n" +
		"JobId=8 Name=other JobState=COMPLETED ExitCode=0:0\n" +
		"JobId=7 Name=bench JobState=COMPLETED NodeList=n2 ExitCode=0:0\n"
	if err := os.WriteFile(log, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	c := &Client{R: replay(t, map[string]reply{"scontrol show job -o 7": {stderr: invalidJob, exit: 1}}), JobCompLoc: log}
	got, err := c.Jobs(context.Background(), []string{"7"})
	if err != nil {
		t.Fatal(err)
	}
	if j := got["7"]; j.State != "COMPLETED" || j.NodeList != "n2" || j.Source != SourceJobComp {
		t.Errorf("job 7 = %+v, want the last line's COMPLETED on n2", j)
	}
}

// JobCompLoc unset: `scontrol show config` is asked once per client.
func TestJobCompLocFromConfig(t *testing.T) {
	abs, err := filepath.Abs(filepath.Join("testdata", "lab-jobcomp.txt"))
	if err != nil {
		t.Fatal(err)
	}
	config := strings.Replace(testdata(t, "lab-scontrol-show-config.txt"), "/tmp/sblab/log/jobcomp.txt", abs, 1)
	if config == testdata(t, "lab-scontrol-show-config.txt") {
		t.Fatal("captured config does not name the lab's jobcomp log")
	}
	f := replay(t, map[string]reply{
		"scontrol show job -o 3": {stderr: invalidJob, exit: 1},
		"scontrol show job -o 4": {stderr: invalidJob, exit: 1},
		"scontrol show config":   {stdout: config},
	})
	c := &Client{R: f}
	for _, id := range []string{"3", "4"} {
		got, err := c.Jobs(context.Background(), []string{id})
		if err != nil {
			t.Fatal(err)
		}
		if j := got[id]; j.Source != SourceJobComp || !j.Terminal() {
			t.Errorf("job %s = %+v", id, j)
		}
	}
	if got := f.commands(); !reflect.DeepEqual(got, []string{"scontrol show job -o 3", "scontrol show config", "scontrol show job -o 4"}) {
		t.Errorf("ran %q", got)
	}
}

func TestJobsUnknownWithoutAccounting(t *testing.T) {
	f := replay(t, map[string]reply{
		"scontrol show job -o 999":             {stderr: testdata(t, "lab-scontrol-invalid.stderr"), exit: 1},
		"scontrol show config":                 {stdout: "JobCompType             = jobcomp/none\nJobCompLoc              = (null)\n"},
		"sacct -P -n -j 999 -o " + sacctFields: {stderr: testdata(t, "lab-sacct-without-dbd.stderr"), exit: 1},
	})
	got, err := (&Client{R: f}).Jobs(context.Background(), []string{"999"})
	if err != nil {
		t.Fatal(err)
	}
	want := JobInfo{ID: "999", State: StateUnknown, Reason: "job left Slurm's memory: " +
		"scontrol no longer knows it (ended more than MinJobAge ago, or never existed); " +
		"jobcomp: JobCompType is not jobcomp/filetxt; sacct: Slurm accounting storage is disabled"}
	if got["999"] != want {
		t.Errorf("job 999 =\n%+v\nwant\n%+v", got["999"], want)
	}
}

func TestJobsFromSacct(t *testing.T) {
	f := replay(t, map[string]reply{
		"squeue -h -t all -j 30,31,32,33 -o " + squeueFormat: {}, // long gone
		"scontrol show job -o 30":                            {stderr: invalidJob, exit: 1},
		"scontrol show job -o 31":                            {stderr: invalidJob, exit: 1},
		"scontrol show job -o 32":                            {stderr: invalidJob, exit: 1},
		"scontrol show job -o 33":                            {stderr: invalidJob, exit: 1},
		"sacct -P -n -j 30,31,32,33 -o " + sacctFields: {stdout: testdata(t, "sacct-slurmdbd-rearranged.txt") +
			"32|CANCELLED by 0|0:0|2026-11-30T00:49:00|2026-11-30T00:49:09|n[1-2]|a|b\n"},
	})
	c := &Client{R: f, JobCompLoc: filepath.Join(t.TempDir(), "not-written-yet.txt")}
	got, err := c.Jobs(context.Background(), []string{"30", "31", "32", "33"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]JobInfo{
		"30": {ID: "30", Name: "failer", State: "FAILED", ExitCode: "3:0", NodeList: "n1", Source: SourceSacct,
			Start: local("2026-11-30T00:48:53"), End: local("2026-11-30T00:48:54")},
		"31": {ID: "31", Name: "segv", State: "FAILED", ExitCode: "0:11", NodeList: "n1", Source: SourceSacct,
			Start: local("2026-11-30T00:48:54"), End: local("2026-11-30T00:48:54")},
		"32": {ID: "32", Name: "a|b", State: "CANCELLED", Reason: "CANCELLED by 0", ExitCode: "0:0", NodeList: "n[1-2]",
			Source: SourceSacct, Start: local("2026-11-30T00:49:00"), End: local("2026-11-30T00:49:09")},
	}
	for id, w := range want {
		if got[id] != w {
			t.Errorf("job %s =\n%+v\nwant\n%+v", id, got[id], w)
		}
	}
	u := got["33"]
	if u.State != StateUnknown || !strings.Contains(u.Reason, "not-written-yet.txt does not exist (yet)") ||
		!strings.Contains(u.Reason, "sacct: no record") {
		t.Errorf("job 33 = %+v", u)
	}
}

func TestJobsControllerDown(t *testing.T) {
	c := &Client{R: replay(t, map[string]reply{
		"scontrol show job -o 3":                     {stderr: "slurm_load_jobs error: Unable to contact slurm controller (connect failure)\n", exit: 1},
		"squeue -h -t all -j 3,4 -o " + squeueFormat: {stderr: "slurm_load_jobs error: Unable to contact slurm controller (connect failure)\n", exit: 1},
	})}
	for _, ids := range [][]string{{"3"}, {"3", "4"}} {
		got, err := c.Jobs(context.Background(), ids)
		if err == nil || !strings.Contains(err.Error(), "Unable to contact slurm controller") || got != nil {
			t.Errorf("Jobs(%q) = %v, %v; want the controller's error", ids, got, err)
		}
	}
}

func TestParseTime(t *testing.T) {
	for in, want := range map[string]time.Time{
		"2026-11-30T00:24:33": local("2026-11-30T00:24:33"),
		"Unknown":             {}, "None": {}, "NONE": {}, "N/A": {}, "": {}, "2026-11-30": {},
	} {
		if got := parseTime(in); !got.Equal(want) || got.Location() != want.Location() {
			t.Errorf("parseTime(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestWaitMixedEnds(t *testing.T) {
	f := &waitCluster{t: t, states: map[string][]string{
		"1": {"PENDING", "RUNNING", "RUNNING", "COMPLETED"},
		"2": {"PENDING", "PENDING", "FAILED"},
		"3": {"RUNNING", "TIMEOUT"},
		"4": {"CANCELLED by 0"},
	}}
	var changes []string
	got, err := (&Client{R: f}).Wait(context.Background(), []string{"1", "2", "3", "4"}, time.Millisecond, func(j JobInfo) {
		changes = append(changes, j.ID+":"+j.State)
	})
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]string{"1": "COMPLETED", "2": "FAILED", "3": "TIMEOUT", "4": "CANCELLED"} {
		if got[id].State != want {
			t.Errorf("job %s ended %s, want %s", id, got[id].State, want)
		}
	}
	if r := got["4"].Reason; r != "CANCELLED by 0" {
		t.Errorf("job 4 Reason %q, want who cancelled it", r)
	}
	wantChanges := []string{
		"1:PENDING", "2:PENDING", "3:RUNNING", "4:CANCELLED", // poll 0, in the order asked
		"1:RUNNING", "3:TIMEOUT", // poll 1
		"2:FAILED",    // poll 2
		"1:COMPLETED", // poll 3, job 1 alone
	}
	if !reflect.DeepEqual(changes, wantChanges) {
		t.Errorf("onChange saw\n%q\nwant\n%q", changes, wantChanges)
	}
	if f.polls != 4 {
		t.Errorf("%d polls, want 4 (no poll after the last job ended)", f.polls)
	}
}

// waitCluster is the fake clock of the Wait tests: each job moves one step
// along its list of states every time a poll (one Jobs call) looks at it.
// A poll is an squeue for several jobs, or an scontrol for one; the scontrol
// that follows squeue for a job that ended (to get its exit code) is part of
// the same poll.
type waitCluster struct {
	t      *testing.T
	states map[string][]string
	fail   map[int]bool // polls that fail as a busy controller does

	polls     int
	seen      map[string]int  // how many polls looked at the job
	sameRound map[string]bool // squeue just reported it ended
}

func (w *waitCluster) look(id string) (string, bool) {
	seq, ok := w.states[id]
	if !ok {
		return "", false
	}
	if w.seen == nil {
		w.seen = map[string]int{}
	}
	w.seen[id]++
	return seq[min(w.seen[id]-1, len(seq)-1)], true
}

func (w *waitCluster) Run(ctx context.Context, argv, env []string, dir string) ([]byte, []byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	timeout := []byte("slurm_load_jobs error: Socket timed out on send/recv operation\n")
	switch {
	case argv[0] == "squeue" && len(argv) == 8 && argv[4] == "-j":
		w.polls++
		if w.fail[w.polls-1] {
			return nil, timeout, &ExitError{Prog: "squeue", Code: 1}
		}
		w.sameRound = map[string]bool{}
		var b strings.Builder
		for _, id := range strings.Split(argv[5], ",") {
			if st, ok := w.look(id); ok {
				w.sameRound[id] = IsTerminal(st)
				b.WriteString(id + "|" + st + "|None|n1|2026-11-30T00:00:00|2026-11-30T00:00:01|NONE|j" + id + "\n")
			}
		}
		return []byte(b.String()), nil, nil
	case argv[0] == "scontrol" && len(argv) == 5:
		id := argv[4]
		var st string
		var ok bool
		if w.sameRound[id] {
			delete(w.sameRound, id)
			seq := w.states[id]
			st, ok = seq[min(w.seen[id]-1, len(seq)-1)], true
		} else {
			w.polls++
			if w.fail[w.polls-1] {
				return nil, timeout, &ExitError{Prog: "scontrol", Code: 1}
			}
			st, ok = w.look(id)
		}
		if !ok {
			return nil, []byte(invalidJob), &ExitError{Prog: "scontrol", Code: 1}
		}
		return []byte("JobId=" + id + " JobName=j" + id + " JobState=" + st +
			" Reason=None ExitCode=0:0 StartTime=2026-11-30T00:00:01 EndTime=2026-11-30T00:00:02 NodeList=n1\n"), nil, nil
	}
	w.t.Errorf("unexpected %q", argv)
	return nil, nil, &ExitError{Prog: argv[0], Code: 2}
}

func TestWaitEndsOnUnknown(t *testing.T) {
	f := &waitCluster{t: t, states: map[string][]string{"1": {"RUNNING", "COMPLETED"}}}
	c := &Client{R: f, JobCompLoc: filepath.Join(t.TempDir(), "none.txt")}
	// 2 is unknown to scontrol, jobcomp has no log, and sacct is not
	// there: replace the runner for sacct only.
	c.R = sacctDisabled{f}
	got, err := c.Wait(context.Background(), []string{"1", "2"}, time.Millisecond, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got["1"].State != "COMPLETED" || got["2"].State != StateUnknown {
		t.Errorf("Wait = %+v", got)
	}
}

type sacctDisabled struct{ Runner }

func (s sacctDisabled) Run(ctx context.Context, argv, env []string, dir string) ([]byte, []byte, error) {
	if argv[0] == "sacct" {
		return nil, []byte("Slurm accounting storage is disabled\n"), &ExitError{Prog: "sacct", Code: 1}
	}
	return s.Runner.Run(ctx, argv, env, dir)
}

func TestWaitContextCancel(t *testing.T) {
	f := &waitCluster{t: t, states: map[string][]string{"1": {"RUNNING"}}}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	start := time.Now()
	got, err := (&Client{R: f}).Wait(ctx, []string{"1"}, 5*time.Millisecond, nil)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Wait = %v, want the context's deadline", err)
	}
	if !strings.Contains(err.Error(), "wait for jobs 1") {
		t.Errorf("error %q does not name the job", err)
	}
	if got["1"].State != "RUNNING" {
		t.Errorf("last state %+v, want RUNNING", got["1"])
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Wait took %v to notice the cancel", d)
	}
}

func TestWaitRetriesThenGivesUp(t *testing.T) {
	// Two failed polls in a row are a controller restart: Wait goes on.
	f := &waitCluster{t: t, states: map[string][]string{"1": {"RUNNING", "RUNNING", "RUNNING", "COMPLETED"}},
		fail: map[int]bool{1: true, 2: true}}
	got, err := (&Client{R: f}).Wait(context.Background(), []string{"1"}, time.Millisecond, nil)
	if err != nil || got["1"].State != "COMPLETED" {
		t.Errorf("Wait through two failures = %+v, %v", got, err)
	}
	// Three in a row end it, with the controller's message.
	f = &waitCluster{t: t, states: map[string][]string{"1": {"RUNNING"}},
		fail: map[int]bool{1: true, 2: true, 3: true}}
	got, err = (&Client{R: f}).Wait(context.Background(), []string{"1"}, time.Millisecond, nil)
	if err == nil || !strings.Contains(err.Error(), "Socket timed out") || got["1"].State != "RUNNING" {
		t.Errorf("Wait through three failures = %+v, %v", got, err)
	}
}

// TestArrayJobSummedUp: the id sbatch printed for a job array names every
// task; the archive's job is done when all are, failed if one failed.
func TestArrayJobSummedUp(t *testing.T) {
	out, err := os.ReadFile("testdata/lab-scontrol-array.txt")
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeRunner{RunFn: func(argv, env []string, dir string) (string, string, error) {
		if strings.Join(argv, " ") == "scontrol show job -o 14" {
			return string(out), "", nil
		}
		return "", "", fmt.Errorf("unexpected %q", argv)
	}}
	c := &Client{R: f}
	jobs, err := c.Jobs(context.Background(), []string{"14"})
	if err != nil {
		t.Fatal(err)
	}
	j := jobs["14"]
	if j.State != "FAILED" || j.ExitCode != "1:0" || j.Reason != "NonZeroExitCode" || j.NodeList != "n[1-2]" || j.Start.IsZero() || j.End.IsZero() {
		t.Errorf("array job: %+v", j)
	}
	// One task asked by its array id.
	f.RunFn = func(argv, env []string, dir string) (string, string, error) { return string(out), "", nil }
	jobs, _ = c.Jobs(context.Background(), []string{"14_0"})
	if jobs["14_0"].State != "COMPLETED" {
		t.Errorf("task 0: %+v", jobs["14_0"])
	}
}

// TestJobsRequeuedAndNeverRunning: two outcomes captured from the test
// cluster. A job requeued after its node failed ran again (Restarts=1);
// scontrol never shows NODE_FAIL for it, only the count. A job whose
// afterok dependency failed pends forever: settled, for anyone waiting.
func TestJobsRequeuedAndNeverRunning(t *testing.T) {
	f := replay(t, map[string]reply{
		"scontrol show job -o 3": {stdout: testdata(t, "lab-scontrol-requeued.txt")},
		"scontrol show job -o 5": {stdout: testdata(t, "lab-scontrol-dependency-never.txt")},
	})
	c := &Client{R: f}
	got, err := c.Jobs(context.Background(), []string{"3"})
	if err != nil {
		t.Fatal(err)
	}
	if j := got["3"]; j.State != "COMPLETED" || j.Restarts != 1 || j.StdOut != "/tmp/rq-3.out" {
		t.Errorf("requeued job: %+v", j)
	}
	got, err = c.Jobs(context.Background(), []string{"5"})
	if err != nil {
		t.Fatal(err)
	}
	j := got["5"]
	if j.State != "PENDING" || j.Reason != ReasonDependencyNeverSatisfied || j.Terminal() || !j.Settled() || !j.NeverRuns() {
		t.Errorf("job pending on a failed dependency: %+v, terminal %v settled %v", j, j.Terminal(), j.Settled())
	}
	// Wait returns on it rather than polling forever.
	done := make(chan error, 1)
	go func() {
		_, err := c.Wait(context.Background(), []string{"5"}, time.Millisecond, nil)
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Error(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Wait is still polling a job whose dependency never will be satisfied")
	}
}
