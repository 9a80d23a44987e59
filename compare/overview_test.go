package compare

import (
	"math"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sbench/sbench/results"
	"github.com/sbench/sbench/store"
)

// overviewArchive is two systems measured daily for 120 days: alpha's
// osu_bw loses 11% on day 60, when its InfiniBand firmware changes;
// beta's stays; beta's HPL runs weekly; some runs fail.
func overviewArchive() ([]store.Run, []store.Sample, []store.Scalar) {
	rng := rand.New(rand.NewPCG(3, 4))
	var runs []store.Run
	var samples []store.Sample
	var scalars []store.Scalar
	id := int64(0)
	host := func(fw string) []results.Host {
		return []results.Host{{Hostname: "n1", Kernel: "6.1", IB: []results.IBPort{{Device: "mlx5_0", Port: 1, Firmware: fw}}}}
	}
	for day := range 120 {
		when := time.Date(2024, 1, 1, 2, 0, 0, 0, time.UTC).AddDate(0, 0, day)
		for _, sys := range []string{"alpha", "beta"} {
			id++
			fw, level := "20.31", 12000.0
			if sys == "alpha" && day >= 60 {
				fw, level = "20.35", 12000*0.89
			}
			r := store.Run{ID: id, System: sys, Campaign: "nightly", Variant: "inter", Benchmark: "osu_bw", Tool: "osu_bw",
				Labels: map[string]string{"system": sys}, Status: results.StatusOK, Start: when, JobID: "j", Step: "0", Hosts: host(fw)}
			if day%25 == 7 {
				r.Status, r.Error = results.StatusFailed, "srun: error"
			}
			runs = append(runs, r)
			if r.Status == results.StatusOK {
				for _, x := range []float64{1024, 1 << 20, 4 << 20} {
					v := level * x / (x + 8192) * (1 + 0.01*rng.NormFloat64())
					samples = append(samples, store.Sample{RunID: id, Sample: results.Sample{Metric: "bandwidth", Unit: "MB/s", X: results.F(x), XUnit: "bytes", Value: v}})
				}
			}
			if sys == "beta" && day%7 == 0 {
				id++
				runs = append(runs, store.Run{ID: id, System: sys, Campaign: "nightly", Variant: "n4", Benchmark: "hpl", Tool: "xhpl",
					Labels: map[string]string{"system": sys}, Status: results.StatusOK, Start: when.Add(time.Hour), Hosts: host("20.31")})
				scalars = append(scalars, store.Scalar{RunID: id, Scalar: results.Scalar{Name: "n", Value: 1000}},
					store.Scalar{RunID: id, Scalar: results.Scalar{Name: "gflops", Unit: "Gflops", Value: 900 * (1 + 0.01*rng.NormFloat64())}})
			}
		}
	}
	return runs, samples, scalars
}

func buildOverview(t *testing.T) *Overview {
	t.Helper()
	runs, samples, scalars := overviewArchive()
	b := NewOverviewBuilder(OverviewOptions{})
	for i := range runs {
		b.AddRun(&runs[i])
	}
	for i := range samples {
		b.AddSample(&samples[i])
	}
	for i := range scalars {
		b.AddScalar(&scalars[i])
	}
	byID := map[int64]*store.Run{}
	for i := range runs {
		byID[runs[i].ID] = &runs[i]
	}
	ov, err := b.Finish(func(ids []int64) (map[int64]*store.Run, error) {
		out := map[int64]*store.Run{}
		for _, id := range ids {
			out[id] = byID[id]
		}
		return out, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return ov
}

// TestOverview: a row per system, benchmark and key figure; the latest
// figure, the trend and the step with what changed across it; failures
// counted where they happened.
func TestOverview(t *testing.T) {
	ov := buildOverview(t)
	var got []string
	for _, r := range ov.Rows {
		got = append(got, r.System+"/"+r.Benchmark+"/"+r.What)
	}
	if want := []string{"alpha/osu_bw/peak bandwidth", "beta/hpl/gflops", "beta/osu_bw/peak bandwidth"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("rows %q, want %q", got, want)
	}
	alpha, hpl, beta := ov.Rows[0], ov.Rows[1], ov.Rows[2]
	if len(alpha.Steps) != 1 || alpha.Steps[0].Change != Worse || math.Abs(alpha.Steps[0].Delta+0.11) > 0.02 ||
		alpha.Steps[0].When.Format("2006-01-02") != "2024-03-01" {
		t.Fatalf("alpha's steps %+v, want one of -11%% on 2024-03-01", alpha.Steps)
	}
	if p := alpha.Steps[0].Provenance; len(p) == 0 || !strings.Contains(p[0].Field+p[0].Before+p[0].After, "20.35") {
		t.Errorf("alpha's step: provenance %+v, want the firmware", p)
	}
	if math.Abs(alpha.Trend+0.11) > 0.02 || alpha.Failed != 5 || alpha.Runs != 115 || alpha.Latest.When.Format("2006-01-02") != "2024-04-29" {
		t.Errorf("alpha: trend %.3f, failed %d, runs %d, latest %v", alpha.Trend, alpha.Failed, alpha.Runs, alpha.Latest.When)
	}
	if len(beta.Steps) != 0 || math.Abs(beta.Trend) > 0.01 || hpl.Runs != 18 || hpl.Unit != "Gflops" || len(hpl.Steps) != 0 {
		t.Errorf("beta: steps %+v trend %.3f; hpl %+v", beta.Steps, beta.Trend, hpl)
	}
	if len(alpha.Trace) != 115 || ov.Runs != 258 || ov.Failed != 10 || !reflect.DeepEqual(ov.Systems, []string{"alpha", "beta"}) {
		t.Errorf("trace %d points, overview %d runs, %d failed, systems %q", len(alpha.Trace), ov.Runs, ov.Failed, ov.Systems)
	}
	if again := buildOverview(t); !reflect.DeepEqual(again, ov) {
		t.Error("the same runs gave another overview")
	}
}

// TestOverviewTraceIsBounded: a long series is drawn from at most Points
// points, medians of equal spans.
func TestOverviewTraceIsBounded(t *testing.T) {
	rs := make([]*ovRun, 1000)
	for i := range rs {
		rs[i] = &ovRun{id: int64(i), when: time.Unix(int64(i), 0), fig: ovFigure{value: float64(i)}}
	}
	tr := trace(rs, 100)
	if len(tr) != 100 || tr[0].Value != 4.5 || tr[99].Value != 994.5 {
		t.Errorf("trace of 1000 runs: %d points, first %v, last %v", len(tr), tr[0], tr[len(tr)-1])
	}
}

// TestOverviewControlsTheFamily: the series of an overview are one
// family. Of 80 series of noise, tested one by one at 0.05 about four
// would show a step; together, none does, while the one series with a
// real step still shows it; and a series of seven runs, too short to
// test, shows none however large its jump.
func TestOverviewControlsTheFamily(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	b := NewOverviewBuilder(OverviewOptions{})
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	id := int64(0)
	add := func(variant string, day int, v float64) {
		id++
		r := store.Run{ID: id, Campaign: "nightly", Variant: variant, Benchmark: "osu_bw", Status: results.StatusOK, Start: t0.AddDate(0, 0, day)}
		b.AddRun(&r)
		b.AddSample(&store.Sample{RunID: id, Sample: results.Sample{Metric: "bandwidth", Unit: "MB/s", X: results.F(1 << 20), XUnit: "bytes", Value: v}})
	}
	noise, perSeries := 80, 0
	for s := range noise {
		var vals []float64
		for day := range 30 {
			v := 1000 * (1 + 0.03*rng.NormFloat64())
			vals = append(vals, v)
			add("noise"+strconv.Itoa(s), day, v)
		}
		if len(Steps(vals, StepOptions{})) > 0 {
			perSeries++
		}
	}
	for day := range 30 {
		level := 1000.0
		if day >= 20 {
			level = 800
		}
		add("step", day, level*(1+0.03*rng.NormFloat64()))
	}
	for day := range 7 {
		add("short", day, map[bool]float64{true: 1000, false: 300}[day < 4])
	}
	ov, err := b.Finish(nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("noise series with a step when each is tested alone: %d of %d", perSeries, noise)
	if perSeries == 0 {
		t.Fatalf("no noise series has a step of its own: the family has nothing to control here")
	}
	if ov.Tested != noise+1 {
		t.Errorf("%d series tested, want the %d of 30 runs", ov.Tested, noise+1)
	}
	for _, row := range ov.Rows {
		variant := row.Config[0]
		switch {
		case variant == "variant=step":
			if len(row.Steps) != 1 || row.Steps[0].Change != Worse || !row.Tested || row.P > 0.001 {
				t.Errorf("the real step: %+v, want one regression", row)
			}
		case variant == "variant=short":
			if len(row.Steps) != 0 || row.Tested {
				t.Errorf("7 runs: tested %v, steps %+v: want none", row.Tested, row.Steps)
			}
		case len(row.Steps) != 0:
			t.Errorf("%s: steps %+v in noise", variant, row.Steps)
		}
	}
}
