package runner

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/sbench/sbench/internal/testenv"
	"github.com/sbench/sbench/results"
)

// resetByPeer is what NPtcp 3.7.2's receiver prints on its standard
// error before it exits 3, when its closing handshake meets a transmitter
// that has closed the connection: perror's line after NetPIPE's message.
const resetByPeer = "NetPIPE: error writing or reading synchronization string: Connection reset by peer"

// netpipeCurve is NPtcp's -o file of a complete curve: 118 sizes.
func netpipeCurve(t *testing.T) []byte {
	t.Helper()
	data, err := os.ReadFile("testdata/exec/nptcp-loopback.out")
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// slowStops lets commands take their time to end by themselves after
// another rank's ended: the commands of these tests end within
// milliseconds of each other, which on a busy machine may be longer than
// fastStops' 100ms, and stopping one would be another outcome.
func slowStops(t *testing.T) {
	stop, kill := execStopWait, execKillWait
	execStopWait, execKillWait = 30*time.Second, time.Second
	t.Cleanup(func() { execStopWait, execKillWait = stop, kill })
}

// noErrors wants every rank's Run to succeed: a run that is ok must not
// fail the job step on any rank (srun's exit status is the job's).
func noErrors(t *testing.T, res []rankResult) {
	t.Helper()
	for r, rr := range res {
		if rr.err != nil {
			t.Errorf("rank %d: %v\n%s", r, rr.err, rr.stderr)
		}
	}
}

// curveSizes are the sizes of a bundle's NetPIPE bandwidth samples.
func curveSizes(b *results.Bundle) []float64 {
	var sizes []float64
	for _, s := range b.Samples {
		if s.Metric == "bandwidth" && s.X != nil {
			sizes = append(sizes, *s.X)
		}
	}
	return sizes
}

// NPtcp's receiver exits 3 at the end of a complete curve. The exit is
// a fact of the run, not its failure: the transmitter's output is complete
// (parsed without an error, rank 0's command exited 0), so the run is ok,
// with the curve, and a note that names the receiver's exit. Whichever
// command ends first.
func TestExecReceiverExitAfterCompleteOutput(t *testing.T) {
	slowStops(t)
	receiver := "echo '" + resetByPeer + "' >&2; exit 3"
	for _, tt := range []struct {
		name string
		argv map[int][]string
	}{
		{"after the transmitter", map[int][]string{
			0: {"sh", "-c", "cat curve.out > np.out && touch done"},
			1: {"sh", "-c", "while [ ! -e done ]; do sleep 0.01; done; " + receiver},
		}},
		// Rank 0's command is not stopped the moment another's exits:
		// it has execStopWait to end by itself.
		{"before the transmitter", map[int][]string{
			0: {"sh", "-c", "touch started; while [ ! -e exited ]; do sleep 0.01; done; sleep 0.2; cat curve.out > np.out"},
			1: {"sh", "-c", "while [ ! -e started ]; do sleep 0.01; done; touch exited; " + receiver},
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := &Exec{RankArgv: tt.argv, Output: "np.out", Parser: "netpipe", Files: map[string][]byte{"curve.out": netpipeCurve(t)}}
			s := execStep(t, []string{"n1", "n2"}, 1, e)
			res := s.run()
			noErrors(t, res)
			b := s.bundle(res)
			if b.Status != results.StatusOK || b.Error != "" {
				t.Fatalf("status %s: %s\n%s", b.Status, b.Error, b.Raw)
			}
			if sizes := curveSizes(b); len(sizes) != 118 || sizes[0] != 1 || sizes[117] != 4194307 {
				t.Errorf("bandwidth at %d sizes %v, want the curve's 118", len(sizes), sizes)
			}
			wantNote := "rank 1 (node n2): " + display(tt.argv[1]) + " exited with status 3: " + resetByPeer
			if !strings.HasPrefix(b.Note, wantNote+"\n") || !strings.Contains(b.Note, "rank 0's command exited with status 0 and its output parsed complete") {
				t.Errorf("note %q, want it to start %q", b.Note, wantNote)
			}
			if !strings.Contains(b.Raw, "==> standard error of rank 1: ") || !strings.Contains(b.Raw, "exited with status 3 <==\n"+resetByPeer) {
				t.Errorf("raw does not keep the receiver's last words:\n%s", b.Raw)
			}
			if !strings.Contains(res[1].stderr, "the run is ok") {
				t.Errorf("rank 1 does not say why it succeeds:\n%s", res[1].stderr)
			}
		})
	}
}

// The same with the real NPtcp, its receiver wrapped to exit as 3.7.2's
// does after a complete curve.
func TestExecNetPIPEReceiverExits3(t *testing.T) {
	testenv.LookPath(t, "NPtcp", "netpipe-tcp")
	slowStops(t)
	port := testenv.FreePort(t)
	np := []string{"-P", port, "-p", "0", "-n", "20", "-u", "65536"}
	e := &Exec{
		RankArgv: map[int][]string{
			1: append([]string{"sh", "-c", `NPtcp "$@" && echo '` + resetByPeer + `' >&2; exit 3`, "sh"}, np...),
			0: append([]string{"NPtcp", "-h", "{host:1}", "-o", "np.out"}, np...),
		},
		Output: "np.out", Parser: "netpipe", StartDelay: 300 * time.Millisecond,
	}
	s := execStep(t, []string{"n1", "n2"}, 1, e)
	res := s.run()
	noErrors(t, res)
	b := s.bundle(res)
	if b.Status != results.StatusOK {
		t.Fatalf("status %s: %s\n%s", b.Status, b.Error, b.Raw)
	}
	if sizes := curveSizes(b); len(sizes) < 20 || sizes[0] != 1 || sizes[len(sizes)-1] < 65536 {
		t.Errorf("bandwidth at sizes %v", sizes)
	}
	if !strings.HasPrefix(b.Note, "rank 1 (node n2): sh -c ") || !strings.Contains(b.Note, "exited with status 3: "+resetByPeer) {
		t.Errorf("note %q", b.Note)
	}
}

// Any other non-zero exit fails the run, and the run keeps what the tool
// printed: the samples its output holds stay in the failed bundle, where
// no view takes them for figures.
func TestExecFailedRunKeepsSamples(t *testing.T) {
	fastStops(t)
	curve := map[string][]byte{"curve.out": netpipeCurve(t)}
	for _, tt := range []struct {
		name string
		e    *Exec
		want string // the error
		n    int    // samples kept
	}{
		{"rank 0 exits 2 after a complete output",
			&Exec{RankArgv: map[int][]string{0: {"sh", "-c", osuLatency + "; echo oops >&2; exit 2"}, 1: {"sleep", "30"}}},
			"rank 0 (node n1): " + display([]string{"sh", "-c", osuLatency + "; echo oops >&2; exit 2"}) + " exited with status 2: oops", 3},
		// Rank 0 runs no command: any rank may have written the output.
		{"the output's writer exits 3",
			&Exec{RankArgv: map[int][]string{1: {"sh", "-c", "cat curve.out > np.out; echo bye >&2; exit 3"}}, Output: "np.out", Parser: "netpipe", Files: curve},
			"rank 1 (node n2): sh -c 'cat curve.out > np.out; echo bye >&2; exit 3' exited with status 3: bye", 118 * 3},
		{"a rank killed by a signal",
			&Exec{RankArgv: map[int][]string{0: {"sh", "-c", osuLatency + "; touch done"}, 1: {"sh", "-c", "while [ ! -e done ]; do sleep 0.01; done; kill -SEGV $$"}}},
			"rank 1 (node n2): sh -c 'while [ ! -e done ]; do sleep 0.01; done; kill -SEGV $$' was killed by signal SIGSEGV", 3},
		{"an exit beside an output no parser reads",
			&Exec{RankArgv: map[int][]string{0: {"sh", "-c", "echo garbage; touch done"}, 1: {"sh", "-c", "while [ ! -e done ]; do sleep 0.01; done; exit 3"}}},
			"rank 1 (node n2): sh -c 'while [ ! -e done ]; do sleep 0.01; done; exit 3' exited with status 3", 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if strings.Contains(tt.name, "signal") || strings.Contains(tt.name, "no parser reads") {
				slowStops(t) // the peer ends by itself, after rank 0's end
			}
			s := execStep(t, []string{"n1", "n2"}, 1, tt.e)
			res := s.run()
			b := s.bundle(res)
			if b.Status != results.StatusFailed || b.Error != tt.want {
				t.Fatalf("status %s, error %q; want failed, %q\n%s", b.Status, b.Error, tt.want, b.Raw)
			}
			if len(b.Samples) != tt.n {
				t.Errorf("%d samples kept, want %d", len(b.Samples), tt.n)
			}
			if res[0].err == nil || res[1].err == nil {
				t.Errorf("a failed run succeeds on a rank: %v; %v", res[0].err, res[1].err)
			}
			if b.Note != "" {
				t.Errorf("a failed run has a note %q", b.Note)
			}
		})
	}
}

// Without a command on rank 0, another rank's exit fails the run at
// once: the other ranks' commands are stopped, not waited for.
func TestExecExitWithoutRank0Command(t *testing.T) {
	fastStops(t)
	e := &Exec{RankArgv: map[int][]string{1: {"sh", "-c", "echo bye >&2; exit 3"}, 2: {"sleep", "30"}}, Output: "out.txt"}
	s := execStep(t, []string{"n1", "n2", "n3"}, 1, e)
	start := time.Now()
	b := s.bundle(s.run())
	if want := "rank 1 (node n2): sh -c 'echo bye >&2; exit 3' exited with status 3: bye"; b.Status != results.StatusFailed || b.Error != want {
		t.Errorf("status %s, error %q; want failed, %q", b.Status, b.Error, want)
	}
	if took := time.Since(start); took > 20*time.Second {
		t.Errorf("took %s: rank 2's sleep 30 was waited for", took)
	}
}

// A command without a parser (parser none) is judged by its exit status
// and has its wall time for a figure: hostname is ok; an application that
// exits 1 failed, its output and time kept.
func TestExecParserNone(t *testing.T) {
	fastStops(t)
	host, _ := os.Hostname()
	s := execStep(t, []string{"n1", "n2"}, 1, &Exec{Argv: []string{"hostname"}, Parser: "none"})
	edit := s.edit
	s.edit = func(rank int, cfg *Config) {
		edit(rank, cfg)
		cfg.Checks = []CheckSpec{mustCheck(t, "wall_time<=600")}
	}
	start := time.Now()
	res := s.run()
	took := time.Since(start).Seconds()
	noErrors(t, res)
	b := s.bundle(res)
	if b.Status != results.StatusOK || b.Raw != host+"\n" || b.Note != "" {
		t.Fatalf("status %s %q, raw %q, note %q", b.Status, b.Error, b.Raw, b.Note)
	}
	if len(b.Samples) != 1 {
		t.Fatalf("samples %+v, want the wall time alone", b.Samples)
	}
	if w := b.Samples[0]; w.Metric != results.MetricWallTime || w.Unit != results.UnitSeconds || w.X != nil || !(w.Value > 0 && w.Value < took) {
		t.Errorf("wall time %+v, want 0 < s < %.3f", w, took)
	}
	if bm := b.Benchmark; bm.Kind != "tool" || bm.Kernel != ExecKernel || bm.Tool != "" || strings.Join(bm.Command, " ") != "hostname" {
		t.Errorf("benchmark %+v", bm)
	}
	if len(b.Checks) != 1 || !b.Checks[0].Passed || b.Checks[0].Name != results.MetricWallTime {
		t.Errorf("checks %+v", b.Checks)
	}

	t.Run("exit 1", func(t *testing.T) {
		argv := []string{"sh", "-c", "echo computing; echo 'out of memory' >&2; exit 1"}
		s := execStep(t, []string{"n1", "n2"}, 1, &Exec{Argv: argv, Parser: "none"})
		b := s.bundle(s.run())
		if want := "rank 0 (node n1): sh -c 'echo computing; echo '\\''out of memory'\\'' >&2; exit 1' exited with status 1: out of memory"; b.Status != results.StatusFailed || b.Error != want {
			t.Fatalf("status %s, error %q; want failed, %q", b.Status, b.Error, want)
		}
		if len(b.Samples) != 1 || b.Samples[0].Metric != results.MetricWallTime || !strings.HasPrefix(b.Raw, "computing\n==> standard error of rank 0: ") {
			t.Errorf("samples %+v, raw %q", b.Samples, b.Raw)
		}
	})
	// Without a parser nothing but the exit status says the run did its
	// work: any rank's non-zero exit fails it.
	t.Run("another rank exits 3", func(t *testing.T) {
		slowStops(t)
		e := &Exec{RankArgv: map[int][]string{0: {"sh", "-c", "hostname; touch done"}, 1: {"sh", "-c", "while [ ! -e done ]; do sleep 0.01; done; exit 3"}}, Parser: "none"}
		s := execStep(t, []string{"n1", "n2"}, 1, e)
		b := s.bundle(s.run())
		if b.Status != results.StatusFailed || !strings.HasPrefix(b.Error, "rank 1 (node n2): ") || b.Note != "" || len(b.Samples) != 1 {
			t.Errorf("status %s, error %q, note %q, samples %+v", b.Status, b.Error, b.Note, b.Samples)
		}
	})
	// parser auto on an output no format knows fails, and says how to
	// run the command anyway.
	t.Run("auto", func(t *testing.T) {
		s := execStep(t, []string{"n1", "n2"}, 1, &Exec{Argv: []string{"hostname"}})
		b := s.bundle(s.run())
		if b.Status != results.StatusFailed || !strings.HasPrefix(b.Error, "hostname:1: not output of any known tool") ||
			!strings.HasSuffix(b.Error, `if the command prints no benchmark figures, give it parser "none": its runs are then judged by their exit status and timed (wall_time)`) {
			t.Errorf("status %s, error %q", b.Status, b.Error)
		}
		if b.Raw != host+"\n" || len(b.Samples) != 0 {
			t.Errorf("raw %q, samples %+v", b.Raw, b.Samples)
		}
	})
}

// --parser none is known to the runner's own checks.
func TestExecCheckKnowsParserNone(t *testing.T) {
	if err := (&Exec{Argv: []string{"hostname"}, Parser: "none"}).check(2); err != nil {
		t.Errorf("check: %v", err)
	}
	err := (&Exec{Argv: []string{"hostname"}, Parser: "nothing"}).check(2)
	if err == nil || !strings.Contains(err.Error(), "known: auto, none, ") {
		t.Errorf("check of an unknown parser: %v", err)
	}
}
