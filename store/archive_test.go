package store

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

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
	f.Add([]byte{0x1f, 0x8b, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		_ = readArchive(bytes.NewReader(data), "fuzz", func(archiveHeader) {}, func(_ int, e *archivedRun) error {
			if err := e.bundle.Validate(); err != nil {
				t.Fatalf("readArchive accepted an invalid bundle: %v", err)
			}
			return nil
		}, func(int, *archiveBaseline) error { return nil })
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
