package reports

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sbench/sbench/results"
	"github.com/sbench/sbench/store"
)

// An ok run's note (a rank's command exited non-zero after the run's
// output was complete) is shown under its row and in the appendix, in
// grey: the run counts, and its reader knows what happened.
func TestReportShowsRunNotes(t *testing.T) {
	d := testData()
	note := "rank 1 (node n02): NPtcp exited with status 3: NetPIPE: error writing or reading synchronization string: Connection reset by peer"
	d.Runs[1].Note = note + "\n(after rank 0's command exited with status 0 and its output parsed complete: the run counts)"
	text := pdfText(t, writeReport(t, d))
	flat := strings.Join(strings.Fields(text), " ")
	for _, want := range []string{
		"Note: rank 1 (node n02): NPtcp exited with status 3",
		"1 ok run carries a note (under its row when listed, and in the appendix)",
		"NetPIPE's receiver exits 3 on its closing handshake",
	} {
		if !strings.Contains(flat, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if n := strings.Count(flat, "exited with status 3: NetPIPE: error writing"); n != 2 {
		t.Errorf("the note is quoted %d times, want twice (runs table, appendix)", n)
	}
}

// A command without a parser has its wall time for a figure: the report
// tables it with the values that have no size axis, and leaves out a
// failed run's.
func TestReportWallTime(t *testing.T) {
	t0 := time.Date(2025, 3, 1, 10, 0, 0, 0, time.UTC)
	var d Data
	for i, v := range []float64{1.5, 1.25, 777} {
		run := store.Run{ID: int64(i + 1), Campaign: "apps", Variant: "default", Benchmark: "solver", Kind: "tool", Kernel: "exec",
			Command: []string{"./solver"}, Status: results.StatusOK, JobID: "10" + string(rune('1'+i)), Step: "0", Nodes: []string{"n01"}, Tasks: 1,
			Hosts: hostsOf("n01"), Start: t0.Add(time.Duration(i) * time.Hour), End: t0.Add(time.Duration(i)*time.Hour + time.Minute)}
		if v == 777 {
			run.Status, run.Error = results.StatusFailed, "rank 0 (node n01): ./solver exited with status 1: out of memory"
		}
		d.Runs = append(d.Runs, run)
		d.Samples = append(d.Samples, store.Sample{RunID: run.ID, Sample: results.Sample{Metric: results.MetricWallTime, Unit: results.UnitSeconds, Value: v}})
	}
	flat := strings.Join(strings.Fields(pdfText(t, writeReport(t, d))), " ")
	// Values without a size axis: the median of the ok runs, their range,
	// the unit.
	if !strings.Contains(flat, "Values without a size axis") || !strings.Contains(flat, "wall_time default Median Min Max Unit 1.38 1.25 1.50 s") {
		t.Errorf("report does not table the wall time:\n%s", flat)
	}
	if strings.Contains(flat, "777") {
		t.Errorf("the failed run's wall time 777 is in the report")
	}
}

// An application's figures (user-defined metrics: no size axis) get a
// verdict of their own, not "No successful run has samples": each
// metric's best and worst configuration, with a factor only when every
// run of one is beyond every run of the other and the test says so.
func TestReportValuesVerdict(t *testing.T) {
	t0 := time.Date(2025, 3, 1, 10, 0, 0, 0, time.UTC)
	build := func(one, two []float64) Data {
		var d Data
		add := func(variant string, v float64) {
			id := int64(len(d.Runs) + 1)
			run := store.Run{ID: id, Campaign: "lammps", Variant: variant, Benchmark: "lj", Kind: "tool", Kernel: "exec",
				Command: []string{"lmp"}, Status: results.StatusOK, JobID: "7", Step: strconv.Itoa(int(id)), Nodes: []string{"n01"}, Tasks: 1,
				Hosts: hostsOf("n01"), Start: t0.Add(time.Duration(id) * time.Minute), End: t0.Add(time.Duration(id)*time.Minute + time.Second)}
			d.Runs = append(d.Runs, run)
			d.Samples = append(d.Samples, store.Sample{RunID: id, Sample: results.Sample{Metric: "timesteps_per_s", Unit: "timesteps/s", Value: v}})
		}
		for _, v := range one {
			add("one-rank", v)
		}
		for _, v := range two {
			add("two-ranks", v)
		}
		return d
	}
	verdict := func(d Data) string {
		flat := strings.Join(strings.Fields(pdfText(t, writeReport(t, d))), " ")
		i := strings.Index(flat, "Verdict Computed")
		j := strings.Index(flat, "System n01")
		if i < 0 || j < i {
			t.Fatalf("no verdict section:\n%s", flat)
		}
		return flat[i:j]
	}
	apart := verdict(build([]float64{60, 62, 64, 66}, []float64{20, 21, 22, 23}))
	for _, want := range []string{"lj: timesteps_per_s 63.00 timesteps/s (median of 4 runs, 60.00–66.00) for one-rank, the highest of 2 configurations",
		"two-ranks 21.50 timesteps/s (median of 4 runs, 20.00–23.00): 2.93× lower for two-ranks (every run apart, p = 0.029)"} {
		if !strings.Contains(apart, want) {
			t.Errorf("verdict lacks %q:\n%s", want, apart)
		}
	}
	if strings.Contains(apart, "No successful run") {
		t.Errorf("verdict says no run has samples:\n%s", apart)
	}
	few := verdict(build([]float64{60, 62, 64}, []float64{20, 21, 22}))
	if strings.Contains(few, "×") || !strings.Contains(few, "could by chance") {
		t.Errorf("3 runs each: a factor is claimed, or the verdict does not say why not:\n%s", few)
	}
}
