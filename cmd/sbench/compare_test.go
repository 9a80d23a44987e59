package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/sbench/sbench/internal/golden"
	"github.com/sbench/sbench/results"
)

// mustSbench runs the CLI and fails the test unless it exits with code.
func mustSbench(t *testing.T, code int, args ...string) (stdout, stderr string) {
	t.Helper()
	stdout, stderr, got := sbench(t, args...)
	if got != code {
		t.Fatalf("sbench %q: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", args, got, code, stdout, stderr)
	}
	return stdout, stderr
}

// acceptanceArchive is the acceptance check's archive: an osu_bw output as
// run=a, the same numbers as run=a2, and every value × 0.8 as run=b.
func acceptanceArchive(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	db := filepath.Join(dir, "h.db")
	src := fixture(t, "002-osu_bw-v5.9-cent063-to-cent064.txt")
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	var slow strings.Builder
	for _, l := range strings.SplitAfter(string(data), "\n") {
		f := strings.Fields(l)
		if len(f) == 2 && l[0] >= '0' && l[0] <= '9' {
			v, _ := strconv.ParseFloat(f[1], 64)
			fmt.Fprintf(&slow, "%s %.2f\n", f[0], v*0.8)
			continue
		}
		slow.WriteString(l)
	}
	os.WriteFile(filepath.Join(dir, "slow.txt"), []byte(slow.String()), 0o644)
	os.WriteFile(filepath.Join(dir, "same.txt"), append(data, '\n'), 0o644)
	mustSbench(t, 0, "ingest", "--db", db, "--label", "run=a", src)
	mustSbench(t, 0, "ingest", "--db", db, "--label", "run=a2", filepath.Join(dir, "same.txt"))
	mustSbench(t, 0, "ingest", "--db", db, "--label", "run=b", filepath.Join(dir, "slow.txt"))
	return db
}

// ingestCopies ingests n more runs of the file at src labelled label,
// each a copy that differs in trailing blank lines (the archive keeps a
// file it already holds once): n runs of the same numbers.
func ingestCopies(t *testing.T, db, label, src string, n int) {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for i := range n {
		path := filepath.Join(dir, fmt.Sprintf("copy%d.txt", i))
		if err := os.WriteFile(path, append(data, bytes.Repeat([]byte("\n"), i+2)...), 0o644); err != nil {
			t.Fatal(err)
		}
		mustSbench(t, 0, "ingest", "--db", db, "--label", label, path)
	}
}

// TestCompareExitStatus: the gate fails (exit 1) on a regression with
// evidence behind it, and only then: one run a side is too few to judge a
// 20% drop (exit 0, every row saying so) unless --threshold-only asks for
// the change alone to decide.
func TestCompareExitStatus(t *testing.T) {
	db := acceptanceArchive(t)
	out, stderr := mustSbench(t, 0, "compare", "--db", db, "run=a", "run=b")
	if !strings.Contains(out, "~ n=1+1: too few runs to judge; repeat ≥ 4×") || strings.Contains(out, "REGRESSION") || stderr != "" ||
		!strings.Contains(out, "no regression beyond 5% in 23 row(s); 0 better; 23 row(s) with too few runs to judge (repeat ≥ 4× to test them)") {
		t.Errorf("20%% drop, one run a side:\n%s\nstderr %q", out, stderr)
	}
	golden.Check(t, filepath.Join("testdata", "compare-acceptance.stdout"), out)

	out, stderr = mustSbench(t, 1, "compare", "--db", db, "--threshold-only", "run=a", "run=b")
	if !strings.Contains(out, "-20.00% (n=1+1)*  REGRESSION") || !strings.Contains(out, "(23 of them untested, by the change alone)") ||
		stderr != "sbench: compare: 23 regression(s) beyond 5%\n" {
		t.Errorf("20%% drop, --threshold-only:\n%s\nstderr %q", out, stderr)
	}
	out, _ = mustSbench(t, 0, "compare", "--db", db, "--threshold-only", "run=a", "run=a2")
	if !strings.Contains(out, "no regression beyond 5% in 23 row(s)") {
		t.Errorf("identical data:\n%s", out)
	}
	// The other way round it is an improvement, not a regression.
	out, _ = mustSbench(t, 0, "compare", "--db", db, "--threshold-only", "run=b", "run=a")
	if !strings.Contains(out, "+25.00%") || !strings.Contains(out, "23 better") {
		t.Errorf("20%% gain:\n%s", out)
	}
	// A threshold above the drop lets it pass.
	mustSbench(t, 0, "compare", "--db", db, "--threshold-only", "--threshold", "25%", "run=a", "run=b")
	// Selectors by id work the same.
	mustSbench(t, 1, "compare", "--db", db, "--threshold-only", "run:1", "run:3")
	// A metric the runs do not have is nothing to compare: 2, not 0.
	mustSbench(t, 2, "compare", "--db", db, "--metric", "latency", "run=a", "run=b")

	type jsonResult struct {
		Correction string `json:"correction"`
		Family     int    `json:"tested_rows"`
		Tables     []struct {
			Rows []struct {
				Delta  float64  `json:"delta"`
				Tested bool     `json:"tested"`
				P      *float64 `json:"p"`
				Q      *float64 `json:"q"`
				Note   string   `json:"note"`
				Change string   `json:"change"`
			} `json:"rows"`
		} `json:"tables"`
	}
	var res jsonResult
	out, _ = mustSbench(t, 0, "compare", "--db", db, "--json", "run=a", "run=b")
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("--json: %v\n%s", err, out)
	}
	if len(res.Tables) != 1 || len(res.Tables[0].Rows) != 23 || res.Correction != "benjamini-hochberg" || res.Family != 0 {
		t.Fatalf("--json: %+v", res)
	}
	if r := res.Tables[0].Rows[5]; r.Change != "same" || r.Tested || r.P != nil || r.Note != "n=1+1: too few runs to judge; repeat ≥ 4×" {
		t.Errorf("--json: row %+v: want untested, with its note", r)
	}

	// Four runs a side of the same numbers: the drop is tested, and the
	// gate fails on evidence.
	ingestCopies(t, db, "run=a4", fixture(t, "002-osu_bw-v5.9-cent063-to-cent064.txt"), 4)
	ingestCopies(t, db, "run=b4", filepath.Join(filepath.Dir(db), "slow.txt"), 4)
	out, stderr = mustSbench(t, 1, "compare", "--db", db, "run=a4", "run=b4")
	if !strings.Contains(out, "-20.00% (p=0.029 q=0.029 n=4+4)  REGRESSION") || !strings.Contains(out, "REGRESSION: 23 of 23 row(s) worse by more than 5%; 0 better\n") ||
		!strings.Contains(out, "Benjamini–Hochberg over 23 tested rows") || stderr != "sbench: compare: 23 regression(s) beyond 5%\n" {
		t.Errorf("20%% drop over 4+4 runs:\n%s\nstderr %q", out, stderr)
	}
	res = jsonResult{}
	out, _ = mustSbench(t, 1, "compare", "--db", db, "--json", "run=a4", "run=b4")
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("--json: %v\n%s", err, out)
	}
	if r := res.Tables[0].Rows[5]; r.Change != "worse" || !r.Tested || r.P == nil || r.Q == nil || *r.Q > 0.05 || r.Note != "" || res.Family != 23 {
		t.Errorf("--json, 4+4: row %+v, family %d: want a tested regression", r, res.Family)
	}
}

func TestCompareUsageAndDataErrors(t *testing.T) {
	db := acceptanceArchive(t)
	usageErrors{
		{[]string{"run=a"}, "accepts 2 arg(s)"},
		{[]string{"run=a", "nope"}, `"nope" is not KEY=VALUE`},
		{[]string{"run=a", "run=zzz"}, "selector run=zzz selects no runs; labels in the archive: run=a"},
		{[]string{"run=a", "baseline:missing"}, "no baseline missing in the archive"},
		{[]string{"--threshold", "five", "run=a", "run=b"}, "--threshold"},
		{[]string{"--alpha", "1.5", "run=a", "run=b"}, "--alpha"},
		{[]string{"run=a", "campaign:x@yesterday"}, "YYYY-MM-DD"},
	}.check(t, []string{"compare", "--db", db})
}

// sectionsOf returns the sections of a job output whose name starts with
// prefix, markers included, as one file.
func sectionsOf(t *testing.T, path, prefix string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	in := false
	for _, l := range strings.SplitAfter(string(data), "\n") {
		if strings.HasPrefix(l, "++++++ "+prefix) {
			in = true
		}
		if in {
			out.WriteString(l)
		}
		if strings.HasPrefix(l, "------ "+prefix) {
			in = false
		}
	}
	if out.Len() == 0 {
		t.Fatalf("%s has no section %q", path, prefix)
	}
	return out.Bytes()
}

// TestCompareArticlesBeforeAfter compares real outputs from two articles
// as before/after: TCP (NetPIPE over GbE in article 000, OSU over TCP in
// article 004's job) against the faster fabric (NetPIPE over InfiniBand,
// OSU over eRDMA).
func TestCompareArticlesBeforeAfter(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "r.db")
	job := fixture(t, "004-erdma-vs-tcp-job11.out")
	os.WriteFile(filepath.Join(dir, "tcp.out"), sectionsOf(t, job, "use tcp"), 0o644)
	os.WriteFile(filepath.Join(dir, "erdma.out"), sectionsOf(t, job, "use erdma"), 0o644)
	mustSbench(t, 0, "ingest", "--db", db, "--label", "stage=before", filepath.Join(dir, "tcp.out"), fixture(t, "000-netpipe-NPtcp-gige.txt"))
	mustSbench(t, 0, "ingest", "--db", db, "--label", "stage=after", filepath.Join(dir, "erdma.out"), fixture(t, "000-netpipe-NPib-infiniband.txt"))
	// One run a side: the comparison shows the numbers but judges none.
	out, _ := mustSbench(t, 0, "compare", "--db", db, "stage=before", "stage=after")
	golden.Check(t, filepath.Join("testdata", "compare-articles.stdout"), out)
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^64 KiB +2904 +1662 +~ n=1\+1: too few runs to judge; repeat ≥ 4×$`),
		regexp.MustCompile(`(?m)^no regression beyond 5% in 78 row\(s\); 0 better; 76 row\(s\) with too few runs to judge \(repeat ≥ 4× to test them\)$`),
	} {
		if !want.MatchString(out) {
			t.Errorf("comparison lacks %s", want)
		}
	}
	// eRDMA is slower than TCP for osu_bw from 64 KiB up in that job:
	// judged by the change alone, the comparison must say so, and fail.
	out, _ = mustSbench(t, 1, "compare", "--db", db, "--threshold-only", "stage=before", "stage=after")
	for _, want := range []*regexp.Regexp{
		// article 004: osu_latency at 1 B, 16.07 µs over TCP, 11.01 over eRDMA.
		regexp.MustCompile(`(?m)^osu_latency · latency \(us, lower is better\)$`),
		regexp.MustCompile(`(?m)^1 B +16\.07 +11\.01 +-31\.49% \(n=1\+1\)\* +better$`),
		// article 004: osu_bw at 64 KiB, 2904 MB/s over TCP, 1662 over eRDMA.
		regexp.MustCompile(`(?m)^64 KiB +2904 +1662 +-42\.77% \(n=1\+1\)\* +REGRESSION$`),
		// article 000: NetPIPE at 8 MiB, ~139 MB/s over GbE, ~968 over IB.
		regexp.MustCompile(`(?m)^8 MiB +139\.2 +968\.5 +\+595\.83% \(n=1\+1\)\* +better$`),
		regexp.MustCompile(`(?m)^REGRESSION: 8 of 78 row\(s\) worse by more than 5% \(8 of them untested, by the change alone\); 67 better$`),
	} {
		if !want.MatchString(out) {
			t.Errorf("comparison lacks %s", want)
		}
	}
	// Restricted to latency, eRDMA is worse only at 4 MiB.
	out, _ = mustSbench(t, 1, "compare", "--db", db, "--threshold-only", "--benchmark", "osu_latency", "stage=before", "stage=after")
	if !strings.Contains(out, "REGRESSION: 1 of 23 row(s)") {
		t.Errorf("osu_latency only:\n%s", out)
	}
}

// TestCompareRepeatsFromSeveralRuns: several runs of one configuration on
// each side are repeats, and the comparison tests them.
func TestCompareRepeatsFromSeveralRuns(t *testing.T) {
	path, db := newArchive(t, "a.db")
	// 5 runs per side, 1% apart, the new side 10% slower at 1 MiB and
	// unchanged at 1 KiB.
	for i := range 10 {
		stage, f := "before", 1.0
		if i >= 5 {
			stage, f = "after", 0.9
		}
		b := results.New()
		b.Benchmark = results.Benchmark{Name: "osu_bw", Kind: "tool"}
		b.Labels = map[string]string{"stage": stage, "try": strconv.Itoa(i)}
		jitter := 1 + 0.01*float64(i%5-2)
		b.Samples = []results.Sample{
			{Metric: "bandwidth", Unit: "MB/s", X: results.F(1 << 20), XUnit: "bytes", Value: 10000 * f * jitter},
			{Metric: "bandwidth", Unit: "MB/s", X: results.F(1024), XUnit: "bytes", Value: 3000 * jitter},
		}
		mustIngest(t, db, fmt.Sprintf("run%d", i), b)
	}
	db.Close()
	out, _ := mustSbench(t, 1, "compare", "--db", path, "stage=before", "stage=after")
	for _, want := range []string{
		"1 KiB    3000 ± 2%  3000 ± 2%    ~ (p=1.000 q=1.000 n=5+5)",
		"1 MiB    10000 ± 2%  9000 ± 2%    -10.00% (p=0.008 q=0.016 n=5+5)  REGRESSION",
	} {
		if !strings.Contains(strings.Join(strings.Fields(out), " "), strings.Join(strings.Fields(want), " ")) {
			t.Errorf("comparison lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "no p-value") {
		t.Errorf("every row was tested, yet the footnote is there:\n%s", out)
	}
}

// TestCompareTwoSystems: system=A system=B compares two of a site's
// clusters in one archive, whether each run's system was given on ingest
// (--system) or recorded by the runner from SLURM_CLUSTER_NAME.
func TestCompareTwoSystems(t *testing.T) {
	db := twoSystems(t)
	// alpha's osu_bw is one direction of a pair of nodes, beta's the
	// other, 25% slower; only alpha ran osu_latency, only beta HPL. One
	// run a system: too few to judge.
	out, _ := mustSbench(t, 0, "compare", "--db", db, "system=alpha", "system=beta")
	if !strings.Contains(out, "size     system=alpha  system=beta  vs system=alpha") || !strings.Contains(out, "geomean  790.9         586.7        -25.81%") ||
		!strings.Contains(out, "1 B   1.670         -            only old") || strings.Contains(out, "hpl") {
		t.Errorf("compare system=alpha system=beta:\n%s", out)
	}
	dir := t.TempDir()
	for i, c := range []struct {
		cluster string
		scale   float64
	}{{"gamma", 1}, {"gamma", 1}, {"gamma", 1}, {"gamma", 1}, {"delta", 0.8}, {"delta", 0.8}, {"delta", 0.8}, {"delta", 0.8}} {
		b := results.New()
		b.Campaign, b.Variant = "nightly", "ib"
		b.Job = results.Job{ID: fmt.Sprint(100 + i), Step: "0", Cluster: c.cluster, Nodes: []string{"n01", "n02"}, Tasks: 2}
		b.Benchmark = results.Benchmark{Name: "osu_bw", Kind: "tool", Tool: "osu_bw"}
		for x := 1; x <= 1<<22; x <<= 1 {
			v := 12000 * float64(x) / float64(x+8192) * c.scale * (1 + 0.001*float64(i%2))
			b.Samples = append(b.Samples, results.Sample{Metric: "bandwidth", Unit: results.UnitMBps, X: results.F(float64(x)), XUnit: results.UnitBytes, Value: v})
		}
		if err := results.WriteFile(filepath.Join(dir, fmt.Sprintf("%d.json", i)), b); err != nil {
			t.Fatal(err)
		}
	}
	mustSbench(t, 0, "ingest", "--db", db, dir)
	out, _ = mustSbench(t, 1, "compare", "--db", db, "system=gamma", "system=delta")
	if !strings.Contains(out, "osu_bw") || !strings.Contains(out, "size     system=gamma  system=delta") || !strings.Contains(out, "geomean  695.8         556.7         -20.00%") ||
		!strings.Contains(out, "REGRESSION: 23 of 23 row(s)") {
		t.Errorf("compare system=gamma system=delta does not find delta's bandwidth 20%% lower:\n%s", out)
	}
}
