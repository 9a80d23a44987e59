package parsers

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sbench/sbench/results"
)

// The fixtures are real IMB outputs; testdata/README.md says where each one
// comes from. Every expected figure below is copied from the file.

// imbPoint is a (message size, value) pair as the tool printed it; x < 0
// stands for a point without a size (Barrier).
type imbPoint struct{ x, v float64 }

type imbCurve struct {
	metric string
	unit   string
	n      int
	first  imbPoint
	last   imbPoint
	peak   imbPoint // the point with the highest value
}

type imbRunWant struct {
	name    string
	version string
	params  map[string]string // a subset of Params
	curves  []imbCurve
}

// imbReadFixture parses a testdata file with format "auto", checks what every
// bundle of a wrapped tool must hold, and returns the runs.
func imbReadFixture(t *testing.T, file, kernel string) []*results.Bundle {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	runs, err := Parse(file, "auto", data)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	for i, b := range runs {
		if err := b.Validate(); err != nil {
			t.Errorf("%s run %d: invalid bundle: %v", file, i, err)
		}
		if b.Benchmark.Kind != "tool" || b.Benchmark.Kernel != kernel || b.Benchmark.Tool == "" {
			t.Errorf("%s run %d: benchmark %+v, want kind tool, kernel %s and a tool", file, i, b.Benchmark, kernel)
		}
		if b.Raw == "" {
			t.Errorf("%s run %d: no raw output", file, i)
		}
	}
	return runs
}

// imbCurveOf returns the samples of one metric, in order.
func imbCurveOf(b *results.Bundle, metric string) []results.Sample {
	var out []results.Sample
	for _, s := range b.Samples {
		if s.Metric == metric {
			out = append(out, s)
		}
	}
	return out
}

func imbPointOf(s results.Sample) imbPoint {
	if s.X == nil {
		return imbPoint{-1, s.Value}
	}
	return imbPoint{*s.X, s.Value}
}

// imbNear compares computed figures (unit conversions) to 1e-9 relative.
func imbNear(a, b float64) bool {
	return a == b || math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b))
}

func imbCheckCurves(t *testing.T, where string, b *results.Bundle, curves []imbCurve) {
	t.Helper()
	for _, c := range curves {
		pts := imbCurveOf(b, c.metric)
		if len(pts) != c.n {
			t.Errorf("%s: %d %s points, want %d", where, len(pts), c.metric, c.n)
			continue
		}
		if c.n == 0 {
			continue
		}
		peak := pts[0]
		for _, s := range pts {
			if s.Unit != c.unit {
				t.Errorf("%s: %s unit %q, want %q", where, c.metric, s.Unit, c.unit)
				break
			}
			if (s.X == nil) != (c.first.x < 0) || (s.X != nil && s.XUnit != results.UnitBytes) {
				t.Errorf("%s: %s point x %v %q, want bytes", where, c.metric, s.X, s.XUnit)
				break
			}
			if s.Value > peak.Value {
				peak = s
			}
		}
		for _, p := range []struct {
			what      string
			got, want imbPoint
		}{{"first", imbPointOf(pts[0]), c.first}, {"last", imbPointOf(pts[len(pts)-1]), c.last}, {"peak", imbPointOf(peak), c.peak}} {
			if p.got.x != p.want.x || !imbNear(p.got.v, p.want.v) {
				t.Errorf("%s: %s %s point %v, want %v", where, p.what, c.metric, p.got, p.want)
			}
		}
	}
}

func imbCheckRun(t *testing.T, where string, b *results.Bundle, w imbRunWant) {
	t.Helper()
	if b.Benchmark.Name != w.name || b.Benchmark.ToolVersion != w.version {
		t.Errorf("%s: benchmark %q version %q, want %q version %q", where, b.Benchmark.Name, b.Benchmark.ToolVersion, w.name, w.version)
	}
	for k, v := range w.params {
		if b.Params[k] != v {
			t.Errorf("%s: param %s = %q, want %q", where, k, b.Params[k], v)
		}
	}
	imbCheckCurves(t, where, b, w.curves)
}

// imbMiB converts IMB's pre-2018 Mbytes/sec (2^20 bytes/s) to MB/s.
func imbMiB(v float64) float64 { return v * 1048576 / 1e6 }

func TestIMBFixtures(t *testing.T) {
	lat := func(n int, first, last, peak imbPoint) imbCurve {
		return imbCurve{"latency", "us", n, first, last, peak}
	}
	tests := []struct {
		file string
		runs int
		want map[int]imbRunWant // by run index
	}{
		{"imb-4.1-mpi1-juno-internode.txt", 17, map[int]imbRunWant{
			0: {"IMB-MPI1 PingPong", "4.1", map[string]string{"processes": "2", "imb_mbyte": "1048576", "imb_mbyte_basis": "version",
				"max_message_length": "4194304", "calling_sequence": "imb/src/IMB-MPI1", "machine": "aarch64", "mpi_version": "2.1"},
				[]imbCurve{
					lat(24, imbPoint{0, 155.82}, imbPoint{4194304, 36946.39}, imbPoint{4194304, 36946.39}),
					{"bandwidth_imb", "Mbytes/sec", 23, imbPoint{1, 0.01}, imbPoint{4194304, 108.26}, imbPoint{4194304, 108.26}},
					{"bandwidth", "MB/s", 23, imbPoint{1, imbMiB(0.01)}, imbPoint{4194304, imbMiB(108.26)}, imbPoint{4194304, imbMiB(108.26)}},
				}},
			2: {"IMB-MPI1 Sendrecv", "4.1", nil, []imbCurve{
				lat(24, imbPoint{0, 287.04}, imbPoint{4194304, 68863.80}, imbPoint{4194304, 68863.80}),
				{"bandwidth_imb", "Mbytes/sec", 23, imbPoint{1, 0.01}, imbPoint{4194304, 116.01}, imbPoint{32768, 129.68}},
			}},
			3: {"IMB-MPI1 Exchange", "4.1", nil, []imbCurve{
				{"bandwidth_imb", "Mbytes/sec", 23, imbPoint{1, 0.01}, imbPoint{4194304, 132.74}, imbPoint{2097152, 142.52}},
			}},
			4: {"IMB-MPI1 Allreduce", "4.1", nil, []imbCurve{
				lat(22, imbPoint{0, 0.33}, imbPoint{4194304, 62210.20}, imbPoint{4194304, 62210.20}),
				{"bandwidth", "", 0, imbPoint{}, imbPoint{}, imbPoint{}},
			}},
			15: {"IMB-MPI1 Bcast", "4.1", nil, []imbCurve{
				lat(24, imbPoint{0, 0.27}, imbPoint{4194304, 46824.66}, imbPoint{4194304, 46824.66}),
			}},
			16: {"IMB-MPI1 Barrier", "4.1", map[string]string{"processes": "2"}, []imbCurve{
				lat(1, imbPoint{-1, 287.38}, imbPoint{-1, 287.38}, imbPoint{-1, 287.38}),
			}},
		}},
		{"imb-4.1-ext-juno-intranode.txt", 11, map[int]imbRunWant{
			0: {"IMB-EXT Window", "4.1", map[string]string{"mode": ""}, []imbCurve{
				lat(22, imbPoint{0, 439.14}, imbPoint{4194304, 214.00}, imbPoint{4, 450.61}),
			}},
			1: {"IMB-EXT Unidir_Get", "4.1", map[string]string{"mode": "aggregate", "calling_sequence": "imb/src/IMB-EXT"}, []imbCurve{
				lat(22, imbPoint{0, 0.15}, imbPoint{4194304, 1718.71}, imbPoint{4194304, 1718.71}),
				{"bandwidth_imb", "Mbytes/sec", 21, imbPoint{4, 2.24}, imbPoint{4194304, 2327.32}, imbPoint{4194304, 2327.32}},
			}},
			2: {"IMB-EXT Unidir_Get", "4.1", map[string]string{"mode": "non-aggregate"}, []imbCurve{
				{"bandwidth_imb", "Mbytes/sec", 21, imbPoint{4, 0.40}, imbPoint{4194304, 1429.14}, imbPoint{524288, 2384.48}},
			}},
			10: {"IMB-EXT Accumulate", "4.1", map[string]string{"mode": "non-aggregate"}, []imbCurve{
				lat(22, imbPoint{0, 6.48}, imbPoint{4194304, 29591.64}, imbPoint{4194304, 29591.64}),
			}},
		}},
		{"imb-2019u5-biband-npmin1-excalibur.txt", 6, map[int]imbRunWant{
			0: {"IMB-MPI1 Biband", "2019 Update 5", map[string]string{"processes": "2", "additional_processes": "62",
				"imb_mbyte": "1000000", "imb_mbyte_basis": "version", "calling_sequence": "IMB-MPI1 biband -npmin 1"}, []imbCurve{
				{"message_rate", "messages/s", 24, imbPoint{0, 5497722}, imbPoint{4194304, 2279}, imbPoint{0, 5497722}},
				{"bandwidth", "MB/s", 23, imbPoint{1, 5.43}, imbPoint{4194304, 9557.57}, imbPoint{16384, 10340.77}},
				{"latency", "", 0, imbPoint{}, imbPoint{}, imbPoint{}},
			}},
			3: {"IMB-MPI1 Biband", "2019 Update 5", map[string]string{"processes": "16", "additional_processes": "48"}, []imbCurve{
				{"bandwidth_imb", "Mbytes/sec", 23, imbPoint{1, 40.77}, imbPoint{4194304, 16909.58}, imbPoint{16384, 76044.13}},
			}},
			5: {"IMB-MPI1 Biband", "2019 Update 5", map[string]string{"processes": "64", "additional_processes": ""}, []imbCurve{
				{"message_rate", "messages/s", 24, imbPoint{0, 2809997}, imbPoint{4194304, 4885}, imbPoint{256, 28905558}},
			}},
		}},
		{"imb-2019u5-pingpong-excalibur.txt", 1, map[int]imbRunWant{
			0: {"IMB-MPI1 PingPong", "2019 Update 5", map[string]string{"processes": "2"}, []imbCurve{
				lat(24, imbPoint{0, 1.12}, imbPoint{4194304, 672.03}, imbPoint{4194304, 672.03}),
				{"bandwidth", "MB/s", 23, imbPoint{1, 0.89}, imbPoint{4194304, 6241.24}, imbPoint{4194304, 6241.24}},
			}},
		}},
		{"imb-2019u6-multi-allgather-show-tail-pkb.txt", 7, map[int]imbRunWant{
			0: {"IMB-MPI1 Multi-Allgather", "2019 Update 6", map[string]string{"groups": "60", "processes": "2", "max_message_length": "512"}, []imbCurve{
				lat(1, imbPoint{512, 33.80}, imbPoint{512, 33.80}, imbPoint{512, 33.80}),
			}},
			4: {"IMB-MPI1 Multi-Allgather", "2019 Update 6", map[string]string{"groups": "3", "processes": "32", "additional_processes": "24"}, []imbCurve{
				lat(1, imbPoint{512, 89.08}, imbPoint{512, 89.08}, imbPoint{512, 89.08}),
			}},
			6: {"IMB-MPI1 Allgather", "2019 Update 6", map[string]string{"groups": "", "processes": "120"}, []imbCurve{
				lat(1, imbPoint{512, 177.07}, imbPoint{512, 177.07}, imbPoint{512, 177.07}),
			}},
		}},
		{"imb-2019u6-multi-pingpong-pkb.txt", 1, map[int]imbRunWant{
			0: {"IMB-MPI1 Multi-PingPong", "2019 Update 6", map[string]string{"groups": "2", "processes": "2", "imb_mbyte_basis": "version"}, []imbCurve{
				lat(2, imbPoint{1024, 59.15}, imbPoint{2048, 66.40}, imbPoint{2048, 66.40}),
				{"bandwidth", "MB/s", 2, imbPoint{1024, 16.68}, imbPoint{2048, 29.77}, imbPoint{2048, 29.77}},
			}},
		}},
		{"imb-2019u6-multi-barrier-pkb.txt", 2, map[int]imbRunWant{
			0: {"IMB-MPI1 Multi-Barrier", "2019 Update 6", map[string]string{"groups": "2", "processes": "2"}, []imbCurve{
				lat(1, imbPoint{-1, 80.90}, imbPoint{-1, 80.90}, imbPoint{-1, 80.90}),
			}},
			1: {"IMB-MPI1 Barrier", "2019 Update 6", map[string]string{"processes": "4"}, []imbCurve{
				lat(1, imbPoint{-1, 91.24}, imbPoint{-1, 91.24}, imbPoint{-1, 91.24}),
			}},
		}},
		{"imb-2019u6-pingpong-show-tail-pkb.txt", 1, map[int]imbRunWant{
			0: {"IMB-MPI1 PingPong", "2019 Update 6", nil, []imbCurve{
				lat(2, imbPoint{0, 1.17}, imbPoint{1024, 1.80}, imbPoint{1024, 1.80}),
				{"bandwidth", "MB/s", 1, imbPoint{1024, 569.96}, imbPoint{1024, 569.96}, imbPoint{1024, 569.96}},
			}},
		}},
		// No title line: the program comes from the calling sequence, and the
		// two rows cannot tell the Mbyte apart.
		{"imb-rma-one_put_all-no-title-pkb.txt", 1, map[int]imbRunWant{
			0: {"IMB-RMA One_put_all", "", map[string]string{"processes": "2", "imb_mbyte": "1000000", "imb_mbyte_basis": "assumed"}, []imbCurve{
				lat(2, imbPoint{0, 0.10}, imbPoint{1, 10.01}, imbPoint{1, 10.01}),
			}},
		}},
		{"imb-2021.2-alltoall-np2-np4-oci-indented.txt", 2, map[int]imbRunWant{
			0: {"IMB-MPI1 Alltoall", "2021.2", map[string]string{"processes": "2", "additional_processes": "2", "calling_sequence": "IMB-MPI1 -mem 4 Alltoall"}, []imbCurve{
				lat(24, imbPoint{0, 0.07}, imbPoint{4194304, 1005.36}, imbPoint{4194304, 1005.36}),
			}},
			1: {"IMB-MPI1 Alltoall", "2021.2", map[string]string{"processes": "4", "additional_processes": ""}, []imbCurve{
				lat(24, imbPoint{0, 0.08}, imbPoint{4194304, 1688.05}, imbPoint{4194304, 1688.05}),
			}},
		}},
		{"imb-4.0-pingpong-openflight.txt", 1, map[int]imbRunWant{
			0: {"IMB-MPI1 PingPong", "4.0", map[string]string{"processes": "2", "additional_processes": "62", "imb_mbyte": "1048576"}, []imbCurve{
				lat(24, imbPoint{0, 3.17}, imbPoint{4194304, 675.20}, imbPoint{4194304, 675.20}),
				{"bandwidth", "MB/s", 23, imbPoint{1, imbMiB(0.30)}, imbPoint{4194304, imbMiB(5924.16)}, imbPoint{2097152, imbMiB(6557.31)}},
			}},
		}},
	}
	for _, tt := range tests {
		runs := imbReadFixture(t, tt.file, "imb")
		if len(runs) != tt.runs {
			t.Errorf("%s: %d runs, want %d", tt.file, len(runs), tt.runs)
			continue
		}
		for i, w := range tt.want {
			imbCheckRun(t, tt.file+" run "+w.name, runs[i], w)
		}
		for i, b := range runs {
			if b.Status != results.StatusOK {
				t.Errorf("%s run %d: status %s (%s), want ok", tt.file, i, b.Status, b.Error)
			}
		}
	}
}

// The 4.1 run holds one table per IMB-MPI1 benchmark, in IMB's order.
func TestIMBAllMPI1Benchmarks(t *testing.T) {
	runs := imbReadFixture(t, "imb-4.1-mpi1-juno-internode.txt", "imb")
	want := "PingPong PingPing Sendrecv Exchange Allreduce Reduce Reduce_scatter Allgather Allgatherv Gather Gatherv Scatter Scatterv Alltoall Alltoallv Bcast Barrier"
	var got []string
	for _, b := range runs {
		got = append(got, strings.TrimPrefix(b.Benchmark.Name, "IMB-MPI1 "))
		if b.Benchmark.Tool != "IMB-MPI1" {
			t.Errorf("%s: tool %q", b.Benchmark.Name, b.Benchmark.Tool)
		}
	}
	if strings.Join(got, " ") != want {
		t.Errorf("benchmarks %v, want %s", got, want)
	}
}

// IMB's Mbytes/sec changed from 2^20 to 10^6 bytes/s in IMB 2018. Every
// fixture whose version settles the unit must agree with its own numbers:
// Mbytes/sec = s·size/t_max/Mbyte with s = 1, 2 or 4.
func TestIMBMbyteMatchesTheData(t *testing.T) {
	files, _ := filepath.Glob("testdata/imb-*")
	checked := 0
	for _, f := range files {
		data, _ := os.ReadFile(f)
		runs, err := Parse(f, "imb", data)
		if err != nil {
			continue
		}
		for _, b := range runs {
			if b.Params["imb_mbyte_basis"] != "version" {
				continue
			}
			lat, bw := imbCurveOf(b, "latency"), imbCurveOf(b, "bandwidth_imb")
			if len(lat) == 0 || len(bw) == 0 {
				continue
			}
			// The largest message carries the most digits.
			s, l := bw[len(bw)-1], lat[len(lat)-1]
			tmax := l.Value
			if l.Max != nil {
				tmax = *l.Max
			}
			mbyte := *s.X / tmax / s.Value * 1e6 // times the benchmark's scale
			var best float64
			for _, scale := range []float64{1, 2, 4} {
				for _, unit := range []float64{1e6, 1 << 20} {
					if math.Abs(math.Log(mbyte*scale/unit)) < 0.01 {
						best = unit
					}
				}
			}
			if got := b.Params["imb_mbyte"]; best == 0 || got != map[float64]string{1e6: "1000000", 1 << 20: "1048576"}[best] {
				t.Errorf("%s %s: Mbyte from the data %v, from the version %s", f, b.Benchmark.Name, best, got)
			}
			checked++
		}
	}
	if checked < 10 {
		t.Errorf("only %d tables checked", checked)
	}
}

func TestIMBMbyteFromVersion(t *testing.T) {
	for v, want := range map[string]float64{
		"4.1": imbMbyteBinary, "4.0 Update 1": imbMbyteBinary, "V3.2": imbMbyteBinary, "2.3": imbMbyteBinary,
		"2018": imbMbyteDecimal, "2018 Update 1": imbMbyteDecimal, "2019 Update 9": imbMbyteDecimal, "2021.3": imbMbyteDecimal,
		"2017 Update 2": 0, "2017 Beta": 0, "": 0, "x": 0,
	} {
		if got := imbMbyteFromVersion(v); got != want {
			t.Errorf("imbMbyteFromVersion(%q) = %v, want %v", v, got, want)
		}
	}
}

// A CHECK build's data-check error aborts the run: the result is kept but
// marked invalid, with IMB's message.
func TestIMBCheckError(t *testing.T) {
	runs := imbReadFixture(t, "imb-2018-nbc-ireduce_scatter-check-error-issue51.txt", "imb")
	if len(runs) != 1 {
		t.Fatalf("%d runs, want 1", len(runs))
	}
	b := runs[0]
	if b.Benchmark.Name != "IMB-NBC Ireduce_scatter" || b.Benchmark.ToolVersion != "2018" {
		t.Errorf("benchmark %+v", b.Benchmark)
	}
	if b.Status != results.StatusInvalid || !strings.Contains(b.Error, "1: Error Ireduce_scatter_pure,size = 4") {
		t.Errorf("status %s error %q, want invalid naming IMB's error", b.Status, b.Error)
	}
	checks := map[string]results.Check{}
	for _, c := range b.Checks {
		checks[c.Name] = c
	}
	if c := checks["data_check"]; c.Passed || c.Value != 1 {
		t.Errorf("data_check %+v, want one failure", c)
	}
	if c := checks["defects"]; !c.Passed || c.Value != 0 || c.Threshold != imbTol {
		t.Errorf("defects %+v, want 0 within IMB's tolerance", c)
	}
	imbCheckCurves(t, "Ireduce_scatter", b, []imbCurve{
		{"latency", "us", 1, imbPoint{0, 0.30}, imbPoint{0, 0.30}, imbPoint{0, 0.30}},
		{"latency_overlapped", "us", 1, imbPoint{0, 0.63}, imbPoint{0, 0.63}, imbPoint{0, 0.63}},
		{"cpu_time", "us", 1, imbPoint{0, 0.30}, imbPoint{0, 0.30}, imbPoint{0, 0.30}},
		{"overlap", "%", 1, imbPoint{0, 0}, imbPoint{0, 0}, imbPoint{0, 0}},
	})
}

// Sendrecv and the collectives print t_min/t_max/t_avg: the latency is the
// average, with the extremes kept.
func TestIMBMinMax(t *testing.T) {
	runs := imbReadFixture(t, "imb-4.1-mpi1-juno-internode.txt", "imb")
	last := imbCurveOf(runs[2], "latency")[23]
	if last.Value != 68863.80 || *last.Min != 68766.19 || *last.Max != 68961.41 || last.Iterations != 10 {
		t.Errorf("Sendrecv at 4 MiB: %+v", last)
	}
}

// imbCutLines returns a fixture's lines [0, n) joined again.
func imbCutLines(t *testing.T, file string, n int) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(data), "\n")
	return strings.Join(lines[:n], "")
}

func imbReplaceLine(t *testing.T, file string, line int, text string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(data), "\n")
	lines[line-1] = text + "\n"
	return strings.Join(lines, "")
}

// Inputs that start like IMB output but are broken are refused whole, with
// the file's line.
func TestIMBSyntaxErrors(t *testing.T) {
	const pp = "imb-2019u5-pingpong-excalibur.txt" // table header on line 34, rows 35-58
	tests := []struct {
		name, input string
		line        int
		msg         string
	}{
		{"bad number", imbReplaceLine(t, pp, 39, "            8         1000         1.1.3         7.11"), 39, `"1.1.3", want a number`},
		{"missing column", imbReplaceLine(t, pp, 40, "           16         1000         1.12"), 40, "row has 3 columns"},
		{"negative size", imbReplaceLine(t, pp, 40, "          -16         1000         1.12        14.27"), 40, `"-16", want a non-negative integer`},
		{"cut mid-table", imbCutLines(t, pp, 52), 53, "table ends at 65536 bytes, the header promises 4194304"},
		{"header without rows", imbCutLines(t, pp, 34), 34, "table header has no rows"},
		{"block without table", imbCutLines(t, pp, 33), 31, "no result table"},
	}
	for _, tt := range tests {
		_, err := Parse("in.txt", "imb", []byte(tt.input))
		var se SyntaxErrors
		if !errors.As(err, &se) {
			t.Errorf("%s: error %v, want syntax errors", tt.name, err)
			continue
		}
		if se[0].Line != tt.line || !strings.Contains(se[0].Msg, tt.msg) {
			t.Errorf("%s: %v, want line %d: …%s…", tt.name, se[0], tt.line, tt.msg)
		}
	}
}

// Launcher chatter before, between and after the blocks, and inside a
// table, changes nothing.
func TestIMBNoiseIsSkipped(t *testing.T) {
	data, err := os.ReadFile("testdata/imb-2019u5-biband-npmin1-excalibur.txt")
	if err != nil {
		t.Fatal(err)
	}
	clean, err := ParseIMB("clean", bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	noisy := "srun: job 123 queued and waiting for resources\nsrun: job 123 has been allocated resources\n" +
		"[node1:4711] SET UCX_NET_DEVICES=mlx5_0:1\n" + string(data)
	noisy = strings.Replace(noisy, "          512         1000      1336.22      2609795\n",
		"          512         1000      1336.22      2609795\n[1602061675.123456] [node1:4711:0] ib_iface.c:1013 UCX  WARN  something\n", 1)
	noisy = strings.Replace(noisy, "#---------------------------------------------------\n# Benchmarking Biband \n# #processes = 8",
		"MPI startup(): Warning: I_MPI_PMI_LIBRARY will be ignored\n#---------------------------------------------------\n# Benchmarking Biband \n# #processes = 8", 1)
	noisy += "srun: error: node2: task 1: Exited with exit code 0\n"
	got, err := ParseIMB("noisy", strings.NewReader(noisy))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(clean) {
		t.Fatalf("%d runs with noise, %d without", len(got), len(clean))
	}
	for i := range got {
		a, _ := results.Marshal(got[i])
		b, _ := results.Marshal(clean[i])
		if !bytes.Equal(a, b) {
			t.Errorf("run %d differs with noise", i)
		}
	}
}

// -multi 1 prints one row per group and message size, with a Group column
// and a blank line between sizes (IMB_print_header and IMB_display_times in
// src_c/IMB_output.c). No public log of it with IMB's own header lines was
// found: the header lines below follow IMB_output.c, the rows are those of
// a PingPong -multi 1 run quoted on the Open MPI users list (2005, Pallas
// MPI Benchmarks, which print the same table).
func TestIMBMultiGroupColumn(t *testing.T) {
	in := `#------------------------------------------------------------
#    Intel (R) MPI Benchmarks 4.1, MPI-1 part    
#------------------------------------------------------------
# Minimum message length in bytes:   0
# Maximum message length in bytes:   4
#----------------------------------------------------------------
# Benchmarking Multi-PingPong 
# ( 2 groups of 2 processes each running simultaneous ) 
# Group  0:     0    1
#
# Group  1:     2    3
#
#----------------------------------------------------------------
        Group       #bytes #repetitions      t[usec]   Mbytes/sec

            0            0         1000        10.19         0.00
            1            0         1000        10.22         0.00

            0            1         1000         7.28         0.13
            1            1         1000         7.13         0.13

            0            2         1000         7.25         0.26
            1            2         1000         7.12         0.27

            0            4         1000         7.26         0.53
            1            4         1000         7.15         0.53
`
	runs, err := ParseIMB("multi1", strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 || runs[0].Benchmark.Name != "IMB-MPI1 Multi-PingPong" || runs[0].Params["groups"] != "2" {
		t.Fatalf("runs %+v", runs)
	}
	lat := imbCurveOf(runs[0], "latency")
	if len(lat) != 8 || lat[1].Tags["group"] != "1" || *lat[1].X != 0 || lat[1].Value != 10.22 || lat[7].Tags["group"] != "1" || lat[7].Value != 7.15 {
		t.Errorf("latency %+v", lat)
	}
}

// IMB's own failures for one size (out of memory, time limit) end a table
// early without making it a truncated one.
func TestIMBSampleFailures(t *testing.T) {
	in := imbReplaceLine(t, "imb-2019u5-pingpong-excalibur.txt", 58,
		`      4194304 out-of-mem.; needed X=   0.268 GB; use flag "-mem X" or MAX_MEM_USAGE>=X (IMB_mem_info.h)`)
	runs, err := ParseIMB("oom", strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 || len(imbCurveOf(runs[0], "latency")) != 23 || runs[0].Params["failed_sizes"] != "4194304 bytes: out-of-mem" {
		t.Errorf("runs %+v", runs[0].Params)
	}
}

func TestIMBSniff(t *testing.T) {
	files, _ := filepath.Glob("testdata/*")
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil || strings.HasSuffix(f, "README.md") {
			continue
		}
		if len(data) > SniffLen {
			data = data[:SniffLen]
		}
		s := sniffIMB(data)
		isIMB := strings.HasPrefix(filepath.Base(f), "imb-")
		switch {
		case isIMB && strings.Contains(f, "debug-only"):
			if s >= MinSniffScore {
				t.Errorf("%s: sniff %d for MPI startup chatter only", f, s)
			}
		case isIMB:
			if fm, err := Detect(data); err != nil || fm.Name != "imb" {
				t.Errorf("%s: detected %q (%v), want imb", f, fm.Name, err)
			}
		case s >= MinSniffScore:
			t.Errorf("%s: imb sniff %d on another tool's output", f, s)
		}
	}
}

func TestIMBNoResults(t *testing.T) {
	data, err := os.ReadFile("testdata/imb-2020-impi-debug-only-pkb.txt")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Parse("dbg", "auto", data); err == nil {
		t.Error("auto: MPI startup chatter alone was accepted")
	}
	_, err = Parse("dbg", "imb", data)
	var se SyntaxErrors
	if !errors.As(err, &se) || !strings.Contains(se[0].Msg, "no imb results") {
		t.Errorf("imb: %v, want no imb results", err)
	}
}

// imbFuzzSeeds cuts a fixture into pieces of a few kilobytes: the fuzzer
// minimizes every new input for up to a minute, which for whole 30 kB
// fixtures left it almost no time to fuzz.
func imbFuzzSeeds(data []byte) [][]byte {
	const size = 3000
	if len(data) <= size {
		return [][]byte{data}
	}
	var out [][]byte
	for start := 0; start < len(data) && len(out) < 4; start += size {
		end := min(start+size, len(data))
		// Cut at line ends so that every seed is well-formed text.
		if i := bytes.LastIndexByte(data[start:end], '\n'); i > 0 && end < len(data) {
			end = start + i + 1
		}
		out = append(out, data[start:end])
		start = end - size
	}
	return out
}

func FuzzIMB(f *testing.F) {
	files, _ := filepath.Glob("testdata/imb-*")
	for _, file := range files {
		if data, err := os.ReadFile(file); err == nil {
			for _, seed := range imbFuzzSeeds(data) {
				f.Add(seed)
			}
		}
	}
	f.Add([]byte("# Benchmarking Barrier\n #repetitions t_min[usec] t_max[usec] t_avg[usec]\n 1000 1.0 2.0 1.5\n"))
	f.Add([]byte("# Benchmarking X\n Group #bytes #repetitions t[usec] Mbytes/sec defects\n0 0 1 0 0 0\n1: Error X,size = 4\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		runs, err := ParseIMB("fuzz", bytes.NewReader(data))
		if err != nil {
			var se SyntaxErrors
			if !errors.As(err, &se) || len(se) == 0 || len(se) > MaxErrors+1 {
				t.Fatalf("error %v (%T)", err, err)
			}
			return
		}
		lines := bytes.Count(data, []byte("\n")) + 1
		n := 0
		for _, b := range runs {
			if err := b.Validate(); err != nil {
				t.Fatalf("invalid bundle: %v", err)
			}
			n += len(b.Samples)
			if _, err := results.Marshal(b); err != nil {
				t.Fatal(err)
			}
		}
		// A row yields at most latency, three extra times and two bandwidths.
		if n > 6*lines {
			t.Fatalf("%d samples from %d lines", n, lines)
		}
	})
}
