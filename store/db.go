package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/mattn/go-sqlite3"
	"golang.org/x/sys/unix"
)

// ErrNotFound is returned (wrapped) when a run or job asked for by id is not
// in the archive.
var ErrNotFound = errors.New("not found")

// ErrExists is returned (wrapped) by RecordJob for a job already recorded.
var ErrExists = errors.New("already recorded")

// busyTimeout is how long a statement waits for another process's write
// lock before failing. An ingest of a large batch holds the lock for seconds,
// so this is generous. A cancelled context does not cut this wait short
// (SQLite's busy handler does not watch for interrupts); it stops the
// statements that follow.
const busyTimeout = 30 * time.Second

// writerDriver is go-sqlite3 with the settings the DSN cannot carry, applied
// to every writer connection however often database/sql reopens it.
const writerDriver = "sqlite3_sbench_writer"

func init() {
	sql.Register(writerDriver, &sqlite3.SQLiteDriver{
		ConnectHook: func(c *sqlite3.SQLiteConn) error {
			// IngestFiles puts each file in a savepoint, whose undo
			// journal would otherwise spill to a temporary file beyond
			// 64 KiB: in memory it is almost free, on disk it cost a
			// third of the ingest time.
			_, err := c.Exec("PRAGMA temp_store = MEMORY", nil)
			return err
		},
	})
}

// DB is an open archive. It is safe for concurrent use.
type DB struct {
	path string
	// w is the single writer connection; r is a pool of query-only readers
	// that WAL lets run while w writes.
	w, r *sql.DB

	ins *ingestStmts

	// now is the clock stamped on ingested runs and updated jobs; tests
	// replace it to get stable values.
	now func() time.Time

	// readOnly is set by OpenReadOnly.
	readOnly bool

	// fs is the file system the archive is on: a network one takes a
	// rollback journal.
	fs archiveFS
}

// Open opens the archive at path for writing, creating it if it does not
// exist, and brings its schema up to date. It refuses a file that is not an
// sbench archive and an archive written by a newer sbench; an archive this
// process cannot write is a *ReadOnlyError.
func Open(path string) (*DB, error) {
	db, err := openWith(context.Background(), path, migrations)
	if err != nil {
		return nil, readOnlyOr(path, err)
	}
	return db, nil
}

// ErrNoArchive is returned (wrapped, as "no archive at PATH") by
// OpenReadOnly for a path where there is no file: reading never creates an
// archive, so a mistyped path is not mistaken for an empty one.
var ErrNoArchive = errors.New("no archive")

// ReadOnlyError is returned by Open for an archive this process cannot
// write, and by OpenReadOnly for one that would have to be written to be
// read: migrated to this sbench's schema, or its write-ahead log replayed.
type ReadOnlyError struct {
	Path string
	// Reason says what stops writing, in words for the user: "read-only
	// file system", "no write permission" …
	Reason string
	// Migrate is set when OpenReadOnly found the archive at schema
	// Version, older than this sbench's: this sbench's queries need its
	// own schema, and the migration would write.
	Migrate bool
	Version int
	// WAL is set when the archive's write-ahead log holds changes that
	// SQLite cannot read without creating the log's index (PATH-shm).
	WAL bool
	// Err is what SQLite said, when it said something.
	Err error
}

func (e *ReadOnlyError) Error() string {
	msg := fmt.Sprintf("archive %s is read-only (%s)", e.Path, e.Reason)
	switch {
	case e.WAL:
		msg += fmt.Sprintf(" and its write-ahead log %s-wal holds changes SQLite cannot read without creating %s-shm: "+
			"open it once where it is writable, or copy %s and %s-wal somewhere writable and read the copy", e.Path, e.Path, e.Path, e.Path)
	case e.Migrate && e.Version == 0:
		msg += " and holds no archive yet: there is nothing to read"
	case e.Migrate:
		msg += fmt.Sprintf(" and has schema version %d, older than this sbench's %d: it cannot be migrated where it is; "+
			"copy it somewhere writable (sbench migrates the copy), or read it with the sbench that wrote it", e.Version, LatestSchemaVersion())
	}
	return msg
}

func (e *ReadOnlyError) Unwrap() error { return e.Err }

// accessW asks the kernel whether this process may write path: unlike
// permission bits it knows about read-only mounts, root and ACLs. Tests
// replace it.
var accessW = func(path string) error { return unix.Access(path, unix.W_OK) }

// whyReadOnly says what stops this process writing the archive at path, or
// "" when nothing it can name does. SQLite writes three files: the archive,
// and beside it PATH-wal and PATH-shm, which it creates when they are not
// there, so the directory counts too. (With a rollback journal, on a
// network file system, the file beside it is PATH-journal.)
func whyReadOnly(path string) string {
	sides, what := []string{path + "-wal", path + "-shm"}, "its -wal and -shm files"
	if fsOf(path).rollback() {
		sides, what = []string{path + "-journal"}, "its -journal file"
	}
	why := func(err error, denied string) string {
		switch {
		case errors.Is(err, unix.EROFS):
			return "read-only file system"
		case errors.Is(err, unix.EACCES), errors.Is(err, unix.EPERM):
			return denied
		}
		return ""
	}
	if r := why(accessW(path), "no write permission"); r != "" {
		return r
	}
	dir := filepath.Dir(path)
	for _, side := range sides {
		if _, err := os.Lstat(side); err != nil {
			if r := why(accessW(dir), "no write permission on its directory "+dir+", where SQLite keeps "+what); r != "" {
				return r
			}
			continue
		}
		if r := why(accessW(side), "no write permission on "+side); r != "" {
			return r
		}
	}
	return ""
}

// readOnlyOr turns err, from opening path for writing, into what is true
// when path cannot be written: SQLite's own words for a read-only mount
// are "unable to open database file: no such file or directory".
func readOnlyOr(path string, err error) error {
	var ne *NewerSchemaError
	var fe *FileSystemError
	if errors.As(err, &ne) || errors.As(err, &fe) {
		return err
	}
	why := whyReadOnly(path)
	if why == "" {
		return err
	}
	if _, serr := os.Stat(path); errors.Is(serr, fs.ErrNotExist) {
		return fmt.Errorf("create archive %s: %s", path, why)
	}
	return &ReadOnlyError{Path: path, Reason: why, Err: err}
}

// OpenReadOnly opens the archive at path for a command that only reads it.
// It never creates one (a path with no file is ErrNoArchive) and works on
// an archive this process cannot write: on a read-only mount, or in a
// directory it may not write to. Writes through the returned DB fail.
//
// An archive at an older schema is migrated, as Open does, when it is
// writable; when it is not, that is a *ReadOnlyError, since this sbench's
// queries are written for its own schema.
func OpenReadOnly(path string) (*DB, error) {
	ctx := context.Background()
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%w at %s", ErrNoArchive, path)
	case err != nil:
		return nil, fmt.Errorf("open archive: %w", err)
	case st.IsDir():
		return nil, fmt.Errorf("%s is a directory, not an archive", path)
	}
	// A reader SQLite can write to beside (query_only) cleans up the -wal
	// and -shm files when the last connection closes; a mode=ro one
	// cannot, and would leave them behind every "sbench runs". So mode=ro
	// is for an archive this process cannot write, where query_only
	// cannot even open it.
	why := whyReadOnly(path)
	fsys, err := checkFS(ctx, path, why == "")
	if err != nil {
		return nil, err
	}
	mode := read
	if why != "" {
		mode = readOnly
	}
	db, version, err := openReader(ctx, path, mode)
	if err != nil && mode == read {
		// Not writable for a reason whyReadOnly cannot name.
		db, version, err = openReader(ctx, path, readOnly)
	}
	if err != nil {
		if why == "" {
			return nil, err
		}
		// To read a WAL archive SQLite needs its -shm index, which it
		// cannot create here. immutable=1 tells it the file never
		// changes, so it needs neither index nor lock: true of a file
		// nobody can write. But it also ignores the log, so a log
		// holding changes (left by a writer that stopped without a
		// checkpoint) must not be dropped silently.
		if st, serr := os.Stat(path + "-wal"); serr == nil && st.Size() > 0 {
			return nil, &ReadOnlyError{Path: path, Reason: why, WAL: true, Err: err}
		}
		if db, version, err = openReader(ctx, path, readImmutable); err != nil {
			return nil, err
		}
	}
	db.fs = fsys
	if version == len(migrations) {
		return db, nil
	}
	db.Close()
	if why != "" {
		return nil, &ReadOnlyError{Path: path, Reason: why, Migrate: true, Version: version}
	}
	db, err = Open(path)
	if ro := (*ReadOnlyError)(nil); errors.As(err, &ro) {
		ro.Migrate, ro.Version = true, version
	}
	return db, err
}

// openReader opens path for reading only (mode is read, readOnly or
// readImmutable), checks that it is an sbench archive this sbench can
// read, and returns its schema version.
func openReader(ctx context.Context, path string, mode dsnMode) (*DB, int, error) {
	r, err := sql.Open("sqlite3", dsn(path, mode, archiveFS{}))
	if err != nil {
		return nil, 0, fmt.Errorf("open archive %s: %w", path, err)
	}
	n := max(4, runtime.GOMAXPROCS(0))
	r.SetMaxOpenConns(n)
	r.SetMaxIdleConns(n)
	version, err := archiveVersion(ctx, r, path, len(migrations))
	if err != nil {
		r.Close()
		return nil, 0, err
	}
	// The "writer" of a read-only DB is one more reading connection:
	// the methods that write find a DB like any other and get SQLite's
	// "attempt to write a readonly database" rather than a nil pointer.
	w, err := sql.Open("sqlite3", dsn(path, mode, archiveFS{}))
	if err != nil {
		r.Close()
		return nil, 0, fmt.Errorf("open archive %s: %w", path, err)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	db := &DB{path: path, w: w, r: r, now: time.Now, readOnly: true}
	if version == len(migrations) {
		if db.ins, err = prepareIngest(ctx, w); err != nil {
			db.Close()
			return nil, 0, fmt.Errorf("open archive %s: %w", path, err)
		}
	}
	return db, version, nil
}

// connectWriter opens w's connection, whose DSN sets journal_mode=WAL.
// On a file not yet in WAL mode (an archive being created) that pragma
// takes a read lock and then upgrades it to write the file's header, and
// SQLite does not call the busy handler for an upgrade: a second process
// doing the same at the same moment gets "database is locked" at once,
// whatever busyTimeout says. Two "sbench local" runs started together on
// a new archive did. So a busy connect is retried here, for as long as
// busyTimeout would have waited; once the file is in WAL mode the pragma
// changes nothing and takes no lock.
func connectWriter(ctx context.Context, w *sql.DB) error {
	deadline := time.Now().Add(busyTimeout)
	pause := time.Millisecond
	for {
		err := w.PingContext(ctx)
		var se sqlite3.Error
		if err == nil || !errors.As(err, &se) || se.Code != sqlite3.ErrBusy || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(pause):
		}
		pause = min(2*pause, 50*time.Millisecond)
	}
}

// ReadOnly reports whether the archive was opened read-only: every write
// through it fails.
func (db *DB) ReadOnly() bool { return db.readOnly }

func openWith(ctx context.Context, path string, list []migration) (*DB, error) {
	fsys, err := checkFS(ctx, path, true)
	if err != nil {
		return nil, err
	}
	w, err := sql.Open(writerDriver, dsn(path, write, fsys))
	if err != nil {
		return nil, fmt.Errorf("open archive %s: %w", path, err)
	}
	// One connection: writes are serialised here rather than by SQLite's
	// busy handler, which is fairer and avoids lock upgrades.
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	if err := connectWriter(ctx, w); err != nil {
		w.Close()
		return nil, fmt.Errorf("open archive %s: %w", path, err)
	}
	if fsys.rollback() {
		// The DSN's journal_mode cannot leave WAL while another
		// process holds the archive (an older sbench, which put it
		// back in WAL mode since leaveWAL ran): SQLite then keeps WAL
		// and says nothing.
		var mode string
		if err := w.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
			w.Close()
			return nil, fmt.Errorf("open archive %s: %w", path, err)
		}
		if mode != "delete" {
			w.Close()
			return nil, fmt.Errorf("open archive %s: it is on %s, where WAL mode is not safe, and another process has put it back in journal mode %s: stop it and run the command again", path, fsys.Name, mode)
		}
	}
	if err := migrate(ctx, w, path, list); err != nil {
		w.Close()
		return nil, err
	}
	r, err := sql.Open("sqlite3", dsn(path, read, fsys))
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("open archive %s: %w", path, err)
	}
	n := max(4, runtime.GOMAXPROCS(0))
	r.SetMaxOpenConns(n)
	r.SetMaxIdleConns(n)
	db := &DB{path: path, w: w, r: r, now: time.Now, fs: fsys}
	if len(list) == len(migrations) {
		// Statements are written for the latest schema; the migration tests
		// open archives at older versions and only read them raw.
		if db.ins, err = prepareIngest(ctx, w); err != nil {
			db.Close()
			return nil, fmt.Errorf("open archive %s: %w", path, err)
		}
	}
	return db, nil
}

// dsnMode is how a connection uses the archive.
type dsnMode int

const (
	write         dsnMode = iota // the writer
	read                         // a query-only reader beside the writer
	readOnly                     // SQLite mode=ro: never writes, still locks and reads the log
	readImmutable                // mode=ro&immutable=1: for a file nobody can write
	leave                        // exclusive locking, to take it out of WAL mode (leaveWAL)
)

// dsn builds the go-sqlite3 data source name for path, on the file system
// fsys. The path goes into a file: URI, escaped, so that a '?' or '%' in a
// file name cannot be taken for a parameter.
func dsn(path string, mode dsnMode, fsys archiveFS) string {
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	u := url.URL{Path: filepath.ToSlash(path)}
	q := url.Values{}
	q.Set("_foreign_keys", "1")
	q.Set("_busy_timeout", fmt.Sprint(busyTimeout.Milliseconds()))
	q.Set("_stmt_cache_size", "32")
	switch mode {
	case write:
		q.Set("_journal_mode", "WAL")
		q.Set("_synchronous", "NORMAL")
		if fsys.rollback() {
			// FULL: with a rollback journal NORMAL may lose the
			// file to a power cut at the wrong moment, not only
			// the last commits.
			q.Set("_journal_mode", "DELETE")
			q.Set("_synchronous", "FULL")
		}
		q.Set("_txlock", "immediate")
	case read:
		q.Set("_query_only", "1")
	case readOnly:
		q.Set("mode", "ro")
	case readImmutable:
		q.Set("mode", "ro")
		q.Set("immutable", "1")
	case leave:
		// No journal_mode: go-sqlite3 would set it before the locking
		// mode, mapping PATH-shm to read a WAL archive. leaveWAL waits
		// for the lock itself.
		q.Set("_locking_mode", "EXCLUSIVE")
		q.Set("_busy_timeout", "0")
	}
	return "file:" + u.EscapedPath() + "?" + q.Encode()
}

// Close closes the archive.
func (db *DB) Close() error {
	var errs []error
	if db.ins != nil {
		errs = append(errs, db.ins.close())
	}
	if db.r != nil {
		errs = append(errs, db.r.Close())
	}
	if db.w != nil {
		errs = append(errs, db.w.Close())
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("close archive %s: %w", db.path, err)
	}
	return nil
}

// Path returns the file the archive was opened from.
func (db *DB) Path() string { return db.path }

// SchemaVersion returns the archive's schema version.
func (db *DB) SchemaVersion(ctx context.Context) (int, error) {
	var v int
	if err := db.r.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return 0, fmt.Errorf("read schema version of %s: %w", db.path, err)
	}
	return v, nil
}

// readTx runs fn in one read transaction, so that the several queries behind
// one answer see the same snapshot of the archive.
func (db *DB) readTx(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, err := db.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit()
}

// readValue returns what read reads in one read transaction.
func readValue[T any](ctx context.Context, db *DB, read func(*sql.Tx) (T, error)) (T, error) {
	var out T
	err := db.readTx(ctx, func(tx *sql.Tx) (err error) {
		out, err = read(tx)
		return err
	})
	return out, err
}

// timeLayout is RFC 3339 with a fixed-width fraction: unlike RFC3339Nano it
// sorts as text in time order, which the indexes on start time rely on.
const timeLayout = "2006-01-02T15:04:05.000000000Z"

// formatTime returns the stored form of t: NULL for the zero time.
func formatTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC().Format(timeLayout)
}

// checkTime reports a time the stored form cannot order correctly.
func checkTime(t time.Time) error {
	if t.IsZero() {
		return nil
	}
	if y := t.UTC().Year(); y < 1 || y > 9999 {
		return fmt.Errorf("year %d is outside 1-9999", y)
	}
	return nil
}

func parseTime(s sql.NullString) (time.Time, error) {
	if !s.Valid {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s.String)
	if err != nil {
		return time.Time{}, fmt.Errorf("stored time %q: %w", s.String, err)
	}
	return t, nil
}

// isConstraint reports whether err is SQLite refusing a row (a constraint or
// a trigger's RAISE(ABORT)): an error about the data, after which the
// transaction is still usable.
func isConstraint(err error) bool {
	var se sqlite3.Error
	return errors.As(err, &se) && se.Code == sqlite3.ErrConstraint
}

// isUniqueViolation reports whether err is SQLite refusing a duplicate key.
func isUniqueViolation(err error) bool {
	var se sqlite3.Error
	return errors.As(err, &se) && (se.ExtendedCode == sqlite3.ErrConstraintUnique ||
		se.ExtendedCode == sqlite3.ErrConstraintPrimaryKey)
}
