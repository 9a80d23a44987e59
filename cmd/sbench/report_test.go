package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// ingestAcceptance ingests the acceptance scenario into db: article 004's
// job output and article 000's two HPL runs, labelled by fabric.
func ingestAcceptance(t *testing.T, db string) {
	t.Helper()
	for _, args := range [][]string{
		{articleFixture(t, "004-erdma-vs-tcp-job11.out")},
		{"--label", "fabric=infiniband", articleFixture(t, "000-hpl-infiniband.txt")},
		{"--label", "fabric=100mbit", articleFixture(t, "000-hpl-100mbit.txt")},
	} {
		if _, stderr, code := sbench(t, append([]string{"ingest", "--db", db}, args...)...); code != 0 {
			t.Fatalf("ingest %v: %s", args, stderr)
		}
	}
}

// articleFixture is one of the articles' published outputs.
func articleFixture(t *testing.T, name string) string {
	t.Helper()
	p := filepath.Join(repoRoot(t), "examples", "articles", "testdata", name)
	if _, err := os.Stat(p); err != nil {
		t.Fatal(err)
	}
	return p
}

// The acceptance scenario: article 004's job output and article 000's two
// HPL runs, ingested with labels, make a report whose text holds the
// computed numbers; the verdict is printed too.
func TestReportArticles(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "a.db")
	ingestAcceptance(t, db)
	pdf := filepath.Join(dir, "r.pdf")
	figs := filepath.Join(dir, "figs")
	csvDir := filepath.Join(dir, "csv")
	stdout, stderr, code := sbench(t, "report", "--db", db, "-o", pdf, "--title", "eRDMA vs TCP",
		"--figures", figs, "--figure-format", "svg", "--csv", csvDir)
	if code != 0 {
		t.Fatalf("report: exit %d: %s", code, stderr)
	}
	for _, want := range []string{
		"wrote " + pdf + " (6 runs, 3 figures,",
		"osu_bw: erdma reached 6264.41 MB/s at 32 KiB",
		"osu_latency: at 1 B, erdma has 11.01 µs latency (1 run: no spread known), tcp 16.07 µs (1 run: no spread known); with 1 run each no factor is claimed: their spread is unknown.",
		"hpl: no valid result. Not results: infiniband 7.24 Gflops (FAILED 2 of 3 residual checks)",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	checkPDF(t, pdf, []string{"eRDMA vs TCP", "6264.41", "16.07", "7.240e+00", "7.24 Gflops", "FAILED", "INVALID",
		"Verdict", "Appendix: runs", "WR10R2C4"})
	for _, f := range []string{"figs/osu_bw-bandwidth.svg", "figs/osu_latency-latency.svg", "csv/summary.csv", "csv/osu_bw-bandwidth.csv"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("%s not written: %v", f, err)
		}
	}
	if _, err := exec.LookPath("pdfinfo"); err == nil {
		out, err := exec.Command("pdfinfo", pdf).Output()
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(out), "Pages:") || strings.Contains(string(out), "Pages:           1\n") {
			t.Errorf("pdfinfo:\n%s", out)
		}
	}

	// --label selects runs; --group-by names lines by a label.
	stdout, stderr, code = sbench(t, "report", "--db", db, "-o", pdf, "--label", "fabric=infiniband")
	if code != 0 || !strings.Contains(stdout, "(1 run, 0 figures") {
		t.Errorf("report --label: exit %d\n%s%s", code, stdout, stderr)
	}
	stdout, stderr, code = sbench(t, "report", "--db", db, "-o", pdf, "--group-by", "section", "--benchmark", "osu_bw", "--link-rate", "100Gbps")
	if code != 0 || !strings.Contains(stdout, "erdma reached 6264.41 MB/s at 32 KiB (1 run: no spread known; 50% of the 100 Gb/s link)") {
		t.Errorf("report --group-by --link-rate: exit %d\n%s%s", code, stdout, stderr)
	}
	// Runs ingested from files have no start time: a date range selects none.
	_, stderr, code = sbench(t, "report", "--db", db, "-o", pdf, "--since", "2020-01-01")
	if code != exitUsage || !strings.Contains(stderr, "do not say when they started") {
		t.Errorf("report --since: exit %d: %s", code, stderr)
	}
}

// -o report.html writes the same report as an HTML page, with the same
// verdict on stdout; --format html does so whatever the file is called.
func TestReportHTML(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "a.db")
	if _, stderr, code := sbench(t, "ingest", "--db", db, articleFixture(t, "004-erdma-vs-tcp-job11.out")); code != 0 {
		t.Fatalf("ingest: %s", stderr)
	}
	page := filepath.Join(dir, "r.html")
	stdout, stderr, code := sbench(t, "report", "--db", db, "-o", page, "--title", "eRDMA vs TCP")
	if code != 0 {
		t.Fatalf("report: exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "wrote "+page+" (4 runs, 3 figures,") || !strings.Contains(stdout, "osu_bw: erdma reached 6264.41 MB/s at 32 KiB") {
		t.Errorf("stdout:\n%s", stdout)
	}
	data, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<!DOCTYPE html>", "<title>eRDMA vs TCP</title>", "<h1>eRDMA vs TCP</h1>",
		"osu_bw: erdma reached 6264.41 MB/s at 32 KiB", `<svg class="sb-fig"`, "Appendix: runs", "# OSU MPI Bandwidth Test v7.5"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(string(data), "%PDF") {
		t.Error("the .html file is a PDF")
	}
	other := filepath.Join(dir, "report.out")
	if _, stderr, code := sbench(t, "report", "--db", db, "-o", other, "--format", "html"); code != 0 {
		t.Fatalf("report --format html: %s", stderr)
	}
	if b, _ := os.ReadFile(other); !strings.HasPrefix(string(b), "<!DOCTYPE html>") {
		t.Errorf("--format html wrote %.20q", b)
	}
	if _, stderr, code := sbench(t, "report", "--db", db, "-o", page, "--format", "pdf"); code != 0 {
		t.Fatalf("report --format pdf: %s", stderr)
	}
	if b, _ := os.ReadFile(page); !strings.HasPrefix(string(b), "%PDF") {
		t.Errorf("--format pdf wrote %.20q", b)
	}
}

func TestReportUsageErrors(t *testing.T) {
	db := filepath.Join(t.TempDir(), "empty.db")
	usageErrors{
		{nil, "-o FILE is required"},
		{[]string{"-o", "x.pdf", "--link-rate", "fast"}, "--link-rate"},
		{[]string{"-o", "x.pdf", "--figures", "d", "--figure-format", "bmp"}, "--figure-format"},
		{[]string{"-o", "x.pdf", "--since", "yesterday"}, "--since"},
		{[]string{"-o", "x.pdf", "--since", "2025-02-01", "--until", "2025-01-01"}, "is not after"},
		{[]string{"-o", "x.pdf", "--rpeak", "-3"}, "--rpeak"},
		{[]string{"-o", "x.pdf", "--label", "novalue"}, "KEY=VALUE"},
		{[]string{"-o", "x.pdf", "--format", "docx"}, "--format"},
	}.check(t, []string{"report"}, "--db", db)
}

// A font that cannot be read is a usage error that names the file; one
// that is not a TrueType font says which kind to give.
func TestReportFontErrors(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "a.db")
	if _, stderr, code := sbench(t, "ingest", "--db", db, articleFixture(t, "002-osu_bw-v5.9-cent063-to-cent064.txt")); code != 0 {
		t.Fatalf("ingest: %s", stderr)
	}
	_, stderr, code := sbench(t, "report", "--db", db, "-o", filepath.Join(dir, "r.pdf"), "--font", filepath.Join(dir, "none.ttf"))
	if code != 2 || !strings.Contains(stderr, "none.ttf") {
		t.Errorf("missing font: exit %d: %s", code, stderr)
	}
	ttc := filepath.Join(dir, "fonts.ttc")
	if err := os.WriteFile(ttc, []byte("ttcf\x00\x01\x00\x00"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code = sbench(t, "report", "--db", db, "-o", filepath.Join(dir, "r.pdf"), "--font", ttc)
	if code != 2 || !strings.Contains(stderr, "TrueType collection") {
		t.Errorf("a .ttc font: exit %d: %s", code, stderr)
	}
}
