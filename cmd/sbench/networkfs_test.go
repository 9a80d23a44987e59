package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sbench/sbench/internal/testenv"
)

// TestArchiveOnFUSECLI: an archive on a FUSE mount (bindfs), as a network
// file system is to sbench, takes a rollback journal, and every command
// that writes or reads it works there; one made in WAL mode elsewhere and
// brought there is switched the first time a command opens it. No -wal
// or -shm file is ever left beside either.
func TestArchiveOnFUSECLI(t *testing.T) {
	mnt, src := testenv.FUSEDir(t)
	db := filepath.Join(mnt, "sbench.db")
	if _, stderr, code := sbench(t, "ingest", "--db", db,
		fixture(t, "002-osu_bw-v5.9-cent063-to-cent064.txt"), fixture(t, "002-osu_bw-v5.9-cent064-to-cent063.txt")); code != 0 {
		t.Fatalf("ingest: %s", stderr)
	}
	if _, stderr, code := sbench(t, "baseline", "set", "--db", db, "before", "run:1"); code != 0 {
		t.Fatalf("baseline set: %s", stderr)
	}
	out := t.TempDir()
	for _, tt := range []struct {
		args []string
		code int // compare finds the two directions of the link differ
	}{
		{[]string{"runs"}, 0},
		{[]string{"export", "--format", "csv"}, 0},
		{[]string{"report", "-o", filepath.Join(out, "r.pdf")}, 0},
		{[]string{"report", "-o", filepath.Join(out, "r.html")}, 0},
		{[]string{"compare", "--threshold-only", "run:1", "run:2"}, exitGate},
		{[]string{"history", "--benchmark", "osu_bw", "--x", "1024"}, 0},
		{[]string{"archive", "export", "-o", filepath.Join(out, "a.sbench")}, 0},
	} {
		_, stderr, code := sbench(t, append(tt.args, "--db", db)...)
		if code != tt.code {
			t.Errorf("sbench %s on FUSE: exit %d, want %d\n%s", strings.Join(tt.args, " "), code, tt.code, stderr)
		}
	}
	if _, stderr, code := sbench(t, "archive", "import", "--db", filepath.Join(mnt, "copy.db"), filepath.Join(out, "a.sbench")); code != 0 {
		t.Errorf("archive import on FUSE: %s", stderr)
	}

	// An archive of an sbench from before, in WAL mode, moved to the mount.
	legacy := filepath.Join(src, "legacy.db")
	if _, stderr, code := sbench(t, "ingest", "--db", legacy, fixture(t, "003-osu_latency-v7.5-2node.txt")); code != 0 {
		t.Fatalf("ingest on a local disk: %s", stderr)
	}
	if head := header(t, legacy); head[18] != 2 || head[19] != 2 {
		t.Fatalf("an archive on a local disk is not in WAL mode: header bytes 18, 19 = %d, %d", head[18], head[19])
	}
	stdout, stderr, code := sbench(t, "runs", "--db", filepath.Join(mnt, "legacy.db"))
	if code != 0 || !strings.Contains(stdout, "osu_latency") {
		t.Errorf("runs of the WAL archive on FUSE: exit %d\n%s%s", code, stdout, stderr)
	}
	if head := header(t, legacy); head[18] != 1 || head[19] != 1 {
		t.Errorf("the archive on FUSE is still in WAL mode: header bytes 18, 19 = %d, %d", head[18], head[19])
	}

	for _, dir := range []string{mnt, src} {
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if strings.HasSuffix(e.Name(), "-wal") || strings.HasSuffix(e.Name(), "-shm") {
				t.Errorf("%s left in %s", e.Name(), dir)
			}
		}
	}
}

// header is the first 100 bytes of the SQLite file at path.
func header(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil || len(data) < 100 {
		t.Fatalf("read %s: %d bytes, %v", path, len(data), err)
	}
	return data[:100]
}
