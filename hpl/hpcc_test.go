package hpl

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sbench/sbench/internal/testenv"
	"github.com/sbench/sbench/results"
)

func parseHPCCFixture(t testing.TB, name string) (hpl []*results.Bundle, hpcc *results.Bundle) {
	t.Helper()
	bs, err := ParseHPCC(name, bytes.NewReader(readFixture(t, name)))
	if err != nil {
		t.Fatalf("ParseHPCC(%s): %v", name, err)
	}
	if len(bs) == 0 || bs[len(bs)-1].Benchmark.Name != "hpcc" {
		t.Fatalf("ParseHPCC(%s): want the hpcc bundle last, got %d bundles", name, len(bs))
	}
	return bs[:len(bs)-1], bs[len(bs)-1]
}

func scalarUnit(t testing.TB, b *results.Bundle, name string) (float64, string) {
	t.Helper()
	for _, s := range b.Scalars {
		if s.Name == name {
			return s.Value, s.Unit
		}
	}
	t.Fatalf("no scalar %q", name)
	return 0, ""
}

// summaryCounts counts the KEY=VALUE lines of a file's summary and how
// many of them are numbers, independently of the parser.
func summaryCounts(t testing.TB, data []byte) (lines, numeric int) {
	s := string(data)
	s = s[strings.Index(s, "Begin of Summary section.\n")+len("Begin of Summary section.\n") : strings.Index(s, "End of Summary section.")]
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		lines++
		v := l[strings.Index(l, "=")+1:]
		if strings.IndexAny(v[:1], "-0123456789") == 0 {
			numeric++
		}
	}
	return lines, numeric
}

func TestHPCCSrunPMIx(t *testing.T) {
	name := "hpccoutf-srun-pmix-N1n2.txt"
	hpl, b := parseHPCCFixture(t, name)
	if len(hpl) != 1 {
		t.Fatalf("%d HPL tests, want 1", len(hpl))
	}
	h := hpl[0]
	if bm := h.Benchmark; bm.Name != "hpcc-hpl" || bm.Tool != "hpcc" || bm.ToolBenchmark != "hpcc-hpl" || bm.ToolVersion != "1.5.0" || h.Params["hpl_version"] != "2.0" {
		t.Errorf("HPL benchmark %+v, hpl_version %q", h.Benchmark, h.Params["hpl_version"])
	}
	if h.Status != results.StatusOK || scalar(t, h, "gflops") != 72.78 || scalar(t, h, "time_s") != 0.25 || scalar(t, h, "n") != 3000 || scalar(t, h, "residual") != 0.0035130 {
		t.Errorf("HPL test: %s %+v", h.Status, h.Scalars)
	}
	// HPCC's "Current time (epoch)" stamps place the runs in time.
	if !h.Start.Equal(time.Unix(1795998844, 0)) || !h.End.Equal(time.Unix(1795998845, 0)) {
		t.Errorf("HPL from %v to %v", h.Start, h.End)
	}

	if bm := b.Benchmark; bm.Name != "hpcc" || bm.Tool != "hpcc" || bm.ToolBenchmark != "hpcc" || bm.ToolVersion != "1.5.0" || b.Status != results.StatusOK {
		t.Errorf("hpcc bundle %+v %s %s", b.Benchmark, b.Status, b.Error)
	}
	if b.Params["ranks"] != "2" || b.Params["hpl_version"] != "2.0" || b.Params["LANG"] != "C" || len(b.Hosts) != 1 || b.Hosts[0].Hostname != "vm" {
		t.Errorf("params %v hosts %v", b.Params, b.Hosts)
	}
	if !b.Start.Equal(time.Unix(1795998838, 0)) || !b.End.Equal(time.Unix(1795998845, 0)) {
		t.Errorf("hpcc from %v to %v", b.Start, b.End)
	}
	lines, numeric := summaryCounts(t, readFixture(t, name))
	if len(b.Scalars) != numeric || len(b.Scalars)+5 != lines {
		t.Errorf("%d scalars from %d summary lines (%d numeric)", len(b.Scalars), lines, numeric)
	}
	for name, want := range map[string]struct {
		v    float64
		unit string
	}{
		"hpl_tflops":                              {0.0727831, "Tflops"},
		"hpl_n":                                   {3000, ""},
		"hpl_nprow":                               {1, ""},
		"hpl_npcol":                               {2, ""},
		"star_dgemm_gflops":                       {40.8196, "Gflops"},
		"single_dgemm_gflops":                     {48.7893, "Gflops"},
		"ptrans_gbs":                              {1.40689, "GB/s"},
		"star_stream_copy":                        {43.5073, "GB/s"},
		"star_stream_triad":                       {44.076, "GB/s"},
		"single_stream_triad":                     {46.6378, "GB/s"},
		"star_random_access_gups":                 {0.139789, "GUPs"},
		"mpi_random_access_gups":                  {0.022483, "GUPs"},
		"star_fft_gflops":                         {5.54755, "Gflops"},
		"mpifft_gflops":                           {4.04535, "Gflops"},
		"max_ping_pong_latency_usec":              {0.403806, "us"},
		"randomly_ordered_ring_latency_usec":      {0.285861, "us"},
		"min_ping_pong_bandwidth_gbytes":          {18.0327, "GB/s"},
		"naturally_ordered_ring_bandwidth_gbytes": {20.8679, "GB/s"},
		"hpl_time":                                {0.247496, "s"},
		"comm_world_procs":                        {2, ""},
		"success":                                 {1, ""},
	} {
		if v, unit := scalarUnit(t, b, name); v != want.v || unit != want.unit {
			t.Errorf("%s = %v %s, want %v %s", name, v, unit, want.v, want.unit)
		}
	}
	wantChecks := []results.Check{
		{Name: "Success", Value: 1, Threshold: 1, Op: "==", Passed: true},
		{Name: "MPIRandomAccess_LCG_ErrorsFraction", Value: 0, Threshold: 0.01, Op: "<=", Passed: true},
		{Name: "MPIRandomAccess_ErrorsFraction", Value: 0, Threshold: 0.01, Op: "<=", Passed: true},
		{Name: "HPL ||Ax-b||_oo/(eps*(||A||_oo*||x||_oo+||b||_oo)*N)", Value: 0.0035130, Threshold: 16, Op: "<", Passed: true},
	}
	if len(b.Checks) != len(wantChecks) {
		t.Fatalf("checks %+v", b.Checks)
	}
	for i, w := range wantChecks {
		if b.Checks[i] != w {
			t.Errorf("check %d = %+v, want %+v", i, b.Checks[i], w)
		}
	}
}

// Runs of the hpcc installed here, kept as fixtures: one that passed, one
// with a residual threshold of 0.001 that HPL's check fails (HPL prints the
// threshold as "0.0"), one with threshold 0 where HPL checks nothing.
func TestHPCCLabRuns(t *testing.T) {
	tests := []struct {
		file      string
		gflops    float64
		hplStatus results.Status
		hplErr    string
		status    results.Status
		err       string
	}{
		{"hpccoutf-mpirun-np2-N1000.txt", 7.867, results.StatusOK, "", results.StatusOK, ""},
		{"hpccoutf-mpirun-np2-N1000-threshold0.001.txt", 8.434, results.StatusInvalid,
			"residual check failed: ||Ax-b||_oo/(eps*(||A||_oo*||x||_oo+||b||_oo)*N) = 0.0076264 ≥ 0.0",
			results.StatusInvalid,
			"hpcc summary says Success=0 (a test failed its verification); HPL: residual check failed: ||Ax-b||_oo/(eps*(||A||_oo*||x||_oo+||b||_oo)*N) = 0.0076264 ≥ 0.0"},
		{"hpccoutf-mpirun-np2-N1000-threshold0.txt", 8.234, results.StatusInvalid,
			"HPL ran this test without residual checks (threshold ≤ 0)",
			results.StatusInvalid,
			"hpcc summary says Success=0 (a test failed its verification); HPL: HPL ran this test without residual checks (threshold ≤ 0)"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			hpl, b := parseHPCCFixture(t, tt.file)
			if len(hpl) != 1 {
				t.Fatalf("%d HPL tests", len(hpl))
			}
			if h := hpl[0]; scalar(t, h, "gflops") != tt.gflops || scalar(t, h, "n") != 1000 || h.Status != tt.hplStatus || h.Error != tt.hplErr {
				t.Errorf("HPL: %v Gflops, %s %q", scalar(t, h, "gflops"), h.Status, h.Error)
			}
			if b.Status != tt.status || b.Error != tt.err {
				t.Errorf("hpcc: %s %q\nwant %s %q", b.Status, b.Error, tt.status, tt.err)
			}
			if tflops, _ := scalarUnit(t, b, "hpl_tflops"); tflops*1000 < tt.gflops*0.99 || tflops*1000 > tt.gflops*1.01 {
				t.Errorf("summary HPL_Tflops %v disagrees with the HPL section's %v Gflops", tflops, tt.gflops)
			}
		})
	}
}

// hpccoutf.txt that ends early: HPCC killed during HPL keeps its figures
// as a failed run; a summary cut short is refused.
func TestHPCCCut(t *testing.T) {
	data := string(readFixture(t, "hpccoutf-srun-pmix-N1n2.txt"))

	inHPL := data[:strings.Index(data, "\nFinished      1 tests")+1]
	bs, err := ParseHPCC("cut.txt", strings.NewReader(inHPL))
	if err != nil || len(bs) != 2 {
		t.Fatalf("%d bundles, %v", len(bs), err)
	}
	if h := bs[0]; h.Status != results.StatusInvalid || !strings.Contains(h.Error, `output ends before "End of Tests."`) {
		t.Errorf("HPL %s %q", h.Status, h.Error)
	}
	if b := bs[1]; b.Status != results.StatusFailed || b.Error != "HPCC did not finish: the output has no summary section" || len(b.Scalars) != 0 {
		t.Errorf("hpcc %s %q", b.Status, b.Error)
	}
	if err := bs[1].Validate(); err != nil {
		t.Error(err)
	}

	inSummary := data[:strings.Index(data, "PTRANS_GBs=")]
	_, err = ParseHPCC("cut.txt", strings.NewReader(inSummary))
	wantSyntaxError(t, err, 430, `summary section without "End of Summary section."`)

	bad := strings.Replace(data, "PTRANS_GBs=1.40689\n", "PTRANS_GBs 1.40689\n", 1)
	_, err = ParseHPCC("bad.txt", strings.NewReader(bad))
	wantSyntaxError(t, err, 497, `summary line "PTRANS_GBs 1.40689" is not KEY=VALUE`)

	// An error in the HPL section carries the line of the whole file.
	bad = strings.Replace(data, "WR11C2R4        3000   128     1     2               0.25", "WR11C2R4        3000   128     1     2               0.2.5", 2)
	_, err = ParseHPCC("bad.txt", strings.NewReader(bad))
	wantSyntaxError(t, err, 414, `Time "0.2.5" is not a number`)
}

func TestHPCCNotMeasured(t *testing.T) {
	data := strings.Replace(string(readFixture(t, "hpccoutf-srun-pmix-N1n2.txt")), "PTRANS_GBs=1.40689", "PTRANS_GBs=-1", 1)
	bs, err := ParseHPCC("a", strings.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	b := bs[len(bs)-1]
	if hasScalar(b, "ptrans_gbs") || b.Params["not_measured"] != "PTRANS_GBs" {
		t.Errorf("HPCC's -1 (test not run) kept as a figure: params %v", b.Params)
	}
}

func TestHPCCNotHPCC(t *testing.T) {
	bs, err := ParseHPCC("x", bytes.NewReader(readFixture(t, "000-hpl-infiniband.txt")))
	if bs != nil || err != nil {
		t.Errorf("xhpl output read as HPCC: %v, %v", bs, err)
	}
}

func TestHPCCName(t *testing.T) {
	for key, want := range map[string]string{
		"HPL_Tflops":                           "hpl_tflops",
		"StarDGEMM_Gflops":                     "star_dgemm_gflops",
		"PTRANS_GBs":                           "ptrans_gbs",
		"MPIRandomAccess_LCG_GUPs":             "mpi_random_access_lcg_gups",
		"MPIRandomAccess_CheckTime":            "mpi_random_access_check_time",
		"StarSTREAM_Triad":                     "star_stream_triad",
		"MaxPingPongLatency_usec":              "max_ping_pong_latency_usec",
		"NaturallyOrderedRingBandwidth_GBytes": "naturally_ordered_ring_bandwidth_gbytes",
		"CommWorldProcs":                       "comm_world_procs",
		"HPL_dMACH_EPS":                        "hpl_d_mach_eps",
		"MPIFFT_maxErr":                        "mpifft_max_err",
		"sizeof_void_ptr":                      "sizeof_void_ptr",
		"HPL_RnormI":                           "hpl_rnorm_i",
		"MPIFFT_time3":                         "mpifft_time3",
	} {
		if got := hpccName(key); got != want {
			t.Errorf("hpccName(%s) = %s, want %s", key, got, want)
		}
	}
}

// TestHPCCRealRun runs the hpcc installed here (2 ranks, N=1000, about a
// second) and parses what it wrote.
func TestHPCCRealRun(t *testing.T) {
	hpcc := testenv.LookPath(t, "hpcc", "hpcc")
	mpirun := testenv.LookPath(t, "mpirun", "openmpi-bin")
	dir := t.TempDir()
	in := strings.Replace(string(readFixture(t, "hpccinf.txt")), "3000         Ns", "1000         Ns", 1)
	if err := os.WriteFile(filepath.Join(dir, "hpccinf.txt"), []byte(in), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := testenv.Context(t)
	cmd := exec.CommandContext(ctx, mpirun, "--allow-run-as-root", "--oversubscribe", "--bind-to", "none", "-np", "2", hpcc)
	cmd.Dir = dir
	// As root on a machine with only loopback, as in the lab notes.
	cmd.Env = append(os.Environ(), "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
		"OMPI_MCA_btl_tcp_if_include=lo", "OMPI_MCA_oob_tcp_if_include=lo")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %v\n%s", cmd.Args, err, out)
	}
	data, err := os.ReadFile(filepath.Join(dir, "hpccoutf.txt"))
	if err != nil {
		t.Fatal(err)
	}
	bs, err := ParseHPCC("hpccoutf.txt", bytes.NewReader(data))
	if err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	if len(bs) != 2 {
		t.Fatalf("%d bundles, want the HPL test and the summary", len(bs))
	}
	h, b := bs[0], bs[1]
	if h.Status != results.StatusOK || scalar(t, h, "n") != 1000 || scalar(t, h, "gflops") <= 0 || scalar(t, h, "residual") >= 16 {
		t.Errorf("HPL test: %s %q %+v", h.Status, h.Error, h.Scalars)
	}
	if b.Status != results.StatusOK || b.Params["ranks"] != "2" || b.Benchmark.ToolVersion == "" {
		t.Errorf("hpcc: %s %q params %v version %q", b.Status, b.Error, b.Params, b.Benchmark.ToolVersion)
	}
	tflops, unit := scalarUnit(t, b, "hpl_tflops")
	if unit != "Tflops" || tflops*1000 < scalar(t, h, "gflops")*0.99 || tflops*1000 > scalar(t, h, "gflops")*1.01 {
		t.Errorf("HPL_Tflops %v %s vs %v Gflops", tflops, unit, scalar(t, h, "gflops"))
	}
	for _, name := range []string{"star_stream_triad", "star_dgemm_gflops", "mpi_random_access_gups", "ptrans_gbs", "avg_ping_pong_latency_usec"} {
		if v, _ := scalarUnit(t, b, name); v <= 0 {
			t.Errorf("%s = %v", name, v)
		}
	}
	if !b.End.After(time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)) || b.End.Before(b.Start) {
		t.Errorf("from %v to %v", b.Start, b.End)
	}
}
