package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/sbench/sbench/internal/testenv"
	"github.com/sbench/sbench/parsers"
	"github.com/sbench/sbench/results"
)

func latencyPoints(samples []results.Sample) int {
	n := 0
	for _, s := range samples {
		if s.Metric == "latency" {
			n++
		}
	}
	return n
}

// imbHeaderShape is an IMB header block with what depends on the machine,
// the time and the command line taken out: the keys of the uname and date
// lines, and the calling sequence.
func imbHeaderShape(out string) []string {
	var shape []string
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "# List of Benchmarks to run:") {
			break
		}
		for _, k := range []string{"# Date", "# Machine", "# System", "# Release", "# Version", "#    Intel(R) MPI Benchmarks"} {
			if strings.HasPrefix(l, k) {
				l = k
			}
		}
		if i > 1 && strings.HasPrefix(lines[i-2], "# Calling sequence was:") {
			l = "# ARGV"
		}
		shape = append(shape, l)
	}
	return shape
}

// imbRowRE is a row of IMB's tables: 13-column fields, two integers, then
// times and rates with two decimals.
var imbRowRE = regexp.MustCompile(`^( {0,12}\d{1,13}){2}( {0,10}\d{1,10}\.\d\d)+$`)

// TestIMBStandinPrintsIMBsFormat runs the IMB-MPI1 stand-in of testdata on
// 2 ranks and holds its output to IMB-MPI1 2021's, as the real outputs in
// parsers/testdata show it: the header line for line (what depends on the
// machine left out), the tables' headings, rule lines and 13-column rows,
// and the closing line; and the imb parser reads it as two runs, PingPong
// and Allreduce, of all their sizes.
func TestIMBStandinPrintsIMBsFormat(t *testing.T) {
	buildIMBStandin(t)
	mpirun := testenv.LookPath(t, "mpirun", "openmpi-bin")
	ctx := testenv.Context(t)
	cmd := exec.CommandContext(ctx, mpirun, "--oversubscribe", "--bind-to", "none", "-np", "2", "IMB-MPI1", "PingPong", "Allreduce")
	cmd.Env = append(os.Environ(), "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
		"OMPI_MCA_btl_tcp_if_include=lo", "OMPI_MCA_oob_tcp_if_include=lo")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v: %v\n%s", cmd.Args, err, out)
	}

	real, err := os.ReadFile(filepath.Join(repoRoot(t), "parsers", "testdata", "imb-2021.2-alltoall-np2-np4-oci-indented.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var unindented []string
	for _, l := range strings.Split(string(real), "\n") {
		unindented = append(unindented, strings.TrimPrefix(l, "   "))
	}
	realText := strings.Join(unindented, "\n")
	realText = realText[strings.Index(realText, "#---"):]
	if got, want := imbHeaderShape(string(out)), imbHeaderShape(realText); !slices.Equal(got, want) {
		t.Errorf("header\n%q\nIMB 2021.2's\n%q", got, want)
	}

	text := string(out)
	for _, w := range []string{
		"\n# List of Benchmarks to run:\n\n# PingPong\n# Allreduce\n\n",
		// PingPong's heading as IMB 2019's real output has it.
		"\n#---------------------------------------------------\n# Benchmarking PingPong \n# #processes = 2 \n#---------------------------------------------------\n" +
			"       #bytes #repetitions      t[usec]   Mbytes/sec\n            0         1000 ",
		// Allreduce's as IMB 2021's has Alltoall's (the same columns).
		"\n\n#----------------------------------------------------------------\n# Benchmarking Allreduce \n# #processes = 2 \n#----------------------------------------------------------------\n" +
			"       #bytes #repetitions  t_min[usec]  t_max[usec]  t_avg[usec]\n            0         1000 ",
		"     4194304           10 ",
	} {
		if !strings.Contains(text, w) {
			t.Errorf("output lacks IMB's\n%q\n%s", w, text)
		}
	}
	if !strings.HasSuffix(text, "\n\n\n# All processes entering MPI_Finalize\n\n") {
		t.Errorf("output does not end as IMB's does:\n%q", text[max(0, len(text)-120):])
	}
	rows := 0
	for _, l := range strings.Split(text, "\n") {
		if f := strings.TrimSpace(l); f != "" && f[0] != '#' {
			rows++
			if !imbRowRE.MatchString(l) || len(l)%13 != 0 {
				t.Errorf("row %q is not in IMB's 13-column layout", l)
			}
		}
	}

	runs, err := parsers.Parse("IMB-MPI1.out", "auto", out)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, b := range runs {
		got = append(got, b.Benchmark.ToolBenchmark+" "+b.Benchmark.ToolVersion+" np="+b.Params["processes"]+" "+string(b.Status)+" "+
			strings.Repeat("|", latencyPoints(b.Samples)))
	}
	want := []string{"IMB-MPI1 PingPong 2021.3 np=2 ok " + strings.Repeat("|", 24), "IMB-MPI1 Allreduce 2021.3 np=2 ok " + strings.Repeat("|", 22)}
	if !slices.Equal(got, want) || rows != 24+22 {
		t.Errorf("parsed %q (%d rows), want %q", got, rows, want)
	}
}
