package results

import "testing"

// Every metric a parser emits as a copy of another metric of the same run,
// in the tool's own unit, with the parser that emits it. The parsers
// package checks the other direction: that every metric its readers emit
// on the real fixtures is either a primary in a normalised unit or one of
// these, with its primary twin beside it.
var altUnitMetrics = []struct{ metric, twin, emitter string }{
	{"bandwidth_mbps", "bandwidth", "netpipe: NetPIPE's Mbps"},
	{"bandwidth_mibps", "bandwidth", "netpipe (builds that print MBps), perf_main and sockperf: MiB/s"},
	{"bandwidth_imb", "bandwidth", "imb: IMB's Mbytes/sec"},
	{"bandwidth_avg", "bandwidth", "perftest: BW average in MiB/s or Gb/s"},
	{"bandwidth_peak", "bandwidth", "perftest: BW peak in MiB/s or Gb/s (bandwidth's max)"},
	{"bandwidth_port1_avg", "bandwidth_port1", "perftest: dual-port BW average"},
	{"bandwidth_port2_avg", "bandwidth_port2", "perftest: dual-port BW average"},
	{"message_rate_mpps", "message_rate", "perftest: MsgRate in Mpps"},
	{"message_rate_port1_mpps", "message_rate_port1", "perftest: dual-port MsgRate"},
	{"message_rate_port2_mpps", "message_rate_port2", "perftest: dual-port MsgRate"},
	{"bandwidth_bps", "bandwidth", "iperf3: bits_per_second"},
	{"sent_bandwidth_bps", "sent_bandwidth", "iperf3: the sender's bits_per_second"},
}

func TestAltUnitMetricKnowsEveryParsersCopy(t *testing.T) {
	for _, m := range altUnitMetrics {
		if !AltUnitMetric(m.metric) {
			t.Errorf("AltUnitMetric(%q) = false, want true (%s repeats %s)", m.metric, m.emitter, m.twin)
		}
		if AltUnitMetric(m.twin) {
			t.Errorf("AltUnitMetric(%q) = true, want false: it is the normalised figure %s repeats", m.twin, m.metric)
		}
	}
}

func TestAltUnitMetricLeavesPrimariesAlone(t *testing.T) {
	// Metrics that are measurements in their own right, in sbench's units:
	// a view that skipped one would lose a figure.
	for _, m := range []string{
		"bandwidth", "latency", "message_rate", "bidirectional_bandwidth",
		"aggregate_bandwidth", "interval_bandwidth", "stream_bandwidth", "sent_bandwidth",
		"bandwidth_port1", "message_rate_port2", "latency_p999", "latency_stdev",
		"latency_p90", "latency_overlapped", "pure_comm_latency", "packet_rate", "rtt",
		"cpu_time", "overlap", "jitter", "retransmits", "lost_percent",
		"node_stream_triad", "hpl_gflops", "node_hpl_gflops", "hpl_time",
		// Averages and peaks of other quantities are no copies.
		"latency_avg", "latency_peak",
		// HPCC's summary names a figure once, in its own unit.
		"avg_ping_pong_bandwidth_gbytes", "ptrans_gbs",
		"", "_mbps", "bps",
	} {
		if AltUnitMetric(m) {
			t.Errorf("AltUnitMetric(%q) = true, want false", m)
		}
	}
}

func TestAltUnitMetricIgnoresCase(t *testing.T) {
	if !AltUnitMetric("Bandwidth_IMB") || !AltUnitMetric("BANDWIDTH_MBPS") {
		t.Error("AltUnitMetric is case-sensitive; archived metrics may be spelled in either case")
	}
}
