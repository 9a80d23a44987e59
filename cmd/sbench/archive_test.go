package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestArchiveExportImport(t *testing.T) {
	src := acceptanceArchive(t)
	dir := t.TempDir()
	gz := filepath.Join(dir, "runs.sbench.gz")
	_, stderr := mustSbench(t, 0, "archive", "export", "--db", src, "--label", "run=b", "-o", gz)
	if stderr != "exported 1 run(s)\n" {
		t.Errorf("export: %q", stderr)
	}
	dst := filepath.Join(dir, "dst.db")
	out, _ := mustSbench(t, 0, "archive", "import", "--db", dst, gz)
	if out != gz+": 1 run(s) added, 0 already archived\n" {
		t.Errorf("import: %q", out)
	}
	out, _ = mustSbench(t, 0, "archive", "import", "--db", dst, gz)
	if out != gz+": 0 run(s) added, 1 already archived\n" {
		t.Errorf("import again: %q", out)
	}
	// The imported run carries its labels and where it came from.
	out, _ = mustSbench(t, 0, "runs", "--db", dst)
	if !strings.Contains(out, "run=b") || !strings.Contains(out, "slow.txt") {
		t.Errorf("imported run:\n%s", out)
	}
	// Through a pipe, plain.
	plain, _ := mustSbench(t, 0, "archive", "export", "--db", src)
	if !strings.HasPrefix(plain, `{"schema":"sbench.archive/v1","runs":3}`) {
		t.Errorf("export to stdout: %.100s", plain)
	}
	var outb, errb strings.Builder
	err := run(t.Context(), []string{"archive", "import", "--db", dst, "-"}, strings.NewReader(plain), &outb, &errb)
	if err != nil || outb.String() != "-: 2 run(s) added, 1 already archived\n" {
		t.Errorf("import -: %v, %q %q", err, outb.String(), errb.String())
	}
	// Then the two archives compare alike.
	mustSbench(t, 0, "compare", "--db", dst, "run=a", "run=a2")
	mustSbench(t, 1, "compare", "--db", dst, "run=a", "run=b")
}

func TestArchiveImportBadFile(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.sbench")
	os.WriteFile(bad, []byte("{\"schema\":\"sbench.archive/v1\",\"runs\":2}\n{}\n"), 0o644)
	db := filepath.Join(dir, "a.db")
	_, stderr := mustSbench(t, 2, "archive", "import", "--db", db, bad)
	if !strings.Contains(stderr, "bad.sbench: line 2: no bundle") || !strings.Contains(stderr, "1 of 1 file(s) failed") {
		t.Errorf("stderr %q", stderr)
	}
	_, stderr = mustSbench(t, 2, "archive", "import", "--db", db, filepath.Join(dir, "missing"))
	if !strings.Contains(stderr, "no such file") {
		t.Errorf("missing file: %q", stderr)
	}
}

func TestExportBenchfmt(t *testing.T) {
	db := acceptanceArchive(t)
	out, _ := mustSbench(t, 0, "export", "--db", db, "--format", "benchfmt", "--label", "run=a")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if lines[0] != "Unit MB/s better=higher" || lines[1] != "status: ok" || lines[2] != "run: a" ||
		lines[3] != "BenchmarkOsu_bw/metric=bandwidth/size=1 1 4.64 MB/s" || len(lines) != 3+23 {
		t.Errorf("benchfmt export:\n%s", out)
	}
}

// TestArchiveBaselinesTravel: a baseline goes with its runs to another
// archive, where compare baseline:NAME works as it did at home; one that
// would lose runs stays, and export says so.
func TestArchiveBaselinesTravel(t *testing.T) {
	src := acceptanceArchive(t)
	dir := t.TempDir()
	mustSbench(t, 0, "baseline", "set", "--db", src, "before", "run=a")
	mustSbench(t, 0, "baseline", "set", "--db", src, "all", "run:1-3")
	gz := filepath.Join(dir, "a.sbench.gz")
	_, stderr := mustSbench(t, 0, "archive", "export", "--db", src, "--label", "run=a", "-o", gz)
	if !strings.Contains(stderr, "exported 1 run(s) and 1 baseline(s) (before)") ||
		!strings.Contains(stderr, "baseline all: 2 of its 3 runs are not exported: left out") {
		t.Errorf("export: %q", stderr)
	}
	dst := filepath.Join(dir, "dst.db")
	out, _ := mustSbench(t, 0, "archive", "import", "--db", dst, gz)
	if !strings.Contains(out, "baselines set: before, already here: none") {
		t.Errorf("import: %q", out)
	}
	out, _ = mustSbench(t, 0, "baseline", "list", "--db", dst)
	if !strings.Contains(out, "before") || strings.Contains(out, "all") {
		t.Errorf("baselines after import:\n%s", out)
	}
	mustSbench(t, 0, "archive", "import", "--db", dst, mustExport(t, src, filepath.Join(dir, "b.sbench")))
	mustSbench(t, 1, "compare", "--db", dst, "baseline:before", "run=b")
}

func mustExport(t *testing.T, db, path string) string {
	t.Helper()
	mustSbench(t, 0, "archive", "export", "--db", db, "--label", "run=b", "-o", path)
	return path
}
