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

type imbRunWant struct {
	name    string
	version string
	params  map[string]string // a subset of Params
	curves  []curveWant
}

func imbCheckRun(t *testing.T, where string, b *results.Bundle, w imbRunWant) {
	t.Helper()
	checkRunHead(t, where, b, w.name, w.version, w.params)
	checkCurves(t, where, b, w.curves)
}

func TestIMBFixtures(t *testing.T) {
	lat := func(n int, first, last, peak point) curveWant {
		return curveWant{"latency", "us", n, first, last, peak}
	}
	tests := []struct {
		file string
		runs int
		want map[int]imbRunWant // by run index
	}{
		{"imb-4.1-mpi1-juno-internode.txt", 17, map[int]imbRunWant{
			0: {"IMB-MPI1 PingPong", "4.1", map[string]string{"processes": "2", "imb_mbyte": "1048576", "imb_mbyte_basis": "version",
				"max_message_length": "4194304", "calling_sequence": "imb/src/IMB-MPI1", "machine": "aarch64", "mpi_version": "2.1"},
				[]curveWant{
					lat(24, point{0, 155.82}, point{4194304, 36946.39}, point{4194304, 36946.39}),
					{"bandwidth_imb", "Mbytes/sec", 23, point{1, 0.01}, point{4194304, 108.26}, point{4194304, 108.26}},
					{"bandwidth", "MB/s", 23, point{1, mibToMB(0.01)}, point{4194304, mibToMB(108.26)}, point{4194304, mibToMB(108.26)}},
				}},
			2: {"IMB-MPI1 Sendrecv", "4.1", nil, []curveWant{
				lat(24, point{0, 287.04}, point{4194304, 68863.80}, point{4194304, 68863.80}),
				{"bandwidth_imb", "Mbytes/sec", 23, point{1, 0.01}, point{4194304, 116.01}, point{32768, 129.68}},
			}},
			3: {"IMB-MPI1 Exchange", "4.1", nil, []curveWant{
				{"bandwidth_imb", "Mbytes/sec", 23, point{1, 0.01}, point{4194304, 132.74}, point{2097152, 142.52}},
			}},
			4: {"IMB-MPI1 Allreduce", "4.1", nil, []curveWant{
				lat(22, point{0, 0.33}, point{4194304, 62210.20}, point{4194304, 62210.20}),
				{"bandwidth", "", 0, point{}, point{}, point{}},
			}},
			15: {"IMB-MPI1 Bcast", "4.1", nil, []curveWant{
				lat(24, point{0, 0.27}, point{4194304, 46824.66}, point{4194304, 46824.66}),
			}},
			16: {"IMB-MPI1 Barrier", "4.1", map[string]string{"processes": "2"}, []curveWant{
				lat(1, point{-1, 287.38}, point{-1, 287.38}, point{-1, 287.38}),
			}},
		}},
		{"imb-4.1-ext-juno-intranode.txt", 11, map[int]imbRunWant{
			0: {"IMB-EXT Window", "4.1", map[string]string{"mode": ""}, []curveWant{
				lat(22, point{0, 439.14}, point{4194304, 214.00}, point{4, 450.61}),
			}},
			1: {"IMB-EXT Unidir_Get", "4.1", map[string]string{"mode": "aggregate", "calling_sequence": "imb/src/IMB-EXT"}, []curveWant{
				lat(22, point{0, 0.15}, point{4194304, 1718.71}, point{4194304, 1718.71}),
				{"bandwidth_imb", "Mbytes/sec", 21, point{4, 2.24}, point{4194304, 2327.32}, point{4194304, 2327.32}},
			}},
			2: {"IMB-EXT Unidir_Get", "4.1", map[string]string{"mode": "non-aggregate"}, []curveWant{
				{"bandwidth_imb", "Mbytes/sec", 21, point{4, 0.40}, point{4194304, 1429.14}, point{524288, 2384.48}},
			}},
			10: {"IMB-EXT Accumulate", "4.1", map[string]string{"mode": "non-aggregate"}, []curveWant{
				lat(22, point{0, 6.48}, point{4194304, 29591.64}, point{4194304, 29591.64}),
			}},
		}},
		{"imb-2019u5-biband-npmin1-excalibur.txt", 6, map[int]imbRunWant{
			0: {"IMB-MPI1 Biband", "2019 Update 5", map[string]string{"processes": "2", "additional_processes": "62",
				"imb_mbyte": "1000000", "imb_mbyte_basis": "version", "calling_sequence": "IMB-MPI1 biband -npmin 1"}, []curveWant{
				{"message_rate", "messages/s", 24, point{0, 5497722}, point{4194304, 2279}, point{0, 5497722}},
				{"bandwidth", "MB/s", 23, point{1, 5.43}, point{4194304, 9557.57}, point{16384, 10340.77}},
				{"latency", "", 0, point{}, point{}, point{}},
			}},
			3: {"IMB-MPI1 Biband", "2019 Update 5", map[string]string{"processes": "16", "additional_processes": "48"}, []curveWant{
				{"bandwidth_imb", "Mbytes/sec", 23, point{1, 40.77}, point{4194304, 16909.58}, point{16384, 76044.13}},
			}},
			5: {"IMB-MPI1 Biband", "2019 Update 5", map[string]string{"processes": "64", "additional_processes": ""}, []curveWant{
				{"message_rate", "messages/s", 24, point{0, 2809997}, point{4194304, 4885}, point{256, 28905558}},
			}},
		}},
		{"imb-2019u5-pingpong-excalibur.txt", 1, map[int]imbRunWant{
			0: {"IMB-MPI1 PingPong", "2019 Update 5", map[string]string{"processes": "2"}, []curveWant{
				lat(24, point{0, 1.12}, point{4194304, 672.03}, point{4194304, 672.03}),
				{"bandwidth", "MB/s", 23, point{1, 0.89}, point{4194304, 6241.24}, point{4194304, 6241.24}},
			}},
		}},
		{"imb-2019u6-multi-allgather-show-tail-pkb.txt", 7, map[int]imbRunWant{
			0: {"IMB-MPI1 Multi-Allgather", "2019 Update 6", map[string]string{"groups": "60", "processes": "2", "max_message_length": "512"}, []curveWant{
				lat(1, point{512, 33.80}, point{512, 33.80}, point{512, 33.80}),
			}},
			4: {"IMB-MPI1 Multi-Allgather", "2019 Update 6", map[string]string{"groups": "3", "processes": "32", "additional_processes": "24"}, []curveWant{
				lat(1, point{512, 89.08}, point{512, 89.08}, point{512, 89.08}),
			}},
			6: {"IMB-MPI1 Allgather", "2019 Update 6", map[string]string{"groups": "", "processes": "120"}, []curveWant{
				lat(1, point{512, 177.07}, point{512, 177.07}, point{512, 177.07}),
			}},
		}},
		{"imb-2019u6-multi-pingpong-pkb.txt", 1, map[int]imbRunWant{
			0: {"IMB-MPI1 Multi-PingPong", "2019 Update 6", map[string]string{"groups": "2", "processes": "2", "imb_mbyte_basis": "version"}, []curveWant{
				lat(2, point{1024, 59.15}, point{2048, 66.40}, point{2048, 66.40}),
				{"bandwidth", "MB/s", 2, point{1024, 16.68}, point{2048, 29.77}, point{2048, 29.77}},
			}},
		}},
		{"imb-2019u6-multi-barrier-pkb.txt", 2, map[int]imbRunWant{
			0: {"IMB-MPI1 Multi-Barrier", "2019 Update 6", map[string]string{"groups": "2", "processes": "2"}, []curveWant{
				lat(1, point{-1, 80.90}, point{-1, 80.90}, point{-1, 80.90}),
			}},
			1: {"IMB-MPI1 Barrier", "2019 Update 6", map[string]string{"processes": "4"}, []curveWant{
				lat(1, point{-1, 91.24}, point{-1, 91.24}, point{-1, 91.24}),
			}},
		}},
		{"imb-2019u6-pingpong-show-tail-pkb.txt", 1, map[int]imbRunWant{
			0: {"IMB-MPI1 PingPong", "2019 Update 6", nil, []curveWant{
				lat(2, point{0, 1.17}, point{1024, 1.80}, point{1024, 1.80}),
				{"bandwidth", "MB/s", 1, point{1024, 569.96}, point{1024, 569.96}, point{1024, 569.96}},
			}},
		}},
		// No title line: the program comes from the calling sequence, and the
		// two rows cannot tell the Mbyte apart.
		{"imb-rma-one_put_all-no-title-pkb.txt", 1, map[int]imbRunWant{
			0: {"IMB-RMA One_put_all", "", map[string]string{"processes": "2", "imb_mbyte": "1000000", "imb_mbyte_basis": "assumed"}, []curveWant{
				lat(2, point{0, 0.10}, point{1, 10.01}, point{1, 10.01}),
			}},
		}},
		{"imb-2021.2-alltoall-np2-np4-oci-indented.txt", 2, map[int]imbRunWant{
			0: {"IMB-MPI1 Alltoall", "2021.2", map[string]string{"processes": "2", "additional_processes": "2", "calling_sequence": "IMB-MPI1 -mem 4 Alltoall"}, []curveWant{
				lat(24, point{0, 0.07}, point{4194304, 1005.36}, point{4194304, 1005.36}),
			}},
			1: {"IMB-MPI1 Alltoall", "2021.2", map[string]string{"processes": "4", "additional_processes": ""}, []curveWant{
				lat(24, point{0, 0.08}, point{4194304, 1688.05}, point{4194304, 1688.05}),
			}},
		}},
		{"imb-4.0-pingpong-openflight.txt", 1, map[int]imbRunWant{
			0: {"IMB-MPI1 PingPong", "4.0", map[string]string{"processes": "2", "additional_processes": "62", "imb_mbyte": "1048576"}, []curveWant{
				lat(24, point{0, 3.17}, point{4194304, 675.20}, point{4194304, 675.20}),
				{"bandwidth", "MB/s", 23, point{1, mibToMB(0.30)}, point{4194304, mibToMB(5924.16)}, point{2097152, mibToMB(6557.31)}},
			}},
		}},
	}
	for _, tt := range tests {
		runs := readFixture(t, tt.file, "imb")
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
	runs := readFixture(t, "imb-4.1-mpi1-juno-internode.txt", "imb")
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
			lat, bw := curve(b, "latency"), curve(b, "bandwidth_imb")
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
	runs := readFixture(t, "imb-2018-nbc-ireduce_scatter-check-error-issue51.txt", "imb")
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
	checkCurves(t, "Ireduce_scatter", b, []curveWant{
		{"latency", "us", 1, point{0, 0.30}, point{0, 0.30}, point{0, 0.30}},
		{"latency_overlapped", "us", 1, point{0, 0.63}, point{0, 0.63}, point{0, 0.63}},
		{"cpu_time", "us", 1, point{0, 0.30}, point{0, 0.30}, point{0, 0.30}},
		{"overlap", "%", 1, point{0, 0}, point{0, 0}, point{0, 0}},
	})
}

// Sendrecv and the collectives print t_min/t_max/t_avg: the latency is the
// average, with the extremes kept.
func TestIMBMinMax(t *testing.T) {
	runs := readFixture(t, "imb-4.1-mpi1-juno-internode.txt", "imb")
	last := curve(runs[2], "latency")[23]
	if last.Value != 68863.80 || *last.Min != 68766.19 || *last.Max != 68961.41 || last.Iterations != 10 {
		t.Errorf("Sendrecv at 4 MiB: %+v", last)
	}
}

// Inputs that start like IMB output but are broken are refused whole, with
// the file's line.
func TestIMBSyntaxErrors(t *testing.T) {
	const pp = "imb-2019u5-pingpong-excalibur.txt" // table header on line 34, rows 35-58
	checkFirstError(t, "imb", []badTable{
		{"bad number", replaceLine(t, pp, 39, "            8         1000         1.1.3         7.11"), 39, `"1.1.3", want a number`},
		{"missing column", replaceLine(t, pp, 40, "           16         1000         1.12"), 40, "row has 3 columns"},
		{"negative size", replaceLine(t, pp, 40, "          -16         1000         1.12        14.27"), 40, `"-16", want a non-negative integer`},
		{"cut mid-table", cutLines(t, pp, 52), 53, "table ends at 65536 bytes, the header promises 4194304"},
		{"header without rows", cutLines(t, pp, 34), 34, "table header has no rows"},
		{"block without table", cutLines(t, pp, 33), 31, "no result table"},
	})
}

// Launcher chatter before, between and after the blocks, and inside a
// table, changes nothing.
func TestIMBNoiseIsSkipped(t *testing.T) {
	checkNoiseIsSkipped(t, "imb-2019u5-biband-npmin1-excalibur.txt", ParseIMB, func(data string) string {
		noisy := "srun: job 123 queued and waiting for resources\nsrun: job 123 has been allocated resources\n" +
			"[node1:4711] SET UCX_NET_DEVICES=mlx5_0:1\n" + data
		noisy = strings.Replace(noisy, "          512         1000      1336.22      2609795\n",
			"          512         1000      1336.22      2609795\n[1602061675.123456] [node1:4711:0] ib_iface.c:1013 UCX  WARN  something\n", 1)
		noisy = strings.Replace(noisy, "#---------------------------------------------------\n# Benchmarking Biband \n# #processes = 8",
			"MPI startup(): Warning: I_MPI_PMI_LIBRARY will be ignored\n#---------------------------------------------------\n# Benchmarking Biband \n# #processes = 8", 1)
		return noisy + "srun: error: node2: task 1: Exited with exit code 0\n"
	})
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
	lat := curve(runs[0], "latency")
	if len(lat) != 8 || lat[1].Tags["group"] != "1" || *lat[1].X != 0 || lat[1].Value != 10.22 || lat[7].Tags["group"] != "1" || lat[7].Value != 7.15 {
		t.Errorf("latency %+v", lat)
	}
}

// IMB's own failures for one size (out of memory, time limit) end a table
// early without making it a truncated one.
func TestIMBSampleFailures(t *testing.T) {
	in := replaceLine(t, "imb-2019u5-pingpong-excalibur.txt", 58,
		`      4194304 out-of-mem.; needed X=   0.268 GB; use flag "-mem X" or MAX_MEM_USAGE>=X (IMB_mem_info.h)`)
	runs, err := ParseIMB("oom", strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 || len(curve(runs[0], "latency")) != 23 || runs[0].Params["failed_sizes"] != "4194304 bytes: out-of-mem" {
		t.Errorf("runs %+v", runs[0].Params)
	}
}

func TestIMBSniff(t *testing.T) {
	sniffHeads(t, func(f string, data []byte) {
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
	})
}

func TestIMBNoResults(t *testing.T) {
	data := mustRead(t, "testdata/imb-2020-impi-debug-only-pkb.txt")
	if _, err := Parse("dbg", "auto", data); err == nil {
		t.Error("auto: MPI startup chatter alone was accepted")
	}
	_, err := Parse("dbg", "imb", data)
	var se SyntaxErrors
	if !errors.As(err, &se) || !strings.Contains(se[0].Msg, "no imb results") {
		t.Errorf("imb: %v, want no imb results", err)
	}
}

func FuzzIMB(f *testing.F) {
	seedFixtures(f, "testdata/imb-*")
	f.Add([]byte("# Benchmarking Barrier\n #repetitions t_min[usec] t_max[usec] t_avg[usec]\n 1000 1.0 2.0 1.5\n"))
	f.Add([]byte("# Benchmarking X\n Group #bytes #repetitions t[usec] Mbytes/sec defects\n0 0 1 0 0 0\n1: Error X,size = 4\n"))
	fuzzParse(f, ParseIMB, func(t *testing.T, data []byte, runs []*results.Bundle, _ error) {
		// A row yields at most latency, three extra times and two bandwidths.
		if n, lines := samples(runs), bytes.Count(data, []byte("\n"))+1; n > 6*lines {
			t.Fatalf("%d samples from %d lines", n, lines)
		}
	})
}
