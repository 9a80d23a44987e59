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

// resetByPeer is what NPtcp 3.7.2's receiver prints before it exits 3 at
// the end of a complete curve.
const resetByPeer = "NetPIPE: error writing or reading synchronization string: Connection reset by peer"

// execoutCampaign runs three commands on two ranks: NetPIPE's output of a
// complete curve whose receiver then exits 3, as NPtcp 3.7.2's does
// (curve.out is the -o file); hostname, which has no parser; an OSU
// latency table whose program exits 2 after printing it.
func execoutCampaign(curve string) string {
	return `
[campaign]
name = "execout"

[slurm]
nodes = 2
ntasks_per_node = 1

[[benchmark]]
name = "nptcp"
per_rank = { "0" = ["sh", "-c", "cat curve.out > np.out && touch done"], "1" = ["sh", "-c", "while [ ! -e done ]; do sleep 0.01; done; echo '` + resetByPeer + `' >&2; exit 3"] }
parser = "netpipe"
output = "np.out"
[benchmark.files."curve.out"]
content = '''` + curve + `'''

[[benchmark]]
name = "hostname"
command = ["hostname"]
parser = "none"
checks = ["wall_time<=600"]

[[benchmark]]
name = "osu"
per_rank = { "0" = ["sh", "-c", "printf '# OSU MPI Latency Test v7.5\n# Size          Latency (us)\n0                       1.20\n1                       1.25\n'; echo oops >&2; exit 2"] }
`
}

// TestLocalExitStatusAndOutput: exit status and output are two facts, all
// the way to the archive. NetPIPE's run is ok with its curve and a note
// naming the receiver's exit; hostname is ok with its wall time; the OSU
// program that exited 2 failed, its samples archived with the failed run
// and left out of every figure.
func TestLocalExitStatusAndOutput(t *testing.T) {
	curve, err := os.ReadFile(filepath.Join(repoRoot(t), "runner/testdata/exec/nptcp-loopback.out"))
	endToEndDir(t, "runs a campaign")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile("execout.toml", []byte(execoutCampaign(string(curve))), 0o644)
	// One run failed: local says so in its exit status.
	_, stderr, code := sbench(t, "local", "execout.toml", "--db", "a.db")
	if code == 0 || !strings.Contains(stderr, "exited with status 2: oops") {
		t.Errorf("local: exit %d, want non-zero for the failed run\n%s", code, stderr)
	}

	out, _ := mustSbench(t, 0, "runs", "--db", "a.db", "--json")
	var runs []runJSON
	if err := json.Unmarshal([]byte(out), &runs); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	byName := map[string]runJSON{}
	for _, r := range runs {
		byName[r.Benchmark] = r
	}
	if len(runs) != 3 {
		t.Fatalf("runs %+v, want 3", runs)
	}
	if r := byName["nptcp"]; r.Status != "ok" || !strings.HasPrefix(r.Note, "rank 1 (node ") || !strings.Contains(r.Note, "exited with status 3: "+resetByPeer) {
		t.Errorf("nptcp: %+v, want ok with a note of the receiver's exit", r)
	}
	if r := byName["hostname"]; r.Status != "ok" || r.Note != "" {
		t.Errorf("hostname: %+v", r)
	}
	if r := byName["osu"]; r.Status != "failed" || !strings.Contains(r.Error, "exited with status 2: oops") {
		t.Errorf("osu: %+v", r)
	}

	// Every sample is archived, and export says the run's status.
	count := map[string]int{}
	for _, row := range exportRows(t, "a.db") {
		count[row["benchmark"]+" "+row["metric"]+" "+row["status"]]++
		if row["metric"] == "wall_time" && (row["unit"] != "s" || row["value"] == "" || row["value"] == "0") {
			t.Errorf("wall time row %v", row)
		}
	}
	for k, n := range map[string]int{"nptcp bandwidth ok": 118, "hostname wall_time ok": 1, "osu latency failed": 2} {
		if count[k] != n {
			t.Errorf("%d rows of %s, want %d (all: %v)", count[k], k, n, count)
		}
	}

	// The report shows the note, tables hostname's wall time, and leaves
	// the failed run's latencies out of its figures and summaries.
	mustSbench(t, 0, "report", "--db", "a.db", "-o", "r.pdf")
	text := strings.Join(strings.Fields(pdfFileTextOf(t, "r.pdf")), " ")
	for _, want := range []string{"Note: rank 1 (node ", "1 ok run carries a note", "wall_time", "the samples of 1 failed or invalid run"} {
		if !strings.Contains(text, want) {
			t.Errorf("report lacks %q", want)
		}
	}
}

// pdfFileTextOf is a PDF's text, as pdftotext reads it.
func pdfFileTextOf(t *testing.T, path string) string {
	t.Helper()
	testenv.LookPath(t, "pdftotext", "poppler-utils")
	text, err := exec.Command("pdftotext", path, "-").Output()
	if err != nil {
		t.Fatalf("pdftotext: %v", err)
	}
	return string(text)
}
