package parsers

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/sbench/sbench/internal/golden"
	"github.com/sbench/sbench/internal/parsetest"
	"github.com/sbench/sbench/internal/testenv"
	"github.com/sbench/sbench/results"
)

func ipfRead(t *testing.T, file string) *results.Bundle {
	t.Helper()
	runs := readFixture(t, file, "iperf3")
	if len(runs) != 1 {
		t.Fatalf("%s: %d runs", file, len(runs))
	}
	return runs[0]
}

// ipfValue is the one sample of metric with the given tag values
// ("direction", "side"); ok is false if there is none or several.
func ipfValue(b *results.Bundle, metric, direction, side string) (results.Sample, bool) {
	var found []results.Sample
	for _, s := range b.Samples {
		if s.Metric == metric && s.Tags["direction"] == direction && (side == "" || s.Tags["side"] == side) {
			found = append(found, s)
		}
	}
	if len(found) != 1 {
		return results.Sample{}, false
	}
	return found[0], true
}

type ipfWant struct {
	metric, direction string
	value             float64 // as iperf3 wrote it: bits/s for bandwidth metrics
}

func TestIperf3Fixtures(t *testing.T) {
	const c2s, s2c = "client->server", "server->client"
	tests := []struct {
		file      string
		version   string
		start     int64
		params    map[string]string
		want      []ipfWant
		absent    []string // metrics that must not be there
		intervals int
		interval0 float64 // bits/s of the first interval
		streams   []float64
	}{
		{file: "iperf3-loopback.json", version: "3.12", start: 1795998951,
			params: map[string]string{"protocol": "TCP", "parallel": "1", "duration_s": "5", "server": "127.0.0.1", "port": "5201",
				"reverse": "false", "bidir": "false", "role": "client", "sender_tcp_congestion": "bbr", "blksize_bytes": "131072"},
			want:      []ipfWant{{"bandwidth", c2s, 16099386133.113741}, {"sent_bandwidth", c2s, 16099614711.481546}, {"retransmits", c2s, 36}},
			absent:    []string{"jitter", "stream_bandwidth"},
			intervals: 5, interval0: 15839453544.2007},
		{file: "iperf3-3.12-tcp-P2.json", version: "3.12", start: 1796007424, params: map[string]string{"parallel": "2"},
			want:      []ipfWant{{"bandwidth", c2s, 1403240861.0094}, {"sent_bandwidth", c2s, 1403369658.890628}, {"retransmits", c2s, 7}},
			intervals: 2, interval0: 1649318446.3771071, streams: []float64{711101787.6736823, 692139073.3357174}},
		{file: "iperf3-3.12-tcp-R.json", version: "3.12", start: 1796007426, params: map[string]string{"reverse": "true"},
			want:      []ipfWant{{"bandwidth", s2c, 11684634187.727383}, {"sent_bandwidth", s2c, 11705928769.654486}, {"retransmits", s2c, 2}},
			intervals: 2, interval0: 10251558483.53691},
		{file: "iperf3-3.12-tcp-bidir.json", version: "3.12", start: 1796007428, params: map[string]string{"bidir": "true"},
			want: []ipfWant{{"bandwidth", c2s, 5604976669.739437}, {"sent_bandwidth", c2s, 5606929951.875334}, {"retransmits", c2s, 38},
				{"bandwidth", s2c, 4805312397.903596}, {"sent_bandwidth", s2c, 4842586559.742936}, {"retransmits", s2c, 25}},
			absent:    []string{"stream_bandwidth"},
			intervals: 4, interval0: 4382377415.014026},
		{file: "iperf3-3.12-udp.json", version: "3.12", params: map[string]string{"protocol": "UDP", "target_bitrate_bps": "1000000000"},
			want: []ipfWant{{"bandwidth", c2s, 981333674.6202518}, {"sent_bandwidth", c2s, 999580688.237391},
				{"jitter", c2s, 0.005291976106694385}, {"lost_packets", c2s, 139}, {"packets", c2s, 7627}, {"lost_percent", c2s, 1.8224727940212404}},
			absent:    []string{"retransmits"},
			intervals: 2},
		{file: "iperf3-3.12-udp-P2-R.json", version: "3.12", start: 1796007432, params: map[string]string{"parallel": "2", "reverse": "true"},
			want:      []ipfWant{{"bandwidth", s2c, 1978527382.874273}, {"lost_packets", s2c, 158}},
			intervals: 2, interval0: 1996255253.3007317, streams: []float64{999584686.1543554, 999584686.1543554}},
		{file: "iperf3-3.12-udp-bidir.json", version: "3.12", params: map[string]string{"bidir": "true"},
			want:      []ipfWant{{"bandwidth", c2s, 998944296.4405423}, {"lost_packets", c2s, 3}, {"bandwidth", s2c, 999075322.7123735}, {"lost_packets", s2c, 6}},
			intervals: 4},
		{file: "iperf3-3.12-tcp-omit.json", version: "3.12", start: 1796007436, params: map[string]string{"omit_s": "1"},
			want:      []ipfWant{{"bandwidth", c2s, 12161192179.586576}},
			intervals: 4, interval0: 14183461104.48243},
		// iperf3 -s -J: the server only received; its sum_sent is zeros.
		{file: "iperf3-3.12-server-side.json", version: "3.12", start: 1796007529, params: map[string]string{"role": "server", "client": "127.0.0.1"},
			want:      []ipfWant{{"bandwidth", c2s, 8776750546.80326}},
			absent:    []string{"sent_bandwidth", "retransmits"},
			intervals: 1, interval0: 8776751061.917435},
		// 3.1.3 (perfSONAR's parser tests): no "sender" members; UDP has
		// only end.sum.
		{file: "iperf3-3.1.3-tcp-pscheduler.json", version: "3.1.3", start: 1471318787,
			params: map[string]string{"server": "10.0.2.4", "tcp_mss_default_bytes": "1448", "duration_s": "10"},
			want:   []ipfWant{{"bandwidth", c2s, 388736097.120548}, {"sent_bandwidth", c2s, 389274697.967401}, {"retransmits", c2s, 159}},
			absent: []string{"bidir_bandwidth"}, intervals: 10, interval0: 15852550.779440},
		{file: "iperf3-3.1.3-udp-pscheduler.json", version: "3.1.3", start: 1471322915, params: map[string]string{"protocol": "UDP", "blksize_bytes": "8192"},
			want: []ipfWant{{"bandwidth", c2s, 1048481.633493}, {"sent_bandwidth", c2s, 1048481.633493},
				{"jitter", c2s, 2735.461}, {"lost_packets", c2s, 0}, {"packets", c2s, 159}, {"lost_percent", c2s, 0}},
			intervals: 10, interval0: 1047170.885411},
	}
	for _, tt := range tests {
		b := ipfRead(t, tt.file)
		if b.Benchmark.Name != "iperf3" || b.Benchmark.Tool != "iperf3" || b.Benchmark.ToolVersion != tt.version || b.Status != results.StatusOK {
			t.Errorf("%s: benchmark %+v, status %s", tt.file, b.Benchmark, b.Status)
		}
		if err := b.Validate(); err != nil {
			t.Errorf("%s: %v", tt.file, err)
		}
		if tt.start != 0 && !b.Start.Equal(time.Unix(tt.start, 0)) {
			t.Errorf("%s: start %v", tt.file, b.Start)
		}
		if !b.Start.IsZero() && !b.End.After(b.Start) {
			t.Errorf("%s: end %v before start %v", tt.file, b.End, b.Start)
		}
		for k, v := range tt.params {
			if b.Params[k] != v {
				t.Errorf("%s: param %s = %q, want %q", tt.file, k, b.Params[k], v)
			}
		}
		for _, w := range tt.want {
			side := "receiver"
			if strings.HasPrefix(w.metric, "sent_") || w.metric == "retransmits" {
				side = "sender"
			}
			s, ok := ipfValue(b, w.metric, w.direction, side)
			want := w.value
			if strings.HasSuffix(w.metric, "bandwidth") {
				// MB/s, and the bit rate as written next to it.
				bps, ok2 := ipfValue(b, w.metric+"_bps", w.direction, side)
				if !ok2 || bps.Value != w.value || bps.Unit != "bit/s" {
					t.Errorf("%s: %s_bps (%s) = %+v, want %v", tt.file, w.metric, w.direction, bps, w.value)
				}
				want = w.value / 8 / 1e6
				if s.Unit != "MB/s" {
					t.Errorf("%s: %s unit %q", tt.file, w.metric, s.Unit)
				}
			}
			if !ok || s.Value != want || s.X != nil {
				t.Errorf("%s: %s (%s, %s) = %+v (found %v), want %v", tt.file, w.metric, w.direction, side, s, ok, want)
			}
		}
		for _, m := range tt.absent {
			if len(curve(b, m)) > 0 {
				t.Errorf("%s: has %s samples", tt.file, m)
			}
		}
		iv := curve(b, "interval_bandwidth")
		if len(iv) != tt.intervals {
			t.Errorf("%s: %d interval samples, want %d", tt.file, len(iv), tt.intervals)
		} else if tt.interval0 != 0 && (iv[0].Value != tt.interval0/8/1e6 || *iv[0].X != 0 || iv[0].XUnit != "s") {
			t.Errorf("%s: first interval %+v, want %v bit/s at 0 s", tt.file, iv[0], tt.interval0)
		}
		st := curve(b, "stream_bandwidth")
		if len(st) != len(tt.streams) {
			t.Errorf("%s: %d stream samples, want %d", tt.file, len(st), len(tt.streams))
		}
		for i := range st {
			if i < len(tt.streams) && st[i].Value != tt.streams[i]/8/1e6 {
				t.Errorf("%s: stream %d = %v, want %v bit/s", tt.file, i, st[i].Value, tt.streams[i])
			}
		}
	}
}

func TestIperf3OmittedIntervalsAreTagged(t *testing.T) {
	iv := curve(ipfRead(t, "iperf3-3.12-tcp-omit.json"), "interval_bandwidth")
	for i, s := range iv {
		if (s.Tags["omitted"] == "true") != (i == 0) {
			t.Errorf("interval %d: tags %v", i, s.Tags)
		}
	}
}

func TestIperf3Refusals(t *testing.T) {
	ok := fixture(t, "iperf3-loopback.json")
	cut := ok[:len(ok)/2]
	checkRefused(t, "iperf3", []badInput{
		{"iperf3's error member", fixture(t, "iperf3-3.12-error-refused.json"), "x:1: iperf3 failed: unable to connect to server: Connection refused"},
		{"cut in the middle", cut, "x:1: iperf3 JSON document does not decode: the document is cut short (did iperf3 finish?)"},
		{"a second document cut", ok + "srun: job 12 step 1\n" + cut,
			fmt.Sprintf("x:%d: iperf3 JSON document does not decode: the document is cut short (did iperf3 finish?)", strings.Count(ok, "\n")+2)},
		{"wrong type", strings.Replace(ok, `"num_streams":	1`, `"num_streams":	"one"`, 1), `x:28: iperf3 JSON document: json: cannot unmarshal string into Go struct field .start.test_start.num_streams of type int64`},
		{"not iperf3", "{\"a\": 1}\n", `x:1: iperf3 JSON document has no "start" or "end": not iperf3 --json output`},
		// The failed run's document without its error member.
		{"no totals", strings.Replace(fixture(t, "iperf3-3.12-error-refused.json"), "},\n\t\"error\":\t\"unable to connect to server: Connection refused\"", "}", 1),
			`x:1: iperf3 JSON document has no totals in "end": the run did not finish`},
	})
}

// A job that ran iperf3 twice into one file, with launcher chatter around.
func TestIperf3SeveralDocuments(t *testing.T) {
	in := "srun: job 123 queued and waiting for resources\n" + fixture(t, "iperf3-3.12-udp.json") +
		"[host:4242] SET UCX_NET_DEVICES=mlx5_0:1\n" + fixture(t, "iperf3-3.12-tcp-R.json") + "done\n"
	runs, err := Parse("job.out", "auto", []byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 2 || runs[0].Params["protocol"] != "UDP" || runs[1].Params["reverse"] != "true" {
		t.Errorf("got %d runs", len(runs))
	}
}

func TestIperf3Sniff(t *testing.T) {
	for _, file := range []string{"iperf3-loopback.json", "iperf3-3.1.3-udp-pscheduler.json", "iperf3-3.12-error-refused.json"} {
		if f, err := Detect([]byte(fixture(t, file))); err != nil || f.Name != "iperf3" {
			t.Errorf("%s: %q %v", file, f.Name, err)
		}
	}
	// A result bundle of an iperf3 run holds iperf3's JSON as its raw
	// output: it is still a bundle.
	b := ipfRead(t, "iperf3-loopback.json")
	bundle, err := results.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range []string{fixture(t, "nptcp-loopback.out"), string(bundle)} {
		if s := sniffIperf3([]byte(in)); s != 0 {
			t.Errorf("scored %d: %.40q", s, in)
		}
	}
	if f, err := Detect(bundle); err != nil || f.Name != "bundle" {
		t.Errorf("bundle detected as %q, %v", f.Name, err)
	}
}

// Runs iperf3 on loopback (TCP, then UDP reversed) and parses its JSON.
func TestIperf3Integration(t *testing.T) {
	iperf3 := testenv.LookPath(t, "iperf3", "iperf3")
	if testing.Short() {
		t.Skip("-short")
	}
	for _, args := range [][]string{{"-t", "1"}, {"-t", "1", "-u", "-b", "100M", "-R"}} {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		port := testenv.FreePort(t)
		srv := exec.CommandContext(ctx, iperf3, "-s", "-1", "-B", "127.0.0.1", "-p", port)
		if err := srv.Start(); err != nil {
			t.Fatal(err)
		}
		var out []byte
		var err error
		for attempt := 0; attempt < 20; attempt++ {
			time.Sleep(100 * time.Millisecond)
			out, err = exec.CommandContext(ctx, iperf3, append([]string{"-c", "127.0.0.1", "-p", port, "--json"}, args...)...).Output()
			if err == nil || !strings.Contains(string(out), "Connection refused") {
				break
			}
		}
		srv.Wait()
		cancel()
		if err != nil {
			t.Fatalf("iperf3 %v: %v\n%s", args, err, out)
		}
		runs, err := Parse("iperf3.json", "auto", out)
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		b := runs[0]
		dir := "client->server"
		if args[len(args)-1] == "-R" {
			dir = "server->client"
		}
		bw, ok := ipfValue(b, "bandwidth", dir, "receiver")
		if len(runs) != 1 || !ok || bw.Value <= 0 || !strings.HasPrefix(b.Benchmark.ToolVersion, "3.") || len(curve(b, "interval_bandwidth")) == 0 {
			t.Errorf("iperf3 %v: %d runs, bandwidth %+v, version %q", args, len(runs), bw, b.Benchmark.ToolVersion)
		}
	}
}

func FuzzIperf3(f *testing.F) {
	golden.Seed(f, "testdata/iperf3-loopback.json", "testdata/iperf3-3.12-udp-bidir.json", "testdata/iperf3-3.1.3-udp-pscheduler.json", "testdata/iperf3-3.12-error-refused.json")
	parsetest.Fuzz[SyntaxErrors](f, ParseIperf3, checkSamples)
}
