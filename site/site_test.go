package site

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sbench/sbench/internal/synth"
	"github.com/sbench/sbench/store"
	"github.com/sbench/sbench/webpage"
)

// spec is synth.Month: 240 runs of two clusters, alpha's bandwidth 20%
// lower from day 18, beta's latency twice as high on day 26, every 23rd
// run failed.
var spec = synth.Month

// archive ingests s's bundles (at most limit, 0 for all) into db.
func ingest(t *testing.T, db *store.DB, s synth.Spec, limit int) {
	t.Helper()
	bs := synth.All(s)
	if limit > 0 {
		bs = bs[:limit]
	}
	if _, err := db.Ingest(context.Background(), "synth", bs); err != nil {
		t.Fatal(err)
	}
}

func newArchive(t *testing.T) *store.DB {
	t.Helper()
	db, err := store.Open(filepath.Join(t.TempDir(), "a.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	ingest(t, db, spec, 0)
	return db
}

func build(t *testing.T, db *store.DB, dir string) *Stats {
	t.Helper()
	st, err := Build(context.Background(), db, Options{Dir: dir, Generator: "sbench test", Threshold: 0.05})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func read(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// pages lists the site's pages (its HTML files), relative.
func pages(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(d.Name(), ".html") {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out = append(out, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

func TestBuildSite(t *testing.T) {
	db := newArchive(t)
	dir := filepath.Join(t.TempDir(), "site")
	st := build(t, db, dir)
	all := pages(t, dir)
	var hist, runs int
	for _, p := range all {
		switch {
		case strings.HasPrefix(p, "h/"):
			hist++
		case strings.HasPrefix(p, "runs/"):
			runs++
		case p != "index.html":
			t.Errorf("unexpected file %s", p)
		}
	}
	// The pages share one style sheet and one script, beside the index.
	for _, f := range []struct {
		name string
		want []byte
	}{{webpage.StyleFile, webpage.Style()}, {webpage.ScriptFile, webpage.Script()}} {
		if got := read(t, filepath.Join(dir, f.name)); got != string(f.want) {
			t.Errorf("%s: %d bytes, want the pages' %d", f.name, len(got), len(f.want))
		}
	}
	if runs != spec.Runs() || hist != 8 || st.Histories != 8 || len(st.Written) != len(all)+2 {
		t.Errorf("%d run pages, %d history pages (stats %+v); want %d and 8 (2 clusters × 2 benchmarks × 2 configurations), all written",
			runs, hist, st, spec.Runs())
	}
	for _, p := range all {
		s := read(t, filepath.Join(dir, p))
		if out := strings.ReplaceAll(s, `xmlns="http://www.w3.org/2000/svg"`, ""); !strings.HasSuffix(s, "</html>\n") ||
			strings.Contains(out, "http://") || strings.Contains(out, "https://") {
			t.Errorf("%s: not a whole page, or links out", p)
		}
		// Every link is relative and leads to a page of the site.
		for _, m := range regexp.MustCompile(`(?:href|data-href|src)="([^"#]+)`).FindAllStringSubmatch(s, -1) {
			target := filepath.Join(dir, filepath.Dir(p), m[1])
			if _, err := os.Stat(target); err != nil {
				t.Errorf("%s links to %s, which is not there", p, m[1])
			}
		}
	}

	index := read(t, filepath.Join(dir, "index.html"))
	for _, want := range []string{"<th>alpha</th><th>beta</th>", `<span class="mark worse"`, "2 regressions", "kernel: 5.14.0-362.8.1.el9_3.x86_64 → 5.14.0-427.13.1.el9_4.x86_64", `class="spark"`} {
		if !strings.Contains(index, want) {
			t.Errorf("index lacks %q", want)
		}
	}
	// alpha's osu_bw at ppn=1: a step at the upgrade, with its provenance.
	var page string
	for _, p := range all {
		if strings.HasPrefix(p, "h/alpha-osu_bw-") {
			if s := read(t, filepath.Join(dir, p)); strings.Contains(s, "variant=ppn=1") {
				page = s
			}
		}
	}
	if page == "" {
		t.Fatal("no history page of alpha osu_bw ppn=1")
	}
	for _, want := range []string{`<svg class="sb-fig"`, `data-change="worse"`, "REGRESSION", "kernel: 5.14.0-362.8.1.el9_3.x86_64 → 5.14.0-427.13.1.el9_4.x86_64",
		`class="sb-toggle"`, `data-href="../runs/`} {
		if !strings.Contains(page, want) {
			t.Errorf("history page lacks %q", want)
		}
	}
	// beta's latency on day 26 is outside its control band.
	outside := false
	for _, p := range all {
		if strings.HasPrefix(p, "h/beta-osu_latency-") {
			outside = outside || strings.Contains(read(t, filepath.Join(dir, p)), "OUTSIDE the control band")
		}
	}
	if !outside {
		t.Error("no history page of beta's osu_latency marks day 26 outside its band")
	}
	// A failed run's page says why; an ok run's quotes the tool.
	failed := read(t, filepath.Join(dir, "runs/23.html"))
	if !strings.Contains(failed, "srun: error: Node failure on") || !strings.Contains(failed, `<h1 class="bad">Run 23`) {
		t.Errorf("failed run's page:\n%.600s", failed)
	}
	ok := read(t, filepath.Join(dir, "runs/1.html"))
	for _, want := range []string{"# OSU MPI Bandwidth Test v7.4", "<h2 id=\"samples\">Samples (40)</h2>", "mlx5_0 port 1 ACTIVE", "history of bandwidth"} {
		if !strings.Contains(ok, want) {
			t.Errorf("run 1's page lacks %q", want)
		}
	}
}

// A second build with nothing new writes nothing; ten new runs rewrite
// their pages, their histories and the index, nothing else; a pruned run
// loses its page and updates its history and the index.
func TestIncremental(t *testing.T) {
	db := newArchive(t)
	dir := filepath.Join(t.TempDir(), "site")
	first := build(t, db, dir)
	mtimes := func() map[string]time.Time {
		out := map[string]time.Time{}
		for _, p := range pages(t, dir) {
			st, err := os.Stat(filepath.Join(dir, p))
			if err != nil {
				t.Fatal(err)
			}
			out[p] = st.ModTime()
		}
		return out
	}
	before := mtimes()
	again := build(t, db, dir)
	if len(again.Written) != 0 || len(again.Removed) != 0 || again.Kept != len(first.Written) || len(first.Written) != len(before)+2 {
		t.Errorf("unchanged archive: wrote %v, removed %v, kept %d of %d", again.Written, again.Removed, again.Kept, len(first.Written))
	}

	// Two nights' runs, ten of them: every configuration of both clusters
	// on the first night, then alpha's osu_bw.
	night := spec
	night.Start, night.Days, night.StepDay, night.Seed = spec.Start.AddDate(0, 0, 30), 2, 0, 9
	ingest(t, db, night, 10)
	third := build(t, db, dir)
	var runPages, histPages []string
	for _, p := range third.Written {
		switch {
		case strings.HasPrefix(p, "runs/"):
			runPages = append(runPages, p)
		case strings.HasPrefix(p, "h/"):
			histPages = append(histPages, p)
		}
	}
	wantRuns := []string{}
	for id := spec.Runs() + 1; id <= spec.Runs()+10; id++ {
		wantRuns = append(wantRuns, runPath(int64(id)))
	}
	slices.Sort(wantRuns)
	if !slices.Equal(runPages, wantRuns) || len(histPages) != 8 || !slices.Contains(third.Written, "index.html") ||
		len(third.Written) != 10+8+1 || len(third.Removed) != 0 {
		t.Errorf("after 10 new runs: wrote %d pages %v; want the 10 run pages, 8 history pages and the index", len(third.Written), third.Written)
	}
	after := mtimes()
	for p, m := range before {
		if !slices.Contains(third.Written, p) && !after[p].Equal(m) {
			t.Errorf("%s was touched but not reported written", p)
		}
	}

	// Prune run 5 (beta's osu_bw at ppn=1 on the first day): its page
	// goes, its history and the index are made again.
	if _, err := db.Prune(context.Background(), []int64{5}); err != nil {
		t.Fatal(err)
	}
	fourth := build(t, db, dir)
	if !slices.Equal(fourth.Removed, []string{"runs/5.html"}) {
		t.Errorf("after pruning run 5: removed %v", fourth.Removed)
	}
	if _, err := os.Stat(filepath.Join(dir, "runs/5.html")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("runs/5.html still there: %v", err)
	}
	if len(fourth.Written) != 2 || !slices.Contains(fourth.Written, "index.html") || !strings.HasPrefix(fourth.Written[0], "h/beta-osu_bw-") {
		t.Errorf("after pruning run 5: wrote %v; want its history page and the index", fourth.Written)
	}
	for _, p := range pages(t, dir) {
		if strings.Contains(read(t, filepath.Join(dir, p)), `"../runs/5.html"`) {
			t.Errorf("%s still links to the pruned run", p)
		}
	}
}

// errAfter is a context that is cancelled after n checks: a build
// interrupted half-way.
type errAfter struct {
	context.Context
	n atomic.Int64
}

func (c *errAfter) Err() error {
	if c.n.Add(-1) < 0 {
		return context.Canceled
	}
	return nil
}

// An interrupted build leaves whole pages only and no manifest naming
// pages it did not write; the next build finishes the site.
func TestInterruptedBuild(t *testing.T) {
	db := newArchive(t)
	// Half-way: half the checks a whole build makes, however many of
	// them the archive's reads make.
	count := &errAfter{Context: context.Background()}
	count.n.Store(1 << 40)
	if _, err := Build(count, db, Options{Dir: filepath.Join(t.TempDir(), "whole")}); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "site")
	ctx := &errAfter{Context: context.Background()}
	ctx.n.Store((1<<40 - count.n.Load()) / 2)
	if _, err := Build(ctx, db, Options{Dir: dir}); !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted build: %v", err)
	}
	left := pages(t, dir)
	if len(left) == 0 || len(left) >= spec.Runs() {
		t.Fatalf("%d pages after the interruption: the test interrupts nothing", len(left))
	}
	for _, p := range left {
		if strings.Contains(filepath.Base(p), ".tmp") {
			t.Errorf("temporary file %s left", p)
		} else if !strings.HasSuffix(read(t, filepath.Join(dir, p)), "</html>\n") {
			t.Errorf("%s is half-written", p)
		}
	}
	var m manifest
	if err := json.Unmarshal([]byte(read(t, filepath.Join(dir, ManifestName))), &m); err != nil || len(m.Pages) != 0 {
		t.Errorf("an interrupted build's manifest lists %d pages (%v): want none, it wrote them but did not finish", len(m.Pages), err)
	}
	st := build(t, db, dir)
	if got := len(pages(t, dir)); got != spec.Runs()+8+1 || len(st.Written) == 0 {
		t.Errorf("after the next build: %d pages", got)
	}
}

// A directory that holds something else is not made a site.
func TestRefusesForeignDirectory(t *testing.T) {
	db := newArchive(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "index.html"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Build(context.Background(), db, Options{Dir: dir})
	if err == nil || !strings.Contains(err.Error(), "is not empty and holds no sbench site") {
		t.Errorf("foreign directory: %v", err)
	}
	if read(t, filepath.Join(dir, "index.html")) != "mine" {
		t.Error("foreign index.html overwritten")
	}
	if err := os.WriteFile(filepath.Join(dir, ManifestName), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Build(context.Background(), db, Options{Dir: dir}); err == nil || !strings.Contains(err.Error(), ManifestName) {
		t.Errorf("broken manifest: %v", err)
	}
}

// TestClustersFromSlurm: runs the runner recorded on Slurm clusters,
// given no system label, are told apart by the cluster each came from
// (SLURM_CLUSTER_NAME), as one archive of a site's clusters holds them.
func TestClustersFromSlurm(t *testing.T) {
	db, err := store.Open(filepath.Join(t.TempDir(), "a.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	bs := synth.All(spec)
	for _, b := range bs {
		b.Job.Cluster = b.Labels["system"]
		delete(b.Labels, "system")
	}
	if _, err := db.Ingest(context.Background(), "synth", bs); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "site")
	if st := build(t, db, dir); st.Histories != 8 {
		t.Errorf("%d histories, want 8 (2 clusters × 2 benchmarks × 2 configurations)", st.Histories)
	}
	index := read(t, filepath.Join(dir, "index.html"))
	if !strings.Contains(index, "<th>alpha</th><th>beta</th>") || strings.Contains(index, "(no system)") {
		t.Errorf("the index does not have a column per cluster:\n%.2000s", index)
	}
}
