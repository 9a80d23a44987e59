package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sbench/sbench/internal/testenv"
)

// checkCampaign is a quickstart-like campaign: the latency kernel between
// two local ranks, three repeats, and three expectations: one met (8 B
// under a second), one missed (1 KiB under a nanosecond), one at a size
// the kernel does not measure (NO DATA).
const checkCampaign = `
[campaign]
name = "accept"
repeats = 3

[slurm]
nodes = 1
ntasks_per_node = 2

[[benchmark]]
name = "latency"
kernel = "latency"
params = { sizes = "8,1024", iterations = 50, warmup = 5 }

[[expect]]
name = "small messages"
benchmark = "latency"
metric = "latency"
at = "8"
bound = "<= 1 s"

[[expect]]
benchmark = "latency"
metric = "latency"
at = "1KiB"
bound = "<= 1 ns"

[[expect]]
benchmark = "latency"
metric = "latency"
at = "2MiB"
bound = "<= 1 s"
`

// TestCheckAfterLocal: sbench local records the campaign's expectations,
// so sbench check campaign:NAME judges them with no file: the missed one
// FAILs (exit 1, named), the met one PASSes on the median of its three
// runs, the one nothing measured is NO DATA; --json has the same
// verdicts. A campaign file whose expectations all hold exits 0.
func TestCheckAfterLocal(t *testing.T) {
	dir := endToEndDir(t, "runs a campaign, then checks its expectations")
	db := filepath.Join(dir, "a.db")
	os.WriteFile("accept.toml", []byte(checkCampaign), 0o644)
	if _, errOut, code := sbench(t, "check", "campaign:accept", "--db", db); code != exitUsage || !strings.Contains(errOut, "no archive") {
		t.Fatalf("check before any run: exit %d\n%s", code, errOut)
	}
	if _, errOut, code := sbench(t, "local", "accept.toml", "--db", db); code != 0 {
		t.Fatalf("local: exit %d\n%s", code, errOut)
	}
	out, errOut, code := sbench(t, "check", "campaign:accept", "--db", db)
	if code != exitGate || !strings.Contains(errOut, "1 expectation(s) failed: latency latency@1KiB") {
		t.Fatalf("check: exit %d\n%s\n%s", code, out, errOut)
	}
	lines := strings.Split(out, "\n")
	if !strings.HasPrefix(lines[0], "STATUS") || len(lines) < 5 {
		t.Fatalf("check's table:\n%s", out)
	}
	for i, want := range []string{"PASS small messages", "FAIL latency latency@1KiB", "NO DATA latency latency@2MiB"} {
		if !strings.HasPrefix(strings.Join(strings.Fields(lines[i+1]), " "), want) {
			t.Errorf("line %d = %q; want it to start with %q", i+1, lines[i+1], want)
		}
	}
	if !strings.Contains(lines[1], " 3 ") || !strings.Contains(lines[1], "1-3") || !strings.Contains(lines[1], "1000000 us (absolute: 1 s)") {
		t.Errorf("the PASS line shows no n=3, runs or limit: %q", lines[1])
	}
	if !strings.Contains(out, "no run measured latency at 2MiB") || !strings.Contains(out, "1 PASS, 1 FAIL, 1 NO DATA") {
		t.Errorf("notes and summary:\n%s", out)
	}

	out, _, code = sbench(t, "check", "campaign:accept", "--json", "--db", db)
	var got struct {
		Verdicts []struct {
			Expectation struct {
				Name, Benchmark, Metric, At, Bound, Source string
			} `json:"expectation"`
			Status string  `json:"status"`
			Value  float64 `json:"value"`
			Unit   string  `json:"unit"`
			N      int     `json:"n"`
			Runs   []int64 `json:"runs"`
			Limit  float64 `json:"limit"`
			Note   string  `json:"note"`
		} `json:"verdicts"`
		Pass, Fail int
		NoData     int `json:"no_data"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil || code != exitGate {
		t.Fatalf("check --json: exit %d, %v\n%s", code, err, out)
	}
	if len(got.Verdicts) != 3 || got.Pass != 1 || got.Fail != 1 || got.NoData != 1 {
		t.Fatalf("check --json: %+v", got)
	}
	v := got.Verdicts[0]
	if v.Status != "PASS" || v.N != 3 || len(v.Runs) != 3 || v.Unit != "us" || v.Limit != 1e6 || !(v.Value > 0) ||
		v.Expectation.Name != "small messages" || !strings.Contains(v.Expectation.Source, "accept.toml:") {
		t.Errorf("the PASS verdict: %+v", v)
	}
	if v := got.Verdicts[1]; v.Status != "FAIL" || v.Limit != 0.001 || v.N != 3 {
		t.Errorf("the FAIL verdict: %+v", v)
	}

	reportShowsExpectations(t, db)
	// history draws the missed expectation's limit on its chart.
	if _, errOut, code := sbench(t, "history", "--db", db, "--benchmark", "latency", "--metric", "latency", "--x", "1K", "-o", "h.svg"); code != 0 ||
		!strings.Contains(errOut, "expectation drawn: latency latency@1KiB <= 1 ns (0.001 us): FAIL") {
		t.Errorf("history: exit %d\n%s", code, errOut)
	}
	if svg, _ := os.ReadFile("h.svg"); !strings.Contains(string(svg), "expectation: latency latency@1KiB &lt;= 1 ns (0.001 us)") {
		t.Errorf("the history's chart has no line for the expectation")
	}
	if _, errOut, code := sbench(t, "site", "--db", db, "-o", "site"); code != 0 {
		t.Fatalf("site: exit %d\n%s", code, errOut)
	}
	index, _ := os.ReadFile(filepath.Join("site", "index.html"))
	for _, want := range []string{`<h2 id="expect">Acceptance references</h2>`, "latency latency@1KiB", "&lt;= 1 ns", `class="bad"><td>FAIL`, "small messages"} {
		if !strings.Contains(string(index), want) {
			t.Errorf("the site's index lacks %q", want)
		}
	}

	// A file whose expectations hold: exit 0, whatever the archive recorded.
	pass := strings.Split(checkCampaign, "[[expect]]")
	os.WriteFile("pass.toml", []byte(strings.Join(pass[:2], "[[expect]]")), 0o644)
	if out, errOut, code := sbench(t, "check", "--campaign", "pass.toml", "--db", db); code != 0 || !strings.Contains(out, "1 PASS, 0 FAIL, 0 NO DATA") {
		t.Errorf("check --campaign pass.toml: exit %d\n%s\n%s", code, out, errOut)
	}
}

// reportShowsExpectations: the PDF's first page and the HTML report carry
// check's table, the missed expectation among its rows; the page renders.
func reportShowsExpectations(t *testing.T, db string) {
	t.Helper()
	if _, errOut, code := sbench(t, "report", "--db", db, "-o", "r.pdf"); code != 0 {
		t.Fatalf("report: exit %d\n%s", code, errOut)
	}
	testenv.LookPath(t, "pdftotext", "poppler-utils")
	first, err := exec.Command("pdftotext", "-f", "1", "-l", "1", "-layout", "r.pdf", "-").Output()
	if err != nil {
		t.Fatalf("pdftotext: %v", err)
	}
	page := string(first)
	for _, want := range []string{"Acceptance references", "1 PASS, 1 FAIL, 1 NO DATA", "small messages", "latency latency@1KiB", "<= 1 ns", "NO DATA"} {
		if !strings.Contains(page, want) {
			t.Errorf("the PDF's first page lacks %q:\n%s", want, page)
		}
	}
	fail := ""
	for _, l := range strings.Split(page, "\n") {
		if strings.Contains(l, "latency latency@1KiB") {
			fail = strings.Join(strings.Fields(l), " ")
		}
	}
	if !strings.HasPrefix(fail, "FAIL latency latency@1KiB") || !strings.Contains(fail, "<= 1 ns") || !strings.Contains(fail, "1-3") {
		t.Errorf("the missed expectation's row: %q", fail)
	}
	testenv.LookPath(t, "pdftoppm", "poppler-utils")
	if out, err := exec.Command("pdftoppm", "-f", "1", "-l", "1", "-r", "40", "-png", "r.pdf", "page").CombinedOutput(); err != nil {
		t.Fatalf("pdftoppm: %v\n%s", err, out)
	}
	if png, _ := filepath.Glob("page*.png"); len(png) != 1 {
		t.Errorf("pdftoppm rendered %q", png)
	}
	if _, errOut, code := sbench(t, "report", "--db", db, "-o", "r.html"); code != 0 {
		t.Fatalf("report html: exit %d\n%s", code, errOut)
	}
	html, _ := os.ReadFile("r.html")
	for _, want := range []string{"Acceptance references", "latency latency@1KiB", "FAIL", "&lt;= 1 ns"} {
		if !strings.Contains(string(html), want) {
			t.Errorf("the HTML report lacks %q", want)
		}
	}
}
