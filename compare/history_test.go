package compare

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sbench/sbench/internal/golden"
	"github.com/sbench/sbench/results"
	"github.com/sbench/sbench/store"
)

// upgradeHistory is 30 weekly osu_bw runs on two nodes; from run 21 on the
// nodes run a new kernel and OFED firmware and their ports trained at a
// lower rate, and the bandwidth drops by 20%. Run 9 is a one-off outlier,
// run 15 failed, and each run has three repeats at 1 MiB.
func upgradeHistory(seed uint64) ([]store.Run, []store.Sample) {
	rng := rand.New(rand.NewPCG(seed, 1))
	var runs []store.Run
	var samples []store.Sample
	host := func(name, kernel, fw, rate string) results.Host {
		return results.Host{Hostname: name, Kernel: kernel, MPI: "Open MPI 4.1.5", OS: "Rocky Linux 8.8",
			IB: []results.IBPort{{Device: "mlx5_0", Port: 1, Rate: rate, Firmware: fw, LinkLayer: "InfiniBand"}}}
	}
	start := time.Date(2024, 1, 1, 9, 0, 0, 0, time.UTC)
	for i := 1; i <= 30; i++ {
		kernel, fw, rate, level := "4.18.0-477.el8", "16.35.2000", "100 Gb/sec (4X EDR)", 11800.0
		if i >= 21 {
			kernel, fw, rate, level = "4.18.0-513.el8", "16.35.3006", "100 Gb/sec (4X EDR)", 9440
		}
		r := store.Run{ID: int64(i), Benchmark: "osu_bw", Variant: "pair", Status: results.StatusOK,
			JobID: strings.Repeat("1", 1) + string(rune('0'+i/10)) + string(rune('0'+i%10)), Step: "0",
			Start: start.AddDate(0, 0, 7*(i-1)), Nodes: []string{"n01", "n02"}, Tool: "osu_bw", ToolVer: "7.4",
			Hosts: []results.Host{host("n01", kernel, fw, rate), host("n02", kernel, fw, rate)}}
		if i == 15 {
			r.Status, r.Error = results.StatusFailed, "rank 1 died"
		}
		runs = append(runs, r)
		for rep := range 3 {
			v := level * (1 + 0.01*rng.NormFloat64())
			if i == 9 {
				v *= 0.7
			}
			samples = append(samples, store.Sample{RunID: r.ID, Sample: results.Sample{Metric: "bandwidth", Unit: "MB/s",
				X: results.F(1 << 20), XUnit: results.UnitBytes, Value: v, Repeat: rep}})
			// Another size and metric, which the query must leave out.
			samples = append(samples, store.Sample{RunID: r.ID, Sample: results.Sample{Metric: "bandwidth", Unit: "MB/s",
				X: results.F(8), XUnit: results.UnitBytes, Value: 30, Repeat: rep}})
		}
		samples = append(samples, store.Sample{RunID: r.ID, Sample: results.Sample{Metric: "msg_rate", Unit: "msg/s", X: results.F(8), XUnit: results.UnitBytes, Value: 1e6}})
	}
	return runs, samples
}

func TestHistoryFindsTheUpgrade(t *testing.T) {
	runs, samples := upgradeHistory(1)
	h, err := BuildHistory(runs, samples, HistoryQuery{Benchmark: "osu_bw", Metric: "bandwidth", X: results.F(1 << 20), Threshold: 0.05})
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Points) != 29 || len(h.Warnings) != 1 || h.Warnings[0] != "failed run 15 left out" {
		t.Fatalf("%d points, warnings %q: want 29 ok runs and the failed one named", len(h.Points), h.Warnings)
	}
	for _, p := range h.Points {
		if p.N != 3 || p.Min > p.Value || p.Max < p.Value {
			t.Errorf("point %+v: want the median of 3 repeats within their range", p)
		}
	}
	if len(h.Changes) != 1 {
		t.Fatalf("changes %+v, want exactly the upgrade", h.Changes)
	}
	c := h.Changes[0]
	if c.Run != 21 || c.Job != "121.0" || c.Change != Worse || c.Delta > -0.18 || c.Delta < -0.22 || c.P > 0.01 {
		t.Errorf("change %+v: want run 21 (job 121.0), about -20%%, a regression", c)
	}
	want := []Difference{
		{Field: "kernel", Before: "4.18.0-477.el8", After: "4.18.0-513.el8"},
		{Field: "firmware", Before: "mlx5_0/1 16.35.2000", After: "mlx5_0/1 16.35.3006"},
	}
	if !reflect.DeepEqual(c.Provenance, want) {
		t.Errorf("provenance %+v, want %+v", c.Provenance, want)
	}
	// The one-off outlier at run 9 is outside its band but not a step.
	var outside []int64
	for _, p := range h.Points {
		if p.Outside {
			outside = append(outside, p.Run)
		}
	}
	if len(outside) == 0 || outside[0] != 9 {
		t.Errorf("runs outside their band: %v, want run 9 first", outside)
	}
	// The new level gets its own band: run 25 on is judged against runs
	// 21 … 24, not against the old level.
	if b := h.Points[23].Band; h.Points[23].Run != 25 || b == nil || b.N != 4 || b.Mean > 10000 {
		t.Errorf("band of run 25: %+v", b)
	}
	if h.Regressions() != 1 {
		t.Errorf("Regressions = %d", h.Regressions())
	}
}

func TestHistoryGolden(t *testing.T) {
	runs, samples := upgradeHistory(1)
	h, err := BuildHistory(runs, samples, HistoryQuery{Benchmark: "osu_bw", Metric: "bandwidth", X: results.F(1 << 20), Threshold: 0.05})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := h.WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "history.txt"), buf.Bytes())
}

func TestHistoryChoices(t *testing.T) {
	runs, samples := upgradeHistory(2)
	for _, c := range []struct {
		q    HistoryQuery
		what string
	}{
		{HistoryQuery{Benchmark: "osu_bw"}, "metric"},
		{HistoryQuery{Benchmark: "osu_bw", Metric: "bandwidth"}, "x"},
	} {
		_, err := BuildHistory(runs, samples, c.q)
		var amb *AmbiguousError
		if !errors.As(err, &amb) || amb.What != c.what {
			t.Errorf("%+v: err %v, want a choice of %s", c.q, err, c.what)
		}
	}
	// One metric at one x needs neither.
	h, err := BuildHistory(runs, samples, HistoryQuery{Benchmark: "osu_bw", Metric: "msg_rate"})
	if err != nil || len(h.Points) != 29 || h.X == nil || *h.X != 8 {
		t.Errorf("msg_rate history: %v", err)
	}
	// Several variants must be told apart.
	runs[3].Variant = "other"
	_, err = BuildHistory(runs, samples, HistoryQuery{Benchmark: "osu_bw", Metric: "msg_rate"})
	var amb *AmbiguousError
	if !errors.As(err, &amb) || amb.What != "variant" || !reflect.DeepEqual(amb.Choices, []string{"other", "pair"}) {
		t.Errorf("two variants: %v", err)
	}
	h, err = BuildHistory(runs, samples, HistoryQuery{Benchmark: "osu_bw", Metric: "msg_rate", Variant: "pair"})
	if err != nil || len(h.Points) != 28 {
		t.Errorf("--variant pair: %v", err)
	}
	for _, q := range []HistoryQuery{
		{Benchmark: "osu_bw", Variant: "pair", Metric: "nope"},
		{Benchmark: "osu_bw", Variant: "pair", Metric: "bandwidth", X: results.F(3)},
		{Benchmark: "hpl"},
	} {
		if _, err := BuildHistory(runs, samples, q); !errors.Is(err, ErrNoData) {
			t.Errorf("%+v: err %v, want ErrNoData", q, err)
		}
	}
}

func TestHistoryOfNoiseHasNoStep(t *testing.T) {
	// A stable history (alternating about one level, which no split
	// separates): no step, and the text says so.
	var runs []store.Run
	var samples []store.Sample
	for i := int64(1); i <= 25; i++ {
		runs = append(runs, store.Run{ID: i, Benchmark: "hpl", Status: results.StatusOK, IngestedAt: time.Date(2024, 1, int(i), 0, 0, 0, 0, time.UTC)})
		samples = append(samples, store.Sample{RunID: i, Sample: results.Sample{Metric: "gflops", Unit: "Gflops", Value: 2300 + 10*float64(i%2)}})
	}
	h, err := BuildHistory(runs, samples, HistoryQuery{Benchmark: "hpl"})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	h.WriteText(&buf)
	if len(h.Changes) != 0 || !strings.Contains(buf.String(), "no step at alpha 0.05") || h.X != nil {
		t.Errorf("changes %+v in a stable history:\n%s", h.Changes, buf.String())
	}
	// Runs with no start time are placed by when they were ingested.
	if h.Points[0].When != runs[0].IngestedAt {
		t.Errorf("first point at %v", h.Points[0].When)
	}
}

func TestProvenanceLists(t *testing.T) {
	a := &store.Run{Nodes: []string{"n1", "n2"}, ToolVer: "7.3", Tool: "osu_bw", RunnerVersion: "v1",
		Hosts: []results.Host{{MPI: "Open MPI 4.1.5", Modules: []string{"ofed/23"}}, {MPI: "Open MPI 4.1.5"}}}
	b := &store.Run{Nodes: []string{"n1", "n3"}, ToolVer: "7.4", Tool: "osu_bw", RunnerVersion: "v1",
		Hosts: []results.Host{{MPI: "Open MPI 4.1.6", Modules: []string{"ofed/24"}}, {MPI: "Open MPI 4.1.5",
			IB: []results.IBPort{{Device: "mlx5_0", RateGbps: 56}}}}}
	got := Provenance(a, b)
	want := []Difference{
		{Field: "mpi", Before: "Open MPI 4.1.5", After: "Open MPI 4.1.5, Open MPI 4.1.6"},
		{Field: "port rate", Before: "-", After: "mlx5_0 56 Gb/s"},
		{Field: "modules", Before: "ofed/23", After: "ofed/24"},
		{Field: "tool", Before: "osu_bw 7.3", After: "osu_bw 7.4"},
		{Field: "nodes", Before: "n1,n2", After: "n1,n3"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Provenance =\n%+v\nwant\n%+v", got, want)
	}
	if Provenance(a, a) != nil || Provenance(nil, b) != nil {
		t.Error("no difference expected")
	}
}

// TestHistoryFollowsOneConfiguration: a history never averages two
// configurations into one line — IMB's tables at 2 and 4 processes of the
// same runs' benchmark, or labelled setups — while the repeat index, which
// only numbers runs, never splits one.
func TestHistoryFollowsOneConfiguration(t *testing.T) {
	runs, samples := upgradeHistory(3)
	for i := range runs {
		runs[i].Tasks = 4
		runs[i].Params = map[string]string{"repeat": strconv.Itoa(i % 3)}
	}
	h, err := BuildHistory(runs, samples, HistoryQuery{Benchmark: "osu_bw", Metric: "msg_rate"})
	if err != nil || len(h.Points) != 29 {
		t.Fatalf("repeat indices split the history: %v", err)
	}
	for i := range runs {
		if i%2 == 1 {
			runs[i].Params["processes"] = "2"
		}
	}
	_, err = BuildHistory(runs, samples, HistoryQuery{Benchmark: "osu_bw", Metric: "msg_rate"})
	var amb *AmbiguousError
	if !errors.As(err, &amb) || amb.What != "config" || !reflect.DeepEqual(amb.Choices, []string{"processes=2", "processes=4"}) {
		t.Fatalf("two process counts: %v", err)
	}
	h, err = BuildHistory(runs, samples, HistoryQuery{Benchmark: "osu_bw", Metric: "msg_rate", Config: map[string]string{"processes": "2"}})
	if err != nil || len(h.Points) != 15 {
		t.Errorf("processes=2: %v", err)
	}
	if _, err := BuildHistory(runs, samples, HistoryQuery{Benchmark: "osu_bw", Metric: "msg_rate", Config: map[string]string{"processes": "3"}}); !errors.Is(err, ErrNoData) {
		t.Errorf("processes=3: err %v, want ErrNoData", err)
	}
}

// TestHistoryPicksTheOnlyConfiguration: a selection that leaves one
// configuration needs no --variant, whether it names a swept parameter
// (--config buf=16384, --label buf=16384) or a Slurm key of the sweep
// (ntasks_per_node=2, only in the variant's name); one that leaves
// several still lists them.
func TestHistoryPicksTheOnlyConfiguration(t *testing.T) {
	ctx := t.Context()
	a := newArchive(t)
	a.sweepRuns(3)
	for _, q := range []HistoryQuery{
		{Benchmark: "bw", Config: map[string]string{"buf": "16384"}},
		{Benchmark: "bw", Config: map[string]string{"param.buf": "16384"}},
		{Benchmark: "bw", Labels: map[string]string{"buf": "16384"}},
		{Benchmark: "bw", Config: map[string]string{"ntasks_per_node": "2"}},
		{Benchmark: "bw", Labels: map[string]string{"ntasks_per_node": "2"}},
	} {
		h, err := LoadHistory(ctx, a.DB, q)
		if err != nil {
			t.Errorf("history %+v: %v", q, err)
			continue
		}
		if len(h.Points) != 3 {
			t.Errorf("history %+v: %d points, want the configuration's 3 runs", q, len(h.Points))
		}
	}
	_, err := LoadHistory(ctx, a.DB, HistoryQuery{Benchmark: "bw"})
	var amb *AmbiguousError
	if !errors.As(err, &amb) || amb.What != "variant" || len(amb.Choices) != 4 {
		t.Errorf("history of four configurations: %v, want them listed", err)
	}
	_, err = LoadHistory(ctx, a.DB, HistoryQuery{Benchmark: "bw", Config: map[string]string{"buf": "1"}})
	if !errors.Is(err, ErrNoData) || !strings.Contains(err.Error(), "has the configuration buf=1") {
		t.Errorf("history of no configuration: %v", err)
	}
}

// TestHistoryFamily: histories shown together are one family: of 40
// noise histories some show a step each alone, none together, and the
// history with a real step keeps it. A history too short to test says
// so.
func TestHistoryFamily(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 11))
	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	build := func(vals []float64) *History {
		var runs []store.Run
		var samples []store.Sample
		for i, v := range vals {
			runs = append(runs, store.Run{ID: int64(i + 1), Benchmark: "osu_bw", Status: results.StatusOK, Start: start.AddDate(0, 0, i)})
			samples = append(samples, store.Sample{RunID: int64(i + 1), Sample: results.Sample{Metric: "bandwidth", Unit: "MB/s", Value: v}})
		}
		h, err := BuildHistory(runs, samples, HistoryQuery{Benchmark: "osu_bw", Threshold: 0.05})
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	var hs []*History
	alone := 0
	for range 40 {
		h := build(series(rng, 30, 1000, 0.03, -1, 1))
		if len(h.Changes) > 0 {
			alone++
		}
		hs = append(hs, h)
	}
	real := build(series(rng, 30, 1000, 0.03, 20, 0.8))
	hs = append(hs, real)
	if alone == 0 {
		t.Fatal("no noise history has a step alone: the family has nothing to control here")
	}
	HistoryFamily(hs)
	for i, h := range hs[:40] {
		if len(h.Changes) != 0 {
			t.Errorf("noise history %d: steps %+v in the family", i, h.Changes)
		}
	}
	if len(real.Changes) != 1 || real.Changes[0].Change != Worse || real.Changes[0].Index != 20 {
		t.Errorf("the real step: %+v", real.Changes)
	}
	t.Logf("noise histories with a step alone: %d of 40; together: none", alone)

	short := build([]float64{100, 100, 100, 100, 50, 50, 50})
	var buf bytes.Buffer
	short.WriteText(&buf)
	if short.Tested || len(short.Changes) != 0 || !strings.Contains(buf.String(), "no step tested: 7 run(s), and a change of level takes 8 to be tested at alpha 0.05") {
		t.Errorf("7 runs: tested %v, changes %+v:\n%s", short.Tested, short.Changes, buf.String())
	}
}
