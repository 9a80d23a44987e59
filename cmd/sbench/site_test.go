package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sbench/sbench/compare"
	"github.com/sbench/sbench/internal/synth"
	"github.com/sbench/sbench/store"
)

// siteSpec is the site package's month of two clusters measured nightly,
// alpha's bandwidth 20% lower from day 18 on (a kernel upgrade).
var siteSpec = synth.Month

// synthArchive writes s's runs into a new archive.
func synthArchive(t *testing.T, s synth.Spec) string {
	t.Helper()
	path, db := newArchive(t, "site.db")
	defer db.Close()
	mustIngest(t, db, "synth", synth.All(s)...)
	return path
}

var stepRowRE = regexp.MustCompile(`<tr class="step" data-x="([^"]*)" data-index="(\d+)" data-run="(\d+)" data-before="([^"]+)" data-after="([^"]+)" data-delta="([^"]+)" data-p="([^"]+)" data-change="([a-z]+)">`)

// The site's history page says what sbench history says: at every size,
// the same steps — first run, levels, change, p-value, verdict — the
// sizes of the page held together as one family.
func TestSiteStepsAreHistorys(t *testing.T) {
	db := synthArchive(t, siteSpec)
	dir := filepath.Join(t.TempDir(), "site")
	stdout, stderr, code := sbench(t, "site", "--db", db, "-o", dir, "--all-sizes")
	if code != 0 {
		t.Fatalf("site: exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "240 runs, 8 histories; 251 pages written, 0 unchanged, 0 removed") {
		t.Errorf("stdout: %s", stdout)
	}
	if n := compareSteps(t, db, dir); n == 0 {
		t.Error("no step at any size: the comparison compared nothing")
	}
	// A second run writes nothing.
	stdout, _, code = sbench(t, "site", "--db", db, "-o", dir, "--all-sizes")
	if code != 0 || !strings.Contains(stdout, "0 pages written, 251 unchanged, 0 removed") {
		t.Errorf("second site: exit %d: %s", code, stdout)
	}
	// Two more nights: the update reads only the new runs' samples and
	// keeps the others' from its manifest; its steps are still history's.
	more := siteSpec
	more.Start, more.Days, more.StepDay, more.OutlierDay, more.Seed = siteSpec.Start.AddDate(0, 0, 30), 2, 0, 0, 5
	a, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	mustIngest(t, a, "synth", synth.All(more)...)
	a.Close()
	if _, stderr, code := sbench(t, "site", "--db", db, "-o", dir, "--all-sizes"); code != 0 {
		t.Fatalf("site after two nights: %s", stderr)
	}
	compareSteps(t, db, dir)
}

// compareSteps compares the steps of alpha's osu_bw at ppn=1 on its site
// page with sbench history --json's, size by size, and returns how many
// there are.
func compareSteps(t *testing.T, db, dir string) int {
	t.Helper()
	pages, _ := filepath.Glob(filepath.Join(dir, "h", "alpha-osu_bw-*.html"))
	var page string
	for _, p := range pages {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(data), "variant=ppn=1") {
			page = string(data)
		}
	}
	if page == "" {
		t.Fatalf("no page of alpha's osu_bw at ppn=1 among %v", pages)
	}
	onPage := map[string][]compare.StepChange{}
	for _, m := range stepRowRE.FindAllStringSubmatch(page, -1) {
		var c compare.StepChange
		c.Index, _ = strconv.Atoi(m[2])
		c.Run, _ = strconv.ParseInt(m[3], 10, 64)
		c.Before, _ = strconv.ParseFloat(m[4], 64)
		c.After, _ = strconv.ParseFloat(m[5], 64)
		c.Delta, _ = strconv.ParseFloat(m[6], 64)
		c.P, _ = strconv.ParseFloat(m[7], 64)
		c.Change = compare.Change(m[8])
		onPage[m[1]] = append(onPage[m[1]], c)
	}
	// The page's sizes are one family (compare.HistoryFamily): its steps
	// are sbench history's at each size, held together.
	a, err := store.OpenReadOnly(db)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	var family []*compare.History
	alone := 0
	for k := 0; k < siteSpec.Sizes; k++ {
		x := strconv.Itoa(1 << k)
		stdout, stderr, code := sbench(t, "history", "--db", db, "--benchmark", "osu_bw", "--metric", "bandwidth", "--x", x,
			"--label", "system=alpha", "--variant", "ppn=1", "--json")
		if code != 0 {
			t.Fatalf("history --x %s: exit %d: %s", x, code, stderr)
		}
		var h compare.History
		if err := json.Unmarshal([]byte(stdout), &h); err != nil {
			t.Fatal(err)
		}
		alone += len(h.Changes)
		xv := float64(int(1) << k)
		fh, err := compare.LoadHistory(t.Context(), a, compare.HistoryQuery{Benchmark: "osu_bw", Metric: "bandwidth", X: &xv,
			Labels: map[string]string{"system": "alpha"}, Variant: "ppn=1", Window: compare.DefaultWindow, Alpha: 0.05, Threshold: 0.05,
			Permutations: compare.FamilyPermutations(siteSpec.Sizes, 0.05)})
		if err != nil {
			t.Fatal(err)
		}
		if fh.P != h.P || fh.Tested != h.Tested || len(fh.Changes) != len(h.Changes) {
			t.Fatalf("x=%s: sbench history and compare.LoadHistory differ: %+v, %+v", x, h.Changes, fh.Changes)
		}
		family = append(family, fh)
	}
	compare.HistoryFamily(family)
	steps := 0
	for k, h := range family {
		x := strconv.Itoa(1 << k)
		got := onPage[x]
		if len(got) != len(h.Changes) {
			t.Errorf("x=%s: %d steps on the page, sbench history's held as a family have %d", x, len(got), len(h.Changes))
			continue
		}
		for i, c := range h.Changes {
			g := got[i]
			if g.Index != c.Index || g.Run != c.Run || g.Before != c.Before || g.After != c.After || g.Delta != c.Delta || g.P != c.P || g.Change != c.Change {
				t.Errorf("x=%s step %d: page %+v\nhistory %+v", x, i, g, c)
			}
		}
		steps += len(h.Changes)
	}
	t.Logf("%d steps at %d sizes, one by one; %d as the page's family", alone, siteSpec.Sizes, steps)
	return steps
}

func TestSiteUsageErrors(t *testing.T) {
	db := synthArchive(t, synth.Spec{Systems: []string{"a"}, Start: time.Unix(0, 0).UTC(), Days: 1, Configs: 1, Sizes: 2})
	foreign := t.TempDir()
	if err := os.WriteFile(filepath.Join(foreign, "notes.txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	usageErrors{
		{nil, "-o DIR is required"},
		{[]string{"-o", t.TempDir() + "/s", "--threshold", "x"}, "--threshold"},
		{[]string{"-o", t.TempDir() + "/s", "--window", "1"}, "--window"},
		{[]string{"-o", t.TempDir() + "/s", "--alpha", "2"}, "--alpha"},
		{[]string{"-o", t.TempDir() + "/s", "--benchmark", "nothing"}, "no run"},
		{[]string{"-o", foreign}, "is not empty and holds no sbench site"},
	}.check(t, []string{"site"}, "--db", db)
}
