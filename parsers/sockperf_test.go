package parsers

import (
	"bytes"
	"context"
	"math"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/sbench/sbench/internal/golden"
	"github.com/sbench/sbench/internal/testenv"
	"github.com/sbench/sbench/results"
)

func spRead(t *testing.T, file string) *results.Bundle {
	t.Helper()
	runs, err := Parse(file, "auto", []byte(fixture(t, file)))
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	if len(runs) != 1 || runs[0].Benchmark.Kernel != "sockperf" {
		t.Fatalf("%s: %d runs", file, len(runs))
	}
	if err := runs[0].Validate(); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return runs[0]
}

func spScalars(b *results.Bundle) map[string]float64 {
	m := map[string]float64{}
	for _, s := range b.Scalars {
		m[s.Name] = s.Value
	}
	return m
}

func TestSockperfLatencyFixtures(t *testing.T) {
	tests := []struct {
		file, version, metric string
		avg, min, max         float64
		p50, p99              float64
		obs                   int
		scalars               map[string]float64
		params                map[string]string
	}{
		{"sockperf-pingpong-tcp.txt", "3.7-no.git", "latency", 9.868, 8.059, 2621.842, 8.560, 30.307, 129081,
			map[string]float64{"latency_p99_999": 2424.526, "latency_p99_99": 1319.863, "latency_p99_9": 74.910, "latency_p90": 9.317,
				"latency_p75": 8.646, "latency_p25": 8.500, "latency_stddev": 24.817, "sent_messages": 129081, "received_messages": 129081,
				"valid_duration": 2.550, "dropped_messages": 0, "duplicated_messages": 0, "out_of_order_messages": 0},
			map[string]string{"protocol": "TCP", "ip": "127.0.0.1", "port": "11111", "warmup_ms": "400"}},
		{"sockperf-3.7-pingpong-udp-fullrtt.txt", "3.7-no.git", "rtt", 118.521, 15.419, 948835.258, 16.511, 177.478, 13152,
			map[string]float64{"rtt_p99_999": 948835.258, "rtt_p25": 16.311, "rtt_stddev": 8295.610},
			map[string]string{"protocol": "UDP"}},
		// under-load: sockperf replies to one message in 100 and colours the
		// drop counts red.
		{"sockperf-3.7-underload-udp-drops.txt", "3.7-no.git", "latency", 791.738, 7.754, 21642.055, 11.326, 21323.279, 104,
			map[string]float64{"dropped_messages": 18, "sent_messages": 12101, "received_messages": 104},
			nil},
		// An older build: no warm-up time, no 25th percentile, one observation.
		{"sockperf-issue106-pingpong-tcp-one-observation.txt", "", "latency", 121.880, 121.880, 121.880, 121.880, 121.880, 1,
			map[string]float64{"latency_stddev": 0, "latency_p90": 121.880, "valid_duration": 0},
			map[string]string{"ip": "11.4.3.32", "port": "8302"}},
	}
	for _, tt := range tests {
		b := spRead(t, tt.file)
		if b.Benchmark.Name != "sockperf latency" || b.Benchmark.Tool != "sockperf" || b.Benchmark.ToolVersion != tt.version || b.Status != results.StatusOK {
			t.Errorf("%s: %+v %s", tt.file, b.Benchmark, b.Status)
		}
		if len(b.Samples) != 1 {
			t.Fatalf("%s: %d samples", tt.file, len(b.Samples))
		}
		s := b.Samples[0]
		if s.Metric != tt.metric || s.Unit != "us" || s.Value != tt.avg || *s.Min != tt.min || *s.Max != tt.max ||
			*s.P50 != tt.p50 || *s.P99 != tt.p99 || s.Iterations != tt.obs || s.X != nil {
			t.Errorf("%s: sample %+v min %v max %v p50 %v p99 %v", tt.file, s, *s.Min, *s.Max, *s.P50, *s.P99)
		}
		got := spScalars(b)
		for k, v := range tt.scalars {
			if w, ok := got[k]; !ok || w != v {
				t.Errorf("%s: scalar %s = %v (%v), want %v", tt.file, k, w, ok, v)
			}
		}
		if _, ok := got[tt.metric+"_p50"]; ok {
			t.Errorf("%s: p50 is a scalar too", tt.file)
		}
		for k, v := range tt.params {
			if b.Params[k] != v {
				t.Errorf("%s: param %s = %q, want %q", tt.file, k, b.Params[k], v)
			}
		}
	}
	if _, ok := spScalars(spRead(t, "sockperf-issue106-pingpong-tcp-one-observation.txt"))["latency_p25"]; ok {
		t.Error("issue106 printed no 25th percentile")
	}
}

func TestSockperfThroughputFixtures(t *testing.T) {
	tests := []struct {
		file       string
		msgSize    float64 // 0: not printed
		rate       float64
		pktRate    float64 // 0: not printed
		mibps      float64
		sent, secs float64
	}{
		{"sockperf-3.7-throughput-udp.txt", 0, 3275, 0, 4.597, 7159, 2.186},
		{"sockperf-3.7-throughput-tcp.txt", 65000, 5512, 248040, 341.682, 11046, 2.004},
		{"sockperf-3.7-throughput-tcp-issue140.txt", 32768, 155961, 3587103, 4873.781, 1559669, 10.000},
	}
	for _, tt := range tests {
		b := spRead(t, tt.file)
		if b.Benchmark.Name != "sockperf throughput" || b.Benchmark.ToolVersion != "3.7-no.git" {
			t.Errorf("%s: %+v", tt.file, b.Benchmark)
		}
		want := map[string]float64{"message_rate": tt.rate, "bandwidth_mibps": tt.mibps, "bandwidth": tt.mibps * 1048576 / 1e6}
		if tt.pktRate != 0 {
			want["packet_rate"] = tt.pktRate
		}
		if len(b.Samples) != len(want) {
			t.Errorf("%s: %d samples, want %d", tt.file, len(b.Samples), len(want))
		}
		for _, s := range b.Samples {
			if s.Value != want[s.Metric] || (tt.msgSize == 0) != (s.X == nil) || (s.X != nil && *s.X != tt.msgSize) {
				t.Errorf("%s: %s = %v (x %v), want %v", tt.file, s.Metric, s.Value, s.X, want[s.Metric])
			}
		}
		if sc := spScalars(b); sc["sent_messages"] != tt.sent || sc["time"] != tt.secs {
			t.Errorf("%s: scalars %v", tt.file, sc)
		}
		// MBps is 2^20 bytes/s: message rate × size gives it back.
		if tt.msgSize != 0 && math.Abs(tt.rate*tt.msgSize/1048576-tt.mibps) > 0.01 {
			t.Errorf("%s: %v msg/s × %v B is not %v MiB/s", tt.file, tt.rate, tt.msgSize, tt.mibps)
		}
	}
}

// sockperf 3.8 prints more statistics on the average line. The only
// public 3.8 output found (Mellanox/sockperf issue #172) is quoted up to
// the 99.999th percentile: it is refused as cut short, after its average
// line was read.
func TestSockperf38AverageLine(t *testing.T) {
	const issue172 = `sockperf: == version #3.8-0.git31ee322aa82a ==
sockperf[CLIENT] send on:sockperf: using recvfrom() to block on socket(s)

[ 0] IP = 10.12.0.4       PORT = 12345 # TCP
sockperf: Warmup stage (sending a few dummy messages)...
sockperf: Starting test...
sockperf: Test end (interrupted by timer)
sockperf: Test ended
sockperf: [Total Run] RunTime=199.999 sec; Warm up time=400 msec; SentMessages=105665; ReceivedMessages=105664
sockperf: ========= Printing statistics for Server No: 0
sockperf: [Valid Duration] RunTime=199.548 sec; SentMessages=105413; ReceivedMessages=105413
sockperf: ====> avg-rtt=1892.600 (std-dev=422.741, mean-ad=240.040, median-ad=243.961, siqr=169.591, cv=0.223, std-error=1.302, 99.0% ci=[1889.246, 1895.954])
sockperf: # dropped messages = 0; # duplicated messages = 0; # out-of-order messages = 0
sockperf: Summary: Round trip is 1892.600 usec
sockperf: Total 105413 observations; each percentile contains 1054.13 observations
sockperf: ---> MAX observation = 11541.068
sockperf: ---> percentile 99.999 = 11533.498
`
	r := NewSockperfReader("issue172", strings.NewReader(issue172))
	for r.sc.Lines().Scan() {
		r.line(r.sc.Lines().Text())
	}
	st := r.run.cur
	if st == nil || st.metric != "rtt" || st.avg != 1892.600 || !st.hasStd || st.stddev != 422.741 || *st.max != 11541.068 || st.ciLevel != "99.0%" {
		t.Fatalf("statistics %+v", st)
	}
	want := []spExtra{{"mean_ad", "us", 240.040}, {"median_ad", "us", 243.961}, {"siqr", "us", 169.591}, {"cv", "", 0.223},
		{"std_error", "us", 1.302}, {"ci_low", "us", 1889.246}, {"ci_high", "us", 1895.954}}
	if len(st.extra) != len(want) {
		t.Fatalf("extra %+v", st.extra)
	}
	for i := range want {
		if st.extra[i] != want[i] {
			t.Errorf("extra %d: %+v, want %+v", i, st.extra[i], want[i])
		}
	}
	_, err := Parse("x", "auto", []byte(issue172))
	if err == nil || err.Error() != "x:18: sockperf statistics of server 0 (line 10) are cut short: the average, <MAX> or <MIN> line is missing" {
		t.Errorf("cut output: %v", err)
	}
}

func TestSockperfRefusals(t *testing.T) {
	pp := fixture(t, "sockperf-pingpong-tcp.txt")
	lines := strings.SplitAfter(pp, "\n")
	tp := fixture(t, "sockperf-3.7-throughput-tcp-issue140.txt")
	checkRefused(t, "sockperf", []badInput{
		{"connection refused", fixture(t, "sockperf-3.7-refused.txt"), "x:2: no sockperf results: sockperf failed: ERROR: Can`t connect socket (errno=111 Connection refused)"},
		{"cut before <MIN>", strings.Join(lines[:len(lines)-2], ""), "x:25: sockperf statistics of server 0 (line 10) are cut short: the average, <MAX> or <MIN> line is missing"},
		{"percentile 1.2.3", strings.Replace(pp, "percentile 90.000 =    9.317", "percentile 90.000 =    9.3.17", 1), `x:21: sockperf: "9.3.17" in "---> percentile 90.000 =    9.3.17" is not a number`},
		{"average without a number", strings.Replace(pp, "avg-latency=9.868", "avg-latency=", 1), `x:12: sockperf: "(std-dev=24.817)" in "====> avg-latency= (std-dev=24.817)" is not a number`},
		{"throughput without bandwidth", strings.Replace(tp, "sockperf: Summary: BandWidth is 4873.781 MBps (38990.250 Mbps)\n", "", 1),
			"x:12: sockperf throughput run is cut short: message rate or bandwidth missing"},
		{"no valid observations", lines[0] + "sockperf: No valid observations found.  Try increasing test duration and/or --mps/--reply-every parameters\n",
			"x:2: no sockperf results: no valid observations (the test was too short, or no reply came back)"},
	})
}

// Two runs in one job output; a web page's copy that lost the escape byte
// of the colour codes.
func TestSockperfSeveralRunsAndBareColourCodes(t *testing.T) {
	bare := strings.ReplaceAll(fixture(t, "sockperf-pingpong-tcp.txt"), "\x1b", "")
	in := "srun: job 123 queued and waiting for resources\n" + bare + fixture(t, "sockperf-3.7-throughput-tcp.txt")
	runs, err := Parse("x", "auto", []byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 2 || runs[0].Samples[0].Value != 9.868 || runs[0].Benchmark.ToolVersion != "3.7-no.git" || runs[1].Benchmark.Name != "sockperf throughput" {
		t.Errorf("got %d runs", len(runs))
	}
}

func TestSockperfSniff(t *testing.T) {
	for _, file := range []string{"sockperf-pingpong-tcp.txt", "sockperf-3.7-throughput-udp.txt", "sockperf-3.7-refused.txt", "sockperf-issue106-pingpong-tcp-one-observation.txt"} {
		if f, err := Detect([]byte(fixture(t, file))); err != nil || f.Name != "sockperf" {
			t.Errorf("%s: %q %v", file, f.Name, err)
		}
	}
	if s := sniffSockperf([]byte(fixture(t, "000-perf_main-rc-bw.txt"))); s != 0 {
		t.Errorf("perf_main scored %d", s)
	}
}

// Runs a sockperf server and a short TCP ping-pong against it.
func TestSockperfIntegration(t *testing.T) {
	sockperf := testenv.LookPath(t, "sockperf", "sockperf")
	if testing.Short() {
		t.Skip("-short")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	port := testenv.FreePort(t)
	srv := exec.CommandContext(ctx, sockperf, "server", "--tcp", "-i", "127.0.0.1", "-p", port)
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { srv.Process.Kill(); srv.Wait() }()
	var out []byte
	var err error
	for attempt := 0; attempt < 20; attempt++ {
		time.Sleep(100 * time.Millisecond)
		out, err = exec.CommandContext(ctx, sockperf, "ping-pong", "--tcp", "-i", "127.0.0.1", "-p", port, "-t", "1").CombinedOutput()
		if err == nil && !bytes.Contains(out, []byte("ERROR")) {
			break
		}
	}
	if err != nil {
		t.Fatalf("sockperf: %v\n%s", err, out)
	}
	runs, err := Parse("sockperf.out", "auto", out)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	s := runs[0].Samples[0]
	if len(runs) != 1 || s.Metric != "latency" || s.Value <= 0 || *s.Min > s.Value || *s.Max < s.Value || s.P50 == nil || s.Iterations == 0 {
		t.Errorf("%d runs, sample %+v\n%s", len(runs), s, out)
	}
}

func FuzzSockperf(f *testing.F) {
	golden.Seed(f, "testdata/sockperf-pingpong-tcp.txt", "testdata/sockperf-3.7-throughput-tcp.txt", "testdata/sockperf-3.7-refused.txt")
	fuzzParse(f, ParseSockperf, checkSamples)
}
