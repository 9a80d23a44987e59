package compare

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sbench/sbench/results"
	"github.com/sbench/sbench/store"
)

func TestParseSelector(t *testing.T) {
	day := time.Date(2024, 6, 1, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		in   string
		want Selector
		text string // canonical form
	}{
		{"fabric=ib", Selector{Kind: SelectLabels, Labels: map[string]string{"fabric": "ib"}}, "fabric=ib"},
		{"run=before,fabric=ib", Selector{Kind: SelectLabels, Labels: map[string]string{"run": "before", "fabric": "ib"}}, "fabric=ib,run=before"},
		{"section=use tcp for osu_bw", Selector{Kind: SelectLabels, Labels: map[string]string{"section": "use tcp for osu_bw"}}, "section=use tcp for osu_bw"},
		{"url=http://x", Selector{Kind: SelectLabels, Labels: map[string]string{"url": "http://x"}}, "url=http://x"},
		{"empty=", Selector{Kind: SelectLabels, Labels: map[string]string{"empty": ""}}, "empty="},
		{"run:12", Selector{Kind: SelectRuns, RunIDs: []int64{12}}, "run:12"},
		{"run:9,3-5,4", Selector{Kind: SelectRuns, RunIDs: []int64{3, 4, 5, 9}}, "run:3-5,9"},
		{"runs:1", Selector{Kind: SelectRuns, RunIDs: []int64{1}}, "run:1"},
		{"campaign:acceptance", Selector{Kind: SelectCampaign, Campaign: "acceptance"}, "campaign:acceptance"},
		{"campaign:acc@2024-06-01", Selector{Kind: SelectCampaign, Campaign: "acc", Day: day}, "campaign:acc@2024-06-01"},
		{"baseline:pre-upgrade", Selector{Kind: SelectBaseline, Baseline: "pre-upgrade"}, "baseline:pre-upgrade"},
		{"campaign:acc@latest", Selector{Kind: SelectCampaign, Campaign: "acc", Submission: 1}, "campaign:acc@latest"},
		{"campaign:acc@1", Selector{Kind: SelectCampaign, Campaign: "acc", Submission: 1}, "campaign:acc@latest"},
		{"campaign:acc@3", Selector{Kind: SelectCampaign, Campaign: "acc", Submission: 3}, "campaign:acc@3"},
		{"job:4242", Selector{Kind: SelectJob, JobIDs: []string{"4242"}}, "job:4242"},
		{"job:4242_7,local-20261201T110323508-56164d-1,4242_7", Selector{Kind: SelectJob, JobIDs: []string{"4242_7", "local-20261201T110323508-56164d-1"}},
			"job:4242_7,local-20261201T110323508-56164d-1"},
		{"job:4242.3r1,4242.3", Selector{Kind: SelectJob, JobIDs: []string{"4242.3r1", "4242.3"}}, "job:4242.3r1,4242.3"},
		{"since:baseline:pre", Selector{Kind: SelectSince, Since: &Selector{Kind: SelectBaseline, Baseline: "pre"}}, "since:baseline:pre"},
		{"since:campaign:acc@1", Selector{Kind: SelectSince, Since: &Selector{Kind: SelectCampaign, Campaign: "acc", Submission: 1}}, "since:campaign:acc@latest"},
		{"since:fabric=ib", Selector{Kind: SelectSince, Since: &Selector{Kind: SelectLabels, Labels: map[string]string{"fabric": "ib"}}}, "since:fabric=ib"},
	} {
		got, err := ParseSelector(c.in)
		if err != nil {
			t.Errorf("ParseSelector(%q): %v", c.in, err)
			continue
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("ParseSelector(%q) = %+v, want %+v", c.in, got, c.want)
		}
		if s := got.String(); s != c.text {
			t.Errorf("ParseSelector(%q).String() = %q, want %q", c.in, s, c.text)
		}
	}
}

func TestParseSelectorErrors(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", "empty selector"},
		{"ib", `"ib" is not KEY=VALUE`},
		{"=ib", `"=ib" is not KEY=VALUE`},
		{"a=1,a=2", `label "a" given twice`},
		{"run:", "want a positive integer"},
		{"run:0", "want a positive integer"},
		{"run:x", "want a positive integer"},
		{"run:5-3", "want A-B with A ≤ B"},
		{"run:1-99999999", "more than"},
		{"campaign:", "campaign name is empty"},
		{"campaign:acc@June", "want a date YYYY-MM-DD, latest, or N"},
		{"campaign:acc@0", "@1 (or @latest) is the newest"},
		{"baseline:", "baseline name is empty"},
		{"job:", `job id ""`},
		{"job:12,,13", `job id ""`},
		{"job:a b", `job id "a b"`},
		{"since:", "empty selector"},
		{"since:since:run:1", "write since: once"},
		{"since:run:x", "want a positive integer"},
		{"jb:12", `unknown kind "jb"`},
	} {
		_, err := ParseSelector(c.in)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseSelector(%q) = %v, want an error with %q", c.in, err, c.want)
		}
	}
}

// archive is an archive in a temporary file; bundles are added with add.
type archive struct {
	*store.DB
	t *testing.T
}

func newArchive(t *testing.T) *archive {
	t.Helper()
	db, err := store.Open(filepath.Join(t.TempDir(), "a.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return &archive{DB: db, t: t}
}

// add ingests a run and returns its id.
func (a *archive) add(campaign, benchmark, job string, start time.Time, labels map[string]string) int64 {
	a.t.Helper()
	b := results.New()
	b.Campaign, b.Labels, b.Start, b.End = campaign, labels, start, start.Add(time.Minute)
	b.Benchmark = results.Benchmark{Name: benchmark, Kind: "native", Kernel: benchmark}
	b.Job.ID, _, _ = strings.Cut(job, "_")
	if _, task, ok := strings.Cut(job, "_"); ok {
		b.Job.ArrayIndex = task
	}
	b.Samples = []results.Sample{{Metric: "latency", Unit: "us", X: results.F(8), XUnit: results.UnitBytes, Value: float64(start.Unix() % 97)}}
	res, err := a.Ingest(context.Background(), fmt.Sprintf("%s-%d", benchmark, start.Unix()), []*results.Bundle{b})
	if err != nil || len(res.Added) != 1 {
		a.t.Fatalf("ingest: %v %+v", err, res)
	}
	return res.Added[0]
}

func (a *archive) job(campaign, id string, submitted time.Time) {
	a.t.Helper()
	if _, err := a.RecordJob(context.Background(), store.Job{SlurmID: id, Campaign: campaign, Submitted: submitted}); err != nil {
		a.t.Fatal(err)
	}
}

// selected resolves a selector and returns the ids of its runs.
func (a *archive) selected(sel string) ([]int64, error) {
	a.t.Helper()
	s, err := ParseSelector(sel)
	if err != nil {
		a.t.Fatal(err)
	}
	f, err := s.Filter(context.Background(), a)
	if err != nil {
		return nil, err
	}
	runs, err := a.Runs(context.Background(), f)
	if err != nil {
		a.t.Fatal(err)
	}
	ids := runIDs(runs)
	slices.Sort(ids)
	return ids, nil
}

func TestSelectorFilter(t *testing.T) {
	ctx := context.Background()
	a := newArchive(t)
	day := time.Date(2024, 6, 1, 9, 0, 0, 0, time.UTC)
	// Campaign acc: submitted on June 1st (jobs 100 and 101, a minute
	// apart), again on the 3rd (job 200, an array), and run locally on the
	// 5th (two jobs of one sbench local, an hour apart, the second
	// interrupted and resumed by sbench local --resume).
	a.job("acc", "100", day)
	a.job("acc", "101", day.Add(time.Minute))
	a.job("acc", "200", day.AddDate(0, 0, 2))
	a.job("acc", "local-20240605T090000000-abc123-1", day.AddDate(0, 0, 4))
	a.job("acc", "local-20240605T090000000-abc123-2", day.AddDate(0, 0, 4).Add(time.Hour))
	r1 := a.add("acc", "latency", "100", day, map[string]string{"fabric": "ib"})
	r2 := a.add("acc", "bw", "101", day.Add(2*time.Minute), map[string]string{"fabric": "ib"})
	r3 := a.add("acc", "latency", "200_0", day.AddDate(0, 0, 2), map[string]string{"fabric": "eth"})
	r4 := a.add("acc", "latency", "200_1", day.AddDate(0, 0, 2).Add(time.Minute), map[string]string{"fabric": "eth"})
	r5 := a.add("acc", "latency", "local-20240605T090000000-abc123-1", day.AddDate(0, 0, 4), nil)
	r6 := a.add("acc", "latency", "local-20240605T090000000-abc123-2", day.AddDate(0, 0, 4).Add(time.Hour), nil)
	a.job("acc", "local-20240605T090000000-abc123-2-resume1", day.AddDate(0, 0, 4).Add(2*time.Hour))
	r8 := a.add("acc", "bw", "local-20240605T090000000-abc123-2-resume1", day.AddDate(0, 0, 4).Add(2*time.Hour), nil)
	r7 := a.add("other", "latency", "900", day.AddDate(0, 0, 3), nil)
	if _, err := a.SetBaseline(ctx, store.Baseline{Name: "pre", RunIDs: []int64{r1, r2}}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		sel  string
		want []int64
	}{
		{"fabric=ib", []int64{r1, r2}},
		{"run:1-2", []int64{1, 2}},
		{"campaign:acc", []int64{r1, r2, r3, r4, r5, r6, r8}},
		{"campaign:acc@2024-06-03", []int64{r3, r4}},
		{"baseline:pre", []int64{r1, r2}},
		// A submission is the jobs submitted together: one sbench local,
		// however long its jobs ran, with its resumes; one sbench submit,
		// its jobs seconds apart.
		{"campaign:acc@latest", []int64{r5, r6, r8}},
		{"campaign:acc@2", []int64{r3, r4}},
		{"campaign:acc@3", []int64{r1, r2}},
		{"job:100", []int64{r1}},
		{"job:200", []int64{r3, r4}}, // every task of the array
		{"job:200_1", []int64{r4}},
		{"job:100,900", []int64{r1, r7}},
		{"job:local-20240605T090000000-abc123-2", []int64{r6}},
		// The runs since the baseline: after its newest run, its own left out.
		{"since:baseline:pre", []int64{r3, r4, r5, r6, r8, r7}},
		{"since:campaign:acc@2", []int64{r5, r6, r8, r7}},
	} {
		got, err := a.selected(c.sel)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("%s selects %v, %v; want %v", c.sel, got, err, c.want)
		}
	}
	for _, c := range []struct{ sel, want string }{
		{"baseline:pree", "selector baseline:pree selects no runs; no baseline pree in the archive (did you mean pre?); baselines: pre"},
		{"campaign:acc@4", "selector campaign:acc@4 selects no runs; campaign acc has 3 submissions (the newest on 2024-06-05 09:00)"},
		{"campaign:ac@latest", "selector campaign:ac@latest selects no runs; campaign ac has no recorded jobs (submissions are what sbench submit and sbench local record); campaigns with jobs: acc (did you mean acc?)"},
		{"since:fabric=ibx", "selector fabric=ibx (of since:fabric=ibx) selects no runs; labels in the archive: fabric=eth, fabric=ib (did you mean fabric=ib?)"},
	} {
		_, err := a.selected(c.sel)
		var ee *EmptySelectionError
		if !errors.As(err, &ee) || !errors.Is(err, ErrNoData) || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s: %v\nwant an *EmptySelectionError starting %q", c.sel, err, c.want)
		}
	}
	if _, err := a.selected("baseline:pree"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("unknown baseline: %v, want it to wrap store.ErrNotFound too", err)
	}
	if _, err := a.selected("job:4242"); err != nil {
		t.Errorf("an unknown job: %v; want a filter selecting nothing, for ExplainEmpty to explain", err)
	}
	s, _ := ParseSelector("baseline:pre")
	if _, err := s.Filter(ctx, nil); err == nil {
		t.Error("a baseline selector with no archive gave a filter")
	}
	// Those that need no archive resolve without one.
	s, _ = ParseSelector("campaign:acc@2024-06-01")
	if f, err := s.Filter(ctx, nil); err != nil || f.Campaign != "acc" || !f.Since.Equal(time.Date(2024, 6, 1, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("campaign day: %+v, %v", f, err)
	}
}

// A baseline with no runs left must never become an empty filter, which
// would select every run.
func TestSelectorEmptyBaseline(t *testing.T) {
	a := newArchive(t)
	id := a.add("acc", "latency", "1", time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC), nil)
	ctx := context.Background()
	if _, err := a.SetBaseline(ctx, store.Baseline{Name: "b", RunIDs: []int64{id}}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.selected("baseline:b"); err != nil {
		t.Fatal(err)
	}
	s := Selector{Kind: SelectBaseline, Baseline: "b"}
	f, err := s.Filter(ctx, emptyBaseline{a})
	if err == nil {
		t.Errorf("a baseline with no runs gave the filter %+v", f)
	}
}

type emptyBaseline struct{ *archive }

func (emptyBaseline) Baseline(_ context.Context, name string) (store.Baseline, error) {
	return store.Baseline{Name: name}, nil
}

// FuzzParseSelector: any input is refused or parsed to a selector whose
// canonical text parses back to the same selector.
func FuzzParseSelector(f *testing.F) {
	for _, s := range []string{"fabric=ib", "run:1,3-5", "campaign:x@2024-01-02", "baseline:b", "a=1,b=2", "run:", ":", "=", "a=b=c",
		"campaign:x@latest", "campaign:x@7", "job:1_2,local-x-1", "since:baseline:b", "since:campaign:x@2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sel, err := ParseSelector(s)
		if err != nil {
			return
		}
		again, err := ParseSelector(sel.String())
		if err != nil {
			t.Fatalf("%q parsed to %+v, whose text %q does not parse: %v", s, sel, sel.String(), err)
		}
		if !reflect.DeepEqual(again, sel) {
			t.Fatalf("%q: %+v, round trip through %q gives %+v", s, sel, sel.String(), again)
		}
	})
}

// Two sbench submits of one campaign seconds apart are two submissions:
// each wrote its scripts to a directory of its own. One submit's jobs
// stay one submission however slowly sbatch took them.
func TestSubmissionsByScriptDirectory(t *testing.T) {
	t0 := time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)
	job := func(id, dir string, at time.Duration) store.Job {
		return store.Job{SlurmID: id, Campaign: "imb", Submitted: t0.Add(at),
			Script: "sbench-runs/imb/scripts/" + dir + "/0" + id + "-imb-steps.sbatch"}
	}
	subs := Submissions([]store.Job{
		job("1", "20261203T090000.000", 0), job("2", "20261203T090000.000", 5*time.Minute),
		job("3", "20261203T090030.000", 30*time.Second+5*time.Minute),
	})
	var got [][]string
	for _, s := range subs {
		var ids []string
		for _, j := range s {
			ids = append(ids, j.SlurmID)
		}
		got = append(got, ids)
	}
	if want := [][]string{{"3"}, {"1", "2"}}; !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("submissions %q, want %q (newest first)", got, want)
	}
}

// job:8.3r1 picks one attempt of one step of a requeued job; job:8r1 every
// step of that attempt; job:8.3 the step in every attempt.
func TestSelectorJobAttempts(t *testing.T) {
	a := newArchive(t)
	for in, want := range map[string]store.Filter{
		"job:8.3r1":     {Launches: []store.JobRef{{Job: "8", Step: "3", Restart: 1}}},
		"job:8r1,9":     {JobIDs: []string{"9"}, Launches: []store.JobRef{{Job: "8", Restart: 1}}},
		"job:8.3,8_2r0": {Launches: []store.JobRef{{Job: "8", Step: "3", Restart: -1}, {Job: "8", Task: "2", Restart: 0}}},
	} {
		sel, err := ParseSelector(in)
		if err != nil {
			t.Fatalf("ParseSelector(%q): %v", in, err)
		}
		got, err := sel.Filter(context.Background(), a)
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: filter %+v, want %+v", in, got, want)
		}
	}
	if _, err := ParseSelector("job:8.3.1r1"); err == nil || !strings.Contains(err.Error(), "step") {
		t.Errorf("job:8.3.1r1: %v", err)
	}
}
