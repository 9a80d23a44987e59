package slurm

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// cluster is what the shared suite needs of a Slurm: the fake one in
// client_test.go, a real one in integration_test.go (restic's backend test
// suite does the same for its storage backends).
type cluster struct {
	// New returns a client talking to the cluster through r (nil: the
	// cluster's own runner); the suite wraps runners to simulate a
	// controller that forgot finished jobs.
	New  func(r Runner) *Client
	Dir  string        // where job scripts are written and sbatch runs
	Args []string      // sbatch options every job needs here (output files…)
	Poll time.Duration // Wait's interval
	// Timeout bounds each subtest.
	Timeout time.Duration
}

func (cl cluster) script(t *testing.T, name, body string) string {
	t.Helper()
	if err := os.WriteFile(filepath.Join(cl.Dir, name), []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return name
}

func (cl cluster) submit(t *testing.T, c *Client, name, body string, args ...string) string {
	t.Helper()
	script := cl.script(t, name+".sh", body)
	id, err := c.Submit(context.Background(), script, SubmitOptions{
		Dir:  cl.Dir,
		Args: append(append([]string{"-J", name}, cl.Args...), args...),
	})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// runSuite checks the client's contract against a cluster.
func runSuite(t *testing.T, cl cluster) {
	ctx := func(t *testing.T) context.Context {
		ctx, cancel := context.WithTimeout(context.Background(), cl.Timeout)
		t.Cleanup(cancel)
		return ctx
	}

	// ok, failed, cancelled: the three ends a benchmark job has, then the
	// same states asked again after the end, one at a time and together.
	var ok, failed, cancelled string
	t.Run("Lifecycle", func(t *testing.T) {
		c := cl.New(nil)
		ok = cl.submit(t, c, "ok", "true")
		failed = cl.submit(t, c, "failer", "exit 3")
		cancelled = cl.submit(t, c, "sleeper", "sleep 300")
		if ok == failed || failed == cancelled {
			t.Fatalf("job ids not distinct: %s %s %s", ok, failed, cancelled)
		}
		ctx := ctx(t)
		// Cancel the sleeper once it runs: a running job's cancel is the
		// path that matters (it kills a benchmark).
		for {
			j, err := c.Jobs(ctx, []string{cancelled})
			if err != nil {
				t.Fatal(err)
			}
			if j[cancelled].State == "RUNNING" {
				break
			}
			if j[cancelled].Terminal() {
				t.Fatalf("sleeper ended on its own: %+v", j[cancelled])
			}
			select {
			case <-ctx.Done():
				t.Fatalf("sleeper never ran: %+v", j[cancelled])
			case <-time.After(cl.Poll):
			}
		}
		if err := c.Cancel(ctx, []string{cancelled}); err != nil {
			t.Fatal(err)
		}
		seen := map[string][]string{}
		got, err := c.Wait(ctx, []string{ok, failed, cancelled}, cl.Poll, func(j JobInfo) {
			seen[j.ID] = append(seen[j.ID], j.State)
		})
		if err != nil {
			t.Fatal(err)
		}
		checkEnd(t, got[ok], ok, "ok", "COMPLETED", "0:0")
		checkEnd(t, got[failed], failed, "failer", "FAILED", "3:0")
		checkEnd(t, got[cancelled], cancelled, "sleeper", "CANCELLED", "")
		if r := got[failed].Reason; r != "NonZeroExitCode" {
			t.Errorf("failed job's Reason = %q, want NonZeroExitCode", r)
		}
		for _, id := range []string{ok, failed, cancelled} {
			states := seen[id]
			if len(states) == 0 || states[len(states)-1] != got[id].State {
				t.Errorf("job %s: onChange saw %q, Wait returned %s", id, states, got[id].State)
			}
		}

		// Still answered after the end, by the controller itself.
		for _, ids := range [][]string{{ok}, {failed}, {ok, failed, cancelled}} {
			again, err := c.Jobs(ctx, ids)
			if err != nil {
				t.Fatal(err)
			}
			for _, id := range ids {
				a, w := again[id], got[id]
				if a.Source != SourceScontrol || a.State != w.State || a.ExitCode != w.ExitCode || a.Name != w.Name {
					t.Errorf("Jobs(%q)[%s] = %+v after the end, want %s %s %s from scontrol", ids, id, a, w.Name, w.State, w.ExitCode)
				}
			}
		}
	})
	if ok == "" {
		return
	}

	// A controller past MinJobAge: scontrol and squeue no longer know the
	// jobs, the jobcomp log (found through `scontrol show config`) does.
	t.Run("AgedOutToJobComp", func(t *testing.T) {
		c := cl.New(forgetful{cl.New(nil).runner()})
		got, err := c.Jobs(ctx(t), []string{ok, failed, cancelled})
		if err != nil {
			t.Fatal(err)
		}
		checkEnd(t, got[ok], ok, "ok", "COMPLETED", "0:0")
		checkEnd(t, got[failed], failed, "failer", "FAILED", "3:0")
		checkEnd(t, got[cancelled], cancelled, "sleeper", "CANCELLED", "")
		for id, j := range got {
			if j.Source != SourceJobComp {
				t.Errorf("job %s came from %q, want jobcomp", id, j.Source)
			}
		}
	})

	t.Run("UnknownJob", func(t *testing.T) {
		c := cl.New(nil)
		const never = "987654"
		got, err := c.Jobs(ctx(t), []string{never})
		if err != nil {
			t.Fatal(err)
		}
		j, there := got[never]
		if !there || j.State != StateUnknown || j.ID != never {
			t.Fatalf("Jobs(%s) = %+v, want it reported as %s", never, got, StateUnknown)
		}
		for _, want := range []string{"MinJobAge", "jobcomp: not in", "sacct: Slurm accounting storage is disabled"} {
			if !strings.Contains(j.Reason, want) {
				t.Errorf("Reason %q does not say %q", j.Reason, want)
			}
		}
		// Wait must not wait for it forever.
		if _, err := c.Wait(ctx(t), []string{never}, cl.Poll, nil); err != nil {
			t.Errorf("Wait for an unknown job: %v", err)
		}
	})

	t.Run("RejectedSubmission", func(t *testing.T) {
		c := cl.New(nil)
		script := cl.script(t, "rejected.sh", "true")
		id, err := c.Submit(ctx(t), script, SubmitOptions{Dir: cl.Dir, Args: append(append([]string{}, cl.Args...), "--time=bogus")})
		if err == nil {
			t.Fatalf("sbatch --time=bogus gave job %s", id)
		}
		for _, want := range []string{"submit rejected.sh", "sbatch: error: Invalid --time specification"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not say %q", err, want)
			}
		}
	})

	t.Run("CancelEndedOrUnknown", func(t *testing.T) {
		c := cl.New(nil)
		if err := c.Cancel(ctx(t), []string{ok, failed}); err != nil {
			t.Errorf("cancelling ended jobs: %v", err)
		}
		err := c.Cancel(ctx(t), []string{ok, "987654"})
		if err == nil || !strings.Contains(err.Error(), "job 987654: Invalid job id specified") {
			t.Errorf("cancelling an unknown job: %v", err)
		}
	})

	t.Run("Nodes", func(t *testing.T) {
		nodes, err := cl.New(nil).Nodes(ctx(t))
		if err != nil {
			t.Fatal(err)
		}
		if len(nodes) == 0 {
			t.Fatal("no nodes")
		}
		for _, n := range nodes {
			if n.Name == "" || n.CPUs < 1 || n.State == "" || len(n.Partitions) == 0 {
				t.Errorf("node %+v", n)
			}
		}
	})
}

func checkEnd(t *testing.T, j JobInfo, id, name, state, exit string) {
	t.Helper()
	if j.ID != id || j.Name != name || j.State != state || (exit != "" && j.ExitCode != exit) {
		t.Errorf("job %s = %+v, want %s %s exit %s", id, j, name, state, exit)
	}
	if !j.Terminal() {
		t.Errorf("job %s: %s is not terminal", id, j.State)
	}
	if j.Start.IsZero() || j.End.Before(j.Start) || j.NodeList == "" {
		t.Errorf("job %s: start %v end %v nodes %q", id, j.Start, j.End, j.NodeList)
	}
}

// forgetful is a controller past MinJobAge: it has forgotten every job.
type forgetful struct{ Runner }

func (f forgetful) Run(ctx context.Context, argv, env []string, dir string) ([]byte, []byte, error) {
	switch {
	case len(argv) > 2 && argv[0] == "scontrol" && argv[1] == "show" && argv[2] == "job":
		return nil, []byte("slurm_load_jobs error: Invalid job id specified\n"), &ExitError{Prog: argv[0], Code: 1}
	case argv[0] == "squeue":
		return nil, nil, nil
	}
	return f.Runner.Run(ctx, argv, env, dir)
}
