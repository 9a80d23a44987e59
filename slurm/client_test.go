package slurm

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestFakeCluster runs the shared suite against the fake cluster; see
// TestRealCluster for the same suite against Slurm.
func TestFakeCluster(t *testing.T) {
	fc := newFakeCluster(t)
	runSuite(t, cluster{
		New: func(r Runner) *Client {
			if r == nil {
				r = fc
			}
			return &Client{R: r}
		},
		Dir:     t.TempDir(),
		Args:    []string{"--time=5"},
		Poll:    time.Millisecond,
		Timeout: 10 * time.Second,
	})
}

func TestSubmitParsable(t *testing.T) {
	tests := []struct {
		name           string
		stdout, stderr string
		want           string
	}{
		{"plain", "1234\n", "", "1234"},
		{"federation", "1234;cluster2\n", "", "1234"},
		{"warning on stderr", "77\n", "sbatch: warning: can't honor --ntasks-per-node set to 2\n", "77"},
		{"no newline", "5", "", "5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeRunner{RunFn: func(argv, env []string, dir string) (string, string, error) {
				return tt.stdout, tt.stderr, nil
			}}
			c := &Client{R: f, Env: []string{"SLURM_CONF=/lab/etc/slurm.conf"}}
			id, err := c.Submit(context.Background(), "job.sh", SubmitOptions{
				Dir:  "/work/jobs",
				Env:  []string{"SBENCH_TOKEN=s3cret"},
				Args: []string{"-J", "a name with spaces", "--nodes=2"},
			})
			if err != nil || id != tt.want {
				t.Fatalf("Submit = %q, %v; want %q", id, err, tt.want)
			}
			got := f.calls[0]
			wantArgv := []string{"sbatch", "--parsable", "-J", "a name with spaces", "--nodes=2", "job.sh"}
			if !reflect.DeepEqual(got.Argv, wantArgv) || got.Dir != "/work/jobs" {
				t.Errorf("ran %q in %q, want %q in /work/jobs", got.Argv, got.Dir, wantArgv)
			}
			// The job inherits sbatch's environment: ours plus the client's
			// and the submission's, those last.
			n := len(got.Env)
			if n < 3 || got.Env[n-2] != "SLURM_CONF=/lab/etc/slurm.conf" || got.Env[n-1] != "SBENCH_TOKEN=s3cret" || !hasPath(got.Env) {
				t.Errorf("environment %q lacks PATH or the extras at the end", got.Env)
			}
		})
	}
}

func hasPath(env []string) bool {
	for _, e := range env {
		if strings.HasPrefix(e, "PATH=") {
			return true
		}
	}
	return false
}

func TestSubmitInheritsEnvironmentWhenNoExtras(t *testing.T) {
	f := &fakeRunner{RunFn: func(argv, env []string, dir string) (string, string, error) {
		if env != nil {
			t.Errorf("env = %q, want nil (inherit)", env)
		}
		return "1\n", "", nil
	}}
	if _, err := (&Client{R: f}).Submit(context.Background(), "-odd.sh", SubmitOptions{}); err != nil {
		t.Fatal(err)
	}
	// A script named like an option must reach sbatch as a file.
	if got := f.calls[0].Argv; got[len(got)-1] != "./-odd.sh" {
		t.Errorf("argv %q", got)
	}
}

func TestSubmitErrors(t *testing.T) {
	tests := []struct {
		name   string
		script string
		r      reply
		want   []string
	}{
		{"rejected by the controller", "job.sh",
			reply{stderr: testdata(t, "lab-sbatch-too-many-nodes.stderr"), exit: 1},
			[]string{"submit job.sh: sbatch: error: Batch job submission failed: More processors requested than permitted", "status 1"}},
		{"bad option", "job.sh",
			reply{stderr: "sbatch: unrecognized option '--bogus'\nTry \"sbatch --help\" for more information\n", exit: 1},
			[]string{"sbatch: unrecognized option '--bogus'; Try \"sbatch --help\""}},
		{"missing script", "nope.sh",
			reply{stderr: "sbatch: error: Unable to open file nope.sh\n", exit: 1},
			[]string{"submit nope.sh: sbatch: error: Unable to open file nope.sh"}},
		{"not parsable", "job.sh",
			reply{stdout: "Submitted batch job 12\n"},
			[]string{`sbatch --parsable printed "Submitted batch job 12", not a job id`}},
		{"empty output", "job.sh", reply{}, []string{`printed "", not a job id`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &Client{R: replay(t, map[string]reply{"sbatch --parsable " + tt.script: tt.r})}
			id, err := c.Submit(context.Background(), tt.script, SubmitOptions{})
			if err == nil {
				t.Fatalf("Submit = %q, want an error", id)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
	if _, err := (&Client{R: replay(t, nil)}).Submit(context.Background(), "", SubmitOptions{}); err == nil {
		t.Error("Submit without a script did not fail")
	}
}

func TestCancel(t *testing.T) {
	c := &Client{R: replay(t, map[string]reply{
		"scancel -v 2 999 4": {stderr: testdata(t, "lab-scancel-v.stderr")},
		"scancel -v 2 4": {stderr: "scancel: Terminating job 2\nscancel: Terminating job 4\n" +
			"scancel: error: Kill job error on job id 2: Job/step already completing or completed\n"},
		"scancel -v 5": {stderr: "scancel: error: Unable to contact slurm controller (connect failure)\n", exit: 1},
	})}
	err := c.Cancel(context.Background(), []string{"2", "999", "4", "2"})
	if err == nil || err.Error() != "cancel 2,999,4: job 999: Invalid job id specified" {
		t.Errorf("Cancel(2, 999, 4) = %v", err)
	}
	if err := c.Cancel(context.Background(), []string{"2", "4"}); err != nil {
		t.Errorf("cancelling ended jobs: %v", err)
	}
	if err := c.Cancel(context.Background(), []string{"5"}); err == nil || !strings.Contains(err.Error(), "Unable to contact slurm controller") {
		t.Errorf("Cancel with the controller down = %v", err)
	}
	if err := c.Cancel(context.Background(), nil); err != nil {
		t.Errorf("Cancel(nil) = %v", err)
	}
}

// Ids reach argv: anything but a job id must be refused before a command runs.
func TestBadJobIDsRunNothing(t *testing.T) {
	f := &fakeRunner{RunFn: func(argv, env []string, dir string) (string, string, error) {
		t.Errorf("ran %q", argv)
		return "", "", nil
	}}
	c := &Client{R: f}
	for _, id := range []string{"", "-u", "--me", "1,2", "1 2", "12.batch", "x", "1_", "_1", "1+", "12;rm"} {
		if _, err := c.Jobs(context.Background(), []string{"1", id}); err == nil {
			t.Errorf("Jobs(%q) did not fail", id)
		}
		if err := c.Cancel(context.Background(), []string{id}); err == nil {
			t.Errorf("Cancel(%q) did not fail", id)
		}
		if _, err := c.Wait(context.Background(), []string{id}, time.Millisecond, nil); err == nil {
			t.Errorf("Wait(%q) did not fail", id)
		}
	}
	for _, id := range []string{"1", "1234_7", "1234+1", " 42 "} {
		if _, err := cleanIDs([]string{id}); err != nil {
			t.Errorf("cleanIDs(%q): %v", id, err)
		}
	}
}

func TestNodes(t *testing.T) {
	c := &Client{R: replay(t, map[string]reply{
		"scontrol show node -o": {stdout: testdata(t, "lab-scontrol-show-node-oneline.txt")},
	})}
	nodes, err := c.Nodes(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []Node{
		{Name: "n1", State: "IDLE", CPUs: 4, MemoryMB: 12052, Partitions: []string{"debug"}},
		{Name: "n2", State: "IDLE", CPUs: 4, MemoryMB: 12052, Partitions: []string{"debug"}},
	}
	if !reflect.DeepEqual(nodes, want) {
		t.Errorf("Nodes =\n%+v\nwant\n%+v", nodes, want)
	}
	for _, n := range nodes {
		if !n.Idle() {
			t.Errorf("%s not idle", n.Name)
		}
	}
	for _, s := range []string{"IDLE+DRAIN", "DOWN+NOT_RESPONDING", "MIXED", "ALLOCATED"} {
		if (Node{State: s}).Idle() {
			t.Errorf("%s counted as idle", s)
		}
	}

	down := &Client{R: replay(t, map[string]reply{
		"scontrol show node -o": {stderr: "slurm_load_node error: Unable to contact slurm controller (connect failure)\n", exit: 1},
	})}
	if _, err := down.Nodes(context.Background()); err == nil || !strings.Contains(err.Error(), "Unable to contact slurm controller") {
		t.Errorf("Nodes with the controller down = %v", err)
	}
}

func TestErrorText(t *testing.T) {
	tests := []struct{ stderr, stdout, want string }{
		{"sbatch: error: a\ninfo\nsbatch: error: b\n", "", "sbatch: error: a; sbatch: error: b"},
		{"just this\n", "", "just this"},
		{"", "on stdout\n", "on stdout"},
		{"", "", "no message"},
		{strings.Repeat("x", 600), "", strings.Repeat("x", 500) + "…"},
	}
	for _, tt := range tests {
		if got := errorText([]byte(tt.stderr), []byte(tt.stdout)); got != tt.want {
			t.Errorf("errorText(%q, %q) = %q, want %q", tt.stderr, tt.stdout, got, tt.want)
		}
	}
}

func TestExitErrorIsReturned(t *testing.T) {
	c := &Client{R: replay(t, map[string]reply{"sbatch --parsable j.sh": {exit: 255}})}
	_, err := c.Submit(context.Background(), "j.sh", SubmitOptions{})
	var ee *ExitError
	if !errors.As(err, &ee) || ee.Code != 255 {
		t.Errorf("error %v does not wrap the exit status", err)
	}
}
