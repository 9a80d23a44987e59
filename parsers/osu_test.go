package parsers

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/sbench/sbench/internal/golden"
	"github.com/sbench/sbench/results"
)

// The fixtures are real OMB outputs; testdata/README.md says where each
// one comes from. Every expected figure below is copied from the file.

// osuPoint is a (message size, value) pair as OMB printed it.
type osuPoint struct{ x, v float64 }

type osuCurve struct {
	metric string
	n      int
	first  osuPoint
	last   osuPoint
	max    osuPoint // the point with the highest value (a bandwidth's peak)
}

type osuRunWant struct {
	name    string
	version string
	params  map[string]string // a subset of Params
	curves  []osuCurve
	scalars map[string]float64
}

func readOSU(t *testing.T, file string) []*results.Bundle {
	t.Helper()
	runs := readFixture(t, file, "osu")
	for i, b := range runs {
		if b.Benchmark.Tool != OSUTool || !strings.Contains(b.Raw, "# OSU ") {
			t.Errorf("%s run %d: tool %q, want %s, and the raw output with its title", file, i, b.Benchmark.Tool, OSUTool)
		}
	}
	return runs
}

func checkOSURun(t *testing.T, where string, b *results.Bundle, w osuRunWant) {
	t.Helper()
	checkRunHead(t, where, b, w.name, w.version, w.params)
	for _, c := range w.curves {
		var pts []results.Sample
		for _, s := range b.Samples {
			if s.Metric == c.metric {
				pts = append(pts, s)
			}
		}
		if len(pts) != c.n {
			t.Errorf("%s: %d %s points, want %d", where, len(pts), c.metric, c.n)
			continue
		}
		peak := pts[0]
		for _, s := range pts {
			if s.X == nil || s.XUnit != results.UnitBytes {
				t.Fatalf("%s: %s point without a size: %+v", where, c.metric, s)
			}
			if s.Value > peak.Value {
				peak = s
			}
		}
		first, last := pts[0], pts[len(pts)-1]
		for _, p := range []struct {
			what string
			got  results.Sample
			want osuPoint
		}{{"first", first, c.first}, {"last", last, c.last}, {"peak", peak, c.max}} {
			if *p.got.X != p.want.x || p.got.Value != p.want.v {
				t.Errorf("%s: %s %s point (%v, %v), want (%v, %v)", where, p.what, c.metric, *p.got.X, p.got.Value, p.want.x, p.want.v)
			}
		}
		wantUnit := map[string]string{"latency": "us", "bandwidth": "MB/s", "bidirectional_bandwidth": "MB/s",
			"message_rate": "messages/s", "compute_time": "us", "pure_comm_latency": "us", "overlap": "%"}[c.metric]
		if first.Unit != wantUnit {
			t.Errorf("%s: %s unit %q, want %q", where, c.metric, first.Unit, wantUnit)
		}
	}
	if len(w.scalars) > 0 {
		got := map[string]float64{}
		for _, s := range b.Scalars {
			got[s.Name] = s.Value
		}
		if !reflect.DeepEqual(got, w.scalars) {
			t.Errorf("%s: scalars %v, want %v", where, got, w.scalars)
		}
	}
}

func TestOSUFixtures(t *testing.T) {
	tests := []struct {
		file string
		runs []osuRunWant
	}{
		{"002-osu_bw-v5.9-cent063-to-cent064.txt", []osuRunWant{{name: "osu_bw", version: "5.9",
			curves: []osuCurve{{"bandwidth", 23, osuPoint{1, 4.64}, osuPoint{4194304, 3958.26}, osuPoint{4194304, 3958.26}}}}}},
		{"002-osu_bw-v5.9-cent064-to-cent063.txt", []osuRunWant{{name: "osu_bw", version: "5.9",
			curves: []osuCurve{{"bandwidth", 23, osuPoint{1, 2.69}, osuPoint{4194304, 3958.42}, osuPoint{4194304, 3958.42}}}}}},
		{"003-osu_allreduce-v7.5-4node-144proc.txt", []osuRunWant{{name: "osu_allreduce", version: "7.5",
			params: map[string]string{"datatype": "MPI_INT"},
			curves: []osuCurve{{"latency", 27, osuPoint{4, 11.69}, osuPoint{268435456, 496306.98}, osuPoint{268435456, 496306.98}}}}}},
		{"003-osu_alltoall-v7.5-1node-36proc.txt", []osuRunWant{{name: "osu_alltoall", version: "7.5",
			params: map[string]string{"datatype": "MPI_CHAR"},
			curves: []osuCurve{{"latency", 27, osuPoint{1, 10.29}, osuPoint{67108864, 747888.64}, osuPoint{67108864, 747888.64}}}}}},
		{"003-osu_bw-v7.5-2node-256MiB.txt", []osuRunWant{{name: "osu_bw", version: "7.5",
			curves: []osuCurve{{"bandwidth", 1, osuPoint{268435456, 12254.16}, osuPoint{268435456, 12254.16}, osuPoint{268435456, 12254.16}}}}}},
		{"003-osu_latency-v7.5-2node.txt", []osuRunWant{{name: "osu_latency", version: "7.5",
			curves: []osuCurve{{"latency", 1, osuPoint{1, 1.67}, osuPoint{1, 1.67}, osuPoint{1, 1.67}}}}}},
		{"osu-3.3-qib-mlx4-ompi-users.txt", []osuRunWant{
			{name: "osu_latency", version: "3.3", curves: []osuCurve{{"latency", 24, osuPoint{0, 0.29}, osuPoint{4194304, 1148.80}, osuPoint{4194304, 1148.80}}}},
			{name: "osu_bw", version: "3.3", curves: []osuCurve{{"bandwidth", 23, osuPoint{1, 2.48}, osuPoint{4194304, 3291.84}, osuPoint{4194304, 3291.84}}}},
			{name: "osu_bibw", version: "3.3", curves: []osuCurve{{"bidirectional_bandwidth", 23, osuPoint{1, 3.10}, osuPoint{4194304, 4779.40}, osuPoint{524288, 4795.44}}}},
			{name: "osu_latency", version: "3.3", curves: []osuCurve{{"latency", 24, osuPoint{0, 1.62}, osuPoint{4194304, 1247.17}, osuPoint{4194304, 1247.17}}}},
			{name: "osu_bw", version: "3.3", curves: []osuCurve{{"bandwidth", 23, osuPoint{1, 1.80}, osuPoint{4194304, 3388.66}, osuPoint{4194304, 3388.66}}}},
			{name: "osu_bibw", version: "3.3", curves: []osuCurve{{"bidirectional_bandwidth", 23, osuPoint{1, 1.70}, osuPoint{4194304, 6555.76}, osuPoint{2097152, 6567.24}}}},
		}},
		{"osu-5.0-latency-srun-banner.txt", []osuRunWant{{name: "osu_latency", version: "5.0",
			curves: []osuCurve{{"latency", 24, osuPoint{0, 1.84}, osuPoint{4194304, 497.37}, osuPoint{4194304, 497.37}}}}}},
		{"osu-6.2-reduce-full-7-algorithms.txt", []osuRunWant{
			{name: "osu_reduce", version: "6.2", curves: []osuCurve{{"latency", 6, osuPoint{100000, 132.14}, osuPoint{3200000, 276274.93}, osuPoint{3200000, 276274.93}}}},
			{name: "osu_reduce", version: "6.2", curves: []osuCurve{{"latency", 6, osuPoint{100000, 6487.39}, osuPoint{3200000, 113780.66}, osuPoint{3200000, 113780.66}}}},
			{name: "osu_reduce", version: "6.2", curves: []osuCurve{{"latency", 6, osuPoint{100000, 1666.99}, osuPoint{3200000, 45377.38}, osuPoint{3200000, 45377.38}}}},
			{name: "osu_reduce", version: "6.2", curves: []osuCurve{{"latency", 6, osuPoint{100000, 6712.54}, osuPoint{3200000, 178693.16}, osuPoint{3200000, 178693.16}}}},
			{name: "osu_reduce", version: "6.2", curves: []osuCurve{{"latency", 6, osuPoint{100000, 229.67}, osuPoint{3200000, 6484.51}, osuPoint{3200000, 6484.51}}}},
			{name: "osu_reduce", version: "6.2", curves: []osuCurve{{"latency", 6, osuPoint{100000, 122.61}, osuPoint{3200000, 3161.08}, osuPoint{3200000, 3161.08}}}},
			{name: "osu_reduce", version: "6.2", curves: []osuCurve{{"latency", 6, osuPoint{100000, 176.08}, osuPoint{3200000, 5039.58}, osuPoint{3200000, 5039.58}}}},
		}},
		{"osu-7.0-cuda-allreduce-full-srun.txt", []osuRunWant{
			{name: "osu_allreduce", version: "7.0", params: map[string]string{"device": "cuda"},
				curves: []osuCurve{{"latency", 1, osuPoint{16777216, 8630.58}, osuPoint{16777216, 8630.58}, osuPoint{16777216, 8630.58}}}},
			{name: "osu_allreduce", version: "7.0", params: map[string]string{"device": "cuda"},
				curves: []osuCurve{{"latency", 1, osuPoint{1073741824, 7327.25}, osuPoint{1073741824, 7327.25}, osuPoint{1073741824, 7327.25}}}},
		}},
		{"osu-7.5-rocm-bw-pair.txt", []osuRunWant{{name: "osu_bw", version: "7.5",
			params: map[string]string{"device": "rocm", "datatype": "MPI_CHAR"},
			curves: []osuCurve{{"bandwidth", 28, osuPoint{1, 1.35}, osuPoint{134217728, 139961.80}, osuPoint{134217728, 139961.80}}}}}},
		{"osu-7.5.2-mbw_mr-gh200-two-mpis.out", []osuRunWant{
			{name: "osu_mbw_mr", version: "7.5.2", params: map[string]string{"pairs": "4", "window_size": "64", "datatype": "MPI_CHAR"},
				curves: []osuCurve{
					{"bandwidth", 23, osuPoint{1, 8.36}, osuPoint{4194304, 193711.29}, osuPoint{4194304, 193711.29}},
					{"message_rate", 23, osuPoint{1, 8361985.11}, osuPoint{4194304, 46184.37}, osuPoint{2048, 9311156.29}}}},
			{name: "osu_mbw_mr", version: "7.5.2", params: map[string]string{"pairs": "4", "window_size": "64", "datatype": "MPI_CHAR"},
				curves: []osuCurve{
					{"bandwidth", 23, osuPoint{1, 5.71}, osuPoint{4194304, 193713.41}, osuPoint{4194304, 193713.41}},
					{"message_rate", 23, osuPoint{1, 5711864.23}, osuPoint{4194304, 46184.88}, osuPoint{512, 5943724.08}}}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			runs := readOSU(t, tt.file)
			if len(runs) != len(tt.runs) {
				t.Fatalf("%d runs, want %d", len(runs), len(tt.runs))
			}
			for i, w := range tt.runs {
				checkOSURun(t, tt.file+" run "+string(rune('0'+i)), runs[i], w)
				if runs[i].Status != results.StatusOK || len(runs[i].Checks) != 0 {
					t.Errorf("run %d: status %s, checks %v; want ok and no checks", i, runs[i].Status, runs[i].Checks)
				}
			}
		})
	}
}

func TestOSUFullStatistics(t *testing.T) {
	// osu_reduce -f: Min, Max and Iterations join each latency point.
	runs := readOSU(t, "osu-6.2-reduce-full-7-algorithms.txt")
	s := runs[0].Samples[0]
	if s.Min == nil || *s.Min != 31.23 || s.Max == nil || *s.Max != 831.04 || s.Iterations != 100 {
		t.Errorf("first point %+v, want min 31.23, max 831.04, 100 iterations", s)
	}
	// 7.0 with -d cuda --full: OMB runs fewer iterations for large sizes.
	runs = readOSU(t, "osu-7.0-cuda-allreduce-full-srun.txt")
	for i, w := range []struct {
		min, max float64
		iters    int
	}{{8619.50, 8642.46, 10}, {7324.88, 7330.34, 100}} {
		s := runs[i].Samples[0]
		if *s.Min != w.min || *s.Max != w.max || s.Iterations != w.iters {
			t.Errorf("run %d: min %v max %v iterations %d, want %v %v %d", i, *s.Min, *s.Max, s.Iterations, w.min, w.max, w.iters)
		}
	}
}

func TestOSUArticle004Sections(t *testing.T) {
	runs := readOSU(t, "004-erdma-vs-tcp-job11.out")
	want := []struct {
		label string
		run   osuRunWant
	}{
		{"use erdma for osu_lat", osuRunWant{name: "osu_latency", version: "7.5", params: map[string]string{"datatype": "MPI_CHAR"},
			curves: []osuCurve{{"latency", 23, osuPoint{1, 11.01}, osuPoint{4194304, 1315.29}, osuPoint{4194304, 1315.29}}}}},
		{"use tcp for osu_lat", osuRunWant{name: "osu_latency", version: "7.5",
			curves: []osuCurve{{"latency", 23, osuPoint{1, 16.07}, osuPoint{4194304, 1188.98}, osuPoint{4194304, 1188.98}}}}},
		{"use erdma for osu_bw", osuRunWant{name: "osu_bw", version: "7.5",
			curves: []osuCurve{{"bandwidth", 23, osuPoint{1, 1.09}, osuPoint{4194304, 1637.17}, osuPoint{32768, 6264.41}}}}},
		{"use tcp for osu_bw", osuRunWant{name: "osu_bw", version: "7.5",
			curves: []osuCurve{{"bandwidth", 23, osuPoint{1, 0.38}, osuPoint{4194304, 1735.78}, osuPoint{131072, 3160.96}}}}},
	}
	if len(runs) != len(want) {
		t.Fatalf("%d runs, want %d", len(runs), len(want))
	}
	for i, w := range want {
		if runs[i].Labels["section"] != w.label || runs[i].Source != w.label {
			t.Errorf("run %d: section %q source %q, want %q", i, runs[i].Labels["section"], runs[i].Source, w.label)
		}
		checkOSURun(t, w.label, runs[i], w.run)
	}
}

// TestOSUSuite563 reads a whole OMB 5.6.3 suite run by a script (one
// Open MPI build, 43 programs, the failed osu_latency_mt's chatter in
// between): every program is named, and the shapes without a size column
// (barrier) or with non-blocking columns come out as scalars and curves.
func TestOSUSuite563(t *testing.T) {
	runs := readOSU(t, "osu-5.6.3-suite-openmpi-1.10.7.log")
	names := []string{
		"osu_hello", "osu_init", "osu_bibw", "osu_latency", "osu_multi_lat", "osu_bw", "osu_latency_mp", "osu_mbw_mr",
		"osu_allgather", "osu_bcast", "osu_ialltoall", "osu_igatherv", "osu_scatter", "osu_allgatherv", "osu_gather",
		"osu_ialltoallv", "osu_ireduce", "osu_scatterv", "osu_allreduce", "osu_gatherv", "osu_ialltoallw", "osu_iscatter",
		"osu_alltoall", "osu_iallgather", "osu_ibarrier", "osu_iscatterv", "osu_alltoallv", "osu_iallgatherv", "osu_ibcast",
		"osu_reduce", "osu_barrier", "osu_iallreduce", "osu_igather", "osu_reduce_scatter", "osu_acc_latency",
		"osu_fop_latency", "osu_get_bw", "osu_put_bibw", "osu_put_latency", "osu_cas_latency", "osu_get_acc_latency",
		"osu_get_latency", "osu_put_bw",
	}
	var got []string
	byName := map[string]*results.Bundle{}
	for _, b := range runs {
		got = append(got, b.Benchmark.Name)
		byName[b.Benchmark.Name] = b
		if b.Benchmark.ToolVersion != "5.6.3" {
			t.Errorf("%s: version %q", b.Benchmark.Name, b.Benchmark.ToolVersion)
		}
	}
	if !reflect.DeepEqual(got, names) {
		t.Fatalf("programs\n%v\nwant\n%v", got, names)
	}
	for name, w := range map[string]osuRunWant{
		"osu_hello":   {scalars: map[string]float64{"processes": 2}, params: map[string]string{"processes": "2"}},
		"osu_init":    {scalars: map[string]float64{"init_time": 13, "init_time_min": 13, "init_time_max": 14}},
		"osu_bibw":    {curves: []osuCurve{{"bidirectional_bandwidth", 23, osuPoint{1, 9.42}, osuPoint{4194304, 9145.41}, osuPoint{262144, 10244.80}}}},
		"osu_latency": {curves: []osuCurve{{"latency", 24, osuPoint{0, 0.20}, osuPoint{4194304, 525.00}, osuPoint{4194304, 525.00}}}},
		"osu_latency_mp": {params: map[string]string{"sender_processes": "2", "receiver_processes": "2"},
			curves: []osuCurve{{"latency", 24, osuPoint{0, 0.22}, osuPoint{4194304, 540.59}, osuPoint{4194304, 540.59}}}},
		"osu_mbw_mr": {params: map[string]string{"pairs": "1", "window_size": "64"}, curves: []osuCurve{
			{"bandwidth", 23, osuPoint{1, 8.35}, osuPoint{4194304, 9326.06}, osuPoint{131072, 9676.70}},
			{"message_rate", 23, osuPoint{1, 8346864.13}, osuPoint{4194304, 2223.51}, osuPoint{8, 9207798.75}}}},
		"osu_ialltoall": {curves: []osuCurve{
			{"latency", 21, osuPoint{1, 11.09}, osuPoint{1048576, 8597.34}, osuPoint{1048576, 8597.34}},
			{"compute_time", 21, osuPoint{1, 6.10}, osuPoint{1048576, 4389.34}, osuPoint{1048576, 4389.34}},
			{"pure_comm_latency", 21, osuPoint{1, 5.18}, osuPoint{1048576, 3894.26}, osuPoint{1048576, 3894.26}},
			{"overlap", 21, osuPoint{1, 3.46}, osuPoint{1048576, 0}, osuPoint{4, 16.62}}}},
		"osu_ibcast":    {curves: []osuCurve{{"overlap", 21, osuPoint{1, 16.31}, osuPoint{1048576, 2.78}, osuPoint{512, 39.30}}}},
		"osu_ibarrier":  {scalars: map[string]float64{"latency": 8.85, "compute_time": 5.04, "pure_comm_latency": 4.02, "overlap": 5.04}},
		"osu_barrier":   {scalars: map[string]float64{"latency": 1.57}},
		"osu_allreduce": {curves: []osuCurve{{"latency", 19, osuPoint{4, 1.48}, osuPoint{1048576, 927.10}, osuPoint{1048576, 927.10}}}},
		"osu_put_bibw": {params: map[string]string{"window_creation": "MPI_Win_allocate", "synchronization": "MPI_Win_post/start/complete/wait"},
			curves: []osuCurve{{"bidirectional_bandwidth", 23, osuPoint{1, 43.58}, osuPoint{4194304, 8805.68}, osuPoint{4096, 52539.34}}}},
		"osu_get_acc_latency": {params: map[string]string{"window_creation": "MPI_Win_create", "synchronization": "MPI_Win_lock/unlock"}},
		"osu_fop_latency":     {curves: []osuCurve{{"latency", 1, osuPoint{8, 0.04}, osuPoint{8, 0.04}, osuPoint{8, 0.04}}}},
		"osu_put_bw":          {curves: []osuCurve{{"bandwidth", 23, osuPoint{1, 24.48}, osuPoint{4194304, 4395.14}, osuPoint{4096, 24157.44}}}},
	} {
		w.name, w.version = name, "5.6.3"
		checkOSURun(t, name, byName[name], w)
	}
	for _, name := range []string{"osu_hello", "osu_init", "osu_barrier", "osu_ibarrier"} {
		if n := len(byName[name].Samples); n != 0 {
			t.Errorf("%s: %d samples, want only scalars", name, n)
		}
	}
	// The raw text kept with a run is its own output, not the whole log.
	if raw := byName["osu_bw"].Raw; !strings.HasPrefix(raw, "# OSU MPI Bandwidth Test v5.6.3\n") || strings.Contains(raw, "Latency Test") {
		t.Errorf("osu_bw raw output:\n%s", raw)
	}
}

func TestOSUValidationFailure(t *testing.T) {
	runs := readOSU(t, "osu-7.4-allreduce-validation-fail.txt")
	if len(runs) != 1 {
		t.Fatalf("%d runs, want 1", len(runs))
	}
	b := runs[0]
	checkOSURun(t, "allreduce -c", b, osuRunWant{name: "osu_allreduce", version: "7.4", params: map[string]string{"datatype": "MPI_CHAR"},
		curves: []osuCurve{{"latency", 5, osuPoint{1, 1.53}, osuPoint{16, 1.51}, osuPoint{2, 2.58}}}})
	if b.Status != results.StatusInvalid || !strings.Contains(b.Error, "validation failed at 16 bytes") {
		t.Errorf("status %s error %q, want invalid naming 16 bytes", b.Status, b.Error)
	}
	want := []results.Check{
		{Name: "validation", Value: 1, Threshold: 0, Op: "<=", Passed: false},
		{Name: "validation at 16 bytes", Value: 0, Threshold: 1, Op: ">=", Passed: false},
	}
	if !reflect.DeepEqual(b.Checks, want) {
		t.Errorf("checks %+v, want %+v", b.Checks, want)
	}

	// The same run with every size passing: a passed check, status ok.
	data, _ := os.ReadFile("testdata/osu-7.4-allreduce-validation-fail.txt")
	passing := strings.Replace(string(data), "1.51              Fail", "1.51              Pass", 1)
	passing = passing[:strings.Index(passing, "DATA VALIDATION")]
	ok, err := ParseOSU("pass.txt", strings.NewReader(passing))
	if err != nil {
		t.Fatal(err)
	}
	if ok[0].Status != results.StatusOK || len(ok[0].Checks) != 1 || !ok[0].Checks[0].Passed {
		t.Errorf("all Pass: status %s checks %+v", ok[0].Status, ok[0].Checks)
	}
}

func TestOSUCutShortRunIsRefused(t *testing.T) {
	// The CUDA osu_bw crashed after printing its header (ompi#4899).
	data := mustRead(t, "testdata/osu-5.4.1-cuda-bw-segfault.txt")
	_, err := Parse("segv.txt", "auto", data)
	if err == nil || !strings.Contains(err.Error(), "segv.txt:4: result table header without result rows") {
		t.Errorf("error %v, want the header's line 4 named", err)
	}
}

// The inputs below edit real outputs (the fixtures) to break them.
func TestOSUSyntaxErrors(t *testing.T) {
	const lat = "# OSU MPI Latency Test v3.3\n# Size            Latency (us)\n0                         0.29\n1                         0.32\n"
	tests := map[string]struct {
		in   string
		want []string
	}{
		"version-like size": {lat + "1.2.3                     0.31\n", []string{`x:5: message size "1.2.3" is not a whole number`}},
		"missing column":    {lat + "4\n", []string{"x:5: result row has 1 fields, the header at line 2 has 2 columns"}},
		"extra column":      {lat + "4                         0.32      0.40\n", []string{"x:5: result row has 3 fields"}},
		"bad value":         {lat + "4                         0.3x2\n", []string{`x:5: value "0.3x2" is not a number`}},
		"non-finite value":  {lat + "4                         -nan\n", []string{`x:5: value "-nan" is not a finite number`}},
		"size going down":   {lat + "0                         0.31\n", []string{"x:5: message size 0 after 1"}},
		"two bad rows": {lat + "4                         0.3x2\n8\n", []string{
			`x:5: value "0.3x2" is not a number`, "x:6: result row has 1 fields"}},
		"title without table": {"# OSU MPI Latency Test v3.3\n[cluster1:61532] *** Process received signal ***\n",
			[]string{`x:1: "OSU MPI Latency Test" has no result table`}},
		"header without rows": {"# OSU MPI Bandwidth Test v3.3\n# Size        Bandwidth (MB/s)\n--------------------------------------------------------------------------\n",
			[]string{"x:2: result table header without result rows"}},
		"header without title": {"# Size        Bandwidth (MB/s)\n1                         2.48\n",
			[]string{"x:1: result table header without an OSU title line"}},
		"unknown column": {"# OSU MPI Allreduce Latency Test v7.4\n# Size       Avg Latency(us)        Frobs(us)\n1  1.53  2\n",
			[]string{`x:2: unknown column "Frobs(us)" in result table header`}},
		"bad verdict": {"# OSU MPI Allreduce Latency Test v7.4\n# Size       Avg Latency(us)        Validation\n1                       1.53              Maybe\n",
			[]string{`x:3: validation "Maybe" is neither Pass nor Fail`}},
		"bad verdict after numbers": {"# OSU MPI Allreduce Latency Test v7.4\n# Size       Avg Latency(us)        Validation\n1                       1.53              2\n",
			[]string{`x:3: validation "2" is neither Pass nor Fail`}},
		"second barrier row": {"# OSU MPI Barrier Latency Test v5.6.3\n# Avg Latency(us)\n             1.57\n             1.58\n",
			[]string{"x:4: second result row in a table without a size column"}},
		// osu_mbw_mr -V prints a size x window matrix (osu_mbw_mr.c, 7.x).
		"varied window": {"# OSU MPI Multiple Bandwidth / Message Rate Test v7.5\n# [ pairs: 1 ] [ window size: varied ]\n\n# Uni-directional Bandwidth (MB/sec)\n",
			[]string{"x:2: osu_mbw_mr with varied window sizes"}},
		"good run then bad run": {lat + "# OSU MPI Bandwidth Test v3.3\n# Size        Bandwidth (MB/s)\n1   2.48\n2\n",
			[]string{"x:8: result row has 1 fields"}},
	}
	for name, tt := range tests {
		runs, err := ParseOSU("x", strings.NewReader(tt.in))
		var se SyntaxErrors
		if !errors.As(err, &se) {
			t.Errorf("%s: error %v (%T), want SyntaxErrors", name, err, err)
			continue
		}
		if runs != nil {
			t.Errorf("%s: %d runs handed out with an error", name, len(runs))
		}
		if len(se) != len(tt.want) {
			t.Errorf("%s: %d errors (%v), want %d", name, len(se), err, len(tt.want))
			continue
		}
		for i, w := range tt.want {
			if !strings.Contains(se[i].Error(), w) {
				t.Errorf("%s: error %d is %q, want it to contain %q", name, i, se[i].Error(), w)
			}
		}
	}
}

func TestOSUNoiseIsSkipped(t *testing.T) {
	// A real run with chatter a launcher or MPI library prints around and
	// inside the table: the curve is unchanged.
	in := "srun: job 9906524 queued and waiting for resources\n" +
		"[inst-xsyjo-x9-ol905:263038] SET UCX_NET_DEVICES=mlx5_2:1\n\n" +
		"# OSU MPI Latency Test v5.0\n# Size          Latency (us)\n" +
		"0                       1.84\n" +
		"[1699999999.123456] [host:123:0]          ib_md.c:1234 UCX  WARN  IB: ibv_fork_init() was disabled\n" +
		"1                       1.85\n" +
		"2 total processes killed (some possibly by mpirun during cleanup)\n"
	runs, err := ParseOSU("noise.txt", strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 || len(runs[0].Samples) != 2 || runs[0].Samples[1].Value != 1.85 {
		t.Errorf("runs %+v", runs)
	}
}

// TestOSULayoutsFromSource covers OMB 7.x layouts found in no public log
// we could get; each input follows the printf calls of osu_util_mpi.c and
// osu_latency.c of OMB 7.x (print_only_header, print_stats_validate,
// print_stats_nbc) with values taken from the fixtures.
func TestOSULayoutsFromSource(t *testing.T) {
	t.Run("datatypes", func(t *testing.T) {
		// osu_latency -T mpi_char,mpi_int: header, then datatype; the
		// second datatype repeats the header after its datatype line.
		in := "# OSU MPI Latency Test v7.1\n# Size          Latency (us)\n# Datatype: MPI_CHAR.\n" +
			"1                       1.67\n2                       1.68\n" +
			"# Datatype: MPI_INT.\n# Size          Latency (us)\n4                       1.70\n"
		runs, err := ParseOSU("dt", strings.NewReader(in))
		if err != nil {
			t.Fatal(err)
		}
		if len(runs) != 2 || runs[0].Params["datatype"] != "MPI_CHAR" || runs[1].Params["datatype"] != "MPI_INT" ||
			len(runs[0].Samples) != 2 || len(runs[1].Samples) != 1 || runs[1].Samples[0].Value != 1.70 {
			t.Fatalf("runs: %d, %+v", len(runs), runs)
		}
	})
	t.Run("tail latency", func(t *testing.T) {
		in := "# OSU MPI Allreduce Latency Test v7.4\n# Datatype: MPI_CHAR.\n" +
			"# Size       Avg Latency(us)   Min Latency(us)   Max Latency(us)  Iterations     P50 Tail Lat(us)     P90 Tail Lat(us)     P99 Tail Lat(us)\n" +
			"1                       2.81              1.89              3.73          10                 2.70                 3.10                 3.70\n"
		runs, err := ParseOSU("tail", strings.NewReader(in))
		if err != nil {
			t.Fatal(err)
		}
		s := runs[0].Samples
		if len(s) != 2 || s[0].Metric != "latency" || *s[0].P50 != 2.70 || *s[0].P99 != 3.70 || *s[0].Min != 1.89 ||
			s[0].Iterations != 10 || s[1].Metric != "latency_p90" || s[1].Value != 3.10 || *s[1].X != 1 {
			t.Errorf("samples %+v", s)
		}
	})
	t.Run("non-blocking full", func(t *testing.T) {
		in := "# OSU MPI Non-blocking Allreduce Latency Test v7.4\n# Overall = Coll. Init + Compute + MPI_Test + MPI_Wait\n\n# Datatype: MPI_CHAR.\n" +
			"# Size           Overall(us)       Compute(us)    Coll. Init(us)      MPI_Test(us)      MPI_Wait(us)    Pure Comm.(us)     Min Comm.(us)     Max Comm.(us)        Overlap(%)\n" +
			"4                       8.77              5.32              0.40              0.10              3.00              4.43              4.01              4.90             22.08\n"
		runs, err := ParseOSU("nbc", strings.NewReader(in))
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]float64{}
		for _, s := range runs[0].Samples {
			got[s.Metric] = s.Value
			if s.Metric == "pure_comm_latency" && (*s.Min != 4.01 || *s.Max != 4.90) {
				t.Errorf("pure comm %+v", s)
			}
		}
		want := map[string]float64{"latency": 8.77, "compute_time": 5.32, "init_time": 0.40, "test_time": 0.10,
			"wait_time": 3.00, "pure_comm_latency": 4.43, "overlap": 22.08}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("got %v, want %v", got, want)
		}
	})
	t.Run("barrier full", func(t *testing.T) {
		in := "# OSU MPI Barrier Latency Test v7.4\n# Avg Latency(us)   Min Latency(us)   Max Latency(us)  Iterations\n" +
			"             1.57              1.20              1.90        1000\n"
		runs, err := ParseOSU("barrier", strings.NewReader(in))
		if err != nil {
			t.Fatal(err)
		}
		want := []results.Scalar{{Name: "latency", Unit: "us", Value: 1.57}, {Name: "latency_min", Unit: "us", Value: 1.20},
			{Name: "latency_max", Unit: "us", Value: 1.90}, {Name: "iterations", Value: 1000}}
		if !reflect.DeepEqual(runs[0].Scalars, want) || len(runs[0].Samples) != 0 {
			t.Errorf("scalars %+v, samples %d", runs[0].Scalars, len(runs[0].Samples))
		}
	})
	t.Run("one-sided cuda with derived datatypes", func(t *testing.T) {
		in := "# Set Derived DataTypes block_length to 1, stride to 2\n# OSU MPI_Put-CUDA Latency Test v7.4\n" +
			"# Window creation: MPI_Win_allocate\n# Synchronization: MPI_Win_flush\n# Datatype: MPI_CHAR.\n" +
			"# Rank 0 Memory on DEVICE (D) and Rank 1 Memory on HOST (H)\n" +
			"# Size          Latency (us)       Transmit Size\n1                       0.06                   1\n"
		runs, err := ParseOSU("put", strings.NewReader(in))
		if err != nil {
			t.Fatal(err)
		}
		b := runs[0]
		if b.Benchmark.Name != "osu_put_latency" || b.Params["device"] != "cuda" || b.Params["rank0_memory"] != "DEVICE (D)" ||
			b.Params["rank1_memory"] != "HOST (H)" || len(b.Samples) != 2 || b.Samples[1].Metric != "transmit_size" {
			t.Errorf("bundle %+v", b)
		}
	})
	t.Run("cuda buffers", func(t *testing.T) {
		in := "# OSU MPI-CUDA Bandwidth Test v5.4.1\n# Send Buffer on DEVICE (D) and Receive Buffer on HOST (H)\n" +
			"# Size      Bandwidth (MB/s)\n1                       1.09\n"
		runs, err := ParseOSU("cuda", strings.NewReader(in))
		if err != nil {
			t.Fatal(err)
		}
		if p := runs[0].Params; p["send_buffer"] != "DEVICE (D)" || p["recv_buffer"] != "HOST (H)" || p["device"] != "cuda" {
			t.Errorf("params %v", p)
		}
	})
}

func TestOSUProgramNames(t *testing.T) {
	for title, want := range map[string]struct{ name, version, device string }{
		"OSU MPI Latency Test v7.0-lrbison3":                                     {"osu_latency", "7.0-lrbison3", ""},
		"OSU MPI-CUDA Bi-Directional Bandwidth Test v5.4.1":                      {"osu_bibw", "5.4.1", "cuda"},
		"OSU MPI-ROCM Multiple Bandwidth / Message Rate Test v7.5":               {"osu_mbw_mr", "7.5", "rocm"},
		"OSU MPI_Get-CUDA Bandwidth Test v7.4":                                   {"osu_get_bw", "7.4", "cuda"},
		"OSU MPI-CUDA MANAGED Latency Test v6.1":                                 {"osu_latency", "6.1", "cuda-managed"},
		"OSU MPI Non-blocking All-to-All Personalized ExchangeLatency Test v7.5": {"osu_ialltoall", "7.5", ""},
		"OSU MPI Non-Blocking Broadcast Latency Test v5.6.3":                     {"osu_ibcast", "5.6.3", ""},
		"OSU MPI Multi-threaded Latency Test v5.3.2":                             {"osu_latency_mt", "5.3.2", ""},
		"OSU MPI Reduce_scatter Persistent Latency Test v7.5":                    {"osu_reduce_scatter_persistent", "7.5", ""},
		"OSU MPI Bi-Directional Bandwidth Persistent Test v7.2":                  {"osu_bibw_persistent", "7.2", ""},
		"OSU MPI Non-blocking Neighborhood Allgather Latency Test v7.5":          {"osu_ineighbor_allgather", "7.5", ""},
		"OSU MPI Get Frobnication Test v9.0":                                     {"OSU MPI Get Frobnication Test", "9.0", ""},
		"OSU MPI Latency Test":                                                   {"osu_latency", "", ""},
	} {
		run := newOSURun(1, title)
		if run.name != want.name || run.version != want.version || run.device != want.device {
			t.Errorf("%q: name %q version %q device %q, want %+v", title, run.name, run.version, run.device, want)
		}
	}
}

func TestOSUSniff(t *testing.T) {
	files := osuFixtures(t)
	if len(files) < 15 {
		t.Fatalf("fixtures: %v", files)
	}
	for _, f := range files {
		data := mustRead(t, f)
		if s := sniffOSU(data); s < MinSniffScore {
			t.Errorf("%s: sniff %d", f, s)
		}
	}
	for _, f := range []string{"000-netpipe-NPtcp-gige.txt", "iperf3-loopback.json", "000-perf_main-rc-bw.txt"} {
		data := mustRead(t, filepath.Join("testdata", f))
		if s := sniffOSU(data); s != 0 {
			t.Errorf("%s: sniff %d, want 0", f, s)
		}
	}
}

// osuFixturePatterns are the OMB outputs in testdata: this parser's own and
// the articles' (002-004).
var osuFixturePatterns = []string{"testdata/osu-*", "testdata/00[23]-osu_*", "testdata/004-erdma-vs-tcp-job11.out"}

// osuFixtures lists the files of osuFixturePatterns.
func osuFixtures(tb testing.TB) []string {
	tb.Helper()
	var files []string
	for _, pattern := range osuFixturePatterns {
		m, err := filepath.Glob(pattern)
		if err != nil {
			tb.Fatal(err)
		}
		files = append(files, m...)
	}
	return files
}

func FuzzOSU(f *testing.F) {
	golden.Seed(f, osuFixturePatterns...)
	f.Add([]byte("# OSU MPI Barrier Latency Test v5.6.3\n# Avg Latency(us)\n             1.57\n"))
	f.Add([]byte("# OSU MPI Allreduce Latency Test v7.4\n# Size Avg Latency(us) Validation\n1 1.53 Pass\n16 1.51 Fail\n"))
	fuzzParse(f, ParseOSU, func(t *testing.T, data []byte, runs []*results.Bundle, _ error) {
		checkSizes(t, runs)
	})
}
