package store

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sbench/sbench/internal/testenv"
	"github.com/sbench/sbench/results"
)

// holdEnv names the archive the process TestArchiveOnFUSE starts holds
// (TestMain), standing for an sbench from before on the same mount: it
// opens the archive in WAL mode, reads it, says "held N" and keeps it
// open until its standard input closes.
const holdEnv = "SBENCH_TEST_HOLD_ARCHIVE"

func TestMain(m *testing.M) {
	if path := os.Getenv(holdEnv); path != "" {
		if err := holdArchive(path); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func holdArchive(path string) error {
	db, err := sql.Open("sqlite3", "file:"+path+"?_journal_mode=WAL")
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	var n int
	if err := db.QueryRow("SELECT count(*) FROM runs").Scan(&n); err != nil {
		return err
	}
	fmt.Println("held", n)
	bufio.NewReader(os.Stdin).ReadString('\n')
	return nil
}

// TestArchiveOnFUSE: on a real FUSE mount (bindfs) a new archive takes a
// rollback journal — no -wal or -shm file, on the mount or beneath it —
// and is written and read as on a local disk, by one process while
// another reads; an archive in WAL mode brought there with its log is
// switched, runs and all; one that another process holds in WAL mode is
// refused until it lets go.
func TestArchiveOnFUSE(t *testing.T) {
	mnt, src := testenv.FUSEDir(t)
	ctx := context.Background()
	noWAL := func(t *testing.T, name string) {
		t.Helper()
		for _, dir := range []string{mnt, src} {
			for _, n := range names(t, dir) {
				if strings.HasPrefix(n, name+"-") {
					t.Errorf("%s beside the archive in %s", n, dir)
				}
			}
		}
	}

	t.Run("new archive", func(t *testing.T) {
		path := filepath.Join(mnt, "new.db")
		db := openAt(t, path)
		if db.fs.Name != "FUSE" {
			t.Errorf("file system %+v, want FUSE", db.fs)
		}
		if w, r, s := journal(t, db); w != "delete" || r != "delete" || s != "2" {
			t.Errorf("journal mode %s (readers %s), synchronous %s; want delete, delete, 2", w, r, s)
		}
		reader, err := OpenReadOnly(path)
		if err != nil {
			t.Fatal(err)
		}
		defer reader.Close()
		for i := range 10 {
			ingest(t, db, "f.json", osuBundle("c", "ib", fmt.Sprint(i), 8))
			if n, err := reader.CountRuns(ctx, Filter{}); err != nil || n != i+1 {
				t.Fatalf("the reader sees %d runs, %v; want %d", n, err, i+1)
			}
		}
		noWAL(t, "new.db")
		if _, err := db.Vacuum(ctx); err != nil {
			t.Fatal(err)
		}
		db.Close()
		reader.Close()
		if n := readOnlyRuns(t, path); n != 10 {
			t.Errorf("reopened: %d runs, want 10", n)
		}
		noWAL(t, "new.db")
	})

	t.Run("a WAL archive brought there", func(t *testing.T) {
		crashedWALArchive(t, filepath.Join(src, "old.db"))
		if got := walFiles(filepath.Join(mnt, "old.db")); len(got) != 2 {
			t.Fatalf("the mount shows %q, want the log and its index", got)
		}
		db := openAt(t, filepath.Join(mnt, "old.db"))
		if n := count(t, db, "runs"); n != 2 {
			t.Errorf("%d runs, want 2, one from the log", n)
		}
		if w, _, _ := journal(t, db); w != "delete" {
			t.Errorf("journal mode %s, want delete", w)
		}
		noWAL(t, "old.db")
	})

	t.Run("held by another process", func(t *testing.T) {
		path := filepath.Join(mnt, "held.db")
		crashedWALArchive(t, filepath.Join(src, "held.db"))
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), holdEnv+"="+path)
		stdin, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer cmd.Wait()
		defer stdin.Close()
		line, err := bufio.NewReader(stdout).ReadString('\n')
		if line != "held 2\n" {
			t.Fatalf("the other process says %q, %v", line, err)
		}
		defer func(d time.Duration) { leaveWALWait = d }(leaveWALWait)
		leaveWALWait = 200 * time.Millisecond
		for _, open := range []func(string) (*DB, error){Open, OpenReadOnly} {
			db, err := open(path)
			if err == nil {
				db.Close()
				t.Fatal("opened while another process holds it in WAL mode")
			}
			if !strings.Contains(err.Error(), "is in WAL mode, which is not safe on FUSE") || !strings.Contains(err.Error(), "another process has it open") {
				t.Errorf("error %q", err)
			}
		}
		if !slices.Contains(walFiles(path), "held.db-wal") {
			t.Error("the log of the process that holds it is gone")
		}
		stdin.Close()
		if err := cmd.Wait(); err != nil {
			t.Fatalf("the other process: %v", err)
		}
		db := openAt(t, path)
		ingest(t, db, "h.json", []*results.Bundle{osuBundle("c", "x", "3", 2)}...)
		if n := count(t, db, "runs"); n != 3 {
			t.Errorf("%d runs, want 3", n)
		}
		noWAL(t, "held.db")
	})
}
