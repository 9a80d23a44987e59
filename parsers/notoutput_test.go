package parsers_test

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sbench/sbench/internal/golden"
	"github.com/sbench/sbench/internal/parsetest"
	"github.com/sbench/sbench/parsers"
	"github.com/sbench/sbench/results"
)

// sbenchScripts are the sbatch scripts sbench rendered for its examples,
// and the 003 one with a description that starts "OSU Micro-Benchmarks"
// (see testdata/README.md).
func sbenchScripts(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("testdata/sbench/*.sbatch")
	if err != nil || len(files) < 8 {
		t.Fatalf("rendered scripts: %v %v", files, err)
	}
	return files
}

// wantNotToolOutput checks that auto-detection refuses data with a reason
// that says why, in the message "sbench ingest" skips in a directory.
func wantNotToolOutput(t *testing.T, name string, data []byte, why string) {
	t.Helper()
	if f, err := parsers.Detect(data); err == nil || !strings.HasPrefix(err.Error(), parsers.NotToolOutputPrefix+": ") || !strings.Contains(err.Error(), why) {
		t.Errorf("%s: Detect = %q, %v; want %q… saying %q", name, f.Name, err, parsers.NotToolOutputPrefix, why)
	}
	bs, err := parsers.Parse(name, "auto", data)
	var se parsers.SyntaxErrors
	if !errors.As(err, &se) || len(se) != 1 || !strings.HasPrefix(se[0].Msg, parsers.NotToolOutputPrefix+": ") || !strings.Contains(se[0].Msg, why) {
		t.Errorf("%s: Parse = %d runs, %v; want one %q error saying %q", name, len(bs), err, parsers.NotToolOutputPrefix, why)
	}
}

// Issue 12 item 13: "sbench ingest sbench-runs/CAMPAIGN" failed when the
// campaign's description started with "OSU": the script's comment was
// taken for an OSU title.
func TestRenderedScriptsAreNotToolOutput(t *testing.T) {
	for _, f := range sbenchScripts(t) {
		data := parsers.MustRead(t, f)
		why, ok := parsers.SbenchWritten(f, data)
		if !ok || !strings.Contains(why, "sbatch script rendered by sbench") {
			t.Errorf("%s: SbenchWritten = %q, %v", f, why, ok)
		}
		wantNotToolOutput(t, f, data, "sbatch script rendered by sbench")
	}
}

// A description is free text: whatever a tool prints first, a campaign
// may be described with, and the script is still no output.
func TestDescriptionCannotPassForToolOutput(t *testing.T) {
	data := parsers.MustRead(t, "testdata/sbench/01-osu-micro-benchmarks-description-steps.sbatch")
	lines := strings.Split(string(data), "\n")
	if !strings.HasPrefix(lines[2], "# OSU Micro-Benchmarks") {
		t.Fatalf("line 3 is %q, want the description", lines[2])
	}
	for _, d := range []string{
		"OSU MPI Bandwidth Test v5.9",                     // osu_bw's title
		"HPC Challenge Benchmark on one node",             // hpccoutf.txt's first line
		"Benchmarking PingPong and Sendrecv on all pairs", // IMB's run header
		"Intel(R) MPI Benchmarks 2019 Update 5, MPI-1 part",
		"HPLinpack 2.3 sweep: T/V    N    NB     P     Q               Time                 Gflops",
	} {
		lines[2] = "# " + d
		wantNotToolOutput(t, d, []byte(strings.Join(lines, "\n")), "sbatch script rendered by sbench (campaign osu-ucx-cluster-network)")
	}
	// Rendered from a site's own template, without sbench's header
	// comment: the name sbench gives its scripts still tells.
	plain := "#!/bin/bash\n# OSU Micro-Benchmarks on the new fabric\n#SBATCH --nodes=2\nsrun osu_bw\n"
	if why, ok := parsers.SbenchWritten("sbench-runs/x/01-x-steps.sbatch", []byte(plain)); !ok || !strings.Contains(why, "sbatch script rendered by sbench") {
		t.Errorf("site template: SbenchWritten = %q, %v", why, ok)
	}
	if why, ok := parsers.SbenchWritten("job.sh", []byte(plain)); ok {
		t.Errorf("a user's script is not sbench's: %q", why)
	}
	wantNotToolOutput(t, "job.sh", []byte(plain), "shell script")
}

// The article's own job script: a shell script, not sbench's, and not
// OSU output for all its osu_ commands.
func TestShellScriptsAreNotToolOutput(t *testing.T) {
	data := parsers.MustRead(t, "../examples/articles/testdata/004-slurm.job")
	if why, ok := parsers.SbenchWritten("004-slurm.job", data); ok {
		t.Errorf("SbenchWritten = %q on a user's script", why)
	}
	wantNotToolOutput(t, "004-slurm.job", data, `shell script (line 1 is "#!/bin/bash")`)
	// Without its #! line, the #SBATCH directives still say what it is.
	noShebang := []byte(strings.SplitN(string(data), "\n", 2)[1])
	wantNotToolOutput(t, "pasted.job", noShebang, "#SBATCH directive on line 1")
	withOSUComment := []byte(strings.Replace(string(noShebang), "# 環境パラメーターの読み込み", "# OSU Micro-Benchmarks 7.5 over eRDMA", 1))
	wantNotToolOutput(t, "pasted.job", withOSUComment, "#SBATCH directive on line 1")
}

// sbench-runner's rendezvous file, as publishAddr writes it
// (runner/rendezvous.go: JSON indented by two spaces, a final newline).
const rendezvousAddr = `{
  "schema": "sbench.rendezvous/v1",
  "session": "4242.0",
  "node": "cent063",
  "addrs": [
    "10.1.0.63:40213",
    "cent063:40213",
    "127.0.0.1:40213"
  ]
}
`

func TestRendezvousFileIsNotToolOutput(t *testing.T) {
	why, ok := parsers.SbenchWritten("sbench-runs/x/.rendezvous/4242.0.addr", []byte(rendezvousAddr))
	if !ok || !strings.Contains(why, "rendezvous") {
		t.Errorf("SbenchWritten = %q, %v", why, ok)
	}
	wantNotToolOutput(t, "4242.0.addr", []byte(rendezvousAddr), "sbench-runner's rendezvous address file")
	// A bundle whose error quotes an address file is still a bundle.
	bundle := `{"schema": "sbench.result/v1", "error": "address file schema \"sbench.rendezvous/v0\", want \"sbench.rendezvous/v1\""}`
	if why, ok := parsers.SbenchWritten("a.json", []byte(bundle)); ok {
		t.Errorf("a bundle quoting a rendezvous schema: SbenchWritten = %q", why)
	}
}

// What sbench writes that holds runs stays in: result bundles, and the
// jobs' Slurm output files, which hold the tools' output.
func TestJobOutputAndBundlesAreNotSbenchsOwnFiles(t *testing.T) {
	for _, f := range []string{"testdata/004-erdma-vs-tcp-job11.out", "testdata/np-openmpi-srun-pmix.out", "testdata/osu-7.5.2-mbw_mr-gh200-two-mpis.out"} {
		data := parsers.MustRead(t, f)
		if why, ok := parsers.SbenchWritten(f, data); ok {
			t.Errorf("%s: SbenchWritten = %q", f, why)
		}
		if why, ok := parsers.NotToolOutput(f, data); ok {
			t.Errorf("%s: NotToolOutput = %q", f, why)
		}
	}
	bundle := `{"schema": "sbench.result/v1", "campaign": "x"}`
	if why, ok := parsers.SbenchWritten("a.json", []byte(bundle)); ok {
		t.Errorf("a bundle: SbenchWritten = %q", why)
	}
	if f, _ := parsers.Detect([]byte(bundle)); f.Name != "bundle" {
		t.Errorf("a bundle detected as %q", f.Name)
	}
	// A job log that prints its own script first (cat "$0") and then
	// marks its runs keeps them.
	script := parsers.MustRead(t, "../examples/articles/testdata/004-slurm.job")
	out, err := os.ReadFile("testdata/004-erdma-vs-tcp-job11.out")
	if err != nil {
		t.Fatal(err)
	}
	bs, err := parsers.Parse("job.out", "auto", append(append(script, '\n'), out...))
	if err != nil || len(bs) != 4 {
		t.Errorf("job log echoing its script: %d runs, %v; want the 4 marked runs", len(bs), err)
	}
	// Unmarked, as bash -v prints a script line by line before running
	// it: the log starts like a script, which Detect says, and the tool's
	// run after it is still read.
	osu := parsers.MustRead(t, "testdata/002-osu_bw-v5.9-cent063-to-cent064.txt")
	log := append([]byte("#!/bin/bash\n#SBATCH --nodes=2\n# osu_bw between two nodes\nsrun ./osu_bw\n"), osu...)
	if _, err := parsers.Detect(log); err == nil || !strings.Contains(err.Error(), "shell script") {
		t.Errorf("Detect = %v, want a shell script", err)
	}
	bs, err = parsers.Parse("job.out", "auto", log)
	if err != nil || len(bs) != 1 || bs[0].Benchmark.Kernel != "osu" {
		t.Errorf("bash -v log: %d runs, %v; want osu_bw's run", len(bs), err)
	}
}

// No tool output in the fixtures starts like a script.
func TestNoFixtureIsTakenForAScript(t *testing.T) {
	for _, f := range realOutputs(t) {
		data := parsers.MustRead(t, f)
		why, ok := parsers.NotToolOutput(f, data)
		if script := filepath.Base(f) == "004-slurm.job"; ok != script {
			t.Errorf("%s: NotToolOutput = %q, %v; want %v", f, why, ok, script)
		}
	}
}

// Parse with "auto" on anything: no panic, syntax errors or bundles that
// validate, and a file sbench wrote is never read as runs.
func FuzzParseAuto(f *testing.F) {
	golden.Seed(f, "testdata/sbench/*.sbatch", "testdata/0*")
	f.Add(parsers.MustRead(f, "../examples/articles/testdata/004-slurm.job")) // the articles' job script
	f.Add([]byte(rendezvousAddr))
	f.Add([]byte("#!/bin/sh\n# OSU MPI Latency Test v7.5\n# Size          Latency (us)\n1 1.0\n"))
	f.Add([]byte("#SBATCH -N 1\n++++++ a: START\n# OSU MPI Latency Test v7.5\n# Size          Latency (us)\n1 1.0\n------ a: END\n"))
	auto := func(name string, r io.Reader) ([]*results.Bundle, error) {
		data, err := io.ReadAll(r)
		if err != nil {
			return nil, err
		}
		return parsers.Parse(name, "auto", data)
	}
	parsetest.Fuzz[parsers.SyntaxErrors](f, auto, func(t *testing.T, data []byte, bs []*results.Bundle, err error) {
		if why, own := parsers.SbenchWritten("fuzz", data); own && err == nil {
			t.Fatalf("%s read as %d runs", why, len(bs))
		}
	})
}
