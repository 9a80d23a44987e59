package store

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sbench/sbench/expect"
	"github.com/sbench/sbench/internal/golden"
	"github.com/sbench/sbench/results"
)

// archiveSource is an archive with runs from two files, a failed run and a
// bundle large enough to be stored gzipped.
func archiveSource(t *testing.T) *DB {
	t.Helper()
	db := openTemp(t)
	big := osuBundle("acc", "ib", "1", 4)
	big.Raw = strings.Repeat("0123456789abcdef\n", compressAbove/16)
	failed := osuBundle("acc", "eth", "2", 2)
	failed.Status, failed.Error = results.StatusFailed, "rank 1 died"
	ingest(t, db, "/data/a.json", big, failed)
	db.now = func() time.Time { return clock.Add(time.Hour) }
	ingest(t, db, "/data/b.txt", hplBundle("acc", "3", time.Date(2024, 5, 2, 0, 0, 0, 0, time.UTC)))
	return db
}

func TestArchiveExportImportLosesNothing(t *testing.T) {
	src := archiveSource(t)
	ctx := context.Background()
	var buf bytes.Buffer
	n, err := src.ExportArchive(ctx, &buf, Filter{})
	if err != nil || n.Runs != 3 {
		t.Fatalf("ExportArchive = %+v, %v", n, err)
	}
	if lines := strings.Count(buf.String(), "\n"); lines != 4 {
		t.Errorf("export has %d lines, want a header and 3 runs", lines)
	}
	// Deterministic.
	var again bytes.Buffer
	if _, err := src.ExportArchive(ctx, &again, Filter{}); err != nil || !bytes.Equal(buf.Bytes(), again.Bytes()) {
		t.Error("two exports of the same runs differ")
	}

	dst := openAt(t, filepath.Join(t.TempDir(), "dst.db"))
	dst.now = func() time.Time { return clock.Add(48 * time.Hour) }
	// Give the destination a run of its own first, so that ids differ.
	ingest(t, dst, "local.json", osuBundle("local", "ib", "9", 2))
	res, err := dst.ImportArchive(ctx, bytes.NewReader(buf.Bytes()), "x.sbench", ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Added) != 3 || len(res.Skipped) != 0 {
		t.Errorf("import = %+v, want 3 added", res)
	}
	srcRuns, _ := src.Runs(ctx, Filter{})
	dstRuns, _ := dst.Runs(ctx, Filter{Campaign: "acc"})
	if len(dstRuns) != len(srcRuns) {
		t.Fatalf("%d runs imported, want %d", len(dstRuns), len(srcRuns))
	}
	for i := range srcRuns {
		s, d := srcRuns[i], dstRuns[i]
		if d.ID == s.ID {
			t.Errorf("run %d kept its id in an archive that had runs already", s.ID)
		}
		// Everything but the archive's own id is the same: hash,
		// labels, hosts, source file and the time it was ingested.
		d.ID = s.ID
		if !reflect.DeepEqual(s, d) {
			t.Errorf("imported run differs:\n%+v\nwant\n%+v", d, s)
		}
		sb, _ := src.Bundle(ctx, s.ID)
		db, _ := dst.Bundle(ctx, dstRuns[i].ID)
		if !reflect.DeepEqual(sb, db) {
			t.Errorf("run %d: bundle differs after import", s.ID)
		}
		ss, _ := src.Samples(ctx, Filter{RunIDs: []int64{s.ID}})
		ds, _ := dst.Samples(ctx, Filter{RunIDs: []int64{dstRuns[i].ID}})
		if len(ss) != len(ds) {
			t.Errorf("run %d: %d samples imported, want %d", s.ID, len(ds), len(ss))
		}
	}
	// The large bundle is stored compressed again.
	if n := count(t, dst, "bundles WHERE encoding = 'json+gzip'"); n != 1 {
		t.Errorf("%d bundles stored gzipped after import, want the large one", n)
	}

	// Importing again adds nothing; gzipped input is recognised.
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(buf.Bytes())
	zw.Close()
	res, err = dst.ImportArchive(ctx, &gz, "x.sbench.gz", ImportOptions{})
	if err != nil || len(res.Added) != 0 || len(res.Skipped) != 3 {
		t.Errorf("second import (gzipped) = %+v, %v; want 3 skipped", res, err)
	}
}

func TestArchiveExportFilter(t *testing.T) {
	src := archiveSource(t)
	var buf bytes.Buffer
	n, err := src.ExportArchive(context.Background(), &buf, Filter{Benchmark: "hpl"})
	if err != nil || n.Runs != 1 || !strings.HasPrefix(buf.String(), `{"schema":"sbench.archive/v1","runs":1}`) {
		t.Errorf("ExportArchive(hpl) = %+v, %v:\n%.200s", n, err, buf.String())
	}
}

func TestArchiveImportRefusesBadFilesWhole(t *testing.T) {
	src := archiveSource(t)
	var buf bytes.Buffer
	if _, err := src.ExportArchive(context.Background(), &buf, Filter{}); err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(buf.String(), "\n")
	for _, c := range []struct {
		name, data, want string
	}{
		{"empty", "", "line 1: not an sbench archive"},
		{"other schema", `{"schema":"sbench.archive/v9","runs":0}` + "\n", `schema "sbench.archive/v9"`},
		{"truncated", strings.Join(lines[:3], ""), "header says 3 runs, the file holds 2"},
		{"bad json", lines[0] + lines[1] + "{not json\n" + lines[3], "line 3"},
		{"bad bundle", lines[0] + lines[1] + `{"source":"x","bundle":{"schema":"sbench.result/v1","status":"ok","benchmark":{"name":""}}}` + "\n" + lines[3], "line 3: invalid bundle: benchmark.name: is empty"},
		{"bad time", lines[0] + strings.Replace(lines[1], `"ingested_at":"2024`, `"ingested_at":"x2024`, 1) + lines[2] + lines[3], "line 2: ingested_at"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dst := openTemp(t)
			_, err := dst.ImportArchive(context.Background(), strings.NewReader(c.data), "f.sbench", ImportOptions{})
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "f.sbench") {
				t.Errorf("err = %v, want it to name f.sbench and say %q", err, c.want)
			}
			if n := count(t, dst, "runs"); n != 0 {
				t.Errorf("%d runs stored from a refused file", n)
			}
		})
	}
}

// FuzzArchiveImport feeds arbitrary files to the importer: it must refuse
// or store, never panic, and what it stores must read back.
func FuzzArchiveImport(f *testing.F) {
	db := openTemp(f)
	var buf bytes.Buffer
	ingest(f, db, "a.json", osuBundle("acc", "ib", "1", 2))
	if _, err := db.ExportArchive(context.Background(), &buf, Filter{}); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Add([]byte(`{"schema":"sbench.archive/v1","runs":0}`))
	f.Add([]byte(`{"schema":"sbench.archive/v2","runs":0,"baselines":1}` + "\n" + `{"baseline":{"name":"b","selection":"","created":"2024-01-01T00:00:00.000000000Z","runs":["x"]}}`))
	f.Add([]byte(`{"schema":"sbench.archive/v3","runs":0,"expectations":1}` + "\n" + `{"expectations":{"campaign":"c","site":"","recorded":"2024-01-01T00:00:00.000000000Z","refs":[{"benchmark":"b","metric":"m","bound":">= 1"}]}}`))
	f.Add([]byte{0x1f, 0x8b, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		_ = readArchive(bytes.NewReader(data), "fuzz", func(archiveHeader) {}, func(r *rawRun) error {
			if err := r.b.Validate(); err != nil {
				t.Fatalf("readArchive accepted an invalid bundle: %v", err)
			}
			return nil
		}, func(int, *archiveBaseline) error { return nil }, func(int, *archiveExpectations) error { return nil })
	})
}

// TestArchiveCarriesBaselines: an export carries the baselines all of
// whose runs it carries, by the runs' content hashes, and says which it
// left out; the import sets them on the runs as this archive numbers
// them, knows them when imported again, and refuses the whole file when a
// baseline of the same name holds other runs.
func TestArchiveCarriesBaselines(t *testing.T) {
	src := archiveSource(t)
	ctx := context.Background()
	for _, b := range []Baseline{{Name: "pre", Selection: "run:1-2", Note: "before the upgrade", RunIDs: []int64{1, 2}}, {Name: "wide", RunIDs: []int64{1, 3}}} {
		if _, err := src.SetBaseline(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	res, err := src.ExportArchive(ctx, &buf, Filter{RunIDs: []int64{1, 2}})
	if err != nil || res.Runs != 2 || !reflect.DeepEqual(res.Baselines, []string{"pre"}) ||
		len(res.Left) != 1 || !strings.Contains(res.Left[0], "baseline wide: 1 of its 2 runs are not exported") {
		t.Fatalf("ExportArchive = %+v, %v", res, err)
	}
	if !strings.HasPrefix(buf.String(), `{"schema":"sbench.archive/v2","runs":2,"baselines":1}`) {
		t.Errorf("header %.80s", buf.String())
	}
	dst := openTemp(t)
	ingest(t, dst, "local.json", osuBundle("local", "ib", "9", 2)) // ids differ
	imp, err := dst.ImportArchive(ctx, bytes.NewReader(buf.Bytes()), "b.sbench", ImportOptions{})
	if err != nil || !reflect.DeepEqual(imp.Baselines, []string{"pre"}) || len(imp.Added) != 2 {
		t.Fatalf("import = %+v, %v", imp, err)
	}
	b, err := dst.Baseline(ctx, "pre")
	if err != nil || !reflect.DeepEqual(b.RunIDs, imp.Added) || b.Note != "before the upgrade" || b.Selection != "run:1-2" || !b.Created.Equal(clock.Add(time.Hour)) {
		t.Errorf("imported baseline %+v, %v; want the runs %v", b, err, imp.Added)
	}
	imp, err = dst.ImportArchive(ctx, bytes.NewReader(buf.Bytes()), "b.sbench", ImportOptions{})
	if err != nil || !reflect.DeepEqual(imp.Known, []string{"pre"}) || len(imp.Baselines) != 0 || len(imp.Skipped) != 2 {
		t.Errorf("second import = %+v, %v", imp, err)
	}
	other := openTemp(t)
	ingest(t, other, "local.json", osuBundle("local", "ib", "9", 2))
	if _, err := other.SetBaseline(ctx, Baseline{Name: "pre", RunIDs: []int64{1}}); err != nil {
		t.Fatal(err)
	}
	_, err = other.ImportArchive(ctx, bytes.NewReader(buf.Bytes()), "b.sbench", ImportOptions{})
	if err == nil || !strings.Contains(err.Error(), "b.sbench: line 4: baseline pre: this archive has a baseline pre of other runs (1)") {
		t.Errorf("clashing baseline: %v", err)
	}
	if n := count(t, other, "runs"); n != 1 {
		t.Errorf("%d runs after a refused import, want the 1 it had", n)
	}
}

// TestArchiveImportStreams stores a file as it reads it, a batch at a
// time, reporting its progress, and still refuses it whole when its last
// line is bad.
func TestArchiveImportStreams(t *testing.T) {
	src := openTemp(t)
	ctx := context.Background()
	bs := osuBundles("acc", 2*importBatch+10, 2)
	ingest(t, src, "many.json", bs...)
	var buf bytes.Buffer
	if _, err := src.ExportArchive(ctx, &buf, Filter{}); err != nil {
		t.Fatal(err)
	}
	dst := openTemp(t)
	var seen [][2]int
	imp, err := dst.ImportArchive(ctx, bytes.NewReader(buf.Bytes()), "many.sbench", ImportOptions{Progress: func(done, total int) { seen = append(seen, [2]int{done, total}) }})
	if err != nil || len(imp.Added) != len(bs) {
		t.Fatalf("import: %d added, %v", len(imp.Added), err)
	}
	if want := [][2]int{{importBatch, len(bs)}, {2 * importBatch, len(bs)}, {len(bs), len(bs)}}; !reflect.DeepEqual(seen, want) {
		t.Errorf("progress %v, want %v", seen, want)
	}
	bad := strings.TrimSuffix(buf.String(), "\n")
	bad = bad[:strings.LastIndex(bad, "\n")+1] + "{not json\n"
	empty := openTemp(t)
	if _, err := empty.ImportArchive(ctx, strings.NewReader(bad), "bad.sbench", ImportOptions{}); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("bad.sbench: line %d", len(bs)+1)) {
		t.Errorf("a bad last line: %v", err)
	}
	if n := count(t, empty, "runs"); n != 0 {
		t.Errorf("%d runs stored from a file refused at its last line", n)
	}
}

// ownRefs and siteRefs are a campaign's own acceptance references and
// those a site profile (hpc1) adds.
var (
	ownRefs = []expect.Ref{
		{Name: "bw floor", Benchmark: "osu_bw", Metric: "bandwidth", At: "4MiB", Bound: ">= 1 MB/s", Where: "fabric=ib", Source: "campaign acc.toml:30"},
		{Benchmark: "hpl", Metric: "gflops", Bound: ">= 1 GFLOP/s"},
	}
	siteRefs = []expect.Ref{{Name: "hpc1 promise", Benchmark: "osu_bw", Metric: "bandwidth", At: "8", Bound: ">= 2 MB/s", System: "hpc1", Source: "site profile hpc1 (site.toml:12)"}}
)

// expectationRows is the expectations table, row by row, as text: what an
// import must carry over exactly, recorded time included.
func expectationRows(t *testing.T, db *DB) []string {
	t.Helper()
	rows, err := db.r.Query(`SELECT campaign, site, seq, name, benchmark, metric, at, bound, selection, system, source, recorded
		FROM expectations ORDER BY campaign, site, seq`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var c, site, name, bench, metric, at, bound, sel, system, source, rec string
		var seq int
		if err := rows.Scan(&c, &site, &seq, &name, &bench, &metric, &at, &bound, &sel, &system, &source, &rec); err != nil {
			t.Fatal(err)
		}
		out = append(out, strings.Join([]string{c, site, fmt.Sprint(seq), name, bench, metric, at, bound, sel, system, source, rec}, "|"))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// expectationsSource is archiveSource with a baseline and campaign acc's
// expectations recorded: its own, then an hour later site profile hpc1's.
// Campaign other, which has no run, has some too.
func expectationsSource(t *testing.T) *DB {
	t.Helper()
	ctx := context.Background()
	src := archiveSource(t)
	if _, err := src.SetBaseline(ctx, Baseline{Name: "pre", RunIDs: []int64{1, 2}}); err != nil {
		t.Fatal(err)
	}
	src.now = func() time.Time { return clock.Add(2 * time.Hour) }
	if err := src.SetExpectations(ctx, "acc", "", ownRefs); err != nil {
		t.Fatal(err)
	}
	if err := src.SetExpectations(ctx, "other", "", siteRefs); err != nil {
		t.Fatal(err)
	}
	src.now = func() time.Time { return clock.Add(3 * time.Hour) }
	if err := src.SetExpectations(ctx, "acc", "hpc1", siteRefs); err != nil {
		t.Fatal(err)
	}
	return src
}

// TestArchiveCarriesExpectations: an export carries the recorded
// expectations of the campaigns it exports runs of (v3), each set with its
// site and recorded time; the import records them as they were, knows
// them when imported again, and keeps a set of its own recorded later.
func TestArchiveCarriesExpectations(t *testing.T) {
	ctx := context.Background()
	src := expectationsSource(t)
	var buf bytes.Buffer
	res, err := src.ExportArchive(ctx, &buf, Filter{})
	if err != nil || res.Runs != 3 || !reflect.DeepEqual(res.Expectations, []string{"acc", "acc (site hpc1)"}) {
		t.Fatalf("ExportArchive = %+v, %v", res, err)
	}
	if !strings.HasPrefix(buf.String(), `{"schema":"sbench.archive/v3","runs":3,"baselines":1,"expectations":2}`+"\n") {
		t.Errorf("header %.100s", buf.String())
	}
	if lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n"); len(lines) != 1+3+1+2 || !strings.HasPrefix(lines[5], `{"expectations":{"campaign":"acc","site":"","recorded":"2024-06-01T14:00:00`) ||
		!strings.HasPrefix(lines[6], `{"expectations":{"campaign":"acc","site":"hpc1","recorded":"2024-06-01T15:00:00`) {
		t.Errorf("export:\n%s", strings.Join(lines[4:], "\n"))
	}
	var again bytes.Buffer
	if _, err := src.ExportArchive(ctx, &again, Filter{}); err != nil || !bytes.Equal(buf.Bytes(), again.Bytes()) {
		t.Error("two exports of the same runs differ")
	}

	dst := openTemp(t)
	dst.now = func() time.Time { return clock.Add(48 * time.Hour) }
	imp, err := dst.ImportArchive(ctx, bytes.NewReader(buf.Bytes()), "e.sbench", ImportOptions{})
	if err != nil || len(imp.Added) != 3 || !reflect.DeepEqual(imp.Baselines, []string{"pre"}) ||
		!reflect.DeepEqual(imp.Expectations, []string{"acc", "acc (site hpc1)"}) || len(imp.ExpectationsKnown)+len(imp.ExpectationsKept) != 0 {
		t.Fatalf("import = %+v, %v", imp, err)
	}
	want := expectationRows(t, src)
	want = slices.DeleteFunc(want, func(r string) bool { return strings.HasPrefix(r, "other|") })
	if got := expectationRows(t, dst); !reflect.DeepEqual(got, want) {
		t.Errorf("imported expectations:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	se, _ := src.Expectations(ctx, "acc")
	de, err := dst.Expectations(ctx, "acc")
	if err != nil || !reflect.DeepEqual(de, se) {
		t.Errorf("Expectations(acc) after import = %+v, %v; want %+v", de, err, se)
	}
	// Idempotent.
	imp, err = dst.ImportArchive(ctx, bytes.NewReader(buf.Bytes()), "e.sbench", ImportOptions{})
	if err != nil || len(imp.Expectations) != 0 || !reflect.DeepEqual(imp.ExpectationsKnown, []string{"acc", "acc (site hpc1)"}) || len(imp.ExpectationsKept) != 0 {
		t.Errorf("second import = %+v, %v", imp, err)
	}
	if got := expectationRows(t, dst); !reflect.DeepEqual(got, want) {
		t.Errorf("expectations after a second import:\n%s", strings.Join(got, "\n"))
	}

	// A target whose own set is older is updated; its hpc1 set, recorded
	// after the file's, is kept.
	other := openTemp(t)
	other.now = func() time.Time { return clock }
	if err := other.SetExpectations(ctx, "acc", "", siteRefs); err != nil {
		t.Fatal(err)
	}
	other.now = func() time.Time { return clock.Add(4 * time.Hour) }
	newer := []expect.Ref{{Benchmark: "osu_bw", Metric: "bandwidth", Bound: ">= 3 MB/s"}}
	if err := other.SetExpectations(ctx, "acc", "hpc1", newer); err != nil {
		t.Fatal(err)
	}
	imp, err = other.ImportArchive(ctx, bytes.NewReader(buf.Bytes()), "e.sbench", ImportOptions{})
	if err != nil || !reflect.DeepEqual(imp.Expectations, []string{"acc"}) || !reflect.DeepEqual(imp.ExpectationsKept, []string{"acc (site hpc1)"}) {
		t.Fatalf("import over newer = %+v, %v", imp, err)
	}
	got, err := other.Expectations(ctx, "acc")
	if err != nil || len(got) != 1 || !reflect.DeepEqual(got[0].Refs, append(slices.Clone(ownRefs), newer...)) || !got[0].Recorded.Equal(clock.Add(2*time.Hour)) {
		t.Errorf("Expectations(acc) after an import over a newer set = %+v, %v", got, err)
	}
}

// TestArchiveImportRefusesBadExpectations: a v3 file cut short, whose
// header miscounts its expectation sets, whose lines are out of order or
// whose sets are bad is refused whole, naming the file and the line. (A
// reference whose bound does not parse is carried as recorded: check
// judges it NO DATA, saying why, as it would have at home.)
func TestArchiveImportRefusesBadExpectations(t *testing.T) {
	var buf bytes.Buffer
	if _, err := expectationsSource(t).ExportArchive(context.Background(), &buf, Filter{}); err != nil {
		t.Fatal(err)
	}
	l := strings.SplitAfter(buf.String(), "\n") // header, 3 runs, baseline, 2 sets, ""
	if len(l) != 8 {
		t.Fatalf("export has %d lines:\n%s", len(l), buf.String())
	}
	header := func(s string) string { return strings.Replace(l[0], `"expectations":2`, s, 1) }
	body := strings.Join(l[1:], "")
	for _, c := range []struct {
		name, data, want string
	}{
		{"truncated", strings.Join(l[:6], ""), "f.sbench: the file ends after line 6: header says 3 runs, 1 baselines and 2 expectation sets, the file holds 3, 1 and 1 (truncated?)"},
		{"cut after the runs", strings.Join(l[:4], ""), "the file ends after line 4: header says 3 runs, 1 baselines and 2 expectation sets, the file holds 3, 0 and 0"},
		{"miscounted", header(`"expectations":1`) + body, "f.sbench: line 7: more expectation sets than the header's 1"},
		{"in a v2 file", strings.Replace(l[0], "v3", "v2", 1) + body, "line 1: 3 runs, 1 baselines and 2 expectation sets is not a header of sbench.archive/v2"},
		{"before a baseline", l[0] + l[1] + l[2] + l[3] + l[5] + l[4] + l[6], "line 6: a baseline after the expectation sets"},
		{"before a run", l[0] + l[1] + l[2] + l[5] + l[3] + l[4] + l[6], "line 5: a run after the expectation sets"},
		{"with a run", l[0] + l[1] + l[2] + l[3] + l[4] + strings.Replace(l[5], `{"expectations"`, `{"source":"x","expectations"`, 1) + l[6], "line 6: two of a run, a baseline and an expectation set on one line"},
		{"bad time", l[0] + l[1] + l[2] + l[3] + l[4] + strings.Replace(l[5], `"recorded":"2024`, `"recorded":"x2024`, 1) + l[6], "line 6: expectations of acc: recorded"},
		{"no campaign", l[0] + l[1] + l[2] + l[3] + l[4] + strings.Replace(l[5], `"campaign":"acc"`, `"campaign":""`, 1) + l[6], "line 6: expectations: no campaign"},
		{"no refs", l[0] + l[1] + l[2] + l[3] + l[4] + l[5][:strings.Index(l[5], `"refs"`)] + `"refs":[]}}` + "\n" + l[6], "line 6: expectations of acc: no references"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dst := openTemp(t)
			_, err := dst.ImportArchive(context.Background(), strings.NewReader(c.data), "f.sbench", ImportOptions{})
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "f.sbench") {
				t.Errorf("err = %v, want it to name f.sbench and say %q", err, c.want)
			}
			if n, m := count(t, dst, "runs"), count(t, dst, "expectations"); n+m != 0 {
				t.Errorf("%d runs and %d expectations stored from a refused file", n, m)
			}
		})
	}
}

// TestArchiveFormatsKept: an export whose runs' campaigns have no recorded
// expectations is the v1 or v2 file it was before v3 (the golden files
// were written by an sbench without v3), whatever other campaigns
// recorded; with its campaign's expectations it is that same file, its
// header counting them, then one line per set.
func TestArchiveFormatsKept(t *testing.T) {
	ctx := context.Background()
	db := openTemp(t)
	ingest(t, db, "/data/a.json", osuBundle("acc", "ib", "1", 3))
	db.now = func() time.Time { return clock.Add(time.Hour) }
	ingest(t, db, "/data/b.txt", hplBundle("acc", "2", time.Date(2024, 5, 2, 0, 0, 0, 0, time.UTC)))
	ingest(t, db, "/data/c.json", osuBundle("other", "ib", "3", 2))
	if err := db.SetExpectations(ctx, "other", "", ownRefs); err != nil {
		t.Fatal(err)
	}
	export := func() []byte {
		t.Helper()
		var buf bytes.Buffer
		if _, err := db.ExportArchive(ctx, &buf, Filter{Campaign: "acc"}); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	golden.Check(t, filepath.Join("testdata", "archive-v1.sbench"), export())
	if _, err := db.SetBaseline(ctx, Baseline{Name: "pre", RunIDs: []int64{1, 2}}); err != nil {
		t.Fatal(err)
	}
	v2 := export()
	golden.Check(t, filepath.Join("testdata", "archive-v2.sbench"), v2)

	if err := db.SetExpectations(ctx, "acc", "", ownRefs); err != nil {
		t.Fatal(err)
	}
	v3 := export()
	golden.Check(t, filepath.Join("testdata", "archive-v3.sbench"), v3)
	h2, rest2, _ := bytes.Cut(v2, []byte("\n"))
	h3, rest3, _ := bytes.Cut(v3, []byte("\n"))
	if want := bytes.Replace(h2, []byte(`v2","runs":2,"baselines":1}`), []byte(`v3","runs":2,"baselines":1,"expectations":1}`), 1); !bytes.Equal(h3, want) {
		t.Errorf("v3 header %s, want %s", h3, want)
	}
	if !bytes.HasPrefix(rest3, rest2) || bytes.Count(rest3[len(rest2):], []byte("\n")) != 1 {
		t.Errorf("the v3 file is not the v2 file and one line:\n%s", rest3)
	}
}
