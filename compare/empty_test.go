package compare

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sbench/sbench/results"
	"github.com/sbench/sbench/store"
)

func TestEditDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		d    int
	}{
		{"", "", 0},
		{"kernel", "kernel", 0},
		{"kernal", "kernel", 1},
		{"osu_latncy", "osu_latency", 1},
		{"laetncy", "latency", 1}, // a swapped pair is one typo
		{"ib", "eth", 3},
		{"", "abc", 3},
		{"µs", "us", 1}, // characters, not bytes
	} {
		if got := EditDistance(c.a, c.b); got != c.d {
			t.Errorf("EditDistance(%q, %q) = %d, want %d", c.a, c.b, got, c.d)
		}
		if got := EditDistance(c.b, c.a); got != c.d {
			t.Errorf("EditDistance(%q, %q) = %d, want %d (symmetric)", c.b, c.a, got, c.d)
		}
	}
}

func TestSuggest(t *testing.T) {
	names := []string{"osu_latency", "osu_bw", "osu_bibw", "latency", "bw"}
	for _, c := range []struct {
		typed string
		want  []string
	}{
		{"osu_latncy", []string{"osu_latency"}},
		{"OSU_BW", []string{"osu_bw", "osu_bibw"}}, // case does not count; closest first
		{"osu_bibv", []string{"osu_bibw"}},
		{"bx", []string{"bw"}},
		{"hpl", nil},
		{"osu_latency", nil}, // exact: nothing to suggest
	} {
		got := Suggest(c.typed, names)
		if strings.Join(got, ",") != strings.Join(c.want, ",") {
			t.Errorf("Suggest(%q) = %q, want %q", c.typed, got, c.want)
		}
	}
}

// An empty selection names what the archive has instead of "nothing to
// compare".
func TestExplainEmpty(t *testing.T) {
	ctx := context.Background()
	a := newArchive(t)
	t0 := time.Date(2024, 6, 1, 9, 0, 0, 0, time.UTC)
	a.add("acceptance", "osu_latency", "1", t0, map[string]string{"fabric": "ib"})
	a.add("acceptance", "osu_bw", "2", t0.Add(time.Hour), map[string]string{"fabric": "eth"})
	a.add("quickstart", "latency", "3", t0.Add(2*time.Hour), map[string]string{"fabric": "ib"})
	for _, c := range []struct {
		what string
		f    store.Filter
		want string
	}{
		{"selector fabric=ibx", store.Filter{Labels: map[string]string{"fabric": "ibx"}},
			"selector fabric=ibx selects no runs; labels in the archive: fabric=ib, fabric=eth (did you mean fabric=ib?); campaigns: acceptance, quickstart"},
		{"selector fabrc=ib", store.Filter{Labels: map[string]string{"fabrc": "ib"}},
			"selector fabrc=ib selects no runs; no run has a label or parameter fabrc (did you mean fabric?); label keys: fabric; campaigns: acceptance, quickstart"},
		{"--benchmark osu_latncy", store.Filter{Benchmarks: []string{"osu_latncy"}},
			"--benchmark osu_latncy selects no runs; benchmarks: latency, osu_bw, osu_latency (did you mean osu_latency?); campaigns: acceptance, quickstart"},
		{"--campaign acceptanse", store.Filter{Campaign: "acceptanse"},
			"--campaign acceptanse selects no runs; campaigns: acceptance, quickstart (did you mean acceptance?)"},
		{"--run 40-50", store.Filter{RunIDs: []int64{40, 41}},
			"--run 40-50 selects no runs; run ids in the archive: 1-3; campaigns: acceptance, quickstart"},
		// Each value exists, not together: say which condition empties it.
		{"--campaign quickstart --benchmark osu_bw", store.Filter{Campaign: "quickstart", Benchmarks: []string{"osu_bw"}},
			"--campaign quickstart --benchmark osu_bw selects no runs; each condition matches runs, not all together: without the campaign condition 1 run matches, with acceptance"},
		{"--label fabric=eth --campaign quickstart", store.Filter{Campaign: "quickstart", Labels: map[string]string{"fabric": "eth"}},
			"--label fabric=eth --campaign quickstart selects no runs; each condition matches runs, not all together: without the campaign condition 1 run matches, with acceptance"},
		{"--since 2025-01-01", store.Filter{Since: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)},
			"--since 2025-01-01 selects no runs; the archive's runs started from 2024-06-01T09:00:00Z to 2024-06-01T11:00:00Z"},
	} {
		err := ExplainEmpty(ctx, a, c.what, c.f)
		var ee *EmptySelectionError
		if !errors.As(err, &ee) || !errors.Is(err, ErrNoData) {
			t.Errorf("%s: %v, want an *EmptySelectionError wrapping ErrNoData", c.what, err)
			continue
		}
		if err.Error() != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.what, err, c.want)
		}
	}
	empty := newArchive(t)
	if err := ExplainEmpty(ctx, empty, "--campaign x", store.Filter{Campaign: "x"}); err == nil || !strings.Contains(err.Error(), "the archive has no runs yet") {
		t.Errorf("empty archive: %v", err)
	}
}

// sweepRuns adds runs of a sweep of param.buf and of ntasks_per_node, as
// the runner records them: the swept parameter in the run's parameters,
// every swept setting in its variant's name; repeats runs of each.
func (a *archive) sweepRuns(repeats int) {
	a.t.Helper()
	t0 := time.Date(2024, 6, 1, 9, 0, 0, 0, time.UTC)
	i := 0
	for _, c := range []struct {
		variant string
		params  map[string]string
		value   float64
	}{
		{"param.buf=16384", map[string]string{"buf": "16384"}, 1000},
		{"param.buf=262144", map[string]string{"buf": "262144"}, 800},
		{"ntasks_per_node=1", nil, 500},
		{"ntasks_per_node=2", nil, 400},
	} {
		for range repeats {
			i++
			b := results.New()
			b.Campaign, b.Variant, b.Params = "sweep", c.variant, c.params
			b.Start = t0.Add(time.Duration(i) * time.Minute)
			b.End = b.Start.Add(time.Minute)
			b.Benchmark = results.Benchmark{Name: "bw", Kind: "native", Kernel: "bw"}
			b.Samples = []results.Sample{{Metric: "bandwidth", Unit: "MB/s", X: results.F(1 << 20), XUnit: results.UnitBytes, Value: c.value + float64(i)}}
			if _, err := a.Ingest(context.Background(), "sweep-"+strconv.Itoa(i), []*results.Bundle{b}); err != nil {
				a.t.Fatal(err)
			}
		}
	}
}

// TestCompareSweptValues: a swept value selects by its name, as a label
// does: buf=16384 against buf=262144, param.buf=… the same,
// ntasks_per_node=1 against 2 (a Slurm key, only in the variant's name);
// and an empty selection names the parameters.
func TestCompareSweptValues(t *testing.T) {
	ctx := context.Background()
	a := newArchive(t)
	a.sweepRuns(4)
	for _, c := range []struct{ old, new string }{{"buf=16384", "buf=262144"}, {"param.buf=16384", "param.buf=262144"}, {"ntasks_per_node=1", "ntasks_per_node=2"}} {
		old, err := ParseSelector(c.old)
		if err != nil {
			t.Fatal(err)
		}
		nw, _ := ParseSelector(c.new)
		res, err := Compare(ctx, a.DB, old, nw, DefaultOptions())
		if err != nil {
			t.Errorf("compare %s %s: %v", c.old, c.new, err)
			continue
		}
		if len(res.Old.Runs) != 4 || len(res.New.Runs) != 4 || res.Regressions() != 1 {
			t.Errorf("compare %s %s: runs %v and %v, %d regressions: want 4 a side and the drop found", c.old, c.new, res.Old.Runs, res.New.Runs, res.Regressions())
		}
	}
	for _, c := range []struct {
		what string
		f    store.Filter
		want string
	}{
		{"selector buf=1638", store.Filter{Labels: map[string]string{"buf": "1638"}},
			"selector buf=1638 selects no runs; parameters in the archive: buf=16384, buf=262144 (did you mean buf=16384?); campaigns: sweep"},
		{"selector param.buf=1638", store.Filter{Labels: map[string]string{"param.buf": "1638"}},
			"selector param.buf=1638 selects no runs; parameters in the archive: buf=16384, buf=262144 (did you mean param.buf=16384?); campaigns: sweep"},
		{"selector bf=16384", store.Filter{Labels: map[string]string{"bf": "16384"}},
			"selector bf=16384 selects no runs; no run has a label or parameter bf (did you mean buf?); parameters and swept settings: buf, ntasks_per_node; campaigns: sweep"},
		{"selector ntasks_per_node=4", store.Filter{Labels: map[string]string{"ntasks_per_node": "4"}},
			"selector ntasks_per_node=4 selects no runs; parameters in the archive: ntasks_per_node=1, ntasks_per_node=2 (did you mean ntasks_per_node=1 or 2?); campaigns: sweep"},
		{"selector buf=16384,ntasks_per_node=2", store.Filter{Labels: map[string]string{"buf": "16384", "ntasks_per_node": "2"}},
			"selector buf=16384,ntasks_per_node=2 selects no runs; each condition matches runs, not all together: without the parameter buf condition 4 runs match, with no buf"},
	} {
		err := ExplainEmpty(ctx, a, c.what, c.f)
		if err == nil || err.Error() != c.want {
			t.Errorf("%s:\n got %v\nwant %s", c.what, err, c.want)
		}
	}
}

// compare names what exists when a side selects nothing.
func TestCompareEmptySide(t *testing.T) {
	a := newArchive(t)
	a.add("acc", "osu_latency", "1", time.Date(2024, 6, 1, 0, 0, 0, 0, time.UTC), map[string]string{"fabric": "ib"})
	old, _ := ParseSelector("fabric=ib")
	nw, _ := ParseSelector("fabric=ibx")
	_, err := Compare(context.Background(), a.DB, old, nw, DefaultOptions())
	var ee *EmptySelectionError
	if !errors.As(err, &ee) || !errors.Is(err, ErrNoData) || strings.Contains(err.Error(), "nothing to compare") ||
		!strings.Contains(err.Error(), "selector fabric=ibx selects no runs; labels in the archive: fabric=ib") {
		t.Errorf("compare with an empty side: %v", err)
	}
}

// A run both sides select is the old side's: compare baseline:X
// campaign:Y, where the baseline's runs are of the campaign, compares the
// baseline with the campaign's other runs.
func TestCompareOverlapGoesToOldSide(t *testing.T) {
	ctx := context.Background()
	a := newArchive(t)
	t0 := time.Date(2024, 6, 1, 0, 0, 0, 0, time.UTC)
	var base []int64
	for i := range 3 {
		base = append(base, a.add("acc", "osu_latency", "1", t0.Add(time.Duration(i)*time.Minute), nil))
	}
	later := a.add("acc", "osu_latency", "2", t0.AddDate(0, 0, 1), nil)
	if _, err := a.SetBaseline(ctx, store.Baseline{Name: "pre", RunIDs: base}); err != nil {
		t.Fatal(err)
	}
	old, _ := ParseSelector("baseline:pre")
	nw, _ := ParseSelector("campaign:acc")
	res, err := Compare(ctx, a.DB, old, nw, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.New.Runs) != 1 || res.New.Runs[0] != later || len(res.Old.Runs) != 3 {
		t.Errorf("old runs %v, new runs %v: want the baseline's 1-3 on the old side only, 4 on the new", res.Old.Runs, res.New.Runs)
	}
	want := "Runs 1-3 selected by both sides: compared on the old side (baseline:pre) only"
	if len(res.Warnings) == 0 || res.Warnings[0] != want {
		t.Errorf("warnings %q, want %q first", res.Warnings, want)
	}
	if r := res.Tables[0].Rows[0]; r.Old.N != 3 || r.New.N != 1 {
		t.Errorf("row %+v: want 3 old values and 1 new", r)
	}
	// Nothing left on the new side: nothing to compare, and why.
	_, err = Compare(ctx, a.DB, nw, old, DefaultOptions())
	if !errors.Is(err, ErrNoData) || !strings.Contains(err.Error(), "every run baseline:pre selects is selected by campaign:acc too (runs 1-3)") {
		t.Errorf("new side inside the old: %v", err)
	}
	// Build applies the same rule to sides given whole.
	s := Side{Name: "x", Runs: []store.Run{{ID: 9, Status: results.StatusOK}}}
	if _, err := Build(s, s, DefaultOptions()); !errors.Is(err, ErrNoData) {
		t.Errorf("Build of one side against itself: %v", err)
	}
}

// history names what exists when its selection is empty.
func TestLoadHistoryEmpty(t *testing.T) {
	a := newArchive(t)
	a.add("acc", "osu_latency", "1", time.Date(2024, 6, 1, 0, 0, 0, 0, time.UTC), nil)
	_, err := LoadHistory(context.Background(), a.DB, HistoryQuery{Benchmark: "osu_latncy"})
	var ee *EmptySelectionError
	if !errors.As(err, &ee) || err.Error() != "history of benchmark osu_latncy selects no runs; benchmarks: osu_latency (did you mean osu_latency?); campaigns: acc" {
		t.Errorf("history of an unknown benchmark: %v", err)
	}
}
