package compare

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/sbench/sbench/results"
	"github.com/sbench/sbench/store"
)

// The seeded trials: how often the gate (Regressions() > 0) trips on two
// identical campaigns, and how often it catches a real slowdown, through
// Build — the accumulators sbench compare feeds — on a synthetic campaign
// that is noisy the way a cluster is.
//
// The campaign is four benchmarks (two bandwidths, two latencies) of 20
// message sizes each, one run per benchmark and repeat, three samples per
// size in each run. A value is
//
//	base(size) · run · row · sample
//
// where, all independent:
//   - run = exp(σ·Z) is the run's own conditions (its nodes, the time of
//     day, the neighbours), shared by every size and sample of the run;
//     and a share of runs is disturbed as a whole — a noisy neighbour —
//     slower by a heavy-tailed factor exp(−min(0.2·|C|, 2)), C standard
//     Cauchy (median 0.82, one in six below 0.5);
//   - row = exp(0.02·Z), the size's own noise in that run, and one row in
//     50 slower by the same heavy-tailed factor (a congested moment);
//   - sample = exp(0.005·Z), a repeat within the run, and one sample in
//     100 slower by exp(−min(|C|, 3)) (a stalled iteration).
//
// "Slower" is lower for a bandwidth and higher for a latency. Two models:
// cluster, σ = 3% run to run and one run in 100 disturbed (dedicated
// nodes); harsh, σ = 5% and one in 20 (a shared machine). The slowdown
// trials make one benchmark 20% slower on the new side (bandwidth ÷ 1.2,
// latency × 1.2), a different one each trial.
//
// At 5+5 runs a Mann-Whitney p-value is at least 2/252 = 0.0079 (the
// sides fully apart) and 0.0159 with one run out of place; over a family
// of 80 rows Benjamini–Hochberg needs about 13 rows at the first to
// reject, and 26 at the second. A slowdown is caught when its runs stand
// apart from the old ones at most sizes: at σ = 3% nearly always, at 5%
// (20% being 3.6σ) in about 87% of trials, and a disturbed old run hides
// it from every size of its benchmark at once.
type trialCampaign struct {
	rng *rand.Rand
	id  int64
	// runSD is the run-to-run spread (of the log); disturbed the share
	// of runs disturbed as a whole.
	runSD, disturbed float64
}

var trialBenchmarks = []struct{ name, metric, unit string }{
	{"bw", "bandwidth", "MB/s"},
	{"osu_bw", "bandwidth", "MB/s"},
	{"latency", "latency", "us"},
	{"osu_latency", "latency", "us"},
}

const trialSizes = 20

// trialXs are the sizes, 1 B … 512 KiB; trialX points to each, shared by
// every sample (Build only reads them).
var trialXs, trialX = func() ([]float64, []*float64) {
	xs, ps := make([]float64, trialSizes), make([]*float64, trialSizes)
	for i := range xs {
		xs[i] = float64(int(1) << i)
		ps[i] = &xs[i]
	}
	return xs, ps
}()

// slower returns v made slower by factor f ≤ 1 for a metric of unit.
func slower(v, f float64, unit string) float64 {
	if results.BetterFor(unit) == results.BetterLower {
		return v / f
	}
	return v * f
}

// side makes runs runs of every benchmark; slow names the benchmark made
// 20% slower ("" for none).
func (c *trialCampaign) side(name string, runs int, slow string) Side {
	s := Side{Name: name, Samples: make([]store.Sample, 0, len(trialBenchmarks)*runs*trialSizes*3)}
	for _, b := range trialBenchmarks {
		for rep := range runs {
			c.id++
			s.Runs = append(s.Runs, store.Run{ID: c.id, Campaign: "trial", Benchmark: b.name, Status: results.StatusOK,
				Params: map[string]string{"repeat": strconv.Itoa(rep)}, Tasks: 2})
			run := math.Exp(c.runSD * c.rng.NormFloat64())
			if c.rng.Float64() < c.disturbed {
				run = slower(run, math.Exp(-math.Min(0.2*math.Abs(cauchy(c.rng)), 2)), b.unit)
			}
			if b.name == slow {
				run = slower(run, 1/1.2, b.unit)
			}
			for i, x := range trialXs {
				base := 12000 * x / (x + 8192)
				if b.metric == "latency" {
					base = 1.5 + x/10000
				}
				row := math.Exp(0.02 * c.rng.NormFloat64())
				if c.rng.Float64() < 0.02 {
					row = slower(row, math.Exp(-math.Min(0.2*math.Abs(cauchy(c.rng)), 2)), b.unit)
				}
				for range 3 {
					v := base * run * row * math.Exp(0.005*c.rng.NormFloat64())
					if c.rng.Float64() < 0.01 {
						v = slower(v, math.Exp(-math.Min(math.Abs(cauchy(c.rng)), 3)), b.unit)
					}
					s.Samples = append(s.Samples, store.Sample{RunID: c.id, Sample: results.Sample{Metric: b.metric, Unit: b.unit,
						X: trialX[i], XUnit: results.UnitBytes, Value: v}})
				}
			}
		}
	}
	return s
}

// noiseModel is what varies between the trials' models.
type noiseModel struct{ runSD, disturbed float64 }

// cauchy draws a standard Cauchy variate: heavy tails, no mean.
func cauchy(rng *rand.Rand) float64 { return math.Tan(math.Pi * (rng.Float64() - 0.5)) }

// trial compares two campaigns of runs runs each, the new one with
// benchmark slow made slower, and returns the result.
func trial(t *testing.T, m noiseModel, seed uint64, runs int, slow string, o Options) *Result {
	t.Helper()
	c := &trialCampaign{rng: rand.New(rand.NewPCG(seed, uint64(runs))), runSD: m.runSD, disturbed: m.disturbed}
	old, new := c.side("old", runs, ""), c.side("new", runs, slow)
	res, err := Build(old, new, o)
	if err != nil {
		t.Fatal(err)
	}
	if rows := res.RowCount(); rows != len(trialBenchmarks)*trialSizes {
		t.Fatalf("%d rows, want %d", rows, len(trialBenchmarks)*trialSizes)
	}
	return res
}

// worseIn counts the rows of benchmark that got worse, and of the others.
func worseIn(res *Result, benchmark string) (in, elsewhere int) {
	for _, tb := range res.Tables {
		for _, r := range tb.Rows {
			if r.Change != Worse {
				continue
			}
			if tb.Benchmark == benchmark {
				in++
			} else {
				elsewhere++
			}
		}
	}
	return in, elsewhere
}

const trials = 200

// cluster and harsh are the two noise models (see above).
var cluster, harsh = noiseModel{runSD: 0.03, disturbed: 0.01}, noiseModel{runSD: 0.05, disturbed: 0.05}

// TestTrialsIdenticalReruns: two identical campaigns of 1, 3 or 5 runs
// per benchmark trip the gate in at most 5% of trials, in either noise
// model. With --threshold-only at 1+1 the same campaigns trip it in most:
// the noise is enough for the threshold alone to cry wolf.
func TestTrialsIdenticalReruns(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		m      noiseModel
		runs   int
		trials int
	}{{"cluster", cluster, 1, trials}, {"cluster", cluster, 3, trials}, {"cluster", cluster, 5, trials}, {"harsh", harsh, 5, trials / 2}} {
		tripped := 0
		for seed := range uint64(c.trials) {
			if trial(t, c.m, seed, c.runs, "", DefaultOptions()).Regressions() > 0 {
				tripped++
			}
		}
		t.Logf("%s: identical re-runs at n=%d+%d: the gate tripped in %d of %d trials (%.1f%%)", c.name, c.runs, c.runs, tripped, c.trials, 100*float64(tripped)/float64(c.trials))
		if tripped > c.trials*5/100 {
			t.Errorf("%s: identical re-runs at n=%d+%d: the gate tripped in %d of %d trials, want ≤ 5%%", c.name, c.runs, c.runs, tripped, c.trials)
		}
	}
	o := DefaultOptions()
	o.ThresholdOnly = true
	tripped := 0
	for seed := range uint64(trials) {
		if trial(t, cluster, seed, 1, "", o).Regressions() > 0 {
			tripped++
		}
	}
	t.Logf("cluster: identical re-runs at n=1+1 with --threshold-only: the gate tripped in %d of %d trials (%.1f%%)", tripped, trials, 100*float64(tripped)/trials)
	if tripped <= trials*50/100 {
		t.Errorf("--threshold-only at n=1+1 tripped in %d of %d trials: the model is too quiet to tell the rules apart", tripped, trials)
	}
}

// TestTrialsSlowdownCaught: a benchmark 20% slower on the new side, at
// 5+5 runs, is caught — a row of it worse — in at least 95% of trials on
// the cluster model. Rows of the other benchmarks found worse do not
// count as catching it: they are false discoveries, which
// Benjamini–Hochberg keeps to at most alpha of the rows it finds, on
// average (with 20 true changes among 80 rows it lets about one false
// one through in some trials, which Holm would not, at the price of
// finding nothing at 5+5). The harsh model's rate is logged: there the
// runs' spread, not the method, is the limit.
func TestTrialsSlowdownCaught(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		m      noiseModel
		trials int
		want   int // percent caught, at least
	}{{"cluster", cluster, trials, 95}, {"harsh", harsh, trials / 2, 0}} {
		caught, falseAlarm := 0, 0
		fdp := 0.0 // the sum over trials of false / found rows
		for seed := range uint64(c.trials) {
			slow := trialBenchmarks[seed%uint64(len(trialBenchmarks))].name
			in, elsewhere := worseIn(trial(t, c.m, 1000+seed, 5, slow, DefaultOptions()), slow)
			if in > 0 {
				caught++
			}
			if elsewhere > 0 {
				falseAlarm++
				fdp += float64(elsewhere) / float64(in+elsewhere)
			}
		}
		n := float64(c.trials)
		t.Logf("%s: 20%% slowdown of one benchmark at n=5+5: caught in %d of %d trials (%.1f%%); a row of another benchmark worse in %d (%.1f%%), false discovery rate %.1f%%",
			c.name, caught, c.trials, 100*float64(caught)/n, falseAlarm, 100*float64(falseAlarm)/n, 100*fdp/n)
		if caught < c.trials*c.want/100 {
			t.Errorf("%s: 20%% slowdown at 5+5: caught in %d of %d trials, want ≥ %d%%", c.name, caught, c.trials, c.want)
		}
		if fdp/n > 0.05 {
			t.Errorf("%s: 20%% slowdown at 5+5: false discovery rate %.1f%%, want ≤ 5%%", c.name, 100*fdp/n)
		}
	}
}
