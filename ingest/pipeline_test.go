package ingest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/mattn/go-sqlite3"

	"github.com/sbench/sbench/store"
)

// smallBatches makes ingest store n files per transaction for one test, so
// that a few files cross several batches.
func smallBatches(t *testing.T, n int) {
	old := batchFiles
	batchFiles = n
	t.Cleanup(func() { batchFiles = old })
}

// osuLatencyFile writes an osu_latency output whose figures are distinct
// for i, so that every file is a run of its own.
func osuLatencyFile(t *testing.T, dir, name string, i int) {
	t.Helper()
	var b strings.Builder
	b.WriteString("# OSU MPI Latency Test v7.5\n# Datatype: MPI_CHAR.\n# Size       Avg Latency(us)\n")
	for size := 1; size <= 64; size *= 2 {
		fmt.Fprintf(&b, "%-20d%.2f\n", size, 1.5+float64(size)/100+float64(i)/10)
	}
	if err := os.WriteFile(filepath.Join(dir, name), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// ingestDir ingests the files of dir into the archive at db as "sbench
// ingest DIR" does, and returns what Files did and what it said.
func ingestDir(t *testing.T, db, dir string) (Summary, string, error) {
	t.Helper()
	a, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	ins, err := Expand(context.Background(), nil, []string{dir})
	if err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	sum, err := Files(context.Background(), a, ins, Options{Format: "auto", Log: &log})
	return sum, log.String(), err
}

// The store takes one batch while the next is parsed; what ingest reports
// must still be every input's fate in input order, the files that failed
// to parse in their places among the stored ones.
func TestIngestBatchesReportInInputOrder(t *testing.T) {
	smallBatches(t, 2)
	dir := t.TempDir()
	bad := "# OSU MPI Latency Test v7.5\n# Size       Avg Latency(us)\n1    11.01\n2    1.2.3\n"
	var want []string
	for i := range 9 {
		name := fmt.Sprintf("f%d.txt", i)
		switch i {
		case 1, 6:
			os.WriteFile(filepath.Join(dir, name), []byte(bad), 0o644)
		case 4:
			os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/bash\nsrun ./osu_latency\n"), 0o644)
			continue // a script: skipped, not reported per file
		default:
			osuLatencyFile(t, dir, name, i)
		}
		want = append(want, filepath.Join(dir, name))
	}
	got, log, err := ingestDir(t, filepath.Join(t.TempDir(), "a.db"), dir)
	if fe := (FailedError{}); !errors.As(err, &fe) || fe != (FailedError{2, 8}) {
		t.Fatalf("error %v, want 2 of 8 files failed\n%s", err, log)
	}
	if got.Files != 6 || got.Added != 6 || got.Failed != 2 || got.Ignored != 1 {
		t.Errorf("files %d added %d failed %d skipped %d, want 6 6 2 1", got.Files, got.Added, got.Failed, got.Ignored)
	}
	var sources []string
	for i, f := range got.PerFile {
		sources = append(sources, f.Source)
		failed := strings.HasSuffix(f.Source, "f1.txt") || strings.HasSuffix(f.Source, "f6.txt")
		if failed != (f.Error != "") || failed == (len(f.Added) == 1) {
			t.Errorf("per_file[%d] = %+v", i, f)
		}
	}
	if strings.Join(sources, " ") != strings.Join(want, " ") {
		t.Errorf("per_file in order\n%s\nwant\n%s", strings.Join(sources, "\n"), strings.Join(want, "\n"))
	}
	if n := strings.Count(log, "is not a number"); n != 2 {
		t.Errorf("%d error lines, want 2:\n%s", n, log)
	}
	ids := fmt.Sprint(got.PerFile[0].Added, got.PerFile[2].Added, got.PerFile[7].Added)
	if ids != "[1] [2] [6]" {
		t.Errorf("run ids of f0, f2, f8: %s, want [1] [2] [6] (input order)", ids)
	}
}

// A batch the store cannot write (here a trigger that rolls the whole
// transaction back, as a full disk would) fails the ingest at once: no
// later batch is stored, the batches before it stay, and ingest returns
// rather than waiting on parsers that have nobody to hand on to.
func TestIngestStopsAtAFailedBatch(t *testing.T) {
	smallBatches(t, 2)
	dir := t.TempDir()
	for i := range 40 {
		osuLatencyFile(t, dir, fmt.Sprintf("f%02d.txt", i), i)
	}
	db := filepath.Join(t.TempDir(), "a.db")
	a, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	a.Close()
	sdb, err := sql.Open("sqlite3", db)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sdb.Exec(`CREATE TRIGGER full_disk BEFORE INSERT ON runs WHEN NEW.source LIKE '%f05.txt'
		BEGIN SELECT RAISE(ROLLBACK, 'disk full'); END`); err != nil {
		t.Fatal(err)
	}
	sdb.Close()
	if _, _, err := ingestDir(t, db, dir); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("error %v, want a failure naming the cause", err)
	}
	sdb, err = sql.Open("sqlite3", db)
	if err != nil {
		t.Fatal(err)
	}
	defer sdb.Close()
	rows, err := sdb.Query(`SELECT source FROM runs`)
	if err != nil {
		t.Fatal(err)
	}
	sources := map[string]bool{}
	for rows.Next() {
		var s string
		rows.Scan(&s)
		sources[filepath.Base(s)] = true
	}
	if len(sources) != 4 || !sources["f00.txt"] || !sources["f03.txt"] {
		t.Errorf("stored %v, want f00-f03 (the two batches before the failed one) and nothing after", sources)
	}
}
