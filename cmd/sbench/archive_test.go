package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sbench/sbench/results"
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
	// Then the two archives compare alike (one run a side: by the change
	// alone).
	mustSbench(t, 0, "compare", "--db", dst, "--threshold-only", "run=a", "run=a2")
	mustSbench(t, 1, "compare", "--db", dst, "--threshold-only", "run=a", "run=b")
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
	// golang.org/x/perf's writer ends a block of configuration lines with
	// a blank one.
	lines := slices.DeleteFunc(strings.Split(strings.TrimSpace(out), "\n"), func(l string) bool { return l == "" })
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
	mustSbench(t, 1, "compare", "--db", dst, "--threshold-only", "baseline:before", "run=b")
}

func mustExport(t *testing.T, db, path string) string {
	t.Helper()
	mustSbench(t, 0, "archive", "export", "--db", db, "--label", "run=b", "-o", path)
	return path
}

// TestArchiveImportRefusesCutFiles: an archive file cut short or
// corrupted after more runs than an import stores at a time — gzipped or
// plain, mid-line — is refused whole: the archive keeps the runs it had
// and none of the file's, and the error names the file.
func TestArchiveImportRefusesCutFiles(t *testing.T) {
	dir := t.TempDir()
	const n = 600 // more than two of the importer's batches
	src := manyRuns(t, n, 6)
	plain, gz := filepath.Join(dir, "all.sbench"), filepath.Join(dir, "all.sbench.gz")
	mustSbench(t, 0, "archive", "export", "--db", src, "-o", plain)
	mustSbench(t, 0, "archive", "export", "--db", src, "-o", gz)
	plainData, _ := os.ReadFile(plain)
	gzData, _ := os.ReadFile(gz)
	// Past the first two batches: those were stored before the cut shows.
	cut := bytes.Index(plainData, []byte(`"id":"1550"`))
	if cut < 0 {
		t.Fatal("the run of job 1550 is not in the export")
	}
	corrupt := slices.Clone(gzData)
	corrupt[len(corrupt)*3/4] ^= 0xff
	for _, c := range []struct {
		name string
		data []byte
	}{
		{"plain cut mid-line", plainData[:cut]},
		{"plain cut at a line's end", plainData[:bytes.LastIndexByte(plainData[:cut], '\n')+1]},
		{"gzip cut", gzData[:len(gzData)*3/4]},
		{"gzip without its trailer", gzData[:len(gzData)-4]},
		{"gzip corrupt", corrupt},
	} {
		t.Run(c.name, func(t *testing.T) {
			db := twoSystems(t)
			path := filepath.Join(t.TempDir(), "cut.sbench")
			os.WriteFile(path, c.data, 0o644)
			_, stderr := mustSbench(t, 2, "archive", "import", "--db", db, path)
			if !strings.Contains(stderr, "cut.sbench") {
				t.Errorf("the error does not name the file: %s", stderr)
			}
			if out, _ := mustSbench(t, 0, "runs", "--db", db, "--json"); strings.Count(out, `"id":`) != 4 {
				t.Errorf("after a refused import the archive has %d runs, want its 4:\n%.300s", strings.Count(out, `"id":`), out)
			}
		})
	}
	// The whole file goes in.
	db := twoSystems(t)
	if out, _ := mustSbench(t, 0, "archive", "import", "--db", db, gz); !strings.Contains(out, fmt.Sprint(n)) {
		t.Errorf("import of the whole file: %s", out)
	}
}

// manyRuns is a new archive of n osu_bw runs (one job each, of four
// configurations) of points message sizes each.
func manyRuns(t *testing.T, n, points int) string {
	t.Helper()
	dir := t.TempDir()
	bundles := filepath.Join(dir, "bundles")
	os.Mkdir(bundles, 0o755)
	for i := range n {
		b := results.New()
		b.Campaign, b.Variant = "nightly", fmt.Sprintf("v%d", i%4)
		b.Job = results.Job{ID: fmt.Sprint(1000 + i), Step: "0", Nodes: []string{"n01", "n02"}, Tasks: 2}
		b.Start = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Hour)
		b.End = b.Start.Add(time.Minute)
		b.Benchmark = results.Benchmark{Name: "osu_bw", Kind: "tool", Tool: "osu_bw"}
		for p := range points {
			x := float64(int64(1) << (p % 23))
			b.Samples = append(b.Samples, results.Sample{Metric: "bandwidth", Unit: results.UnitMBps, X: results.F(x), XUnit: results.UnitBytes,
				Value: 12000*x/(x+8192) + float64(i%7)})
		}
		if err := results.WriteFile(filepath.Join(bundles, fmt.Sprintf("%04d.json", i)), b); err != nil {
			t.Fatal(err)
		}
	}
	db := filepath.Join(dir, "src.db")
	mustSbench(t, 0, "ingest", "--db", db, bundles)
	return db
}

// TestArchiveExpectationsTravel: the expectations sbench local recorded
// go with the campaign's runs, so that check campaign:NAME on the other
// archive gives the verdicts it gives at home; imported again they are
// known, and --json names them.
func TestArchiveExpectationsTravel(t *testing.T) {
	dir := endToEndDir(t, "runs a campaign, moves it to another archive and checks it there")
	db := filepath.Join(dir, "a.db")
	os.WriteFile("accept.toml", []byte(checkCampaign), 0o644)
	if _, errOut, code := sbench(t, "local", "accept.toml", "--db", db); code != 0 {
		t.Fatalf("local: exit %d\n%s", code, errOut)
	}
	home, errOut, code := sbench(t, "check", "campaign:accept", "--db", db)
	if code != exitGate || !strings.Contains(home, "1 PASS, 1 FAIL, 1 NO DATA") {
		t.Fatalf("check at home: exit %d\n%s\n%s", code, home, errOut)
	}
	_, errOut = mustSbench(t, 0, "archive", "export", "--db", db, "--campaign", "accept", "-o", "accept.sbench.gz")
	if errOut != "exported 3 run(s) and 1 expectation set(s) (accept)\n" {
		t.Errorf("export: %q", errOut)
	}
	other := filepath.Join(dir, "other.db")
	out, _ := mustSbench(t, 0, "archive", "import", "--db", other, "accept.sbench.gz")
	if out != "accept.sbench.gz: 3 run(s) added, 0 already archived; expectation sets recorded: 1 (accept), already here: 0, kept as recorded here later: 0\n" {
		t.Errorf("import: %q", out)
	}
	there, errOut, code := sbench(t, "check", "campaign:accept", "--db", other)
	if code != exitGate || there != home {
		t.Errorf("check on the other archive: exit %d\n%s\n%s\nwant\n%s", code, there, errOut, home)
	}
	out, _ = mustSbench(t, 0, "archive", "import", "--db", other, "--json", "accept.sbench.gz")
	var again struct {
		Files []map[string]any `json:"files"`
	}
	if err := json.Unmarshal([]byte(out), &again); err != nil || len(again.Files) != 1 ||
		fmt.Sprint(again.Files[0]["expectations_known"]) != "[accept]" || again.Files[0]["expectations"] != nil {
		t.Errorf("import again --json: %v\n%s", err, out)
	}
}
