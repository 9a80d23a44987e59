package parsers

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sbench/sbench/internal/testenv"
	"github.com/sbench/sbench/results"
)

// The fixtures are real perftest outputs; testdata/README.md says where
// each one comes from. Every expected figure below is copied from the file.

// ptGb converts perftest's Gb/sec (10^9 bits/s) to MB/s.
func ptGb(v float64) float64 { return v * 125 }

func TestPerftestFixtures(t *testing.T) {
	type run struct {
		name   string
		status results.Status
		params map[string]string
		curves []curveWant
	}
	bw := func(n int, first, last, peak point) curveWant {
		return curveWant{"bandwidth", "MB/s", n, first, last, peak}
	}
	lat := func(n int, first, last, peak point) curveWant {
		return curveWant{"latency", "us", n, first, last, peak}
	}
	mibP := func(p point) point { return point{p.x, mibToMB(p.v)} }
	tests := []struct {
		file string
		runs []run
	}{
		{"perftest-mlx4-qdr-a-iter20000-nine-runs.txt", []run{
			{"ib_write_bw", results.StatusOK, map[string]string{"test": "RDMA_Write BW Test", "device": "mlx4_0", "mtu": "2048",
				"link_type": "IB", "max_inline_data": "0", "dual_port": "OFF", "number_of_qps": "1", "connection_type": "RC",
				"local_address": "LID 0x03 QPN 0x3371a PSN 0xe5e87 RKey 0x10011b4e VAddr 0x007f507fa1f000", "role": ""},
				[]curveWant{
					bw(23, mibP(point{2, 9.78}), mibP(point{8388608, 3665.25}), mibP(point{1048576, 3666.12})),
					{"bandwidth_avg", "MiB/s", 23, point{2, 9.78}, point{8388608, 3665.25}, point{1048576, 3666.12}},
					{"bandwidth_peak", "MiB/s", 23, point{2, 9.88}, point{8388608, 3665.51}, point{2097152, 3666.33}},
					{"message_rate", "messages/s", 23, point{2, 5128076}, point{8388608, 458}, point{32, 7794765}},
					{"message_rate_mpps", "Mpps", 23, point{2, 5.128076}, point{8388608, 0.000458}, point{32, 7.794765}},
				}},
			{"ib_write_lat", results.StatusOK, map[string]string{"test": "RDMA_Write Latency Test", "latency_value": "t_avg", "max_inline_data": "220"},
				[]curveWant{
					lat(23, point{2, 1.03}, point{8388608, 2304.98}, point{8388608, 2304.98}),
					{"latency_p999", "us", 23, point{2, 5.42}, point{8388608, 2335.48}, point{8388608, 2335.48}},
					{"latency_stdev", "us", 23, point{2, 0.20}, point{8388608, 6.43}, point{8388608, 6.43}},
				}},
			{"ib_read_bw", results.StatusOK, map[string]string{"outstand_reads": "16"},
				[]curveWant{bw(23, mibP(point{2, 8.98}), mibP(point{8388608, 3666.17}), mibP(point{65536, 3669.96}))}},
			// A "Conflicting CPU frequency" warning between two rows.
			{"ib_read_bw", results.StatusOK, nil,
				[]curveWant{bw(23, mibP(point{2, 8.68}), mibP(point{8388608, 3666.44}), mibP(point{2097152, 3667.10}))}},
			{"ib_read_lat", results.StatusOK, nil,
				[]curveWant{lat(23, point{2, 2.01}, point{8388608, 2184.33}, point{8388608, 2184.33})}},
			{"ib_atomic_bw", results.StatusOK, map[string]string{"atomic_type": "FETCH_AND_ADD", "test": "Atomic FETCH_AND_ADD BW Test"},
				[]curveWant{bw(1, mibP(point{8, 18.67}), mibP(point{8, 18.67}), mibP(point{8, 18.67}))}},
			{"ib_atomic_lat", results.StatusOK, map[string]string{"atomic_type": "FETCH_AND_ADD"},
				[]curveWant{lat(1, point{8, 2.37}, point{8, 2.37}, point{8, 2.37})}},
			{"ib_send_bw", results.StatusOK, nil,
				[]curveWant{bw(23, mibP(point{2, 9.90}), mibP(point{8388608, 3661.76}), mibP(point{2097152, 3663.52}))}},
			{"ib_send_lat", results.StatusOK, map[string]string{"max_inline_data": "236"},
				[]curveWant{lat(23, point{2, 1.11}, point{8388608, 2252.46}, point{8388608, 2252.46})}},
		}},
		// The client's table ends with "Completion with error": kept, failed.
		{"perftest-2014-read-lat-completion-error.txt", []run{
			{"ib_read_lat", results.StatusFailed, map[string]string{"latency_value": "t_typical", "role": ""},
				[]curveWant{lat(12, point{2, 2.34}, point{4096, 4.13}, point{4096, 4.13}),
					{"latency_p999", "", 0, point{}, point{}, point{}}}},
		}},
		{"perftest-write-bw-a-cpufreq-warnings-client-server.txt", []run{
			{"ib_write_bw", results.StatusOK, map[string]string{"role": "", "pcie_relax_order": "ON", "ibv_wr_api": "ON", "tx_depth": "128"},
				[]curveWant{
					{"bandwidth_avg", "MiB/s", 23, point{2, 3.88}, point{8388608, 10787.86}, point{8388608, 10787.86}},
					{"bandwidth_peak", "MiB/s", 23, point{2, 4.26}, point{8388608, 10788.20}, point{8388608, 10788.20}},
				}},
			{"ib_write_bw", results.StatusOK, map[string]string{"role": "server", "tx_depth": ""},
				[]curveWant{bw(1, mibP(point{8388608, 10787.86}), mibP(point{8388608, 10787.86}), mibP(point{8388608, 10787.86}))}},
		}},
		{"perftest-roce-k8s-read-lat-write-bw-gbits-server-client.txt", []run{
			{"ib_read_lat", results.StatusOK, map[string]string{"link_type": "Ethernet", "gid_index": "3", "role": "",
				"local_gid": "00:00:00:00:00:00:00:00:00:00:255:255:172:31:01:02", "remote_gid": "00:00:00:00:00:00:00:00:00:00:255:255:172:31:01:01"},
				[]curveWant{lat(1, point{2, 4.82}, point{2, 4.82}, point{2, 4.82})}},
			// The server prints the client's Gb/sec figures under an MB/sec header.
			{"ib_write_bw", results.StatusOK, map[string]string{"role": "server",
				"bandwidth_unit_note": "the table header says MB/sec but MsgRate × size matches Gb/sec; read as Gb/sec"},
				[]curveWant{
					bw(1, point{8388608, ptGb(196.07)}, point{8388608, ptGb(196.07)}, point{8388608, ptGb(196.07)}),
					{"bandwidth_avg", "Gb/s", 1, point{8388608, 196.07}, point{8388608, 196.07}, point{8388608, 196.07}},
				}},
			{"ib_write_bw", results.StatusOK, map[string]string{"role": "", "bandwidth_unit_note": ""},
				[]curveWant{
					bw(23, point{2, ptGb(0.088598)}, point{8388608, ptGb(196.07)}, point{1048576, ptGb(196.07)}),
					{"bandwidth_peak", "Gb/s", 23, point{2, 0.090062}, point{8388608, 196.07}, point{1048576, 196.07}},
					{"message_rate", "messages/s", 23, point{2, 5537347}, point{8388608, 2922}, point{32, 5815027}},
				}},
		}},
		// perftest 1.x: no Dual-port line, "2048B", four columns, 66 dashes.
		{"perftest-1.x-write-bw-four-columns.txt", []run{
			{"ib_write_bw", results.StatusOK, map[string]string{"mtu": "2048", "max_inline_data": "0", "tx_depth": "300", "dual_port": ""},
				[]curveWant{
					bw(1, mibP(point{65536, 939.37}), mibP(point{65536, 939.37}), mibP(point{65536, 939.37})),
					{"message_rate", "", 0, point{}, point{}, point{}},
				}},
		}},
		// A -D run: the peak is printed as 0.00, i.e. not measured.
		{"perftest-post-list-gbits-duration-issue273.txt", []run{
			{"ib_write_bw", results.StatusOK, map[string]string{"test": "RDMA_Write Post List BW Test", "post_list": "128", "device": "ib0"},
				[]curveWant{
					bw(1, point{8, ptGb(0.48)}, point{8, ptGb(0.48)}, point{8, ptGb(0.48)}),
					{"bandwidth_peak", "", 0, point{}, point{}, point{}},
					{"message_rate", "messages/s", 1, point{8, 7498617}, point{8, 7498617}, point{8, 7498617}},
				}},
		}},
		{"perftest-server-send-lat-client-read-bw-tabs.txt", []run{
			{"ib_send_lat", results.StatusOK, map[string]string{"role": "server", "rx_depth": "512", "local_address": "LID 0x0a QPN 0x0214 PSN 0xc7eeb1"},
				[]curveWant{
					lat(1, point{2, 1.01}, point{2, 1.01}, point{2, 1.01}),
					{"latency_p999", "us", 1, point{2, 3.45}, point{2, 3.45}, point{2, 3.45}},
				}},
			{"ib_read_bw", results.StatusOK, map[string]string{"role": ""},
				[]curveWant{
					bw(1, mibP(point{65536, 11708.31}), mibP(point{65536, 11708.31}), mibP(point{65536, 11708.31})),
					{"message_rate", "messages/s", 1, point{65536, 187333}, point{65536, 187333}, point{65536, 187333}},
				}},
		}},
	}
	for _, tt := range tests {
		runs := readFixture(t, tt.file, "perftest")
		if len(runs) != len(tt.runs) {
			t.Errorf("%s: %d runs, want %d", tt.file, len(runs), len(tt.runs))
			continue
		}
		for i, w := range tt.runs {
			b := runs[i]
			where := tt.file + " run " + w.name
			if b.Benchmark.Name != w.name || b.Benchmark.Tool != w.name || b.Status != w.status {
				t.Errorf("%s: %s (tool %s) status %s, want %s %s", where, b.Benchmark.Name, b.Benchmark.Tool, b.Status, w.name, w.status)
			}
			for k, v := range w.params {
				if b.Params[k] != v {
					t.Errorf("%s: param %s = %q, want %q", where, k, b.Params[k], v)
				}
			}
			checkCurves(t, where, b, w.curves)
		}
	}
}

// Every statistic of a latency row lands where the report expects it.
func TestPerftestLatencyStatistics(t *testing.T) {
	runs := readFixture(t, "perftest-mlx4-qdr-a-iter20000-nine-runs.txt", "perftest")
	s := curve(runs[1], "latency")[0] // " 2 20000 0.88 6.84 0.98 1.03 0.20 1.21 5.42"
	if s.Value != 1.03 || *s.Min != 0.88 || *s.Max != 6.84 || *s.P50 != 0.98 || *s.P99 != 1.21 || s.Iterations != 20000 {
		t.Errorf("2-byte write latency %+v", s)
	}
	old := readFixture(t, "perftest-2014-read-lat-completion-error.txt", "perftest")[0]
	s = curve(old, "latency")[0] // " 2 1000 2.29 15.78 2.34": no t_avg, no percentiles
	if s.Value != 2.34 || *s.P50 != 2.34 || *s.Min != 2.29 || *s.Max != 15.78 || s.P99 != nil {
		t.Errorf("old 2-byte read latency %+v", s)
	}
	if !strings.Contains(old.Error, "Completion with error at client") || !strings.Contains(old.Error, "Failed status 10") {
		t.Errorf("error %q", old.Error)
	}
	bw := curve(readFixture(t, "perftest-mlx4-qdr-a-iter20000-nine-runs.txt", "perftest")[0], "bandwidth")[0]
	if !near(bw.Value, mibToMB(9.78)) || !near(*bw.Max, mibToMB(9.88)) {
		t.Errorf("2-byte write bandwidth %+v", bw)
	}
}

func TestPerftestSyntaxErrors(t *testing.T) {
	const f = "perftest-post-list-gbits-duration-issue273.txt" // header on line 17, row 18, rule 19
	checkFirstError(t, "perftest", []badTable{
		{"bad number", replaceLine(t, f, 18, " 8          224958464        0.00               0.4.8   \t\t   7.498617"), 18, `"0.4.8", want a number`},
		{"missing column", replaceLine(t, f, 18, " 8          224958464        0.00               0.48"), 18, "row has 4 columns"},
		{"not closed", cutLines(t, f, 18), 19, "not closed by a rule line"},
		{"header without rows", replaceLine(t, f, 18, "-----------"), 17, "result table has no rows"},
		{"unknown column", replaceLine(t, f, 17, " #bytes     #iterations    BW peak[Gb/sec]    Foo[bar]"), 17, `unknown column "Foo[bar]"`},
		{"unknown unit", replaceLine(t, f, 17, " #bytes     #iterations    BW peak[kB/sec]    BW average[Gb/sec]   MsgRate[Mpps]"), 17, `"kB/sec"`},
	})
}

// perftest 5.60 printed negative averages under load (linux-rdma/perftest
// issue #82). The row of issue #273 with its sign flipped stands for one:
// the run is kept but invalid.
func TestPerftestNegativeIsInvalid(t *testing.T) {
	in := replaceLine(t, "perftest-post-list-gbits-duration-issue273.txt", 18, " 8          224958464        0.00               -0.48   \t\t   7.498617")
	runs, err := ParsePerftest("neg", strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if runs[0].Status != results.StatusInvalid || runs[0].Error != "negative bandwidth at 8 bytes" {
		t.Errorf("status %s error %q", runs[0].Status, runs[0].Error)
	}
}

func TestPerftestNoiseIsSkipped(t *testing.T) {
	checkNoiseIsSkipped(t, "perftest-server-send-lat-client-read-bw-tabs.txt", ParsePerftest, func(data string) string {
		return "srun: job 123 queued and waiting for resources\n[host:99] SET UCX_NET_DEVICES=mlx5_0:1\n" +
			strings.Replace(data, " 65536      1000", " Conflicting CPU frequency values detected: 1500.000000 != 3100.000000. CPU Frequency is not max.\n 65536      1000", 1) +
			"srun: error: node2: task 1: Exited with exit code 0\n"
	})
}

// Table headers of layouts no fixture shows, as the installed perftest 6.06
// binary holds them (strings /usr/bin/ib_write_bw).
func TestPerftestHeadersFromBinary(t *testing.T) {
	tests := []struct {
		header string
		kinds  string
	}{
		{" #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]   BW Port1[MB/sec]   MsgRate Port1[Mpps]   BW Port2[MB/sec]   MsgRate Port2[Mpps]",
			"bytes iters peak avg mr port_bw1 port_mr1 port_bw2 port_mr2"},
		{" #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]   BW Port1[Gb/sec]   MsgRate Port1[Mpps]   BW Port2[Gb/sec]   MsgRate Port2[Mpps]",
			"bytes iters peak avg mr port_bw1 port_mr1 port_bw2 port_mr2"},
		{" #bytes        #iterations       t_avg[usec]    tps average", "bytes iters t_avg tps"},
		{" #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec] ",
			"bytes iters t_min t_max t_typical t_avg t_stdev p99 p999"},
	}
	for _, tt := range tests {
		cols, ok, err := perftestTableHeader(strings.TrimSpace(tt.header))
		if !ok || err != nil {
			t.Errorf("%q: ok %v err %v", tt.header, ok, err)
			continue
		}
		var kinds []string
		for _, c := range cols {
			kinds = append(kinds, c.kind+c.port)
		}
		if strings.Join(kinds, " ") != tt.kinds {
			t.Errorf("%q: columns %v, want %s", tt.header, kinds, tt.kinds)
		}
	}
}

func TestPerftestSniff(t *testing.T) {
	sniffHeads(t, func(f string, data []byte) {
		s := sniffPerftest(data)
		if strings.HasPrefix(filepath.Base(f), "perftest-") {
			if fm, err := Detect(data); err != nil || fm.Name != "perftest" {
				t.Errorf("%s: detected %q (%v), want perftest", f, fm.Name, err)
			}
		} else if s >= MinSniffScore {
			t.Errorf("%s: perftest sniff %d on another tool's output", f, s)
		}
	})
}

// TestPerftestIntegration runs the installed ib_write_bw against itself on
// 127.0.0.1. Without an RDMA device perftest prints only its complaint,
// which holds no result and must be refused; with one, the client's run
// must parse.
func TestPerftestIntegration(t *testing.T) {
	bin := testenv.LookPath(t, "ib_write_bw", "perftest")
	port := testenv.FreePort(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	args := []string{"-s", "65536", "-n", "1000", "-p", port}
	server := exec.CommandContext(ctx, bin, args...)
	var serverOut bytes.Buffer
	server.Stdout, server.Stderr = &serverOut, &serverOut
	if err := server.Start(); err != nil {
		t.Fatal(err)
	}
	defer server.Wait()
	time.Sleep(500 * time.Millisecond)
	out, _ := exec.CommandContext(ctx, bin, append(args, "127.0.0.1")...).CombinedOutput()
	if bytes.Contains(out, []byte("Did not detect devices")) || bytes.Contains(out, []byte("No IB devices found")) {
		t.Logf("no RDMA device; ib_write_bw said:\n%s", out)
		_, err := Parse("ib_write_bw.out", "perftest", out)
		var se SyntaxErrors
		if !errors.As(err, &se) || !strings.Contains(se.Error(), "no perftest results") {
			t.Errorf("perftest: %v, want no perftest results", err)
		}
		if _, err := Parse("ib_write_bw.out", "auto", out); err == nil {
			t.Error("auto: a device complaint was accepted")
		}
		return
	}
	runs, err := Parse("ib_write_bw.out", "auto", out)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(runs) != 1 || runs[0].Benchmark.Name != "ib_write_bw" {
		t.Fatalf("runs %+v", runs)
	}
	bw := curve(runs[0], "bandwidth")
	if len(bw) != 1 || *bw[0].X != 65536 || bw[0].Value <= 0 || bw[0].Iterations != 1000 {
		t.Errorf("bandwidth %+v", bw)
	}
}

func FuzzPerftest(f *testing.F) {
	seedFixtures(f, "testdata/perftest-*")
	f.Add([]byte("* Waiting for client to connect... *\nSend BW Test\n #bytes #iterations BW peak[MB/sec] BW average[MB/sec] MsgRate[Mpps]\n 2 5 0.00 1.0 0.5\n----------\n"))
	fuzzParse(f, ParsePerftest, func(t *testing.T, data []byte, runs []*results.Bundle, _ error) {
		checkSizes(t, runs)
		// A dual-port bandwidth row yields the most samples: 13.
		if n, lines := samples(runs), bytes.Count(data, []byte("\n"))+1; n > 13*lines {
			t.Fatalf("%d samples from %d lines", n, lines)
		}
	})
}
