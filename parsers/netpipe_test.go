package parsers

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sbench/sbench/internal/golden"
	"github.com/sbench/sbench/internal/testenv"
	"github.com/sbench/sbench/results"
)

// npPoint is one row as the tool printed it: size, Mbps, time (usec) and
// repeat count (0 for -o files, which do not print it).
type npPoint struct {
	x, mbps, usec float64
	times         int
}

type npRunWant struct {
	name   string
	rows   int
	first  npPoint
	last   npPoint
	peak   npPoint // the row of highest Mbps (the first of equals)
	params map[string]string
}

func npRead(t *testing.T, file string) []*results.Bundle {
	t.Helper()
	data := mustRead(t, filepath.Join("testdata", file))
	runs, err := Parse(file, "netpipe", data)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return runs
}

// npPoints rebuilds the printed rows from a bundle's three curves.
func npPoints(t *testing.T, b *results.Bundle) []npPoint {
	t.Helper()
	mbps, lat, bw := curve(b, "bandwidth_mbps"), curve(b, "latency"), curve(b, "bandwidth")
	if len(mbps) != len(lat) || len(mbps) != len(bw) {
		t.Fatalf("%s: %d Mbps, %d latency, %d bandwidth samples", b.Benchmark.Name, len(mbps), len(lat), len(bw))
	}
	out := make([]npPoint, len(mbps))
	for i := range mbps {
		if *mbps[i].X != *lat[i].X || *mbps[i].X != *bw[i].X {
			t.Fatalf("row %d: x differs between curves", i)
		}
		if mbps[i].Unit != "Mbps" || lat[i].Unit != "us" || bw[i].Unit != "MB/s" || mbps[i].XUnit != "bytes" {
			t.Fatalf("row %d: units %q %q %q %q", i, mbps[i].Unit, lat[i].Unit, bw[i].Unit, mbps[i].XUnit)
		}
		// MB/s is NetPIPE's Mbps (2^20 bit/s) in 10^6 bytes/s.
		if want := mbps[i].Value * 1048576 / 8 / 1e6; math.Abs(bw[i].Value-want) > 1e-9*want {
			t.Fatalf("row %d: bandwidth %v MB/s, want %v", i, bw[i].Value, want)
		}
		out[i] = npPoint{x: *mbps[i].X, mbps: mbps[i].Value, usec: lat[i].Value, times: mbps[i].Iterations}
	}
	return out
}

func npCheckRun(t *testing.T, where string, b *results.Bundle, w npRunWant) {
	t.Helper()
	if b.Benchmark.Name != w.name || b.Benchmark.Tool != "NetPIPE" || b.Benchmark.Kind != "tool" || b.Benchmark.Kernel != "netpipe" {
		t.Errorf("%s: benchmark %+v, want name %q", where, b.Benchmark, w.name)
	}
	if b.Status != results.StatusOK {
		t.Errorf("%s: status %s (%s)", where, b.Status, b.Error)
	}
	if err := b.Validate(); err != nil {
		t.Errorf("%s: %v", where, err)
	}
	pts := npPoints(t, b)
	if len(pts) != w.rows {
		t.Fatalf("%s: %d rows, want %d", where, len(pts), w.rows)
	}
	peak := pts[0]
	for _, p := range pts {
		if p.mbps > peak.mbps {
			peak = p
		}
	}
	for _, c := range []struct {
		what      string
		got, want npPoint
	}{{"first", pts[0], w.first}, {"last", pts[len(pts)-1], w.last}, {"peak", peak, w.peak}} {
		if c.got != c.want {
			t.Errorf("%s: %s row %+v, want %+v", where, c.what, c.got, c.want)
		}
	}
	for k, v := range w.params {
		if b.Params[k] != v {
			t.Errorf("%s: param %s = %q, want %q (all: %v)", where, k, b.Params[k], v, b.Params)
		}
	}
}

func TestNetPIPEFixtures(t *testing.T) {
	tests := []struct {
		file string
		runs []npRunWant
	}{
		{"000-netpipe-NPib-infiniband.txt", []npRunWant{{name: "netpipe", rows: 16,
			first: npPoint{1572867, 7299.72, 1643.90, 40}, last: npPoint{8388611, 7388.18, 8662.49, 5}, peak: npPoint{8388608, 7388.76, 8661.81, 5}}}},
		// The MPI module prints each rank's host: NPmpi, although the
		// excerpt never names the program.
		{"000-netpipe-NPmpi-infiniband.txt", []npRunWant{{name: "NPmpi", rows: 19,
			first: npPoint{1, 1.80, 4.24, 20491}, last: npPoint{8388611, 7391.16, 8659.00, 5}, peak: npPoint{8388605, 7393.03, 8656.80, 5},
			params: map[string]string{"module": "mpi", "rank0_host": "noco01", "rank1_host": "noco02"}}}},
		{"000-netpipe-NPtcp-gige.txt", []npRunWant{{name: "netpipe", rows: 15,
			first: npPoint{2097149, 1055.77, 15154.83, 3}, last: npPoint{8388611, 1062.30, 60246.67, 3}, peak: npPoint{6291453, 1063.24, 45144.85, 3}}}},
		// The article as published: en dashes for "-->", elided rows as
		// ".", prompts naming each program, Korean prose between runs.
		{"np-article000-three-runs.txt", []npRunWant{
			{name: "NPmpi", rows: 19, first: npPoint{1, 1.80, 4.24, 20491}, last: npPoint{8388611, 7391.16, 8659.00, 5}, peak: npPoint{8388605, 7393.03, 8656.80, 5}},
			{name: "NPtcp", rows: 15, first: npPoint{2097149, 1055.77, 15154.83, 3}, last: npPoint{8388611, 1062.30, 60246.67, 3}, peak: npPoint{6291453, 1063.24, 45144.85, 3}},
			{name: "NPib", rows: 16, first: npPoint{1572867, 7299.72, 1643.90, 40}, last: npPoint{8388611, 7388.18, 8662.49, 5}, peak: npPoint{8388608, 7388.76, 8661.81, 5}},
		}},
		{"nptcp-transmitter.stdout", []npRunWant{{name: "NPtcp", rows: 118,
			first: npPoint{1, 0.52, 14.80, 9681}, last: npPoint{4194307, 15206.16, 2104.41, 23}, peak: npPoint{1572867, 90747.81, 132.23, 492},
			params: map[string]string{"module": "tcp", "send_buffer_bytes": "16384", "receive_buffer_bytes": "131072", "output_file": "/scratch/lab/outputs/nptcp-loopback.out"}}}},
		{"nptcp-loopback.out", []npRunWant{{name: "netpipe", rows: 118,
			first: npPoint{1, 0.515418, 14.80, 0}, last: npPoint{4194307, 15206.159051, 2104.41, 0}, peak: npPoint{1572867, 90747.813771, 132.23, 0},
			params: map[string]string{"source": "netpipe -o file"}}}},
		// srun --mpi=pmix: both ranks print "Sending output to".
		{"np-openmpi-srun-pmix.stdout", []npRunWant{{name: "NPmpi", rows: 106,
			first: npPoint{1, 0.66, 11.60, 7117}, last: npPoint{1048579, 27141.17, 294.76, 184}, peak: npPoint{786429, 42479.18, 141.25, 453},
			params: map[string]string{"module": "mpi", "rank0_host": "vm", "rank1_host": "vm"}}}},
		{"np-openmpi-srun-pmix.out", []npRunWant{{name: "netpipe", rows: 106,
			first: npPoint{1, 0.657498, 11.60, 0}, last: npPoint{1048579, 27141.172251, 294.76, 0}, peak: npPoint{786429, 42479.183600, 141.25, 0}}}},
		{"np-openmpi-mpirun.txt", []npRunWant{{name: "NPmpi", rows: 32,
			first: npPoint{1, 19.34, 0.39, 200}, last: npPoint{65536, 5485.76, 91.15, 200}, peak: npPoint{32768, 30750.03, 8.13, 200},
			params: map[string]string{"perturbation": "0", "output_file": "mpi.np"}}}},
		{"np-openmpi-mpirun.out", []npRunWant{{name: "netpipe", rows: 32,
			first: npPoint{1, 19.335347, 0.39, 0}, last: npPoint{65536, 5485.762118, 91.15, 0}, peak: npPoint{32768, 30750.029326, 8.13, 0}}}},
		// mpirun --tag-output tags each write, so some rows carry a second
		// tag in their middle.
		{"np-openmpi-mpirun-tag-output.txt", []npRunWant{{name: "NPmpi", rows: 24,
			first: npPoint{1, 19.05, 0.40, 100}, last: npPoint{4096, 7548.06, 4.14, 100}, peak: npPoint{3072, 23574.10, 0.99, 100}}}},
		{"nptcp-3.7.2-bidir.txt", []npRunWant{{name: "NPtcp", rows: 70,
			first: npPoint{1, 0.73, 20.94, 50}, last: npPoint{16387, 15155.61, 16.50, 50}, peak: npPoint{16381, 15185.17, 16.46, 50},
			params: map[string]string{"mode": "bidirectional"}}}},
		{"nptcp-3.7.2-nocache.txt", []npRunWant{{name: "NPtcp", rows: 70,
			first: npPoint{1, 0.26, 29.78, 50}, last: npPoint{16387, 5096.55, 24.53, 50}, peak: npPoint{16381, 5604.53, 22.30, 50},
			params: map[string]string{"cache": "invalidated"}}}},
		// NetPIPE 2.4: times in seconds, a "Latency:" header, three runs
		// quoted in a mail with prose between them.
		{"np-2.4-lkml-e1000-three-runs.txt", []npRunWant{
			{name: "netpipe", rows: 12, first: npPoint{1, 0.06, 123, 2037}, last: npPoint{24, 2.93, 63, 2664}, peak: npPoint{24, 2.93, 63, 2664}},
			{name: "netpipe", rows: 12, first: npPoint{1, 0.12, 63, 3983}, last: npPoint{24, 1.47, 125, 1334}, peak: npPoint{24, 1.47, 125, 1334}},
			{name: "netpipe", rows: 12, first: npPoint{1, 0.27, 28, 8208}, last: npPoint{24, 6.46, 28, 5537}, peak: npPoint{24, 6.46, 28, 5537}},
		}},
	}
	for _, tt := range tests {
		runs := npRead(t, tt.file)
		if len(runs) != len(tt.runs) {
			t.Errorf("%s: %d runs, want %d", tt.file, len(runs), len(tt.runs))
			continue
		}
		for i, w := range tt.runs {
			npCheckRun(t, fmt.Sprintf("%s run %d", tt.file, i), runs[i], w)
		}
	}
}

// NetPIPE's "Mbps" is bits / (t × 2^20): check it on every row of real -o
// files, whose time has 8 decimals, and check that 10^6 would not fit.
func TestNetPIPEMbpsIsTwoToTheTwentyBitsPerSecond(t *testing.T) {
	for _, file := range []string{"nptcp-loopback.out", "np-openmpi-srun-pmix.out"} {
		data := mustRead(t, filepath.Join("testdata", file))
		rows := 0
		for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			f := strings.Fields(l)
			b, _ := strconv.ParseFloat(f[0], 64)
			mbps, _ := strconv.ParseFloat(f[1], 64)
			sec, _ := strconv.ParseFloat(f[2], 64)
			bin := b * 8 / sec / (1 << 20)
			dec := b * 8 / sec / 1e6
			if math.Abs(bin-mbps)/mbps > 1e-3 || math.Abs(dec-mbps)/mbps < 0.04 {
				t.Errorf("%s: %s: 2^20 gives %.6f, 10^6 gives %.6f", file, l, bin, dec)
			}
			rows++
		}
		if rows < 100 {
			t.Errorf("%s: only %d rows", file, rows)
		}
	}
}

// The transmitter's progress lines and its -o file are the same run: same
// sizes, and rate and time equal to the progress lines' two decimals.
func TestNetPIPEProgressLinesAgreeWithOutFile(t *testing.T) {
	for _, pair := range [][2]string{
		{"nptcp-transmitter.stdout", "nptcp-loopback.out"},
		{"np-openmpi-srun-pmix.stdout", "np-openmpi-srun-pmix.out"},
		{"np-openmpi-mpirun.txt", "np-openmpi-mpirun.out"},
	} {
		npCheckAgree(t, pair[0], npRead(t, pair[0]), pair[1], npRead(t, pair[1]))
	}
}

func npCheckAgree(t *testing.T, nameA string, a []*results.Bundle, nameB string, b []*results.Bundle) {
	t.Helper()
	if len(a) != 1 || len(b) != 1 {
		t.Fatalf("%s: %d runs, %s: %d runs", nameA, len(a), nameB, len(b))
	}
	pa, pb := npPoints(t, a[0]), npPoints(t, b[0])
	if len(pa) != len(pb) || len(pa) == 0 {
		t.Fatalf("%s has %d rows, %s has %d", nameA, len(pa), nameB, len(pb))
	}
	for i := range pa {
		if pa[i].x != pb[i].x || math.Abs(pa[i].mbps-pb[i].mbps) > 0.005+1e-9 || math.Abs(pa[i].usec-pb[i].usec) > 0.005+1e-9 {
			t.Errorf("row %d: %s %+v, %s %+v", i, nameA, pa[i], nameB, pb[i])
		}
	}
}

// With -2 the -o file counts the bytes of both directions: its sizes are
// twice the progress lines'. Nothing in the file says so.
func TestNetPIPEBidirectionalOutFileDoublesSizes(t *testing.T) {
	lines, file := npPoints(t, npRead(t, "nptcp-3.7.2-bidir.txt")[0]), npPoints(t, npRead(t, "nptcp-3.7.2-bidir.out")[0])
	if len(lines) != len(file) {
		t.Fatalf("%d rows and %d rows", len(lines), len(file))
	}
	for i := range lines {
		if file[i].x != 2*lines[i].x || math.Abs(file[i].mbps-lines[i].mbps) > 0.005+1e-9 {
			t.Errorf("row %d: %+v and %+v", i, lines[i], file[i])
		}
	}
}

func TestNetPIPELatencyHeader(t *testing.T) {
	runs := npRead(t, "np-2.4-lkml-e1000-three-runs.txt")
	for i, want := range []float64{123, 63, 30} {
		if len(runs[i].Scalars) != 1 || runs[i].Scalars[0] != (results.Scalar{Name: "latency", Unit: "us", Value: want}) {
			t.Errorf("run %d: scalars %+v, want latency %v us", i, runs[i].Scalars, want)
		}
	}
}

func TestNetPIPEIntegrityCheck(t *testing.T) {
	runs := npRead(t, "nptcp-3.7.2-integrity.txt")
	if len(runs) != 1 {
		t.Fatalf("%d runs", len(runs))
	}
	b := runs[0]
	want := results.Check{Name: "integrity", Value: 20, Threshold: 20, Op: ">=", Passed: true}
	if len(b.Samples) != 0 || len(b.Checks) != 1 || b.Checks[0] != want || b.Status != results.StatusOK || b.Params["integrity_check"] != "true" {
		t.Errorf("got status %s, checks %+v, %d samples, params %v", b.Status, b.Checks, len(b.Samples), b.Params)
	}
}

// A run whose launcher reports a failure after its last complete row keeps
// its rows and is marked failed.
func TestNetPIPEFailureAfterRowsMarksRunFailed(t *testing.T) {
	data := mustRead(t, "testdata/np-openmpi-srun-pmix.stdout")
	// The srun line as np-openmpi-srun-pmi2.txt shows it.
	in := string(data) + "srun: error: n2: task 1: Exited with exit code 1\n"
	runs, err := Parse("x.out", "auto", []byte(in))
	if err != nil {
		t.Fatal(err)
	}
	b := runs[0]
	if len(runs) != 1 || b.Status != results.StatusFailed || len(curve(b, "latency")) != 106 ||
		!strings.Contains(b.Error, "line 112") || !strings.Contains(b.Error, "Exited with exit code 1") {
		t.Errorf("got %d runs, status %s, error %q", len(runs), b.Status, b.Error)
	}
	if err := b.Validate(); err != nil {
		t.Error(err)
	}
}

// srun -l puts "N: " before every line; NetPIPE's own row number follows.
func TestNetPIPESrunLabels(t *testing.T) {
	data := mustRead(t, "testdata/np-openmpi-srun-pmix.stdout")
	var buf bytes.Buffer
	for _, l := range strings.SplitAfter(string(data), "\n") {
		if l != "" {
			buf.WriteString("0: " + l)
		}
	}
	labelled, err := Parse("l.out", "auto", buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	npCheckAgree(t, "labelled", labelled, "plain", npRead(t, "np-openmpi-srun-pmix.stdout"))
	if labelled[0].Benchmark.Name != "NPmpi" {
		t.Errorf("name %q", labelled[0].Benchmark.Name)
	}
}

func TestNetPIPERefusals(t *testing.T) {
	file := func(name string) string {
		data := mustRead(t, filepath.Join("testdata", name))
		return string(data)
	}
	head := func(name string, n int) string {
		return strings.Join(strings.SplitAfter(file(name), "\n")[:n], "")
	}
	checkRefused(t, "netpipe", []badInput{
		{"Open MPI without PMI under srun", file("np-openmpi-srun-pmi2.txt"),
			`x:4: no NetPIPE results: the MPI library could not start under srun ("but OMPI was not built with SLURM's PMI support and therefore cannot"): use srun --mpi=pmix, or mpirun`},
		// Not NetPIPE at all: a hello program whose second MPI_Init in the
		// same srun step failed (see the lab notes).
		{"second MPI_Init in one step", file("mpi-twice-in-one-step.txt"),
			`x:5: no NetPIPE results: an MPI call failed ("1: *** An error occurred in MPI_Init")`},
		{"NPtcp -s failing before its first row", file("nptcp-3.7.2-stream-failed.txt"),
			`x:14: no NetPIPE results: NetPIPE stopped ("NetPIPE: error writing or reading synchronization string: Connection reset by peer")`},
		{"integrity-check -o file", file("nptcp-3.7.2-integrity.out"),
			"x:1: NetPIPE -o line has 2 columns (bytes, repeats): an integrity-check (-i) file holds no measurements"},
		{"killed mid-row", head("nptcp-transmitter.stdout", 20) + "  16:      45 bytes   5483 times --> ",
			"x:21: NetPIPE row 45 bytes, 5483 times has no result: the run stopped before this size was measured"},
		{"NetPIPE's own error mid-row", head("nptcp-transmitter.stdout", 8) + "  4:       6 bytes    200 times --> NetPIPE: error writing or reading synchronization string: Connection reset by peer\n",
			"x:9: NetPIPE row 6 bytes, 200 times has no result: NetPIPE: error writing or reading synchronization string: Connection reset by peer"},
		{"rate 1.2.3", head("nptcp-transmitter.stdout", 8) + "  4:       6 bytes   7150 times -->      1.2.3 Mbps in      11.53 usec\n",
			`x:9: NetPIPE row 6 bytes: rate "1.2.3" or time "11.53" is not a number`},
		{"missing time", head("nptcp-transmitter.stdout", 8) + "  4:       6 bytes   7150 times -->      3.97 Mbps in\n",
			`x:9: NetPIPE row 6 bytes: "3.97 Mbps in" is not "<rate> Mbps in <time> usec"`},
		{"size not a number", head("nptcp-transmitter.stdout", 8) + "  4:     6.0 bytes   7150 times -->      3.97 Mbps in      11.53 usec\n",
			`x:9: NetPIPE row does not parse: "4:     6.0 bytes   7150 times -->      3.97 Mbps in      11.53 usec"`},
		{"main loop without rows", head("nptcp-transmitter.stdout", 4),
			"x:4: NetPIPE started its main loop but printed no result row"},
		{"-o file with a bad line", head("nptcp-loopback.out", 5) + "       8 5.65 0.0000108 7\n",
			`x:6: NetPIPE -o line has 4 columns, want 3 (bytes, Mbps, seconds): "8 5.65 0.0000108 7"`},
		{"-o file with 1.2.3", head("nptcp-loopback.out", 5) + "       8 5.6.5 0.0000108\n",
			`x:6: NetPIPE -o line: "5.6.5" or "0.0000108" is not a number`},
	})
}

// Chatter before, between and after runs is skipped: the Slurm and UCX
// lines the project's conventions name, Open MPI's help text.
func TestNetPIPENoiseIsSkipped(t *testing.T) {
	data := mustRead(t, "testdata/nptcp-transmitter.stdout")
	lines := strings.SplitAfter(string(data), "\n")
	noisy := "srun: job 123 queued and waiting for resources\n[host:4242] SET UCX_NET_DEVICES=mlx5_0:1\n" +
		strings.Join(lines[:60], "") + "[host:4242] SET UCX_NET_DEVICES=mlx5_0:1\n\n" + strings.Join(lines[60:], "") +
		"--------------------------------------------------------------------------\nA warning after the run\n"
	runs, err := Parse("noisy", "auto", []byte(noisy))
	if err != nil {
		t.Fatal(err)
	}
	npCheckAgree(t, "noisy", runs, "clean", npRead(t, "nptcp-transmitter.stdout"))
}

func TestNetPIPESniff(t *testing.T) {
	for file, want := range map[string]string{
		"000-netpipe-NPib-infiniband.txt":  "netpipe",
		"nptcp-loopback.out":               "netpipe",
		"np-openmpi-mpirun-tag-output.txt": "netpipe",
		"np-2.4-lkml-e1000-three-runs.txt": "netpipe",
		"np-article000-three-runs.txt":     "netpipe",
		"nptcp-3.7.2-stream-failed.txt":    "netpipe",
		"np-openmpi-srun-pmi2.txt":         "",
		"mpi-twice-in-one-step.txt":        "",
		"nptcp-3.7.2-integrity.out":        "",
	} {
		data := mustRead(t, filepath.Join("testdata", file))
		f, err := Detect(data)
		if f.Name != want || (want == "") != (err != nil) {
			t.Errorf("%s: detected %q (%v), want %q", file, f.Name, err, want)
		}
	}
	// Three numbers a line, sizes not growing: not an -o file.
	if s := sniffNetPIPE([]byte("3 1.0 2.0\n2 1.0 2.0\n1 1.0 2.0\n")); s != 0 {
		t.Errorf("decreasing sizes scored %d", s)
	}
	if s := sniffNetPIPE([]byte("1 2 3\n")); s != 0 {
		t.Errorf("one line scored %d", s)
	}
	for file, want := range map[string]int{"np-article000-three-runs.txt": 90, "nptcp-loopback.out": 40, "nptcp-3.7.2-stream-failed.txt": 60} {
		data := mustRead(t, filepath.Join("testdata", file))
		if s := sniffNetPIPE(data); s != want {
			t.Errorf("%s scored %d, want %d", file, s, want)
		}
	}
}

func TestNetPIPEMicroseconds(t *testing.T) {
	for in, want := range map[string]float64{"0.000123": 123, "0.00001480": 14.8, "1.5e-05": 15, "2": 2e6, "0": 0} {
		if v, ok := npMicro(in); !ok || v != want {
			t.Errorf("npMicro(%q) = %v, %v; want %v", in, v, ok, want)
		}
	}
	for _, in := range []string{"", "1.2.3", "1e400", "NaN", "0x1p3"} {
		if _, ok := npMicro(in); ok {
			t.Errorf("npMicro(%q) accepted", in)
		}
	}
}

// Runs NPtcp on loopback and parses both what it prints and its -o file.
func TestNetPIPEIntegrationNPtcp(t *testing.T) {
	nptcp := testenv.LookPath(t, "NPtcp", "netpipe-tcp")
	if testing.Short() {
		t.Skip("-short")
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "np.out")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var printed []byte
	var err error
	for attempt := 0; attempt < 5; attempt++ {
		port := testenv.FreePort(t)
		recv := exec.CommandContext(ctx, nptcp, "-P", port, "-u", "65536", "-p", "0", "-n", "50")
		recv.Dir = dir
		if err := recv.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(200 * time.Millisecond) // the receiver's listen
		tx := exec.CommandContext(ctx, nptcp, "-h", "127.0.0.1", "-P", port, "-u", "65536", "-p", "0", "-n", "50", "-o", out)
		tx.Dir = dir
		printed, err = tx.CombinedOutput()
		if err == nil {
			recv.Wait()
			break
		}
		recv.Process.Kill()
		recv.Wait()
	}
	if err != nil {
		t.Fatalf("NPtcp transmitter: %v\n%s", err, printed)
	}
	fileData := mustRead(t, out)
	lines, err := Parse("NPtcp output", "auto", printed)
	if err != nil {
		t.Fatalf("%v\n%s", err, printed)
	}
	file, err := Parse("np.out", "auto", fileData)
	if err != nil {
		t.Fatalf("%v\n%s", err, fileData)
	}
	if lines[0].Benchmark.Name != "NPtcp" || lines[0].Params["perturbation"] != "0" || lines[0].Params["module"] != "tcp" {
		t.Errorf("benchmark %+v, params %v", lines[0].Benchmark, lines[0].Params)
	}
	npCheckAgree(t, "progress lines", lines, "-o file", file)
	pts := npPoints(t, lines[0])
	// -p 0 -u 65536: 1, 2, 3, 4, 6, 8, 12, … 65536 bytes.
	if pts[0].x != 1 || pts[len(pts)-1].x != 65536 || pts[0].times != 50 {
		t.Errorf("first %+v, last %+v", pts[0], pts[len(pts)-1])
	}
}

func FuzzNetPIPE(f *testing.F) {
	golden.Seed(f, "testdata/000-netpipe-NPmpi-infiniband.txt", "testdata/nptcp-loopback.out", "testdata/np-openmpi-mpirun-tag-output.txt",
		"testdata/np-2.4-lkml-e1000-three-runs.txt", "testdata/nptcp-3.7.2-integrity.txt", "testdata/np-openmpi-srun-pmi2.txt", "testdata/nptcp-3.7.2-stream-failed.txt")
	f.Add([]byte("  0:       1 bytes   3121 times -->      0.19 Mbps in      40.08 usec\n  1: 2 bytes 1 times --> "))
	fuzzParse(f, ParseNetPIPE, func(t *testing.T, data []byte, runs []*results.Bundle, err error) {
		again, err2 := ParseNetPIPE("fuzz", bytes.NewReader(data))
		if (err == nil) != (err2 == nil) || len(runs) != len(again) {
			t.Fatalf("two parses differ: %v / %v", err, err2)
		}
		for _, b := range runs {
			if len(b.Samples) == 0 && len(b.Checks) == 0 {
				t.Fatal("a run with nothing in it")
			}
		}
	})
}
