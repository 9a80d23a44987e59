package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/sbench/sbench/internal/testenv"
	"github.com/sbench/sbench/results"
)

// readOnlyRuns opens the archive at path read-only and returns how many
// runs it holds.
func readOnlyRuns(t *testing.T, path string) int {
	t.Helper()
	db, err := OpenReadOnly(path)
	if err != nil {
		t.Fatalf("OpenReadOnly(%s) = %v", path, err)
	}
	defer db.Close()
	runs, err := db.Runs(context.Background(), Filter{})
	if err != nil {
		t.Fatalf("Runs of %s: %v", path, err)
	}
	return len(runs)
}

func names(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

func TestOpenReadOnlyCreatesNothing(t *testing.T) {
	dir := t.TempDir()
	for _, path := range []string{filepath.Join(dir, "typo.db"), filepath.Join(dir, "no", "such", "dir.db")} {
		db, err := OpenReadOnly(path)
		if err == nil {
			db.Close()
			t.Fatalf("OpenReadOnly(%s) opened an archive that does not exist", path)
		}
		if !errors.Is(err, ErrNoArchive) || err.Error() != "no archive at "+path {
			t.Errorf("OpenReadOnly(%s) = %q, want ErrNoArchive: \"no archive at %s\"", path, err, path)
		}
	}
	if got := names(t, dir); len(got) != 0 {
		t.Errorf("OpenReadOnly left %q behind", got)
	}
	if _, err := OpenReadOnly(dir); err == nil || !strings.Contains(err.Error(), dir+" is a directory") {
		t.Errorf("OpenReadOnly(a directory) = %v", err)
	}
}

func TestOpenReadOnlyReadsAndNeverWrites(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.db")
	archiveAt(t, path)
	ctx := context.Background()

	db, err := OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	if runs, err := db.Runs(ctx, Filter{}); err != nil || len(runs) != 1 {
		t.Errorf("Runs = %d run(s), %v; want 1", len(runs), err)
	}
	if !db.ReadOnly() {
		t.Error("ReadOnly() = false for an archive opened read-only")
	}
	if _, err := db.Ingest(ctx, "g.json", []*results.Bundle{osuBundle("c", "tcp", "2", 2)}); err == nil {
		t.Error("an archive opened read-only took a new run")
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if got := names(t, dir); !slices.Equal(got, []string{"a.db"}) {
		t.Errorf("reading left %q in the directory, want only a.db", got)
	}

	// It reads what a writer has committed and not yet checkpointed.
	w := openAt(t, path)
	ingest(t, w, "g.json", osuBundle("c", "tcp", "2", 2))
	if n := readOnlyRuns(t, path); n != 2 {
		t.Errorf("while a writer is open: Runs = %d run(s); want 2", n)
	}
}

func TestOpenReadOnlyMigratesAWritableArchive(t *testing.T) {
	// Today's behaviour for every command, kept for reading ones: an
	// archive this sbench can write is brought up to date.
	path := filepath.Join(t.TempDir(), "old.db")
	olderArchiveAt(t, path)
	db, err := OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if v, _ := db.SchemaVersion(context.Background()); v != LatestSchemaVersion() {
		t.Errorf("schema version %d, want %d", v, LatestSchemaVersion())
	}
}

func TestOpenReadOnlyRefusesWhatOpenRefuses(t *testing.T) {
	dir := t.TempDir()
	newer := filepath.Join(dir, "newer.db")
	archiveWithVersion(t, newer, 99)
	var ne *NewerSchemaError
	if _, err := OpenReadOnly(newer); !errors.As(err, &ne) || ne.Version != 99 {
		t.Errorf("newer schema: %v, want a NewerSchemaError", err)
	}
	text := filepath.Join(dir, "notes.txt")
	os.WriteFile(text, []byte(strings.Repeat("not a database\n", 100)), 0o644)
	if _, err := OpenReadOnly(text); err == nil || !strings.Contains(err.Error(), text) || !strings.Contains(err.Error(), "not a database") {
		t.Errorf("text file: %v", err)
	}
	// An empty file is an empty archive, as for Open.
	empty := filepath.Join(dir, "empty.db")
	os.WriteFile(empty, nil, 0o644)
	if n := readOnlyRuns(t, empty); n != 0 {
		t.Errorf("empty file: %d run(s)", n)
	}
}

// TestReadOnlyArchive is item 12: on a read-only mount SQLite said "unable
// to open database file: no such file or directory" about a file that is
// there, and nothing could read it.
func TestReadOnlyArchive(t *testing.T) {
	dir, freeze := testenv.ReadOnlyDir(t)
	path := filepath.Join(dir, "a.db")
	archiveAt(t, path)
	oldPath := filepath.Join(dir, "old.db")
	olderArchiveAt(t, oldPath)
	// A writer that stopped without checkpointing (a crash, a node that
	// went down) leaves its log: copied with and without the -shm index
	// SQLite needs to read it.
	w, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.w.Exec("PRAGMA wal_autocheckpoint = 0"); err != nil {
		t.Fatal(err)
	}
	ingest(t, w, "g.json", osuBundle("c", "tcp", "2", 2))
	for _, sub := range []string{"withshm", "noshm"} {
		os.Mkdir(filepath.Join(dir, sub), 0o755)
		suffixes := []string{"", "-wal", "-shm"}
		if sub == "noshm" {
			suffixes = suffixes[:2]
		}
		for _, s := range suffixes {
			data, err := os.ReadFile(path + s)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, sub, "a.db"+s), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	w.Close()
	reason := freeze()

	t.Run("writing says it is read-only", func(t *testing.T) {
		_, err := Open(path)
		var ro *ReadOnlyError
		if !errors.As(err, &ro) {
			t.Fatalf("Open = %v, want a ReadOnlyError", err)
		}
		if want := "archive " + path + " is read-only (" + reason + ")"; err.Error() != want {
			t.Errorf("Open = %q\nwant   %q", err, want)
		}
	})
	t.Run("reading works", func(t *testing.T) {
		if n := readOnlyRuns(t, path); n != 2 {
			t.Errorf("Runs = %d run(s); want 2", n)
		}
	})
	t.Run("an older schema cannot be migrated", func(t *testing.T) {
		_, err := OpenReadOnly(oldPath)
		var ro *ReadOnlyError
		if !errors.As(err, &ro) || !ro.Migrate || ro.Version != LatestSchemaVersion()-1 {
			t.Fatalf("OpenReadOnly = %v, want a ReadOnlyError with the old version", err)
		}
		for _, want := range []string{oldPath, "read-only (" + reason + ")", fmt.Sprintf("schema version %d", LatestSchemaVersion()-1), fmt.Sprintf("this sbench's %d", LatestSchemaVersion()), "cannot be migrated"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q lacks %q", err, want)
			}
		}
	})
	t.Run("a left-over log is read", func(t *testing.T) {
		if n := readOnlyRuns(t, filepath.Join(dir, "withshm", "a.db")); n != 2 {
			t.Errorf("Runs = %d run(s); want 2 (one only in the log)", n)
		}
	})
	t.Run("a left-over log that cannot be read is not ignored", func(t *testing.T) {
		p := filepath.Join(dir, "noshm", "a.db")
		_, err := OpenReadOnly(p)
		var ro *ReadOnlyError
		if !errors.As(err, &ro) || !strings.Contains(err.Error(), p+"-wal") {
			t.Fatalf("OpenReadOnly = %v, want a ReadOnlyError naming the log", err)
		}
	})
}

func TestWhyReadOnly(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.db")
	os.WriteFile(path, nil, 0o644)
	os.WriteFile(path+"-shm", nil, 0o644)
	defer func(f func(string) error) { accessW = f }(accessW)
	for _, tt := range []struct {
		name string
		errs map[string]error // access(W_OK) per path; nil for writable
		want string
	}{
		{"writable", nil, ""},
		{"read-only mount", map[string]error{path: unix.EROFS, dir: unix.EROFS}, "read-only file system"},
		{"file mode", map[string]error{path: unix.EACCES}, "no write permission"},
		{"directory mode", map[string]error{dir: unix.EACCES}, "no write permission on its directory " + dir + ", where SQLite keeps its -wal and -shm files"},
		{"index file", map[string]error{path + "-shm": unix.EPERM}, "no write permission on " + path + "-shm"},
		{"something else", map[string]error{path: unix.EIO}, ""},
	} {
		accessW = func(p string) error { return tt.errs[p] }
		if got := whyReadOnly(path); got != tt.want {
			t.Errorf("%s: whyReadOnly = %q, want %q", tt.name, got, tt.want)
		}
	}
	// The directory matters only while SQLite has files to create there.
	os.WriteFile(path+"-wal", nil, 0o644)
	accessW = func(p string) error {
		if p == dir {
			return unix.EACCES
		}
		return nil
	}
	if got := whyReadOnly(path); got != "" {
		t.Errorf("with -wal and -shm present: whyReadOnly = %q, want \"\"", got)
	}
}
