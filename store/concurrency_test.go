package store

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sbench/sbench/results"
)

// TestReadersSeeWholeIngests runs readers while a writer ingests: no reader
// may fail, wait for the writer, or see a run without all of its samples.
func TestReadersSeeWholeIngests(t *testing.T) {
	db := openTemp(t)
	ctx := context.Background()
	const files, points = 150, 25
	var done atomic.Bool
	var wg sync.WaitGroup
	var writeErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer done.Store(true)
		for i := range files {
			if _, err := db.Ingest(ctx, "f.json", []*results.Bundle{osuBundle("c", "ib", fmt.Sprint(i), points)}); err != nil {
				writeErr = err
				return
			}
		}
	}()
	var reads atomic.Int64
	errs := make(chan error, 4)
	for r := 0; r < 3; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			last := 0
			for !done.Load() {
				// One export is one read transaction: the runs and the
				// samples it lists come from the same snapshot.
				var rows int
				err := db.export(ctx, Filter{}, func([]string) error { return nil }, func(*exportRow) error { rows++; return nil })
				if err != nil {
					errs <- err
					return
				}
				if rows%points != 0 || rows < last {
					errs <- fmt.Errorf("a read saw %d sample rows (previous read %d): not whole runs of %d", rows, last, points)
					return
				}
				last = rows
				samples, err := db.Samples(ctx, Filter{})
				if err != nil {
					errs <- err
					return
				}
				perRun := map[int64]int{}
				for _, s := range samples {
					perRun[s.RunID]++
				}
				for id, n := range perRun {
					if n != points {
						errs <- fmt.Errorf("run %d seen with %d samples, want %d", id, n, points)
						return
					}
				}
				reads.Add(1)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if writeErr != nil {
		t.Fatal(writeErr)
	}
	if n := count(t, db, "runs"); n != files {
		t.Errorf("%d runs, want %d", n, files)
	}
	if reads.Load() == 0 {
		t.Error("no read completed while the writer ran")
	}
	t.Logf("%d reads during %d ingests", reads.Load(), files)
}

// TestWriterDoesNotWaitForReaders holds a read transaction open across an
// ingest: in WAL mode the writer commits at once and the reader keeps its
// snapshot. (With a rollback journal the commit would wait for the reader.)
func TestWriterDoesNotWaitForReaders(t *testing.T) {
	db := openTemp(t)
	ingest(t, db, "a.json", osuBundle("c", "ib", "1", 3))
	tx, err := db.r.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	before, err := loadRuns(context.Background(), tx, Filter{}, RunLabels)
	if err != nil || len(before) != 1 {
		t.Fatalf("runs in snapshot = %d, %v", len(before), err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	start := time.Now()
	if _, err := db.Ingest(ctx, "b.json", []*results.Bundle{osuBundle("c", "tcp", "2", 3)}); err != nil {
		t.Fatalf("ingest while a read transaction is open: %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("ingest took %v with a reader open", d)
	}
	again, err := loadRuns(context.Background(), tx, Filter{}, RunLabels)
	if err != nil || len(again) != 1 {
		t.Errorf("reader's snapshot changed under it: %d runs, %v", len(again), err)
	}
	tx.Rollback()
	if n := count(t, db, "runs"); n != 2 {
		t.Errorf("%d runs after the reader finished, want 2", n)
	}
}

// TestTwoProcessesIngest opens the archive twice, as two sbench processes
// would, and ingests from both at once: the busy timeout and BEGIN
// IMMEDIATE must serialise them without an error.
func TestTwoProcessesIngest(t *testing.T) {
	path := filepath.Join(t.TempDir(), "shared.db")
	var dbs [2]*DB
	for i := range dbs {
		dbs[i] = openAt(t, path)
	}
	const files = 60
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for p, db := range dbs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range files {
				// Half the files are shared: both processes try to store
				// them, and exactly one of them must win.
				job := fmt.Sprintf("p%d-%d", p, i)
				if i%2 == 0 {
					job = fmt.Sprint("shared-", i)
				}
				if _, err := db.Ingest(context.Background(), "f.json", []*results.Bundle{osuBundle("c", "ib", job, 10)}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	want := files/2 + 2*(files/2)
	if n := count(t, dbs[0], "runs"); n != want {
		t.Errorf("%d runs, want %d", n, want)
	}
	if n := count(t, dbs[1], "samples"); n != want*10 {
		t.Errorf("%d samples, want %d", n, want*10)
	}
}

// TestOpenNewArchiveAtOnce: several sbench processes started together on a
// path where there is no archive yet (two "sbench local" runs of one
// campaign) must all open it, one of them creating it, without "database
// is locked". Each round is a new path, since only a new file races.
func TestOpenNewArchiveAtOnce(t *testing.T) {
	const rounds, opens = 40, 4
	for round := range rounds {
		path := filepath.Join(t.TempDir(), fmt.Sprint("new-", round, ".db"))
		var wg sync.WaitGroup
		dbs := make([]*DB, opens)
		errs := make([]error, opens)
		for i := range opens {
			wg.Add(1)
			go func() {
				defer wg.Done()
				dbs[i], errs[i] = Open(path)
			}()
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("round %d, open %d of %d: %v", round, i, opens, err)
			}
		}
		for _, db := range dbs {
			if v, err := db.SchemaVersion(context.Background()); err != nil || v != LatestSchemaVersion() {
				t.Errorf("round %d: schema version %d (%v), want %d", round, v, err, LatestSchemaVersion())
			}
			db.Close()
		}
	}
}
