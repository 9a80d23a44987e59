package reports

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/sbench/sbench/results"
	"github.com/sbench/sbench/store"
)

// verdictData builds runs of one benchmark for the verdict's tests: each
// run has the hosts hosts gives it and, at every size from 1 B to 4 MiB,
// the value curve gives (its configuration, run index, size).
type verdictData struct {
	d     Data
	id    int64
	t0    time.Time
	kind  string
	hosts func() []results.Host
}

func newVerdictData(kind string, hosts func() []results.Host) *verdictData {
	t0 := time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)
	return &verdictData{d: Data{Generated: t0.Add(24 * time.Hour)}, t0: t0, kind: kind, hosts: hosts}
}

// add adds one run of variant with metric's value at every size; p50,
// when not nil, gives the samples' own medians.
func (v *verdictData) add(variant, metric string, value func(size float64) float64, p50 func(size float64) float64) *store.Run {
	v.id++
	start := v.t0.Add(time.Duration(v.id) * time.Minute)
	v.d.Runs = append(v.d.Runs, store.Run{ID: v.id, Campaign: "c", Variant: variant, Benchmark: "b", Kind: v.kind, Kernel: "k",
		Status: results.StatusOK, Hosts: v.hosts(), Start: start, End: start.Add(30 * time.Second)})
	unit := "MB/s"
	if metric == "latency" {
		unit = "us"
	}
	for k := 0; k <= 22; k++ {
		x := math.Ldexp(1, k)
		s := results.Sample{Metric: metric, Unit: unit, X: results.F(x), XUnit: "bytes", Value: value(x)}
		if p50 != nil {
			s.P50 = results.F(p50(x))
		}
		v.d.Samples = append(v.d.Samples, store.Sample{RunID: v.id, Sample: s})
	}
	return &v.d.Runs[len(v.d.Runs)-1]
}

func (v *verdictData) verdict(t *testing.T, opts ...Option) string {
	t.Helper()
	r, err := New(v.d, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(r.Verdict(), "\n")
}

// twoNodes are two nodes with a 10 Gb/s Ethernet interface and an active
// 100 Gb/s InfiniBand port each; traffic, when given, is what the runner
// recorded their connections crossed.
func twoNodes(traffic ...string) func() []results.Host {
	return func() []results.Host {
		hs := hostsOf("n1", "n2")
		for i := range hs {
			hs[i].Net = []results.NetIf{{Name: "eth0", SpeedMbps: 10000, State: "up"}, {Name: "ib0", SpeedMbps: 100000, State: "up"}}
			hs[i].IB[0].RateGbps = 100
			if len(traffic) > 0 {
				hs[i].Traffic = append([]string(nil), traffic...)
			}
		}
		return hs
	}
}

// fakeNodes are sbench local's: two nodes described by the machine they
// share, with its 10 Gb/s interface.
func fakeNodes(traffic ...string) func() []results.Host {
	return func() []results.Host {
		hs := twoNodes(traffic...)()
		for i := range hs {
			hs[i].Hostname = "vm"
		}
		return hs
	}
}

func flat(v float64) func(float64) float64 { return func(float64) float64 { return v } }

// rising is a bandwidth curve that peaks at 4 MiB at peak.
func rising(peak float64) func(float64) float64 {
	return func(x float64) float64 { return peak * x / (x + 4096) * (4194304 + 4096) / 4194304 }
}

// The demo's report said "reached 4485.51 MB/s … (359 % of the 10 Gb/s
// link)" of traffic that never left the machine: the rate was the host's
// eth0's. A run whose runner saw its connections stay on the machine has
// no link rate, and the verdict says why; an explicit rate still wins.
func TestVerdictLoopbackHasNoLinkRate(t *testing.T) {
	v := newVerdictData("native", fakeNodes("lo"))
	v.add("ntasks_per_node=1", "bandwidth", rising(4485.51), nil)
	got := v.verdict(t)
	want := "b: ntasks_per_node=1 reached 4485.51 MB/s at 4 MiB (1 run: no spread known). The traffic stayed on one machine (loopback): no link rate applies."
	if got != want {
		t.Errorf("verdict\n  %s\nwant\n  %s", got, want)
	}
	// The user's rate wins, and is the user's to answer for.
	if got := v.verdict(t, WithLinkRate(10)); !strings.Contains(got, "(1 run: no spread known; 359% of the 10 Gb/s link).") || strings.Contains(got, "stayed on one machine") {
		t.Errorf("WithLinkRate(10): %s", got)
	}
	v.d.Runs[0].Labels = map[string]string{"link_rate": "40Gbps"}
	if got := v.verdict(t); !strings.Contains(got, "90% of the 40 Gb/s link") {
		t.Errorf("link_rate label: %s", got)
	}
}

// Without a record of the traffic (a wrapped tool, an older runner), ranks
// on one machine — one host, or fake nodes sharing a hostname — crossed
// no link either; the verdict says so without claiming loopback.
func TestVerdictOneMachineHasNoLinkRate(t *testing.T) {
	v := newVerdictData("tool", fakeNodes())
	v.add("local", "bandwidth", rising(4485.51), nil)
	got := v.verdict(t)
	if !strings.HasSuffix(got, "The traffic stayed on one machine (every rank on one host: loopback or shared memory): no link rate applies.") || strings.Contains(got, "% of the") {
		t.Errorf("verdict %s", got)
	}
	one := newVerdictData("tool", func() []results.Host { return twoNodes()()[:1] })
	one.add("intra", "bandwidth", rising(4485.51), nil)
	if got := one.verdict(t); !strings.Contains(got, "stayed on one machine") || strings.Contains(got, "% of the") {
		t.Errorf("one host: %s", got)
	}
}

// The rate quoted is that of an interface the traffic crossed: a TCP
// kernel bound to Ethernet did not cross the nodes' InfiniBand ports, nor
// their faster IPoIB interface; through IPoIB it crossed that. A wrapped
// tool between nodes may have used the ports: their rate, as before.
func TestVerdictLinkRateOfTheInterfaceCrossed(t *testing.T) {
	for _, tt := range []struct {
		name, kind string
		hosts      func() []results.Host
		want       string
	}{
		{"native over eth0", "native", twoNodes("eth0"), "(1 run: no spread known; 80% of the 10 Gb/s link)."},
		{"native over ib0", "native", twoNodes("ib0"), "(1 run: no spread known; 8.0% of the 100 Gb/s link)."},
		{"native over eth0 and lo", "native", twoNodes("eth0", "lo"), "(1 run: no spread known; 80% of the 10 Gb/s link)."},
		{"a tool between nodes", "tool", twoNodes(), "(1 run: no spread known; 8.0% of the 100 Gb/s link)."},
		{"an interface of unknown speed", "native", twoNodes("eth1"), "(1 run: no spread known)."},
	} {
		v := newVerdictData(tt.kind, tt.hosts)
		v.add("inter", "bandwidth", rising(1000), nil)
		if got := v.verdict(t); !strings.HasSuffix(got, tt.want) {
			t.Errorf("%s: %s\nwant it to end in %s", tt.name, got, tt.want)
		}
	}
}

// Headline figures are medians of runs, with their n and range; the
// latency kernel's is the median of its iterations, not their mean, which
// a tail of slow round trips pulls up (the demo's 23.25 µs against a
// median of 4.29 µs).
func TestVerdictHeadlinesAreMedians(t *testing.T) {
	v := newVerdictData("native", twoNodes("eth0"))
	for _, peak := range []float64{1000, 1100, 2000} {
		v.add("inter", "bandwidth", rising(peak), nil)
	}
	if got := v.verdict(t); !strings.HasPrefix(got, "b: inter reached 1100.00 MB/s at 4 MiB (median of 3 runs, 1000.00–2000.00; 88% of the 10 Gb/s link).") {
		t.Errorf("bandwidth: %s", got)
	}
	l := newVerdictData("native", fakeNodes("lo"))
	l.add("ntasks_per_node=1", "latency", flat(23.25), flat(4.29))
	if got, want := l.verdict(t), "b: at 1 B, ntasks_per_node=1 has 4.29 µs median latency (iterations' mean 23.25 µs; 1 run: no spread known)."; got != want {
		t.Errorf("latency:\n  %s\nwant\n  %s", got, want)
	}
	// A tool's figure is its own (OSU's average): with one configuration
	// that lacks the median, every configuration is quoted by its mean.
	l.add("osu", "latency", flat(5), nil)
	if got := l.verdict(t); !strings.HasPrefix(got, "b: at 1 B, osu has 5.00 µs latency (1 run: no spread known), ntasks_per_node=1 23.25 µs (1 run: no spread known);") {
		t.Errorf("latency beside a tool: %s", got)
	}
}

// Two identical demos, one run each, gave "7.02× lower" then "1.09×
// lower". With one run per configuration no factor is stated.
func TestVerdictOneRunStatesNoFactor(t *testing.T) {
	v := newVerdictData("native", fakeNodes("lo"))
	v.add("ntasks_per_node=1", "latency", flat(23.25), flat(30))
	v.add("ntasks_per_node=2", "latency", flat(3.3), flat(4.29))
	v.add("ntasks_per_node=1", "bandwidth", rising(4919.2), nil)
	v.add("ntasks_per_node=2", "bandwidth", rising(2000), nil)
	got := v.verdict(t)
	for _, want := range []string{
		"b: ntasks_per_node=1 reached 4919.20 MB/s at 4 MiB (1 run: no spread known); ntasks_per_node=2 2000.00 MB/s at 4 MiB (1 run: no spread known): with 1 run each no factor is claimed: their spread is unknown. The traffic stayed on one machine (loopback): no link rate applies.",
		"b: at 1 B, ntasks_per_node=2 has 4.29 µs median latency (iterations' mean 3.30 µs; 1 run: no spread known), ntasks_per_node=1 30.00 µs (iterations' mean 23.25 µs; 1 run: no spread known); with 1 run each no factor is claimed: their spread is unknown.",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("verdict lacks\n  %s\ngot\n  %s", want, got)
		}
	}
	if strings.Contains(got, "×") {
		t.Errorf("a factor from one run each: %s", got)
	}
}

// Runs whose ranges overlap are within their run-to-run spread: no
// factor, however far apart their medians.
func TestVerdictOverlappingRunsStateNoFactor(t *testing.T) {
	v := newVerdictData("native", twoNodes("eth0"))
	for _, lat := range []float64{2, 3, 9} {
		v.add("a", "latency", flat(lat), flat(lat))
	}
	for _, lat := range []float64{8, 9.5, 10} {
		v.add("b", "latency", flat(lat), flat(lat))
	}
	got := v.verdict(t)
	want := "b: at 1 B, a has 3.00 µs median latency (median of 3 runs, 2.00–9.00), b 9.50 µs (median of 3 runs, 8.00–10.00); the two are within their run-to-run spread (the ranges of their 3 runs each overlap)."
	if got != want {
		t.Errorf("verdict\n  %s\nwant\n  %s", got, want)
	}
}

// A factor is stated when every run of one configuration is beyond every
// run of the other and that could hardly be chance: an exact Mann-Whitney
// test at 0.05, which 4 runs each pass (p = 2/70) and 3 each do not (2/20).
func TestVerdictSeparatedRunsStateTheFactor(t *testing.T) {
	for _, tt := range []struct {
		runs int
		want []string
	}{
		{4, []string{
			"b: at 1 B, a has 2.00 µs median latency (median of 4 runs, 1.90–2.10), b 4.10 µs (median of 4 runs, 4.00–4.30): 2.05× lower for a (every run apart, p = 0.029).",
			"b: a reached 200.00 MB/s at 4 MiB (median of 4 runs, 190.00–210.00; 16% of the 10 Gb/s link), 1.95× b (102.50 MB/s at 4 MiB, median of 4 runs, 100.00–110.00; every run apart, p = 0.029).",
		}},
		{3, []string{
			"the runs of the two do not overlap, but 3 runs each could by chance: p = 0.1, and 4 runs each can tell.",
		}},
	} {
		v := newVerdictData("native", twoNodes("eth0"))
		lats := map[string][]float64{"a": {1.9, 2.0, 2.0, 2.1}, "b": {4.0, 4.1, 4.1, 4.3}}
		bws := map[string][]float64{"a": {190, 200, 200, 210}, "b": {100, 100, 105, 110}}
		for _, cfg := range []string{"a", "b"} {
			for i := range tt.runs {
				v.add(cfg, "latency", flat(lats[cfg][i]), flat(lats[cfg][i]))
				v.add(cfg, "bandwidth", rising(bws[cfg][i]), nil)
			}
		}
		got := v.verdict(t)
		for _, w := range tt.want {
			if !strings.Contains(got, w) {
				t.Errorf("%d runs each: verdict lacks\n  %s\ngot\n  %s", tt.runs, w, got)
			}
		}
		if tt.runs < 4 && strings.Contains(got, "×") {
			t.Errorf("%d runs each: a factor: %s", tt.runs, got)
		}
	}
}

// The size where two curves differ most is picked from all the sizes
// compared: its factor needs the test to hold over them all (Bonferroni),
// else the medians are quoted without one.
func TestVerdictWidestGapNeedsTheRuns(t *testing.T) {
	build := func(runs int) string {
		v := newVerdictData("native", twoNodes("eth0"))
		for i := range runs {
			d := 1 + float64(i)/100
			v.add("a", "bandwidth", func(x float64) float64 { return 1000 * d * x / (x + 64) }, nil)
			v.add("b", "bandwidth", func(x float64) float64 { return 1000 * d * x / (x + 4096) }, nil)
		}
		return v.verdict(t)
	}
	// 23 sizes compared: p ≤ 0.05/23 takes 6 runs each (2/924).
	for runs, want := range map[int]string{
		1: "b: the curves differ most at 1 B, where a has 15.38 MB/s and b 0.24 MB/s (with 1 run each no factor is claimed: their spread is unknown).",
		5: "b: the curves differ most at 1 B, where a has 15.69 MB/s and b 0.25 MB/s (the runs of the two do not overlap, but 5 runs each could by chance: p = 0.0079, and 6 runs each can tell).",
		6: "b: the curves differ most at 1 B, where a has 15.77 MB/s and b 0.25 MB/s (63.03×; every run apart, p = 0.0022, of 23 sizes compared).",
	} {
		if got := build(runs); !strings.Contains(got, want) {
			t.Errorf("%d runs each: verdict lacks\n  %s\ngot\n  %s", runs, want, got)
		}
	}
}

func TestRunsNeeded(t *testing.T) {
	for alpha, want := range map[float64]int{0.05: 4, 0.1: 3, 0.34: 2, 0.05 / 23: 6} {
		if got := runsNeeded(alpha); got != want {
			t.Errorf("runsNeeded(%v) = %d, want %d", alpha, got, want)
		}
	}
	if got := fmt.Sprint(binomial(8, 4)); got != "70" {
		t.Errorf("C(8,4) = %s", got)
	}
}
