package compare

import (
	"context"
	"errors"
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
			"selector fabrc=ib selects no runs; no run has a label fabrc (did you mean fabric?); label keys: fabric; campaigns: acceptance, quickstart"},
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
