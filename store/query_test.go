package store

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/sbench/sbench/results"
)

// filterArchive holds five runs across two campaigns:
//
//	variant        campaign  benchmark start (May 2024)  labels
//	ib             acc       osu_bw    1st 10:00         fabric=ib site=lab
//	tcp            acc       osu_bw    2nd 10:00         fabric=tcp site=lab
//	hpl/n20000     acc       hpl       3rd 00:00         fabric=ib mpi=intel
//	hpl/n20000     upgrade   hpl       4th 00:00         fabric=ib mpi=intel
//	pasted         -         osu_lat   unknown           fabric=ib
func filterArchive(t *testing.T) (*DB, map[string]int64) {
	t.Helper()
	db := openTemp(t)
	ib := osuBundle("acc", "ib", "10", 3)
	tcp := osuBundle("acc", "tcp", "11", 3)
	tcp.Start = tcp.Start.Add(24 * time.Hour)
	tcp.End = tcp.Start.Add(time.Minute)
	hpl1 := hplBundle("acc", "12", time.Date(2024, 5, 3, 0, 0, 0, 0, time.UTC))
	hpl2 := hplBundle("upgrade", "12", time.Date(2024, 5, 4, 0, 0, 0, 0, time.UTC))
	pasted := results.New()
	pasted.Variant = "pasted"
	pasted.Benchmark = results.Benchmark{Name: "osu_lat", Kind: "tool", Kernel: "osu"}
	pasted.Labels = map[string]string{"fabric": "ib"}
	pasted.Samples = []results.Sample{{Metric: "latency", Unit: "us", X: results.F(1), XUnit: "bytes", Value: 1.8}}
	// Ingested out of time order, so that order by id and by start differ.
	ids := map[string]int64{}
	for _, b := range []*results.Bundle{tcp, hpl2, ib, pasted, hpl1} {
		res := ingest(t, db, "f.json", b)
		ids[b.Campaign+"/"+b.Variant] = res.Added[0]
	}
	return db, ids
}

func TestRunsFilter(t *testing.T) {
	db, ids := filterArchive(t)
	may := func(day, hour int) time.Time { return time.Date(2024, 5, day, hour, 0, 0, 0, time.UTC) }
	tests := []struct {
		name   string
		filter Filter
		want   []string // campaign/variant in result order
	}{
		{"everything, unknown start first", Filter{}, []string{"/pasted", "acc/ib", "acc/tcp", "acc/hpl/n20000", "upgrade/hpl/n20000"}},
		{"campaign", Filter{Campaign: "acc"}, []string{"acc/ib", "acc/tcp", "acc/hpl/n20000"}},
		{"campaign is exact", Filter{Campaign: "ac"}, nil},
		{"benchmark", Filter{Benchmark: "hpl"}, []string{"acc/hpl/n20000", "upgrade/hpl/n20000"}},
		{"benchmarks, any of", Filter{Benchmarks: []string{"hpl", "nope"}}, []string{"acc/hpl/n20000", "upgrade/hpl/n20000"}},
		{"status, any of", Filter{Statuses: []results.Status{results.StatusInvalid, results.StatusFailed}}, []string{"acc/hpl/n20000", "upgrade/hpl/n20000"}},
		{"jobs", Filter{JobIDs: []string{"12", "99"}}, []string{"acc/hpl/n20000", "upgrade/hpl/n20000"}},
		{"excluded run ids", Filter{Benchmark: "hpl", ExcludeRunIDs: []int64{ids["acc/hpl/n20000"]}}, []string{"upgrade/hpl/n20000"}},
		{"run ids", Filter{RunIDs: []int64{ids["upgrade/hpl/n20000"], ids["acc/ib"], 999}}, []string{"acc/ib", "upgrade/hpl/n20000"}},
		{"one label", Filter{Labels: map[string]string{"fabric": "ib"}}, []string{"/pasted", "acc/ib", "acc/hpl/n20000", "upgrade/hpl/n20000"}},
		{"all labels must match", Filter{Labels: map[string]string{"fabric": "ib", "site": "lab"}}, []string{"acc/ib"}},
		{"label value is exact", Filter{Labels: map[string]string{"fabric": "i"}}, nil},
		{"since is inclusive", Filter{Since: may(2, 10).Add(123456789)}, []string{"acc/tcp", "acc/hpl/n20000", "upgrade/hpl/n20000"}},
		{"until is exclusive", Filter{Until: may(3, 0)}, []string{"acc/ib", "acc/tcp"}},
		{"since and until in another zone", Filter{
			Since: time.Date(2024, 5, 3, 1, 0, 0, 0, time.FixedZone("CEST", 2*3600)),
			Until: time.Date(2024, 5, 4, 1, 0, 0, 0, time.FixedZone("CEST", 2*3600)),
		}, []string{"acc/hpl/n20000"}},
		{"everything combined", Filter{Campaign: "acc", Benchmark: "hpl", Labels: map[string]string{"mpi": "intel"},
			RunIDs: []int64{ids["acc/hpl/n20000"], ids["upgrade/hpl/n20000"]}, Since: may(1, 0), Until: may(31, 0)}, []string{"acc/hpl/n20000"}},
	}
	ctx := context.Background()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			runs, err := db.Runs(ctx, tt.filter)
			if err != nil {
				t.Fatal(err)
			}
			if got := campaignVariants(runs); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Runs = %q, want %q", got, tt.want)
			}
			// Samples, scalars and checks follow the same selection.
			selected := map[int64]bool{}
			for _, r := range runs {
				selected[r.ID] = true
			}
			samples, err := db.Samples(ctx, tt.filter)
			if err != nil {
				t.Fatal(err)
			}
			scalars, err := db.Scalars(ctx, tt.filter)
			if err != nil {
				t.Fatal(err)
			}
			checks, err := db.Checks(ctx, tt.filter)
			if err != nil {
				t.Fatal(err)
			}
			seen := map[int64]bool{}
			for _, s := range samples {
				seen[s.RunID] = true
			}
			if !reflect.DeepEqual(seen, selected) && len(selected) > 0 {
				t.Errorf("samples come from runs %v, want %v", seen, selected)
			}
			for _, s := range scalars {
				if !selected[s.RunID] {
					t.Errorf("scalar of run %d, not selected", s.RunID)
				}
			}
			for _, c := range checks {
				if !selected[c.RunID] {
					t.Errorf("check of run %d, not selected", c.RunID)
				}
			}
			wantScalars := 0
			for _, r := range runs {
				if r.Benchmark == "hpl" {
					wantScalars += 6
				}
			}
			if len(scalars) != wantScalars || len(checks) != wantScalars/3 {
				t.Errorf("%d scalars and %d checks, want %d and %d", len(scalars), len(checks), wantScalars, wantScalars/3)
			}
		})
	}
}

func TestSamplesOrder(t *testing.T) {
	db := openTemp(t)
	b := results.New()
	b.Benchmark.Name = "mixed"
	// In the bundle: no order at all.
	b.Samples = []results.Sample{
		{Metric: "latency", Unit: "us", X: results.F(8), Value: 3, Repeat: 1},
		{Metric: "bandwidth", Unit: "MB/s", X: results.F(1024), Value: 900},
		{Metric: "latency", Unit: "us", X: results.F(8), Value: 2, Repeat: 0},
		{Metric: "latency", Unit: "us", Value: 9},
		{Metric: "bandwidth", Unit: "MB/s", X: results.F(2), Value: 10, Pair: []int{1, 0}},
		{Metric: "bandwidth", Unit: "MB/s", X: results.F(2), Value: 11, Pair: []int{0, 1}},
		{Metric: "latency", Unit: "us", X: results.F(0.5), Value: 1},
	}
	first := osuBundle("c", "ib", "1", 2)
	ingest(t, db, "f.json", b, first)
	samples, err := db.Samples(context.Background(), Filter{})
	if err != nil {
		t.Fatal(err)
	}
	var got []float64
	for _, s := range samples {
		got = append(got, s.Value)
	}
	// Run 1 by metric, x (none first), repeat, then bundle order for ties
	// (the two rank pairs at x=2); then run 2.
	want := []float64{10, 11, 900, 9, 1, 2, 3, first.Samples[0].Value, first.Samples[1].Value}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("sample values in order %v, want %v", got, want)
	}
}

func TestCampaigns(t *testing.T) {
	db, _ := filterArchive(t)
	ctx := context.Background()
	if _, err := db.RecordJob(ctx, Job{SlurmID: "77", Campaign: "bring-up", State: "PENDING"}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.RecordJob(ctx, Job{SlurmID: "12", Campaign: "acc", State: "COMPLETED"}); err != nil {
		t.Fatal(err)
	}
	got, err := db.Campaigns(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// The pasted run has no campaign: not listed. bring-up has only a job.
	if want := []string{"acc", "bring-up", "upgrade"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Campaigns = %q, want %q", got, want)
	}
	empty := openTemp(t)
	if got, err := empty.Campaigns(ctx); err != nil || got != nil {
		t.Errorf("Campaigns of an empty archive = %q, %v", got, err)
	}
}

func TestEmptyResults(t *testing.T) {
	db := openTemp(t)
	ctx := context.Background()
	runs, err := db.Runs(ctx, Filter{Campaign: "none"})
	if err != nil || runs != nil {
		t.Errorf("Runs = %v, %v; want none", runs, err)
	}
	samples, err := db.Samples(ctx, Filter{})
	if err != nil || samples != nil {
		t.Errorf("Samples = %v, %v; want none", samples, err)
	}
}

func TestRunIDLists(t *testing.T) {
	ids, err := ParseRunIDs("30, 1-4,13,18-24,2")
	if err != nil {
		t.Fatal(err)
	}
	if got := FormatRunIDs(ids); got != "1-4,13,18-24,30" {
		t.Errorf("round trip: %s", got)
	}
	if got := FormatRunIDs([]int64{5, 3, 4, 4, 9}); got != "3-5,9" {
		t.Errorf("unsorted with a duplicate: %s", got)
	}
	for _, bad := range []string{"", "0", "a", "4-2", "1-", "1-2000000"} {
		if _, err := ParseRunIDs(bad); err == nil {
			t.Errorf("ParseRunIDs(%q) accepted", bad)
		}
	}
}

func TestFilterAnd(t *testing.T) {
	db, ids := filterArchive(t)
	ctx := context.Background()
	for _, c := range []struct {
		name string
		f, g Filter
		want []string
	}{
		{"narrowed by benchmark", Filter{Campaign: "acc"}, Filter{Benchmarks: []string{"hpl"}}, []string{"acc/hpl/n20000"}},
		{"campaigns differ", Filter{Campaign: "acc"}, Filter{Campaign: "upgrade"}, nil},
		{"run ids intersect", Filter{RunIDs: []int64{ids["acc/ib"], ids["acc/tcp"]}}, Filter{RunIDs: []int64{ids["acc/tcp"]}}, []string{"acc/tcp"}},
		{"run ids disjoint", Filter{RunIDs: []int64{ids["acc/ib"]}}, Filter{RunIDs: []int64{ids["acc/tcp"]}}, nil},
		{"labels add up", Filter{Labels: map[string]string{"fabric": "ib"}}, Filter{Labels: map[string]string{"site": "lab"}}, []string{"acc/ib"}},
		{"labels clash", Filter{Labels: map[string]string{"fabric": "ib"}}, Filter{Labels: map[string]string{"fabric": "eth"}}, nil},
		{"excluded", Filter{Benchmark: "hpl"}, Filter{ExcludeRunIDs: []int64{ids["upgrade/hpl/n20000"]}}, []string{"acc/hpl/n20000"}},
	} {
		runs, err := db.Runs(ctx, c.f.And(c.g))
		if err != nil {
			t.Fatal(err)
		}
		if got := campaignVariants(runs); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

func TestInventory(t *testing.T) {
	db, _ := filterArchive(t)
	inv, err := db.Inventory(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if inv.Runs != 5 || !reflect.DeepEqual(inv.Campaigns, []string{"acc", "upgrade"}) ||
		!reflect.DeepEqual(inv.Benchmarks, []string{"hpl", "osu_bw", "osu_lat"}) || len(inv.Labels["fabric"]) == 0 || inv.LastRun-inv.FirstRun != 4 {
		t.Errorf("inventory %+v", inv)
	}
}

// TestRunSystem: a run's system is its system label when it has one (the
// user said so), else the Slurm cluster the runner recorded; filters on
// the system and on the label select the same runs.
func TestRunSystem(t *testing.T) {
	db := openTemp(t)
	ctx := context.Background()
	labelled, cluster, neither := osuBundle("site", "ib", "1", 3), osuBundle("site", "ib", "2", 3), osuBundle("site", "ib", "3", 3)
	labelled.Labels["system"], labelled.Job.Cluster = "alpha", "lab"
	cluster.Job.Cluster = "beta"
	ingest(t, db, "a.json", labelled, cluster, neither)
	runs, err := db.Runs(ctx, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := runSystems(runs), []string{"alpha", "beta", ""}; !reflect.DeepEqual(got, want) {
		t.Errorf("systems %q, want %q", got, want)
	}
	if runs[1].Labels["system"] != "beta" || len(runs[1].Labels) != 3 {
		t.Errorf("the run Slurm named: labels %v, want its system among them", runs[1].Labels)
	}
	for _, tt := range []struct {
		name string
		f    Filter
		want []string // jobs
	}{
		{"by system", Filter{Systems: []string{"beta"}}, []string{"2"}},
		{"by the label", Filter{Labels: map[string]string{"system": "beta"}}, []string{"2"}},
		{"either", Filter{Systems: []string{"alpha", "beta"}}, []string{"1", "2"}},
		{"both filters", Filter{Systems: []string{"alpha", "beta"}}.And(Filter{Systems: []string{"beta"}}), []string{"2"}},
		{"disjoint", Filter{Systems: []string{"alpha"}}.And(Filter{Systems: []string{"beta"}}), nil},
	} {
		var jobs []string
		if err := db.EachRun(ctx, tt.f, RunOptions{Detail: RunLabels}, func(r *Run) error {
			jobs = append(jobs, r.JobID)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(jobs, tt.want) {
			t.Errorf("%s: jobs %q, want %q", tt.name, jobs, tt.want)
		}
	}
	inv, err := db.Inventory(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(inv.Systems, []string{"alpha", "beta"}) || !reflect.DeepEqual(inv.Labels["system"], []string{"alpha", "beta"}) {
		t.Errorf("inventory systems %q, system labels %q", inv.Systems, inv.Labels["system"])
	}
}

// TestEachRun walks the runs one at a time, in Runs order, with the
// detail asked for; Limit keeps the newest; fn's error ends the walk.
func TestEachRun(t *testing.T) {
	db, _ := filterArchive(t)
	ctx := context.Background()
	all, err := db.Runs(ctx, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	var walked []Run
	if err := db.EachRun(ctx, Filter{}, RunOptions{}, func(r *Run) error {
		walked = append(walked, *r)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(walked, all) {
		t.Errorf("EachRun gave\n%+v\nRuns gave\n%+v", walked, all)
	}
	var ids []int64
	if err := db.EachRun(ctx, Filter{}, RunOptions{Detail: RunLabels, Limit: 2}, func(r *Run) error {
		if r.Params != nil || r.Hosts != nil {
			t.Errorf("run %d: RunLabels read params %v and hosts %v", r.ID, r.Params, r.Hosts)
		}
		ids = append(ids, r.ID)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if want := []int64{all[len(all)-2].ID, all[len(all)-1].ID}; !reflect.DeepEqual(ids, want) {
		t.Errorf("Limit 2: runs %v, want the newest two %v", ids, want)
	}
	stop := errors.New("stop")
	n := 0
	err = db.EachRun(ctx, Filter{}, RunOptions{}, func(*Run) error { n++; return stop })
	if err != stop || n != 1 {
		t.Errorf("fn's error: EachRun returned %v after %d runs, want it as is after 1", err, n)
	}
}

// TestEachSample walks the samples run by run, each run's in its bundle's
// order, read a batch ahead of the callback; without Stats it reads the
// values only; the callback's error ends the walk and is returned as it
// is.
func TestEachSample(t *testing.T) {
	db := openTemp(t)
	ctx := context.Background()
	bundles := osuBundles("acc", 12, 60) // more than a batch in all
	for i, b := range bundles {
		b.Start = b.Start.Add(time.Duration(12-i) * time.Hour)
		b.End = b.Start.Add(time.Minute)
		b.Samples[0].Min, b.Samples[0].Iterations = results.F(1), 7
	}
	ingest(t, db, "a.json", bundles...)
	want, err := db.Samples(ctx, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	var got []Sample
	var runs []int64
	if err := db.EachSample(ctx, Filter{}, SampleOptions{Stats: true}, func(s Sample) error {
		got = append(got, s)
		if len(runs) == 0 || runs[len(runs)-1] != s.RunID {
			runs = append(runs, s.RunID)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// Each run's together, all of them once.
	if len(runs) != 12 || len(slices.Compact(slices.Sorted(slices.Values(runs)))) != 12 || len(got) != len(want) {
		t.Fatalf("runs in order %v, %d samples of %d", runs, len(got), len(want))
	}
	byRun := map[int64][]Sample{}
	for _, s := range want {
		byRun[s.RunID] = append(byRun[s.RunID], s)
	}
	for i, s := range got {
		if w := byRun[runs[i/60]][i%60]; !reflect.DeepEqual(s, w) {
			t.Fatalf("sample %d: %+v, want %+v", i, s, w)
		}
	}
	n := 0
	if err := db.EachSample(ctx, Filter{RunIDs: []int64{1}}, SampleOptions{}, func(s Sample) error {
		if n == 0 && (s.Min != nil || s.Iterations != 0 || s.X == nil || s.Value == 0) {
			t.Errorf("without Stats: %+v", s)
		}
		n++
		return nil
	}); err != nil || n != 60 {
		t.Errorf("run 1: %d samples, %v", n, err)
	}
	stop := errors.New("stop")
	n = 0
	if err := db.EachSample(ctx, Filter{}, SampleOptions{}, func(Sample) error {
		if n++; n == 700 {
			return stop
		}
		return nil
	}); err != stop || n != 700 {
		t.Errorf("fn's error after %d samples: %v", n, err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := db.EachSample(cctx, Filter{}, SampleOptions{}, func(Sample) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled walk: %v", err)
	}
}

// TestEachSampleTags: each sample has its own tags, as ingested, though
// the reader keeps recent tag sets decoded and shares them — the last
// one, the ones seen lately, none once more than it keeps were seen.
func TestEachSampleTags(t *testing.T) {
	db := openTemp(t)
	b := osuBundle("acc", "ib", "1", 0)
	n := tagMapsKept + 300
	for i := range 2 * n {
		s := results.Sample{Metric: "bandwidth", Unit: results.UnitMBps, Value: float64(i + 1)}
		switch {
		case i%5 == 0: // none
		case i%5 == 1 && i > 5: // as the one before the last
			s.Tags = b.Samples[i-2].Tags
		default: // a pair of many, each coming back n samples later
			j := i % n
			s.Tags = map[string]string{"from": fmt.Sprintf("n%d", j/64), "to": fmt.Sprintf("n%d", j%64), "placement": "inter-node"}
		}
		b.Samples = append(b.Samples, s)
	}
	ingest(t, db, "a.json", b)
	i := 0
	err := db.EachSample(context.Background(), Filter{}, SampleOptions{}, func(s Sample) error {
		if want := b.Samples[i].Tags; s.Value != b.Samples[i].Value || !reflect.DeepEqual(s.Tags, want) {
			t.Fatalf("sample %d: value %v tags %v, want %v %v", i, s.Value, s.Tags, b.Samples[i].Value, want)
		}
		i++
		return nil
	})
	if err != nil || i != len(b.Samples) {
		t.Fatalf("%d samples of %d, %v", i, len(b.Samples), err)
	}
}
