package main

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/sbench/sbench/internal/testenv"
	"github.com/sbench/sbench/store"
)

// TestReadOnlyArchiveCLI is item 12: every command said "unable to open
// database file: no such file or directory" about an archive on a
// read-only mount. Reading commands must work there; writing ones must say
// what is true.
func TestReadOnlyArchiveCLI(t *testing.T) {
	dir, freeze := testenv.ReadOnlyDir(t)
	db := filepath.Join(dir, "a.db")
	if _, stderr, code := sbench(t, "ingest", "--db", db,
		fixture(t, "002-osu_bw-v5.9-cent063-to-cent064.txt"), fixture(t, "002-osu_bw-v5.9-cent064-to-cent063.txt")); code != 0 {
		t.Fatalf("ingest: %s", stderr)
	}
	if _, stderr, code := sbench(t, "baseline", "set", "--db", db, "before", "run:1"); code != 0 {
		t.Fatalf("baseline set: %s", stderr)
	}
	// An archive of the sbench before this one.
	old := filepath.Join(dir, "old.db")
	if _, stderr, code := sbench(t, "ingest", "--db", old, fixture(t, "003-osu_latency-v7.5-2node.txt")); code != 0 {
		t.Fatalf("ingest: %s", stderr)
	}
	raw, err := sql.Open("sqlite3", old)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec("PRAGMA user_version = " + strconv.Itoa(store.LatestSchemaVersion()-1)); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	reason := freeze()
	out := t.TempDir()

	for _, tt := range []struct {
		args []string
		code int // compare finds the two directions of the link differ
	}{
		{[]string{"runs"}, 0},
		{[]string{"runs", "--json"}, 0},
		{[]string{"export", "--format", "csv"}, 0},
		{[]string{"export", "--format", "benchfmt"}, 0},
		{[]string{"report", "-o", filepath.Join(out, "r.pdf")}, 0},
		{[]string{"report", "-o", filepath.Join(out, "r.html")}, 0},
		{[]string{"site", "-o", filepath.Join(out, "site")}, 0},
		{[]string{"compare", "--threshold-only", "run:1", "run:2"}, exitGate},
		{[]string{"history", "--benchmark", "osu_bw", "--x", "1024"}, 0},
		{[]string{"baseline", "list"}, 0},
		{[]string{"archive", "export"}, 0},
		{[]string{"prune", "--run", "1"}, 0},
	} {
		stdout, stderr, code := sbench(t, append(tt.args, "--db", db)...)
		if code != tt.code || stdout == "" {
			t.Errorf("sbench %s on a read-only archive: exit %d, stdout %d bytes\n%s", strings.Join(tt.args, " "), code, len(stdout), stderr)
		}
	}
	if _, stderr, code := sbench(t, "archive", "export", "-o", filepath.Join(out, "a.sbench"), "--db", db); code != 0 {
		t.Errorf("archive export -o on a read-only archive: exit %d\n%s", code, stderr)
	}

	readOnly := "sbench: archive " + db + " is read-only (" + reason + ")"
	for _, args := range [][]string{
		{"ingest", fixture(t, "003-osu_latency-v7.5-2node.txt")},
		{"baseline", "set", "after", "run:2"},
		{"baseline", "rm", "before"},
		{"prune", "--run", "1", "--yes"},
		{"archive", "import", filepath.Join(out, "a.sbench")},
		{"status"},
	} {
		_, stderr, code := sbench(t, append(args, "--db", db)...)
		if code != exitFailed || !strings.HasPrefix(stderr, readOnly) || strings.Count(stderr, "archive") > 2 {
			t.Errorf("sbench %s on a read-only archive: exit %d, stderr %q\nwant exit 3 and %q", strings.Join(args, " "), code, stderr, readOnly)
		}
	}

	_, stderr, code := sbench(t, "runs", "--db", old)
	for _, want := range []string{"archive " + old + " is read-only (" + reason + ")", fmt.Sprintf("schema version %d, older than this sbench's %d", store.LatestSchemaVersion()-1, store.LatestSchemaVersion()), "cannot be migrated"} {
		if code != exitFailed || !strings.Contains(stderr, want) {
			t.Errorf("runs on a read-only archive of an older sbench: exit %d, stderr %q; want exit 3 and %q", code, stderr, want)
		}
	}
}

// TestReadingCommandsNeverCreateAnArchive: a mistyped --db used to leave
// an empty archive behind and show nothing, as if it held no runs.
func TestReadingCommandsNeverCreateAnArchive(t *testing.T) {
	dir := t.TempDir()
	typo := filepath.Join(dir, "sbnech.db")
	for _, args := range [][]string{
		{"runs"},
		{"export"},
		{"report", "-o", filepath.Join(dir, "r.pdf")},
		{"site", "-o", filepath.Join(dir, "site")},
		{"compare", "run:1", "run:2"},
		{"history", "--benchmark", "osu_bw"},
		{"baseline", "list"},
		{"archive", "export"},
		{"prune", "--campaign", "x"},
		// prune --yes deletes, and has nothing to delete in an archive
		// that does not exist: it must not create one either.
		{"prune", "--campaign", "x", "--yes"},
	} {
		_, stderr, code := sbench(t, append(args, "--db", typo)...)
		if code != exitUsage || !strings.HasPrefix(stderr, "sbench: no archive at "+typo) ||
			!strings.Contains(stderr, "$SBENCH_DB") || !strings.Contains(stderr, "--db") || !strings.Contains(stderr, "sbench ingest") {
			t.Errorf("sbench %s --db TYPO: exit %d, stderr %q; want exit 2 and \"no archive at %s\" with the way to name or create one",
				strings.Join(args, " "), code, stderr, typo)
		}
		if _, err := os.Stat(typo); err == nil {
			t.Fatalf("sbench %s created %s", strings.Join(args, " "), typo)
		}
	}
	// Writing commands still create it.
	if _, stderr, code := sbench(t, "ingest", "--db", typo, fixture(t, "003-osu_latency-v7.5-2node.txt")); code != 0 {
		t.Fatalf("ingest into a new archive: %s", stderr)
	}
}
