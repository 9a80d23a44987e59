package runner

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sbench/sbench/internal/testenv"
	"github.com/sbench/sbench/parsers"
	"github.com/sbench/sbench/results"
)

// osuLatency prints a small osu_latency output, as the tool would.
const osuLatency = `printf '# OSU MPI Latency Test v7.5\n# Size          Latency (us)\n0                       1.20\n1                       1.25\n2                       1.31\n'`

// execStep is an in-process step whose ranks run e.
func execStep(t *testing.T, nodes []string, tasksPerNode int, e *Exec) *step {
	t.Helper()
	s := newStep(t, nodes, tasksPerNode, ExecKernel, nil)
	s.edit = func(rank int, cfg *Config) { cfg.Exec = e }
	return s
}

// fastStops shortens the wait between rank 0's end and SIGTERM for the
// other ranks' commands, and between SIGTERM and SIGKILL.
func fastStops(t *testing.T) {
	stop, kill := execStopWait, execKillWait
	execStopWait, execKillWait = 100*time.Millisecond, time.Second
	t.Cleanup(func() { execStopWait, execKillWait = stop, kill })
}

func (s *step) workdir() string { return filepath.Join(s.results, "work", s.jobID+".0") }

func allRanksOK(t *testing.T, res []rankResult) {
	t.Helper()
	for r, rr := range res {
		if rr.err != nil {
			t.Fatalf("rank %d: %v\n%s", r, rr.err, rr.stderr)
		}
	}
}

func TestExecEveryRank(t *testing.T) {
	fastStops(t)
	host, _ := os.Hostname()
	argv := []string{"sh", "-c", "echo {rank} {size} {host:0} {node:3} {hostname:1} {{x} > hello.{rank}; " +
		"if [ {rank} = 0 ]; then " + osuLatency + "; fi"}
	s := execStep(t, []string{"n1", "n2"}, 2, &Exec{Argv: argv})
	res := s.run()
	allRanksOK(t, res)
	b := s.bundle(res)
	if b.Status != results.StatusOK {
		t.Fatalf("status %s: %s", b.Status, b.Error)
	}
	for r := 0; r < 4; r++ {
		data, err := os.ReadFile(filepath.Join(s.workdir(), fmt.Sprintf("hello.%d", r)))
		if want := fmt.Sprintf("%d 4 127.0.0.1 n2 %s {x}\n", r, host); err != nil || string(data) != want {
			t.Errorf("rank %d wrote %q, %v; want %q", r, data, err, want)
		}
	}
	wantCmd := "sh -c echo 0 4 127.0.0.1 n2 " + host + " {x} > hello.0; if [ 0 = 0 ]; then " + osuLatency + "; fi"
	if got := b.Benchmark; got.Name != "bench" || got.Kind != "tool" || got.Kernel != "exec" || got.Tool != "osu-micro-benchmarks" || got.ToolBenchmark != "osu_latency" ||
		got.ToolVersion != "7.5" || got.Launcher != "srun" || strings.Join(got.Command, " ") != wantCmd {
		t.Errorf("benchmark %+v", got)
	}
	if len(b.Samples) != 3 || b.Samples[2].Metric != "latency" || b.Samples[2].Value != 1.31 || *b.Samples[2].X != 2 {
		t.Errorf("samples %+v", b.Samples)
	}
	if b.Params["transport"] != "tcp" || b.Labels["site"] != "lab" || b.Job.ID != s.jobID || b.Job.Tasks != 4 || len(b.Hosts) != 2 {
		t.Errorf("params %v labels %v job %+v hosts %d", b.Params, b.Labels, b.Job, len(b.Hosts))
	}
	if !strings.Contains(b.Raw, "1.31") {
		t.Errorf("raw %q", b.Raw)
	}
}

func TestExecPerRankCommands(t *testing.T) {
	fastStops(t)
	e := &Exec{RankArgv: map[int][]string{
		0: {"sh", "-c", osuLatency},
		1: {"sh", "-c", "echo {node:0} {node:2} {size} > from1"},
		// rank 2 runs nothing: it joins and waits for the end.
	}}
	s := execStep(t, []string{"n1", "n2", "n3"}, 1, e)
	res := s.run()
	allRanksOK(t, res)
	if b := s.bundle(res); b.Status != results.StatusOK || len(b.Samples) != 3 || len(b.Hosts) != 3 {
		t.Fatalf("status %s %s, %d samples, %d hosts", b.Status, b.Error, len(b.Samples), len(b.Hosts))
	}
	if data, err := os.ReadFile(filepath.Join(s.workdir(), "from1")); err != nil || string(data) != "n1 n3 3\n" {
		t.Errorf("rank 1 wrote %q, %v", data, err)
	}
}

func TestExecNetPIPEPair(t *testing.T) {
	testenv.LookPath(t, "NPtcp", "netpipe-tcp")
	fastStops(t)
	port := testenv.FreePort(t)
	np := []string{"-P", port, "-p", "0", "-n", "50", "-u", "65536"}
	e := &Exec{
		RankArgv: map[int][]string{
			1: append([]string{"NPtcp"}, np...),                   // the receiver, a server
			0: append([]string{"NPtcp", "-h", "{host:1}"}, np...), // the transmitter writes np.out
		},
		Output: "np.out", Parser: "netpipe", StartDelay: 300 * time.Millisecond,
	}
	s := execStep(t, []string{"n1", "n2"}, 1, e)
	res := s.run()
	allRanksOK(t, res)
	b := s.bundle(res)
	if b.Status != results.StatusOK {
		t.Fatalf("status %s: %s\n%s", b.Status, b.Error, b.Raw)
	}
	var sizes []float64
	for _, smp := range b.Samples {
		if smp.Metric == "bandwidth" {
			sizes = append(sizes, *smp.X)
		}
	}
	if len(sizes) < 10 || sizes[0] != 1 || sizes[len(sizes)-1] < 65536 {
		t.Errorf("bandwidth at sizes %v", sizes)
	}
	if b.Benchmark.Tool == "" || b.Benchmark.Command[2] != "127.0.0.1" {
		t.Errorf("benchmark %+v", b.Benchmark)
	}
}

func TestExecIperf3Pair(t *testing.T) {
	testenv.LookPath(t, "iperf3", "iperf3")
	fastStops(t)
	port := testenv.FreePort(t)
	e := &Exec{
		RankArgv: map[int][]string{
			1: {"iperf3", "-s", "-1", "-p", port},
			0: {"iperf3", "-c", "{host:1}", "-p", port, "-t", "1", "--json"},
		},
		Parser: "iperf3", StartDelay: 500 * time.Millisecond,
	}
	s := execStep(t, []string{"n1", "n2"}, 1, e)
	edit := s.edit
	s.edit = func(rank int, cfg *Config) {
		edit(rank, cfg)
		cfg.Checks = []CheckSpec{mustCheck(t, "bandwidth>=1")}
	}
	res := s.run()
	allRanksOK(t, res)
	b := s.bundle(res)
	if b.Status != results.StatusOK || b.Benchmark.Tool != "iperf3" {
		t.Fatalf("status %s %s, tool %q", b.Status, b.Error, b.Benchmark.Tool)
	}
	if len(b.Checks) != 1 || !b.Checks[0].Passed || b.Checks[0].Name != "bandwidth" || !(b.Checks[0].Value >= 1) {
		t.Errorf("checks %+v", b.Checks)
	}
}

// runFailing runs e on nodes n1 and n2 and wants the bundle failed with
// the error want.
func runFailing(t *testing.T, e *Exec, want string) (*results.Bundle, []rankResult) {
	t.Helper()
	s := execStep(t, []string{"n1", "n2"}, 1, e)
	res := s.run()
	b := s.bundle(res)
	if b.Status != results.StatusFailed || b.Error != want {
		t.Fatalf("status %s, error %q; want %q", b.Status, b.Error, want)
	}
	return b, res
}

func TestExecFailingCommand(t *testing.T) {
	fastStops(t)
	t.Run("rank 1", func(t *testing.T) {
		e := &Exec{RankArgv: map[int][]string{
			0: {"sleep", "30"},
			1: {"sh", "-c", "echo starting; echo boom >&2; exit 3"},
		}}
		start := time.Now()
		b, res := runFailing(t, e, "rank 1 (node n2): sh -c 'echo starting; echo boom >&2; exit 3' exited with status 3: boom")
		if took := time.Since(start); took > 5*time.Second {
			t.Errorf("took %s: rank 0's command was not stopped", took)
		}
		if !strings.Contains(b.Raw, "==> standard error of rank 1: sh -c 'echo starting; echo boom >&2; exit 3' exited with status 3 <==\nboom\n") {
			t.Errorf("raw %q lacks rank 1's standard error", b.Raw)
		}
		if b.Benchmark.Kind != "tool" || strings.Join(b.Benchmark.Command, " ") != "sleep 30" {
			t.Errorf("benchmark %+v", b.Benchmark)
		}
		if res[0].err == nil || res[1].err == nil || !strings.Contains(res[1].err.Error(), "exited with status 3: boom") {
			t.Errorf("errors: %v; %v", res[0].err, res[1].err)
		}
	})
	t.Run("rank 0", func(t *testing.T) {
		e := &Exec{RankArgv: map[int][]string{
			0: {"sh", "-c", "echo partial; echo oops >&2; exit 2"},
			1: {"sleep", "30"},
		}}
		want := "rank 0 (node n1): sh -c 'echo partial; echo oops >&2; exit 2' exited with status 2: oops"
		b, res := runFailing(t, e, want)
		if !strings.HasPrefix(b.Raw, "partial\n==> standard error of rank 0: ") {
			t.Errorf("raw %q", b.Raw)
		}
		if err := res[1].err; err == nil || !strings.Contains(err.Error(), "rank 0 aborted the run: "+want) {
			t.Errorf("rank 1: %v", err)
		}
		if err := res[0].err; err == nil || err.Error() != want {
			t.Errorf("rank 0: %v", err)
		}
	})
	t.Run("not found", func(t *testing.T) {
		e := &Exec{RankArgv: map[int][]string{0: {"sleep", "30"}, 1: {"/nonexistent/tool", "-x"}}}
		s := execStep(t, []string{"n1", "n2"}, 1, e)
		b := s.bundle(s.run())
		if want := "rank 1 (node n2): start /nonexistent/tool -x: fork/exec /nonexistent/tool: no such file or directory"; b.Error != want {
			t.Errorf("error %q, want %q", b.Error, want)
		}
	})
}

func TestExecTimeout(t *testing.T) {
	fastStops(t)
	s := execStep(t, []string{"n1", "n2"}, 1, &Exec{Argv: []string{"sleep", "30"}})
	edit := s.edit
	s.edit = func(rank int, cfg *Config) {
		edit(rank, cfg)
		cfg.Timeout = 500 * time.Millisecond
	}
	res := s.run()
	b := s.bundle(res)
	if b.Status != results.StatusFailed || b.Error != "rank 0 (node n1): sleep 30 timed out after 500ms" {
		t.Errorf("status %s, error %q", b.Status, b.Error)
	}
	for r, rr := range res {
		if rr.took > 4*time.Second || rr.err == nil {
			t.Errorf("rank %d took %s: %v", r, rr.took, rr.err)
		}
	}
}

// TestExecTimeoutNoticedElsewhereFirst: every rank's clock of the run's
// timeout starts when the rank starts, so the rank that notices first
// varies. The verdict must not: it names the rank whose command was still
// running (rank 0's when it had one), as timed out.
func TestExecTimeoutNoticedElsewhereFirst(t *testing.T) {
	fastStops(t)
	for _, tt := range []struct {
		name  string
		nodes []string
		e     *Exec
		late  int // the rank started 300ms after the others
		want  string
	}{
		{"rank 1 first", []string{"n1", "n2"}, &Exec{Argv: []string{"sleep", "30"}},
			0, "rank 0 (node n1): sleep 30 timed out after 500ms"},
		{"rank 0 first", []string{"n1", "n2"}, &Exec{Argv: []string{"sleep", "30"}},
			1, "rank 0 (node n1): sleep 30 timed out after 500ms"},
		{"rank 0 runs nothing", []string{"n1", "n2"}, &Exec{RankArgv: map[int][]string{1: {"sleep", "30"}}, Output: "out"},
			1, "rank 1 (node n2): sleep 30 timed out after 500ms"},
		{"rank 1 done, rank 2 running", []string{"n1", "n2", "n3"},
			&Exec{RankArgv: map[int][]string{1: {"true"}, 2: {"sleep", "30"}}, Output: "out"},
			2, "rank 2 (node n3): sleep 30 timed out after 500ms"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := execStep(t, tt.nodes, 1, tt.e)
			edit := s.edit
			s.edit = func(rank int, cfg *Config) {
				edit(rank, cfg)
				cfg.Timeout = 500 * time.Millisecond
			}
			s.delay = map[int]time.Duration{tt.late: 300 * time.Millisecond}
			res := s.run()
			if b := s.bundle(res); b.Status != results.StatusFailed || b.Error != tt.want {
				t.Errorf("status %s, error %q; want %q", b.Status, b.Error, tt.want)
			}
			for r, rr := range res {
				if rr.took > 4*time.Second || rr.err == nil {
					t.Errorf("rank %d took %s: %v", r, rr.took, rr.err)
				}
			}
		})
	}
}

func TestExecBadCommandLines(t *testing.T) {
	for _, tt := range []struct {
		e    Exec
		want string
	}{
		{Exec{Argv: []string{"echo", "{rnak}"}}, "--exec: argument 1: unknown placeholder {rnak}"},
		{Exec{Argv: []string{"echo", "{host:5}"}}, "--exec: argument 1: {host:5}: the step has 2 ranks"},
		{Exec{Argv: []string{"echo", "{host}"}}, "placeholder {host} needs a rank: {host:N}"},
		{Exec{Argv: []string{"echo", "{rank"}}, `placeholder "{rank" has no closing '}'`},
		{Exec{RankArgv: map[int][]string{1: {"true"}}}, "rank 0 has no command and there is no --output file"},
		{Exec{RankArgv: map[int][]string{0: {"true"}, 2: {"true"}}}, "--exec-rank 2: the step has 2 ranks"},
		{Exec{Argv: []string{"true"}, Parser: "osu_bw"}, `--parser "osu_bw": unknown`},
		{Exec{Argv: []string{"true"}, Files: map[string][]byte{"../x": nil}}, `--file "../x": want a plain file name`},
		{Exec{}, "the exec kernel needs a command"},
	} {
		s := execStep(t, []string{"n1", "n2"}, 1, &tt.e)
		cfg := s.config(0)
		err := cfg.Validate()
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: %v, want %q", tt.e, err, tt.want)
			continue
		}
		// Nothing runs: no bundle, no work directory.
		if path, err := Run(t.Context(), cfg); path != "" || err == nil {
			t.Errorf("%+v: Run wrote %q, %v", tt.e, path, err)
		}
		if _, err := os.Stat(s.results); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%+v: the results directory was created", tt.e)
		}
	}
}

func TestExecOutputFile(t *testing.T) {
	fastStops(t)
	e := &Exec{Argv: []string{"sh", "-c", "echo noise; " + osuLatency + " > lat.txt"}, Output: "lat.txt", Parser: "osu"}
	s := execStep(t, []string{"n1"}, 1, e)
	b := s.bundle(s.run())
	if b.Status != results.StatusOK || len(b.Samples) != 3 || strings.Contains(b.Raw, "noise") {
		t.Fatalf("status %s %s, %d samples, raw %q", b.Status, b.Error, len(b.Samples), b.Raw)
	}

	// A stale output from an earlier run is never parsed in place of one
	// the tool failed to write.
	e2 := &Exec{Argv: []string{"true"}, Output: "lat.txt", Parser: "osu"}
	s2 := execStep(t, []string{"n1"}, 1, e2)
	s2.jobID = s.jobID
	s2.results = s.results
	b = s2.bundle(s2.run())
	if b.Status != results.StatusFailed || !strings.Contains(b.Error, "rank 0 (node n1): output file: open ") ||
		!strings.HasSuffix(b.Error, "lat.txt: no such file or directory") {
		t.Errorf("status %s, error %q", b.Status, b.Error)
	}
}

func TestExecOutputFromAnotherRank(t *testing.T) {
	fastStops(t)
	e := &Exec{RankArgv: map[int][]string{1: {"sh", "-c", "sleep 0.2; " + osuLatency + " > lat.txt"}}, Output: "lat.txt"}
	s := execStep(t, []string{"n1", "n2"}, 1, e)
	res := s.run()
	allRanksOK(t, res)
	if b := s.bundle(res); b.Status != results.StatusOK || len(b.Samples) != 3 || b.Benchmark.Command != nil {
		t.Fatalf("status %s %s, %d samples, command %q", b.Status, b.Error, len(b.Samples), b.Benchmark.Command)
	}
}

func TestExecInputFiles(t *testing.T) {
	fastStops(t)
	osu := "# OSU MPI Bandwidth Test v5.9\n# Size      Bandwidth (MB/s)\n1                       2.50\n4194304              3100.00\n"
	e := &Exec{RankArgv: map[int][]string{0: {"cat", "in.txt"}, 1: {"test", "-f", "{workdir}/in.txt"}},
		Files: map[string][]byte{"in.txt": []byte(osu)}}
	s := execStep(t, []string{"n1", "n2"}, 1, e)
	res := s.run()
	allRanksOK(t, res)
	b := s.bundle(res)
	if b.Status != results.StatusOK || b.Benchmark.ToolBenchmark != "osu_bw" || len(b.Samples) != 2 {
		t.Fatalf("status %s %s, tool benchmark %s, samples %+v", b.Status, b.Error, b.Benchmark.ToolBenchmark, b.Samples)
	}
}

func TestExecParseError(t *testing.T) {
	fastStops(t)
	s := execStep(t, []string{"n1"}, 1, &Exec{Argv: []string{"echo", "hello"}})
	res := s.run()
	b := s.bundle(res)
	if b.Status != results.StatusFailed || !strings.HasPrefix(b.Error, "echo:1: not output of any known tool") || b.Raw != "hello\n" {
		t.Errorf("status %s, error %q, raw %q", b.Status, b.Error, b.Raw)
	}
	if res[0].err == nil {
		t.Error("a parse error is no success")
	}
}

func TestExecSeveralRuns(t *testing.T) {
	fastStops(t)
	log, err := os.ReadFile("testdata/exec/hpl-2.3-rpi-cluster-log.txt")
	if err != nil {
		t.Fatal(err)
	}
	e := &Exec{Argv: []string{"cat", "hpl.log"}, Files: map[string][]byte{"hpl.log": log}}
	s := execStep(t, []string{"n1"}, 1, e)
	res := s.run()
	allRanksOK(t, res)
	paths := strings.Fields(res[0].stdout)
	if len(paths) != 7 || res[0].path != paths[0] {
		t.Fatalf("rank 0 printed %q and returned %q", res[0].stdout, res[0].path)
	}
	for k, p := range paths {
		want := filepath.Join(s.results, s.jobID+".0.bench.json")
		if k > 0 {
			want = filepath.Join(s.results, fmt.Sprintf("%s.0.bench-%d.json", s.jobID, k))
		}
		if p != want {
			t.Errorf("bundle %d at %s, want %s", k, p, want)
		}
		b, err := results.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if b.Status != results.StatusOK || b.Benchmark.Tool != "xhpl" || b.Benchmark.ToolBenchmark != "hpl" || b.Benchmark.Kernel != "exec" || b.Job.ID != s.jobID ||
			b.Params["transport"] != "tcp" || len(b.Scalars) == 0 {
			t.Errorf("bundle %d: status %s, benchmark %+v, job %+v, params %v", k, b.Status, b.Benchmark, b.Job, b.Params)
		}
	}
}

// imbTwo is IMB-MPI1 2021's output of "IMB-MPI1 -msglog 2 PingPong
// Allreduce" on 2 ranks, as the tool prints it (parsers/testdata holds the
// real outputs it follows): two benchmarks in one output.
const imbTwo = `#----------------------------------------------------------------
#    Intel(R) MPI Benchmarks 2021.3, MPI-1 part
#----------------------------------------------------------------
# Date                  : Thu Dec  3 10:00:00 2026
# Machine               : x86_64
# System                : Linux
# Release               : 6.1.0-28-amd64
# Version               : #1 SMP PREEMPT_DYNAMIC Debian 6.1.119-1 (2024-11-22)
# MPI Version           : 3.1
# MPI Thread Environment: 


# Calling sequence was: 

# IMB-MPI1 -msglog 2 PingPong Allreduce 

# Minimum message length in bytes:   0
# Maximum message length in bytes:   4
#
# MPI_Datatype                   :   MPI_BYTE 
# MPI_Datatype for reductions    :   MPI_FLOAT 
# MPI_Op                         :   MPI_SUM  
# 
# 

# List of Benchmarks to run:

# PingPong
# Allreduce

#---------------------------------------------------
# Benchmarking PingPong 
# #processes = 2 
#---------------------------------------------------
       #bytes #repetitions      t[usec]   Mbytes/sec
            0         1000       196.14         0.00
            1         1000       197.02         0.01
            2         1000       196.80         0.01
            4         1000       197.31         0.02

#----------------------------------------------------------------
# Benchmarking Allreduce 
# #processes = 2 
#----------------------------------------------------------------
       #bytes #repetitions  t_min[usec]  t_max[usec]  t_avg[usec]
            0         1000         0.07         0.09         0.08
            4         1000       201.20       203.40       202.30


# All processes entering MPI_Finalize

`

// A wrapped tool that ran two benchmarks gives two runs, each naming the
// benchmark the tool ran, and the tool as ingesting the same output from a
// file names it: the campaign's benchmark name ("bench") does not merge
// them.
func TestExecToolBenchmarks(t *testing.T) {
	fastStops(t)
	e := &Exec{Argv: []string{"sh", "-c", "cat imb.out"}, Files: map[string][]byte{"imb.out": []byte(imbTwo)}}
	s := execStep(t, []string{"n1", "n2"}, 1, e)
	res := s.run()
	allRanksOK(t, res)
	paths := strings.Fields(res[0].stdout)
	ingested, err := parsers.Parse("imb.out", "auto", []byte(imbTwo))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != 2 || len(ingested) != 2 {
		t.Fatalf("rank 0 wrote %q, ingest reads %d runs: want 2 of each", paths, len(ingested))
	}
	for i, p := range paths {
		b, err := results.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		want := ingested[i].Benchmark
		if got := b.Benchmark; got.Name != "bench" || got.Kind != "tool" || got.Kernel != "exec" || got.Tool != want.Tool ||
			got.ToolBenchmark != want.ToolBenchmark || got.ToolVersion != want.ToolVersion || got.ToolBenchmark != []string{"IMB-MPI1 PingPong", "IMB-MPI1 Allreduce"}[i] {
			t.Errorf("run %d: benchmark %+v; the same output ingested from a file is tool %q, tool benchmark %q", i, got, want.Tool, want.ToolBenchmark)
		}
		if n := b.Benchmark.Normalized(); n.Tool != b.Benchmark.Tool || n.ToolBenchmark != b.Benchmark.ToolBenchmark {
			t.Errorf("run %d: the archive would read it as %+v", i, n)
		}
	}
}

func mustCheck(t *testing.T, s string) CheckSpec {
	t.Helper()
	c, err := ParseCheck(s)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestExecChecksAndRepeat(t *testing.T) {
	fastStops(t)
	s := execStep(t, []string{"n1"}, 1, &Exec{Argv: []string{"sh", "-c", osuLatency}})
	edit := s.edit
	repeat := 2
	s.edit = func(rank int, cfg *Config) {
		edit(rank, cfg)
		cfg.Checks = []CheckSpec{mustCheck(t, "latency@1<=5"), mustCheck(t, "latency@2<1")}
		cfg.Repeat = &repeat
	}
	res := s.run()
	allRanksOK(t, res) // an invalid run completed: no error
	b := s.bundle(res)
	if b.Status != results.StatusInvalid || b.Error != "check latency@2<1 failed: latency@2 is 1.31" {
		t.Errorf("status %s, error %q", b.Status, b.Error)
	}
	want := []results.Check{
		{Name: "latency@1", Value: 1.25, Threshold: 5, Op: "<=", Passed: true},
		{Name: "latency@2", Value: 1.31, Threshold: 1, Op: "<", Passed: false},
	}
	if fmt.Sprint(b.Checks) != fmt.Sprint(want) {
		t.Errorf("checks %+v, want %+v", b.Checks, want)
	}
	if b.Params["repeat"] != "2" {
		t.Errorf("params %v", b.Params)
	}
	for _, smp := range b.Samples {
		if smp.Repeat != 2 {
			t.Errorf("sample %+v: repeat %d", smp, smp.Repeat)
		}
	}
	if !strings.Contains(res[0].stderr, ".bench.json is invalid: check latency@2<1 failed") {
		t.Errorf("rank 0 did not say the run is invalid:\n%s", res[0].stderr)
	}
}

func TestNativeChecksAndRepeat(t *testing.T) {
	s := newStep(t, []string{"n1", "n2"}, 1, "latency", map[string]string{"sizes": "1-4", "iterations": "10"})
	repeat := 0
	s.edit = func(rank int, cfg *Config) {
		cfg.Checks = []CheckSpec{mustCheck(t, "latency@4<=1e6"), mustCheck(t, "latency@4K<=1e6")}
		cfg.Repeat = &repeat
	}
	b := s.bundle(s.run())
	if b.Status != results.StatusInvalid || b.Error != "check latency@4096<=1000000: no sample latency@4096 to judge" {
		t.Errorf("status %s, error %q", b.Status, b.Error)
	}
	if len(b.Checks) != 2 || !b.Checks[0].Passed || b.Checks[1].Passed || b.Params["repeat"] != "0" || b.Benchmark.Launcher != "srun" {
		t.Errorf("checks %+v, params %v, benchmark %+v", b.Checks, b.Params, b.Benchmark)
	}
}

func TestExecStopsServers(t *testing.T) {
	fastStops(t)
	e := &Exec{RankArgv: map[int][]string{
		0: {"sh", "-c", osuLatency},
		// A server that never ends by itself, and ignores SIGTERM.
		1: {"sh", "-c", "echo $$ > server.pid; trap '' TERM; while :; do sleep 0.1; done"},
	}}
	s := execStep(t, []string{"n1", "n2"}, 1, e)
	start := time.Now()
	res := s.run()
	allRanksOK(t, res)
	if took := time.Since(start); took > 4*time.Second {
		t.Errorf("took %s", took)
	}
	if b := s.bundle(res); b.Status != results.StatusOK {
		t.Fatalf("status %s: %s", b.Status, b.Error)
	}
	data, err := os.ReadFile(filepath.Join(s.workdir(), "server.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("the server (pid %d) still runs: %v", pid, err)
	}
}

func TestExecOutputLimit(t *testing.T) {
	fastStops(t)
	limit := maxExecOutput
	maxExecOutput = 4096
	t.Cleanup(func() { maxExecOutput = limit })
	s := execStep(t, []string{"n1"}, 1, &Exec{Argv: []string{"yes"}})
	res := s.run()
	b := s.bundle(res)
	if b.Status != results.StatusFailed || b.Error != "rank 0 (node n1): yes wrote more than 4 KiB to its standard output; let it write a file and parse that with --output" {
		t.Errorf("status %s, error %q", b.Status, b.Error)
	}
	if len(b.Raw) != 4096 || res[0].took > 4*time.Second {
		t.Errorf("kept %d bytes, took %s", len(b.Raw), res[0].took)
	}
}

func TestExecHelpers(t *testing.T) {
	if got := display([]string{"sh", "-c", "echo 'a' $x", ""}); got != `sh -c 'echo '\''a'\'' $x' ''` {
		t.Errorf("display: %s", got)
	}
	if got := lastLine("first\nlast one  \n\n"); got != "last one" {
		t.Errorf("lastLine: %q", got)
	}
	w := NewTailWriter(10)
	for i := 0; i < 10; i++ {
		fmt.Fprintf(w, "line %d\n", i)
	}
	if got := w.String(); got != "[…]\nline 9\n" {
		t.Errorf("tail %q", got)
	}
}
