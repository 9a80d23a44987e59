package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"runtime"
	"time"

	"github.com/mattn/go-sqlite3"
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
}

// Open opens the archive at path, creating it if it does not exist, and
// brings its schema up to date. It refuses a file that is not an sbench
// archive and an archive written by a newer sbench.
func Open(path string) (*DB, error) {
	return openWith(context.Background(), path, migrations)
}

func openWith(ctx context.Context, path string, list []migration) (*DB, error) {
	w, err := sql.Open(writerDriver, dsn(path, true))
	if err != nil {
		return nil, fmt.Errorf("open archive %s: %w", path, err)
	}
	// One connection: writes are serialised here rather than by SQLite's
	// busy handler, which is fairer and avoids lock upgrades.
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	if err := w.PingContext(ctx); err != nil {
		w.Close()
		return nil, fmt.Errorf("open archive %s: %w", path, err)
	}
	if err := migrate(ctx, w, path, list); err != nil {
		w.Close()
		return nil, err
	}
	r, err := sql.Open("sqlite3", dsn(path, false))
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("open archive %s: %w", path, err)
	}
	n := max(4, runtime.GOMAXPROCS(0))
	r.SetMaxOpenConns(n)
	r.SetMaxIdleConns(n)
	db := &DB{path: path, w: w, r: r, now: time.Now}
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

// dsn builds the go-sqlite3 data source name for path. The path goes into a
// file: URI, escaped, so that a '?' or '%' in a file name cannot be taken for
// a parameter.
func dsn(path string, write bool) string {
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	u := url.URL{Path: filepath.ToSlash(path)}
	q := url.Values{}
	q.Set("_foreign_keys", "1")
	q.Set("_busy_timeout", fmt.Sprint(busyTimeout.Milliseconds()))
	q.Set("_stmt_cache_size", "32")
	if write {
		q.Set("_journal_mode", "WAL")
		q.Set("_synchronous", "NORMAL")
		q.Set("_txlock", "immediate")
	} else {
		q.Set("_query_only", "1")
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
