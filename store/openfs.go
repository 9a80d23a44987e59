package store

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/mattn/go-sqlite3"
	"golang.org/x/sys/unix"
)

// An archive's journal depends on its file system: see "On a network file
// system" in the package documentation.

// fileSystem is a network or cluster file system, as statfs(2) names it
// in f_type (the values coreutils' stat and the file systems' own sources
// use; linux/magic.h has those the kernel holds).
type fileSystem struct {
	name string
	// localLocks are mount options under which its locks do not reach
	// the other hosts, with what they mean.
	localLocks map[string]string
}

// networkFileSystems are the file systems an archive takes a rollback
// journal on, by f_type.
var networkFileSystems = map[int64]fileSystem{
	0x6969: {name: "NFS", localLocks: map[string]string{
		"nolock":           "nolock: its locks stay on this host",
		"local_lock=all":   "local_lock=all: its locks stay on this host",
		"local_lock=posix": "local_lock=posix: its locks stay on this host",
	}},
	0xFF534D42: {name: "CIFS", localLocks: map[string]string{"nobrl": "nobrl: its byte-range locks stay on this host"}},
	0xFE534D42: {name: "SMB2", localLocks: map[string]string{"nobrl": "nobrl: its byte-range locks stay on this host"}},
	0x517B:     {name: "SMB"},
	0x0BD00BD0: {name: "Lustre", localLocks: map[string]string{
		"localflock": "localflock: its locks stay on this client",
		"noflock":    "noflock: it refuses every lock",
	}},
	0x47504653: {name: "GPFS"},
	0x19830326: {name: "BeeGFS"},
	0x00C36400: {name: "CephFS"},
	0x65735546: {name: "FUSE"},
	0x5346414F: {name: "AFS"},
	0x6B414653: {name: "AFS"},
	0x01021997: {name: "9p"},
	0xAAD7AAEA: {name: "PanFS"},
	0x7461636F: {name: "OCFS2"},
	0x01161970: {name: "GFS2"},
	0x20030528: {name: "OrangeFS"},
	0x564C:     {name: "NCP"},
	0x73757245: {name: "Coda"},
}

// archiveFS is what sbench makes of the file system an archive is on.
type archiveFS struct {
	// Name is the network file system's name; "" for one of this host.
	Name string
	// Refuse says why no journal is safe there, when sbench can see it.
	Refuse string
}

// rollback reports whether the archive takes a rollback journal: on a
// network file system, where WAL is not safe.
func (f archiveFS) rollback() bool { return f.Name != "" }

// judgeFS decides for the file system of type fsType, mounted with opts.
func judgeFS(fsType int64, opts []string) archiveFS {
	nfs, ok := networkFileSystems[fsType]
	if !ok {
		return archiveFS{}
	}
	f := archiveFS{Name: nfs.name}
	for _, o := range opts {
		if why, ok := nfs.localLocks[o]; ok {
			f.Refuse = fmt.Sprintf("it is on %s mounted with %s, and SQLite needs locks that every host sees to keep two writers apart", nfs.name, why)
			break
		}
	}
	return f
}

// statfs and mountInfo are the kernel's answers; tests replace them.
var (
	statfs    = unix.Statfs
	mountInfo = func() (io.ReadCloser, error) { return os.Open("/proc/self/mountinfo") }
)

// fsOf says what file system the archive at path is on: the file's own
// when it exists (past any symbolic link, as SQLite follows them), else
// its directory's. What cannot be found out is taken for a local file
// system: opening the archive then fails with SQLite's own words, or
// runs in WAL mode as it always has.
func fsOf(path string) archiveFS {
	target := path
	if _, err := os.Stat(path); err != nil {
		target = filepath.Dir(path)
	}
	var st unix.Statfs_t
	if err := statfs(target, &st); err != nil {
		return archiveFS{}
	}
	return judgeFS(int64(st.Type), mountOptions(target))
}

// mountOptions are the options of the mount target is on, per mount and
// per file system (NFS's local_lock is among the latter), from
// /proc/self/mountinfo; nil when they cannot be read.
func mountOptions(target string) []string {
	var st unix.Stat_t
	if err := unix.Stat(target, &st); err != nil {
		return nil
	}
	f, err := mountInfo()
	if err != nil {
		return nil
	}
	defer f.Close()
	dev := fmt.Sprintf("%d:%d", unix.Major(uint64(st.Dev)), unix.Minor(uint64(st.Dev)))
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		// ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [TAGS...] - TYPE SOURCE SUPEROPTIONS
		fields := strings.Fields(sc.Text())
		sep := slices.Index(fields, "-")
		if sep < 6 || len(fields) < sep+4 || fields[2] != dev {
			continue
		}
		return append(strings.Split(fields[5], ","), strings.Split(fields[sep+3], ",")...)
	}
	return nil
}

// leaveWALWait is how long leaveWAL waits for the other processes that
// have the archive open to let go of it.
var leaveWALWait = 5 * time.Second

// walState says what of WAL mode is left at the archive at path: wal, it
// is in WAL mode (its header says so: bytes 18 and 19 are 2), or a log
// lies beside it, which SQLite replays and then stays in WAL mode,
// whatever the header says; index, PATH-shm lies beside it, which only WAL
// mode uses.
func walState(path string) (wal, index bool) {
	_, err := os.Lstat(path + "-wal")
	wal = err == nil
	_, err = os.Lstat(path + "-shm")
	index = err == nil
	if f, err := os.Open(path); err == nil {
		var head [20]byte
		if _, err := io.ReadFull(f, head[:]); err == nil && head[18] == 2 && head[19] == 2 {
			wal = true
		}
		f.Close()
	}
	return wal, index
}

// leaveWAL switches the archive at path, on the network file system
// fsys, from WAL mode to a rollback journal, keeping what its log holds,
// and removes the log's index. It opens the archive in exclusive locking
// mode, where SQLite keeps the index of a log in its own memory instead
// of mapping PATH-shm, and takes the file's exclusive lock before it reads
// it: it can only when no other process has the archive open, on any
// host whose locks reach the server (a process in WAL mode holds a shared
// lock on the file for as long as it has it open). With that lock held
// and the header saying rollback, nothing can be using PATH-shm.
func leaveWAL(ctx context.Context, path string, fsys archiveFS) error {
	wal, index := walState(path)
	if !wal && !index {
		return nil
	}
	c, err := sql.Open("sqlite3", dsn(path, leave, fsys))
	if err != nil {
		return fmt.Errorf("open archive %s: %w", path, err)
	}
	defer c.Close()
	c.SetMaxOpenConns(1)
	if !wal {
		// A stale index of a log that is gone: removed when no one
		// reads the archive, else left for the next time, harmless
		// to a rollback journal meanwhile.
		if _, err := c.ExecContext(ctx, "BEGIN EXCLUSIVE; COMMIT"); err != nil {
			return nil
		}
		return removeWALFiles(path)
	}
	// SQLite does not wait for the lock in exclusive locking mode; this
	// does, as long as leaveWALWait.
	deadline := time.Now().Add(leaveWALWait)
	var mode string
	for pause := time.Millisecond; ; pause = min(2*pause, 50*time.Millisecond) {
		err = c.QueryRowContext(ctx, "PRAGMA journal_mode = DELETE").Scan(&mode)
		var se sqlite3.Error
		if err == nil || !errors.As(err, &se) || (se.Code != sqlite3.ErrBusy && se.Code != sqlite3.ErrLocked) {
			break
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("archive %s is in WAL mode, which is not safe on %s (SQLite's index of the log, %s-shm, is shared memory that each host maps on its own); "+
				"sbench switches it to a rollback journal, but another process has it open (%w): stop the sbench or sqlite3 that has it, on this host or another, and run the command again",
				path, fsys.Name, path, err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(pause):
		}
	}
	if err == nil && mode != "delete" {
		err = fmt.Errorf("SQLite kept journal mode %q", mode)
	}
	if err != nil {
		return fmt.Errorf("open archive %s: leave WAL mode, which is not safe on %s: %w", path, fsys.Name, err)
	}
	return removeWALFiles(path)
}

// removeWALFiles removes what WAL mode left beside the archive at path,
// which leaveWAL holds exclusively and has taken out of WAL mode.
func removeWALFiles(path string) error {
	for _, side := range []string{"-wal", "-shm"} {
		if err := os.Remove(path + side); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("open archive %s: remove what its former write-ahead log left: %w", path, err)
		}
	}
	return nil
}

// FileSystemError is returned by Open and OpenReadOnly for an archive on
// a network file system whose mount options keep its locks on one host
// (NFS with nolock, CIFS with nobrl, Lustre with localflock): there no
// journal keeps two sbench on two hosts from writing it at once.
type FileSystemError struct {
	Path string
	// FS is the file system's name (NFS, Lustre …), Why what its mount
	// options do to locks.
	FS, Why string
}

func (e *FileSystemError) Error() string {
	return fmt.Sprintf("archive %s: %s; put it on a local disk of the host that runs sbench (--db /var/tmp/$USER/sbench.db) "+
		"or on a file system whose locks reach every host (see \"Where an archive belongs on a cluster\" in docs/install.md)", e.Path, e.Why)
}

// checkFS finds the file system of the archive at path and, on a network
// file system, refuses it or takes it out of WAL mode. An archive this
// process cannot write (writable false) is read as it is: nothing sbench
// does to it can change it.
func checkFS(ctx context.Context, path string, writable bool) (archiveFS, error) {
	fsys := fsOf(path)
	switch {
	case fsys.Refuse != "" && writable:
		return fsys, &FileSystemError{Path: path, FS: fsys.Name, Why: fsys.Refuse}
	case fsys.rollback() && writable:
		return fsys, leaveWAL(ctx, path, fsys)
	}
	return fsys, nil
}
