package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/sbench/sbench/results"
)

// TestJudgeFS is the table of file systems: WAL on this host's own, a
// rollback journal on every network or cluster file system, and a
// refusal where the mount options keep the locks on one host.
func TestJudgeFS(t *testing.T) {
	for _, tt := range []struct {
		name   string
		fsType int64
		opts   string
		want   string // the file system's name; "" for local
		refuse string // what the refusal says, "" for none
	}{
		{"ext4", 0xEF53, "rw,relatime", "", ""},
		{"xfs", 0x58465342, "rw", "", ""},
		{"btrfs", 0x9123683E, "rw", "", ""},
		{"tmpfs", 0x01021994, "rw", "", ""},
		{"zfs", 0x2FC12FC1, "rw", "", ""},
		{"nfs v4", 0x6969, "rw,vers=4.2,local_lock=none,addr=10.0.0.1", "NFS", ""},
		{"nfs v3 with lockd", 0x6969, "rw,vers=3,local_lock=none", "NFS", ""},
		{"nfs nolock", 0x6969, "rw,vers=3,nolock,local_lock=all", "NFS", "NFS mounted with nolock: its locks stay on this host"},
		{"nfs local_lock=posix", 0x6969, "rw,vers=4.1,local_lock=posix", "NFS", "NFS mounted with local_lock=posix: its locks stay on this host"},
		{"nfs local_lock=flock", 0x6969, "rw,vers=4.1,local_lock=flock", "NFS", ""},
		{"cifs", 0xFF534D42, "rw,vers=3.1.1,cache=strict", "CIFS", ""},
		{"cifs nobrl", 0xFF534D42, "rw,nobrl", "CIFS", "CIFS mounted with nobrl: its byte-range locks stay on this host"},
		{"smb2", 0xFE534D42, "rw", "SMB2", ""},
		{"smb", 0x517B, "rw", "SMB", ""},
		{"lustre flock", 0x0BD00BD0, "rw,flock,lazystatfs", "Lustre", ""},
		{"lustre localflock", 0x0BD00BD0, "rw,localflock", "Lustre", "Lustre mounted with localflock: its locks stay on this client"},
		{"lustre noflock", 0x0BD00BD0, "rw,noflock", "Lustre", "Lustre mounted with noflock: it refuses every lock"},
		{"gpfs", 0x47504653, "rw", "GPFS", ""},
		{"beegfs", 0x19830326, "rw,cfgFile=/etc/beegfs/beegfs-client.conf", "BeeGFS", ""},
		{"cephfs", 0x00C36400, "rw,name=admin", "CephFS", ""},
		{"fuse", 0x65735546, "rw,user_id=0,group_id=0", "FUSE", ""},
		{"openafs", 0x5346414F, "rw", "AFS", ""},
		{"kafs", 0x6B414653, "rw", "AFS", ""},
		{"9p", 0x01021997, "rw,trans=virtio", "9p", ""},
		{"panfs", 0xAAD7AAEA, "rw", "PanFS", ""},
		{"ocfs2", 0x7461636F, "rw", "OCFS2", ""},
		{"gfs2", 0x01161970, "rw", "GFS2", ""},
		{"orangefs", 0x20030528, "rw", "OrangeFS", ""},
	} {
		got := judgeFS(tt.fsType, strings.Split(tt.opts, ","))
		if got.Name != tt.want || got.rollback() != (tt.want != "") {
			t.Errorf("%s: %+v, want file system %q", tt.name, got, tt.want)
		}
		if (tt.refuse == "") != (got.Refuse == "") || !strings.Contains(got.Refuse, tt.refuse) {
			t.Errorf("%s: refusal %q, want %q", tt.name, got.Refuse, tt.refuse)
		}
	}
}

// pretendFS makes every archive look as if it were on the file system
// fsType mounted with opts, for the rest of the test.
func pretendFS(t *testing.T, fsType int64, opts string) {
	t.Helper()
	oldStatfs, oldInfo := statfs, mountInfo
	t.Cleanup(func() { statfs, mountInfo = oldStatfs, oldInfo })
	statfs = func(path string, st *unix.Statfs_t) error {
		if err := oldStatfs(path, st); err != nil {
			return err
		}
		st.Type = fsType
		return nil
	}
	// Every device this test's files can be on, mounted with opts.
	var st unix.Stat_t
	if err := unix.Stat(t.TempDir(), &st); err != nil {
		t.Fatal(err)
	}
	line := fmt.Sprintf("36 25 %d:%d / /home rw,relatime shared:1 - nfs4 server:/home %s\n", unix.Major(uint64(st.Dev)), unix.Minor(uint64(st.Dev)), opts)
	mountInfo = func() (io.ReadCloser, error) {
		return io.NopCloser(strings.NewReader("22 1 0:21 / /proc rw - proc proc rw\n" + line)), nil
	}
}

// journal is what SQLite says of the connections of db.
func journal(t *testing.T, db *DB) (writer, reader, synchronous string) {
	t.Helper()
	for _, q := range []struct {
		pool *sql.DB
		sql  string
		out  *string
	}{{db.w, "PRAGMA journal_mode", &writer}, {db.r, "PRAGMA journal_mode", &reader}, {db.w, "PRAGMA synchronous", &synchronous}} {
		if err := q.pool.QueryRow(q.sql).Scan(q.out); err != nil {
			t.Fatal(err)
		}
	}
	return writer, reader, synchronous
}

// walFiles are the files of WAL mode beside the archive at path.
func walFiles(path string) []string {
	var out []string
	for _, s := range []string{"-wal", "-shm"} {
		if _, err := os.Lstat(path + s); err == nil {
			out = append(out, filepath.Base(path+s))
		}
	}
	return out
}

// TestNetworkArchiveTakesRollbackJournal: on a network file system a new
// archive gets a rollback journal (synchronous FULL), never a -wal or
// -shm file, and everything an archive does works: ingests from two
// processes at once with readers reading, read-only opening, pruning and
// vacuuming, export and import.
func TestNetworkArchiveTakesRollbackJournal(t *testing.T) {
	pretendFS(t, 0x6969, "rw,vers=4.2,local_lock=none")
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "sbench.db")
	a, b := openAt(t, path), openAt(t, path)
	if w, r, s := journal(t, a); w != "delete" || r != "delete" || s != "2" {
		t.Errorf("journal mode %s (readers %s), synchronous %s; want delete, delete, 2 (FULL)", w, r, s)
	}

	// Two writers and a reader at once: the locks keep them apart.
	var wg sync.WaitGroup
	errs := make(chan error, 3)
	const files = 20
	for p, db := range []*DB{a, b} {
		wg.Go(func() {
			for i := range files {
				if _, err := db.Ingest(ctx, "f.json", []*results.Bundle{osuBundle(fmt.Sprint("c", p), "ib", fmt.Sprint(i), 5)}); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	stop := make(chan struct{})
	var readers sync.WaitGroup
	readers.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			samples, err := a.Samples(ctx, Filter{})
			if err != nil {
				errs <- fmt.Errorf("read during the ingests: %w", err)
				return
			}
			if len(samples)%5 != 0 {
				errs <- fmt.Errorf("a read saw %d samples: not whole runs", len(samples))
				return
			}
		}
	})
	wg.Wait()
	close(stop)
	readers.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := count(t, a, "runs"); n != 2*files {
		t.Fatalf("%d runs, want %d", n, 2*files)
	}
	if got := walFiles(path); len(got) != 0 {
		t.Errorf("WAL files beside an archive on NFS: %q", got)
	}

	ro, err := OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := ro.CountRuns(ctx, Filter{}); err != nil || n != 2*files {
		t.Errorf("read-only: %d runs, %v", n, err)
	}
	ro.Close()

	plan, err := a.PlanPrune(ctx, Filter{Campaign: "c0"})
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for _, r := range plan.Delete {
		ids = append(ids, r.ID)
	}
	if _, err := a.Prune(ctx, ids); err != nil || len(ids) != files {
		t.Fatalf("prune %d runs: %v", len(ids), err)
	}
	if _, err := a.Vacuum(ctx); err != nil {
		t.Fatal(err)
	}
	var exported strings.Builder
	if _, err := a.ExportArchive(ctx, &exported, Filter{}); err != nil {
		t.Fatal(err)
	}
	other := openAt(t, filepath.Join(dir, "other.db"))
	if _, err := other.ImportArchive(ctx, strings.NewReader(exported.String()), "x.sbench", ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	if n := count(t, other, "runs"); n != files {
		t.Errorf("imported %d runs, want %d", n, files)
	}
	for _, db := range []*DB{a, b, other} {
		if err := db.Close(); err != nil {
			t.Error(err)
		}
	}
	if got := walFiles(path); len(got) != 0 {
		t.Errorf("WAL files left: %q", got)
	}
}

// crashedWALArchive leaves at path a WAL archive as a writer that stopped
// without a checkpoint leaves it: two runs, the second only in its log,
// with the log's index beside it.
func crashedWALArchive(t *testing.T, path string) {
	t.Helper()
	scratch := filepath.Join(t.TempDir(), "a.db")
	db, err := Open(scratch)
	if err != nil {
		t.Fatal(err)
	}
	ingest(t, db, "f.json", osuBundle("c", "ib", "1", 4))
	if _, err := db.w.Exec("PRAGMA wal_autocheckpoint = 0"); err != nil {
		t.Fatal(err)
	}
	ingest(t, db, "g.json", osuBundle("c", "tcp", "2", 4))
	for _, s := range []string{"", "-wal", "-shm"} {
		data, err := os.ReadFile(scratch + s)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path+s, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	if st, err := os.Stat(path + "-wal"); err != nil || st.Size() == 0 {
		t.Fatalf("no log with the second run: %v", err)
	}
}

// TestNetworkArchiveLeavesWAL: an archive in WAL mode found on a network
// file system — made before sbench knew, or elsewhere and copied there,
// with a log not yet checkpointed — is switched to a rollback journal
// with its log's runs, for writing and for reading, and its -wal and
// -shm files are gone; one that another process holds is refused until
// it lets go.
func TestNetworkArchiveLeavesWAL(t *testing.T) {
	ctx := context.Background()
	for _, open := range []struct {
		name string
		open func(string) (*DB, error)
	}{{"Open", Open}, {"OpenReadOnly", OpenReadOnly}} {
		t.Run(open.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "sbench.db")
			crashedWALArchive(t, path)
			pretendFS(t, 0x0BD00BD0, "rw,flock")
			db, err := open.open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if n, err := db.CountRuns(ctx, Filter{}); err != nil || n != 2 {
				t.Errorf("%d runs, %v; want 2, one from the log", n, err)
			}
			if w, r, _ := journal(t, db); w != "delete" || r != "delete" {
				t.Errorf("journal mode %s, readers %s; want delete", w, r)
			}
			if got := walFiles(path); len(got) != 0 {
				t.Errorf("WAL files left: %q", got)
			}
		})
	}

	t.Run("a stale index alone", func(t *testing.T) {
		pretendFS(t, 0x6969, "rw")
		path := filepath.Join(t.TempDir(), "sbench.db")
		archiveAt(t, path)
		// While another process reads, it stays: harmless to a
		// rollback journal, and removed the next time.
		reader := openAt(t, path)
		tx, err := reader.r.Begin()
		if err != nil {
			t.Fatal(err)
		}
		var n int
		if err := tx.QueryRow("SELECT count(*) FROM runs").Scan(&n); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(path+"-shm", make([]byte, 32768), 0o644)
		if n := readOnlyRuns(t, path); n != 1 {
			t.Errorf("%d runs, want 1", n)
		}
		if got := walFiles(path); !slices.Equal(got, []string{"sbench.db-shm"}) {
			t.Errorf("WAL files while another process reads: %q, want the index left", got)
		}
		tx.Rollback()
		if n := readOnlyRuns(t, path); n != 1 {
			t.Errorf("%d runs, want 1", n)
		}
		if got := walFiles(path); len(got) != 0 {
			t.Errorf("WAL files left: %q", got)
		}
	})

	t.Run("held by another process", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "sbench.db")
		archiveAt(t, path)
		// An sbench from before, on this host or another: WAL mode,
		// with a read done, so that it holds its lock.
		old, err := sql.Open("sqlite3", "file:"+path+"?_journal_mode=WAL")
		if err != nil {
			t.Fatal(err)
		}
		defer old.Close()
		old.SetMaxOpenConns(1)
		var n int
		if err := old.QueryRow("SELECT count(*) FROM runs").Scan(&n); err != nil || n != 1 {
			t.Fatalf("the other process reads %d runs, %v", n, err)
		}
		pretendFS(t, 0x6969, "rw")
		defer func(d time.Duration) { leaveWALWait = d }(leaveWALWait)
		leaveWALWait = 100 * time.Millisecond
		for _, o := range []func(string) (*DB, error){Open, OpenReadOnly} {
			db, err := o(path)
			if err == nil {
				db.Close()
				t.Fatal("opened while another process holds it in WAL mode")
			}
			for _, want := range []string{path + " is in WAL mode, which is not safe on NFS", "another process has it open", "run the command again"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q lacks %q", err, want)
				}
			}
		}
		if !slices.Contains(walFiles(path), "sbench.db-wal") {
			t.Error("the log of the process that has it open was removed")
		}
		old.Close()
		if n := readOnlyRuns(t, path); n != 1 {
			t.Errorf("after it let go: %d runs, want 1", n)
		}
		if got := walFiles(path); len(got) != 0 {
			t.Errorf("WAL files left: %q", got)
		}
	})
}

// TestNetworkArchiveRefused: where the mount options keep the locks on
// one host, the archive is refused, with where to put it, and nothing is
// created.
func TestNetworkArchiveRefused(t *testing.T) {
	dir := t.TempDir()
	pretendFS(t, 0x6969, "rw,vers=3,nolock,local_lock=all")
	path := filepath.Join(dir, "sbench.db")
	_, err := Open(path)
	var fe *FileSystemError
	if !errors.As(err, &fe) {
		t.Fatalf("Open = %v, want a FileSystemError", err)
	}
	want := "archive " + path + ": it is on NFS mounted with nolock: its locks stay on this host, and SQLite needs locks that every host sees to keep two writers apart; " +
		"put it on a local disk of the host that runs sbench (--db /var/tmp/$USER/sbench.db) or on a file system whose locks reach every host " +
		"(see \"Where an archive belongs on a cluster\" in docs/install.md)"
	if err == nil || err.Error() != want {
		t.Errorf("Open = %v\nwant %s", err, want)
	}
	if got := names(t, dir); len(got) != 0 {
		t.Errorf("files created: %q", got)
	}
	// One made before sbench knew is refused for reading too.
	os.WriteFile(path, nil, 0o644)
	if _, err := OpenReadOnly(path); !errors.As(err, &fe) {
		t.Errorf("OpenReadOnly = %v, want a FileSystemError", err)
	}
}

// TestWhyReadOnlyRollback: with a rollback journal the file SQLite
// creates beside the archive is PATH-journal, and an unwritable directory
// is named for it.
func TestWhyReadOnlyRollback(t *testing.T) {
	pretendFS(t, 0x6969, "rw")
	dir := t.TempDir()
	path := filepath.Join(dir, "a.db")
	os.WriteFile(path, nil, 0o644)
	defer func(f func(string) error) { accessW = f }(accessW)
	accessW = func(p string) error {
		if p == dir {
			return unix.EACCES
		}
		return nil
	}
	if got, want := whyReadOnly(path), "no write permission on its directory "+dir+", where SQLite keeps its -journal file"; got != want {
		t.Errorf("whyReadOnly = %q, want %q", got, want)
	}
}
