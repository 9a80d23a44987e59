package judge

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sbench/sbench/expect"
	"github.com/sbench/sbench/results"
	"github.com/sbench/sbench/store"
)

// bwRun is an osu_bw run of configuration ppn with value MB/s at 4 MiB
// (and value/2 at 1 MiB).
func bwRun(job string, ppn string, value float64, labels map[string]string) *results.Bundle {
	b := results.New()
	b.Campaign, b.Variant = "acc", "ppn"+ppn
	b.Params = map[string]string{"ntasks_per_node": ppn}
	b.Labels = labels
	b.Job = results.Job{ID: job, Step: "0", Nodes: []string{"n1", "n2"}, Tasks: 2}
	b.Start = time.Date(2026, 12, 4, 8, 0, 0, 0, time.UTC).Add(time.Duration(len(job)) * time.Minute)
	b.Hosts = []results.Host{{Hostname: "n1", Cores: 8}, {Hostname: "n2", Cores: 8}}
	b.Benchmark = results.Benchmark{Name: "osu_bw", Kind: "tool", Kernel: "osu"}
	b.Samples = []results.Sample{
		{Metric: "bandwidth", Unit: "MB/s", X: results.F(1 << 20), XUnit: "bytes", Value: value / 2},
		{Metric: "bandwidth", Unit: "MB/s", X: results.F(4 << 20), XUnit: "bytes", Value: value},
	}
	return b
}

func archive(t *testing.T, bundles ...*results.Bundle) *store.DB {
	t.Helper()
	db, err := store.Open(filepath.Join(t.TempDir(), "a.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.Ingest(context.Background(), "test", bundles); err != nil {
		t.Fatal(err)
	}
	return db
}

func judgeOne(t *testing.T, db *store.DB, ref expect.Ref) []expect.Verdict {
	t.Helper()
	vs, err := Judge(context.Background(), db, []expect.Ref{ref}, store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	return vs
}

// The median of the runs is judged, never one outlier: one run of five far
// below the bound does not fail it, and a median below does.
func TestJudgeMedian(t *testing.T) {
	link := map[string]string{"link_rate": "200Gbps"}
	db := archive(t,
		bwRun("1", "1", 24500, link), bwRun("2", "1", 24600, link), bwRun("3", "1", 900, link), bwRun("4", "1", 24400, link), bwRun("5", "1", 24700, link),
		bwRun("6", "2", 20000, link), bwRun("7", "2", 26000, link), bwRun("8", "2", 21000, link),
	)
	vs := judgeOne(t, db, expect.Ref{Benchmark: "osu_bw", Metric: "bandwidth", At: "4MiB", Bound: ">= 24 GB/s"})
	if len(vs) != 2 {
		t.Fatalf("%d verdicts, want one per configuration: %+v", len(vs), vs)
	}
	one, two := vs[0], vs[1]
	if one.Status != expect.Pass || one.Value != 24500 || one.N != 5 || one.Limit != 24000 || one.Unit != "MB/s" || !strings.Contains(one.Config, "ntasks_per_node=1") {
		t.Errorf("ppn=1: %+v", one)
	}
	if !slices.Equal(one.Runs, []int64{1, 2, 3, 4, 5}) {
		t.Errorf("ppn=1 runs %v", one.Runs)
	}
	if two.Status != expect.Fail || two.Value != 21000 || two.N != 3 {
		t.Errorf("ppn=2: %+v", two)
	}
	// where narrows to one configuration; best is each run's best x.
	vs = judgeOne(t, db, expect.Ref{Benchmark: "osu_bw", Metric: "bandwidth", At: "best", Bound: ">= 0.9 * link_rate", Where: "ntasks_per_node=1"})
	if len(vs) != 1 || vs[0].Status != expect.Pass || vs[0].Limit != 22500 || vs[0].Config != "" || !strings.Contains(vs[0].LimitFrom, "label link_rate") {
		t.Errorf("link rate: %+v", vs)
	}
	vs = judgeOne(t, db, expect.Ref{Benchmark: "osu_bw", Metric: "bandwidth", At: "4MiB", Bound: ">= link_rate", Where: "ntasks_per_node=2"})
	if len(vs) != 1 || vs[0].Status != expect.Fail || vs[0].Limit != 25000 {
		t.Errorf("link rate, failed: %+v", vs)
	}
}

// One run is judged, and the verdict says how little it rests on.
func TestJudgeOneRun(t *testing.T) {
	db := archive(t, bwRun("1", "1", 30000, nil))
	vs := judgeOne(t, db, expect.Ref{Benchmark: "osu_bw", Metric: "bandwidth", At: "4194304", Bound: "<= 3 GB/s"})
	if len(vs) != 1 || vs[0].Status != expect.Fail || vs[0].N != 1 || vs[0].Note != expect.SingleRunNote {
		t.Errorf("%+v", vs)
	}
}

// NO DATA says why: no such benchmark, point or metric; a link rate or a
// baseline that is unknown.
func TestJudgeNoData(t *testing.T) {
	db := archive(t, bwRun("1", "1", 30000, nil))
	for _, tt := range []struct {
		ref  expect.Ref
		want string
	}{
		{expect.Ref{Benchmark: "osu_latency", Metric: "latency", At: "8", Bound: "<= 3 us"}, "no ok run of benchmark osu_latency"},
		{expect.Ref{Benchmark: "osu_bw", Metric: "bandwidth", At: "8", Bound: ">= 1 MB/s"}, "measured bandwidth at 8"},
		{expect.Ref{Benchmark: "osu_bw", Metric: "latency", At: "4MiB", Bound: "<= 3 us"}, "measured latency at 4MiB"},
		{expect.Ref{Benchmark: "osu_bw", Metric: "bandwidth", At: "4MiB", Bound: ">= 0.9 * link_rate"}, "link rate of run 1 unknown"},
		{expect.Ref{Benchmark: "osu_bw", Metric: "bandwidth", At: "4MiB", Bound: ">= baseline:pre - 5%"}, "no baseline pre"},
		{expect.Ref{Benchmark: "osu_bw", Metric: "bandwidth", At: "4MiB", Bound: ">= 3 us"}, "is a time"},
		{expect.Ref{Benchmark: "osu_bw", Metric: "bandwidth", At: "4MiB", Bound: "3"}, "want an operator"},
		{expect.Ref{Benchmark: "osu_bw", Metric: "bandwidth", At: "4MiB", Bound: ">= 1 MB/s", System: "other"}, "system other"},
	} {
		vs := judgeOne(t, db, tt.ref)
		if len(vs) != 1 || vs[0].Status != expect.NoData || !strings.Contains(vs[0].Note, tt.want) {
			t.Errorf("%s %s: %+v; want NO DATA with %q", tt.ref.Title(), tt.ref.Bound, vs, tt.want)
		}
	}
}

// A baseline's median of the same configuration, with a margin, is the
// limit.
func TestJudgeBaseline(t *testing.T) {
	ctx := context.Background()
	db := archive(t, bwRun("1", "1", 20000, nil), bwRun("2", "1", 22000, nil), bwRun("3", "1", 21000, nil),
		bwRun("4", "1", 20500, nil), bwRun("5", "1", 19000, nil))
	if _, err := db.SetBaseline(ctx, store.Baseline{Name: "pre", RunIDs: []int64{1, 2, 3}}); err != nil {
		t.Fatal(err)
	}
	ref := expect.Ref{Benchmark: "osu_bw", Metric: "bandwidth", At: "4MiB", Bound: ">= baseline:pre - 5%"}
	vs, err := Judge(ctx, db, []expect.Ref{ref}, store.Filter{RunIDs: []int64{4, 5}})
	if err != nil {
		t.Fatal(err)
	}
	// Limit 21000 × 0.95 = 19950; median of runs 4 and 5 is 19750.
	if len(vs) != 1 || vs[0].Status != expect.Fail || vs[0].Limit != 19950 || vs[0].Value != 19750 || vs[0].LimitFrom != "baseline pre: median 21000 MB/s of 3 run(s) (1-3) − 5%" {
		t.Errorf("%+v", vs)
	}
}

// Rpeak is the runs' rpeak label, else their nodes' provenance.
func TestJudgeRpeak(t *testing.T) {
	hplRun := func(job string, gflops float64, labels map[string]string) *results.Bundle {
		b := bwRun(job, "1", 0, labels)
		b.Benchmark = results.Benchmark{Name: "hpl", Kind: "tool", Kernel: "hpl"}
		b.Samples = []results.Sample{{Metric: "hpl_gflops", Unit: "Gflops", Value: gflops}}
		return b
	}
	db := archive(t, hplRun("1", 800, map[string]string{"rpeak": "1000"}), hplRun("2", 700, map[string]string{"rpeak": "1000"}), hplRun("3", 760, map[string]string{"rpeak": "1000"}))
	vs := judgeOne(t, db, expect.Ref{Benchmark: "hpl", Metric: "hpl_gflops", Bound: ">= 0.75 * rpeak"})
	if len(vs) != 1 || vs[0].Status != expect.Pass || vs[0].Limit != 750 || vs[0].Value != 760 || !strings.Contains(vs[0].LimitFrom, "label rpeak") {
		t.Errorf("%+v", vs)
	}
	vs = judgeOne(t, db, expect.Ref{Benchmark: "hpl", Metric: "hpl_gflops", Bound: ">= 0.8 * rpeak"})
	if len(vs) != 1 || vs[0].Status != expect.Fail {
		t.Errorf("%+v", vs)
	}
}

// A tool's figure that is a scalar (xhpl's gflops) is judged as a value
// without an x.
func TestJudgeScalar(t *testing.T) {
	xhpl := func(job string, gflops float64) *results.Bundle {
		b := bwRun(job, "1", 0, map[string]string{"rpeak": "1000 Gflops"})
		b.Benchmark = results.Benchmark{Name: "hpl", Kind: "tool", Kernel: "hpl"}
		b.Samples = nil
		b.Scalars = []results.Scalar{{Name: "gflops", Unit: "Gflops", Value: gflops}, {Name: "n", Value: 1000}}
		return b
	}
	db := archive(t, xhpl("1", 700), xhpl("2", 790), xhpl("3", 800))
	vs := judgeOne(t, db, expect.Ref{Benchmark: "hpl", Metric: "gflops", Bound: ">= 0.75 * rpeak"})
	if len(vs) != 1 || vs[0].Status != expect.Pass || vs[0].Value != 790 || vs[0].N != 3 || vs[0].Limit != 750 {
		t.Errorf("%+v", vs)
	}
}
