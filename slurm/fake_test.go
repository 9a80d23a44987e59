package slurm

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeRunner is a Runner whose behaviour is a function field, as restic's
// backend mock; it records every call.
type fakeRunner struct {
	RunFn func(argv, env []string, dir string) (stdout, stderr string, err error)

	mu    sync.Mutex
	calls []call
}

type call struct {
	Argv []string
	Env  []string
	Dir  string
}

func (f *fakeRunner) Run(ctx context.Context, argv, env []string, dir string) ([]byte, []byte, error) {
	f.mu.Lock()
	f.calls = append(f.calls, call{append([]string(nil), argv...), env, dir})
	f.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return nil, nil, fmt.Errorf("run %s: %w", argv[0], err)
	}
	stdout, stderr, err := f.RunFn(argv, env, dir)
	return []byte(stdout), []byte(stderr), err
}

// commands lists the calls' argv joined by spaces, for comparing in tests.
func (f *fakeRunner) commands() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, c := range f.calls {
		out = append(out, strings.Join(c.Argv, " "))
	}
	return out
}

// reply is a captured answer to one command.
type reply struct {
	stdout, stderr string
	exit           int // non-zero: the command fails with *ExitError
}

// replay answers each command (argv joined by spaces) from a table and fails
// the test on any command not in it.
func replay(t *testing.T, table map[string]reply) *fakeRunner {
	t.Helper()
	return &fakeRunner{RunFn: func(argv, env []string, dir string) (string, string, error) {
		cmd := strings.Join(argv, " ")
		r, ok := table[cmd]
		if !ok {
			t.Errorf("unexpected command %q", cmd)
			return "", "", &ExitError{Prog: argv[0], Code: 127}
		}
		if r.exit != 0 {
			return r.stdout, r.stderr, &ExitError{Prog: argv[0], Code: r.exit}
		}
		return r.stdout, r.stderr, nil
	}}
}

// testdata reads a file of testdata/.
func testdata(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// line returns the line of a captured multi-job file that starts with prefix.
func line(t testing.TB, file, prefix string) string {
	t.Helper()
	for _, l := range strings.Split(testdata(t, file), "\n") {
		if strings.HasPrefix(l, prefix) {
			return l + "\n"
		}
	}
	t.Fatalf("%s: no line starting with %q", file, prefix)
	return ""
}

// fakeCluster is a Runner that behaves like the lab's Slurm: it keeps jobs,
// moves them PENDING -> RUNNING -> done as commands are run (each command is
// one tick of its clock), and answers sbatch, squeue, scontrol, scancel and
// sacct in the formats captured in testdata/. The shared suite runs against
// it and against a real cluster.
type fakeCluster struct {
	t       *testing.T
	jobComp string // the jobcomp/filetxt log it writes

	mu    sync.Mutex
	tick  int
	next  int
	jobs  map[string]*fakeJob
	order []string
}

type fakeJob struct {
	id, name, script, dir string
	exit                  int  // the script's exit status
	sleeps                bool // runs until cancelled
	state, reason, code   string
	submit, start, end    int // ticks; -1 not yet
	nodes                 string
}

var fakeEpoch = time.Date(2026, 11, 30, 0, 24, 21, 0, time.Local)

func newFakeCluster(t *testing.T) *fakeCluster {
	return &fakeCluster{t: t, jobComp: filepath.Join(t.TempDir(), "jobcomp.txt"),
		next: 1, jobs: make(map[string]*fakeJob)}
}

func (c *fakeCluster) stamp(tick int) string {
	if tick < 0 {
		return "Unknown"
	}
	return fakeEpoch.Add(time.Duration(tick) * time.Second).Format("2006-01-02T15:04:05")
}

func (c *fakeCluster) Run(ctx context.Context, argv, env []string, dir string) ([]byte, []byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, fmt.Errorf("run %s: %w", argv[0], err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.tick++
	c.advance()
	stdout, stderr, code := c.answer(argv, dir)
	if code != 0 {
		return []byte(stdout), []byte(stderr), &ExitError{Prog: argv[0], Code: code}
	}
	return []byte(stdout), []byte(stderr), nil
}

// advance moves every job one step: a job starts one tick after it was
// submitted and ends one tick after it started.
func (c *fakeCluster) advance() {
	for _, id := range c.order {
		j := c.jobs[id]
		switch {
		case j.state == "PENDING" && c.tick > j.submit+1:
			j.state, j.reason, j.start, j.nodes = "RUNNING", "None", c.tick, "n1"
		case j.state == "RUNNING" && !j.sleeps && c.tick > j.start+1:
			if j.exit == 0 {
				c.finish(j, "COMPLETED", "None", "0:0")
			} else {
				c.finish(j, "FAILED", "NonZeroExitCode", fmt.Sprintf("%d:0", j.exit))
			}
		}
	}
}

func (c *fakeCluster) finish(j *fakeJob, state, reason, code string) {
	j.state, j.reason, j.code, j.end = state, reason, code, c.tick
	if j.start < 0 {
		j.start = c.tick // Slurm sets StartTime=EndTime for a job cancelled while pending
	}
	// jobcomp/filetxt writes ExitCode=0:0 for a cancelled job, as the lab's
	// log shows.
	if state == "CANCELLED" {
		code = "0:0"
	}
	rec := fmt.Sprintf("JobId=%s UserId=root(0) GroupId=root(0) Name=%s JobState=%s Partition=debug TimeLimit=UNLIMITED StartTime=%s EndTime=%s NodeList=%s NodeCnt=1 ProcCnt=1 WorkDir=%s ReservationName= Tres=cpu=1,mem=12052M,node=1,billing=1 Account= QOS= WcKey= Cluster=unknown SubmitTime=%s EligibleTime=%s DerivedExitCode=0:0 ExitCode=%s \n",
		j.id, j.name, state, c.stamp(j.start), c.stamp(j.end), orNull(j.nodes, ""), j.dir, c.stamp(j.submit), c.stamp(j.submit), code)
	f, err := os.OpenFile(c.jobComp, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		c.t.Error(err)
		return
	}
	defer f.Close()
	if _, err := f.WriteString(rec); err != nil {
		c.t.Error(err)
	}
}

func orNull(s, null string) string {
	if s == "" {
		return null
	}
	return s
}

var exitRE = regexp.MustCompile(`(?m)^\s*exit (\d+)`)

func (c *fakeCluster) answer(argv []string, dir string) (stdout, stderr string, exit int) {
	switch {
	case argv[0] == "sbatch":
		return c.sbatch(argv[1:], dir)
	case argv[0] == "squeue":
		return c.squeue(argv[1:])
	case len(argv) == 5 && argv[0] == "scontrol" && argv[1] == "show" && argv[2] == "job" && argv[3] == "-o":
		j, ok := c.jobs[argv[4]]
		if !ok {
			return "", "slurm_load_jobs error: Invalid job id specified\n", 1
		}
		return c.scontrolLine(j), "", 0
	case strings.Join(argv, " ") == "scontrol show config":
		return fmt.Sprintf("Configuration data as of %s\nJobCompLoc              = %s\nJobCompType             = jobcomp/filetxt\nMinJobAge               = 600 sec\n", c.stamp(c.tick), c.jobComp), "", 0
	case strings.Join(argv, " ") == "scontrol show node -o":
		return testdata(c.t, "lab-scontrol-show-node-oneline.txt"), "", 0
	case argv[0] == "scancel" && len(argv) > 2 && argv[1] == "-v":
		var msgs []string
		for _, id := range argv[2:] {
			msgs = append(msgs, "scancel: Terminating job "+id)
		}
		for _, id := range argv[2:] {
			j, ok := c.jobs[id]
			switch {
			case !ok:
				msgs = append(msgs, "scancel: error: Kill job error on job id "+id+": Invalid job id specified")
			case IsTerminal(j.state):
				msgs = append(msgs, "scancel: error: Kill job error on job id "+id+": Job/step already completing or completed")
			default:
				c.finish(j, "CANCELLED", orNull(j.reason, "None"), "0:15")
			}
		}
		return "", strings.Join(msgs, "\n") + "\n", 0
	case argv[0] == "sacct":
		return "", "Slurm accounting storage is disabled\n", 1
	}
	c.t.Errorf("fake cluster: unexpected command %q", argv)
	return "", argv[0] + ": not in the fake\n", 127
}

func (c *fakeCluster) sbatch(args []string, dir string) (string, string, int) {
	if len(args) == 0 || args[0] != "--parsable" {
		c.t.Errorf("sbatch without --parsable first: %q", args)
	}
	name := ""
	for i := 1; i < len(args)-1; i++ {
		switch a := args[i]; {
		case a == "-J" || a == "--job-name":
			i++
			name = args[i]
		case strings.HasPrefix(a, "--job-name="):
			name = strings.TrimPrefix(a, "--job-name=")
		case strings.HasPrefix(a, "--time=") && strings.Trim(a[len("--time="):], "0123456789:-") != "":
			return "", "sbatch: error: Invalid --time specification\n", 255
		case a == "-o" || a == "--output" || a == "-N" || a == "-n":
			i++
		}
	}
	script := args[len(args)-1]
	body, err := os.ReadFile(filepath.Join(dir, script))
	if err != nil {
		return "", "sbatch: error: Unable to open file " + script + "\n", 1
	}
	if name == "" {
		name = filepath.Base(script)
	}
	id := strconv.Itoa(c.next)
	c.next++
	j := &fakeJob{id: id, name: name, script: script, dir: dir, state: "PENDING", reason: "None",
		code: "0:0", submit: c.tick, start: -1, end: -1}
	if m := exitRE.FindSubmatch(body); m != nil {
		j.exit, _ = strconv.Atoi(string(m[1]))
	}
	j.sleeps = strings.Contains(string(body), "sleep")
	c.jobs[id] = j
	c.order = append(c.order, id)
	return id + "\n", "", 0
}

func (c *fakeCluster) squeue(args []string) (string, string, int) {
	want := map[string]bool{}
	format := ""
	for i := 0; i < len(args); i++ {
		switch args[i] {
		case "-j":
			i++
			for _, id := range strings.Split(args[i], ",") {
				want[id] = true
			}
		case "-o":
			i++
			format = args[i]
		}
	}
	if format != squeueFormat {
		c.t.Errorf("fake squeue knows only format %q, got %q", squeueFormat, format)
	}
	var b strings.Builder
	for _, id := range c.order {
		if j := c.jobs[id]; want[id] {
			end := "NONE"
			if IsTerminal(j.state) {
				end = c.stamp(j.end)
			}
			fmt.Fprintf(&b, "%s|%s|%s|%s|%s|%s|%s|%s\n", j.id, j.state, j.reason, j.nodes,
				c.stamp(j.submit), c.stamp(j.start), end, j.name)
		}
	}
	return b.String(), "", 0
}

// scontrolLine writes a job as `scontrol show job -o` does (the keys and
// their order of testdata/scontrol-show-job-oneline.txt).
func (c *fakeCluster) scontrolLine(j *fakeJob) string {
	return fmt.Sprintf("JobId=%s JobName=%s UserId=root(0) GroupId=root(0) MCS_label=N/A Priority=4294901757 Nice=0 Account=(null) QOS=(null) JobState=%s Reason=%s Dependency=(null) Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=%s RunTime=00:00:01 TimeLimit=UNLIMITED TimeMin=N/A SubmitTime=%s EligibleTime=%s AccrueTime=%s StartTime=%s EndTime=%s Deadline=N/A SuspendTime=None SecsPreSuspend=0 LastSchedEval=%s Scheduler=Main Partition=debug AllocNode:Sid=localhost:3743 ReqNodeList=(null) ExcNodeList=(null) NodeList=%s BatchHost=n1 NumNodes=1 NumCPUs=1 NumTasks=1 CPUs/Task=1 ReqB:S:C:T=0:0:*:* TRES=cpu=1,node=1,billing=1 Socks/Node=* NtasksPerN:B:S:C=0:0:*:* CoreSpec=* MinCPUsNode=1 MinMemoryNode=0 MinTmpDiskNode=0 Features=(null) DelayBoot=00:00:00 OverSubscribe=OK Contiguous=0 Licenses=(null) Network=(null) Command=%s WorkDir=%s StdErr=%s/slurm-%s.out StdIn=/dev/null StdOut=%s/slurm-%s.out Power= \n",
		j.id, j.name, j.state, j.reason, j.code, c.stamp(j.submit), c.stamp(j.submit), c.stamp(j.submit),
		c.stamp(j.start), c.stamp(j.end), c.stamp(j.submit), j.nodes, filepath.Join(j.dir, j.script),
		j.dir, j.dir, j.id, j.dir, j.id)
}
