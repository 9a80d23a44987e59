package main

import (
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sbench/sbench/results"
)

// fixture is a file of the articles' and lab's real outputs.
func fixture(t *testing.T, name string) string {
	t.Helper()
	p := filepath.Join(repoRoot(t), "parsers", "testdata", name)
	if _, err := os.Stat(p); err != nil {
		p = filepath.Join(repoRoot(t), "hpl", "testdata", name)
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatal(err)
	}
	return p
}

// exportRows returns the archive's CSV export as maps by column.
func exportRows(t *testing.T, db string, args ...string) []map[string]string {
	t.Helper()
	out, stderr, code := sbench(t, append([]string{"export", "--db", db, "--format", "csv"}, args...)...)
	if code != 0 {
		t.Fatalf("export: %s", stderr)
	}
	recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var rows []map[string]string
	for _, r := range recs[1:] {
		m := map[string]string{}
		for i, h := range recs[0] {
			m[h] = r[i]
		}
		rows = append(rows, m)
	}
	return rows
}

func TestIngestJobOutputWithSections(t *testing.T) {
	db := filepath.Join(t.TempDir(), "a.db")
	stdout, stderr, code := sbench(t, "ingest", "--db", db, "--label", "cloud=alibaba", "--system", "erdma-cluster", fixture(t, "004-erdma-vs-tcp-job11.out"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.HasPrefix(stdout, "4 run(s) added") {
		t.Errorf("stdout %q", stdout)
	}
	rows := exportRows(t, db)
	peak := map[string]string{}
	for _, r := range rows {
		if r["cloud"] != "alibaba" || r["system"] != "erdma-cluster" {
			t.Fatalf("row lacks the user's labels: %v", r)
		}
		if r["metric"] == "bandwidth" && r["x"] == "32768" {
			peak[r["section"]] = r["value"]
		}
	}
	if peak["use erdma for osu_bw"] != "6264.41" {
		t.Errorf("eRDMA bandwidth at 32 KiB: %v", peak)
	}
	// The same file again adds nothing, and says so.
	stdout, stderr, code = sbench(t, "ingest", "--db", db, "--label", "cloud=alibaba", "--system", "erdma-cluster", fixture(t, "004-erdma-vs-tcp-job11.out"))
	if code != 0 || !strings.HasPrefix(stdout, "0 run(s) added, 4 already archived") || !strings.Contains(stderr, "already in the archive") {
		t.Errorf("re-ingest: exit %d\n%s\n%s", code, stdout, stderr)
	}
	// Filters select by label and benchmark.
	if n := len(exportRows(t, db, "--label", "section=use tcp for osu_lat")); n != 23 {
		t.Errorf("--label section=…: %d rows, want 23", n)
	}
	if n := len(exportRows(t, db, "--benchmark", "osu_bw")); n != 46 {
		t.Errorf("--benchmark osu_bw: %d rows, want 46", n)
	}
	out, _, _ := sbench(t, "runs", "--db", db)
	if strings.Count(out, "  osu_") != 4 || !strings.Contains(out, "004-erdma-vs-tcp-job11.out") || !strings.Contains(out, "ingested ") {
		t.Errorf("runs:\n%s", out)
	}
}

func TestIngestRefusesBadInputAndKeepsArchive(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "a.db")
	if _, stderr, code := sbench(t, "ingest", "--db", db, fixture(t, "003-osu_latency-v7.5-2node.txt")); code != 0 {
		t.Fatal(stderr)
	}
	before := len(exportRows(t, db))
	osuHead := "# OSU MPI Latency Test v7.5\n# Datatype: MPI_CHAR.\n# Size          Avg Latency(us)\n"
	bad := map[string]struct{ content, want string }{
		"empty.txt":     {"", "empty.txt: empty input"},
		"binary.bin":    {"\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00", "binary.bin: binary data"},
		"garbage.txt":   {"lorem ipsum\ndolor sit amet\n", "garbage.txt:1: not output of any known tool"},
		"norows.txt":    {osuHead, "norows.txt"},
		"badnum.txt":    {osuHead + "1    11.01\n2    1.2.3\n4    11.48\n", "badnum.txt:5:"},
		"truncated.txt": {osuHead + "1    11.01\n2\n", "truncated.txt:5:"},
	}
	for name, b := range bad {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(b.content), 0o644)
		_, stderr, code := sbench(t, "ingest", "--db", db, p)
		if code != exitUsage || !strings.Contains(stderr, b.want) {
			t.Errorf("%s: exit %d, stderr %q; want exit 2 (unreadable input) and %q", name, code, stderr, b.want)
		}
	}
	if after := len(exportRows(t, db)); after != before {
		t.Errorf("archive changed from %d to %d rows", before, after)
	}
}

func TestIngestDirectorySkipsNonBenchmarkFiles(t *testing.T) {
	dir := t.TempDir()
	data, _ := os.ReadFile(fixture(t, "002-osu_bw-v5.9-cent063-to-cent064.txt"))
	os.WriteFile(filepath.Join(dir, "bw.txt"), data, 0o644)
	os.WriteFile(filepath.Join(dir, "job.sbatch"), []byte("#!/bin/bash\nsrun ./osu_bw\n"), 0o644)
	os.WriteFile(filepath.Join(dir, ".hidden"), []byte("x"), 0o644)
	db := filepath.Join(t.TempDir(), "a.db")
	stdout, stderr, code := sbench(t, "ingest", "--db", db, dir)
	if code != 0 || !strings.HasPrefix(stdout, "1 run(s) added") || !strings.Contains(stderr, "1 file(s) skipped: not benchmark output") {
		t.Errorf("exit %d\n%s\n%s", code, stdout, stderr)
	}
}

func TestIngestStdinWithFormat(t *testing.T) {
	db := filepath.Join(t.TempDir(), "a.db")
	data, _ := os.ReadFile(fixture(t, "003-osu_latency-v7.5-2node.txt"))
	var out, errb strings.Builder
	err := run(t.Context(), []string{"ingest", "--db", db, "--format", "osu", "-"}, strings.NewReader(string(data)), &out, &errb)
	if err != nil || !strings.HasPrefix(out.String(), "1 run(s) added") {
		t.Errorf("%v %q %q", err, out.String(), errb.String())
	}
	if _, stderr, code := sbench(t, "ingest", "--db", db, "--format", "nope", "-"); code != exitUsage || !strings.Contains(stderr, `--format "nope"`) {
		t.Errorf("bad --format: exit %d %q", code, stderr)
	}
}

// TestIngestEveryArticleOutput loads each article's published output by
// content alone (--format auto) and checks a figure from each, as printed.
func TestIngestEveryArticleOutput(t *testing.T) {
	tests := []struct {
		file           string
		runs           int
		metric, x, val string // one sample or scalar that must be archived
		status         string
	}{
		{"000-hpl-infiniband.txt", 1, "gflops", "", "7.24", "invalid"},
		{"000-hpl-100mbit.txt", 1, "gflops", "", "5.598", "invalid"},
		{"000-netpipe-NPtcp-gige.txt", 1, "bandwidth_mbps", "8388611", "1062.3", "ok"},
		{"000-netpipe-NPib-infiniband.txt", 1, "", "", "", "ok"},
		{"000-netpipe-NPmpi-infiniband.txt", 1, "", "", "", "ok"},
		{"000-perf_main-rc-bw.txt", 1, "bandwidth_mibps", "128000", "935.6", "ok"},
		{"002-osu_bw-v5.9-cent063-to-cent064.txt", 1, "bandwidth", "4194304", "3958.26", "ok"},
		{"002-osu_bw-v5.9-cent064-to-cent063.txt", 1, "", "", "", "ok"},
		{"003-osu_allreduce-v7.5-4node-144proc.txt", 1, "", "", "", "ok"},
		{"003-osu_alltoall-v7.5-1node-36proc.txt", 1, "", "", "", "ok"},
		{"003-osu_bw-v7.5-2node-256MiB.txt", 1, "", "", "", "ok"},
		{"003-osu_latency-v7.5-2node.txt", 1, "", "", "", "ok"},
		{"004-erdma-vs-tcp-job11.out", 4, "latency", "1", "16.07", "ok"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "a.db")
			stdout, stderr, code := sbench(t, "ingest", "--db", db, fixture(t, tt.file))
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if want := fmt.Sprintf("%d run(s) added", tt.runs); !strings.HasPrefix(stdout, want) {
				t.Errorf("stdout %q, want %q", stdout, want)
			}
			rows := exportRows(t, db)
			found := tt.metric == ""
			for _, r := range rows {
				if r["value"] == "" {
					t.Errorf("row without a value: %v", r)
				}
				if r["metric"] == tt.metric && r["x"] == tt.x && r["value"] == tt.val {
					found = true
					if r["status"] != tt.status {
						t.Errorf("%s: status %q, want %q", tt.metric, r["status"], tt.status)
					}
				}
			}
			if !found {
				t.Errorf("no %s at x=%q with value %s among %d rows", tt.metric, tt.x, tt.val, len(rows))
			}
		})
	}
}

func TestIngestProgressBar(t *testing.T) {
	dir := t.TempDir()
	var paths []string
	for i := range 5 {
		p := filepath.Join(dir, fmt.Sprintf("osu_latency-%d.txt", i))
		out := fmt.Sprintf("# OSU MPI Latency Test v7.5\n# Size       Avg Latency(us)\n1    %d.50\n2    1.60\n", i+1)
		if err := os.WriteFile(p, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	db := filepath.Join(dir, "a.db")
	// Off the terminal it stays quiet unless asked for.
	_, stderr, code := sbench(t, append([]string{"ingest", "--db", db}, paths...)...)
	if code != 0 || strings.Contains(stderr, "ingest") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
	t.Setenv("SBENCH_PROGRESS", "1")
	_, stderr, code = sbench(t, "ingest", "--db", filepath.Join(dir, "b.db"), dir)
	if code != 0 || !strings.Contains(stderr, "ingest ") || !strings.Contains(stderr, "/6)") {
		t.Errorf("exit %d, no progress bar on stderr: %q", code, stderr)
	}
}

// submittedResults lays out a results directory as "sbench submit" and the
// runner leave it: the rendered script under scripts/TIMESTAMP/ (of a
// campaign whose description starts like OSU's own title line), the
// bundle of the one run, the job's Slurm output, the rendezvous directory,
// and the exec kernel's work directory, which holds the tool's output the
// bundle already carries.
func submittedResults(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	camp, err := os.ReadFile(filepath.Join(repoRoot(t), "examples", "003-osu-ucx-cluster-network.toml"))
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(camp), `description = "OSU alltoall`, `description = "OSU Micro-Benchmarks: alltoall`, 1)
	if text == string(camp) {
		t.Fatal("example 003 has no description to change")
	}
	toml := filepath.Join(dir, "osu.toml")
	os.WriteFile(toml, []byte(text), 0o644)
	res := filepath.Join(dir, "sbench-runs", "osu-ucx-cluster-network")
	if _, stderr, code := sbench(t, "render", toml, "-o", filepath.Join(res, "scripts", "20261201T080000.123")); code != 0 {
		t.Fatalf("render: %s", stderr)
	}

	b := results.New()
	b.Campaign, b.Variant = "osu-ucx-cluster-network", "default"
	b.Job = results.Job{ID: "4242", Step: "0", Nodes: []string{"n1", "n2"}, Tasks: 2}
	b.Benchmark = results.Benchmark{Name: "osu_latency", Kind: "tool", Kernel: "exec", Tool: "osu_latency"}
	b.Samples = []results.Sample{{Metric: "latency", Unit: "us", X: results.F(1), XUnit: "bytes", Value: 1.5}}
	if err := results.WriteFile(filepath.Join(res, "4242.0.osu_latency.json"), b); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(res, "osu-ucx-cluster-network-steps-4242.out"), []byte(
		"sbench-step: 0 begin attempt=0 at=1764576000\n"+res+"/4242.0.osu_latency.json\nsbench-step: 0 end attempt=0 at=1764576012 rc=0\n"), 0o644)
	os.MkdirAll(filepath.Join(res, ".rendezvous"), 0o755)
	work := filepath.Join(res, "work", "4242.0")
	os.MkdirAll(work, 0o755)
	data, err := os.ReadFile(fixture(t, "003-osu_latency-v7.5-2node.txt"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(work, "osu_latency.out"), data, 0o644)
	return res
}

// TestIngestResultsDirectoryParsesOnlyRuns is item 13: files sbench wrote
// beside the results were parsed as tool output. The script's comment
// "# OSU Micro-Benchmarks …" made a campaign's folder fail to ingest with
// --format osu, and the work directory's copy of the tool output came in a
// second time beside its bundle.
func TestIngestResultsDirectoryParsesOnlyRuns(t *testing.T) {
	res := submittedResults(t)
	db := filepath.Join(t.TempDir(), "a.db")
	stdout, stderr, code := sbench(t, "ingest", "--db", db, res)
	// The job's output is ingested like any log and holds no run.
	if code != 0 || !strings.HasPrefix(stdout, "1 run(s) added, 0 already archived, from 1 file(s)") || stderr != "1 file(s) skipped: not benchmark output\n" {
		t.Errorf("ingest %s: exit %d\nstdout: %s\nstderr: %s", res, code, stdout, stderr)
	}
	out, _, _ := sbench(t, "runs", "--db", db)
	if strings.Count(out, "\n") != 2 || !strings.Contains(out, "4242") {
		t.Errorf("runs, want only the bundle's:\n%s", out)
	}

	// With a format named, sbench's own files are still not parsed.
	os.Remove(filepath.Join(res, "osu-ucx-cluster-network-steps-4242.out"))
	stdout, stderr, code = sbench(t, "ingest", "--db", filepath.Join(t.TempDir(), "b.db"), "--format", "bundle", res)
	if code != 0 || !strings.HasPrefix(stdout, "1 run(s) added") || stderr != "" {
		t.Errorf("ingest --format bundle %s: exit %d\nstdout: %s\nstderr: %s", res, code, stdout, stderr)
	}
	stdout, stderr, code = sbench(t, "ingest", "--db", filepath.Join(t.TempDir(), "c.db"), "--format", "osu", filepath.Join(res, "scripts"))
	if code != exitUsage || !strings.Contains(stderr, "no files found") {
		t.Errorf("ingest --format osu RESULTS/scripts: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
}
