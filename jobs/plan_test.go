package jobs

import (
	"strings"
	"testing"
	"time"

	"github.com/sbench/sbench/results"
	"github.com/sbench/sbench/store"
)

// A job's output as the scripts write it: attempt 0 ran step 0, then its
// node failed during step 1; attempt 1 ran step 0, step 1 whose srun was
// refused, and the pairs of step 2, one of which timed out.
const jobOutput = `sbench-step: 0 begin attempt=0 at=1764590000
/sbench-runs/c/41.0.lat.json
sbench-step: 0 end attempt=0 at=1764590010 rc=0
sbench-step: 1 begin attempt=0 at=1764590011
sbench-step: 0 begin attempt=1 at=1764590200
/sbench-runs/c/41.r1.0.lat.json
sbench-step: 0 end attempt=1 at=1764590210 rc=0
sbench-step: 1 begin attempt=1 at=1764590211
srun: unrecognized option '--bogus'
Try "srun --help" for more information
sbench-step: 1 end attempt=1 at=1764590212 rc=1
sbench-step: 2-node-1-node-2 begin attempt=1 at=1764590213
sbench-step: 2-node-1-node-2 end attempt=1 at=1764590214 rc=0
sbench-step: 2-node-2-node-1 begin attempt=1 at=1764590215
srun: Job step aborted: Waiting up to 32 seconds for job step to finish.
slurmstepd: error: *** STEP 41.5 ON node-2 CANCELLED AT 2025-12-01T12:00:00 DUE TO TIME LIMIT ***
sbench-step: 2-node-2-node-1 end attempt=1 at=1764590300 rc=124
`

func TestOutcomesFromStepMarkers(t *testing.T) {
	outs := ReadOutcomes(strings.NewReader(jobOutput))
	if o := outs["0"]; o == nil || o.Attempt != 1 || !o.Ended || o.RC != 0 {
		t.Errorf("step 0: %+v, want attempt 1's ok end", o)
	}
	if o := outs["1"]; o == nil || o.RC != 1 || !strings.Contains(o.Tail, "unrecognized option") || strings.Contains(o.Tail, "41.0.lat") {
		t.Errorf("step 1: %+v, want attempt 1's failure with srun's words only", o)
	}
	if o := outs["2-node-2-node-1"]; o == nil || o.RC != 124 || o.End.Sub(o.Begin) != 85*time.Second {
		t.Errorf("step 2 n2->n1: %+v", o)
	}
}

func TestMissingRuns(t *testing.T) {
	j := store.Job{SlurmID: "41", Campaign: "c", Name: "c-steps", State: "FAILED", ExitCode: "1:0", Reason: "NonZeroExitCode",
		NodeList: "node-[1-2]", Restarts: 1, Start: time.Unix(1764590000, 0),
		Plan: []store.PlannedStep{
			{Step: "0", Benchmark: "lat", Kind: "native", Kernel: "latency", Variant: "v", Ranks: 2, Nodes: 2},
			{Step: "1", Benchmark: "broken", Kind: "tool", Kernel: "exec", Variant: "v", Ranks: 2, Nodes: 2,
				Params: map[string]string{"repeat": "0"}, Labels: map[string]string{"fabric": "tcp"}},
			{Step: "2", Pairs: "all", Benchmark: "pairs", Kind: "native", Kernel: "bw", Variant: "v", Ranks: 2, Nodes: 2, Limit: time.Minute},
			{Step: "3", Benchmark: "never", Kind: "native", Kernel: "latency", Variant: "v", Ranks: 2, Nodes: 2},
		}}
	have := []store.Run{{Step: "0", Restart: 0}, {Step: "0", Restart: 1}, {Step: "2-node-1-node-2", Restart: 1}}
	got := MissingRuns(j, have, Outcomes{"": ReadOutcomes(strings.NewReader(jobOutput))}, nil)
	byStep := map[string]*results.Bundle{}
	for _, b := range got {
		byStep[strings.TrimPrefix(store.LaunchName("41", "", b.Job.Step, b.Job.Restart), "41.")] = b
		if err := b.Validate(); err != nil {
			t.Errorf("step %s: %v", b.Job.Step, err)
		}
		if b.Status != results.StatusFailed || b.Campaign != "c" || b.Job.ID != "41" {
			t.Errorf("step %s: %+v", b.Job.Step, b)
		}
	}
	// Attempt 0's step 1 is a launch of its own: its node failed under it.
	if len(got) != 4 {
		t.Fatalf("%d runs for missing steps (%v), want 1 of attempt 0, and 1, 2-node-2-node-1 and 3 of attempt 1", len(got), byStep)
	}
	for step, want := range map[string][]string{
		"1":                  {"started at", "did not end", "Slurm requeued the job after attempt 0"},
		"1 r1":               {"launcher exited 1 before sbench-runner wrote a bundle", "unrecognized option '--bogus'", "requeued 1 time"},
		"2-node-2-node-1 r1": {"timed out", "limit of 1m0s", "rc=124", "DUE TO TIME LIMIT"},
		"3 r1":               {"never started", "FAILED 1:0, NonZeroExitCode"},
	} {
		b := byStep[step]
		if b == nil {
			t.Errorf("no run for step %s", step)
			continue
		}
		for _, w := range want {
			if !strings.Contains(b.Error, w) {
				t.Errorf("step %s: error %q lacks %q", step, b.Error, w)
			}
		}
	}
	if b := byStep["2-node-2-node-1 r1"]; b.Labels["pair"] != "node-2->node-1" || b.Job.Restart != 1 {
		t.Errorf("pair run labels %v restart %d", b.Labels, b.Job.Restart)
	}
	if b := byStep["1 r1"]; b.Params["repeat"] != "0" || b.Labels["fabric"] != "tcp" || b.Raw == "" {
		t.Errorf("step 1 run: params %v labels %v raw %q", b.Params, b.Labels, b.Raw)
	}
	// A job that never started: every step, pairs without nodes as one.
	never := j
	never.State, never.Reason, never.NodeList, never.Start = "PENDING", "DependencyNeverSatisfied", "", time.Time{}
	got = MissingRuns(never, nil, nil, nil)
	if len(got) != 4 || !strings.Contains(got[0].Error, "never ran: the job it waits for") {
		t.Errorf("never-started job: %d runs, first %q", len(got), got[0].Error)
	}
}

func TestOutputFile(t *testing.T) {
	j := store.Job{SlurmID: "41", Name: "c-steps"}
	for _, c := range []struct{ pattern, task, want string }{
		{"/r/%x-%j.out", "", "/r/c-steps-41.out"},
		{"/r/%x-%A_%a.out", "3", "/r/c-steps-41_3.out"},
		{"/r/%x-%j.out", "3", ""}, // a task's own job id is not known
		{"/r/100%%-%5j.out", "", "/r/100%-41.out"},
		{"/r/%N.out", "", ""},
	} {
		if got := outputFile(c.pattern, j, c.task); got != c.want {
			t.Errorf("outputFile(%q, task %q) = %q, want %q", c.pattern, c.task, got, c.want)
		}
	}
}
