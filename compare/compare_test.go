package compare

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sbench/sbench/internal/golden"
	"github.com/sbench/sbench/results"
	"github.com/sbench/sbench/store"
)

// sideBuilder makes the runs and samples of one side.
type sideBuilder struct {
	Side
	next *int64
}

var t0 = time.Date(2024, 6, 1, 8, 0, 0, 0, time.UTC)

// newSides returns the builders of two sides named old and new, whose run
// ids follow on from each other.
func newSides(old, new string) (a, b *sideBuilder) {
	var id int64
	return newSide(old, &id), newSide(new, &id)
}

// mustBuild compares old with new under the default options, failing the
// test on an error.
func mustBuild(t *testing.T, old, new Side) *Result {
	t.Helper()
	res, err := Build(old, new, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func newSide(name string, next *int64) *sideBuilder {
	return &sideBuilder{Side: Side{Name: name}, next: next}
}

// run adds an ok run of benchmark with labels, and returns its id.
func (s *sideBuilder) run(benchmark, variant string, labels map[string]string) int64 {
	*s.next++
	id := *s.next
	s.Runs = append(s.Runs, store.Run{ID: id, Benchmark: benchmark, Variant: variant, Labels: labels,
		Status: results.StatusOK, Start: t0.Add(time.Duration(id) * time.Hour)})
	return id
}

func (s *sideBuilder) sample(run int64, metric, unit string, x, v float64) {
	s.Samples = append(s.Samples, store.Sample{RunID: run, Sample: results.Sample{
		Metric: metric, Unit: unit, X: results.F(x), XUnit: results.UnitBytes, Value: v}})
}

// osuCurve adds a bandwidth curve over sizes 1 … 2^(n-1) scaled by f.
func (s *sideBuilder) osuCurve(run int64, n int, f float64) {
	for i := range n {
		x := float64(int(1) << i)
		s.sample(run, "bandwidth", "MB/s", x, f*12000*x/(x+8192))
	}
}

// TestBuildOneRunEachSideIsNotJudged: one run a side is no evidence of a
// change, however large: every row is "~" with the reason and the number
// of runs that would do, and the gate does not trip; --threshold-only
// asks for the change alone to decide, and says so.
func TestBuildOneRunEachSideIsNotJudged(t *testing.T) {
	a, b := newSides("run=a", "run=b")
	a.osuCurve(a.run("osu_bw", "", map[string]string{"run": "a"}), 4, 1)
	b.osuCurve(b.run("osu_bw", "", map[string]string{"run": "b"}), 4, 0.8)
	res := mustBuild(t, a.Side, b.Side)
	if len(res.Tables) != 1 || len(res.Tables[0].Config) != 0 {
		t.Fatalf("tables %+v: want one, the run label being what is compared", res.Tables)
	}
	tb := res.Tables[0]
	if tb.Better != "higher" || len(tb.Rows) != 4 {
		t.Fatalf("table %+v", tb)
	}
	for _, r := range tb.Rows {
		if r.Change != Same || r.Tested || r.P != nil || r.Delta == nil || math.Abs(*r.Delta+0.2) > 1e-9 ||
			r.Note != "n=1+1: too few runs to judge; repeat ≥ 4×" {
			t.Errorf("row %+v: want -20%% untested, not judged, with the reason", r)
		}
	}
	if g := tb.GeoMean; g == nil || math.Abs(g.Delta+0.2) > 1e-9 || g.Rows != 4 {
		t.Errorf("geomean %+v", g)
	}
	if res.Regressions() != 0 || res.Untestable() != 4 || res.Family != 0 {
		t.Errorf("Regressions = %d, Untestable = %d, Family = %d: want 0, 4, 0", res.Regressions(), res.Untestable(), res.Family)
	}
	var buf bytes.Buffer
	res.WriteText(&buf)
	for _, want := range []string{"~ n=1+1: too few runs to judge; repeat ≥ 4×\n",
		"no regression beyond 5% in 4 row(s); 0 better; 4 row(s) with too few runs to judge (repeat ≥ 4× to test them)\n"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("text does not say %q:\n%s", want, buf.String())
		}
	}
	// At alpha 0.01 it takes 5 runs a side.
	o := DefaultOptions()
	o.Alpha = 0.01
	res, _ = Build(a.Side, b.Side, o)
	if n := res.Tables[0].Rows[0].Note; n != "n=1+1: too few runs to judge; repeat ≥ 5×" {
		t.Errorf("alpha 0.01: note %q", n)
	}

	o = DefaultOptions()
	o.ThresholdOnly = true
	res, err := Build(a.Side, b.Side, o)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res.Tables[0].Rows {
		if r.Change != Worse || r.Tested || !strings.Contains(r.Note, "judged by the change alone (--threshold-only)") {
			t.Errorf("--threshold-only: row %+v: want an untested regression that says so", r)
		}
	}
	buf.Reset()
	res.WriteText(&buf)
	for _, want := range []string{"-20.00% (n=1+1)*  REGRESSION\n", "REGRESSION: 4 of 4 row(s) worse by more than 5% (4 of them untested, by the change alone)",
		"* no p-value: too few runs", "rows too few to test judged by the change alone (--threshold-only)"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("--threshold-only: text does not say %q:\n%s", want, buf.String())
		}
	}
	if res.Regressions() != 4 {
		t.Errorf("--threshold-only: Regressions = %d, want 4", res.Regressions())
	}
}

// TestBuildThresholdAndDirection: a significant change counts beyond the
// threshold only, in the direction the unit says; each side has five runs
// of the same values, which is as significant as 5+5 runs get.
func TestBuildThresholdAndDirection(t *testing.T) {
	a, b := newSides("old", "new")
	var ra, rb []int64
	for range 5 {
		ra, rb = append(ra, a.run("mix", "", nil)), append(rb, b.run("mix", "", nil))
	}
	for _, c := range []struct {
		metric, unit string
		old, new     float64
	}{
		{"bw_small_drop", "MB/s", 100, 96},         // -4% within 5%
		{"bw_at_threshold", "MB/s", 100, 95},       // exactly 5% is not beyond
		{"bw_drop", "MB/s", 100, 90},               // -10%
		{"bw_gain", "MB/s", 100, 110},              // +10%
		{"lat_up", "us", 10, 12},                   // latency up is worse
		{"lat_down", "us", 10, 8},                  // and down better
		{"count", "msgs", 10, 20},                  // no direction: never a regression
		{"zero_old", "us", 0, 1},                   // no relative change from 0
		{"zero_both", "us", 0, 0},                  // nothing moved
		{"gflops", "Gflops", 1000, 700},            // HPL
		{"time_s", "s", 100, 100.0000000001},       // rounding noise
		{"bw_up_float", "MB/s", 3.71, 3.71 * 1.05}, // 5% up, in floating point
	} {
		for i := range ra {
			a.sample(ra[i], c.metric, c.unit, 1, c.old)
			b.sample(rb[i], c.metric, c.unit, 1, c.new)
		}
	}
	res := mustBuild(t, a.Side, b.Side)
	want := map[string]Change{"bw_small_drop": Same, "bw_at_threshold": Same, "bw_drop": Worse, "bw_gain": Better,
		"lat_up": Worse, "lat_down": Better, "count": Changed, "zero_old": Changed, "zero_both": Same, "gflops": Worse,
		"time_s": Same, "bw_up_float": Same}
	for _, tb := range res.Tables {
		if got := tb.Rows[0].Change; got != want[tb.Metric] {
			t.Errorf("%s: %s, want %s", tb.Metric, got, want[tb.Metric])
		}
	}
	if len(res.Tables) != len(want) {
		t.Errorf("%d tables, want %d", len(res.Tables), len(want))
	}
	// A threshold of 0 makes any worse change a regression.
	o := DefaultOptions()
	o.Threshold = 0
	res, _ = Build(a.Side, b.Side, o)
	if n := res.Regressions(); n != 5 {
		t.Errorf("threshold 0: %d regressions, want 5 (small drop, drop at 5%%, drop, latency up, gflops)", n)
	}
	// Options pick metrics.
	o = DefaultOptions()
	o.Metrics = []string{"lat_up", "lat_down"}
	res, _ = Build(a.Side, b.Side, o)
	if len(res.Tables) != 2 {
		t.Errorf("--metric lat_up,lat_down: %d tables", len(res.Tables))
	}
	// One run a side judges nothing; --threshold-only judges as the test
	// would have, by the change alone.
	one := func(s *sideBuilder) Side {
		side := s.Side
		side.Runs = side.Runs[:1]
		return side
	}
	res = mustBuild(t, one(a), one(b))
	if res.Count(Same) != len(want) {
		t.Errorf("one run a side: %d rows the same, want all %d", res.Count(Same), len(want))
	}
	o = DefaultOptions()
	o.ThresholdOnly = true
	res, _ = Build(one(a), one(b), o)
	for _, tb := range res.Tables {
		if r := tb.Rows[0]; r.Change != want[tb.Metric] || r.Old.N != 1 {
			t.Errorf("--threshold-only, one run a side: %s: %s (n=%d), want %s", tb.Metric, r.Change, r.Old.N, want[tb.Metric])
		}
	}
}

// repeats adds n runs per side of one osu_bw point with relative noise,
// as a campaign with repeats = n records them: the repeat index in each
// run's parameters, beside the sweep's.
func repeats(rng *rand.Rand, n int, oldLevel, newLevel, noise float64) (Side, Side) {
	a, b := newSides("old", "new")
	for k := range n {
		for _, s := range []*sideBuilder{a, b} {
			level := oldLevel
			if s == b {
				level = newLevel
			}
			run := s.run("osu_bw", "ntasks_per_node=1", nil)
			r := &s.Runs[len(s.Runs)-1]
			r.Params = map[string]string{"repeat": strconv.Itoa(k), "ntasks_per_node": "1"}
			r.Tasks = 2
			s.sample(run, "bandwidth", "MB/s", 1<<20, level*(1+noise*rng.NormFloat64()))
		}
	}
	return a.Side, b.Side
}

// TestBuildPoolsRepeats: the repeat index (and HPL's row number, and the
// dates a tool prints) only number runs; runs that differ in nothing else
// are the repeats of one row, not one table each.
func TestBuildPoolsRepeats(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	a, b := repeats(rng, 5, 1000, 1000, 0.02)
	for i := range a.Runs {
		a.Runs[i].Params["date"] = "Mon Jun  3 10:0" + strconv.Itoa(i) + ":00 2024"
	}
	res := mustBuild(t, a, b)
	if len(res.Tables) != 1 || len(res.Tables[0].Rows) != 1 {
		t.Fatalf("%d tables, want one: %+v", len(res.Tables), res.Tables)
	}
	if tb := res.Tables[0]; len(tb.Config) != 0 {
		t.Errorf("config %q: the repeat index is not a configuration", tb.Config)
	}
	r := res.Tables[0].Rows[0]
	if r.Old.N != 5 || r.New.N != 5 || !r.Tested {
		t.Errorf("row %+v: want n=5+5, tested", r)
	}
	var buf bytes.Buffer
	res.WriteText(&buf)
	if !strings.Contains(buf.String(), "n=5+5") {
		t.Errorf("table does not show n=5+5:\n%s", buf.String())
	}

	// HPL: three T/V rows of the same N, NB, P, Q are three repeats.
	o, n := newSides("old", "new")
	for k := range 3 {
		for _, s := range []*sideBuilder{o, n} {
			run := s.run("hpl", "", nil)
			r := &s.Runs[len(s.Runs)-1]
			r.Tool = "xhpl"
			r.Params = map[string]string{"test": strconv.Itoa(k + 1), "N": "5000", "NB": "160", "P": "1", "Q": "2",
				"N.list": "5000 5000 5000", "pdgesv_start": "Mon Jun  3 10:0" + strconv.Itoa(k) + ":00 2024"}
			s.Scalars = append(s.Scalars, store.Scalar{RunID: run, Scalar: results.Scalar{Name: "gflops", Unit: "Gflops", Value: 8 + float64(k)/10}})
		}
	}
	res = mustBuild(t, o.Side, n.Side)
	if len(res.Tables) != 1 || res.Tables[0].Rows[0].Old.N != 3 {
		t.Errorf("HPL rows: %d tables, first %+v; want one table with n=3+3", len(res.Tables), res.Tables[0])
	}
}

// TestBuildKeepsProcessCountsApart: IMB prints one table per process count
// in one run; those are configurations, never repeats of each other.
func TestBuildKeepsProcessCountsApart(t *testing.T) {
	a, b := newSides("old", "new")
	for _, s := range []*sideBuilder{a, b} {
		for _, np := range []string{"2", "4"} {
			run := s.run("imb_allreduce", "", nil)
			r := &s.Runs[len(s.Runs)-1]
			r.Tool, r.Tasks = "imb", 4
			r.Params = map[string]string{"processes": np, "date": s.Name}
			v := 2699.36
			if np == "4" {
				v = 3790.49
			}
			s.sample(run, "latency", "us", 4<<20, v)
		}
	}
	res := mustBuild(t, a.Side, b.Side)
	if len(res.Tables) != 2 {
		t.Fatalf("%d tables, want one per process count", len(res.Tables))
	}
	for i, want := range []string{"processes=2", "processes=4"} {
		tb := res.Tables[i]
		if len(tb.Config) != 1 || tb.Config[0] != want || tb.Rows[0].Old.N != 1 || tb.Rows[0].Change != Same {
			t.Errorf("table %d: config %q rows %+v, want [%s] n=1+1 unchanged", i, tb.Config, tb.Rows, want)
		}
	}
}

func TestBuildRepeatsAreTested(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	// 5+5 runs, 10% drop, 1% noise: significant.
	a, b := repeats(rng, 5, 1000, 900, 0.01)
	res := mustBuild(t, a, b)
	r := res.Tables[0].Rows[0]
	if !r.Tested || *r.P >= 0.05 || r.Change != Worse || r.Old.N != 5 || r.New.N != 5 {
		t.Errorf("10%% drop over 5+5 runs: %+v", r)
	}
	// 5+5 runs, 10% drop, 30% noise: the test cannot tell; "~".
	a, b = repeats(rng, 5, 1000, 900, 0.3)
	res = mustBuild(t, a, b)
	r = res.Tables[0].Rows[0]
	if !r.Tested || *r.P < 0.05 || r.Change != Same {
		t.Errorf("10%% drop in 30%% noise over 5+5 runs: %+v, want not significant", r)
	}
	var buf bytes.Buffer
	res.WriteText(&buf)
	if !strings.Contains(buf.String(), "~ (p=") {
		t.Errorf("a non-significant tested row is not shown as ~:\n%s", buf.String())
	}
	// 3+3 runs cannot reach 0.05: no p-value, no verdict, whatever the
	// change.
	a, b = repeats(rng, 3, 1000, 800, 0.01)
	res = mustBuild(t, a, b)
	r = res.Tables[0].Rows[0]
	if r.Tested || r.Change != Same || r.Old.N != 3 || r.Note != "n=3+3: too few runs to judge; repeat ≥ 4×" {
		t.Errorf("20%% drop over 3+3 runs: %+v, want untested and not judged", r)
	}
	// 3+5 can.
	a, b = repeats(rng, 5, 1000, 800, 0.01)
	a.Runs = a.Runs[:3]
	res = mustBuild(t, a, b)
	if r = res.Tables[0].Rows[0]; !r.Tested || r.Change != Worse || r.Old.N != 3 || r.New.N != 5 {
		t.Errorf("20%% drop over 3+5 runs: %+v, want a tested regression", r)
	}
}

// TestBuildRunIsTheUnit: a run's repeats within it are one value, the
// median of them: ten repeats in each of two runs are n=1+1, not 10+10,
// and identical runs whose repeats differ are not told apart.
func TestBuildRunIsTheUnit(t *testing.T) {
	a, b := newSides("old", "new")
	rng := rand.New(rand.NewPCG(5, 5))
	for _, s := range []*sideBuilder{a, b} {
		run := s.run("osu_bw", "", nil)
		for range 10 {
			// The new run's repeats all 10% lower: as different as ten
			// repeats can be, and still one run against one.
			level := 1000.0
			if s == b {
				level = 900
			}
			s.sample(run, "bandwidth", "MB/s", 1<<20, level*(1+0.001*rng.NormFloat64()))
		}
	}
	res := mustBuild(t, a.Side, b.Side)
	r := res.Tables[0].Rows[0]
	if r.Old.N != 1 || r.New.N != 1 || r.Tested || r.Change != Same || res.Regressions() != 0 {
		t.Errorf("row %+v: want n=1+1 untested (the repeats of one run are not runs)", r)
	}
	if want := Median(slices.Collect(func(yield func(float64) bool) {
		for _, s := range a.Samples {
			if !yield(s.Value) {
				return
			}
		}
	})); r.Old.Median != want || r.Old.Min != want || r.Old.Max != want {
		t.Errorf("old %+v: want the median of the run's repeats, %v", r.Old, want)
	}
	// Samples of runs interleaved: each run is still one value.
	a2, b2 := newSides("old", "new")
	for range 4 {
		a2.run("osu_bw", "", nil)
		b2.run("osu_bw", "", nil)
	}
	for rep := range 3 {
		for i := range 4 {
			a2.sample(a2.Runs[i].ID, "bandwidth", "MB/s", 1<<20, 1000+float64(i)+float64(rep)/10)
			b2.sample(b2.Runs[i].ID, "bandwidth", "MB/s", 1<<20, 800+float64(i)+float64(rep)/10)
		}
	}
	res = mustBuild(t, a2.Side, b2.Side)
	if r := res.Tables[0].Rows[0]; r.Old.N != 4 || r.Old.Min != 1000.1 || r.Old.Max != 1003.1 || !r.Tested || r.Change != Worse {
		t.Errorf("interleaved: row %+v old %+v: want 4 runs, each the median of its 3 repeats, and the drop tested", r, r.Old)
	}
}

// TestCompareNoiseOnlyFalsePositives: two sides drawn from one distribution
// give a regression in no more than alpha of seeded trials, even with no
// threshold to hide behind.
func TestCompareNoiseOnlyFalsePositives(t *testing.T) {
	const trials = 400
	o := DefaultOptions()
	o.Threshold = 0
	for _, n := range []int{5, 10} {
		regressions, significant := 0, 0
		for seed := range uint64(trials) {
			rng := rand.New(rand.NewPCG(seed, uint64(n)))
			a, b := repeats(rng, n, 1000, 1000, 0.02)
			res, err := Build(a, b, o)
			if err != nil {
				t.Fatal(err)
			}
			r := res.Tables[0].Rows[0]
			if *r.P < o.Alpha {
				significant++
			}
			if res.Regressions() > 0 {
				regressions++
			}
		}
		t.Logf("%d+%d repeats of noise, %d trials: significant in %d (%.1f%%), regression in %d (%.1f%%)",
			n, n, trials, significant, 100*float64(significant)/trials, regressions, 100*float64(regressions)/trials)
		if regressions > trials*5/100 {
			t.Errorf("%d+%d: a regression in %d of %d noise-only trials, want ≤ 5%%", n, n, regressions, trials)
		}
		// Two-sided at 0.05: about 5% significant, either way.
		if significant > trials*8/100 {
			t.Errorf("%d+%d: significant in %d of %d trials, want about 5%%", n, n, significant, trials)
		}
	}
}

// TestBuildControlsTheFamily: a row's p-value is adjusted for every
// tested row of the comparison. At 5+5 runs one row as separated as it
// can be (p = 2/252) among ten is not significant (q = 0.079); three
// such rows are (q = 0.026).
func TestBuildControlsTheFamily(t *testing.T) {
	for _, c := range []struct {
		dropped int
		worse   int
	}{{1, 0}, {3, 3}} {
		a, b := newSides("old", "new")
		rng := rand.New(rand.NewPCG(9, 9))
		for range 5 {
			ra, rb := a.run("osu_bw", "", nil), b.run("osu_bw", "", nil)
			for i := range 10 {
				x := float64(int(1) << i)
				level := 1000.0
				a.sample(ra, "bandwidth", "MB/s", x, level*(1+0.001*rng.NormFloat64()))
				if i < c.dropped {
					level = 900 // 10% lower, in every new run: p = 2/252
				}
				b.sample(rb, "bandwidth", "MB/s", x, level*(1+0.001*rng.NormFloat64()))
			}
		}
		res := mustBuild(t, a.Side, b.Side)
		r := res.Tables[0].Rows[0]
		if res.Family != 10 || !r.Tested || math.Abs(*r.P-2.0/252) > 1e-12 || math.Abs(*r.Q-*r.P*10/float64(c.dropped)) > 1e-12 {
			t.Errorf("%d dropped: family %d, row %+v p %v q %v: want p = 2/252 and q = 10p/%d", c.dropped, res.Family, r, *r.P, *r.Q, c.dropped)
		}
		if n := res.Regressions(); n != c.worse {
			t.Errorf("%d of 10 rows 10%% lower: %d regressions, want %d", c.dropped, n, c.worse)
		}
	}
}

func TestBuildConfigurationKeys(t *testing.T) {
	a, b := newSides("fabric=ib", "fabric=eth")
	// Both sides ran two variants; the fabric label is what is compared;
	// a "site" label both share; a "host" label only the new side has.
	for _, v := range []string{"ppn=1", "ppn=2"} {
		a.osuCurve(a.run("osu_bw", v, map[string]string{"fabric": "ib", "site": "lab"}), 2, 1)
		b.osuCurve(b.run("osu_bw", v, map[string]string{"fabric": "eth", "site": "lab", "host": "n1"}), 3, 0.5)
	}
	res := mustBuild(t, a.Side, b.Side)
	if len(res.Tables) != 2 {
		t.Fatalf("%d tables, want one per variant", len(res.Tables))
	}
	for i, v := range []string{"variant=ppn=1", "variant=ppn=2"} {
		tb := res.Tables[i]
		if len(tb.Config) != 1 || tb.Config[0] != v {
			t.Errorf("table %d config %q, want [%s]", i, tb.Config, v)
		}
		if len(tb.Rows) != 3 || tb.Rows[2].Change != Missing || tb.Rows[2].Old != nil {
			t.Errorf("table %d rows %+v: want the third size only on the new side", i, tb.Rows)
		}
	}
	if len(res.Warnings) != 2 || !strings.Contains(res.Warnings[0], "0 row(s) only in fabric=ib, 1 only in fabric=eth") {
		t.Errorf("warnings %q", res.Warnings)
	}
}

func TestBuildPairsAndTagsStayApart(t *testing.T) {
	a, b := newSides("old", "new")
	ra, rb := a.run("osu_bw", "", nil), b.run("osu_bw", "", nil)
	for _, s := range []*sideBuilder{a, b} {
		r := ra
		if s == b {
			r = rb
		}
		for _, dir := range []string{"n1->n2", "n2->n1"} {
			s.Samples = append(s.Samples, store.Sample{RunID: r, Sample: results.Sample{Metric: "bandwidth", Unit: "MB/s",
				X: results.F(8), XUnit: results.UnitBytes, Value: 100, Pair: []int{0, 1}, Tags: map[string]string{"direction": dir}}})
		}
	}
	res := mustBuild(t, a.Side, b.Side)
	if len(res.Tables) != 2 || res.Tables[0].Config[0] != "direction=n1->n2" || res.Tables[0].Config[1] != "pair=0:1" ||
		res.Tables[0].Rows[0].Old.N != 1 {
		t.Errorf("tables %+v: want one per direction, not pooled", res.Tables)
	}
}

func TestBuildLeavesOutRunsThatAreNotOK(t *testing.T) {
	var id int64
	a, b := newSide("old", &id), newSide("new", &id)
	a.osuCurve(a.run("osu_bw", "", nil), 2, 1)
	bad := b.run("osu_bw", "", nil)
	b.Runs[0].Status = results.StatusInvalid
	b.osuCurve(bad, 2, 0.1)
	// Four failed runs, one of them out of order: one warning lists them
	// sorted and compressed.
	for _, n := range []int{3, 4, 5, 8} {
		id = int64(n)
		b.run("osu_bw", "", nil)
		b.Runs[len(b.Runs)-1].Status = results.StatusFailed
	}
	b.Runs[1], b.Runs[4] = b.Runs[4], b.Runs[1]
	id = 20
	b.osuCurve(b.run("osu_bw", "", nil), 2, 1)
	res := mustBuild(t, a.Side, b.Side)
	want := "new: failed runs 4-6,9 and invalid run 2 left out, only ok runs are compared"
	if res.Regressions() != 0 || len(res.New.Excluded) != 5 || !slices.Contains(res.New.Excluded, bad) ||
		len(res.Warnings) != 1 || res.Warnings[0] != want {
		t.Errorf("result %+v: want the runs that are not ok left out with one warning %q", res, want)
	}
	// Only bad runs on a side: nothing to compare.
	b.Runs = b.Runs[:1]
	if _, err := Build(a.Side, b.Side, DefaultOptions()); !errors.Is(err, ErrNoData) {
		t.Errorf("no ok run on a side: %v, want ErrNoData", err)
	}
}

func TestBuildNothingInCommon(t *testing.T) {
	a, b := newSides("old", "new")
	a.osuCurve(a.run("osu_bw", "", nil), 2, 1)
	b.sample(b.run("osu_latency", "", nil), "latency", "us", 1, 2)
	_, err := Build(a.Side, b.Side, DefaultOptions())
	if !errors.Is(err, ErrNoData) || !strings.Contains(err.Error(), "measured on both sides") {
		t.Errorf("err %v", err)
	}
}

func TestBuildScalarsCompareButDoNotDuplicateSamples(t *testing.T) {
	a, b := newSides("old", "new")
	for _, s := range slices.Repeat([]*sideBuilder{a, b}, 4) {
		r := s.run("hpl", "", nil)
		f := 1.0
		if s == b {
			f = 0.5
		}
		s.Samples = append(s.Samples, store.Sample{RunID: r, Sample: results.Sample{Metric: "gflops", Unit: "Gflops", Value: 1000 * f}})
		s.Scalars = append(s.Scalars,
			store.Scalar{RunID: r, Scalar: results.Scalar{Name: "gflops", Unit: "Gflops", Value: 1000 * f}},
			store.Scalar{RunID: r, Scalar: results.Scalar{Name: "time_s", Unit: "s", Value: 100 / f}},
			store.Scalar{RunID: r, Scalar: results.Scalar{Name: "n", Value: 20000}})
	}
	res := mustBuild(t, a.Side, b.Side)
	if len(res.Tables) != 2 || res.Tables[0].Metric != "gflops" || res.Tables[0].Rows[0].Old.N != 4 ||
		res.Tables[1].Metric != "time_s" || res.Tables[1].Rows[0].Change != Worse {
		t.Errorf("tables %+v: want gflops (once per run) and time_s, not n", res.Tables)
	}
}

// goldenResult is a comparison with something of everything: tested and
// untested rows, a table per variant, a row on one side only, a
// non-significant change and a warning.
func goldenResult(t *testing.T) *Result {
	t.Helper()
	rng := rand.New(rand.NewPCG(42, 42))
	a, b := newSides("fabric=ib", "fabric=ib,ofed=24.04")
	for range 5 {
		ra := a.run("pingpong", "ppn=1", map[string]string{"fabric": "ib"})
		rb := b.run("pingpong", "ppn=1", map[string]string{"fabric": "ib", "ofed": "24.04"})
		for _, x := range []float64{1, 8, 1024} {
			a.sample(ra, "latency", "us", x, (1.5+x/2000)*(1+0.01*rng.NormFloat64()))
			b.sample(rb, "latency", "us", x, (1.5+x/2000)*(1+0.01*rng.NormFloat64())*map[float64]float64{1: 1.2, 8: 1, 1024: 0.9}[x])
		}
	}
	a.osuCurve(a.run("osu_bw", "", map[string]string{"fabric": "ib"}), 3, 1)
	b.osuCurve(b.run("osu_bw", "", map[string]string{"fabric": "ib", "ofed": "24.04"}), 4, 0.97)
	bad := b.run("hpl", "", map[string]string{"fabric": "ib"})
	b.Runs[len(b.Runs)-1].Status = results.StatusFailed
	_ = bad
	res := mustBuild(t, a.Side, b.Side)
	return res
}

func TestWriteTextGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := goldenResult(t).WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "compare.txt"), buf.Bytes())
}

func TestWriteJSONGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := goldenResult(t).WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "compare.json"), buf.Bytes())
}

func TestFormatting(t *testing.T) {
	for _, c := range []struct {
		x    float64
		unit string
		want string
	}{{1, "bytes", "1 B"}, {1024, "bytes", "1 KiB"}, {1536, "bytes", "1536 B"}, {4 << 20, "bytes", "4 MiB"}, {1 << 30, "bytes", "1 GiB"}, {16, "ranks", "16"}} {
		if got := formatX(&c.x, c.unit); got != c.want {
			t.Errorf("formatX(%v %s) = %q, want %q", c.x, c.unit, got, c.want)
		}
	}
	for _, c := range []struct {
		v    float64
		want string
	}{{0, "0"}, {4.64, "4.640"}, {18.95, "18.95"}, {141.94, "141.9"}, {3935.52, "3936"}, {0.01234, "0.0123"}, {2e-5, "2e-05"}, {-3.5, "-3.500"}, {1.5e10, "1.5e+10"}} {
		if got := formatValue(c.v); got != c.want {
			t.Errorf("formatValue(%v) = %q, want %q", c.v, got, c.want)
		}
	}
	if s := signedPct(-0.20043); s != "-20.04%" {
		t.Errorf("signedPct = %q", s)
	}
	if s := signedPct(-0.000001); s != "0.00%" && s != "+0.00%" {
		t.Errorf("signedPct(-0.000001) = %q", s)
	}
}

// TestBuildOneTablePerQuantity: a figure repeated in the tool's own unit
// (IMB's bandwidth_imb beside bandwidth) is not compared twice, unless
// asked for by name.
func TestBuildOneTablePerQuantity(t *testing.T) {
	a, b := newSides("old", "new")
	for _, s := range []*sideBuilder{a, b} {
		run := s.run("imb_pingpong", "v", nil)
		s.sample(run, "bandwidth", "MB/s", 1<<20, 6000)
		s.sample(run, "bandwidth_imb", "Mbytes/sec", 1<<20, 6000)
	}
	res := mustBuild(t, a.Side, b.Side)
	if len(res.Tables) != 1 || res.Tables[0].Metric != "bandwidth" {
		t.Errorf("%d tables (%+v), want bandwidth only", len(res.Tables), res.Tables)
	}
	o := DefaultOptions()
	o.Metrics = []string{"bandwidth_imb"}
	if res, err := Build(a.Side, b.Side, o); err != nil || len(res.Tables) != 1 || res.Tables[0].Metric != "bandwidth_imb" {
		t.Errorf("--metric bandwidth_imb: %v", err)
	}
}
