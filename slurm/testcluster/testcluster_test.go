package testcluster

import (
	"context"
	"crypto/md5"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sbench/sbench/internal/testenv"
	"github.com/sbench/sbench/slurm"
)

// needLab skips when this machine cannot run a lab, unless
// SBENCH_REQUIRE_INTEGRATION=1 (CI), where that is a failure.
func needLab(t *testing.T) {
	t.Helper()
	err := Available()
	if err == nil && testing.Short() {
		t.Skip("starts a Slurm cluster; not in -short")
	}
	if err == nil {
		return
	}
	testenv.Require(t, err.Error())
}

// pids reads the lab's pid files: daemon -> pid.
func pids(t *testing.T, lab *Lab) map[string]int {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(lab.Dir, "run", "*.pid"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out[strings.TrimSuffix(filepath.Base(f), ".pid")] = pid
	}
	return out
}

// running reports whether pid is a live process (zombies waiting for a
// slow PID 1 to reap them are not).
func running(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] != 'Z'
	}
	return true
}

// TestLab is the lab's acceptance: it starts, runs a two-node step and a
// batch job, restarts in place, and stops leaving no process behind.
func TestLab(t *testing.T) {
	needLab(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir := searchableTempDir(t)
	start := time.Now()
	lab, err := Start(ctx, dir, 2)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("started in %v", time.Since(start).Round(time.Millisecond))
	var seen []map[string]int
	t.Cleanup(func() {
		// Whatever failed, leave nothing running.
		if err := lab.Stop(context.Background()); err != nil {
			t.Error(err)
		}
		for _, ps := range seen {
			for name, pid := range ps {
				if running(pid) {
					t.Errorf("%s (pid %d) still running after Stop", name, pid)
				}
			}
		}
	})
	first := pids(t, lab)
	seen = append(seen, first)
	for _, d := range []string{"munged", "slurmctld", "slurmd-n1", "slurmd-n2"} {
		if pid, ok := first[d]; !ok || !running(pid) {
			t.Fatalf("%s not running (pid files %v)", d, first)
		}
	}

	env := append(os.Environ(), lab.Env()...)
	srun := exec.CommandContext(ctx, "srun", "-N2", "-n4", "printenv", "SLURMD_NODENAME")
	srun.Env = env
	out, err := srun.CombinedOutput()
	if err != nil {
		t.Fatalf("srun: %v\n%s", err, out)
	}
	nodes := strings.Fields(string(out))
	sort.Strings(nodes)
	// Block distribution over 4-CPU nodes: 3 tasks on n1, 1 on n2.
	if got := strings.Join(nodes, " "); got != "n1 n1 n1 n2" {
		t.Errorf("srun -N2 -n4 ran on %q, want n1 n1 n1 n2", got)
	}

	c := &slurm.Client{Env: lab.Env()}
	jobs := filepath.Join(dir, "jobs")
	if err := os.MkdirAll(jobs, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(jobs, "hello.sh"), []byte("#!/bin/sh\necho hello from $SLURMD_NODENAME >hello.txt\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	id, err := c.Submit(ctx, "hello.sh", slurm.SubmitOptions{Dir: jobs, Args: []string{"-o", "/dev/null"}})
	if err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	got, err := c.Wait(ctx, []string{id}, 100*time.Millisecond, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("batch job %s: %s in %v", id, got[id].State, time.Since(start).Round(time.Millisecond))
	if got[id].State != "COMPLETED" {
		t.Errorf("job %+v", got[id])
	}
	if b, err := os.ReadFile(filepath.Join(jobs, "hello.txt")); err != nil || string(b) != "hello from n1\n" {
		t.Errorf("job output %q, %v", b, err)
	}
	// The jobcomp log is the durable record Jobs falls back on.
	if b, err := os.ReadFile(filepath.Join(dir, "log", "jobcomp.txt")); err != nil || !strings.Contains(string(b), "JobId="+id+" ") {
		t.Errorf("jobcomp log %q, %v", b, err)
	}

	// Re-running start.sh on a running lab replaces it.
	if _, err := Start(ctx, dir, 1); err != nil {
		t.Fatal(err)
	}
	second := pids(t, lab)
	seen = append(seen, second)
	for name, pid := range first {
		if running(pid) {
			t.Errorf("restart left the old %s (pid %d) running", name, pid)
		}
	}
	if _, ok := second["slurmd-n2"]; ok || len(second) != 3 {
		t.Errorf("after a restart with 1 node: %v", second)
	}
	n, err := c.Nodes(ctx)
	if err != nil || len(n) != 1 || !n[0].Idle() {
		t.Errorf("nodes after restart: %+v, %v", n, err)
	}
	// Job ids restart at 1, so the old jobcomp log must go with the old
	// state, or it would answer for new jobs with old results.
	if b, err := os.ReadFile(filepath.Join(dir, "log", "jobcomp.txt")); err == nil && strings.Contains(string(b), "JobId=") {
		t.Errorf("jobcomp log survived the restart: %q", b)
	}
}

func TestStopWithoutLab(t *testing.T) {
	// Nothing started: stop.sh is a no-op, for a LABDIR that does not
	// exist too.
	for _, dir := range []string{t.TempDir(), filepath.Join(t.TempDir(), "never")} {
		cmd := exec.Command("bash", "stop.sh", dir)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("stop.sh %s: %v\n%s", dir, err, out)
		}
	}
	cmd := exec.Command("bash", "stop.sh")
	if err := cmd.Run(); err == nil {
		t.Error("stop.sh without LABDIR succeeded")
	}
}

// A pid file naming somebody else's process (a reused pid) must not get it
// killed.
func TestStopSparesStrangers(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "run"), 0o755); err != nil {
		t.Fatal(err)
	}
	sleeper := exec.Command("sleep", "30")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sleeper.Process.Kill(); _ = sleeper.Wait() }()
	for _, f := range []string{"slurmctld.pid", "slurmd-n1.pid", "munged.pid"} {
		if err := os.WriteFile(filepath.Join(dir, "run", f), []byte(strconv.Itoa(sleeper.Process.Pid)+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := exec.Command("bash", "stop.sh", dir).CombinedOutput(); err != nil {
		t.Fatalf("stop.sh: %v\n%s", err, out)
	}
	if !running(sleeper.Process.Pid) {
		t.Error("stop.sh killed a process that was not the lab's")
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "run", "*.pid")); len(left) != 0 {
		t.Errorf("stale pid files left: %v", left)
	}
}

func TestStartUsage(t *testing.T) {
	for _, args := range [][]string{{}, {"/tmp/x", "0"}, {"/tmp/x", "two"}, {"/tmp/x", "65"}, {"a", "1", "b"}, {"/tmp/x", "2", "--bogus"}} {
		cmd := exec.Command("bash", append([]string{"start.sh"}, args...)...)
		out, err := cmd.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 {
			t.Errorf("start.sh %q: %v, want usage exit 2\n%s", args, err, out)
		}
	}
}

// needNetnsLab skips unless a netns lab may start here: under make
// test-slurm (which sets SLURM_CONF, and which developers run holding the
// machine's Slurm lock), with root and iproute2.
func needNetnsLab(t *testing.T) {
	t.Helper()
	needLab(t)
	if os.Getenv("SLURM_CONF") == "" {
		testenv.Require(t, "SLURM_CONF is not set: the netns lab tests run under make test-slurm")
	}
	if err := AvailableNetns(); err != nil {
		testenv.Require(t, err.Error())
	}
}

// netnsLab starts a netns lab of n nodes in a fresh directory and stops it
// when the test ends, checking that nothing it made is left behind.
func netnsLab(t *testing.T, ctx context.Context, n int) *Lab {
	t.Helper()
	needNetnsLab(t)
	dir := searchableTempDir(t)
	lab, err := Start(ctx, dir, n, WithNetns())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := lab.Stop(context.Background()); err != nil {
			t.Error(err)
		}
		checkNoNetwork(t, lab.Dir)
	})
	return lab
}

// searchableTempDir is a t.TempDir that munged accepts.
func searchableTempDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := Searchable(dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

// checkNoNetwork fails if a namespace, link or address of the netns lab
// in dir is still there.
func checkNoNetwork(t *testing.T, dir string) {
	t.Helper()
	tag := fmt.Sprintf("%x", md5.Sum([]byte(dir)))[:6]
	out, err := exec.Command("ip", "netns", "list").CombinedOutput()
	if err != nil {
		t.Fatalf("ip netns list: %v\n%s", err, out)
	}
	if strings.Contains(string(out), "sbench-"+tag+"-") {
		t.Errorf("namespaces of the lab in %s left behind:\n%s", dir, out)
	}
	out, err = exec.Command("ip", "-o", "link").CombinedOutput()
	if err != nil {
		t.Fatalf("ip link: %v\n%s", err, out)
	}
	if strings.Contains(string(out), "sb"+tag) {
		t.Errorf("links of the lab in %s left behind:\n%s", dir, out)
	}
	// Only this lab's: the next netns lab (another package's test) may
	// hold the range by now.
	out, _ = exec.Command("ip", "-o", "addr", "show", "to", "198.18.0.0/15").CombinedOutput()
	for _, line := range strings.Split(string(out), "\n") {
		if strings.Contains(line, "sb"+tag) {
			t.Errorf("198.18.0.0/15 still held by the lab in %s after it stopped:\n%s", dir, out)
		}
	}
}

// batch runs script as a batch job on the nodes of lab and returns its
// output.
func batch(t *testing.T, ctx context.Context, lab *Lab, nodes string, script string) string {
	t.Helper()
	dir := filepath.Join(lab.Dir, "jobs")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "job.sh"), []byte("#!/bin/bash\n"+script), 0o755); err != nil {
		t.Fatal(err)
	}
	c := &slurm.Client{Env: lab.Env()}
	out := filepath.Join(dir, "job.out")
	_ = os.Remove(out)
	id, err := c.Submit(ctx, "job.sh", slurm.SubmitOptions{Dir: dir, Args: []string{"-w", nodes, "-o", out}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.Wait(ctx, []string{id}, 100*time.Millisecond, nil)
	b, _ := os.ReadFile(out)
	if err != nil || got[id].State != "COMPLETED" {
		t.Fatalf("job %s: %+v, %v\n%s", id, got[id], err, b)
	}
	return string(b)
}

// TestSlurmNetnsLab: in a netns lab every node has its own hostname and
// address, and Shape slows exactly the direction it is asked to.
func TestSlurmNetnsLab(t *testing.T) {
	testenv.LookPath(t, "iperf3", "iperf3")
	// Time to wait for another package's netns lab too (TestSlurmScreen).
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	lab := netnsLab(t, ctx, 4)

	out := batch(t, ctx, lab, "n[1-4]", `srun -N4 -n4 bash -c 'echo $SLURMD_NODENAME $(hostname) $(ip -o -4 addr show dev eth0 | cut -d" " -f7)'`+"\n")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	sort.Strings(lines)
	var want []string
	for k := 1; k <= 4; k++ {
		want = append(want, fmt.Sprintf("n%d n%d %s/15", k, k, NodeAddr(k)))
	}
	if got := strings.Join(lines, "\n"); got != strings.Join(want, "\n") {
		t.Fatalf("nodes, hostnames and addresses:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
	}

	// n3 sends slowly, receives at full speed. iperf3 -c sends from the
	// client; -R makes the server send.
	if err := lab.Shape(ctx, "n3", "200mbit", Out); err != nil {
		t.Fatal(err)
	}
	rate := func(reverse string) float64 {
		t.Helper()
		out := batch(t, ctx, lab, "n1,n3", `srun -N2 -n2 bash -c 'if [ $SLURM_PROCID = 0 ]; then exec iperf3 -s -1 >/dev/null; fi; sleep 0.5; exec iperf3 -c n1 -t 1 -f m `+reverse+`'`+"\n")
		// [  5]   0.00-1.00   sec   228 MBytes   956 Mbits/sec   receiver
		for _, line := range strings.Split(out, "\n") {
			f := strings.Fields(line)
			if len(f) > 2 && f[len(f)-1] == "receiver" && f[len(f)-2] == "Mbits/sec" {
				if v, err := strconv.ParseFloat(f[len(f)-3], 64); err == nil {
					return v / 1000
				}
			}
		}
		t.Fatalf("no receiver rate in iperf3's output:\n%s", out)
		return 0
	}
	sends, receives := rate(""), rate("-R")
	t.Logf("n3 → n1 %.2f Gbit/s, n1 → n3 %.2f Gbit/s", sends, receives)
	if sends > 0.25 || sends < 0.1 {
		t.Errorf("n3 → n1 at %.2f Gbit/s, want the shaped 0.2", sends)
	}
	if receives < 1 {
		t.Errorf("n1 → n3 at %.2f Gbit/s, want it unshaped (> 1)", receives)
	}
	if err := lab.Shape(ctx, "n3", "off", ""); err != nil {
		t.Fatal(err)
	}
	if sends := rate(""); sends < 1 {
		t.Errorf("n3 → n1 at %.2f Gbit/s after shaping off, want > 1", sends)
	}
}

// Two netns labs share one address range: a second lab started while the
// first runs (go test runs packages in parallel, and two of them start
// netns labs) waits its turn, and never takes the range from under the
// first — which once stopped the running lab as if it were stale, and
// cancelled its jobs. start.sh run by hand refuses instead of waiting.
func TestSlurmNetnsLabsTakeTurns(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	first := netnsLab(t, ctx, 2)

	type started struct {
		lab *Lab
		err error
	}
	second := make(chan started, 1)
	go func() {
		lab, err := Start(ctx, searchableTempDir(t), 2, WithNetns())
		second <- started{lab, err}
	}()

	// By hand, while the first lab runs: refused, and the first untouched.
	byHand := searchableTempDir(t)
	out, err := exec.CommandContext(ctx, "bash", filepath.Join(first.Dir, "bin", "start.sh"), byHand, "2", "--netns").CombinedOutput()
	if err == nil {
		_ = exec.Command("bash", filepath.Join(first.Dir, "bin", "stop.sh"), byHand).Run()
		t.Fatalf("start.sh --netns started a second lab while %s runs:\n%s", first.Dir, out)
	}
	if !strings.Contains(string(out), "in use by the running lab in "+first.Dir) {
		t.Errorf("start.sh does not say which lab holds the range:\n%s", out)
	}
	if strings.Contains(string(out), "stale") {
		t.Errorf("start.sh took the running lab for a stale one:\n%s", out)
	}
	checkNoNetwork(t, byHand)

	select {
	case s := <-second:
		if s.lab != nil {
			_ = s.lab.Stop(context.Background())
		}
		t.Fatalf("a second netns lab started while the first runs: %v", s.err)
	case <-time.After(2 * time.Second):
	}
	// The first lab still runs jobs, on both of its nodes.
	if got := batch(t, ctx, first, "n[1-2]", "srun -N2 -n2 hostname | sort\n"); got != "n1\nn2\n" {
		t.Errorf("the first lab's job printed %q, want n1 and n2", got)
	}
	if err := first.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	s := <-second
	if s.err != nil {
		t.Fatalf("the second lab, once the first stopped: %v", s.err)
	}
	t.Cleanup(func() {
		if err := s.lab.Stop(context.Background()); err != nil {
			t.Error(err)
		}
		checkNoNetwork(t, s.lab.Dir)
	})
	if got := batch(t, ctx, s.lab, "n[1-2]", "srun -N2 -n2 hostname | sort\n"); got != "n1\nn2\n" {
		t.Errorf("the second lab's job printed %q, want n1 and n2", got)
	}
}

// A netns lab whose start fails half-way leaves nothing behind: here every
// slurmd refuses to start, after the namespaces, veths and bridge exist.
func TestSlurmNetnsLabFailedStart(t *testing.T) {
	needNetnsLab(t)
	fake := t.TempDir()
	if err := os.WriteFile(filepath.Join(fake, "slurmd"), []byte("#!/bin/sh\necho 'slurmd: fatal: refusing to start (test)' >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	// slurmctld forks and writes its pid file a moment later; here the
	// moment is a second, so that a start that fails at once (the slurmd
	// above) must wait for the pid file to stop slurmctld: stop.sh finds
	// the daemons by their pid files, and one written after it ran was
	// left behind, pid file and all (seen once in make test-slurm).
	real, err := exec.LookPath("slurmctld")
	if err != nil {
		t.Fatal(err)
	}
	late := fmt.Sprintf("#!/bin/sh\n(sleep 1; exec %q \"$@\") </dev/null >/dev/null 2>&1 &\nexit 0\n", real)
	if err := os.WriteFile(filepath.Join(fake, "slurmctld"), []byte(late), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", fake+":"+os.Getenv("PATH"))
	dir := searchableTempDir(t)
	// A minute to fail in, after waiting for another netns lab.
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	lab, err := Start(ctx, dir, 3, WithNetns())
	if err == nil {
		_ = lab.Stop(context.Background())
		t.Fatal("start succeeded with a slurmd that cannot start")
	}
	if !strings.Contains(err.Error(), "slurmd n1 did not start") {
		t.Errorf("error does not say why: %v", err)
	}
	checkNoNetwork(t, dir)
	time.Sleep(2 * time.Second) // what a late daemon would have written by now
	if left, _ := filepath.Glob(filepath.Join(dir, "run", "*.pid")); len(left) != 0 {
		t.Errorf("pid files left: %v", left)
	}
	if out, _ := exec.Command("pgrep", "-f", "slurmctld -f "+dir).Output(); len(out) != 0 {
		t.Errorf("slurmctld of the failed lab still runs: pids %s", strings.Fields(string(out)))
		for _, pid := range strings.Fields(string(out)) {
			exec.Command("kill", pid).Run() // ours: started by this test's lab
		}
	}
}
