package hpl

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sbench/sbench/parsers"
	"github.com/sbench/sbench/results"
)

func readFixture(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func parseHPLFixture(t testing.TB, name string) []*results.Bundle {
	t.Helper()
	bs, err := ParseHPL(name, bytes.NewReader(readFixture(t, name)))
	if err != nil {
		t.Fatalf("ParseHPL(%s): %v", name, err)
	}
	return bs
}

// scalar returns the value of b's scalar called name.
func scalar(t testing.TB, b *results.Bundle, name string) float64 {
	t.Helper()
	for _, s := range b.Scalars {
		if s.Name == name {
			return s.Value
		}
	}
	t.Fatalf("no scalar %q in %+v", name, b.Scalars)
	return 0
}

func hasScalar(b *results.Bundle, name string) bool {
	for _, s := range b.Scalars {
		if s.Name == name {
			return true
		}
	}
	return false
}

// Article 000 ran HPL 1.0-era code over InfiniBand and over 100 Mbit
// Ethernet; both runs failed two of the three scaled residual checks, so
// neither result may ever be shown as a valid figure.
func TestArticle000RunsAreInvalid(t *testing.T) {
	tests := []struct {
		file           string
		time, gflops   float64
		r1, r2, r3     float64
		wantFirstError string
	}{
		{"000-hpl-infiniband.txt", 736.74, 7.240, 44.6046954, 43.1710652, 8.2276427,
			"residual check failed: ||Ax-b||_oo/(eps*||A||_1*N) = 44.6046954 ≥ 16.0; residual check failed: ||Ax-b||_oo/(eps*||A||_1*||x||_1) = 43.1710652 ≥ 16.0"},
		{"000-hpl-100mbit.txt", 952.82, 5.598, 35.8555115, 34.7030870, 6.6137956,
			"residual check failed: ||Ax-b||_oo/(eps*||A||_1*N) = 35.8555115 ≥ 16.0; residual check failed: ||Ax-b||_oo/(eps*||A||_1*||x||_1) = 34.7030870 ≥ 16.0"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			bs := parseHPLFixture(t, tt.file)
			if len(bs) != 1 {
				t.Fatalf("%d bundles, want 1", len(bs))
			}
			b := bs[0]
			if b.Status != results.StatusInvalid || b.Error != tt.wantFirstError {
				t.Errorf("status %q error %q, want invalid with %q", b.Status, b.Error, tt.wantFirstError)
			}
			if b.Benchmark.Name != "hpl" || b.Benchmark.Tool != "xhpl" || b.Benchmark.ToolVersion != "" {
				t.Errorf("benchmark %+v: the excerpt has no banner, so no version", b.Benchmark)
			}
			for name, want := range map[string]float64{
				"n": 20000, "nb": 104, "p": 1, "q": 4, "time_s": tt.time, "gflops": tt.gflops,
				"residual_1": tt.r1, "residual_2": tt.r2, "residual_3": tt.r3,
				"norm_ax_b": 0, "norm_a_inf": 5076.247098, "norm_a_1": 5074.832190,
				"norm_x_inf": 5.419810, "norm_x_1": 20664.162508,
			} {
				if got := scalar(t, b, name); got != want {
					t.Errorf("%s = %v, want %v", name, got, want)
				}
			}
			wantChecks := []results.Check{
				{Name: "||Ax-b||_oo/(eps*||A||_1*N)", Value: tt.r1, Threshold: 16, Op: "<", Passed: false},
				{Name: "||Ax-b||_oo/(eps*||A||_1*||x||_1)", Value: tt.r2, Threshold: 16, Op: "<", Passed: false},
				{Name: "||Ax-b||_oo/(eps*||A||_oo*||x||_oo)", Value: tt.r3, Threshold: 16, Op: "<", Passed: true},
			}
			if len(b.Checks) != len(wantChecks) {
				t.Fatalf("checks %+v, want %+v", b.Checks, wantChecks)
			}
			for i := range wantChecks {
				if b.Checks[i] != wantChecks[i] {
					t.Errorf("check %d = %+v, want %+v", i, b.Checks[i], wantChecks[i])
				}
			}
			for k, want := range map[string]string{
				"tv": "WR10R2C4", "timer": "wall-clock", "PMAP": "Row-major process mapping",
				"DEPTH": "1", "BCAST": "1ring", "RFACT": "Right", "NDIV": "2", "PFACT": "Crout", "NBMIN": "4",
				"SWAP": "Mix (threshold = 64)", "L1": "transposed form", "U": "transposed form",
				"EQUIL": "yes", "ALIGN": "8 double precision words",
				"eps": "5.421011e-20", "threshold": "16.0", "N": "20000", "NB": "104", "P": "1", "Q": "4",
			} {
				if got := b.Params[k]; got != want {
					t.Errorf("params[%s] = %q, want %q", k, got, want)
				}
			}
		})
	}
}

// Every real output, one row per T/V line: count, versions, first, last and
// peak figures exactly as printed.
func TestHPLFixtures(t *testing.T) {
	tests := []struct {
		file        string
		rows        int
		version     string
		firstTV     string
		firstN      float64
		firstGflops float64
		lastGflops  float64
		peakGflops  float64
		invalid     int
		errPart     string
	}{
		{"hpl-1.0a-ompi-users-18tests.txt", 18, "1.0a", "WR00L2L2", 25920, 21.92, 21.87, 21.92, 0, ""},
		{"hpl-1.0a-tutorial-cut.txt", 2, "1.0a", "WR00L2L2", 5000, 12.13, 12.30, 12.30, 2, `output ends before "End of Tests."`},
		{"hpl-2.2-lbnl-readme-tail.txt", 1, "", "WR00C2R4", 83904, 170.4, 170.4, 170.4, 0, ""},
		{"hpl-2.3-velocity-bench-failed.txt", 2, "2.3", "WR10L2L2", 24576, 43.357, 44.426, 44.426, 2,
			"residual check failed: ||Ax-b||_oo/(eps*(||A||_oo*||x||_oo+||b||_oo)*N) = 4.05852126e+08 ≥ 16.0"},
		{"hpl-2.3-rpi-cluster-log.txt", 7, "2.3", "WR11C2R4", 48768, 26.641, 27.269, 28.165, 0, ""},
		{"hpl-nvidia-wc0.txt", 1, "", "WC0", 299008, 3.370e+05, 3.370e+05, 3.370e+05, 0, ""},
		{"intel-mkl-hpl-failed-excerpt.txt", 1, "", "WR00L2L4", 102144, 2030, 2030, 2030, 1,
			// The excerpt lacks the threshold line: no threshold is made up.
			"residual check failed: ||Ax-b||_oo/(eps*(||A||_oo*||x||_oo+||b||_oo)*N) = 870806.8870057"},
		// HPCC's own HPL (2.0) read as plain xhpl output: the banner and
		// parameters HPCC prints first hold no test and are skipped.
		{"hpccoutf-srun-pmix-N1n2.txt", 1, "2.0", "WR11C2R4", 3000, 72.78, 72.78, 72.78, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			bs := parseHPLFixture(t, tt.file)
			if len(bs) != tt.rows {
				t.Fatalf("%d bundles, want %d", len(bs), tt.rows)
			}
			first, last := bs[0], bs[len(bs)-1]
			if first.Params["tv"] != tt.firstTV || scalar(t, first, "n") != tt.firstN || scalar(t, first, "gflops") != tt.firstGflops {
				t.Errorf("first row %s N=%v %v Gflops, want %s N=%v %v", first.Params["tv"], scalar(t, first, "n"), scalar(t, first, "gflops"), tt.firstTV, tt.firstN, tt.firstGflops)
			}
			if got := scalar(t, last, "gflops"); got != tt.lastGflops {
				t.Errorf("last row %v Gflops, want %v", got, tt.lastGflops)
			}
			peak, invalid := 0.0, 0
			for i, b := range bs {
				peak = max(peak, scalar(t, b, "gflops"))
				if bm := b.Benchmark; bm.ToolVersion != tt.version || bm.Tool != "xhpl" || bm.ToolBenchmark != "hpl" {
					t.Errorf("row %d: tool %q benchmark %q version %q, want xhpl hpl %q", i, bm.Tool, bm.ToolBenchmark, bm.ToolVersion, tt.version)
				}
				if b.Status == results.StatusInvalid {
					invalid++
					if !strings.Contains(b.Error, tt.errPart) {
						t.Errorf("row %d: error %q, want it to say %q", i, b.Error, tt.errPart)
					}
				} else if b.Status != results.StatusOK {
					t.Errorf("row %d: status %q", i, b.Status)
				}
				if err := b.Validate(); err != nil {
					t.Errorf("row %d: %v", i, err)
				}
			}
			if peak != tt.peakGflops || invalid != tt.invalid {
				t.Errorf("peak %v Gflops, %d invalid rows; want %v and %d", peak, invalid, tt.peakGflops, tt.invalid)
			}
		})
	}
}

// A log with several xhpl runs: each run keeps its own parameters and its
// own summary, and its tests are numbered within the run.
func TestHPLSeveralRunsInOneLog(t *testing.T) {
	bs := parseHPLFixture(t, "hpl-2.3-rpi-cluster-log.txt")
	want := []struct {
		test, nb, bcast, nbList, start string
		n                              float64
	}{
		{"1", "96", "1ringM", "96 112 128 184 200", "Thu Nov  9 09:29:43 2023", 48768},
		{"2", "112", "1ringM", "96 112 128 184 200", "Thu Nov  9 10:20:40 2023", 48768},
		{"3", "128", "1ringM", "96 112 128 184 200", "Thu Nov  9 11:11:43 2023", 48768},
		{"4", "184", "1ringM", "96 112 128 184 200", "Thu Nov  9 12:02:50 2023", 48768},
		{"5", "200", "1ringM", "96 112 128 184 200", "Thu Nov  9 12:53:28 2023", 48768},
		{"1", "184", "1ring", "", "Thu Nov  9 14:20:15 2023", 48768},
		{"1", "184", "1ring", "", "Thu Nov  9 15:13:07 2023", 47485},
	}
	for i, w := range want {
		p := bs[i].Params
		if p["test"] != w.test || p["NB"] != w.nb || p["BCAST"] != w.bcast || p["NB.list"] != w.nbList || p["pdgesv_start"] != w.start || scalar(t, bs[i], "n") != w.n {
			t.Errorf("bundle %d: test %s NB %s BCAST %s NB.list %q start %q N %v; want %+v",
				i, p["test"], p["NB"], p["BCAST"], p["NB.list"], p["pdgesv_start"], scalar(t, bs[i], "n"), w)
		}
	}
	if got := scalar(t, bs[3], "residual"); got != 3.02852534e-03 {
		t.Errorf("residual of test 4 = %v", got)
	}
	if c := bs[3].Checks; len(c) != 1 || c[0].Name != "||Ax-b||_oo/(eps*(||A||_oo*||x||_oo+||b||_oo)*N)" || !c[0].Passed || c[0].Threshold != 16 {
		t.Errorf("checks of test 4: %+v", c)
	}
}

func TestHPLVendorExtras(t *testing.T) {
	nv := parseHPLFixture(t, "hpl-nvidia-wc0.txt")[0]
	if got := scalar(t, nv, "gflops_per_gpu"); got != 4.213e+04 {
		t.Errorf("gflops_per_gpu = %v", got)
	}
	if nv.Params["tv"] != "WC0" || nv.Params["PFACT"] != "" {
		t.Errorf("HPL-NVIDIA's short code must not be decoded: %v", nv.Params)
	}
	if hasScalar(nv, "norm_a_1") || scalar(t, nv, "norm_a_inf") != 75091.3885435541742481 {
		t.Errorf("norms: %+v", nv.Scalars)
	}

	lbnl := parseHPLFixture(t, "hpl-2.2-lbnl-readme-tail.txt")[0]
	for name, want := range map[string]float64{"time_rfact_s": 12.46, "time_pfact_s": 4.40, "time_mxswp_s": 2.89,
		"time_update_s": 2237.35, "time_laswp_s": 54.98, "time_up_tr_sv_s": 1.16, "time_s": 2310.54} {
		if got := scalar(t, lbnl, name); got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	if c := lbnl.Checks; len(c) != 1 || c[0].Op != "" || c[0].Threshold != 0 || !c[0].Passed {
		t.Errorf("an excerpt without the threshold line must not invent one: %+v", c)
	}
}

func TestDecodeTV(t *testing.T) {
	tests := []struct {
		tv   string
		want map[string]string
	}{
		{"WR10R2C4", map[string]string{"PMAP": "Row-major process mapping", "DEPTH": "1", "BCAST": "1ring", "RFACT": "Right", "NDIV": "2", "PFACT": "Crout", "NBMIN": "4"}},
		{"WC03L2R16", map[string]string{"PMAP": "Column-major process mapping", "DEPTH": "0", "BCAST": "2ringM", "RFACT": "Left", "NDIV": "2", "PFACT": "Right", "NBMIN": "16"}},
		{"WR105C3L8", map[string]string{"PMAP": "Row-major process mapping", "DEPTH": "10", "BCAST": "BlongM", "RFACT": "Crout", "NDIV": "3", "PFACT": "Left", "NBMIN": "8"}},
		// HPL 1.0 printed no mapping letter.
		{"W13R2C4", map[string]string{"DEPTH": "1", "BCAST": "2ringM", "RFACT": "Right", "NDIV": "2", "PFACT": "Crout", "NBMIN": "4"}},
		{"WC0", map[string]string{}},
	}
	for _, tt := range tests {
		got := decodeTV(tt.tv)
		tt.want["tv"], tt.want["timer"] = tt.tv, "wall-clock"
		if len(got) != len(tt.want) {
			t.Errorf("decodeTV(%s) = %v, want %v", tt.tv, got, tt.want)
			continue
		}
		for k, v := range tt.want {
			if got[k] != v {
				t.Errorf("decodeTV(%s)[%s] = %q, want %q", tt.tv, k, got[k], v)
			}
		}
	}
}

// A killed run (no "End of Tests.") keeps its tests, marked invalid; a file
// cut between a T/V header and its row is refused.
func TestHPLCutOutput(t *testing.T) {
	data := string(readFixture(t, "hpl-2.3-velocity-bench-failed.txt"))

	cut := data[:strings.Index(data, "\nFinished")+1]
	bs, err := ParseHPL("cut.txt", strings.NewReader(cut))
	if err != nil || len(bs) != 2 {
		t.Fatalf("got %d bundles, %v; want 2", len(bs), err)
	}
	for _, b := range bs {
		if b.Status != results.StatusInvalid || !strings.HasSuffix(b.Error, `; output ends before "End of Tests." (the run was killed or the file is cut)`) {
			t.Errorf("status %q error %q", b.Status, b.Error)
		}
	}

	// Cut after the second T/V header (line 61) and its rule.
	lines := strings.SplitAfter(data, "\n")
	_, err = ParseHPL("cut.txt", strings.NewReader(strings.Join(lines[:62], "")))
	wantSyntaxError(t, err, 61, "T/V header without its result row")
}

func wantSyntaxError(t *testing.T, err error, line int, msg string) {
	t.Helper()
	var se parsers.SyntaxErrors
	if !errors.As(err, &se) || len(se) == 0 {
		t.Fatalf("got %v, want a syntax error at line %d", err, line)
	}
	if se[0].Line != line || !strings.Contains(se[0].Msg, msg) || se[0].FileName == "" {
		t.Errorf("got %v, want line %d saying %q", se[0], line, msg)
	}
}

// A line inside a result table that starts like data but does not parse,
// or a summary that does not match the rows, refuses the whole input.
func TestHPLSyntaxErrors(t *testing.T) {
	ib := string(readFixture(t, "000-hpl-infiniband.txt"))
	tests := []struct {
		name     string
		old, new string
		line     int
		msg      string
	}{
		{"bad time", "736.74", "7.36.74", 31, `Time "7.36.74" is not a number`},
		{"missing column", "736.74          7.240e+00", "736.74", 31, "has 6 columns, want 7"},
		{"bad N", "WR10R2C4       20000", "WR10R2C4       2000x", 31, `N "2000x" is not a count`},
		{"extra column", "7.240e+00\n", "7.240e+00 12\n", 31, "unexpected columns after Gflops"},
		{"bad residual", "44.6046954", "44.60.46954", 33, `residual "44.60.46954" is not a number`},
		{"bad verdict", "43.1710652 ...... FAILED", "43.1710652 ...... MAYBE", 34, `want PASSED or FAILED`},
		{"bad norm", "5076.247098", "5076,247098", 37, "is not a number"},
		{"no row", "WR10R2C4       20000   104     1     4             736.74          7.240e+00\n", "", 32, "residual check before any T/V result row"},
		{"summary disagrees", "              0 tests completed and passed residual checks,\n              1 tests completed and failed",
			"              1 tests completed and passed residual checks,\n              0 tests completed and failed", 42,
			"summary says 1 tests passed, 0 failed and 0 were skipped, but the output holds 0 passed, 1 failed"},
		{"summary does not add up", "Finished      1 tests", "Finished      3 tests", 42, "summary does not add up"},
		{"bad eps", "5.421011e-20", "5.421011e-2o", 26, "machine precision"},
		{"bad threshold", "less than           16.0", "less than           16,0", 27, "threshold"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !strings.Contains(ib, tt.old) {
				t.Fatalf("fixture lacks %q", tt.old)
			}
			in := strings.Replace(ib, tt.old, tt.new, 1)
			bs, err := ParseHPL("ib.txt", strings.NewReader(in))
			if bs != nil {
				t.Errorf("got %d bundles with a syntax error; want none", len(bs))
			}
			wantSyntaxError(t, err, tt.line, tt.msg)
		})
	}
}

// Launcher and MPI chatter around and inside the output changes nothing.
func TestHPLToleratesNoise(t *testing.T) {
	clean := string(readFixture(t, "hpl-2.3-velocity-bench-failed.txt"))
	noisy := "srun: job 123 queued and waiting for resources\nsrun: job 123 has been allocated resources\n" +
		strings.Replace(
			strings.Replace(clean, "HPL_pdgesv() start time Fri Feb  2 14:50:51 2024\n",
				"[n01:12345] SET UCX_NET_DEVICES=mlx5_0:1\nHPL_pdgesv() start time Fri Feb  2 14:50:51 2024\n", 1),
			"T/V                N    NB", "--------------------------------------------------------------------------\nWARNING: There was an error initializing an OpenFabrics device.\n--------------------------------------------------------------------------\nT/V                N    NB", 1) +
		"[n01:12345] 1 more process has sent help message help-mpi-btl-openib.txt / no device params found\n"
	want, err := ParseHPL("a", strings.NewReader(clean))
	if err != nil {
		t.Fatal(err)
	}
	got, err := ParseHPL("a", strings.NewReader(noisy))
	if err != nil {
		t.Fatal(err)
	}
	wj, _ := json.Marshal(want)
	gj, _ := json.Marshal(got)
	if !bytes.Equal(wj, gj) {
		t.Errorf("noise changed the result:\n got %s\nwant %s", gj, wj)
	}
}

// HPL run with threshold 0 checks nothing: HPCC's HPL section shows it.
// Such a figure was never verified, so it is not valid.
func TestHPLWithoutChecking(t *testing.T) {
	bs := parseHPLFixture(t, "hpccoutf-mpirun-np2-N1000-threshold0.txt")
	if len(bs) != 1 {
		t.Fatalf("%d bundles", len(bs))
	}
	b := bs[0]
	if b.Status != results.StatusInvalid || b.Error != "HPL ran this test without residual checks (threshold ≤ 0)" || len(b.Checks) != 0 {
		t.Errorf("status %q error %q checks %v", b.Status, b.Error, b.Checks)
	}
	if scalar(t, b, "gflops") != 8.234 {
		t.Errorf("gflops %v", scalar(t, b, "gflops"))
	}
}

func TestHPLNaNResidualFails(t *testing.T) {
	in := strings.Replace(string(readFixture(t, "hpl-2.3-velocity-bench-failed.txt")), "4.05852126e+08", "nan", 1)
	bs, err := ParseHPL("nan.txt", strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	b := bs[0]
	if b.Status != results.StatusInvalid || !strings.Contains(b.Error, "= nan ≥ 16.0") || b.Checks[0].Passed || hasScalar(b, "residual") {
		t.Errorf("status %q error %q checks %+v", b.Status, b.Error, b.Checks)
	}
	if err := b.Validate(); err != nil {
		t.Error(err)
	}
	if _, err := results.Marshal(b); err != nil {
		t.Error(err)
	}
	// nan can never pass: HPL compares resid < threshold.
	in = strings.Replace(in, "nan ...... FAILED", "nan ...... PASSED", 1)
	_, err = ParseHPL("nan.txt", strings.NewReader(in))
	wantSyntaxError(t, err, 53, `residual "nan" is not a number`)
}

// xhpl's reader is one more parsers.Reader.
var _ parsers.Reader = (*Reader)(nil)

// The Reader hands out one test per Scan, as bufio.Scanner does lines.
func TestReaderScans(t *testing.T) {
	rd := NewReader("a", bytes.NewReader(readFixture(t, "hpl-1.0a-ompi-users-18tests.txt")))
	var tvs []string
	for rd.Scan() {
		run, ok := rd.Result().(*parsers.Run)
		if !ok {
			t.Fatalf("record %v", rd.Result())
		}
		tvs = append(tvs, run.Bundle.Params["tv"])
	}
	if err := rd.Err(); err != nil {
		t.Fatal(err)
	}
	if len(tvs) != 18 || tvs[2] != "WR00L2C2" || tvs[17] != "WR00R2R4" || rd.Result() != nil {
		t.Errorf("scanned %v", tvs)
	}
}

func TestParseHPLWithoutTests(t *testing.T) {
	// xhpl's banner and parameters, then nothing: killed in its first test.
	data := string(readFixture(t, "hpl-2.3-velocity-bench-failed.txt"))
	head := data[:strings.Index(data, "================================================================================\nT/V")]
	_, err := ParseHPL("head.txt", strings.NewReader(head))
	wantSyntaxError(t, err, 0, "HPL output without any T/V result row")
	// Text that is not HPL at all is not an error here: the registry says
	// "no hpl results found".
	if bs, err := ParseHPL("x", strings.NewReader("hello\n")); bs != nil || err != nil {
		t.Errorf("got %v, %v", bs, err)
	}
}

func TestSniff(t *testing.T) {
	tests := []struct {
		file, want string
	}{
		{"000-hpl-infiniband.txt", "hpl"},
		{"hpl-1.0a-ompi-users-18tests.txt", "hpl"},
		{"hpl-1.0a-tutorial-cut.txt", "hpl"},
		{"hpl-2.2-lbnl-readme-tail.txt", "hpl"},
		{"hpl-2.3-rpi-cluster-log.txt", "hpl"},
		{"hpl-2.3-velocity-bench-failed.txt", "hpl"},
		{"hpl-nvidia-wc0.txt", "hpl"},
		{"intel-mkl-hpl-failed-excerpt.txt", "hpl"},
		{"hpccoutf-srun-pmix-N1n2.txt", "hpcc"},
		{"hpccoutf-mpirun-np2-N1000-threshold0.txt", "hpcc"},
	}
	for _, tt := range tests {
		f, err := parsers.Detect(readFixture(t, tt.file))
		if err != nil || f.Name != tt.want {
			t.Errorf("Detect(%s) = %q, %v; want %s", tt.file, f.Name, err, tt.want)
		}
	}
	// HPCC's input file says "HPLinpack" but is no output.
	in := readFixture(t, "hpccinf.txt")
	if sniffHPL(in) != 0 || sniffHPCC(in) != 0 {
		t.Errorf("hpccinf.txt sniffed as output: hpl %d, hpcc %d", sniffHPL(in), sniffHPCC(in))
	}
	if hpl, hpcc := sniffHPL(readFixture(t, "hpccoutf-srun-pmix-N1n2.txt")), sniffHPCC(readFixture(t, "hpccoutf-srun-pmix-N1n2.txt")); hpcc <= hpl {
		t.Errorf("hpccoutf.txt: hpcc %d must beat hpl %d", hpcc, hpl)
	}
}

// Through the registry, as "sbench ingest" sees it.
func TestRegistered(t *testing.T) {
	for _, name := range []string{"hpl", "hpcc"} {
		if _, ok := parsers.Lookup(name); !ok {
			t.Errorf("format %q not registered", name)
		}
	}
	bs, err := parsers.Parse("ib.txt", "auto", readFixture(t, "000-hpl-infiniband.txt"))
	if err != nil || len(bs) != 1 {
		t.Fatalf("%v, %v", bs, err)
	}
	if b := bs[0]; b.Benchmark.Kind != "tool" || b.Benchmark.Kernel != "hpl" || !strings.Contains(b.Raw, "WR10R2C4") {
		t.Errorf("benchmark %+v raw %d bytes", b.Benchmark, len(b.Raw))
	}
	// Line numbers of errors are those of the whole input, also when the
	// run sits in a marked section of a job's output.
	job := "module load hpl\n++++++ hpl over ib: START\n" + strings.Replace(string(readFixture(t, "000-hpl-infiniband.txt")), "736.74", "7.36.74", 1) + "------ hpl over ib: END\n"
	_, err = parsers.Parse("job.out", "auto", []byte(job))
	wantSyntaxError(t, err, 33, "Time")
}

// HPL skips the check of a test whose solve returned an error, saying why
// with HPL_pwarn; the test is then counted as skipped.
func TestHPLSkippedCheck(t *testing.T) {
	in := strings.Replace(string(readFixture(t, "hpl-2.3-velocity-bench-failed.txt")),
		`HPL_pdgesv() end time   Fri Feb  2 14:58:40 2024

--------------------------------------------------------------------------------
||Ax-b||_oo/(eps*(||A||_oo*||x||_oo+||b||_oo)*N)=   4.05852126e+08 ...... FAILED
||Ax-b||_oo  . . . . . . . . . . . . . . . . . =        5455.998041
||A||_oo . . . . . . . . . . . . . . . . . . . =        6229.846527
||A||_1  . . . . . . . . . . . . . . . . . . . =        6230.505776
||x||_oo . . . . . . . . . . . . . . . . . . . =         790.874477
||x||_1  . . . . . . . . . . . . . . . . . . . =      203978.961025
||b||_oo . . . . . . . . . . . . . . . . . . . =           0.499978
`, `HPL_pdgesv() end time   Fri Feb  2 14:58:40 2024

HPL ERROR from process # 0, on line 331 of function HPL_pdtest:
>>> Error code returned by solve is 24577, skip <<<
`, 1)
	in = strings.Replace(in, "              2 tests completed and failed residual checks,\n              0 tests skipped", "              1 tests completed and failed residual checks,\n              1 tests skipped", 1)
	bs, err := ParseHPL("skip.txt", strings.NewReader(in))
	if err != nil || len(bs) != 2 {
		t.Fatalf("%d bundles, %v", len(bs), err)
	}
	if b := bs[1]; b.Status != results.StatusInvalid || b.Error != "no residual check printed for this test: Error code returned by solve is 24577, skip" {
		t.Errorf("%s %q", b.Status, b.Error)
	}
}

// Inputs made to be slow or large stay linear, and the errors they cause
// are capped.
func TestHPLLargeInputs(t *testing.T) {
	const size = 1 << 20
	tests := map[string]struct {
		head, repeat string
		rows         int
		errs         int
	}{
		"wrapped parameter list": {"The following parameter values will be used:\nN      :       1\n", "        12345678\n", 0, 1},
		"headers without rows":   {"", "T/V                N    NB     P     Q               Time                 Gflops\n", 0, parsers.MaxErrors + 1},
		"bad rows":               {"T/V N NB P Q Time Gflops\n", "WR00L2L2 1 1 1 1 1.2.3 1\n", 0, parsers.MaxErrors + 1},
		"many rows":              {"T/V N NB P Q Time Gflops\n", "WR00L2L2 1 1 1 1 1 1\n||Ax-b||_oo/(eps*(||A||_oo*||x||_oo+||b||_oo)*N)= 0.1 ...... PASSED\n", 1, 0},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			in := tt.head + strings.Repeat(tt.repeat, size/len(tt.repeat))
			start := time.Now()
			bs, err := ParseHPL("big", strings.NewReader(in))
			if d := time.Since(start); d > 20*time.Second {
				t.Errorf("took %v", d)
			}
			var se parsers.SyntaxErrors
			errors.As(err, &se)
			if len(se) != tt.errs || (tt.rows > 0) != (len(bs) > 0) {
				t.Errorf("%d bundles, %d errors; want %d errors", len(bs), len(se), tt.errs)
			}
		})
	}
}
