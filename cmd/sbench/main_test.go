package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/sbench/sbench/internal/testenv"
	"github.com/sbench/sbench/results"
	"github.com/sbench/sbench/store"
)

// sbench runs the CLI in-process and returns its stdout, stderr and exit status.
func sbench(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return testenv.CLI(context.Background(), run, exitCode, args...)
}

// buildBinaries builds sbench-runner (static, as shipped) once per test run,
// and puts its directory first in PATH so that sbench local finds it. It
// returns that directory.
func buildBinaries(t *testing.T) string {
	t.Helper()
	binDir := filepath.Dir(testenv.Build(t, "../sbench-runner"))
	t.Setenv("PATH", binDir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return binDir
}

// endToEndDir skips the test under -short (it runs what), builds the
// binaries and makes a fresh directory the current one, which it returns.
func endToEndDir(t *testing.T, what string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end: " + what)
	}
	buildBinaries(t)
	dir := t.TempDir()
	t.Chdir(dir)
	return dir
}

func TestMain(m *testing.M) {
	code := m.Run()
	testenv.RemoveBuilt()
	os.Exit(code)
}

func TestUsageErrorsExitTwo(t *testing.T) {
	for _, args := range [][]string{
		{"nope"},
		{"render"},
		{"render", "../../examples/quickstart.toml"},
		{"export", "--format", "xml", "--db", filepath.Join(t.TempDir(), "x.db")},
		{"local", "--bogus"},
		{"validate", "/does/not/exist.toml"},
	} {
		_, stderr, code := sbench(t, args...)
		if code != exitUsage {
			t.Errorf("sbench %q: exit %d, want %d (stderr %q)", args, code, exitUsage, stderr)
		}
		if !strings.HasPrefix(stderr, "sbench: ") || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
			t.Errorf("sbench %q: stderr %q is not one 'sbench: …' line", args, stderr)
		}
	}
}

// usageErrors are command lines that must fail as bad usage, each with what
// its error must say.
type usageErrors []struct {
	args []string
	want string
}

// check runs sbench with each case's args between cmd and after, and wants
// exit status 2 and one "sbench: " error holding the case's want.
func (u usageErrors) check(t *testing.T, cmd []string, after ...string) {
	t.Helper()
	for _, c := range u {
		args := slices.Concat(cmd, c.args, after)
		_, stderr, code := sbench(t, args...)
		if code != exitUsage || !strings.Contains(stderr, c.want) || !strings.HasPrefix(stderr, "sbench: ") {
			t.Errorf("sbench %q: exit %d, stderr %q; want %d and %q", args, code, stderr, exitUsage, c.want)
		}
	}
}

func TestEveryCommandHasHelpWithExamples(t *testing.T) {
	root := newRootCmd(&env{})
	for _, c := range root.Commands() {
		if c.Name() == "help" || c.Name() == "completion" {
			continue
		}
		if c.Example == "" {
			t.Errorf("sbench %s --help has no examples", c.Name())
		}
		if !strings.Contains(c.Long, "Exit status") {
			t.Errorf("sbench %s --help does not list exit statuses", c.Name())
		}
	}
}

func TestBadCampaignNamesFileAndLine(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.toml")
	os.WriteFile(bad, []byte("[campaign]\nname = \"x\"\n[slurm]\nnodez = 2\n[[benchmark]]\nname = \"l\"\nkernel = \"latency\"\n"), 0o644)
	out := filepath.Join(dir, "out")
	_, stderr, code := sbench(t, "render", bad, "-o", out)
	if code != exitUsage || !strings.Contains(stderr, "bad.toml:4:1: slurm.nodez: unknown key") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("render wrote output for a bad campaign")
	}
}

func TestRenderCLI(t *testing.T) {
	dir := t.TempDir()
	stdout, stderr, code := sbench(t, "render", "../../examples/quickstart.toml", "-o", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	paths := strings.Fields(stdout)
	if len(paths) != 1 {
		t.Fatalf("render printed %q, want one script (steps mode packs both variants)", stdout)
	}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"#SBATCH --nodes=2", "srun ", "sbench-runner run --campaign quickstart"} {
			if !strings.Contains(string(data), want) {
				t.Errorf("%s lacks %q", p, want)
			}
		}
	}
}

// TestLocalEndToEnd is the walking skeleton without Slurm: quickstart through
// real runner processes, into SQLite, out as CSV and PDF.
func TestLocalEndToEnd(t *testing.T) {
	root := repoRoot(t)
	dir := endToEndDir(t, "runs the quickstart campaign")
	db := filepath.Join(dir, "a.db")
	stdout, stderr, code := sbench(t, "local", filepath.Join(root, "examples/quickstart.toml"), "--db", db)
	if code != 0 {
		t.Fatalf("local: exit %d\n%s\n%s", code, stdout, stderr)
	}
	rows := exportRows(t, db)
	if len(rows) == 0 {
		t.Fatal("export: no rows")
	}
	for _, h := range []string{"run", "benchmark", "metric", "unit", "x", "value", "status"} {
		if _, ok := rows[0][h]; !ok {
			t.Fatalf("CSV row %v lacks column %q", rows[0], h)
		}
	}
	// variant -> metric -> sizes seen
	seen := map[string]map[string]int{}
	for _, r := range rows {
		v := r["variant"]
		if seen[v] == nil {
			seen[v] = map[string]int{}
		}
		m := r["metric"]
		seen[v][m]++
		val, err := strconv.ParseFloat(r["value"], 64)
		if err != nil || val <= 0 {
			t.Errorf("row %v: value %q is not a positive number", r, r["value"])
		}
		if r["status"] != "ok" {
			t.Errorf("row %v: status %q", r, r["status"])
		}
		switch {
		case strings.Contains(m, "latency") && r["unit"] != "us",
			strings.Contains(m, "bandwidth") && r["unit"] != "MB/s":
			t.Errorf("row %v: unit %q", r, r["unit"])
		}
	}
	for _, v := range []string{"ntasks_per_node=1", "ntasks_per_node=2"} {
		if seen[v]["latency"] != 23 || seen[v]["bandwidth"] != 23 {
			t.Errorf("variant %s: %v, want 23 latency and 23 bandwidth points (1 B … 4 MiB)", v, seen[v])
		}
	}
	// Ingesting the same bundles again adds nothing.
	stdout, _, code = sbench(t, "ingest", "--db", db, "sbench-runs/quickstart")
	if code != 0 || !strings.HasPrefix(stdout, "0 run(s) added, 4 already archived") {
		t.Errorf("re-ingest: exit %d, %q", code, stdout)
	}
	pdf := filepath.Join(dir, "r.pdf")
	stdout, stderr, code = sbench(t, "report", "--db", db, "-o", pdf)
	if code != 0 {
		t.Fatalf("report: %s", stderr)
	}
	checkPDF(t, pdf, []string{"bandwidth", "latency", "ntasks_per_node=1", "ntasks_per_node=2"})
	// The fake nodes' traffic never left this machine, whatever its
	// interfaces' rates; one run of each variant tells no factor; the
	// latency quoted is the median of the kernel's iterations (its p50,
	// which the report reads from the archive).
	for _, want := range []string{"The traffic stayed on one machine (loopback): no link rate applies.",
		"µs median latency", "with 1 run each no factor is claimed: their spread is unknown"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("report's verdict lacks %q:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout, "% of the") {
		t.Errorf("report's verdict quotes a link rate:\n%s", stdout)
	}
}

// newArchive creates the archive name in a fresh directory and returns its
// path and the archive, open; the caller closes it.
func newArchive(t *testing.T, name string) (string, *store.DB) {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	db, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	return path, db
}

// mustIngest archives bundles as read from source.
func mustIngest(t *testing.T, db *store.DB, source string, bundles ...*results.Bundle) {
	t.Helper()
	if _, err := db.Ingest(context.Background(), source, bundles); err != nil {
		t.Fatal(err)
	}
}

// storedRuns returns the runs flt selects in the archive at dbPath.
func storedRuns(t *testing.T, dbPath string, flt store.Filter) []store.Run {
	t.Helper()
	db, err := store.OpenReadOnly(dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	runs, err := db.Runs(context.Background(), flt)
	if err != nil {
		t.Fatal(err)
	}
	return runs
}

// storedSamples reads the samples of the runs flt selects from the archive
// at dbPath.
func storedSamples(t *testing.T, dbPath string, flt store.Filter) []store.Sample {
	t.Helper()
	db, err := store.OpenReadOnly(dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ss, err := db.Samples(context.Background(), flt)
	if err != nil {
		t.Fatal(err)
	}
	return ss
}

func repoRoot(t *testing.T) string {
	t.Helper()
	wd, _ := os.Getwd()
	for d := wd; d != "/"; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
	}
	t.Fatal("no go.mod above the test")
	return ""
}

// checkPDF checks a PDF has at least two pages and that its text holds each
// word; it needs poppler-utils.
func checkPDF(t *testing.T, path string, words []string) {
	t.Helper()
	testenv.LookPath(t, "pdftotext", "poppler-utils")
	info, err := exec.Command("pdfinfo", path).Output()
	if err != nil {
		t.Fatalf("pdfinfo: %v", err)
	}
	pages := 0
	for _, l := range strings.Split(string(info), "\n") {
		if f := strings.Fields(l); len(f) == 2 && f[0] == "Pages:" {
			pages, _ = strconv.Atoi(f[1])
		}
	}
	if pages < 2 {
		t.Errorf("%s has %d page(s), want ≥ 2", path, pages)
	}
	text, err := exec.Command("pdftotext", path, "-").Output()
	if err != nil {
		t.Fatalf("pdftotext: %v", err)
	}
	for _, w := range words {
		if !strings.Contains(strings.ToLower(string(text)), strings.ToLower(w)) {
			t.Errorf("report text lacks %q", w)
		}
	}
}

// TestDBFlagShowsOneDefault: --db's help says its default once, the rule
// ($SBENCH_DB, else ./sbench.db), not also the value of whoever asks.
func TestDBFlagShowsOneDefault(t *testing.T) {
	for _, env := range []string{"", "/somewhere/else.db"} {
		t.Setenv("SBENCH_DB", env)
		out, _ := mustSbench(t, 0, "runs", "--help")
		var line string
		for _, l := range strings.Split(out, "\n") {
			if strings.Contains(l, "--db ") {
				line = l
			}
		}
		if strings.Count(line, "default") != 1 || !strings.Contains(line, "$SBENCH_DB, else ./sbench.db") {
			t.Errorf("SBENCH_DB=%q: --db help %q, want one default, the rule", env, line)
		}
	}
}
