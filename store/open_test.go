package store

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestOpenNewArchive(t *testing.T) {
	db := openTemp(t)
	ctx := context.Background()
	v, err := db.SchemaVersion(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if v != LatestSchemaVersion() || v != len(migrations) {
		t.Errorf("schema version = %d, want %d", v, len(migrations))
	}
	for _, tt := range []struct {
		pool   *sql.DB
		pragma string
		want   string
	}{
		{db.w, "journal_mode", "wal"},
		{db.r, "journal_mode", "wal"},
		{db.w, "foreign_keys", "1"},
		{db.r, "foreign_keys", "1"},
		{db.w, "busy_timeout", "30000"},
		{db.r, "busy_timeout", "30000"},
		{db.r, "query_only", "1"},
		{db.w, "query_only", "0"},
		{db.w, "application_id", "1935830627"}, // "sbnc",
	} {
		var got string
		if err := tt.pool.QueryRow("PRAGMA " + tt.pragma).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != tt.want {
			t.Errorf("PRAGMA %s = %q, want %q", tt.pragma, got, tt.want)
		}
	}
}

func TestOpenExistingKeepsData(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.db")
	archiveAt(t, path)
	if n := count(t, openAt(t, path), "samples"); n != 4 {
		t.Errorf("reopened archive has %d samples, want 4", n)
	}
}

func TestOpenPathNeedsNoEscaping(t *testing.T) {
	// '?', '#', '%' and spaces are URI syntax; the archive must still land
	// at exactly the path given.
	path := filepath.Join(t.TempDir(), "my results?v=1#x %41.db")
	archiveAt(t, path)
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("archive not at %q: %v", path, err)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), "my results?v=1#x %41.db") {
			t.Errorf("stray file %q next to the archive", e.Name())
		}
	}
}

func TestOpenRefusesNewerSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "new.db")
	newer := LatestSchemaVersion() + 1
	archiveWithVersion(t, path, newer)

	_, err := Open(path)
	var ne *NewerSchemaError
	if !errors.As(err, &ne) {
		t.Fatalf("Open = %v, want a NewerSchemaError", err)
	}
	want := "archive " + path + " has schema version " + strconv.Itoa(newer) + "; this sbench knows up to " + strconv.Itoa(LatestSchemaVersion())
	if err.Error() != want {
		t.Errorf("error = %q\nwant    %q", err, want)
	}
}

func TestOpenRefusesOtherFiles(t *testing.T) {
	dir := t.TempDir()
	foreign := filepath.Join(dir, "foreign.db")
	other, err := sql.Open("sqlite3", foreign)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Exec("CREATE TABLE accounts (id INTEGER)"); err != nil {
		t.Fatal(err)
	}
	other.Close()
	text := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(text, []byte(strings.Repeat("not a database\n", 100)), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		path, want string
	}{
		{foreign, "not an sbench archive"},
		{text, "not a database"},
		{filepath.Join(dir, "missing", "a.db"), "unable to open"},
	} {
		db, err := Open(tt.path)
		if err == nil {
			db.Close()
			t.Errorf("Open(%s) succeeded, want an error", tt.path)
			continue
		}
		if !strings.Contains(err.Error(), tt.path) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Open(%s) = %q, want the path and %q", tt.path, err, tt.want)
		}
	}
	// The foreign database is left as it was.
	other, _ = sql.Open("sqlite3", foreign)
	defer other.Close()
	var n int
	if err := other.QueryRow("SELECT count(*) FROM sqlite_schema").Scan(&n); err != nil || n != 1 {
		t.Errorf("foreign database has %d schema objects (%v), want 1", n, err)
	}
}

func TestOpenEmptyFile(t *testing.T) {
	// An empty file (touch archive.db) is an empty SQLite database.
	path := filepath.Join(t.TempDir(), "empty.db")
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if v, _ := openAt(t, path).SchemaVersion(context.Background()); v != len(migrations) {
		t.Errorf("schema version %d, want %d", v, len(migrations))
	}
}
